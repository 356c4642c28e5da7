"""The decision columns of a Parquet file first, its kept rows last: the speed path behind ``table.source``.

A selector decides from a few columns (task, reward, reply, flags) and the tool calls of each
conversation; the message texts, most of a file, are needed only for the rows it keeps.
``parquet_decisions`` reads the first, and returns a :class:`Fetch` that reads the second. It is
used only by ``whileai.table._source`` (``Source.read`` / ``Source.take``) and only where the
switch ``FAST_READ`` is on (docs/performance.md has the measured gain). Nothing outside
``table/`` touches pyarrow's Parquet reader.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np
import polars as pl

from whileai.defaults import FETCH_BATCH_ROWS, FETCH_THREADS
from whileai.table import _read
from whileai.table._parquet import parquet_file

__all__ = ["Fetch", "parquet_decisions", "take_rows"]



def take_rows(df: pl.DataFrame, positions: pl.Series) -> pl.DataFrame:
    """The rows of ``df`` at ``positions`` (ascending row numbers), in that order.

    A boolean mask, not a gather: gathering nested columns (conversations) from a many-chunk
    table costs far more than filtering it (0.03 s against 0.2 to 0.8 s for 1,000 of 1M rows).
    """
    mask = pl.int_range(pl.len(), dtype=pl.Int64).is_in(positions.cast(pl.Int64).implode())
    return df.filter(mask)



class Fetch:
    """The kept rows of a Parquet file read decisions first (``parquet_decisions``), and its role check.

    Calling it with ascending row positions returns those rows of the whole table. The roles of
    every message are checked on the way (the fetch decodes the conversations anyway), so a
    file with a role the whole read refuses raises that read's error from the fetch;
    ``check_roles`` runs the same check without fetching (``Source.__exit__`` runs it when a step
    raises while deciding).
    """

    def __init__(self, read: Callable[[pl.Series], pl.DataFrame], check_roles: Callable[[], None]) -> None:
        self._read = read
        self.check_roles = check_roles

    def __call__(self, positions: pl.Series) -> pl.DataFrame:
        return self._read(positions)


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



_BYTE_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)  # the low k bytes of a word


def _le_word(piece: bytes) -> np.uint64:
    """Up to eight bytes as the little-endian word ``_string_codes`` compares against."""
    return np.uint64(int.from_bytes(piece, "little"))


def _runs(positions: np.ndarray) -> list[tuple[int, int]]:
    """Ascending ``positions`` as runs of consecutive ones: ``(start, length)`` each, to slice without a gather."""
    breaks = np.flatnonzero(np.diff(positions) != 1) + 1
    return [(int(run[0]), len(run)) for run in np.split(positions, breaks)]


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
    decisions inside a ``table.source`` block, so an error it raises waits for that check.

    It applies only where that gives the rows ``table.frame`` would give: a single Parquet file
    whose columns carry their canonical names and types (``messages`` as whileai writes it,
    string ``prompt`` and ``final_text``, 0.131 ``steps`` beside them as JSON text, as a JSONL
    file spooled by ``table.spooled`` holds them) that pyarrow and Polars read to the same types (a
    privileged column is fine: the leak check reads the texts itself, a chunk at a time through
    ``Source.take``). Anything else returns None and the caller reads the whole table.
    """
    path = parquet_file(rows)
    if path is None:
        return None
    from whileai.table.schema import MESSAGE, ROLES, alias_map

    try:
        schema = pl.scan_parquet(path).collect_schema()
    except Exception:  # not readable here: table.frame says why
        return None
    names = set(schema.names())
    # declined, for the whole read: a column under another name (an alias the whole read renames),
    # TRL's `completion` (the whole read may build turns from it), or (below) types pyarrow and
    # Polars read differently
    if (schema.get("messages") != pl.List(MESSAGE) or schema.get("prompt") != pl.String
            or schema.get("final_text") != pl.String or names & (set(alias_map()) | {"completion"})
            or schema.get("steps", pl.String) != pl.String):
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
                narrow = _read.frame(path, columns=[c for c in columns if c != "messages"])
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
    def reader() -> pq.ParquetFile:  # a reader of the same file for one thread, its footer not read again
        return pq.ParquetFile(path, metadata=meta)

    def read_group(source: pq.ParquetFile, g: int, local: np.ndarray) -> tuple[list[pa.Table], tuple[bool, bool]]:
        # a row group is decoded in batches up to its last kept row (the runs of groups go to
        # threads, a reader each); the kept rows of each batch are zero-copy slices (runs of
        # consecutive rows), copied out before the next (Table.take would import pyarrow.compute).
        # Where those batches reach the group's end the roles are checked in them; otherwise (and
        # in a group without kept rows) the group's roles are read alone, a small leaf
        rows = int(starts[g + 1] - starts[g])
        reach = int(local[-1]) + 1 if local.size else 0
        size = int(min(FETCH_BATCH_ROWS, reach)) if local.size else 0
        to_end = bool(local.size) and ((reach - 1) // size + 1) * size >= rows
        facts = (True, False) if to_end else _role_facts(
            source.read_row_group(g, columns=role_leaf, use_threads=False).column(0).chunks, ROLES)
        parts: list[pa.Table] = []
        if not local.size or not facts[0]:
            return parts, facts
        offset = 0
        for batch in source.iter_batches(batch_size=size, row_groups=[g], columns=rest, use_threads=False):
            if to_end:
                known, system = _role_facts([batch.column("messages")], ROLES)
                facts = (facts[0] and known, facts[1] or system)
                if not known:
                    break  # the whole read says what is wrong
            inside = local[(local >= offset) & (local < offset + batch.num_rows)] - offset
            if inside.size:
                pieces = [batch.slice(start, length) for start, length in _runs(inside)]
                parts.append(pa.Table.from_batches(pieces).combine_chunks())
            offset += batch.num_rows
            if offset >= reach:
                break
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
                state["whole"] = _read.frame(path)
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
            return _read.frame(_read.scan(path).head(0), allow_empty=True)
        found = read_groups(positions.cast(pl.Int64).to_numpy())
        if found is None or not state["facts"][0]:
            return take_rows(whole(), positions)
        wide = pl.from_arrow(pa.concat_tables([part for parts, _ in found for part in parts]))
        assert isinstance(wide, pl.DataFrame)
        # the decision columns of the kept rows, gathered column by column: an eager select over the
        # narrow frame (its conversations chunked otherwise than its columns) cost 0.06-0.2 s at 1M rows
        kept = pl.DataFrame([narrow.get_column(c).gather(positions) for c in have])
        out = _read.frame(pl.concat([kept, wide], how="horizontal").select(order))
        # table.frame adds system_prompt when some conversation opens with a system turn: the whole
        # table's answer, which the kept rows alone might not give
        if state["facts"][1] and "system_prompt" not in out.columns:
            out = out.insert_column(out.columns.index("task_key"), pl.Series("system_prompt", [None] * out.height,
                                                                              dtype=pl.String))
        return out

    return narrow, Fetch(fetch, check_roles)


