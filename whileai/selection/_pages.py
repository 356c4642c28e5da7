"""The pages of one Parquet leaf column that hold given rows, located by the file's offset index.

pyarrow decodes a column chunk from its first page to the rows asked for; it cannot start at a
page (apache/arrow#45284: the page index is written but not used to read). A conversation's
message texts are most of a whileai file's bytes, and Polars writes them in small pages (about
900 values each), so the 1,000 rows ``select`` keeps of a million sit in under a quarter of those
pages (docs/performance.md, eleventh pass). This module reads the offset index (each page's byte
range and first row, Parquet's ``PageIndex.md``), copies the pages that hold the kept rows one
after another where the chunk's data pages begin, and lets pyarrow decode that prefix: pages are
self-contained (each compressed alone) and, where an offset index is written, start at a row. One
page more follows them (pyarrow reads the next page header before it ends a batch) and is cut off.

The caller checks what comes back against a full decode of the other leaves of the same rows
(``whileai.selection._common``) and decodes the chunk whole wherever anything here declines or
disagrees.
"""

from __future__ import annotations

import io
import os
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["LeafPages", "choose", "leaf_pages", "read_leaf_rows", "runs"]

_MAX_DEPTH = 8  # the footer nests FileMetaData > RowGroup > ColumnChunk > ColumnMetaData > Statistics
_STOP, _TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(13)


class _Compact:
    """A bounded reader of Thrift's compact protocol, the encoding of Parquet's footer and page index.

    Each struct reads as a dict of field id to value (lists as lists, binary as bytes); unknown
    fields are read the same way, so nothing is skipped by guessing. A truncated or malformed
    buffer raises ``ValueError`` (Apache Thrift, "Thrift Compact protocol encoding").
    """

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _byte(self) -> int:
        if self.pos >= len(self.data):
            raise ValueError("truncated thrift")
        self.pos += 1
        return self.data[self.pos - 1]

    def _varint(self) -> int:
        out = shift = 0
        while True:
            byte = self._byte()
            out |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return out
            shift += 7
            if shift > 63:
                raise ValueError("varint too long")

    def _zigzag(self) -> int:
        n = self._varint()
        return (n >> 1) ^ -(n & 1)

    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError("truncated thrift")
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def struct(self, depth: int = 0) -> dict[int, Any]:
        """The next struct: field id to value."""
        if depth > _MAX_DEPTH:
            raise ValueError("thrift nested too deep")
        out: dict[int, Any] = {}
        last = 0
        while True:
            head = self._byte()
            kind = head & 0x0F
            if kind == _STOP:
                return out
            delta = head >> 4
            last = last + delta if delta else self._zigzag()
            out[last] = (kind == _TRUE) if kind in (_TRUE, _FALSE) else self._value(kind, depth)

    def _value(self, kind: int, depth: int) -> Any:
        if kind in (_TRUE, _FALSE):  # a bool inside a container: one byte
            return self._byte() == _TRUE
        if kind == _BYTE:
            return self._byte()
        if kind in (_I16, _I32, _I64):
            return self._zigzag()
        if kind == _DOUBLE:
            return struct.unpack("<d", self._take(8))[0]
        if kind == _BINARY:
            return self._take(self._varint())
        if kind in (_LIST, _SET):
            head = self._byte()
            size = head >> 4
            if size == 15:
                size = self._varint()
            if size > len(self.data) - self.pos + 1:
                raise ValueError("thrift list longer than its buffer")
            return [self._value(head & 0x0F, depth + 1) for _ in range(size)]
        if kind == _MAP:
            size = self._varint()
            if not size:
                return {}
            if size > len(self.data) - self.pos:
                raise ValueError("thrift map longer than its buffer")
            types = self._byte()
            return dict((self._value(types >> 4, depth + 1), self._value(types & 0x0F, depth + 1)) for _ in range(size))
        if kind == _STRUCT:
            return self.struct(depth + 1)
        raise ValueError(f"unknown thrift type {kind}")


@dataclass(frozen=True)
class LeafPages:
    """One column chunk's data pages: first row, byte offset and size (header included) of each."""

    first_rows: np.ndarray
    offsets: np.ndarray
    sizes: np.ndarray
    rows: int
    chunk_end: int


def leaf_pages(path: str | os.PathLike[str], meta: Any, column: int) -> list[LeafPages | None] | None:
    """Each row group's pages of leaf ``column`` from the offset index, or None without one.

    ``meta`` is pyarrow's ``FileMetaData`` of the file (for the chunks' byte ranges). A row group
    whose index is missing or inconsistent with its chunk (pages out of order, outside the chunk,
    not starting at row 0) is None in the list: that group is decoded whole.
    """
    if not all(meta.row_group(g).column(column).has_offset_index for g in range(meta.num_row_groups)):
        return None
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size < 12:
            return None
        handle.seek(size - 8)
        tail = handle.read(8)
        if tail[4:] != b"PAR1":  # an encrypted footer ("PARE"): not read here
            return None
        length = int.from_bytes(tail[:4], "little")
        if not 0 < length <= size - 12:
            return None
        handle.seek(size - 8 - length)
        try:
            groups = _Compact(handle.read(length)).struct().get(4, [])
        except ValueError:
            return None
        if len(groups) != meta.num_row_groups:
            return None
        out: list[LeafPages | None] = []
        for g, group in enumerate(groups):
            chunks = group.get(1, []) if isinstance(group, dict) else []
            chunk = chunks[column] if column < len(chunks) else {}
            out.append(_group_pages(handle, meta.row_group(g), column, chunk))
    return out


def _group_pages(handle: Any, group: Any, column: int, chunk: dict[int, Any]) -> LeafPages | None:
    """One row group's pages from its ColumnChunk (field 4/5: the offset index's place), checked."""
    at, length = chunk.get(4), chunk.get(5)
    if not isinstance(at, int) or not isinstance(length, int) or length <= 0 or 8 in chunk:  # 8: column encryption
        return None
    handle.seek(at)
    try:
        locations = _Compact(handle.read(length)).struct().get(1, [])
        first_rows = np.array([p[3] for p in locations], dtype=np.int64)
        offsets = np.array([p[1] for p in locations], dtype=np.int64)
        sizes = np.array([p[2] for p in locations], dtype=np.int64)
    except (ValueError, KeyError, TypeError, IndexError):
        return None
    meta = group.column(column)
    start = meta.dictionary_page_offset if meta.has_dictionary_page else meta.data_page_offset
    chunk_end = int(start) + int(meta.total_compressed_size)
    rows = int(group.num_rows)
    if (not first_rows.size or first_rows[0] != 0 or (np.diff(first_rows) <= 0).any() or first_rows[-1] >= rows
            or (sizes <= 0).any() or offsets[0] < start or (offsets[1:] < offsets[:-1] + sizes[:-1]).any()
            or offsets[-1] + sizes[-1] > chunk_end):
        return None
    return LeafPages(first_rows, offsets, sizes, rows, chunk_end)


class _Overlay(io.RawIOBase):
    """A file's bytes with one range replaced (what pyarrow reads the chosen pages from)."""

    def __init__(self, path: str | os.PathLike[str], at: int, blob: bytes) -> None:
        self._file = open(path, "rb")  # noqa: SIM115 - closed with the overlay
        self._size = self._file.seek(0, os.SEEK_END)
        self._at, self._blob = at, memoryview(blob)
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        self._pos = offset if whence == os.SEEK_SET else self._pos + offset if whence == os.SEEK_CUR else self._size + offset
        return self._pos

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        start = self._pos
        end = min(start + len(view), self._size)
        if end <= start:
            return 0
        blob_end = self._at + len(self._blob)
        for lo, hi in ((start, min(end, self._at)), (max(start, blob_end), end)):  # the file's own bytes
            if lo < hi:
                self._file.seek(lo)
                self._file.readinto(view[lo - start:hi - start])
        lo, hi = max(start, self._at), min(end, blob_end)
        if lo < hi:
            view[lo - start:hi - start] = self._blob[lo - self._at:hi - self._at]
        self._pos = end
        return end - start

    def close(self) -> None:
        self._file.close()
        super().close()


def choose(pages: LeafPages, local: np.ndarray, max_share: float) -> tuple[np.ndarray, int] | None:
    """The pages holding rows ``local`` (ascending) and the page read after them, or None where that does not pay.

    None where the chosen pages are more than ``max_share`` of the chunk's data bytes (a whole
    decode costs about the same), or leave no room in the chunk for the page that follows them.
    The page after is the next one, or the last chosen page again where they end the chunk.
    """
    if not local.size:
        return None
    first, sizes = pages.first_rows, pages.sizes
    chosen = np.unique(np.searchsorted(first, local, side="right") - 1)
    after = int(chosen[-1]) + 1 if chosen[-1] + 1 < first.size else int(chosen[-1])
    data_bytes = pages.chunk_end - int(pages.offsets[0])
    taken = int(sizes[chosen].sum())
    if taken > max_share * data_bytes or taken + int(sizes[after]) > data_bytes:
        return None
    return chosen, after


def read_leaf_rows(path: str | os.PathLike[str], meta: Any, group: int, leaf: str, pages: LeafPages,
                   local: np.ndarray, max_share: float) -> tuple[Any, np.ndarray, np.ndarray] | None:
    """Leaf ``leaf`` of rows ``local`` (ascending, within row group ``group``) decoded from their pages only.

    Returns the leaf's column for those rows (one pyarrow array, the leaf alone under its parents,
    as ``read_row_group(columns=[leaf])`` gives it), the row numbers of every row decoded (the
    chosen pages' rows, for the caller's check) and the decoded column for all of them; None where
    ``choose`` declines.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    choice = choose(pages, local, max_share)
    if choice is None:
        return None
    chosen, after = choice
    first, offsets, sizes = pages.first_rows, pages.offsets, pages.sizes
    ends = np.append(first[1:], pages.rows)
    span = int(offsets[chosen[0]]), int(offsets[max(int(chosen[-1]), after)] + sizes[max(int(chosen[-1]), after)])
    with open(path, "rb") as handle:  # the bytes from the first chosen page to the page after the last
        handle.seek(span[0])
        region = memoryview(handle.read(span[1] - span[0]))
    blob = b"".join(region[int(offsets[p]) - span[0]:int(offsets[p] + sizes[p]) - span[0]] for p in [*chosen, after])
    base = int(offsets[0])
    counts = ends[chosen] - first[chosen]
    n = int(counts.sum())
    overlay = _Overlay(path, base, blob)
    try:
        source = pq.ParquetFile(pa.PythonFile(overlay, mode="r"), metadata=meta)
        batch = next(iter(source.iter_batches(batch_size=n, row_groups=[group], columns=[leaf], use_threads=False)))
    finally:
        overlay.close()
    if batch.num_rows < n:
        return None
    column = batch.column(0).slice(0, n)
    # the row number of each decoded row: the chosen pages' rows, one page after another
    decoded = np.arange(n) + np.repeat(first[chosen] - (np.cumsum(counts) - counts), counts)
    where = np.searchsorted(decoded, local)
    if not where.size:
        return column.slice(0, 0), decoded, column
    return pa.concat_arrays([column.slice(start, length) for start, length in runs(where)]), decoded, column


def runs(positions: np.ndarray) -> list[tuple[int, int]]:
    """Ascending ``positions`` as runs of consecutive ones: ``(start, length)`` each, to slice without a gather."""
    breaks = np.flatnonzero(np.diff(positions) != 1) + 1
    return [(int(run[0]), len(run)) for run in np.split(positions, breaks)]
