"""Shared pieces of the select step: argument checks and the per-row expressions it filters on.

Every expression here works on a ``table.frame`` output and tolerates a missing column (a table
read from a bare prompt/reply file has no ``messages``, ``truncated`` or ``lineage``): a missing
column reads as "no information", never as an error.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import polars as pl

from whileai import table
from whileai._checks import check_choice as check_choice
from whileai._checks import check_fraction as check_fraction
from whileai._checks import check_int as check_positive_int
from whileai.defaults import FETCH_BATCH_ROWS, FETCH_THREADS, HACK_THRESHOLD, PAGE_FETCH_MAX_SHARE
from whileai.errors import ArgumentError, TrainingSelectionError
from whileai.guard._hygiene import truncated_flag as truncated_flag
from whileai.selection import _pages

__all__ = [
    "check_band",
    "check_choice",
    "check_fraction",
    "check_positive_int",
    "correlation_warnings",
    "correlations",
    "eval_sourced",
    "eval_sourced_warning",
    "has",
    "n_tool_calls_expr",
    "n_turns_expr",
    "Fetch",
    "parquet_decisions",
    "reply_chars_expr",
    "reply_expr",
    "reply_without_text",
    "roles_checked_first",
    "spooling",
    "junk_flag",
    "junk_split",
    "privileged_leaks",
    "require_graded",
    "take_rows",
    "truncated_flag",
]


# ------------------------------------------------------------------------------------------
# arguments
# ------------------------------------------------------------------------------------------


def check_band(band: Any, name: str = "band") -> tuple[float, float]:
    """A ``(lo, hi)`` pass-rate band with 0 <= lo <= hi <= 1, else an ArgumentError."""
    try:
        lo, hi = (float(v) for v in band)
    except (TypeError, ValueError):
        raise ArgumentError(f"{name} must be a pair (lo, hi) of pass rates, got {band!r}. Pass for example {name}=(0.2, 0.8).",
                            argument=name, value=band) from None
    if not (0.0 <= lo <= hi <= 1.0) or math.isnan(lo) or math.isnan(hi):
        raise ArgumentError(f"{name} must satisfy 0 <= lo <= hi <= 1, got {band!r}. Pass for example {name}=(0.2, 0.8).",
                            argument=name, value=band)
    return lo, hi


# ------------------------------------------------------------------------------------------
# per-row expressions
# ------------------------------------------------------------------------------------------


def has(df: pl.DataFrame, name: str) -> bool:
    """Whether the table has a column that is not all-null typed ``Null``."""
    return name in df.columns and df.schema[name] != pl.Null


def n_tool_calls_expr(df: pl.DataFrame) -> pl.Expr:
    """``table.n_tool_calls()``, or 0 without a ``messages`` column."""
    return table.n_tool_calls() if has(df, "messages") else pl.lit(0, pl.Int64).alias("n_tool_calls")


def n_turns_expr(df: pl.DataFrame) -> pl.Expr:
    """``table.n_turns()`` (assistant turns), or 0 without a ``messages`` column."""
    return table.n_turns() if has(df, "messages") else pl.lit(0, pl.Int64).alias("n_turns")


def reply_expr(df: pl.DataFrame) -> pl.Expr:
    """The final reply, '' when absent."""
    return pl.col("final_text").fill_null("") if has(df, "final_text") else pl.lit("", pl.String)


def reply_chars_expr(df: pl.DataFrame) -> pl.Expr:
    """``table.reply_chars()``, or 0 without a ``final_text`` column."""
    return table.reply_chars() if has(df, "final_text") else pl.lit(0, pl.Int64).alias("reply_chars")


def junk_flag(df: pl.DataFrame) -> pl.Expr:
    """Junk rows: no tool call and no letter or digit in the reply (empty, whitespace, "...").

    A rollout that called a tool is never junk here, whatever its last message: it did something
    a trainer can learn from or against. Rewards are not read. One regex pass over the replies.
    """
    no_call = n_tool_calls_expr(df) == 0
    return no_call & reply_without_text(df)


def reply_without_text(df: pl.DataFrame) -> pl.Expr:
    """Rows whose reply has no letter or digit (empty, whitespace, "..."): junk unless they called a tool."""
    return ~reply_expr(df).str.contains(r"[\p{L}\p{N}]")


def junk_split(df: pl.DataFrame, junk: pl.Series) -> tuple[int, int]:
    """``(no_output, garbage)`` among the junk rows: a blank reply, or text with no letter or digit.

    Runs on the junk rows only (they are few), so the split costs nothing on clean data.
    """
    n = int(junk.sum())
    if n == 0:
        return 0, 0
    replies = df.select(reply_expr(df).alias("r")).filter(junk)["r"]
    blank = int((~replies.str.contains(r"\S")).sum())
    return blank, n - blank


# ------------------------------------------------------------------------------------------
# graded rows, eval-sourced rewards, correlations
# ------------------------------------------------------------------------------------------


def require_graded(df: pl.DataFrame, what: str) -> None:
    """Raise TrainingSelectionError when no row carries a reward."""
    if not has(df, "reward") or df["reward"].null_count() == df.height:
        raise TrainingSelectionError(
            f"{what} needs graded rows, but none of the {df.height} rows carries a reward. "
            "Grade first: scored = data.grade(judge=...) (or whileai.grade.run_judge), then select.",
            counts={"n_rows": df.height},
        )


def eval_sourced(df: pl.DataFrame) -> pl.Expr:
    """Rows whose reward came from evaluate(): ``lineage.source == "eval"``."""
    dtype = df.schema.get("lineage")
    if isinstance(dtype, pl.Struct) and "source" in {f.name for f in dtype.fields}:
        return (pl.col("lineage").struct.field("source") == "eval").fill_null(False)
    return pl.lit(False)


def eval_sourced_warning(count: int, what: str) -> str:
    """The warning every selector adds when eval-sourced rewards are in its output."""
    return (
        f"{count} {what} carry a reward from evaluate() (lineage.source == 'eval'): a held-out score that "
        "becomes the training reward makes the scorer you report the one you optimised against. "
        "Grade the training set with run_judge or data.grade and keep evaluate for held-out rows."
    )


#: The pooled features ``correlations`` reads, in report order.
CORRELATION_FEATURES = ("reply_length", "tool_calls", "assistant_turns")


def correlations(df: pl.DataFrame, *, threshold: float = HACK_THRESHOLD) -> dict[str, Any]:
    """Pooled Pearson correlation of reward with reply length, tool calls and assistant turns, in one pass.

    The features are keyed as ``whileai.guard.reward_correlations`` and ``hack_scan`` key them
    (``reply_length``, ``tool_calls``, ``assistant_turns``).

    A feature that is constant (or a table with fewer than 3 graded rows) has no correlation:
    ``None`` in ``correlations`` and nothing flagged. ``flagged`` holds those with
    ``|r| >= threshold`` (``HACK_THRESHOLD``, Gao et al. 2022). A reward that tracks a shortcut is a
    judge problem, so it is reported, never pruned.
    """
    graded = df.filter(pl.col("reward").is_not_null()) if has(df, "reward") else df.clear()
    feats = graded.select(
        pl.col("reward").cast(pl.Float64) if has(graded, "reward") else pl.lit(None, pl.Float64).alias("reward"),
        reply_chars_expr(graded).cast(pl.Float64).alias("reply_length"),
        n_tool_calls_expr(graded).cast(pl.Float64).alias("tool_calls"),
        n_turns_expr(graded).cast(pl.Float64).alias("assistant_turns"),
    )
    out: dict[str, float | None] = {}
    if feats.height >= 3:
        row = feats.select([pl.corr("reward", f).alias(f) for f in CORRELATION_FEATURES]).row(0)
        for name, value in zip(CORRELATION_FEATURES, row):
            out[name] = None if value is None or not math.isfinite(value) else round(float(value), 4)
    else:
        out = dict.fromkeys(CORRELATION_FEATURES)
    flagged = {k: v for k, v in out.items() if v is not None and abs(v) >= threshold}
    return {"n_graded": graded.height, "threshold": threshold, "correlations": out, "flagged": flagged}


_FEATURE_WORDS = {"reply_length": "reply length", "tool_calls": "the number of tool calls", "assistant_turns": "the number of assistant turns"}


def correlation_warnings(report: dict[str, Any]) -> list[str]:
    """One sentence per flagged feature: what the reward tracks and what to do."""
    out = []
    for name, value in report.get("flagged", {}).items():
        verb = "rewards" if value > 0 else "punishes"
        out.append(f"reward {verb} {_FEATURE_WORDS.get(name, name)} (corr {value:+.2f}, flag at |r| >= "
                   f"{report['threshold']:.2f}); check the judge before training")
    return out


def take_rows(df: pl.DataFrame, positions: pl.Series) -> pl.DataFrame:
    """The rows of ``df`` at ``positions`` (ascending row numbers), in that order.

    A boolean mask, not a gather: gathering nested columns (conversations) from a many-chunk
    table costs far more than filtering it (0.03 s against 0.2 to 0.8 s for 1,000 of 1M rows).
    """
    mask = pl.int_range(pl.len(), dtype=pl.Int64).is_in(positions.cast(pl.Int64).implode())
    return df.filter(mask)


def privileged_leaks(df: pl.DataFrame, warnings: list[str]) -> tuple[pl.Series | None, dict[str, Any]]:
    """Rows whose reply quotes their own privileged context (an answer key the judge also read).

    A pass that recites the grader's reference is not a demonstration (README.md: leaked answer keys
    dropped). The check is ``whileai.guard.leak_report`` (one implementation in the library);
    it runs only when the table carries a privileged column, and is skipped with a warning when
    guard cannot be imported.

    Returns:
        A boolean mask of the leaking rows (None when nothing was checked) and the 0.131-shaped
        summary ``{checked, n_checked, n_dropped, leaked}``.
    """
    info: dict[str, Any] = {"checked": False, "n_checked": 0, "n_dropped": 0, "leaked": []}
    if not any(has(df, c) for c in table.PRIVILEGED_COLUMNS):
        return None, info
    from whileai.guard import leak_report

    report = leak_report(df)
    leaked = list(getattr(report, "leaked", []) or [])
    info = {"checked": bool(getattr(report, "checked", False)), "n_checked": int(getattr(report, "n_checked", 0)),
            "n_dropped": len(leaked), "leaked": leaked[:20]}
    mask = np.zeros(df.height, dtype=bool)
    mask[[int(x["index"]) for x in leaked]] = True
    return pl.Series("_leak", mask), info


# ------------------------------------------------------------------------------------------
# a Parquet file: the decision columns first, the kept rows last
# ------------------------------------------------------------------------------------------

class Fetch:
    """The kept rows of a Parquet file read decisions first (``parquet_decisions``), and its role check.

    Calling it with ascending row positions returns those rows of the whole table. The roles of
    every message are checked on the way (the fetch decodes the conversations anyway), so a
    file with a role the whole read refuses raises that read's error from the fetch;
    ``check_roles`` runs the same check without fetching (see ``roles_checked_first``).
    """

    def __init__(self, read: Callable[[pl.Series], pl.DataFrame], check_roles: Callable[[], None]) -> None:
        self._read = read
        self.check_roles = check_roles

    def __call__(self, positions: pl.Series) -> pl.DataFrame:
        return self._read(positions)


@contextlib.contextmanager
def roles_checked_first(fetch: Fetch | None) -> Iterator[None]:
    """Let an error raised while deciding wait for the file's role check.

    The whole read refuses a file with an unknown role before anything is decided. A selector
    that reads decisions first checks the roles when it fetches the kept rows, so an error raised
    before then (no graded row, nothing eligible) runs the check first: a bad role raises the
    whole read's ``SchemaError`` instead, as reading the file in memory would.
    """
    try:
        yield
    except Exception:
        if fetch is not None:
            try:
                fetch.check_roles()
            except Exception as whole_read:
                raise whole_read from None
        raise


_T = TypeVar("_T")


def _in_threads(work: Callable[[list[Any]], list[_T]], jobs: Sequence[Any]) -> list[_T]:
    """``work`` over ``jobs`` split into ``FETCH_THREADS`` runs of consecutive jobs, one thread each; results in order.

    pyarrow's decoding releases the GIL. A run per thread (not a job per thread) keeps a file of many
    small row groups at one reader a thread: each reader parses nothing again (its ``metadata`` is
    the file's, already read) and a run of groups is read in one call.
    """
    jobs = list(jobs)
    n_runs = max(1, min(FETCH_THREADS, len(jobs)))
    bounds = np.linspace(0, len(jobs), n_runs + 1).round().astype(int)
    runs = [jobs[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    with ThreadPoolExecutor(max_workers=n_runs) as pool:
        return [out for outs in pool.map(work, runs) for out in outs]


def _valid(array: Any) -> np.ndarray:
    """Which entries of a pyarrow array are not null, from its validity bits (no pyarrow.compute)."""
    if array.null_count == 0:
        return np.ones(len(array), dtype=bool)
    bits = np.unpackbits(np.frombuffer(array.buffers()[0], dtype=np.uint8), bitorder="little")
    return bits[array.offset:array.offset + len(array)].astype(bool)


def _message_roles(chunk: Any) -> Any:
    """The role of every message of a chunk of conversations, in order (a null message gives a null role).

    The messages are the list values between the chunk's first and last offsets (pyarrow's
    ``ListArray.flatten`` would import pyarrow.compute; the Parquet reader gives a null
    conversation no messages).
    """
    ends = np.asarray(chunk.offsets)
    flat = chunk.values.slice(int(ends[0]), int(ends[-1] - ends[0]))
    return flat.flatten()[flat.type.get_field_index("role")]


def _list_shape(chunk: Any) -> tuple[np.ndarray, np.ndarray]:
    """Each entry's length and validity in a pyarrow list array (what a leaf read alone must agree with)."""
    return np.diff(np.asarray(chunk.offsets)), _valid(chunk)


def _paging_plan(path: Path, pf: Any, rest: Sequence[str]) -> dict[str, Any]:
    """Which message leaf a fetch reads from its pages, and each row group's pages of it (``_pages``).

    The largest string leaf directly under a message (the texts), never the role (every role is
    checked); none where the file has no offset index for it. ``skeleton`` is ``rest`` with the
    conversations as their other leaves.
    """
    schema = pf.schema
    paths = [schema.column(i).path for i in range(len(schema))]
    meta = pf.metadata
    candidates = [i for i, leaf in enumerate(paths)
                  if leaf.split(".")[:3] == ["messages", "list", "element"] and len(leaf.split(".")) == 4
                  and leaf.split(".")[3] != "role" and schema.column(i).physical_type == "BYTE_ARRAY"]
    if "messages" not in rest or not candidates or not meta.num_row_groups:
        return {"leaf": None, "pages": None}
    sizes = {i: sum(meta.row_group(g).column(i).total_uncompressed_size for g in range(meta.num_row_groups)) for i in candidates}
    column = max(candidates, key=lambda i: sizes[i])
    try:
        pages = _pages.leaf_pages(path, meta, column)
    except OSError:
        pages = None
    if pages is None:
        return {"leaf": None, "pages": None}
    skeleton = [c for c in rest if c != "messages"] + [leaf for leaf in paths if leaf.startswith("messages.")
                                                       and leaf != paths[column]]
    return {"leaf": paths[column], "pages": pages, "skeleton": skeleton,
            "messages": pf.schema_arrow.field("messages"), "order": list(rest)}


def _with_paged_leaf(path: Path, meta: Any, g: int, local: np.ndarray, kept: Any,
                     shapes: list[tuple[np.ndarray, np.ndarray]], pages: Any, paging: dict[str, Any]) -> Any:
    """The kept rows of a row group with their conversations whole: ``kept`` (the other leaves) joined to the paged leaf.

    The leaf is decoded from the pages holding the kept rows (``_pages.read_leaf_rows``). Every
    row it decoded must have the message count and the nulls the other leaves gave the same row
    (a page that did not start at a row would shift them), and the kept rows the same messages;
    otherwise, or where the pages decline, None (the caller decodes the group with every leaf).
    """
    import pyarrow as pa

    try:
        found = _pages.read_leaf_rows(path, meta, g, paging["leaf"], pages, local, PAGE_FETCH_MAX_SHARE)
    except (pa.ArrowException, OSError, ValueError, StopIteration):
        return None
    if found is None:
        return None
    leaf_rows, decoded, decoded_rows = found
    lengths = np.concatenate([length for length, _ in shapes])
    valid = np.concatenate([ok for _, ok in shapes])
    seen = decoded < lengths.size
    got_lengths, got_valid = _list_shape(decoded_rows)
    if not (np.array_equal(got_lengths[seen], lengths[decoded[seen]]) and np.array_equal(got_valid[seen], valid[decoded[seen]])):
        return None
    skeleton = kept.column("messages").combine_chunks()
    if not isinstance(skeleton, (pa.ListArray, pa.LargeListArray)) or len(skeleton) != len(leaf_rows):
        return None
    ends, leaf_ends = np.asarray(skeleton.offsets), np.asarray(leaf_rows.offsets)
    if not (np.array_equal(ends - ends[0], leaf_ends - leaf_ends[0]) and np.array_equal(_valid(skeleton), _valid(leaf_rows))):
        return None
    messages = skeleton.values.slice(int(ends[0]), int(ends[-1] - ends[0]))
    texts = leaf_rows.values.slice(int(leaf_ends[0]), int(leaf_ends[-1] - leaf_ends[0]))
    if not np.array_equal(_valid(messages), _valid(texts)):
        return None
    field = paging["messages"]
    struct_type = field.type.value_type
    name = paging["leaf"].split(".")[3]
    children = [texts.field(name) if f.name == name else messages.field(f.name) for f in struct_type]
    no_message = pa.array(~_valid(messages)) if messages.null_count else None
    values = pa.StructArray.from_arrays(children, fields=list(struct_type), mask=no_message)
    no_list = pa.array(~_valid(skeleton)) if skeleton.null_count else None
    offsets = pa.array(ends - ends[0], type=pa.int64() if pa.types.is_large_list(field.type) else pa.int32())
    whole = type(skeleton).from_arrays(offsets, values, type=field.type, mask=no_list)
    joined = kept.set_column(kept.schema.get_field_index("messages"), field, pa.chunked_array([whole], type=field.type))
    return joined.select(paging["order"])  # the columns in the file's order, as a read of every leaf gives them


_BYTE_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)  # the low k bytes of a word


def _le_word(piece: bytes) -> np.uint64:
    """Up to eight bytes as the little-endian word ``_string_codes`` compares against."""
    return np.uint64(int.from_bytes(piece, "little"))


def _string_codes(strings: Any, values: Sequence[str]) -> np.ndarray:
    """Each entry's index in ``values`` (-1 for any other string or a null), from a pyarrow string array's buffers.

    Exact: an entry matches a value when its UTF-8 bytes are the value's bytes (the first of
    equal values wins). The first eight bytes of every entry are read as one little-endian word
    (an unaligned view of the data buffer), so a value of up to eight bytes is one vectorised
    comparison against the entries of its length, with the bytes past that length masked off,
    and a longer one a comparison more per eight bytes on its candidates only; no
    pyarrow.compute, no copy into Polars. A type other than ``string`` or ``large_string`` is
    cast to ``large_string`` first.
    """
    import pyarrow as pa

    if not (pa.types.is_string(strings.type) or pa.types.is_large_string(strings.type)):
        strings = strings.cast(pa.large_string())
    n = len(strings)
    _, offsets_buf, data_buf = strings.buffers()
    width = np.int64 if pa.types.is_large_string(strings.type) else np.int32
    offsets = np.frombuffer(offsets_buf, dtype=width, count=strings.offset + n + 1)[strings.offset:]
    base = int(offsets[0])  # a slice's entries start inside the data buffer: only their bytes are read
    starts = offsets[:-1] - base if base else offsets[:-1]
    lengths = np.diff(offsets)
    size = int(offsets[-1]) - base
    padded = np.empty(size + 8, dtype=np.uint8)  # eight bytes past the last entry, so every word can be read
    padded[size:] = 0
    if size:
        padded[:size] = np.frombuffer(data_buf, dtype=np.uint8, count=base + size)[base:]
    words = np.ndarray((size + 1,), dtype="<u8", buffer=padded, strides=(1,))  # words[i]: bytes i to i + 7
    first = words[starts]
    codes = np.full(n, -1, dtype=np.int8 if len(values) <= 127 else np.int64)
    wanted: dict[bytes, int] = {}
    for i, value in enumerate(values):
        wanted.setdefault(value.encode(), i)
    by_length: dict[int, list[tuple[bytes, int]]] = {}
    for want, i in wanted.items():
        by_length.setdefault(len(want), []).append((want, i))
    for length, group in by_length.items():
        sized = lengths == length
        head = first & _BYTE_MASKS[length] if length < 8 else first
        for want, i in group:
            hit = sized & (head == _le_word(want[:8]))
            for j in range(8, length, 8):
                at = np.flatnonzero(hit)
                piece = want[j:j + 8]
                hit[at] = (words[starts[at] + j] & _BYTE_MASKS[len(piece)]) == _le_word(piece)
            codes[hit] = i
    if strings.null_count:
        codes[~_valid(strings)] = -1
    return codes


def _role_facts(chunks: Sequence[Any], roles: Sequence[str]) -> tuple[bool, bool]:
    """Whether every message of some pyarrow chunks of conversations has a role among ``roles``, and whether one opens with a system turn.

    A null message or a null role fails the first, as the whole read's check does. The roles are
    compared byte for byte on the arrow buffers (``_string_codes``): about a millisecond per 50k
    messages, against three through Polars.
    """
    opens_system = False
    system = list(roles).index("system") if "system" in roles else -2
    for chunk in chunks:
        role = _message_roles(chunk)
        if role.null_count:
            return False, False
        codes = _string_codes(role, roles)
        if (codes < 0).any():
            return False, False
        ends = np.asarray(chunk.offsets)
        firsts = (ends[:-1] - ends[0])[(np.diff(ends) > 0) & _valid(chunk)]
        opens_system = opens_system or bool((codes[firsts] == system).any())
    return True, opens_system


def parquet_decisions(rows: Any, columns: Sequence[str], *, calls: Sequence[str] = ("name", "arguments"),
                      calls_where: Callable[[pl.DataFrame], pl.Expr] | None = None) -> tuple[pl.DataFrame, Fetch] | None:
    """The decision columns of a whileai-shaped Parquet file, and a reader of its kept rows.

    A selector decides from a few columns (task, reward, reply, flags) and the tool calls of each
    conversation; the message texts, most of the file, are needed only for the rows it keeps.
    This reads ``columns`` through ``table.frame``, and of the conversations only the ``calls``
    fields of each message's tool calls (Parquet reads nested leaves separately: ``("name",
    "arguments")`` for a trajectory hash, ``("name",)`` to count calls): the frame's ``messages``
    holds those. With ``calls_where`` (an expression over the other decision columns) the tool
    calls are read only when some row it marks needs them: when it marks none, the frame has no
    ``messages`` and the call leaves are never decoded (``select(mode="sft")`` counts calls only
    for a reply with no letter or digit, which most files never have).

    It returns that frame and a :class:`Fetch` that reads the whole rows at given (ascending)
    positions: the columns not read yet, decoded row group by row group (``FETCH_BATCH_ROWS`` at
    a time, on ``FETCH_THREADS`` threads), joined to the decision columns already in hand and read
    through ``table.frame`` as the whole file would be, each row group up to its last kept row.
    The fetch checks every message's role on the way (in the batches it decodes where they reach
    the group's end, else from the group's roles read alone) and takes the whole read where one
    is not known: that read raises the error that names it. A selector runs its
    decisions inside ``roles_checked_first`` so an error it raises waits for that check.

    It applies only where that gives the rows ``table.frame`` would give: a single Parquet file
    whose columns carry their canonical names and types (``messages`` as whileai writes it,
    string ``prompt`` and ``final_text``, 0.131 ``steps`` beside them as JSON text, as a JSONL
    file spooled by ``table.spooled`` holds them), that pyarrow and Polars read to the same types, and no
    privileged column (the leak check reads the message texts). Anything else returns None and
    the caller reads the whole table.
    """
    if not isinstance(rows, (str, os.PathLike)):
        return None
    path = Path(rows)
    if path.suffix.lower() not in (".parquet", ".pq") or not path.is_file():
        return None
    from whileai.table.schema import MESSAGE, PRIVILEGED_COLUMNS, ROLES, alias_map

    try:
        schema = pl.scan_parquet(path).collect_schema()
    except Exception:  # not readable here: table.frame says why
        return None
    names = set(schema.names())
    # declined, for the whole read: a column under another name (an alias the whole read renames),
    # TRL's `completion` (the whole read may build turns from it), a privileged column (the leak
    # check reads every message text), or (below) types pyarrow and Polars read differently
    if (schema.get("messages") != pl.List(MESSAGE) or schema.get("prompt") != pl.String
            or schema.get("final_text") != pl.String or names & (set(alias_map()) | {"completion"})
            or schema.get("steps", pl.String) != pl.String or names & set(PRIVILEGED_COLUMNS)):
        return None

    def read_calls() -> tuple[Any, list[Any]] | None:
        # pyarrow loads here, on a thread beside the Polars read of the narrow columns (its import
        # is 0.07 s of a cold call); then the tool-call leaves, where needed, decode on
        # FETCH_THREADS threads of their own (pyarrow releases the GIL)
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            pf = pq.ParquetFile(path)
            # an empty table from batches: Schema.empty_table would import pandas (0.3 s)
            arrow_schema = pl.from_arrow(pa.Table.from_batches([], schema=pf.schema_arrow)).schema  # type: ignore[union-attr]
        except Exception:  # not readable here: table.frame says why
            return None
        if dict(arrow_schema) != dict(schema):
            return None
        if not calls_needed.result():
            return pf, []
        leaves = [pf.schema.column(i).path.split(".") for i in range(len(pf.schema))]
        call_leaves = [".".join(leaf) for leaf in leaves
                       if leaf[0] == "messages" and "tool_calls" in leaf and leaf[-1] in calls]

        def read(groups: list[int]) -> list[Any]:
            source = pq.ParquetFile(path, metadata=pf.metadata)
            return [source.read_row_group(g, columns=call_leaves, use_threads=False) for g in groups]

        try:
            return pf, _in_threads(read, range(pf.num_row_groups))
        except (pa.ArrowException, OSError):  # a leaf pyarrow cannot decode: the whole read says what is wrong
            return None

    # whether the call leaves are read: known at once without calls_where, else from the narrow columns
    calls_needed: Future[bool] = Future()
    if calls_where is None:
        calls_needed.set_result(True)

    with ThreadPoolExecutor(max_workers=1) as background:
        pending = background.submit(read_calls)
        try:
            try:
                narrow = table.frame(path, columns=[c for c in columns if c != "messages"])
                if calls_where is not None:
                    calls_needed.set_result(bool(narrow.select(calls_where(narrow).any()).item()))
            finally:
                if not calls_needed.done():  # the reader thread waits on it, whatever was raised here
                    calls_needed.set_result(False)
        except Exception:
            if pending.result() is None:
                return None  # a file read otherwise: the whole read says what is wrong with it
            raise
        found = pending.result()
    if found is None:
        return None
    pf, call_parts = found
    import pyarrow as pa
    import pyarrow.parquet as pq

    meta = pf.metadata
    if meta.num_rows != narrow.height:
        return None
    if calls_needed.result():
        convo = pl.from_arrow(pa.concat_tables(call_parts))
        assert isinstance(convo, pl.DataFrame)
        narrow = narrow.with_columns(convo["messages"])
    else:  # the whole conversations, where table.frame read them to fill a null reply or prompt
        narrow = narrow.drop("messages", strict=False)
    order = schema.names()
    have = [c for c in order if c in narrow.columns and c != "messages"]
    rest = [c for c in order if c not in have]
    role_leaf = [leaf for leaf in (pf.schema.column(i).path for i in range(len(pf.schema)))
                 if leaf.split(".") == ["messages", "list", "element", "role"]]
    starts = np.cumsum([0] + [meta.row_group(g).num_rows for g in range(pf.num_row_groups)])
    # what the roles say, once known: (every role known, some conversation opens with a system
    # turn); and the whole read, taken where a role is not known
    state: dict[str, Any] = {"facts": None, "whole": None}
    # the message leaf read from its pages (set by the first fetch): its path, the other columns'
    # leaves, each row group's pages (None: every leaf in the batches)
    paging: dict[str, Any] = {"pages": None}

    def reader() -> pq.ParquetFile:  # a reader of the same file for one thread, its footer not read again
        return pq.ParquetFile(path, metadata=meta)

    def read_group(source: pq.ParquetFile, g: int, local: np.ndarray,
                   paged: bool = True) -> tuple[list[pa.Table], tuple[bool, bool]]:
        # a row group is decoded in batches up to its last kept row (the runs of groups go to
        # threads, a reader each); the kept rows of each batch are zero-copy slices (runs of
        # consecutive rows), copied out before the next (Table.take would import pyarrow.compute).
        # Where those batches reach the group's end the roles are checked in them; otherwise (and
        # in a group without kept rows) the group's roles are read alone, a small leaf. Where the
        # offset index allows, the largest message leaf (the texts) is left out of the batches and
        # decoded from the pages that hold kept rows only (_pages), then checked against them
        rows = int(starts[g + 1] - starts[g])
        pages = paging["pages"][g] if paged and local.size and paging["pages"] is not None else None
        choice = _pages.choose(pages, local, PAGE_FETCH_MAX_SHARE) if pages is not None else None
        # the batches reach the last kept row, and with paged texts every row of their pages (each is checked)
        reach = int(local[-1]) + 1 if local.size else 0
        if choice is None:
            pages = None  # no index, or most of the texts' pages hold a kept row: decoded whole in the batches
        else:
            assert pages is not None
            following = int(choice[0][-1]) + 1
            reach = max(reach, int(pages.first_rows[following]) if following < pages.first_rows.size else rows)
        size = int(min(FETCH_BATCH_ROWS, reach)) if local.size else 0
        to_end = bool(local.size) and ((reach - 1) // size + 1) * size >= rows
        facts = (True, False) if to_end else _role_facts(
            source.read_row_group(g, columns=role_leaf, use_threads=False).column(0).chunks, ROLES)
        parts: list[pa.Table] = []
        if not local.size or not facts[0]:
            return parts, facts
        columns = paging["skeleton"] if pages is not None else rest
        shapes: list[tuple[np.ndarray, np.ndarray]] = []  # each decoded row's message count and validity
        offset = 0
        for batch in source.iter_batches(batch_size=size, row_groups=[g], columns=columns, use_threads=False):
            if to_end:
                known, system = _role_facts([batch.column("messages")], ROLES)
                facts = (facts[0] and known, facts[1] or system)
                if not known:
                    break  # the whole read says what is wrong
            if pages is not None:
                shapes.append(_list_shape(batch.column("messages")))
            inside = local[(local >= offset) & (local < offset + batch.num_rows)] - offset
            if inside.size:
                pieces = [batch.slice(start, length) for start, length in _pages.runs(inside)]
                parts.append(pa.Table.from_batches(pieces).combine_chunks())
            offset += batch.num_rows
            if offset >= reach:
                break
        if pages is not None and facts[0]:
            whole_group = _with_paged_leaf(path, meta, g, local, pa.concat_tables(parts).combine_chunks(), shapes,
                                           pages, paging)
            if whole_group is None:  # declined or disagreed: the group's batches with every leaf
                return read_group(source, g, local, paged=False)
            parts = [whole_group]
        return parts, facts

    def read_groups(positions: np.ndarray) -> list[tuple[list[pa.Table], tuple[bool, bool]]] | None:
        group = np.searchsorted(starts, positions, side="right") - 1
        jobs = [(g, positions[group == g] - starts[g]) for g in range(pf.num_row_groups)]

        def read_run(run: list[tuple[int, np.ndarray]]) -> list[tuple[list[pa.Table], tuple[bool, bool]]]:
            source = reader()
            return [read_group(source, g, local) for g, local in run]

        try:
            found = _in_threads(read_run, jobs)
        except (pa.ArrowException, OSError):  # a page pyarrow cannot decode: the whole read's rows, or its error
            return None
        state["facts"] = (all(k for _, (k, _) in found), any(s for _, (_, s) in found))
        return found

    def whole() -> pl.DataFrame:
        # the whole read, once: it raises the error that names a bad role, or reads a role it renames
        if state["whole"] is None:
            try:
                state["whole"] = table.frame(path)
            except Exception as exc:
                state["whole"] = exc
        if isinstance(state["whole"], Exception):
            raise state["whole"]
        return state["whole"]

    def check_roles() -> None:
        if state["facts"] is None and read_groups(np.zeros(0, dtype=np.int64)) is None:
            state["facts"] = (False, False)
        if not state["facts"][0]:
            whole()

    def fetch(positions: pl.Series) -> pl.DataFrame:
        if positions.len() == 0:
            check_roles()
            return table.frame(table.scan(path).head(0), allow_empty=True)
        if "leaf" not in paging:
            paging.update(_paging_plan(path, pf, rest))
        found = read_groups(positions.cast(pl.Int64).to_numpy())
        if found is None or not state["facts"][0]:
            return take_rows(whole(), positions)
        wide = pl.from_arrow(pa.concat_tables([part for parts, _ in found for part in parts]))
        assert isinstance(wide, pl.DataFrame)
        # the decision columns of the kept rows, gathered column by column: an eager select over the
        # narrow frame (its conversations chunked otherwise than its columns) cost 0.06-0.2 s at 1M rows
        kept = pl.DataFrame([narrow.get_column(c).gather(positions) for c in have])
        out = table.frame(pl.concat([kept, wide], how="horizontal").select(order))
        # table.frame adds system_prompt when some conversation opens with a system turn: the whole
        # table's answer, which the kept rows alone might not give
        if state["facts"][1] and "system_prompt" not in out.columns:
            out = out.insert_column(out.columns.index("task_key"), pl.Series("system_prompt", [None] * out.height,
                                                                              dtype=pl.String))
        return out

    return narrow, Fetch(fetch, check_roles)


_F = TypeVar("_F", bound=Callable[..., Any])


def spooling(func: _F) -> _F:
    """Run a selector on ``table.spooled(rows)``: a JSONL path becomes a temporary Parquet file first.

    The selector then takes its Parquet path (``parquet_decisions``: the decision columns in one
    pass, the kept rows last) in bounded memory, with the rows and report the whole read of the
    JSONL file gives; the file is removed when the selector returns or raises. Any other
    ``rows`` passes through unchanged.
    """

    @functools.wraps(func)
    def run(rows: Any, /, *args: Any, **kwargs: Any) -> Any:
        with table.spooled(rows) as source:
            return func(source, *args, **kwargs)

    return run  # type: ignore[return-value]
