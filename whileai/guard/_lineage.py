"""Stage lineage and the model spec as an object.

docs/guard.md, "Stage lineage and the spec": the pipeline is a sequence of stages (SFT, reward modelling, RL, the eval
that judges the result; Lambert 2025, RLHF book, chapter Training Overview); ``stamp_stage``
records which stage a row fed and ``stage_report`` flags the one mistake it most needs caught, a
task used both in eval and in a training stage. docs/guard.md, "Stage lineage and the spec": a spec is a
living, versioned document whose version is a content hash, so any edit to a principle changes it.

Both stamps live in the row's ``lineage`` struct (``lineage.stage``, ``lineage.spec_id``,
``lineage.spec_version``), the one place the rollout table keeps provenance.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, overload

import polars as pl
from pydantic import ConfigDict, Field

from whileai import table
from whileai.errors import ArgumentError, SpecError, StageError
from whileai.report import Documented, Report
from whileai.table import FluentT, IntoRows

__all__ = [
    "STAGES",
    "Spec",
    "SpecError",
    "StageReport",
    "Trait",
    "load_spec",
    "spec_version",
    "stage_of",
    "stage_report",
    "stamp_spec",
    "stamp_stage",
]

#: The pipeline stages a row can feed (whileai 0.131 STAGES): supervised fine-tuning, reward
#: modelling, reinforcement learning, evaluation, and mid-training.
STAGES: tuple[str, ...] = ("sft", "rm", "rl", "eval", "mid")
_TRAINING = ("sft", "rm", "rl", "mid")
_SPEC_HASH_CHARS = 12  # whileai 0.131 spec versions are 12 hex characters of the content hash


# ------------------------------------------------------------------------------------------
# lineage struct helpers
# ------------------------------------------------------------------------------------------


def _with_lineage(df: pl.DataFrame, values: Mapping[str, Any]) -> pl.DataFrame:
    """Set fields of the ``lineage`` struct on every row, keeping the fields already there."""
    fields: list[pl.Expr] = []
    if "lineage" in df.columns and isinstance(df.schema["lineage"], pl.Struct):
        for f in df.schema["lineage"].fields:
            if f.name not in values:
                fields.append(pl.col("lineage").struct.field(f.name).alias(f.name))
    for name, value in values.items():
        fields.append(pl.lit(value, pl.String).alias(name))
    return df.with_columns(pl.struct(fields).alias("lineage"))


def _stage_expr(df: pl.DataFrame) -> pl.Expr:
    """The stage of each row.

    lineage.stage, else a top-level ``stage`` (0.131 rows), else ``eval`` when lineage.source
    is ``eval``, else null.
    """
    parts: list[pl.Expr] = []
    lin = df.schema.get("lineage")
    names = [f.name for f in lin.fields] if isinstance(lin, pl.Struct) else []
    if "stage" in names:
        parts.append(pl.col("lineage").struct.field("stage").cast(pl.String))
    if "stage" in df.columns:
        parts.append(pl.col("stage").cast(pl.String))
    if "source" in names:
        parts.append(pl.when(pl.col("lineage").struct.field("source") == "eval").then(pl.lit("eval")))
    return pl.coalesce(parts) if parts else pl.lit(None, pl.String)


# ------------------------------------------------------------------------------------------
# stages
# ------------------------------------------------------------------------------------------


def _check_stage(stage: Any) -> str:
    if stage not in STAGES:
        raise StageError(f"stage must be one of {', '.join(STAGES)}, got {stage!r}. Use 'sft', 'rm', 'rl', 'eval' or 'mid'.",
                         value=stage)
    return str(stage)


@overload
def stamp_stage(rows: FluentT, /, stage: str) -> FluentT: ...
@overload
def stamp_stage(rows: pl.DataFrame | pl.LazyFrame | str | os.PathLike[str], /, stage: str) -> pl.DataFrame: ...
@overload
def stamp_stage(rows: Iterable[Mapping[str, Any]], /, stage: str) -> list[dict[str, Any]]: ...
@overload
def stamp_stage(rows: IntoRows, /, stage: str) -> Any: ...
def stamp_stage(rows: IntoRows, /, stage: str) -> Any:
    """Record which pipeline stage the rows fed (docs/guard.md, "Stage lineage and the spec"), as ``lineage.stage``.

    Args:
        rows: Rollouts (any input ``table.frame`` reads).
        stage: One of :data:`STAGES`: ``sft``, ``rm``, ``rl``, ``eval``, ``mid``.

    Returns:
        New rows of the input's kind; the input is not changed.

    Raises:
        StageError: ``stage`` is not one of STAGES.

    Examples:
        >>> stage_of(stamp_stage([{"prompt": "p"}], "sft")[0])
        'sft'
    """
    stage = _check_stage(stage)
    df = table.frame(rows, allow_empty=True)
    return table.like_input(rows, _with_lineage(df, {"stage": stage}))


def stage_of(row: Mapping[str, Any], /) -> str | None:
    """The stage one row fed.

    ``lineage.stage``, else a top-level ``stage``, else ``"eval"`` for a row whose
    ``lineage.source`` is ``eval``, else None.

    Examples:
        >>> stage_of({"lineage": {"source": "eval"}}), stage_of({"stage": "rl"}), stage_of({})
        ('eval', 'rl', None)
    """
    if not isinstance(row, Mapping):
        raise ArgumentError(f"row must be one row dict, got {type(row).__name__}. For many rows use stage_report(rows).")
    lineage = row.get("lineage")
    if isinstance(lineage, str):
        try:
            lineage = json.loads(lineage)
        except ValueError:
            lineage = None
    if isinstance(lineage, Mapping) and lineage.get("stage") is not None:
        return str(lineage["stage"])
    if row.get("stage") is not None:
        return str(row["stage"])
    if isinstance(lineage, Mapping) and lineage.get("source") == "eval":
        return "eval"
    return None


class StageReport(Report):
    """Rows and tasks per stage, and tasks used in eval and in training."""

    counts: dict[str, int] = Field(default_factory=dict)
    """Rows per stage."""
    n_unstamped: int = 0
    """Rows with no stage."""
    tasks_per_stage: dict[str, int] = Field(default_factory=dict)
    """Distinct tasks per stage."""
    eval_train_leaks: list[str] = Field(default_factory=list)
    """Tasks (task_key) used in eval and in a training stage (sft, rm, rl, mid)."""
    n_leaks: int = 0
    """len(eval_train_leaks)."""

    def render(self) -> str:
        """The 0.131 layout."""
        return _render_stages(self)


def _render_stages(report: StageReport) -> str:
    """``  rl: 100  eval: 166`` then one line per warning."""
    line = "  " + "  ".join(f"{k}: {v}" for k, v in report.counts.items())
    if report.n_unstamped:
        line += f"  unstamped: {report.n_unstamped}"
    return "\n".join([line, *(f"  ! {w}" for w in report.warnings)])


def stage_report(rows: IntoRows, /) -> StageReport:
    """Count rows and tasks per stage and flag tasks used in both eval and a training stage.

    A task (``task_key``) scored in eval and trained on in sft, rm, rl or mid makes the eval
    measure memory, not skill (docs/guard.md, "Stage lineage and the spec").

    Args:
        rows: Rollouts from any stages (any input ``table.frame`` reads), e.g. the training and
            eval sets concatenated.

    Returns:
        A :class:`StageReport`.

    Examples:
        >>> rows = stamp_stage([{"task_id": "a", "prompt": "x"}], "rl") + stamp_stage([{"task_id": "a", "prompt": "x"}], "eval")
        >>> stage_report(rows)["eval_train_leaks"]
        ['a']
    """
    df = table.frame(rows, allow_empty=True)
    report = StageReport()
    if df.height == 0:
        return report
    st = df.select(pl.col("task_key"), _stage_expr(df).alias("stage"))
    report.n_unstamped = int(st["stage"].null_count())
    per = st.drop_nulls("stage").group_by("stage").agg(pl.len().alias("n"), pl.col("task_key").n_unique().alias("t"))
    order = {s: i for i, s in enumerate(STAGES)}
    for stage, n, t in sorted(per.iter_rows(), key=lambda r: (order.get(r[0], 99), r[0])):
        report.counts[stage] = int(n)
        report.tasks_per_stage[stage] = int(t)
    unknown = [s for s in report.counts if s not in STAGES]
    if unknown:
        report.warnings.append(f"unknown stages on the rows: {', '.join(unknown)}; stamp_stage accepts {', '.join(STAGES)}.")
    ev = st.filter(pl.col("stage") == "eval")["task_key"].unique()
    tr = st.filter(pl.col("stage").is_in(list(_TRAINING)))["task_key"].unique()
    leaks = sorted(set(ev.to_list()) & set(tr.to_list()))
    report.eval_train_leaks = leaks
    report.n_leaks = len(leaks)
    if leaks:
        report.warnings.append(f"{len(leaks)} task(s) used in both eval and training")
    return report


# ------------------------------------------------------------------------------------------
# the model spec
# ------------------------------------------------------------------------------------------


class Trait(Documented):
    """One trait of a spec or constitution: what the model should do, and how firmly."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Stable identifier; the behaviour name ``delta_report(must_not_regress=...)`` reads."""
    name: str = ""
    """A short human name."""
    principle: str = ""
    """The rule, in words."""
    authority: str = ""
    """How binding it is (for example ``must`` or ``should``)."""
    examples: list[Any] = Field(default_factory=list)
    """Worked examples, as given."""


class Spec(Documented):
    """A model spec or constitution as a versioned object (docs/guard.md, "Stage lineage and the spec")."""

    model_config = ConfigDict(frozen=True)

    id: str
    """The spec's name."""
    traits: tuple[Trait, ...]
    """The traits, in order."""
    source: Any = None
    """Where the spec came from, as given (a path, a URL, a dict of metadata)."""
    version: str = ""
    """Content hash: the first 12 hex characters of sha256 over the canonical JSON
    (``table.canonical_json``) of the traits; any edit to a trait changes it, the spec's name
    does not."""
    hash_algorithm: str = f"sha256/{table.CANONICAL_JSON}/traits"
    """How ``version`` was computed."""

    def behaviors(self) -> list[str]:
        """The trait ids, ready for ``delta_report(must_not_regress=spec.behaviors())``."""
        return [t.id for t in self.traits]


def _content_hash(traits: Sequence[Trait]) -> str:
    """sha256 over the canonical JSON of the traits, as :class:`Trait` normalises them.

    Only the content: the spec's id is a name (a dict may carry none, a file is named by its
    stem), so the same constitution from a dict and from its file has one version.
    """
    text = table.canonical_json([t.model_dump(mode="json") for t in traits])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:_SPEC_HASH_CHARS]


def _trait(item: Any, i: int) -> Trait:
    if isinstance(item, Trait):
        return item
    if isinstance(item, str):
        return Trait(id=f"trait_{i}", principle=item)
    if isinstance(item, Mapping):
        data = dict(item)
        tid = data.pop("id", None) or data.pop("trait_id", None) or data.get("name") or f"trait_{i}"
        known = {k: data[k] for k in ("name", "principle", "authority", "examples") if k in data and data[k] is not None}
        if "principle" not in known:
            for alt in ("text", "rule", "description"):
                if isinstance(data.get(alt), str):
                    known["principle"] = data[alt]
                    break
        try:
            fields: dict[str, Any] = {k: (list(v) if k == "examples" else str(v)) for k, v in known.items()}
            return Trait.model_validate({"id": str(tid), **fields})
        except (TypeError, ValueError) as exc:  # list() of a non-iterable, or pydantic's ValidationError
            raise SpecError(f"trait {i} cannot be read ({exc}). A trait is a dict with id, name, principle, authority.") from exc
    raise SpecError(f"trait {i} must be a dict or a principle string, got {type(item).__name__}. "
                    "Pass {'id': ..., 'principle': ...} or a string.")


def load_spec(obj: Any, /, *, spec_id: str | None = None) -> Spec:
    """Wrap a constitution into a :class:`Spec` whose version is a content hash.

    Accepts the ``{source, traits: [{id, name, principle, authority}]}`` shape the character
    recipe writes (also ``{"id": ..., "traits": [...]}``), a list of traits (dicts or bare
    principle strings, which get ids ``trait_<i>``), a JSON file path, or a Spec.

    Args:
        obj: The spec.
        spec_id: The spec's id when ``obj`` has none (default: the dict's id or name, the file
            stem, else ``"spec"``).

    Returns:
        A :class:`Spec`.

    Raises:
        SpecError: Anything else (also a TypeError), or a file that is not a JSON spec.

    Examples:
        >>> s = load_spec({"source": "character recipe", "traits": [
        ...     {"id": "warm", "principle": "Be warm."}, {"id": "brief", "principle": "Be brief."}]})
        >>> s.behaviors(), len(s.version)
        (['warm', 'brief'], 12)
        >>> load_spec({"traits": [{"id": "warm", "principle": "Be warmer."}, {"id": "brief", "principle": "Be brief."}]}).version != s.version
        True
    """
    if isinstance(obj, Spec):
        return obj if spec_id is None else _build(spec_id, obj.traits, obj.source)
    if isinstance(obj, (str, os.PathLike)):
        path = Path(obj)
        if not path.exists():
            raise SpecError(f"spec file {str(obj)!r} does not exist. Pass a JSON file, a dict or a list of traits.")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SpecError(f"spec file {str(obj)!r} is not readable JSON ({exc}). Write the spec as JSON.") from exc
        spec = load_spec(data, spec_id=spec_id or (data.get("id") if isinstance(data, Mapping) else None) or path.stem)
        return spec if spec.source is not None else _build(spec.id, spec.traits, str(path))
    if isinstance(obj, Mapping):
        traits = obj.get("traits")
        if not isinstance(traits, Sequence) or isinstance(traits, str):
            raise SpecError(f"a spec dict must hold a list under 'traits', got {type(traits).__name__}. "
                            "Pass {'traits': [{'id': ..., 'principle': ...}]}.")
        sid = spec_id or obj.get("id") or obj.get("spec_id") or obj.get("name") or "spec"
        return _build(str(sid), [_trait(t, i) for i, t in enumerate(traits)], obj.get("source"))
    if isinstance(obj, Sequence) and not isinstance(obj, (bytes, bytearray)):
        return _build(spec_id or "spec", [_trait(t, i) for i, t in enumerate(obj)], None)
    raise SpecError(f"load_spec needs a dict, a list of traits, or a path, got {type(obj).__name__}. Pass one of those.")


def _build(spec_id: str, traits: Sequence[Trait], source: Any) -> Spec:
    traits = tuple(traits)
    if not traits:
        raise SpecError("a spec must hold at least one trait, got none. Add traits: [{'id': ..., 'principle': ...}].")
    ids = [t.id for t in traits]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise SpecError(f"trait ids must be unique, got {', '.join(dup)} more than once. Give each trait its own id.")
    return Spec(id=spec_id, traits=traits, source=source, version=_content_hash(traits))


def spec_version(spec: Any, /) -> str:
    """The spec's content version (12 hex characters); accepts anything :func:`load_spec` does.

    Examples:
        >>> spec_version(["Be kind."]) == spec_version(["Be kind."]) != spec_version(["Be kinder."])
        True
    """
    return load_spec(spec).version


@overload
def stamp_spec(rows: FluentT, spec: Any, /) -> FluentT: ...
@overload
def stamp_spec(rows: pl.DataFrame | pl.LazyFrame | str | os.PathLike[str], spec: Any, /) -> pl.DataFrame: ...
@overload
def stamp_spec(rows: Iterable[Mapping[str, Any]], spec: Any, /) -> list[dict[str, Any]]: ...
@overload
def stamp_spec(rows: IntoRows, spec: Any, /) -> Any: ...
def stamp_spec(rows: IntoRows, spec: Any, /) -> Any:
    """Tag every row with the spec it was judged under: ``lineage.spec_id`` and ``lineage.spec_version``.

    Then you can ask whether adherence held from one spec (or model) version to the next.

    Args:
        rows: Rollouts (any input ``table.frame`` reads).
        spec: A :class:`Spec` or anything :func:`load_spec` accepts.

    Returns:
        New rows of the input's kind; the input is not changed.

    Examples:
        >>> out = stamp_spec([{"prompt": "p"}], {"id": "kind", "traits": ["Be kind."]})
        >>> out[0]["lineage"]["spec_id"], len(out[0]["lineage"]["spec_version"])
        ('kind', 12)
    """
    s = load_spec(spec)
    df = table.frame(rows, allow_empty=True)
    return table.like_input(rows, _with_lineage(df, {"spec_id": s.id, "spec_version": s.version}))
