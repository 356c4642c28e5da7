"""Attach gold labels (people's or a program's 0/1 verdicts) to rows, by key.

docs/grade.md, "Labels": labels come as ``[{"key": ..., "label": 0 or 1}, ...]`` or a
``{key: label}`` dict. A key names its row as the row's ``rollout_id``, as
``"scenario_id#rollout_index"``, as ``scenario_id`` plus ``rollout_index`` given as two fields,
or as the prompt. A key that names no row is listed under warnings with the form it was read
in; a set of labels that names no row raises; a key that names two rows (pooled runs on one
pinned grid share ``scenario_id#rollout_index``) raises before any row changes. The rows get
``gold_reward`` and ``gold_kind``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

import polars as pl
from pydantic import Field

from whileai import table
from whileai.errors import JudgeError
from whileai.report import Report
from whileai.table import IntoRows

__all__ = ["LabelReport", "Labeled", "attach_labels"]

_KINDS = {"human": "human", "program": "program", "verifier": "program", "model": "model"}
_LABEL_KEYS = ("label", "gold_reward", "reward", "gold")


class LabelReport(Report):
    """What ``attach_labels`` matched."""

    labels: int = 0
    """Label records given."""
    matched: int = 0
    """Labels that named a row."""
    unmatched: int = 0
    """Labels that named no row."""
    unmatched_keys: list[str] = Field(default_factory=list)
    """The first keys that named no row, with the forms tried."""
    rows_labeled: int = 0
    """Rows that now carry a gold label from this call."""
    ties: int = 0
    """Rows whose labels split evenly (left without a gold label)."""
    conflicts: int = 0
    """Rows given both a 0 and a 1 label (a majority decided those that did not tie)."""
    kind: str = "human"
    """The gold kind stamped: human, program or model."""
    by_form: dict[str, int] = Field(default_factory=dict)
    """Matched labels per key form (rollout_id, scenario_id#rollout_index, scenario_id+rollout_index, prompt)."""

    def render(self) -> str:
        """One line, then the warnings."""
        line = (f"attached {self.matched} of {self.labels} {self.kind} labels to {self.rows_labeled} rows"
                + (f"; {self.unmatched} named no row" if self.unmatched else "")
                + (f"; {self.ties} tied rows left unlabeled" if self.ties else ""))
        return "\n".join([line, *(f"! {w}" for w in self.warnings)])


class Labeled(NamedTuple):
    """What ``attach_labels`` returns: the labeled rows and the report (unpacks as a pair)."""

    rows: Any
    """The rows with ``gold_reward`` and ``gold_kind`` (a fluent object if one was given, else a DataFrame)."""
    report: LabelReport
    """What matched."""


def _check_kind(kind: Any) -> str:
    if isinstance(kind, str) and kind.strip().lower() in _KINDS:
        return _KINDS[kind.strip().lower()]
    raise JudgeError(
        f"kind must be one of 'human', 'program' ('verifier' reads the same) or 'model', got {kind!r}. "
        "Use kind='human' for people's labels, kind='program' for a deterministic rule such as a unit test.",
        value=kind,
    )


def _label_value(value: Any, key: Any) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)) and not isinstance(value, bool) and float(value) in (0.0, 1.0):
        return float(value)
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        return _label_value(value.item(), key)
    raise JudgeError(
        f"a label must be 0 or 1, got {value!r} for key {key!r}. A gold label says pass (1) or fail (0); "
        "round partial credit to 0/1 or leave that row unlabeled.",
        value=value,
    )


def _read_labels(labels: Any) -> _LabelColumns:
    """Every label form, read into columns (form, key, label, shown)."""
    if isinstance(labels, (str, os.PathLike)):
        path = Path(labels)
        if not path.exists():
            raise JudgeError(f"labels must be a list, a dict or a JSONL path, got the path {str(labels)!r}, which does "
                             "not exist. Check the path.", value=str(labels))
        labels = _read_label_file(path)
    records: list[dict[str, Any]] = []
    if isinstance(labels, Mapping):
        return _LabelColumns.from_mapping(labels)
    if isinstance(labels, pl.DataFrame):
        labels = labels.to_dicts()
    if not isinstance(labels, (list, tuple)):
        raise JudgeError(f"labels must be a list of {{'key', 'label'}} records or a {{key: label}} dict, got "
                         f"{type(labels).__name__}. Pass [{{'key': 'run-00001', 'label': 1}}, ...].", value=labels)
    for i, item in enumerate(labels):
        if not isinstance(item, Mapping):
            raise JudgeError(
                f"label {i} must be a dict like {{'key': ..., 'label': 0 or 1}}, got {type(item).__name__} {item!r:.40}. "
                "Pass records, or a {key: label} dict.", value=item)
        label_key = next((k for k in _LABEL_KEYS if k in item), None)
        if label_key is None:
            raise JudgeError(f"label {i} must carry 'label' (0 or 1), got the keys {sorted(item)!r}. "
                             "Add 'label': 1 (pass) or 0 (fail).", value=item)
        if "key" in item and item["key"] is not None:
            key = str(item["key"])
            rec: dict[str, Any] = {"form": "key", "key": key, "shown": key}
        elif item.get("rollout_id") is not None:
            rec = {"form": "rollout_id", "key": str(item["rollout_id"]), "shown": str(item["rollout_id"])}
        elif item.get("scenario_id") is not None and item.get("rollout_index") is not None:
            sid, idx = str(item["scenario_id"]), int(item["rollout_index"])
            rec = {"form": "scenario_id+rollout_index", "key": f"{sid}#{idx}", "shown": f"{sid} + {idx}"}
        elif item.get("prompt") is not None:
            rec = {"form": "prompt", "key": str(item["prompt"]), "shown": str(item["prompt"])[:60]}
        else:
            raise JudgeError(
                f"label {i} must name its row by 'key', 'rollout_id', 'scenario_id' plus 'rollout_index', or 'prompt', "
                f"got the keys {sorted(item)!r}. Add one of those.", value=item)
        rec["label"] = _label_value(item[label_key], rec["shown"])
        records.append(rec)
    return _LabelColumns([r["form"] for r in records], [r["key"] for r in records], [r["label"] for r in records],
                         [r["shown"] for r in records])


def _read_label_file(path: Path) -> list[Any]:
    """The records of a JSONL labels file; a file that cannot be opened or decoded is a JudgeError."""
    shown = str(path)
    try:
        with open(path, encoding="utf-8") as handle:
            records = []
            for lineno, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    records.append(json.loads(line))
                except ValueError as exc:
                    raise JudgeError(f"labels file {shown!r}: line {lineno} must be one JSON record, got {line[:60]!r} "
                                     f"({exc}). Fix or remove that line.", value=shown, line=lineno) from exc
            return records
    except UnicodeDecodeError as exc:
        raise JudgeError(f"labels file {shown!r} must be UTF-8 JSONL, got bytes that do not decode ({exc.reason} at "
                         f"byte {exc.start}). Re-save it as UTF-8.", value=shown) from exc
    except OSError as exc:
        raise JudgeError(f"labels file {shown!r} cannot be read ({exc.strerror or exc}). Check its permissions, or "
                         "pass another path.", value=shown) from exc


@dataclass(frozen=True)
class _LabelColumns:
    """Label records as columns: the form each key is read in, the key, the 0/1 label, how to show it."""

    forms: list[str]
    keys: list[str]
    labels: list[float]
    shown: list[str]

    @classmethod
    def from_mapping(cls, labels: Mapping[Any, Any]) -> _LabelColumns:
        keys = [k if type(k) is str else str(k) for k in labels]
        values = list(labels.values())
        ok = all((type(v) is int or type(v) is float or type(v) is bool) and (v == 0 or v == 1) for v in values)
        floats = [float(v) for v in values] if ok else [_label_value(v, k) for k, v in zip(keys, values)]
        return cls(["key"] * len(keys), keys, floats, keys)

    def __len__(self) -> int:
        return len(self.keys)


def attach_labels(
    rows: IntoRows,
    /,
    labels: Any,
    *,
    kind: Literal["human", "program", "verifier", "model"] = "human",
) -> Labeled:
    """Stamp gold labels on the rows they name: ``gold_reward`` (0/1) and ``gold_kind``.

    docs/grade.md, "Labels". A string key is matched as the row's ``rollout_id``, then as
    ``"scenario_id#rollout_index"``, then as the prompt (the first form that names a row wins);
    records may instead give ``rollout_id``, ``scenario_id`` plus ``rollout_index``, or
    ``prompt`` as fields. A row named by several labels gets their majority (an even split
    leaves it unlabeled and is counted under ``ties``). A deterministic rule (a unit test, an
    execution match) is ``kind="program"`` ("verifier" reads the same) and counts on the same
    footing as people (Lambert 2025, chapter Evaluation, verifiable rewards); a model's labels
    are ``kind="model"`` and do not count in :func:`judge_trust` unless allowed. Nothing is
    changed in place: the labeled rows come back.

    Args:
        rows: The rows (any input ``table.frame`` accepts; a fluent object keeps its class and meta).
        labels: ``[{"key": ..., "label": 0 or 1}, ...]``, ``{key: label}``, or a JSONL path of records.
        kind: Who wrote the labels: ``human``, ``program`` (or ``verifier``) or ``model``.

    Returns:
        ``Labeled(rows, report)``, the rows in the kind they came in (``table.like_input``);
        unpack as ``rows, report = attach_labels(...)``.

    Raises:
        JudgeError: A label that is not 0/1, an unknown ``kind``, no label naming any row, or a
            key naming two rows (nothing is changed; stamp a unique ``rollout_id``).

    Examples:
        >>> rows = [{"rollout_id": "r1", "prompt": "a"}, {"rollout_id": "r2", "prompt": "b"}]
        >>> labeled, report = attach_labels(rows, {"r1": 1})
        >>> [row.get("gold_reward") for row in labeled], report.matched
        ([1.0, None], 1)
    """
    gold_kind = _check_kind(kind)
    records = _read_labels(labels)
    df = table.frame(rows)
    report = LabelReport(labels=len(records), kind=gold_kind)
    if not records:
        raise JudgeError("labels must hold at least one label, got none. Pass [{'key': ..., 'label': 0 or 1}, ...].")
    lab = pl.DataFrame(
        {"_li": pl.int_range(len(records), eager=True), "_form": records.forms, "_key": records.keys,
         "_label": records.labels},
        schema={"_li": pl.Int64, "_form": pl.String, "_key": pl.String, "_label": pl.Float64},
    )
    keys = df.with_row_index("_row").select(
        pl.col("_row").cast(pl.Int64),
        (pl.col("rollout_id").cast(pl.String) if "rollout_id" in df.columns else pl.lit(None, pl.String)).alias("rollout_id"),
        (pl.concat_str([pl.col("scenario_id").cast(pl.String), pl.lit("#"), pl.col("rollout_index").cast(pl.String)])
         if {"scenario_id", "rollout_index"} <= set(df.columns) else pl.lit(None, pl.String)).alias("composite"),
        (pl.col("prompt").cast(pl.String) if "prompt" in df.columns else pl.lit(None, pl.String)).alias("prompt"),
    )
    # Which key forms each label record may be read in, in the order tried.
    forms = {"key": ("rollout_id", "composite", "prompt"), "rollout_id": ("rollout_id",),
             "scenario_id+rollout_index": ("composite",), "prompt": ("prompt",)}
    names = {"rollout_id": "rollout_id", "composite": "scenario_id#rollout_index", "prompt": "prompt"}
    pending = lab
    matches: list[pl.DataFrame] = []
    for column in ("rollout_id", "composite", "prompt"):
        allowed = [f for f, cols in forms.items() if column in cols]
        here = pending.filter(pl.col("_form").is_in(allowed))
        if not here.height:
            continue
        hit = here.join(keys.select("_row", pl.col(column).alias("_key")).drop_nulls("_key"), on="_key", how="inner")
        if hit.height:
            hit = hit.with_columns(pl.lit(names[column]).alias("_matched_as"))
            matches.append(hit)
            pending = pending.join(hit.select("_li").unique(), on="_li", how="anti")
    matched = pl.concat(matches) if matches else pl.DataFrame(
        schema={"_li": pl.Int64, "_form": pl.String, "_key": pl.String, "_label": pl.Float64, "_row": pl.Int64,
                "_matched_as": pl.String})
    # A key naming two rows: raise before anything changes.
    multi = matched.group_by("_li").agg(pl.len().alias("n"), pl.col("_key").first(), pl.col("_matched_as").first()).filter(
        pl.col("n") > 1).sort("_li")
    if multi.height:
        first = multi.row(0, named=True)
        raise JudgeError(
            f"each label key must name one row, got {multi.height} key(s) that name more than one (first: "
            f"{first['_key']!r} as {first['_matched_as']} names {first['n']} rows). Pooled runs on one pinned grid share "
            "scenario_id#rollout_index; stamp a unique rollout_id on every row (for example "
            "row['rollout_id'] = f'{run}-{i:05d}') and key the labels on it. Nothing was changed.",
            counts={"n_ambiguous": multi.height},
        )
    unmatched = pending.sort("_li")
    report.matched = matched["_li"].n_unique()
    report.unmatched = unmatched.height
    report.by_form = {str(k): int(v) for k, v in matched.group_by("_matched_as").len().sort("_matched_as").iter_rows()}
    if unmatched.height:
        shown = []
        for rec in unmatched.head(10).iter_rows(named=True):
            tried = " / ".join(names[c] for c in forms[rec["_form"]])
            shown.append(f"{records.shown[rec['_li']]!r} (as {tried})")
        report.unmatched_keys = shown
    if report.matched == 0:
        raise JudgeError(
            f"labels must name rows of this table, got {len(records)} label(s) that name none (first: "
            f"{report.unmatched_keys[0] if report.unmatched_keys else '?'}). A key is the row's rollout_id, "
            "'scenario_id#rollout_index', or its prompt; check the labels belong to these rows.",
            counts={"n_labels": len(records)},
        )
    if unmatched.height:
        report.warnings.append(
            f"{unmatched.height} of {len(records)} labels named no row (first: {', '.join(report.unmatched_keys[:3])}); "
            "they were skipped.")
    per_row = matched.group_by("_row").agg(pl.col("_label").mean().alias("_mean"), pl.len().alias("_n"))
    ties = per_row.filter(pl.col("_mean") == 0.5)
    report.ties = ties.height
    report.conflicts = per_row.filter((pl.col("_mean") > 0) & (pl.col("_mean") < 1)).height
    if ties.height:
        report.warnings.append(f"{ties.height} rows got as many 0 as 1 labels and were left without a gold label; "
                               "add a tie-breaking label.")
    decided = per_row.filter(pl.col("_mean") != 0.5).select(
        pl.col("_row"), (pl.col("_mean") > 0.5).cast(pl.Float64).alias("_gold"))
    report.rows_labeled = decided.height
    out = _stamp(df, decided, gold_kind)
    return Labeled(table.like_input(rows, out), report)


def _stamp(df: pl.DataFrame, decided: pl.DataFrame, gold_kind: str) -> pl.DataFrame:
    joined = df.with_row_index("_row").with_columns(pl.col("_row").cast(pl.Int64)).join(decided, on="_row", how="left")
    old_gold = pl.col("gold_reward").cast(pl.Float64) if "gold_reward" in df.columns else pl.lit(None, pl.Float64)
    old_kind = pl.col("gold_kind").cast(pl.String) if "gold_kind" in df.columns else pl.lit(None, pl.String)
    hit = pl.col("_gold").is_not_null()
    out = joined.with_columns(
        pl.when(hit).then(pl.col("_gold")).otherwise(old_gold).alias("gold_reward"),
        pl.when(hit).then(pl.lit(gold_kind)).otherwise(old_kind).alias("gold_kind"),
    ).drop("_row", "_gold")
    return out
