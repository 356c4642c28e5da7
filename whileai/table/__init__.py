"""The rollout table: schema, readers, writers, task identity and derived columns.

Other packages import only the names here and the public modules ``derive``, ``normalize``
(message and JSON normalisation), ``schema`` and ``raydata`` (the Ray engine's shared pieces,
``docs/scale.md``); the ``_`` modules are this package's own.
"""

from typing import TYPE_CHECKING

from whileai._lazy import exports
from whileai.table import normalize
from whileai.table._kind import (
    Fluent,
    FluentT,
    HasFrame,
    IntoRows,
    StepResult,
    is_fluent,
    is_ray_dataset,
    like_input,
    meta_of,
)
from whileai.table._mapping import parse_pairs as parse_mapping
from whileai.table._rowdicts import JSON_COLUMNS, column_values, message_out, no_gc, row_dicts
from whileai.table.derive import (
    final_reply,
    markers_of,
    n_tool_calls,
    n_turns,
    pair_length_delta,
    reply_chars,
    task_key,
    task_key_expr,
    tools_used,
)
from whileai.table.normalize import CANONICAL_JSON
from whileai.table.normalize import dumps as canonical_json
from whileai.table.schema import COLUMNS, MESSAGE, PRIVILEGED_COLUMNS, TOOL_CALL, Column

#: The readers, the writers (pyarrow.parquet) and the Ray pieces load on first use
#: (whileai/_lazy.py): a call on a DataFrame in memory never pays for them.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "whileai.table._arrow": ("list_series",),
    "whileai.table._formats": ("forcing",),
    "whileai.table._hash": ("content_hash", "short_hash", "tasks_hash"),
    "whileai.table._lazy": ("lazy_frame",),
    "whileai.table._read": ("frame", "parquet_files", "read_jsonl_rows", "scan"),
    "whileai.table._decisions": ("take_rows",),
    "whileai.table._source": ("Source", "source"),
    "whileai.table._spool": ("spooled",),
    "whileai.table._write": ("atomic_path", "check_output", "frame_format", "iter_rows", "open_binary", "output_format",
                             "rows", "sweep_temp_files", "to_arrow", "write", "write_frame", "write_jsonl",
                             "write_parquet"),
    "whileai.table.raydata": ("read_dataset",),
}
__getattr__, __dir__ = exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - what type checkers see: the table above (tested)
    from whileai.table._arrow import list_series as list_series
    from whileai.table._decisions import take_rows as take_rows
    from whileai.table._formats import forcing as forcing
    from whileai.table._hash import content_hash as content_hash
    from whileai.table._hash import short_hash as short_hash
    from whileai.table._hash import tasks_hash as tasks_hash
    from whileai.table._lazy import lazy_frame as lazy_frame
    from whileai.table._read import frame as frame
    from whileai.table._read import parquet_files as parquet_files
    from whileai.table._read import read_jsonl_rows as read_jsonl_rows
    from whileai.table._read import scan as scan
    from whileai.table._source import Source as Source
    from whileai.table._source import source as source
    from whileai.table._spool import spooled as spooled
    from whileai.table._write import atomic_path as atomic_path
    from whileai.table._write import check_output as check_output
    from whileai.table._write import frame_format as frame_format
    from whileai.table._write import iter_rows as iter_rows
    from whileai.table._write import open_binary as open_binary
    from whileai.table._write import output_format as output_format
    from whileai.table._write import rows as rows
    from whileai.table._write import sweep_temp_files as sweep_temp_files
    from whileai.table._write import to_arrow as to_arrow
    from whileai.table._write import write as write
    from whileai.table._write import write_frame as write_frame
    from whileai.table._write import write_jsonl as write_jsonl
    from whileai.table._write import write_parquet as write_parquet
    from whileai.table.raydata import read_dataset as read_dataset

__all__ = [
    "CANONICAL_JSON",
    "COLUMNS",
    "Column",
    "Fluent",
    "FluentT",
    "HasFrame",
    "IntoRows",
    "JSON_COLUMNS",
    "MESSAGE",
    "PRIVILEGED_COLUMNS",
    "Source",
    "StepResult",
    "TOOL_CALL",
    "atomic_path",
    "canonical_json",
    "check_output",
    "column_values",
    "content_hash",
    "final_reply",
    "forcing",
    "frame",
    "frame_format",
    "is_fluent",
    "is_ray_dataset",
    "iter_rows",
    "lazy_frame",
    "like_input",
    "list_series",
    "markers_of",
    "message_out",
    "meta_of",
    "n_tool_calls",
    "n_turns",
    "no_gc",
    "normalize",
    "open_binary",
    "output_format",
    "pair_length_delta",
    "parquet_files",
    "parse_mapping",
    "raydata",
    "read_dataset",
    "read_jsonl_rows",
    "reply_chars",
    "row_dicts",
    "rows",
    "scan",
    "short_hash",
    "source",
    "spooled",
    "sweep_temp_files",
    "take_rows",
    "task_key",
    "task_key_expr",
    "tasks_hash",
    "to_arrow",
    "tools_used",
    "write",
    "write_jsonl",
    "write_frame",
    "write_parquet",
]
