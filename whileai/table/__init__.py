"""The rollout table: schema, readers, writers, task identity and derived columns."""

from whileai.table._kind import StepResult, is_fluent, like_input, meta_of
from whileai.table._normalize import CANONICAL_JSON
from whileai.table._normalize import dumps as canonical_json
from whileai.table._read import IntoRows, frame, read_jsonl_rows, scan
from whileai.table._write import (
    atomic_path,
    check_output,
    iter_rows,
    message_out,
    open_binary,
    output_format,
    rows,
    sweep_temp_files,
    to_arrow,
    write,
    write_jsonl,
    write_parquet,
)
from whileai.table.derive import (
    final_reply,
    length_confound,
    markers_of,
    n_tool_calls,
    n_turns,
    pair_length_delta,
    reply_chars,
    task_key,
    task_key_expr,
    tools_used,
)
from whileai.table.schema import COLUMNS, MESSAGE, PRIVILEGED_COLUMNS, TOOL_CALL, Column

__all__ = [
    "CANONICAL_JSON",
    "COLUMNS",
    "MESSAGE",
    "PRIVILEGED_COLUMNS",
    "TOOL_CALL",
    "Column",
    "IntoRows",
    "StepResult",
    "atomic_path",
    "canonical_json",
    "check_output",
    "final_reply",
    "frame",
    "is_fluent",
    "length_confound",
    "iter_rows",
    "like_input",
    "markers_of",
    "message_out",
    "meta_of",
    "n_tool_calls",
    "n_turns",
    "open_binary",
    "output_format",
    "pair_length_delta",
    "read_jsonl_rows",
    "reply_chars",
    "rows",
    "scan",
    "sweep_temp_files",
    "task_key",
    "task_key_expr",
    "to_arrow",
    "tools_used",
    "write",
    "write_jsonl",
    "write_parquet",
]
