"""Where the agent fails: the failure table (``failure_table``) and the grouping behind ``pass_at(by=)``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl
from pydantic import Field

from whileai import table
from whileai.defaults import (
    ALPHA,
    CI_LEVEL,
    FAILURE_BY,
    FAILURE_MAX_GROUPS,
    FAILURE_NONE_LABEL,
    PASS_THRESHOLD,
)
from whileai.errors import ArgumentError
from whileai.measure._args import check_level, check_probability
from whileai.measure._metrics import MARKER_PREFIX
from whileai.measure._rows import clean_rewards
from whileai.report import ChartedReport, Documented
from whileai.stats.multiplicity import holm
from whileai.stats.score import cluster_wilson

__all__ = ["FailureGroup", "FailureTable", "failure_table", "group_frame", "check_by"]


class FailureGroup(Documented):
    """One group of the failure table (a value of one ``by`` dimension)."""

    dimension: str
    """The ``by`` entry: a column, ``tools_used``, or ``marker:<name>``."""
    group: str
    """The value (``(none)`` for a missing one)."""
    rows: int = 0
    """Rows in the group."""
    graded: int = 0
    """Graded rows in the group."""
    tasks: int = 0
    """Tasks with a graded row in the group."""
    passes: int = 0
    """Graded rows at reward >= 0.5."""
    failures: int = 0
    """Graded rows under 0.5."""
    pass_rate: float = math.nan
    """passes / graded."""
    ci95: tuple[float, float] | None = None
    """Interval on pass_rate, clustered by task (cluster-robust Wilson)."""
    failure_share: float = math.nan
    """This group's failures over every failure in the table."""
    rest_pass_rate: float = math.nan
    """Pass rate of the graded rows outside the group (same dimension)."""
    p_value: float = math.nan
    """One-sided p that the group passes less than the rest (cluster-robust t, tasks as clusters)."""
    p_holm: float = math.nan
    """p_value after Holm's correction over every tested group in the table."""
    below: bool = False
    """The group is significantly below the rest (p_holm under alpha)."""
    top_failure_class: str | None = None
    """The judge's most common ``failure_class`` among the group's failures, when rows carry one."""
    top_failure_class_share: float | None = None
    """Its share of the group's failures."""
    markers: dict[str, float] = Field(default_factory=dict)
    """Mean of each marker over the group's rows."""


class FailureTable(ChartedReport):
    """Per group: pass rate with its interval, tasks, rows, share of failures, and a below-the-rest flag."""

    by: list[str] = Field(default_factory=list)
    """The dimensions grouped on, one section each (a marker as ``marker:<name>``)."""
    n_rows: int = 0
    """Rows in the input."""
    n_graded: int = 0
    """Rows with a reward."""
    n_tasks: int = 0
    """Tasks with a graded row."""
    n_failures: int = 0
    """Graded rows under 0.5."""
    pass_rate: float = math.nan
    """Pass rate over every graded row."""
    level: float = CI_LEVEL
    """Confidence level of every interval."""
    alpha: float = ALPHA
    """Family-wise level of the below-the-rest flags (Holm over every tested group)."""
    interval_method: str = "cluster_wilson"
    """The group intervals: Wilson's, with the design effect of tasks as clusters."""
    test: str = "cluster-robust t, one-sided, Holm"
    """The below-the-rest test."""
    groups: list[FailureGroup] = Field(default_factory=list)
    """Every group, by dimension then by failures (most first)."""
    below: list[str] = Field(default_factory=list)
    """``dimension=group`` for every flagged group."""
    failure_classes: dict[str, int] = Field(default_factory=dict)
    """Failing rows per judge ``failure_class`` (when the rows carry one), most first."""

    def table_rows(self) -> list[tuple[str, ...]]:
        """One row per group, header first, with a 'What it says' column."""
        rows: list[tuple[str, ...]] = [("Dimension", "Group", "Pass", f"{self.level:.0%} interval", "Tasks", "Rows",
                                        "Fail share", "p (Holm)", "What it says")]
        for g in self.groups:
            ci = "" if g.ci95 is None else f"{_pct(g.ci95[0])} to {_pct(g.ci95[1])}"
            says = ("below the rest" if g.below else "not shown below the rest") if math.isfinite(g.p_holm) else \
                "not tested"
            if g.top_failure_class:
                says += f"; mostly {g.top_failure_class} ({_pct(g.top_failure_class_share)})"
            rows.append((g.dimension, g.group, _pct(g.pass_rate), ci, str(g.tasks), str(g.rows),
                         _pct(g.failure_share), "" if not math.isfinite(g.p_holm) else f"{g.p_holm:.3f}", says))
        return rows

    def figure_spec(self) -> dict[str, Any] | None:
        """Each group's pass rate as a bar with its clustered interval, flagged groups in the bad colour.

        A dotted line marks the pass rate over every graded row (whileai.charts.interval_bars).
        """
        from whileai.charts import interval_bars
        from whileai.defaults import CHART_BAD, CHART_MUTED, CHART_NEUTRAL

        if not self.groups:
            return None
        many = len(self.by) > 1
        names = [f"{g.dimension}={g.group}" if many else g.group for g in self.groups]
        fig = interval_bars(names, [g.pass_rate for g in self.groups],
                            [g.ci95[0] if g.ci95 else None for g in self.groups],
                            [g.ci95[1] if g.ci95 else None for g in self.groups],
                            title=f"pass rate by {', '.join(self.by)} ({self.level:.0%} intervals clustered by task)",
                            y_title="pass rate", colors=[CHART_BAD if g.below else CHART_NEUTRAL for g in self.groups])
        if math.isfinite(self.pass_rate):
            fig["layout"]["shapes"] = [{"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y",
                                        "y0": self.pass_rate, "y1": self.pass_rate,
                                        "line": {"color": CHART_MUTED, "dash": "dot", "width": 1.5}}]
        return fig

    def render(self) -> str:
        """The table a person reads: one block per dimension."""
        lines = [f"failures: {self.n_failures} of {self.n_graded} graded rows over {self.n_tasks} tasks "
                 f"(pass rate {_pct(self.pass_rate)})"]
        show_class = any(g.top_failure_class for g in self.groups)
        for dim in self.by:
            rows = [g for g in self.groups if g.dimension == dim]
            if not rows:
                continue
            width = max(len(dim), *(len(g.group) for g in rows))
            head = (f"{dim:<{width}}  {'pass':>5}  {'95% interval':>13}  {'tasks':>5}  {'rows':>6}  "
                    f"{'fail share':>10}  {'p (Holm)':>8}")
            lines += ["", head + ("  top failure_class" if show_class else "")]
            for g in rows:
                ci = "" if g.ci95 is None else f"{_pct(g.ci95[0])}..{_pct(g.ci95[1])}"
                p = "" if not math.isfinite(g.p_holm) else f"{g.p_holm:.3f}"
                flag = "  BELOW" if g.below else ""
                line = (f"{g.group:<{width}}  {_pct(g.pass_rate):>5}  {ci:>13}  {g.tasks:>5}  {g.rows:>6}  "
                        f"{_pct(g.failure_share):>10}  {p:>8}{flag}")
                if show_class and g.top_failure_class:
                    line += f"  {g.top_failure_class} ({_pct(g.top_failure_class_share)})"
                lines.append(line)
        if self.failure_classes:
            lines += ["", "failure_class: " + ", ".join(f"{k} {v}" for k, v in self.failure_classes.items())]
        lines.append("")
        lines.append(f"intervals clustered by task; BELOW = under the rest at family-wise {self.alpha:g} "
                     f"({self.test})")
        lines += [f"! {w}" for w in self.warnings]
        return "\n".join(lines)


def _pct(x: float | None) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.0%}"


def check_by(by: Any) -> list[str]:
    """``by=``: a name or a sequence of names."""
    names = [by] if isinstance(by, str) else list(by) if isinstance(by, (list, tuple)) else None
    if not names or any(not isinstance(n, str) or not n for n in names):
        raise ArgumentError(f"by must be a column or marker name, or a list of them, got {by!r}. "
                            "Pass by='fault_kind' or by=('fault_kind', 'tier').")
    return names


def group_frame(df: pl.DataFrame, key: str) -> tuple[pl.DataFrame, str]:
    """Rows with a ``_group`` String column for ``key`` (list values exploded) and the dimension's name.

    ``key`` is a column (a list column such as ``tools_used`` gives one group per element), the
    derived ``tools_used`` when the rows carry a conversation, or a marker (``name`` or
    ``marker:name``, grouped by its value). A missing value is the group ``(none)``.
    """
    none = pl.lit(FAILURE_NONE_LABEL)
    markers = table.markers_of(df)
    bare = key[len(MARKER_PREFIX):] if key.startswith(MARKER_PREFIX) else key
    if key in df.columns and key != "markers":
        col = pl.col(key)
        dim = key
    elif key == "tools_used" and "messages" in df.columns:
        from whileai.table.derive import tools_used

        df = df.with_columns(tools_used())
        col, dim = pl.col("tools_used"), key
    elif bare in markers:
        col, dim = pl.col("markers").struct.field(bare), MARKER_PREFIX + bare
    else:
        shown = [c for c in df.columns if not c.startswith("_")]
        raise ArgumentError(f"by must name a column or a marker, got {key!r}. Columns: {', '.join(shown)}; "
                            f"markers: {', '.join(markers) or 'none'}.")
    dtype = df.select(col).dtypes[0]
    if isinstance(dtype, pl.List):
        out = df.with_columns(pl.when(col.list.len() > 0).then(col.cast(pl.List(pl.String)))
                              .otherwise(pl.concat_list(none)).alias("_group")).explode("_group")
        out = out.with_columns(pl.col("_group").fill_null(FAILURE_NONE_LABEL))
    else:
        out = df.with_columns(col.cast(pl.String).fill_null(FAILURE_NONE_LABEL).alias("_group"))
    return out, dim


def failure_table(rows: table.IntoRows, /, *, by: str | Sequence[str] = FAILURE_BY, level: float = CI_LEVEL,
                  alpha: float = ALPHA) -> FailureTable:
    """Where the agent fails: per group, its pass rate with an interval, tasks, rows and share of failures.

    Each ``by`` entry is a dimension (a column such as ``fault_kind`` or ``tier``, ``tools_used``,
    or a marker) and gets its own block of groups. A rollout passes at reward >= 0.5. A group's
    interval is clustered by task (rollouts of one task share its difficulty): Wilson's interval
    over the group's rows with the cluster-robust design effect (:func:`whileai.stats.cluster_wilson`;
    Korn and Graubard 1998). A group is flagged ``below`` when its pass rate is significantly under
    the rest of its dimension: a one-sided t test on the difference of the two cluster-robust
    ratio estimates (Cochran 1977, Sampling Techniques, 6.9; df = the smaller task count - 1,
    covariance from tasks in both ignored, which only makes it conservative), with Holm's
    correction over every tested group in the table (Holm 1979), so a flag holds family-wise at
    ``alpha``. Groups with fewer than two tasks on either side are not tested. With a judge's
    ``failure_class`` on the rows, each group names its most common class and the table counts
    them; with markers, each group carries their means.

    Args:
        rows: Graded rollouts (anything ``table.frame`` reads).
        by: A dimension or a sequence of them (``FAILURE_BY``).
        level: Confidence level of the intervals.
        alpha: Family-wise level of the below-the-rest flags.

    Returns:
        A :class:`FailureTable`; ``print`` gives the table, ``to_json()`` the JSON.

    Raises:
        ArgumentError: A ``by`` that names neither a column nor a marker, or a bad option.

    Examples:
        >>> rows = [{"task_id": f"t{i}", "fault_kind": "timeout" if i % 2 else None, "reward": float(i % 2 == 0)}
        ...         for i in range(8)]
        >>> r = failure_table(rows, by="fault_kind")
        >>> [(g.group, g.pass_rate, g.failure_share) for g in r.groups]
        [('timeout', 0.0, 1.0), ('(none)', 1.0, 0.0)]
    """
    names = check_by(by)
    level = check_level(level)
    alpha = check_probability("alpha", alpha)
    warnings: list[str] = []
    df = clean_rewards(table.frame(rows, allow_empty=True), warnings)
    report = FailureTable(by=names, n_rows=df.height, level=level, alpha=alpha)
    graded = df.filter(pl.col("reward").is_not_null())
    report.n_graded = graded.height
    if graded.height == 0:
        for key in names:  # a bad by= still raises on an ungraded table
            if df.height:
                group_frame(df, key)
        warnings.append("no graded row: nothing to tabulate. Grade first (data.grade(judge=...)).")
        report.warnings = warnings
        return report
    graded = graded.with_columns((pl.col("reward") >= PASS_THRESHOLD).cast(pl.Int64).alias("_pass"))
    totals = graded.group_by("task_key").agg(pl.len().alias("n_all"), pl.col("_pass").sum().alias("x_all"))
    report.n_tasks = totals.height
    n_pass = int(graded["_pass"].sum())
    report.n_failures = graded.height - n_pass
    report.pass_rate = n_pass / graded.height
    has_class = "failure_class" in graded.columns
    markers = table.markers_of(graded)
    if has_class:
        counts = (graded.filter((pl.col("_pass") == 0) & pl.col("failure_class").is_not_null())
                  .group_by("failure_class").len().sort(["len", "failure_class"], descending=[True, False]))
        report.failure_classes = dict(zip(counts["failure_class"].to_list(), counts["len"].to_list()))
    groups: list[FailureGroup] = []
    report.by = []
    for key in names:
        frame, dim = group_frame(graded, key)
        report.by.append(dim)
        per = (frame.group_by(["_group", "task_key"])
               .agg(pl.len().alias("n"), pl.col("_pass").sum().alias("x"))
               .join(totals, on="task_key", how="left"))
        summary = frame.group_by("_group").agg(
            pl.len().alias("rows"),
            *([pl.col("markers").struct.field(m).cast(pl.Float64).mean().alias(f"_m_{m}") for m in markers]),
        )
        n_groups = summary.height
        if n_groups > FAILURE_MAX_GROUPS:
            warnings.append(f"{dim} has {n_groups} distinct values; the table keeps the {FAILURE_MAX_GROUPS} with the most "
                            "failures. Group a column with fewer values.")
        for value, sub in per.group_by("_group"):
            g = _group(dim, str(value[0]), sub, totals, level)
            row = summary.filter(pl.col("_group") == g.group).row(0, named=True)
            g.rows = int(row["rows"])
            g.markers = {m: float(row[f"_m_{m}"]) for m in markers if row[f"_m_{m}"] is not None}
            g.failure_share = g.failures / report.n_failures if report.n_failures else math.nan
            if has_class and g.failures:
                fails = frame.filter((pl.col("_group") == g.group) & (pl.col("_pass") == 0)
                                     & pl.col("failure_class").is_not_null())
                if fails.height:
                    top = fails.group_by("failure_class").len().sort(["len", "failure_class"],
                                                                      descending=[True, False]).row(0)
                    g.top_failure_class, g.top_failure_class_share = str(top[0]), top[1] / g.failures
            groups.append(g)
        if any(g.dimension == dim for g in groups):
            dim_groups = sorted((g for g in groups if g.dimension == dim), key=lambda g: (-g.failures, g.group))
            groups = [g for g in groups if g.dimension != dim] + dim_groups[:FAILURE_MAX_GROUPS]
        shares = [g.failure_share for g in groups if g.dimension == dim and math.isfinite(g.failure_share)]
        if sum(shares) > 1.0 + 1e-9:
            warnings.append(f"a row can sit in several {dim} groups (a list column), so their failure shares add to more "
                            "than 100%.")
    adjusted = holm([g.p_value for g in groups])
    for g, p in zip(groups, adjusted.tolist()):
        g.p_holm = p
        g.below = bool(math.isfinite(p) and p < alpha)
    report.groups = groups
    report.below = [f"{g.dimension}={g.group}" for g in groups if g.below]
    report.warnings = warnings
    return report


def _ratio_var(x: np.ndarray, n: np.ndarray) -> tuple[float, float, int]:
    """Pooled share, its cluster-robust variance (tasks as clusters) and the cluster count."""
    total = float(n.sum())
    t = int((n > 0).sum())
    if total <= 0:
        return math.nan, math.nan, 0
    p = float(x.sum()) / total
    if t < 2:
        return p, math.nan, t
    v = float(((x - p * n) ** 2).sum()) / total**2 * t / (t - 1)
    return p, v, t


def _group(dim: str, value: str, sub: pl.DataFrame, totals: pl.DataFrame, level: float) -> FailureGroup:
    """One group's numbers; ``sub`` has per task ``n``, ``x`` (the group's) and ``n_all``, ``x_all``."""
    from scipy.special import stdtr

    x = sub["x"].to_numpy().astype(np.float64)
    n = sub["n"].to_numpy().astype(np.float64)
    g = FailureGroup(dimension=dim, group=value, graded=int(n.sum()), tasks=int((n > 0).sum()),
                     passes=int(x.sum()))
    g.failures = g.graded - g.passes
    g.pass_rate = g.passes / g.graded if g.graded else math.nan
    if g.graded:
        lo, hi = cluster_wilson(x, n, level=level)
        g.ci95 = (float(lo), float(hi))
    # the rest: every graded row of the dimension's tasks outside this group, plus tasks it never touches
    rest = totals.join(sub.select("task_key", "n", "x"), on="task_key", how="left").with_columns(
        (pl.col("n_all") - pl.col("n").fill_null(0)).alias("n_r"), (pl.col("x_all") - pl.col("x").fill_null(0)).alias("x_r"))
    xr = rest["x_r"].to_numpy().astype(np.float64)
    nr = rest["n_r"].to_numpy().astype(np.float64)
    keep = nr > 0
    p_g, v_g, t_g = _ratio_var(x, n)
    p_r, v_r, t_r = _ratio_var(xr[keep], nr[keep])
    g.rest_pass_rate = p_r
    if t_g >= 2 and t_r >= 2 and math.isfinite(v_g) and math.isfinite(v_r):
        se = math.sqrt(v_g + v_r)
        gap = p_r - p_g
        df = max(1, min(t_g, t_r) - 1)
        if se > 0:
            g.p_value = float(stdtr(df, -gap / se))
        else:
            g.p_value = 0.0 if gap > 0 else 1.0
    return g
