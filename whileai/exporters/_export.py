"""Training rows a trainer takes as they are.

``export_dataset`` (``wai.export`` and ``wai.export_training`` are this function), ``training_rows``, ``to_trl``, ``loss_mask`` and
``tool_call_roundtrip``.
"""

from __future__ import annotations

import itertools
import json
import os
import warnings
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import numpy as np
import polars as pl
import pyarrow.parquet as pq

from whileai import table
from whileai._checks import check_choice
from whileai._progress import ProgressArg, Tracker, check_progress
from whileai.defaults import (
    CHUNK_ROWS,
    EXPORT_EXAMPLES,
    EXPORT_FORMAT,
    EXPORT_MASK_MODE,
    EXPORT_WORKERS,
    PASS_THRESHOLD,
    PROGRESS_MIN_ROWS,
)
from whileai.errors import ArgumentError, TrainingSelectionError, missing_extra
from whileai.exporters._encode import json_arguments, valid_object
from whileai.exporters._output import is_parquet, target_path, writing
from whileai.exporters._report import ExportReport, PrivilegedLeaks, Rewards, ToolCallRoundtrip
from whileai.exporters._rows import (
    CARRIED,
    Counts,
    LeakCounts,
    Options,
    build_chunk,
    group_stats,
    leak_counts,
    line_bytes,
    prepare_frame,
    with_group_json,
)
from whileai.exporters._tools import resolve_tools
from whileai.table import IntoRows, is_ray_dataset

__all__ = ["export_dataset", "loss_mask", "to_trl", "tool_call_roundtrip", "training_rows", "trl_dataset"]

FORMATS: tuple[str, ...] = ("openai", "trl")

#: The columns an export reads (``frame`` adds what task identity needs).
_READ_COLUMNS: tuple[str, ...] = ("messages", "prompt", "final_text", "system_prompt", "tools", "reward",
                                  *CARRIED, *table.PRIVILEGED_COLUMNS)
MASK_MODES: tuple[str, ...] = ("assistant", "final")

_TRL_ALL_TOKENS = ("TRL trains on every token of every turn (its SFTTrainer reads no per-message mask); set "
                   "assistant_only_loss=True, with a chat template that has {% generation %} blocks, to train the "
                   "agent's turns only")
_TRL_LAST_TURN = ("TRL trains on the last assistant turn only: prompt/completion rows, from which SFTTrainer builds "
                  "completion_mask (completion_only_loss defaults on)")
_CHECKED_FOR = {
    "json_string": "function.arguments is a JSON string that json.loads to an object (OpenAI wire rows)",
    "dict": "function.arguments is the object itself, which a chat template renders with | tojson (TRL rows)",
}


def _options(format: str, mask_mode: str, unroll: bool, max_tool_output_chars: int | None, strip_think: bool,
             parquet: bool) -> Options:
    check_choice("format", format, FORMATS)
    check_choice("mask_mode", mask_mode, MASK_MODES)
    if not isinstance(unroll, bool):
        raise ArgumentError(f"unroll must be True or False, got {unroll!r}. Pass a bool.", argument="unroll")
    if max_tool_output_chars is not None and (
        isinstance(max_tool_output_chars, bool) or not isinstance(max_tool_output_chars, int) or max_tool_output_chars < 1
    ):
        raise ArgumentError(
            f"max_tool_output_chars must be a positive whole number of characters or None, got {max_tool_output_chars!r}. "
            "Pass e.g. 2000, or None to keep tool output whole.",
            argument="max_tool_output_chars",
        )
    return Options(format=format, mask_mode=mask_mode, unroll=unroll,  # type: ignore[arg-type]
                   max_tool_output_chars=max_tool_output_chars, strip_think=bool(strip_think), parquet=parquet)


class _Run:
    """One export pass: the prepared frame, its chunks, and the report fields."""

    def __init__(self, source: table.Source, opts: Options, *, validate: bool, system_prompt: str | None,
                 tools: Any) -> None:
        self.opts = opts
        self.validate = validate
        self.progress: ProgressArg = False  # export_dataset sets it; training_rows shows none
        meta = table.meta_of(source.rows)
        self._rl = meta.get("mode") == "rl"  # RL groups need their failing rows: no SFT-target warning
        # the rows come through table.source: the keys first, then the rows chunk by chunk (a Parquet
        # file, or a JSONL file spooled to one, is read row group by row group in bounded memory)
        self._src: table.Source = source
        keys = source.read(["reward"])  # first: a broken or empty file is said here
        self.n = keys.height
        first = self._part(0)
        if "messages" not in first.columns:
            raise TrainingSelectionError(
                "rows must carry a conversation (messages, or prompt and final_text) to become training rows, "
                f"got columns {', '.join(first.columns[:12])}. Pass rollouts with messages.",
            )
        self._sys_prompt = system_prompt if system_prompt is not None else meta.get("system_prompt")
        self._tools_json = resolve_tools(tools if tools is not None else meta.get("tools"))
        self.leaks = PrivilegedLeaks(checked=True)
        # the leak check runs chunk by chunk beside the build (the one vectorised detector on each
        # slice), and a leak refuses the file in finish(), before it lands
        self._leak_counts = LeakCounts()
        from whileai.measure import check_reward_range, nan_as_ungraded, task_stats

        check_reward_range(keys)
        self._read_warnings: list[str] = []
        keys = nan_as_ungraded(keys, self._read_warnings)  # NaN passes every threshold in Polars' order
        rewards = (keys.select("task_key", "reward") if "reward" in keys.columns
                   else keys.select("task_key").with_columns(pl.lit(None, pl.Float64).alias("reward")))
        stats = task_stats(rewards, threshold=PASS_THRESHOLD)
        totals = stats.select(pl.len().alias("groups"), pl.col("c").sum().alias("c"),
                              pl.col("n_graded").sum().alias("g"), pl.col("n").sum().alias("n")).row(0, named=True)
        self.groups = int(totals["groups"])
        self.rewards = Rewards(n_pass=int(totals["c"] or 0), n_fail=int((totals["g"] or 0) - (totals["c"] or 0)),
                               n_ungraded=int((totals["n"] or 0) - (totals["g"] or 0)))
        self._stats = None if opts.unroll else group_stats(rewards)
        if self._stats is not None and not opts.parquet and opts.max_tool_output_chars is None:
            self._stats = with_group_json(self._stats)  # each task's group keys encoded once
        # each row's task in the stats, found once for the table (a chunk gathers its rows' stats)
        self._stats_at = None if self._stats is None else (
            keys.select("task_key").join(self._stats.select("task_key").with_row_index("_g"), on="task_key",
                                         how="left", maintain_order="left")["_g"])
        self.counts = Counts()

    def _part(self, start: int) -> pl.DataFrame:
        """The source rows of the chunk from ``start`` (``CHUNK_ROWS`` rows), the columns an export reads."""
        return self._src.take(np.arange(start, min(start + CHUNK_ROWS, self.n), dtype=np.int64), columns=_READ_COLUMNS)

    @classmethod
    def from_counts(cls, opts: Options, *, validate: bool, n: int, groups: int, rewards: Rewards) -> _Run:
        """A run with no source, for an engine that encodes the chunks elsewhere (the Ray workers).

        It is filled with ``add`` and builds the report with ``finish``, as a local run does.
        """
        run = cls.__new__(cls)
        run.opts, run.validate, run.n, run.groups, run.rewards = opts, validate, n, groups, rewards
        run.leaks = PrivilegedLeaks(checked=True)
        run._read_warnings, run._rl = [], False  # what __init__ reads off a local source
        run.counts, run._leak_counts = Counts(), LeakCounts()
        return run

    def add(self, counts: Counts, leaks: LeakCounts, *, offset: int = 0) -> None:
        """Add one chunk's counts and leak check, in row order (row indices moved by ``offset``)."""
        self.counts.merge(counts)
        self._leak_counts.merge(leaks, offset=offset)

    def _leak_verdict(self) -> None:
        """Fill the leak block from the chunks' checks; refuse the export on a leak with validate."""
        checks = self._leak_counts
        n_checked, n_leaked, leaked = checks.n_checked, checks.n_leaked, checks.rows[:EXPORT_EXAMPLES]
        self.leaks.n_checked, self.leaks.n_leaked, self.leaks.leaked = n_checked, n_leaked, leaked
        self.leaks.summary = (f"{n_leaked} of {n_checked} rows with privileged context quote it in an assistant turn"
                              if n_checked else "no row carries privileged context")
        if n_leaked and self.validate:
            shown = ", ".join(str(i) for i in leaked[:10])
            raise TrainingSelectionError(
                f"privileged_leak: {n_leaked} of {self.n} rows quote their own privileged context (reference, "
                f"principle or hidden state) in an assistant turn (rows {shown}{'...' if n_leaked > 10 else ''}); the "
                "export scrubs the key, not the reply, so training on them teaches the model to say what only the grader "
                "was told. Drop those rows (leak_report names them) or pass validate=False (wai export --no-validate).",
                reason="privileged_leak", rows=leaked, counts={"n_leaked": n_leaked},
            )

    def _row_stats(self, start: int, height: int) -> pl.DataFrame | None:
        """The group stats of the rows ``start`` to ``start + height``, in row order (None without stats)."""
        if self._stats is None or self._stats_at is None:
            return None
        return self._stats.drop("task_key")[self._stats_at.slice(start, height)]

    def _build(self, start: int, part: pl.DataFrame) -> tuple[pl.DataFrame, Counts, LeakCounts]:
        from whileai.measure import nan_rewards_unset

        counts = Counts()
        part = nan_rewards_unset(part)  # a NaN reward is written as ungraded (null), as the stats read it
        leaks = leak_counts(part, start)
        prepared = prepare_frame(part, system_prompt=self._sys_prompt, tools_json=self._tools_json,
                                 with_groups=self._stats is not None, stats=self._stats, row_offset=start,
                                 row_stats=self._row_stats(start, part.height))
        return build_chunk(prepared, self.opts, counts, row_offset=0), counts, leaks

    def chunks(self) -> Iterator[pl.DataFrame]:
        """Written rows, chunk by chunk, in order, with a tqdm.auto bar (``whileai._progress``).

        Chunks are read in order here and built ``EXPORT_WORKERS`` at a time in threads (Polars
        releases the GIL); the next chunk is read once a builder is free, while the caller writes:
        memory stays at a few chunks (and one row group of a Parquet source) whatever the table's size.
        """
        total = self.n
        bar = Tracker(total, desc="export", progress=self.progress, min_total=PROGRESS_MIN_ROWS)
        starts = list(range(0, total, CHUNK_ROWS))
        workers = max(1, min(EXPORT_WORKERS, len(starts)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            pending: deque[Future[tuple[pl.DataFrame, Counts, LeakCounts]]] = deque()
            for start in starts:
                if len(pending) >= workers:  # read the next chunk only once a builder is free
                    yield from self._take(pending.popleft())
                pending.append(pool.submit(self._build, start, self._part(start)))
                bar.update(min(CHUNK_ROWS, total - start))
            while pending:
                yield from self._take(pending.popleft())
        bar.close()

    def _take(self, future: Future[tuple[pl.DataFrame, Counts, LeakCounts]]) -> Iterator[pl.DataFrame]:
        out, counts, leaks = future.result()
        self.add(counts, leaks)
        if out.height:
            yield out

    def finish(self, path: Path | None) -> ExportReport:
        """Raise on a leak or a failed round trip (before the file lands) or build the report."""
        self._leak_verdict()
        c = self.counts
        encoding = self.opts.encoding
        roundtrip = ToolCallRoundtrip(checked=c.calls_checked, invalid=c.calls_invalid, rows=c.invalid_rows,
                                      encoding=encoding, checked_for=_CHECKED_FOR[encoding])
        if c.n_written == 0:
            raise TrainingSelectionError(
                f"rows must hold at least one assistant turn to train on, got none in {self.n} rows. "
                "Export rollouts with the agent's replies in messages (or final_text).",
                reason="no_assistant_turn",
            )
        if self.validate and c.calls_invalid:
            raise TrainingSelectionError(
                f"tool_call_roundtrip: {c.calls_invalid} of {c.calls_checked} tool calls have arguments that do not "
                f"parse as a JSON object (rows {', '.join(str(r) for r in c.invalid_rows[:10])}); a model trained on "
                "them learns to emit broken calls. Drop or repair those rows, or pass validate=False "
                "(wai export --no-validate) to write them as JSON strings.",
                reason="tool_call_roundtrip", rows=c.invalid_rows,
            )
        report = ExportReport(
            n_rows=self.n, n_written=c.n_written, format=self.opts.format, with_system=c.with_system, with_tools=c.with_tools,
            groups=self.groups, trained_messages=c.trained, masked_messages=c.masked, mask_mode=self._mask_text(),
            unrolled=self.opts.unroll, max_tool_output_chars=self.opts.max_tool_output_chars,
            tool_output_truncated=c.truncated_messages, tool_output_chars_cut=c.chars_cut, tool_call_roundtrip=roundtrip,
            privileged_leaks=self.leaks, rewards=self.rewards,
            dropped={"no_assistant_turn": c.no_assistant} if c.no_assistant else {},
            path=None if path is None else str(path),
        )
        report.warnings.extend(self._warnings())
        return report

    def _mask_text(self) -> str:
        if self.opts.format == "trl":
            if self.opts.prompt_completion:
                return _TRL_LAST_TURN + (" (unrolled: one sample per agent turn)" if self.opts.unroll else "")
            return _TRL_ALL_TOKENS
        if self.opts.unroll:
            return "final (unrolled)"
        return self.opts.mask_mode

    def _warnings(self) -> list[str]:
        c, r, out = self.counts, self.rewards, list(self._read_warnings)
        if r.n_fail and not self._rl:
            out.append(f"{r.n_fail} of {self.n} rows have reward below {PASS_THRESHOLD:g} and are exported as SFT targets; a model "
                       "trained on them learns the failure. Pass scored.passes() (or filter on reward) unless that is "
                       "intended.")
        if r.n_ungraded:
            out.append(f"{r.n_ungraded} of {self.n} rows are ungraded (no reward); grade them first if the trainer "
                       "needs a reward or a filter on it.")
        if c.no_assistant:
            out.append(f"{c.no_assistant} of {self.n} rows have no assistant turn and were left out.")
        if c.calls_invalid:
            out.append(f"{c.calls_invalid} of {c.calls_checked} tool calls have arguments that do not parse as a JSON "
                       "object; they were written as JSON strings (validate=False).")
        if c.calls_checked and not c.with_tools:
            out.append("rows call tools but carry no tool schemas; pass tools= (or export from the SimulationData "
                       "that holds them) so the trainer renders the same tool list the agent saw.")
        if not c.with_system:
            out.append("no row has a system prompt; pass system_prompt= if the agent ran under one, or the model "
                       "trains without the policy it will serve with.")
        if self.leaks.n_leaked and not self.validate:
            out.append(f"{self.leaks.n_leaked} rows quote their own privileged context and were exported because "
                       "validate=False.")
        return out


def export_dataset(
    source: IntoRows,
    output: str | os.PathLike[str] | None = None,
    /,
    *,
    format: Literal["openai", "trl"] = EXPORT_FORMAT,
    mask_mode: Literal["assistant", "final"] = EXPORT_MASK_MODE,
    unroll: bool = False,
    max_tool_output_chars: int | None = None,
    validate: bool = True,
    system_prompt: str | None = None,
    tools: Any = None,
    strip_think: bool = True,
    progress: ProgressArg = None,
) -> ExportReport:
    """Write training rows for a trainer, to JSONL or Parquet, streaming and atomically.

    Each rollout becomes one training row (docs/export.md, "What a row holds"): the whole conversation
    with the system prompt first, a ``loss_mask`` of one 0/1 per message (1 on the agent's turns,
    0 on system, user and tool-output turns: tool output is the environment's text, not the
    policy's), the tool schemas, the reward and the task's group stats (group_id, k, n0/n1,
    reward_mean, reward_std). ``format="trl"`` writes what ``trl.data_utils.maybe_apply_chat_template``
    accepts instead: conversational ``messages`` with no ``prompt`` string column (the ask is kept
    as ``prompt_text``), tool-call arguments as objects (templates render them with ``| tojson``),
    and no loss_mask (TRL reads none); ``mask_mode="final"`` and ``unroll=True`` are written as
    prompt/completion rows, which TRL trains on the completion only.

    ``wai.export`` and ``wai.export_training`` are the same function object (whileai/_aliases.py). Rows are written in
    chunks of ``CHUNK_ROWS`` to a temporary file renamed into place at the end, so a failure
    leaves no file behind.

    Args:
        source: Rollouts: a fluent data object (its ``meta`` gives the system prompt and tools), a
            DataFrame, a list of row dicts, or a JSONL/Parquet path.
        output: The file to write; ``.parquet``/``.pq`` writes Parquet, anything else JSONL
            (``.gz`` compresses). None with a path source writes ``<name>.train.jsonl`` beside it.
            With a ``ray.data.Dataset`` source, the folder the workers write JSONL part files to
            (``part-00000.jsonl``... in the dataset's order; docs/scale.md).
        format: ``"openai"`` (API wire rows) or ``"trl"`` (TRL's data utilities).
        mask_mode: ``"assistant"`` (every agent turn trains) or ``"final"`` (only the last; for
            conversations whose earlier agent turns were scripted or came from another policy).
        unroll: Turn an N-turn conversation into N samples, the k-th ending at the k-th agent
            turn with loss on that turn only, so every turn trains once with the context it had.
        max_tool_output_chars: Cut each tool message to this many characters and append
            ``[... N chars of tool output truncated]``; the cut is counted per row and in the report.
        validate: Refuse rows whose reply quotes their own privileged context (``privileged_leak``)
            and tool calls whose arguments do not parse (``tool_call_roundtrip``).
        system_prompt: The policy to put first; default the source's meta, else its
            ``system_prompt`` column. A conversation that already starts with one keeps it.
        tools: Tool schemas (OpenAI shape); default the source's meta, else its ``tools`` column.
        strip_think: Remove ``<think>...</think>`` blocks from assistant turns.
        progress: A tqdm.auto bar of rows written, from ``PROGRESS_MIN_ROWS`` rows on a terminal or
            in a notebook (True always, False never); a callable gets ``(done, total, info)``.

    Returns:
        An :class:`ExportReport` (n, n_written, trained/masked messages, tool_call_roundtrip,
        rewards, warnings, path...).

    Raises:
        ArgumentError: A format or mask_mode outside the allowed values, or no output path.
        EmptyInputError: The source holds no rows.
        TrainingSelectionError: A privileged leak or a broken tool call (with ``validate=True``), or
            no row with an assistant turn.
        InputFileError: The output cannot be written (nothing is left behind).

    Examples:
        >>> import tempfile, os, json
        >>> rows = [{"scenario_id": "t1", "prompt": "hi", "final_text": "hello", "reward": 1.0}]
        >>> path = os.path.join(tempfile.mkdtemp(), "train.jsonl")
        >>> report = export_dataset(rows, path, system_prompt="Be brief.")
        >>> report["n_written"], report["trained_messages"], report["masked_messages"]
        (1, 1, 2)
        >>> json.loads(open(path).readline())["loss_mask"]
        [0, 0, 1]
    """
    check_progress(progress)
    if is_ray_dataset(source):  # the workers write a folder of JSONL part files (docs/scale.md)
        from whileai.exporters._ray import export_ray

        return export_ray(source, output, _options(format, mask_mode, unroll, max_tool_output_chars, strip_think, False),
                          run_type=_Run, columns=_READ_COLUMNS, validate=validate, system_prompt=system_prompt,
                          tools=tools)
    target = target_path(source, output)
    opts = _options(format, mask_mode, unroll, max_tool_output_chars, strip_think, is_parquet(target))
    # one boundary: a Parquet file (a JSONL path spooled to one) is streamed by row group
    with table.source(source) as rows:
        run = _Run(rows, opts, validate=validate, system_prompt=system_prompt, tools=tools)
        run.progress = progress
        with writing(target) as tmp:
            if opts.parquet:
                _write_parquet(run, tmp)
            else:
                _write_jsonl(run, tmp, target)
            report = run.finish(target)
    return report




def _write_jsonl(run: _Run, tmp: Path, target: Path) -> None:
    with table.open_binary(tmp, target, compresslevel=6) as handle:
        for out in run.chunks():
            # Polars' CSV writer copies the pieces to the file in its own buffer (measured cheaper than
            # one write of line_bytes' buffer, whose fresh pages cost more than the writer's copy)
            out.write_csv(handle, include_header=False, quote_style="never", line_terminator="")
            del out  # written: not held while the next chunks are read and built


def _write_parquet(run: _Run, tmp: Path) -> None:
    """Stream the chunks into one Parquet file.

    OpenAI rows go through Polars' streaming Parquet sink (it encodes columns in parallel and
    costs less CPU than pyarrow's writer); TRL rows through pyarrow's writer, which can mark the
    tool-call arguments as Arrow's JSON type (Polars cannot write that type).
    """
    chunks = run.chunks()
    first = next(chunks, None)
    if first is None:
        return  # nothing to write; finish() says why
    if run.opts.format != "trl":
        from polars.io.plugins import register_io_source

        def source(with_columns: Any, predicate: Any, n_rows: Any, batch_size: Any) -> Iterator[pl.DataFrame]:
            yield first
            yield from chunks

        register_io_source(source, schema=first.schema).sink_parquet(tmp, compression="zstd")
        return
    writer: pq.ParquetWriter | None = None
    try:
        for out in itertools.chain([first], chunks):
            arrow = json_arguments(out.to_arrow())
            if writer is None:
                writer = pq.ParquetWriter(tmp, arrow.schema, compression="zstd")
            writer.write_table(arrow.cast(writer.schema) if arrow.schema != writer.schema else arrow)
    finally:
        if writer is not None:
            writer.close()


def training_rows(
    source: IntoRows,
    /,
    *,
    format: Literal["openai", "trl"] = EXPORT_FORMAT,
    mask_mode: Literal["assistant", "final"] = EXPORT_MASK_MODE,
    unroll: bool = False,
    max_tool_output_chars: int | None = None,
    validate: bool = True,
    system_prompt: str | None = None,
    tools: Any = None,
    strip_think: bool = True,
) -> list[dict[str, Any]]:
    """The training rows ``export_dataset`` would write, as a list of dicts (no file).

    Same arguments and the same rows as :func:`export_dataset` (docs/export.md: training_rows is the
    list-returning half of the same path); see there.

    Examples:
        >>> rows = [{"scenario_id": "t1", "prompt": "hi", "final_text": "hello", "reward": 1.0}]
        >>> training_rows(rows, format="trl")[0]["messages"]
        [{'role': 'user', 'content': 'hi'}, {'role': 'assistant', 'content': 'hello'}]
    """
    opts = _options(format, mask_mode, unroll, max_tool_output_chars, strip_think, False)
    with table.source(source) as rows:
        run = _Run(rows, opts, validate=validate, system_prompt=system_prompt, tools=tools)
        out = _training_rows(run)
    return out


def _training_rows(run: _Run) -> list[dict[str, Any]]:
    """Every chunk of ``run`` as row dicts, then the run's checks (a leak refuses here too)."""
    out: list[dict[str, Any]] = []
    loads = json.loads
    for chunk in run.chunks():
        text = bytes(line_bytes(chunk)).decode("utf-8")
        # split on "\n" only: str.splitlines also breaks at U+2028 and friends, which JSON keeps raw
        out.extend(loads(line) for line in text.split("\n") if line)
    run.finish(None)
    return out


def to_trl(rows: IntoRows, /, *, kind: Literal["training", "completion", "preference"] = "training",
           **options: Any) -> list[dict[str, Any]]:
    """Rows in the shape TRL's data utilities take.

    ``kind="training"``: conversational ``messages`` rows (SFT); ``"completion"``: prompt/completion
    rows training the last agent turn; ``"preference"``: one-turn preference rows from pairs
    (``export_preference`` with ``format="trl"``).

    Examples:
        >>> rows = [{"scenario_id": "t1", "prompt": "hi", "final_text": "hello"}]
        >>> row = to_trl(rows, kind="completion")[0]
        >>> row["prompt"], row["completion"], row["prompt_text"]
        ([{'role': 'user', 'content': 'hi'}], [{'role': 'assistant', 'content': 'hello'}], 'hi')
    """
    check_choice("kind", kind, ("training", "completion", "preference"))
    if kind == "preference":
        from whileai.exporters._preference import preference_rows

        return preference_rows(rows, format="trl", **options)
    if kind == "completion":
        options.setdefault("mask_mode", "final")
    return training_rows(rows, format="trl", **options)


def trl_dataset(source: IntoRows, /, *, kind: Literal["training", "completion", "preference"] = "training",
                **options: Any) -> Any:
    """TRL rows as a ``datasets.Dataset`` that keeps every message exactly as written.

    ``datasets.Dataset.from_list`` unifies the dicts of a column into one struct type, so the
    arguments of two different tools gain each other's keys as nulls (``{"order_id": "A-0",
    "amount": null}``), which a chat template renders and the student learns. This builds the
    Dataset with ``on_mixed_types="use_json"`` (messages kept as JSON values), the same thing
    ``datasets.load_dataset("json", ...)`` does with a file ``export_dataset`` wrote.

    Args:
        source: Rollouts (for ``kind="preference"``, pairs).
        kind: ``"training"``, ``"completion"`` or ``"preference"`` (see :func:`to_trl`).
        **options: Passed to :func:`to_trl` (system_prompt, tools, unroll...).

    Returns:
        A ``datasets.Dataset`` ready for ``SFTTrainer`` / ``DPOTrainer``.

    Raises:
        MissingExtraError: ``datasets`` is not installed (``pip install 'whileai[trl]'``).
    """
    try:
        import datasets
    except ImportError as exc:
        raise missing_extra("datasets", "trl", "trl_dataset") from exc
    rows = to_trl(source, kind=kind, **options)
    try:
        return datasets.Dataset.from_list(rows, on_mixed_types="use_json")
    except TypeError:  # an older datasets without JSON values: say what it will do
        warnings.warn("this datasets version cannot keep mixed message dicts as JSON; tool-call arguments of "
                      "different tools may gain each other's keys as nulls. Upgrade datasets, or load the JSONL "
                      "file export_dataset writes.", stacklevel=2)
        return datasets.Dataset.from_list(rows)


def loss_mask(messages: Sequence[Mapping[str, Any]], /, *,
              mode: Literal["assistant", "final"] = EXPORT_MASK_MODE) -> list[int]:
    """One 0/1 per message: 1 on the agent's turns, 0 on system, user and tool turns.

    ``mode="final"`` sets 1 on the last assistant message only (docs/export.md, "What a row holds").

    Examples:
        >>> msgs = [{"role": "user"}, {"role": "assistant"}, {"role": "tool"}, {"role": "assistant"}]
        >>> loss_mask(msgs), loss_mask(msgs, mode="final")
        ([0, 1, 0, 1], [0, 0, 0, 1])
    """
    check_choice("mode", mode, MASK_MODES)
    flags = [1 if m.get("role") == "assistant" else 0 for m in messages]
    if mode == "final" and any(flags):
        last = len(flags) - 1 - flags[::-1].index(1)
        flags = [1 if i == last else 0 for i in range(len(flags))]
    return flags


def tool_call_roundtrip(rows: IntoRows, /, *, format: Literal["openai", "trl"] = EXPORT_FORMAT
                        ) -> ToolCallRoundtrip:
    """Check that every tool call's arguments parse back as a JSON object.

    ``format`` names the encoding the check vouches for: ``"openai"`` checks arguments as a JSON
    string that decodes to an object, ``"trl"`` as the object a chat template renders with
    ``| tojson``: the report names which of the two encodings it checked, so ``invalid: 0`` says
    what it actually vouches for (docs/export.md, "Checks that refuse").

    Examples:
        >>> call = {"function": {"name": "f", "arguments": "{bad"}}
        >>> row = {"prompt": "x", "messages": [{"role": "assistant", "tool_calls": [call]}]}
        >>> r = tool_call_roundtrip([row])
        >>> (r.checked, r.invalid, r.rows, r.encoding)
        (1, 1, [0], 'json_string')
    """
    check_choice("format", format, FORMATS)
    df = table.frame(rows)
    encoding = "dict" if format == "trl" else "json_string"
    if "messages" not in df.columns:
        return ToolCallRoundtrip(encoding=encoding, checked_for=_CHECKED_FOR[encoding])
    args = pl.element().struct.field("arguments").fill_null("{}")
    per_row = df.select(
        pl.col("messages").list.eval(pl.element().struct.field("tool_calls").list.len()).list.sum().fill_null(0).alias("n"),
        pl.col("messages").list.eval(
            pl.element().struct.field("tool_calls").list.eval((~valid_object(args)).cast(pl.Int64)).list.sum()
        ).list.sum().fill_null(0).alias("bad"),
    ).with_row_index("_i")
    bad_rows = per_row.filter(pl.col("bad") > 0)["_i"].head(EXPORT_EXAMPLES).to_list()
    return ToolCallRoundtrip(checked=int(per_row["n"].sum()), invalid=int(per_row["bad"].sum()),
                             rows=[int(i) for i in bad_rows], encoding=encoding, checked_for=_CHECKED_FOR[encoding])
