"""``decontaminate``: four rules between training rows and evaluation sources.

docs/guard.md, "Decontamination". In priority order, each row counted once:

1. ``same_task``: the row shares a scenario_id or task_id with an eval row (a task is a
   situation, not a string, so a rephrasing of an eval situation is the eval situation);
2. ``exact``: the row's text is an eval prompt, or another eval text (an answer, a reference) of
   at least ``DECONTAM_EXACT_MIN_WORDS`` (8) words, verbatim: the same sequence of words,
   lower-cased, spacing and punctuation ignored. A shorter shared answer ("Yes", "42") is no
   evidence of contamination, as n-gram decontamination counts only matches of at least n tokens
   (Llama 3, GPT-3 appendix C); a short eval question copied whole is;
3. ``near``: the row holds word n-grams (n = 8) covering at least ``overlap`` of ONE eval
   text's words. Coverage is measured on the eval text, as Llama 3 scores an eval example
   (Dubey et al. 2024, section 5.1.4, after Singh et al. 2024: the share of the example's tokens
   inside 8-grams found in the training data) and Tulu 3 matches a test instance against one
   training instance (Lambert et al. 2024, decontamination); so an eval question wrapped in a
   few-shot instruction or a chat template is caught, and a row that only repeats an eval
   prompt's instruction line is not. The 80% cut is the "dirty" threshold of the Llama 2
   contamination analysis (Touvron et al. 2023, appendix A.6, which matched spans of more than
   10 tokens). One shared 8-gram is not enough: situations written from the same templates
   share whole sentences without sharing the question. The share is the eval text's words, not
   the row's: the description's "80% of its words" read as Llama 2 and 3 read it, the tokens of
   the eval sample, so a wrapped copy is caught.

   ``near="template"`` (the default) makes the rule template-aware. An 8-gram counts as shared
   when it matches in all words but one (a one-word skip-gram, after Llama 2's skip budget),
   so an eval prompt with one word changed anywhere is still covered but for that word; and the
   row must reproduce the eval text's *slot words*, the words another eval task puts in the same
   3-word context (ids, amounts, names), weighted by inverse document frequency over the eval
   texts and missing at most the heaviest one or 20% of their weight. Distinct tasks written
   from one template share its sentences but not its slot values, and are kept. Measured on
   seeded templated data (tests/guard/test_decontam_rates.py): distinct tasks dropped 0.0%
   (``near="eval_cover"``, the earlier exact-8-gram rule: 28.5%), one-word-changed eval prompts
   missed 0.0% (earlier: 21.3%);
4. ``semantic`` (only with ``embedder=``): cosine at or above ``similarity`` against an eval
   prompt of a different task. A flag there means the prompts read alike, a question to check.

Kernel: every text is tokenised once and each word n-gram hashed to 64 bits (numpy), once per
masked position for the template rule; the row-side hashes are joined to the eval-side (hash,
eval text, position) table (Polars), and the coverage of each (row text, eval text) pair is
the union of the eval text's matched n-gram spans, computed from sorted eval positions. Rows
are processed in chunks under a budget of matched pairs, so memory stays bounded.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Literal, NamedTuple, get_args

import numpy as np
import polars as pl
import pyarrow as pa
from pydantic import Field

from whileai import table
from whileai._checks import check_fraction, check_int, check_strings
from whileai._progress import ProgressArg, Tracker, check_progress
from whileai.defaults import (
    CHUNK_ROWS,
    DECONTAM_CROSS_TASK_QUANTILE,
    DECONTAM_CROSS_TASK_SAMPLE,
    DECONTAM_EXACT_MIN_WORDS,
    DECONTAM_EXAMPLES,
    DECONTAM_NEAR,
    DECONTAM_NGRAM,
    DECONTAM_OVERLAP,
    DECONTAM_PAIR_BUDGET,
    DECONTAM_RARE_FAN,
    DECONTAM_SIMILARITY,
    DECONTAM_SLOT_CONTEXT,
    DEFAULT_SEED,
    EMBED_BATCH,
    PROGRESS_MIN_ROWS,
)
from whileai.errors import ArgumentError, ContaminationError, WaiError
from whileai.guard._tokens import combine, masked_ngram_hashes, ngram_hashes, text_hashes, tokenize
from whileai.report import ROWS_GIVEN, Part, Report
from whileai.stats.rng import check_rng
from whileai.table import IntoRows, is_ray_dataset, like_input

__all__ = ["ContaminatedRow", "ContaminationReport", "Decontaminated", "decontaminate"]

#: Eval-row columns whose text a training row may copy (prompts, replies, answers, references).
EVAL_TEXT_COLUMNS = ("prompt", "final_text", "reference", "answer", "solution", "target", "completion")
_RULES = ("same_task", "exact", "near", "semantic")
#: The near rules ``near=`` picks (docs/guard.md, "Decontamination").
NearRule = Literal["template", "eval_cover"]
_SIM_BLOCK = 512  # row vectors compared with every eval vector at once
_TOL = 1e-9  # relative tolerance of the slot-weight comparisons (sums of floats in different orders)

RULE_SOURCES = {
    "same_task": "docs/guard.md, 'Decontamination': a task is a situation, not a string",
    "exact": (f"the same word sequence as an eval prompt, or an eval answer of at least {DECONTAM_EXACT_MIN_WORDS} words (lower-cased; "
              "spacing and punctuation ignored); shorter answers are not matched, as n-gram decontamination counts only "
              "matches of at least n tokens (Llama 3, Dubey et al. 2024 section 5.1.4; GPT-3, Brown et al. 2020 "
              "appendix C)"),
    "near": ("the row holds word 8-grams covering >= overlap of one eval text's words: coverage measured on the eval "
             "text as in Llama 3 (Dubey et al. 2024, section 5.1.4, after Singh et al. 2024) and Tulu 3 (Lambert et al. "
             "2024, decontamination against one training instance), with the 80% 'dirty' cut of the Llama 2 "
             "contamination analysis (Touvron et al. 2023, appendix A.6)"),
    "semantic": "embedder cosine >= similarity against an eval prompt of a different task (docs/guard.md, 'Decontamination')",
}
_NEAR_TEMPLATE_SOURCE = (
    "the row holds word 8-grams, each matching the eval text in all words but at most one (Llama 2's skip-gram budget, "
    "Touvron et al. 2023 appendix A.6), covering >= overlap of one eval text's words (measured on the eval text as in "
    "Llama 3, Dubey et al. 2024 section 5.1.4), and reproduces that text's slot words (the words other eval tasks change "
    "in the same context: ids, amounts, names) but one, or but the 1 - overlap share if larger, so distinct tasks of "
    "one template are kept (docs/guard.md, 'Decontamination')"
)


def _rule_sources(near: str) -> dict[str, str]:
    """Where each rule comes from, the near rule as ``near=`` picks it."""
    return {**RULE_SOURCES, "near": _NEAR_TEMPLATE_SOURCE} if near == "template" else dict(RULE_SOURCES)


class ContaminatedRow(Part):
    """A training row a rule caught: which rule, on which field, and what it matched.

    ``same_task`` names the eval ``task``; the text rules give the row's ``text`` and the eval
    ``match``, with ``coverage`` (near) or ``similarity`` (semantic).
    """

    index: int = 0
    """Its position in the rows given."""
    rule: str = ""
    """same_task, exact, near or semantic."""
    field: str = ""
    """The field it was caught on (``task`` for same_task)."""
    task: str | None = None
    """same_task: the eval task id it shares."""
    text: str | None = None
    """The row's text on that field, clipped."""
    match: str | None = None
    """The eval text it matched, clipped."""
    coverage: float | None = None
    """near: the share of the matched eval text's words the row holds."""
    similarity: float | None = None
    """semantic: the cosine similarity to the nearest eval prompt."""


class ContaminationReport(Report):
    """What decontaminate found, rule by rule."""

    n_rows: int = Field(0, validation_alias=ROWS_GIVEN)
    """Rows given."""
    renamed: ClassVar[dict[str, str]] = {"n": "n_rows"}

    @property
    def n(self) -> int:
        """``n_rows`` under its old name (rows given), kept so code written with it still reads."""
        return self.n_rows

    n_kept: int = 0
    """Rows that passed every rule (the clean rows returned)."""
    n_contaminated: int = 0
    """Rows dropped; each counted once, under the first rule that caught it."""
    contamination_rate: float = 0.0
    """n_contaminated / n_rows."""
    n_same_task: int = 0
    """Rows sharing a scenario_id or task_id with an eval row."""
    n_exact: int = 0
    """Rows whose text is an eval text of at least ``DECONTAM_EXACT_MIN_WORDS`` words verbatim."""
    n_near: int = 0
    """Rows holding n-grams that cover at least ``overlap`` of one eval text's words (under ``near="template"``
    8-grams matching in all words but one, and the row reproduces that text's slot words but the allowance)."""
    n_semantic: int = 0
    """Rows within ``similarity`` cosine of an eval prompt of a different task."""
    n_eval_rows: int = 0
    """Eval rows read from every source."""
    n_eval_texts: int = 0
    """Distinct eval texts the text rules compared against."""
    eval_sources: list[str] = Field(default_factory=list)
    """The sources read, as described."""
    ngram: int = DECONTAM_NGRAM
    """Words per n-gram of the near-copy rule."""
    near_rule: str = DECONTAM_NEAR
    """The near rule used: ``"template"`` (one-word skip 8-grams and the eval text's slot words reproduced) or
    ``"eval_cover"`` (exact 8-grams only, the earlier rule)."""
    n_eval_templated: int | None = None
    """Eval texts with slot words (words another eval task changes in the same context), the texts the template
    check protects distinct tasks of (None under ``near="eval_cover"``)."""
    overlap: float = DECONTAM_OVERLAP
    """Share of an eval text's words the row's n-grams cover at which the row is a near copy."""
    similarity: float | None = None
    """Cosine threshold of the semantic rule (None without an embedder)."""
    eval_cross_task_p99: float | None = None
    """99th percentile of cosine over eval-prompt pairs with different task ids: how alike
    distinct tasks read to this embedder (None without an embedder or eval task ids)."""
    fields: list[str] = Field(default_factory=list)
    """Row fields checked."""
    by_field: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Rows caught on each field, per text rule (a row can count under several fields)."""
    examples: list[ContaminatedRow] = Field(default_factory=list)
    """The first offenders: index, rule, field, text, match, coverage (share of the matched eval
    text's words) or similarity, task."""
    rules_skipped: dict[str, str] = Field(default_factory=dict)
    """Rules that could not run, and why."""
    rule_sources: dict[str, str] = Field(default_factory=lambda: dict(RULE_SOURCES))
    """Where each rule comes from."""
    notes: list[str] = Field(default_factory=list)
    """What the numbers do and do not say."""

    def render(self) -> str:
        """Summary, rule counts, examples, skipped rules and notes."""
        lines = [
            f"{self.n_contaminated} of {self.n_rows} rows contaminated ({self.contamination_rate:.1%}) against "
            f"{self.n_eval_rows} eval rows; kept {self.n_kept}",
            f"  same task {self.n_same_task}, exact {self.n_exact}, near ({self.near_rule}: {self.ngram}-gram coverage >= "
            f"{self.overlap:.0%}{', slot words kept' if self.near_rule == 'template' else ''}) {self.n_near}, "
            f"semantic {self.n_semantic if self.similarity is not None else 'not run'}",
        ]
        for ex in self.examples:
            score = ex.coverage if "coverage" in ex else ex.similarity
            extra = f" {score:.2f}" if isinstance(score, float) else ""
            what = f"task {ex.task!r}" if ex.rule == "same_task" else f"[{ex.field}]: {str(ex.get('text', ''))[:70]!r}"
            lines.append(f"  row {ex.index} {ex.rule}{extra} {what}")
        for rule, why in self.rules_skipped.items():
            lines.append(f"  skipped {rule}: {why}")
        lines.extend(f"  note: {n}" for n in self.notes)
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)


class Decontaminated(NamedTuple):
    """What :func:`decontaminate` returns: the clean rows and the report (unpacks as a pair)."""

    rows: Any
    report: ContaminationReport


def decontaminate(
    rows: IntoRows,
    /,
    eval: IntoRows | Sequence[IntoRows] | None = None,  # noqa: A002 - the documented name (docs/guard.md)
    *,
    against: Any = None,
    fields: Sequence[str] | str = ("prompt",),
    overlap: float = DECONTAM_OVERLAP,
    n: int = DECONTAM_NGRAM,
    near: NearRule = DECONTAM_NEAR,  # type: ignore[assignment]
    embedder: Callable[[list[str]], Any] | None = None,
    similarity: float = DECONTAM_SIMILARITY,
    examples: int = DECONTAM_EXAMPLES,
    seed: int | np.random.Generator = DEFAULT_SEED,
    progress: ProgressArg = None,
    out: str | os.PathLike[str] | None = None,
) -> Decontaminated:
    """Drop training rows that copy, nearly copy, or (with an embedder) read like an eval source.

    Four rules, counted separately, each row counted once in this order (docs/guard.md,
    "Decontamination"): same scenario_id or task_id as an eval row (``n_same_task``); an eval
    prompt, or another eval text of at least ``DECONTAM_EXACT_MIN_WORDS`` (8) words, verbatim
    (``n_exact``; a shorter answer is not matched exactly); word ``n``-grams of the row covering at least ``overlap`` of one
    eval text's words, wherever they sit in the row (``n_near``: coverage measured on the eval
    text as in Llama 3, Dubey et al. 2024 section 5.1.4, and Tulu 3, Lambert et al. 2024, with
    the 80% "dirty" cut of Llama 2, Touvron et al. 2023 appendix A.6; the share is of the eval
    text's words, so a copy wrapped in a longer prompt counts; under ``near="template"`` an
    8-gram may differ in one word and the row must reproduce the eval text's slot words, so
    distinct tasks of one template are kept and one-word edits are caught);
    and with ``embedder=`` cosine at or above ``similarity`` against an eval prompt of a
    different task (``n_semantic``). Eval texts are the eval rows' prompts, replies and answer or
    reference fields.

    Args:
        rows: Training rows (any input ``table.frame`` reads).
        eval: The evaluation sources: a list of row dicts, a table, a JSONL or Parquet path, or a
            list of such sources (a list of strings is a list of paths).
        against: The same as ``eval`` (the whileai 0.131 name); give one of the two.
        fields: Row fields checked against the eval texts (``("prompt", "final_text")`` also
            checks replies).
        overlap: Share of one eval text's words covered by the row's n-grams at which the row is a
            near copy, in (0, 1].
        n: Words per n-gram.
        near: The near rule: ``"template"`` (default: one-word-skip 8-grams, and the eval text's
            slot words reproduced, missing at most the heaviest or ``1 - overlap`` of their
            idf weight) or ``"eval_cover"`` (the earlier rule: exact 8-grams, no slot check).
        embedder: Any callable from a list of texts to one vector per text (nothing is
            imported; e.g. ``lambda texts: model.encode(texts, normalize_embeddings=True)``).
        similarity: Cosine at or above which the semantic rule flags a row.
        examples: Offending rows listed on the report.
        seed: Seed of the eval-prompt sample behind the cross-task percentile.
        progress: A tqdm.auto bar of texts checked, from ``PROGRESS_MIN_ROWS`` texts on a terminal
            or in a notebook (True always, False never); a callable gets ``(done, total, info)``.
        out: With a ``ray.data.Dataset`` as ``rows``, the folder the workers write the clean
            rows to as Parquet (required there; docs/scale.md). Ignored for local rows.

    Returns:
        ``(clean, report)``: the clean rows in the kind ``rows`` came in, and a
        :class:`ContaminationReport` with the first offenders and hits per field. For a Ray
        dataset ``clean`` is the path of the Parquet folder written (no row reaches the driver).

    Raises:
        ContaminationError: An eval source that cannot be read (named), or an embedder that
            raises or returns the wrong shape.
        ArgumentError: A bad option.

    Examples:
        >>> train = [{"task_id": "t1", "prompt": "What is the capital of France? Answer in one word please."},
        ...          {"task_id": "t2", "prompt": "what is the capital of France?  Answer in one word please."},
        ...          {"task_id": "t3", "prompt": "Name a prime number larger than ten."}]
        >>> clean, r = decontaminate(train, eval=[{"task_id": "e1", "prompt": train[0]["prompt"]}])
        >>> len(clean), r["n_exact"], r["n_near"]
        (1, 2, 0)
        >>> wrapped = [{"task_id": "t4", "prompt": "Answer briefly. Question: " + train[0]["prompt"]},
        ...            {"task_id": "t5", "prompt": "Is 9 odd?", "final_text": "Yes"}]
        >>> clean, r = decontaminate(wrapped, eval=[{"task_id": "e1", "prompt": train[0]["prompt"], "answer": "Yes"}],
        ...                          fields=("prompt", "final_text"))
        >>> [row["task_id"] for row in clean], r["n_near"], r["examples"][0]["coverage"]
        (['t5'], 1, 1.0)
    """
    if eval is not None and against is not None:
        raise ArgumentError("give the eval sources once, as eval= or against=, got both. Drop one of them.")
    sources = eval if eval is not None else against
    if sources is None:
        raise ArgumentError("eval must name the evaluation sources, got None. Pass eval=[...rows...] or a JSONL/Parquet path.")
    fields_t = check_strings("fields", fields)
    if not fields_t:
        raise ArgumentError("fields must name at least one row field, got (). Pass fields=('prompt',).")
    overlap = check_fraction("overlap", overlap, open_low=True)
    n = check_int("n", n)
    if near not in get_args(NearRule):
        raise ArgumentError(f"near must be one of {', '.join(get_args(NearRule))}, got {near!r}. Pass near='template' (the "
                            "default) or near='eval_cover' (the earlier rule: exact 8-grams, no slot check).",
                            argument="near", value=near)
    examples = check_int("examples", examples, minimum=0)
    check_progress(progress)
    if embedder is not None and not callable(embedder):
        raise ArgumentError(f"embedder must be a callable from a list of texts to vectors, got {embedder!r}.")
    if embedder is not None:
        similarity = check_fraction("similarity", similarity, open_low=True)
    rng = check_rng(seed)

    ev, described = _read_sources(sources)
    if is_ray_dataset(rows):
        if embedder is not None:
            raise ArgumentError("embedder must be left off for a Ray dataset, got an embedder. The semantic rule "
                                "embeds the eval prompts once and every row against them: run it on the clean "
                                "folder read into Polars (whileai.table.frame(folder)).", argument="embedder")
        return _decontaminate_ray(rows, ev, described, fields_t, n=n, overlap=overlap, near=near, examples=examples,
                                  out=out)
    with table.source(rows, allow_empty=True) as src:
        # the fields checked and the ids the task rule and the examples read; the whole rows only for the clean ones
        df = src.read([*fields_t, "scenario_id", "task_id", "rollout_index", "rollout_id"])
        if any(f not in df.columns for f in fields_t):
            check_fields(src.frame(), fields_t)  # names the text columns the rows do have
        return _decontaminate_local(src, df, ev, described, fields_t, n=n, overlap=overlap, near=near,
                                    examples=examples, progress=progress, embedder=embedder, similarity=similarity,
                                    rng=rng)


def _decontaminate_local(src: table.Source, df: pl.DataFrame, ev: pl.DataFrame, described: list[str],
                         fields_t: tuple[str, ...], *, n: int, overlap: float, near: str, examples: int,
                         progress: ProgressArg, embedder: Any, similarity: float,
                         rng: np.random.Generator) -> Decontaminated:
    """The rules on the decision columns ``df``; the clean rows taken whole from ``src``."""
    report = ContaminationReport(n_rows=df.height, n_eval_rows=ev.height, eval_sources=described, ngram=n, overlap=overlap,
                                 similarity=similarity if embedder is not None else None, fields=list(fields_t),
                                 near_rule=near, rule_sources=_rule_sources(near))
    index = eval_index(ev, n, near=near, overlap=overlap)
    describe_index(report, index)
    checked = check_rows(df, index, fields_t, n=n, overlap=overlap, examples=examples, progress=progress)
    report.rules_skipped.update(checked.skipped)
    report.by_field.update(checked.by_field)
    rule, field_of, match_of, score_of = checked.rule, checked.field_of, checked.match_of, checked.score_of

    # ---- rule 4: semantic --------------------------------------------------------------------------
    if embedder is None:
        report.notes.append(
            "the text rules catch exact and lightly edited copies of eval texts, not reworded ones; pass embedder= "
            "(any callable from texts to vectors) to also flag paraphrases."
        )
    elif "prompt" not in df.columns or "prompt" not in ev.columns:
        report.rules_skipped["semantic"] = "the semantic rule compares prompts, and one side has no prompt field"
    else:
        sem, sim, best = _semantic(df, ev, rule, embedder, similarity, report, rng)
        new = sem & (rule == 0)
        rule[new] = 4
        field_of[new] = fields_t.index("prompt") if "prompt" in fields_t else -1
        score_of[new] = sim[new]
        for i in np.flatnonzero(new)[: examples * 4].tolist():
            match_of[i] = best[i]
        report.by_field.setdefault("prompt", {"exact": 0, "near": 0, "semantic": 0})["semantic"] = int(sem.sum())
        report.notes.append(
            "a semantic flag means the two prompts read alike, not that they are the same task; it is a question to "
            "check, and the task-id rule decides first."
        )

    # ---- tally -----------------------------------------------------------------------------------
    checked = Checked(rule, field_of, match_of, score_of, {}, {})
    tally(report, rule_counts(rule), row_examples(df, checked, fields_t, examples))
    clean = src.take(pl.Series("_pos", np.flatnonzero(rule == 0), dtype=pl.Int64))
    return Decontaminated(like_input(src.rows, clean, report), report)


# ------------------------------------------------------------------------------------------
# the per-row kernel: one table of rows against the eval index (a whole table, or one Ray block)
# ------------------------------------------------------------------------------------------


class EvalIndex(NamedTuple):
    """The eval side, built once: ids for the task rule, texts and their n-gram and exact hashes."""

    ids: pl.Series
    """Distinct eval scenario and task ids."""
    n_rows: int
    """Eval rows read."""
    texts: pl.DataFrame
    """Distinct eval texts (``text``, ``task``), in the order first seen."""
    grams: pl.DataFrame
    """Distinct (n-gram hash ``h``, eval text ``e``) pairs."""
    exact: pl.Series
    """Whole-text hashes of the eval texts."""
    template: TemplateSide | None = None
    """The template-aware near rule's side (None under ``near="eval_cover"``)."""


class Checked(NamedTuple):
    """Per row: the first rule that caught it (0 clean, 1..4), its field, match and score."""

    rule: np.ndarray
    field_of: np.ndarray
    match_of: list[Any]
    score_of: np.ndarray
    by_field: dict[str, dict[str, int]]
    skipped: dict[str, str]


def eval_index(ev: pl.DataFrame, n: int, *, near: str = DECONTAM_NEAR, overlap: float = DECONTAM_OVERLAP) -> EvalIndex:
    """The eval sources (as :func:`_read_sources` reads them) as the index every row is checked against."""
    id_cols = [c for c in ("scenario_id", "task_id") if c in ev.columns]
    ids = (pl.concat([ev[c].cast(pl.String) for c in id_cols]).drop_nulls().unique() if id_cols
           else pl.Series([], dtype=pl.String))
    texts = _eval_texts(ev)
    grams, exact = _eval_side(texts["text"], n, texts["is_prompt"])
    side = template_side(texts, n, overlap) if near == "template" else None
    return EvalIndex(ids, ev.height, texts, grams, exact, side)


def describe_index(report: ContaminationReport, index: EvalIndex) -> None:
    """Eval-text counts on the report, and a note on what the template check could see."""
    report.n_eval_texts = len(index.texts)
    side = index.template
    if side is None:
        report.notes.append("near='eval_cover': a row is a near copy when exact 8-grams cover the share of an eval "
                            "text's words; distinct tasks written from one template can be dropped.")
        return
    report.n_eval_templated = int((side.n_slots > 0).sum())
    report.notes.append(
        f"{report.n_eval_templated} of {report.n_eval_texts} eval texts have slot words (words other eval tasks change "
        "in the same context); a row must reproduce those, but one, to be their near copy. An eval text whose "
        "template no other eval task shares has no slots, and any row covering it is a near copy."
    )


def check_fields(df: pl.DataFrame, fields: Sequence[str]) -> None:
    """Refuse a field the rows lack (a check that silently checks nothing would pass CI)."""
    missing = [f for f in fields if f not in df.columns]
    if df.height and missing:
        text_cols = [c for c, t in df.schema.items() if t == pl.String and c != "task_key"]
        raise ArgumentError(f"fields must name text fields the training rows have, got {missing[0]!r}, which they "
                            f"do not. Pick from {', '.join(text_cols) or 'none'}.", argument="fields", value=missing[0])


def check_rows(df: pl.DataFrame, index: EvalIndex, fields: Sequence[str], *, n: int, overlap: float, examples: int,
               progress: ProgressArg = None) -> Checked:
    """The task, exact and near-copy rules on ``df``'s rows (docs/guard.md, "Decontamination").

    Each row's verdict depends on that row and the eval index only, so a table split into parts
    gets the same verdicts part by part. Match texts are kept for the first ``examples * 4``
    rows each rule catches (enough for the report's first ``examples`` offenders).
    """
    rule = np.zeros(df.height, dtype=np.int8)  # 0 clean, 1..4 the rule that caught the row first
    field_of = np.full(df.height, -1, dtype=np.int16)
    match_of: list[Any] = [None] * df.height
    score_of = np.full(df.height, np.nan)
    skipped: dict[str, str] = {}
    by_field: dict[str, dict[str, int]] = {}

    # ---- rule 1: same task ---------------------------------------------------------------------
    eval_ids = index.ids
    row_id_cols = [c for c in ("scenario_id", "task_id") if c in df.columns]
    if len(eval_ids) == 0:
        skipped["same_task"] = f"0 of {index.n_rows} evaluation rows carried a scenario_id or task_id"
    elif not row_id_cols:
        skipped["same_task"] = "the training rows carry no scenario_id or task_id"
    elif df.height:
        hit = np.zeros(df.height, dtype=bool)
        for c in row_id_cols:
            hit |= df[c].cast(pl.String).is_in(eval_ids.implode()).fill_null(False).to_numpy()
        rule[hit] = 1
        for i in np.flatnonzero(hit)[: examples * 4].tolist():
            match_of[i] = next((df[c][i] for c in row_id_cols if df[c][i] is not None), None)

    # ---- text rules, per field -------------------------------------------------------------------
    eval_texts, ev_grams, ev_exact = index.texts, index.grams, index.exact
    for fi, field in enumerate(fields):
        if field not in df.columns:
            skipped[f"{field}"] = f"the training rows have no {field!r} field"
            continue
        counts = {"exact": 0, "near": 0, "semantic": 0}
        texts = df[field].cast(pl.String)
        # identical texts are checked once: distinct texts by their 64-bit hash, mapped back by it
        th = texts.hash()
        first = (th.is_first_distinct() & texts.is_not_null()).to_numpy()
        uniq = texts.filter(pl.Series(first))
        if index.template is not None:
            is_exact_u, cov_u, best_u, _ = _template_rules(uniq, index.template, ev_exact, n=n, overlap=overlap,
                                                           progress=progress)
        else:
            is_exact_u, cov_u, best_u = _text_rules(uniq, ev_grams, ev_exact, n=n, overlap=overlap,
                                                    progress=progress)
        idx_u = pl.DataFrame({"h": th.filter(pl.Series(first)), "u": np.arange(len(uniq), dtype=np.int64)})
        u_rows = (pl.DataFrame({"h": th}).join(idx_u, on="h", how="left", maintain_order="left")["u"]
                  .fill_null(-1).to_numpy().copy())
        u_rows[texts.is_null().to_numpy()] = -1
        has = u_rows >= 0
        ex_row = np.zeros(df.height, bool)
        ex_row[has] = is_exact_u[u_rows[has]]
        near_row = np.zeros(df.height, bool)
        near_row[has] = (best_u[u_rows[has]] >= 0) & (cov_u[u_rows[has]] >= overlap - 1e-12)
        near_row &= ~ex_row
        counts["exact"] = int(ex_row.sum())
        counts["near"] = int(near_row.sum())
        for code, mask in ((2, ex_row), (3, near_row)):
            new = mask & (rule == 0)
            rule[new] = code
            field_of[new] = fi
            for i in np.flatnonzero(new)[: examples * 4].tolist():
                u = int(u_rows[i])
                if code == 3:
                    score_of[i] = float(cov_u[u])
                    match_of[i] = eval_texts["text"][int(best_u[u])]
                else:
                    match_of[i] = None
        by_field[field] = counts
    return Checked(rule, field_of, match_of, score_of, by_field, skipped)


def rule_counts(rule: np.ndarray) -> dict[str, int]:
    """Rows caught by each rule (each row once, under the first rule that caught it), and all of them."""
    return {"n": int(rule.size), "n_same_task": int((rule == 1).sum()), "n_exact": int((rule == 2).sum()),
            "n_near": int((rule == 3).sum()), "n_semantic": int((rule == 4).sum())}


def row_examples(df: pl.DataFrame, checked: Checked, fields: Sequence[str], examples: int,
                 offset: int = 0) -> list[dict[str, Any]]:
    """The report's first ``examples`` offenders among ``df``'s rows, indexed from ``offset``."""
    rule, field_of, match_of, score_of = checked.rule, checked.field_of, checked.match_of, checked.score_of
    out: list[dict[str, Any]] = []
    for i in np.flatnonzero(rule > 0)[:examples].tolist():
        code = int(rule[i])
        field = fields[field_of[i]] if field_of[i] >= 0 else ("prompt" if code == 4 else "task")
        ex: dict[str, Any] = {"index": i + offset, "rule": _RULES[code - 1], "field": field}
        if code == 1:
            ex["task"] = match_of[i]
        else:
            ex["text"] = _clip(df[field][i] if field in df.columns else None)
            if match_of[i] is not None:
                ex["match"] = _clip(match_of[i])
            if code == 3:
                ex["coverage"] = round(float(score_of[i]), 4)
            if code == 4:
                ex["similarity"] = round(float(score_of[i]), 4)
        out.append(ex)
    return out


def tally(report: ContaminationReport, counts: Mapping[str, int], examples: list[dict[str, Any]]) -> None:
    """Fill the report's rule counts, rate, examples and warning from merged counts."""
    report.n_same_task = int(counts["n_same_task"])
    report.n_exact = int(counts["n_exact"])
    report.n_near = int(counts["n_near"])
    report.n_semantic = int(counts["n_semantic"])
    report.n_contaminated = report.n_same_task + report.n_exact + report.n_near + report.n_semantic
    report.n_kept = report.n_rows - report.n_contaminated
    report.contamination_rate = report.n_contaminated / report.n_rows if report.n_rows else 0.0
    report.examples.extend(ContaminatedRow.model_validate(ex) for ex in examples)
    if report.n_contaminated:
        report.warnings.append(
            f"{report.n_contaminated} training rows overlap the eval set ({report.contamination_rate:.1%}); they were "
            "dropped from the rows returned. Train on the clean rows so the eval measures what it claims."
        )


# ------------------------------------------------------------------------------------------
# on Ray Data: the eval index broadcast once, rows checked block by block (docs/scale.md)
# ------------------------------------------------------------------------------------------
# The eval side is built once on the driver and put in Ray's object store (ray.put). Each block
# of training rows goes through check_rows in a worker, which writes the block's clean rows as a
# Parquet part file and hands back a small summary (rule counts, hits per field, skipped rules,
# the block's first offenders); the driver adds them up in input order. A row's verdict depends
# on the row and the eval index only, so the counts and flagged rows are the local path's.

_RAY_COUNTS = ("n", "n_same_task", "n_exact", "n_near", "n_semantic")


def _check_block(batch: pa.Table, *, index: Any, fields: tuple[str, ...], n: int, overlap: float,
                 examples: int) -> tuple[pa.Table, dict[str, Any]]:
    """One block's clean rows and its summary (runs in a worker)."""
    import ray

    idx: EvalIndex = ray.get(index)
    df = table.frame(batch, allow_empty=True)
    check_fields(df, fields)
    checked = check_rows(df, idx, fields, n=n, overlap=overlap, examples=examples, progress=False)
    summary = {**rule_counts(checked.rule), "by_field": checked.by_field, "skipped": checked.skipped,
               "examples": row_examples(df, checked, fields, examples)}
    return table.to_arrow(df.filter(pl.Series(checked.rule == 0))), summary


def _decontaminate_ray(ds: Any, ev: pl.DataFrame, described: list[str], fields: Sequence[str], *, n: int,
                      overlap: float, near: str, examples: int, out: Any) -> Decontaminated:
    """``decontaminate`` on a Ray dataset: the clean rows written to ``out`` by the workers, and the report.

    ``ev`` is the eval rows as the local path reads them; the options are checked by the caller.
    Returns ``(path, report)``: the Parquet folder of clean rows and the report the local path
    would give on the same rows (its examples' ``index`` counts rows in the dataset's order).
    """
    from whileai.table.raydata import check_output_folder, require_ray, write_parts

    ray = require_ray("decontaminate on a Ray dataset")
    out_path = check_output_folder(out, "decontaminate")
    fields_t = tuple(fields)
    index = eval_index(ev, n, near=near, overlap=overlap)
    block = functools.partial(_check_block, index=ray.put(index), fields=fields_t, n=n, overlap=overlap,
                              examples=examples)

    def finish(summaries: list[dict[str, Any]]) -> ContaminationReport:
        counts = {k: sum(int(s[k]) for s in summaries) for k in _RAY_COUNTS}
        report = ContaminationReport(n_rows=counts["n"], n_eval_rows=ev.height, eval_sources=described, ngram=n,
                                     overlap=overlap, similarity=None, fields=list(fields_t),
                                     near_rule=near, rule_sources=_rule_sources(near))
        describe_index(report, index)
        if len(index.ids) == 0:  # said whatever the rows (the local path says it for no rows too)
            report.rules_skipped["same_task"] = f"0 of {ev.height} evaluation rows carried a scenario_id or task_id"
        for s in summaries:
            for rule, why in s["skipped"].items():
                report.rules_skipped.setdefault(rule, why)
            for field, hits in s["by_field"].items():
                into = report.by_field.setdefault(field, {"exact": 0, "near": 0, "semantic": 0})
                for k, v in hits.items():
                    into[k] = into.get(k, 0) + int(v)
        found = [{**ex, "index": int(ex["index"]) + s["offset"]} for s in summaries for ex in s["examples"]]
        report.notes.append(
            "the text rules catch exact and lightly edited copies of eval texts, not reworded ones; to also flag "
            "paraphrases, run decontaminate with embedder= on the clean folder read into Polars."
        )
        tally(report, counts, found[:examples])
        return report

    path, report = write_parts(ds, out_path, block, suffix="parquet", finish=finish)
    return Decontaminated(path, report)


# ------------------------------------------------------------------------------------------
# eval sources
# ------------------------------------------------------------------------------------------


def _is_path(x: Any) -> bool:
    return isinstance(x, (str, os.PathLike))


def _split_sources(sources: Any) -> list[Any]:
    if _is_path(sources) or isinstance(sources, (pl.DataFrame, pl.LazyFrame, pa.Table)) or hasattr(sources, "df"):
        return [sources]
    if isinstance(sources, Mapping):
        return [[sources]]
    if isinstance(sources, Sequence):
        items = list(sources)
        if not items:
            raise ArgumentError("eval must hold at least one source or row, got an empty list. Pass the eval rows.")
        if all(isinstance(x, Mapping) for x in items):
            return [items]
        return items
    raise ContaminationError(
        f"eval must be row dicts, a table, a JSONL/Parquet path or a list of those, got {type(sources).__name__}. "
        "Pass one of those.", source=repr(sources)[:80],
    )


def _describe(src: Any, i: int) -> str:
    if _is_path(src):
        return f"path {str(src)!r}"
    if isinstance(src, Sequence) and not isinstance(src, str):
        return f"source {i} (a list of {len(src)} rows)"
    return f"source {i} (a {type(src).__name__})"


def _read_sources(sources: Any) -> tuple[pl.DataFrame, list[str]]:
    frames: list[pl.DataFrame] = []
    described: list[str] = []
    wanted = ("scenario_id", "task_id", *EVAL_TEXT_COLUMNS)
    for i, src in enumerate(_split_sources(sources)):
        desc = _describe(src, i)
        if isinstance(src, Mapping):
            src = [src]
        try:
            f = table.frame(src)
        except WaiError as exc:
            raise ContaminationError(
                f"eval {desc} cannot be read: {exc} Pass a list of row dicts, a table, or a JSONL/Parquet path.",
                source=desc,
            ) from exc
        except Exception as exc:  # anything a reader raised on a source we cannot read
            raise ContaminationError(
                f"eval {desc} cannot be read ({type(exc).__name__}: {exc}). "
                "Pass a list of row dicts, a table, or a JSONL/Parquet path.", source=desc,
            ) from exc
        frames.append(f.select([_as_text(c, f.schema[c]) if c in f.columns else pl.lit(None, pl.String).alias(c)
                                for c in wanted]))
        described.append(desc)
    return pl.concat(frames), described


def _as_text(name: str, dtype: pl.DataType) -> pl.Expr:
    """Column ``name`` as one text a row.

    A list (inspect_ai's ``target``: the accepted answers) is joined by newlines, a struct is its
    JSON, anything else is cast.
    """
    if isinstance(dtype, (pl.List, pl.Array)):
        return pl.col(name).cast(pl.List(pl.String)).list.join("\n").alias(name)
    if isinstance(dtype, pl.Struct):
        return pl.col(name).struct.json_encode().alias(name)
    return pl.col(name).cast(pl.String)


def _eval_texts(ev: pl.DataFrame) -> pl.DataFrame:
    """Every eval text once, with its task and whether it is a prompt.

    ``prompt`` comes first, so a text that is both an eval prompt and an answer counts as the prompt.
    """
    parts = [ev.select(pl.col(c).alias("text"), pl.coalesce("scenario_id", "task_id").alias("task"),
                       pl.lit(c == "prompt").alias("is_prompt"))
             for c in EVAL_TEXT_COLUMNS]
    return pl.concat(parts).drop_nulls("text").filter(pl.col("text").str.strip_chars() != "").unique(
        "text", keep="first", maintain_order=True)


def _clip(text: Any, limit: int = 200) -> Any:
    return text if not isinstance(text, str) or len(text) <= limit else text[: limit - 3] + "..."


# ------------------------------------------------------------------------------------------
# near copies: n-gram coverage from joined hashes
# ------------------------------------------------------------------------------------------


def _eval_side(texts: pl.Series, n: int, is_prompt: pl.Series | None = None) -> tuple[pl.DataFrame, pl.Series]:
    """The eval texts' n-grams and the whole-text hashes the exact rule matches.

    Returns every (n-gram hash ``h``, eval text ``e``, word position ``pos``) and the whole-text
    hashes of the eval prompts and of the other eval texts (answers, references) of at least
    ``DECONTAM_EXACT_MIN_WORDS`` words: a short eval question copied whole is contamination, a
    short answer ("Yes", "42") shared with a training reply is not.
    """
    toks = tokenize(texts)
    start, h = ngram_hashes(toks, n)
    e = toks.row[start]
    grams = pl.DataFrame({"h": h, "e": e.astype(np.int64), "pos": (start - toks.offsets[e]).astype(np.int64)})
    long_enough = pl.Series(np.diff(toks.offsets) >= DECONTAM_EXACT_MIN_WORDS)
    if is_prompt is not None:
        long_enough = long_enough | is_prompt
    return grams, pl.Series("x", text_hashes(toks)).filter(long_enough).unique()


def _spans(same: np.ndarray, p: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Words covered by the n-gram spans of each group of sorted positions.

    ``same[i]`` says position i + 1 is in the group of position i (rows sorted by group, then
    position). Returns the index of each group's first position and its covered word count: a
    span adds n words, or the gap to the next start when spans overlap (nothing for a repeat).
    """
    contrib = np.full(p.size, n, dtype=np.int64)
    contrib[:-1] = np.where(same, np.minimum(p[1:] - p[:-1], n), n)
    starts = np.flatnonzero(np.r_[True, ~same])
    return starts, np.add.reduceat(contrib, starts)


def _pair_cover(pairs: pl.DataFrame, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per (row text u, eval text e) pair of matched eval positions (u, e, pos): u, e, eval words covered."""
    pairs = pairs.sort(["u", "e", "pos"])
    u = pairs["u"].to_numpy()
    e = pairs["e"].to_numpy()
    p = pairs["pos"].to_numpy()
    if u.size == 0:
        return u, e, np.zeros(0, np.int64)
    starts, covered = _spans((u[1:] == u[:-1]) & (e[1:] == e[:-1]), p, n)
    return u[starts], e[starts], covered


class _EvalFan(NamedTuple):
    """The eval n-grams as the near rule searches them (built per call: it follows ``DECONTAM_RARE_FAN``)."""

    fan: pl.DataFrame
    """Distinct eval texts holding each n-gram hash (``h``, ``fan``)."""
    frequent: pl.DataFrame
    """The (h, e, pos) n-grams held by more than ``DECONTAM_RARE_FAN`` eval texts (template sentences)."""
    length: np.ndarray
    """Words per eval text (0 under n words: no n-gram, no coverage)."""
    cover_frequent: np.ndarray
    """Words of each eval text its frequent n-grams cover: the most a row covers without a rare one."""


def _eval_fan(ev: pl.DataFrame, n: int) -> _EvalFan:
    """Fan, frequent n-grams, length and frequent coverage of the eval texts (``ev`` as :func:`_eval_side` gives it)."""
    fan = ev.group_by("h").agg(pl.col("e").n_unique().alias("fan"))
    n_e = int(ev["e"].to_numpy().max()) + 1 if ev.height else 0
    last = ev.group_by("e").agg(pl.col("pos").max())
    length = np.zeros(n_e, dtype=np.int64)
    length[last["e"].to_numpy()] = last["pos"].to_numpy() + n  # the last n-gram starts n words before the end
    frequent = (ev.join(fan.filter(pl.col("fan") > DECONTAM_RARE_FAN).select("h"), on="h", how="semi")
                .sort(["e", "pos"]))
    cover = np.zeros(n_e, dtype=np.int64)
    if frequent.height:
        fe = frequent["e"].to_numpy()
        s, c = _spans(fe[1:] == fe[:-1], frequent["pos"].to_numpy(), n)
        cover[fe[s]] = c
    return _EvalFan(fan, frequent, length, cover)


def _frequent_profiles(side: _EvalFan, reachable: np.ndarray) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The frequent n-grams of the eval texts a row can reach through frequent n-grams alone, one per profile.

    Eval texts of one length holding the same frequent n-grams at the same positions are covered
    alike by any row through them, so each such profile is kept once, under its first eval text
    (the one a tie names). Returns the (h, e, pos) n-grams of those representatives and their
    per-n-gram fan.
    """
    evf = side.frequent.filter(pl.Series(reachable[side.frequent["e"].to_numpy()]))
    sets = evf.group_by("e", maintain_order=True).agg("pos", "h")
    sets = sets.with_columns(pl.Series("len", side.length[sets["e"].to_numpy()]))
    reps = sets.group_by(["pos", "h", "len"]).agg(pl.col("e").min()).explode(["pos", "h"]).select("h", "e", "pos")
    return reps, reps.group_by("h").len("fan")


def _frequent_only(freq: pl.DataFrame, reps: pl.DataFrame, fan: pl.DataFrame, length: np.ndarray,
                   n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Best pair per row from its frequent n-grams alone: (u, e, eval words covered), one per row.

    ``reps`` and ``fan`` are :func:`_frequent_profiles`; ``freq`` the rows' (u, h) frequent
    n-grams. Rows are grouped by their set of frequent n-grams (keyed by a 64-bit hash of the set,
    as the n-grams themselves are); each distinct set is joined to
    the eval profiles once (under the pair budget) and its best eval text (largest share of the
    eval text covered, then the first eval text) is given to every row that has it.
    """
    fr = freq.unique().sort(["u", "h"])
    fu = fr["u"].to_numpy()
    fh = fr["h"].to_numpy()
    starts = np.flatnonzero(np.r_[True, fu[1:] != fu[:-1]])
    with np.errstate(over="ignore"):  # a set's key: the wrapping sum of its (well-mixed) hashes, and its size
        key = combine(np.add.reduceat(fh, starts), np.diff(np.r_[starts, fu.size]).astype(np.uint64))
    _, first, sid = np.unique(key, return_index=True, return_inverse=True)
    sid = sid.reshape(-1).astype(np.int64)
    sid_of_u = np.full(int(fu[-1]) + 1, -1, dtype=np.int64)
    sid_of_u[fu[starts[first]]] = np.arange(first.size, dtype=np.int64)  # each set's first row speaks for it
    gs = sid_of_u[fu]
    grams = pl.DataFrame({"sid": gs, "h": fh}).filter(pl.Series(gs >= 0))
    per_sid = grams.join(fan, on="h", how="inner").group_by("sid").agg(pl.col("fan").sum()).sort("sid")
    part = (per_sid["fan"].cum_sum() // DECONTAM_PAIR_BUDGET).alias("part")
    sid_best = np.full(first.size, -1, dtype=np.int64)
    sid_cov = np.zeros(first.size, dtype=np.int64)
    for sub in grams.join(per_sid.select("sid", part), on="sid").partition_by("part", include_key=False):
        pairs = sub.select(pl.col("sid").alias("u"), "h").join(reps, on="h", how="inner").select("u", "e", "pos")
        su, se, sc = _pair_cover(pairs, n)
        if su.size == 0:
            continue
        order = np.lexsort((se, -(sc / length[se]), su))
        first = order[np.flatnonzero(np.r_[True, su[order][1:] != su[order][:-1]])]
        sid_best[su[first]] = se[first]
        sid_cov[su[first]] = sc[first]
    u = fu[starts]
    keep = sid_best[sid] >= 0
    return u[keep], sid_best[sid][keep], sid_cov[sid][keep]


def _text_rules(texts: pl.Series, ev: pl.DataFrame, ev_exact: pl.Series, *, n: int, overlap: float | None = None,
                progress: ProgressArg = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per text: exact copy, the largest share of one eval text it covers, and that eval text.

    Exact is the same word sequence as an eval text of at least ``DECONTAM_EXACT_MIN_WORDS``
    words. Coverage is measured on the eval text (Llama 3, Dubey et al. 2024 section 5.1.4; Tulu
    3, Lambert et al. 2024): the share of the eval text's words inside its n-grams that also
    occur in the row text, wherever they sit in the row; 0 for an eval text under n words. Each
    text is tokenised once, in chunks.

    Work is linear in words, not rows x eval texts. The n-grams shared by more than
    ``DECONTAM_RARE_FAN`` eval texts (template sentences) are "frequent"; a row's pairs are
    first found from its rare n-grams alone. The eval words a pair can cover are at most those
    its rare shared n-grams cover plus those all the eval text's frequent n-grams cover, so a
    pair whose bound falls short of ``overlap`` cannot be a near copy and is never verified; the
    rest are verified with every shared n-gram. Pairs sharing only frequent n-grams matter only
    for eval texts whose frequent n-grams alone could reach ``overlap``; those are joined by
    distinct sets of frequent n-grams. With ``overlap`` given, the coverage (and eval text) is
    exact for every text whose best coverage reaches it, and a lower bound below it; with None,
    exact for every text.
    """
    m = len(texts)
    exact = np.zeros(m, dtype=bool)
    cov = np.zeros(m)
    best = np.full(m, -1, dtype=np.int64)
    if m == 0:
        return exact, cov, best
    need = 0.0 if overlap is None else float(overlap)
    side = _eval_fan(ev, n)
    length = side.length
    need_words = need * length - 1e-9 * np.maximum(length, 1)  # per eval text
    reachable = (side.cover_frequent > 0) & (side.cover_frequent >= need_words)
    profiles: tuple[pl.DataFrame, pl.DataFrame] | None = None  # built on first need
    exact_set = ev_exact.implode()
    step = max(1, min(m, CHUNK_ROWS))
    bar = Tracker(m, desc="decontaminate", unit="texts", progress=progress, min_total=PROGRESS_MIN_ROWS)
    for lo in range(0, m, step):  # bounded memory: texts in chunks
        bar.update(min(step, m - lo))
        toks = tokenize(texts.slice(lo, step))
        exact[lo:lo + step] = pl.Series(text_hashes(toks)).is_in(exact_set).to_numpy()
        start, h = ngram_hashes(toks, n)
        if h.size == 0 or ev.height == 0:
            continue
        g = pl.DataFrame({"u": toks.row[start], "h": h}).join(side.fan, on="h", how="inner")
        if g.height == 0:
            continue
        freq = g.filter(pl.col("fan") > DECONTAM_RARE_FAN).select("u", "h")
        found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        # rare n-grams: candidate pairs, bounded, then verified with the frequent ones
        rp = (g.filter(pl.col("fan") <= DECONTAM_RARE_FAN).select("u", "h").join(ev, on="h", how="inner")
              .select("u", "e", "pos"))
        ru, re_, rc = _pair_cover(rp, n)
        if ru.size:
            cf = side.cover_frequent[re_]
            ok = np.minimum(rc + cf, length[re_]) >= need_words[re_]
            sure = ok & (cf == 0)  # no frequent n-gram in the eval text: the rare ones are all of it
            found.append((ru[sure], re_[sure], rc[sure]))
            check = ok & (cf > 0)
            if check.any():
                cand = pl.DataFrame({"u": ru[check], "e": re_[check]})
                extra = (cand.join(freq, on="u", how="inner").join(side.frequent, on=["h", "e"], how="inner")
                         .select("u", "e", "pos"))
                found.append(_pair_cover(pl.concat([rp.join(cand, on=["u", "e"], how="semi"), extra]), n))
        # pairs that share only frequent n-grams: they matter only for eval texts whose frequent
        # n-grams alone could reach overlap; rows with the same set of frequent n-grams have the
        # same best such pair, so each distinct set is joined once
        if freq.height and reachable.any():
            profiles = profiles or _frequent_profiles(side, reachable)
            fr = freq.join(profiles[1].select("h"), on="h", how="semi")
            if fr.height:
                found.append(_frequent_only(fr, *profiles, length, n))
        if not found:
            continue
        uu = np.concatenate([f[0] for f in found])
        ee = np.concatenate([f[1] for f in found])
        covered = np.concatenate([f[2] for f in found])
        if uu.size == 0:
            continue
        frac = covered / length[ee]
        order = np.lexsort((ee, -frac, uu))  # best eval text per row text; ties: the first eval text
        first = np.flatnonzero(np.r_[True, uu[order][1:] != uu[order][:-1]])
        pick = order[first]
        cov[lo + uu[pick]] = frac[pick]
        best[lo + uu[pick]] = ee[pick]
    bar.close()
    return exact, cov, best


# ------------------------------------------------------------------------------------------
# semantic: embedder cosine across tasks
# ------------------------------------------------------------------------------------------


def _embed(embedder: Callable[[list[str]], Any], texts: list[str], what: str, dim: int | None) -> np.ndarray:
    out = []
    for lo in range(0, len(texts), EMBED_BATCH):
        batch = texts[lo:lo + EMBED_BATCH]
        try:
            vecs = embedder(batch)
        except Exception as exc:
            raise ContaminationError(
                f"embedder raised {type(exc).__name__}: {exc} on {len(batch)} {what}. "
                "Check it runs on a list of strings and returns one vector per string.",
            ) from exc
        try:
            arr = np.asarray(vecs, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise ContaminationError(
                f"embedder must return one vector per text, a ({len(batch)}, d) array, got {type(vecs).__name__} "
                f"that is not a numeric array ({exc}). Return a list of equal-length float lists or a 2-D array.",
            ) from exc
        want_d = dim if dim is not None else (arr.shape[1] if arr.ndim == 2 else "d")
        if arr.ndim != 2 or arr.shape[0] != len(batch) or (dim is not None and arr.shape[1] != dim) or arr.shape[1] == 0:
            raise ContaminationError(
                f"embedder must return one vector per text, shape ({len(batch)}, {want_d}) for {len(batch)} {what}, "
                f"got shape {arr.shape}. Return a 2-D array with one row per input text.",
                value=tuple(arr.shape),
            )
        if not np.isfinite(arr).all():
            raise ContaminationError(f"embedder returned NaN or infinite values for {what}. Fix the embedder.")
        dim = arr.shape[1]
        out.append(arr)
    mat = np.concatenate(out) if out else np.zeros((0, dim or 1), np.float32)
    norm = np.linalg.norm(mat, axis=1, keepdims=True)
    return mat / np.where(norm > 0, norm, 1.0)


def _semantic(df: pl.DataFrame, ev: pl.DataFrame, rule: np.ndarray, embedder: Callable[[list[str]], Any],
              similarity: float, report: ContaminationReport, rng: np.random.Generator
              ) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    sem = np.zeros(df.height, bool)
    sim = np.full(df.height, np.nan)
    best: list[Any] = [None] * df.height
    evp = ev.select("prompt", pl.coalesce("scenario_id", "task_id").alias("task")).drop_nulls("prompt").unique(
        "prompt", keep="first", maintain_order=True)
    if evp.height == 0:
        report.rules_skipped["semantic"] = "no eval row carries a prompt"
        return sem, sim, best
    E = _embed(embedder, evp["prompt"].to_list(), "eval prompts", None)
    ev_task = evp["task"].to_numpy().astype(object)
    # how alike distinct eval tasks read to this embedder
    has_task = np.array([t is not None for t in ev_task])
    if has_task.sum() >= 2:
        idx = np.flatnonzero(has_task)
        if idx.size > DECONTAM_CROSS_TASK_SAMPLE:
            idx = np.sort(rng.choice(idx, DECONTAM_CROSS_TASK_SAMPLE, replace=False))
        S = E[idx] @ E[idx].T
        ti = ev_task[idx]
        iu, ju = np.triu_indices(idx.size, k=1)
        cross = ti[iu] != ti[ju]
        if cross.any():
            p99 = float(np.quantile(S[iu, ju][cross], DECONTAM_CROSS_TASK_QUANTILE))
            report.eval_cross_task_p99 = p99
            report.notes.append(
                f"distinct eval tasks reach cosine {p99:.3f} at the 99th percentile with this embedder "
                f"(over {int(cross.sum())} pairs with different task ids)."
            )
            if similarity < p99:
                report.notes.append(
                    f"similarity={similarity:.2f} sits below that percentile, so the semantic rule will flag tasks that "
                    "merely share a domain; raise it above the percentile for this embedder."
                )
    else:
        report.notes.append("the eval rows carry no task ids, so how alike distinct eval tasks read could not be measured.")
    todo = np.flatnonzero((rule == 0) & df["prompt"].is_not_null().to_numpy())
    if todo.size == 0:
        return sem, sim, best
    prompts = df["prompt"].gather(todo)
    uniq = prompts.unique(maintain_order=True)
    R = _embed(embedder, uniq.to_list(), "training prompts", E.shape[1])
    id_cols = [c for c in ("scenario_id", "task_id") if c in df.columns]
    row_task = (df.select(pl.coalesce(id_cols).cast(pl.String))[:, 0].gather(todo).to_numpy().astype(object)
                if id_cols else np.full(todo.size, None, dtype=object))
    u_of = pl.DataFrame({"t": prompts}).join(pl.DataFrame({"t": uniq, "u": np.arange(len(uniq))}), on="t",
                                             how="left", maintain_order="left")["u"].to_numpy()
    ev_prompts = evp["prompt"]
    for lo in range(0, todo.size, _SIM_BLOCK):  # blocks of rows against every eval prompt
        rows_b = np.arange(lo, min(lo + _SIM_BLOCK, todo.size))
        S = R[u_of[rows_b]] @ E.T
        same = (row_task[rows_b][:, None] == ev_task[None, :]) & (row_task[rows_b][:, None] != None)  # noqa: E711
        S = np.where(same, -np.inf, S)
        j = S.argmax(axis=1)
        s = S[np.arange(rows_b.size), j]
        ii = todo[rows_b]
        sim[ii] = s
        hit = s >= similarity - 1e-9
        sem[ii[hit]] = True
        for k in np.flatnonzero(hit)[:50].tolist():
            best[int(ii[k])] = ev_prompts[int(j[k])]
    return sem, sim, best


# ------------------------------------------------------------------------------------------
# near copies, template-aware: one-word skip 8-grams, and the eval text's slot words reproduced
# ------------------------------------------------------------------------------------------


class TemplateSide(NamedTuple):
    """The eval texts as the template-aware near rule searches them (built once per call)."""

    variants: pl.DataFrame
    """Every masked n-gram of every eval text: hash ``h``, eval text ``e``, flat start ``s``, masked position ``j``."""
    probes: pl.DataFrame
    """Distinct (h, e, slot): masked n-grams a row must share with eval text ``e`` to be its near copy, two
    sets (``slot`` false: for the word cover, true: for the slot weight; see :func:`template_side`)."""
    slot_ok: np.ndarray
    """Per eval text: the slot check can fail (its slot weight exceeds the allowance), so it has slot probes."""
    is_slot: np.ndarray
    """Per flat eval word: a slot word (another eval task puts a different word in the same context)."""
    offsets: np.ndarray
    """Start of each eval text among the flat words."""
    length: np.ndarray
    """Words per eval text."""
    n_slots: np.ndarray
    """Slot words per eval text."""
    weight: np.ndarray
    """Per flat eval word: its weight as a slot, ``ln(eval texts / eval texts holding the word)`` (0 off slots)."""
    slot_weight: np.ndarray
    """Slot weight per eval text."""
    allowed: np.ndarray
    """Slot weight per eval text a row may fail to reproduce and still be its near copy (:func:`slot_allowance`)."""


def slot_allowance(heaviest: np.ndarray, total: np.ndarray, overlap: float) -> np.ndarray:
    """Slot weight of an eval text a near copy may fail to reproduce: its heaviest slot word, or ``1 - overlap`` of all.

    Slot words weigh their inverse document frequency over the eval texts (Sparck Jones 1972), so
    an id or a name, which identify the task, weigh most and a template word that only looks like
    a slot (another template puts a different word beside it) weighs little. A one-word edit
    misses at most the heaviest slot and is still a copy; another task of the template misses
    its ids, names and amounts together and is not (measured: tests/guard/test_decontam_rates.py).
    """
    return np.maximum(heaviest, (1.0 - overlap) * total)


def template_side(texts: pl.DataFrame, n: int, overlap: float = DECONTAM_OVERLAP) -> TemplateSide:
    """Masked n-grams of the eval texts, their slot words and probes (``texts`` as :func:`_eval_texts` gives it).

    A word is a slot of its eval text when, with it masked, one of its ``DECONTAM_SLOT_CONTEXT``-word
    contexts also occurs in an eval text of another task with a different word there: ids,
    amounts, names, the values a template's tasks differ in. Words of the template are not.

    Probes: a near copy covers ``ceil(overlap * length)`` words, so at least one of any
    ``length - ceil(overlap * length) + 1`` words; and it misses at most ``allowed`` slot weight,
    so it covers one of any slots weighing more. Each set is taken from the words whose covering
    masked n-grams the fewest eval texts hold; a pair that does not share a masked n-gram of each
    set cannot pass, so searching the probes alone is exact, and rare words (ids) keep it small.
    """
    toks = tokenize(texts["text"])
    start, j, h = masked_ngram_hashes(toks, n)
    e = toks.row[start]
    task = texts.select(pl.coalesce(pl.col("task").cast(pl.String),
                                    pl.lit("\x00text ") + pl.int_range(pl.len()).cast(pl.String)).hash())[:, 0]
    task_of = task.to_numpy()
    v = pl.DataFrame({"h": h, "e": e, "s": start, "j": j})
    # slots: masked DECONTAM_SLOT_CONTEXT-grams (the word and its neighbours) whose masked word varies across tasks.
    # A holder (task t, word w) of a context is a slot when another (t', w') holds it with t' != t and w' != w:
    # over the distinct (h, t, w), that count is N - N_t - N_w + 1 (inclusion-exclusion)
    cs_, cj, ch = masked_ngram_hashes(toks, DECONTAM_SLOT_CONTEXT)
    ctx = pl.DataFrame({"h": ch, "p": cs_ + cj, "w": toks.hash[cs_ + cj], "t": task_of[toks.row[cs_]]})
    trip = ctx.select("h", "t", "w").unique().with_columns(
        pl.len().over("h").alias("n_h"), pl.len().over("h", "t").alias("n_t"), pl.len().over("h", "w").alias("n_w"))
    varying = trip.filter(pl.col("n_h") - pl.col("n_t") - pl.col("n_w") + 1 > 0).select("h", "t", "w")
    is_slot = np.zeros(toks.hash.size, dtype=bool)
    if varying.height:
        is_slot[ctx.join(varying, on=["h", "t", "w"], how="semi")["p"].to_numpy()] = True
    n_e = len(texts)
    length = np.diff(toks.offsets)
    n_slots = np.bincount(toks.row[is_slot], minlength=n_e).astype(np.int64)
    held = pl.DataFrame({"w": toks.hash, "e": toks.row}).unique().group_by("w").len("df")
    df_w = pl.DataFrame({"w": toks.hash}).join(held, on="w", how="left", maintain_order="left")["df"].to_numpy()
    weight = np.where(is_slot, np.log(max(n_e, 1) / np.maximum(df_w, 1)), 0.0) if toks.hash.size else np.zeros(0)
    total = np.bincount(toks.row, weights=weight, minlength=n_e)
    heaviest = np.zeros(n_e)
    np.maximum.at(heaviest, toks.row, weight)
    allowed = slot_allowance(heaviest, total, overlap)
    slot_ok = total > allowed + _TOL * np.maximum(total, 1.0)  # else the slot check cannot fail
    return TemplateSide(v, _probes(v, weight, length, allowed, slot_ok, total, n, overlap), slot_ok, is_slot,
                        toks.offsets, length, n_slots, weight, total, allowed)


def _probes(v: pl.DataFrame, weight: np.ndarray, length: np.ndarray, allowed: np.ndarray, slot_ok: np.ndarray,
            total: np.ndarray, n: int, overlap: float) -> pl.DataFrame:
    """Each eval text's probe n-grams (:func:`template_side`): distinct (h, e)."""
    if v.height == 0:
        return pl.DataFrame({"h": [], "e": [], "slot": []}, schema={"h": pl.UInt64, "e": pl.Int64, "slot": pl.Boolean})
    fan = v.group_by("h").agg(pl.col("e").n_unique().alias("fan"))
    k = np.arange(n, dtype=np.int64)
    s, j = v["s"].to_numpy(), v["j"].to_numpy()
    keep = k[None, :] != j[:, None]
    rep = np.repeat(np.arange(v.height), n - 1)
    cover = pl.DataFrame({"h": v["h"].to_numpy()[rep], "e": v["e"].to_numpy()[rep],
                          "p": (s[:, None] + k[None, :])[keep]}).join(fan, on="h")
    cost = cover.group_by("e", "p").agg(pl.col("fan").sum())
    cost = cost.with_columns(pl.Series("wt", weight[cost["p"].to_numpy()]))
    need_words = length - np.ceil(overlap * length - 1e-9).astype(np.int64) + 1  # any this many words hold a covered one
    # slots in order of fan until their weight passes the allowance: a near copy reproduces one of them
    ranked = cost.sort("e", "fan", "p").with_columns(
        pl.int_range(pl.len()).over("e").alias("rank_all"),
        (pl.col("wt").cum_sum().over("e") - pl.col("wt")).alias("before"))
    e_ = ranked["e"].to_numpy()
    by_words = ranked["rank_all"].to_numpy() < need_words[e_]
    before, wt = ranked["before"].to_numpy(), ranked["wt"].to_numpy()
    by_slots = slot_ok[e_] & (wt > 0) & (before <= allowed[e_] + _TOL * np.maximum(total[e_], 1.0))
    words = ranked.filter(pl.Series(by_words)).select("e", "p", pl.lit(False).alias("slot"))
    slots = ranked.filter(pl.Series(by_slots)).select("e", "p", pl.lit(True).alias("slot"))
    return cover.join(pl.concat([words, slots]), on=["e", "p"]).select("h", "e", "slot").unique()


def _covered(m: pl.DataFrame, length: np.ndarray, weight: np.ndarray, offsets: np.ndarray,
             n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per (u, e) pair of matched masked n-grams (u, e, s, j): u, e, eval words covered, slot weight covered.

    A word p is covered when a matched n-gram holds it unmasked. Per pair, over its words: A(p)
    counts the matched windows (starts s) over p, B(p) those matched under a single mask, at p; p
    is covered when A(p) > B(p) (a window matched under two masks holds every word unmasked).
    Flat arrays over each pair's words, no per-pair loop.
    """
    w = m.group_by("u", "e", "s").agg(pl.col("j").n_unique().alias("nj"), pl.col("j").first()).sort("u", "e", "s")
    u, e, s = w["u"].to_numpy(), w["e"].to_numpy(), w["s"].to_numpy()
    if u.size == 0:
        z = np.zeros(0, np.int64)
        return z, z, z, np.zeros(0)
    first = np.flatnonzero(np.r_[True, (u[1:] != u[:-1]) | (e[1:] != e[:-1])])
    pair = np.cumsum(np.r_[False, (u[1:] != u[:-1]) | (e[1:] != e[:-1])])
    pu, pe = u[first], e[first]
    plen = length[pe]
    base = np.r_[0, np.cumsum(plen)]
    at = base[pair] + (s - offsets[e])  # the window's first word in the pairs' flat word grid
    a = np.zeros(base[-1] + 1, np.int64)
    np.add.at(a, at, 1)
    np.add.at(a, at + n, -1)
    a = np.cumsum(a)[:-1]
    b = np.zeros(base[-1], np.int64)
    single = w["nj"].to_numpy() == 1
    np.add.at(b, at[single] + w["j"].to_numpy()[single], 1)
    cov = a > b
    owner = np.repeat(np.arange(pu.size), plen)
    word = offsets[np.repeat(pe, plen)] + (np.arange(base[-1]) - base[owner])  # flat eval word of each grid cell
    covered = np.bincount(owner, weights=cov, minlength=pu.size).astype(np.int64)
    slot = np.bincount(owner, weights=cov * weight[word], minlength=pu.size)
    return pu, pe, covered, slot


def _template_rules(texts: pl.Series, side: TemplateSide, ev_exact: pl.Series, *, n: int, overlap: float,
                    progress: ProgressArg = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per text: exact copy, coverage of its best near-copied eval text, that text, its slot share.

    The template-aware near rule (docs/guard.md, "Decontamination"): a row text is a near copy of
    an eval text when the row's one-word-skip n-grams cover at least ``overlap`` of the eval
    text's words and the row reproduces the eval text's slot words but at most
    :func:`slot_allowance` of them. Pairs are found from the eval texts' probe n-grams (exact:
    a pair sharing none cannot pass, :func:`template_side`), then verified with every masked
    n-gram the pair shares, rows in parts under ``DECONTAM_PAIR_BUDGET`` matched n-grams. Coverage is
    0 (best -1) for texts that are no near copy; the slot share is NaN for an eval text without slots.
    """
    m = len(texts)
    exact = np.zeros(m, dtype=bool)
    cov = np.zeros(m)
    best = np.full(m, -1, dtype=np.int64)
    slot_share = np.full(m, np.nan)
    if m == 0:
        return exact, cov, best, slot_share
    exact_set = ev_exact.implode()
    length = side.length
    need = overlap * length - 1e-9 * np.maximum(length, 1)
    fan = side.variants.group_by("h").len("fan")  # eval (text, window) pairs holding each masked n-gram
    step = max(1, min(m, CHUNK_ROWS // 4))  # a text of w words gives 8w masked n-grams
    bar = Tracker(m, desc="decontaminate", unit="texts", progress=progress, min_total=PROGRESS_MIN_ROWS)
    for lo in range(0, m, step):
        bar.update(min(step, m - lo))
        toks = tokenize(texts.slice(lo, step))
        exact[lo:lo + step] = pl.Series(text_hashes(toks)).is_in(exact_set).to_numpy()
        start, _, h = masked_ngram_hashes(toks, n)
        if h.size == 0 or side.probes.height == 0:
            continue
        # the row's masked n-grams some eval text holds (most hold none: one hash join, then small frames)
        shared = pl.DataFrame({"u": toks.row[start], "h": h}).join(fan, on="h", how="inner").unique(["u", "h"])
        hit = shared.join(side.probes, on="h", how="inner").select("u", "e", "slot").unique()
        cand = hit.filter(~pl.col("slot")).select("u", "e")
        cand = cand.filter(~pl.Series(side.slot_ok[cand["e"].to_numpy()])).vstack(  # no slot check, or a slot probe too
            cand.join(hit.filter(pl.col("slot")).select("u", "e"), on=["u", "e"], how="semi")).sort("u", "e")
        if cand.height == 0:
            continue
        # verify in parts of rows under the pair budget: every masked n-gram the row shares with a candidate
        shared = shared.join(cand.select("u").unique(), on="u", how="semi")
        load = shared.group_by("u").agg(pl.col("fan").sum()).sort("u")
        # a matched masked n-gram row (u, h, e, s, j) is about 40 bytes, 2.5 times a pair of the exact rule
        part_of = pl.DataFrame({"u": load["u"], "part": load["fan"].cum_sum() // (DECONTAM_PAIR_BUDGET // 4)})
        found = []
        for sub in shared.join(part_of, on="u").partition_by("part", include_key=False):
            matched = (sub.select("u", "h").join(side.variants, on="h", how="inner")
                       .join(cand, on=["u", "e"], how="semi").select("u", "e", "s", "j"))
            found.append(_covered(matched, side.length, side.weight, side.offsets, n))
        pu, pe, c, sl = (np.concatenate([f[i] for f in found]) for i in range(4))
        total = side.slot_weight[pe]
        ok = (c >= need[pe]) & (total - sl <= side.allowed[pe] + _TOL * np.maximum(total, 1.0))
        if not ok.any():
            continue
        pu, pe, c, sl = pu[ok], pe[ok], c[ok], sl[ok]
        frac = c / length[pe]
        order = np.lexsort((pe, -frac, pu))
        pick = order[np.flatnonzero(np.r_[True, pu[order][1:] != pu[order][:-1]])]
        cov[lo + pu[pick]] = frac[pick]
        best[lo + pu[pick]] = pe[pick]
        tw = side.slot_weight[pe[pick]]
        slot_share[lo + pu[pick]] = np.where(tw > 0, sl[pick] / np.where(tw > 0, tw, 1.0), np.nan)
    bar.close()
    return exact, cov, best, slot_share
