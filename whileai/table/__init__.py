"""The rollout table: schema, readers, writers, task identity and derived columns.

Other packages import only the names here and the public modules ``derive``, ``normalize``
(message and JSON normalisation), ``schema`` and ``raydata`` (the Ray engine's shared pieces,
``docs/scale.md``); the ``_`` modules are this package's own.
"""

from whileai.table import normalize, raydata
from whileai.table._kind import (
    Fluent,
    FluentT,
    HasFrame,
    IntoRows,
    StepResult,
    is_fluent,
    like_input,
    meta_of,
)
from whileai.table._lazy import lazy_frame
from whileai.table._mapping import parse_pairs as parse_mapping
from whileai.table._read import frame, read_jsonl_rows, scan
from whileai.table._rowdicts import JSON_COLUMNS, column_values, no_gc, row_dicts
from whileai.table._write import (
    atomic_path,
    check_output,
    frame_format,
    iter_rows,
    message_out,
    open_binary,
    output_format,
    rows,
    sweep_temp_files,
    to_arrow,
    write,
    write_frame,
    write_jsonl,
    write_parquet,
)
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
from whileai.table.raydata import is_ray_dataset, read_dataset
from whileai.table.schema import COLUMNS, MESSAGE, PRIVILEGED_COLUMNS, TOOL_CALL, Column

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
    "StepResult",
    "TOOL_CALL",
    "atomic_path",
    "canonical_json",
    "check_output",
    "column_values",
    "final_reply",
    "frame",
    "frame_format",
    "is_fluent",
    "is_ray_dataset",
    "iter_rows",
    "lazy_frame",
    "like_input",
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
    "parse_mapping",
    "raydata",
    "read_dataset",
    "read_jsonl_rows",
    "reply_chars",
    "row_dicts",
    "rows",
    "scan",
    "sweep_temp_files",
    "task_key",
    "task_key_expr",
    "to_arrow",
    "tools_used",
    "write",
    "write_jsonl",
    "write_frame",
    "write_parquet",
]
