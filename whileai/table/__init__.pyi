# The public names of whileai.table, one line each and nowhere else. At run time __init__.py
# hands this file to whileai/_lazy.py, which imports a name's module on its first use; type
# checkers and editors read it for the types.

from . import normalize as normalize
from . import raydata as raydata
from ._arrow import list_series as list_series
from ._decisions import take_rows as take_rows
from ._formats import forcing as forcing
from ._hash import content_hash as content_hash
from ._hash import short_hash as short_hash
from ._hash import tasks_hash as tasks_hash
from ._kind import Fluent as Fluent
from ._kind import FluentT as FluentT
from ._kind import HasFrame as HasFrame
from ._kind import IntoRows as IntoRows
from ._kind import StepResult as StepResult
from ._kind import is_fluent as is_fluent
from ._kind import is_ray_dataset as is_ray_dataset
from ._kind import like_input as like_input
from ._kind import meta_of as meta_of
from ._lazy import lazy_frame as lazy_frame
from ._mapping import parse_pairs
from ._read import frame as frame
from ._read import parquet_files as parquet_files
from ._read import read_jsonl_rows as read_jsonl_rows
from ._read import scan as scan
from ._rowdicts import JSON_COLUMNS as JSON_COLUMNS
from ._rowdicts import column_values as column_values
from ._rowdicts import message_out as message_out
from ._rowdicts import no_gc as no_gc
from ._rowdicts import row_dicts as row_dicts
from ._source import Source as Source
from ._source import source as source
from ._spool import spooled as spooled
from ._write import atomic_path as atomic_path
from ._write import check_output as check_output
from ._write import frame_format as frame_format
from ._write import iter_rows as iter_rows
from ._write import open_binary as open_binary
from ._write import output_format as output_format
from ._write import rows as rows
from ._write import sweep_temp_files as sweep_temp_files
from ._write import to_arrow as to_arrow
from ._write import write as write
from ._write import write_frame as write_frame
from ._write import write_jsonl as write_jsonl
from ._write import write_parquet as write_parquet
from .derive import final_reply as final_reply
from .derive import markers_of as markers_of
from .derive import n_tool_calls as n_tool_calls
from .derive import n_turns as n_turns
from .derive import pair_length_delta as pair_length_delta
from .derive import reply_chars as reply_chars
from .derive import task_key as task_key
from .derive import task_key_expr as task_key_expr
from .derive import tools_used as tools_used
from .normalize import CANONICAL_JSON as CANONICAL_JSON
from .normalize import dumps
from .raydata import read_dataset as read_dataset
from .schema import COLUMNS as COLUMNS
from .schema import MESSAGE as MESSAGE
from .schema import PRIVILEGED_COLUMNS as PRIVILEGED_COLUMNS
from .schema import TOOL_CALL as TOOL_CALL
from .schema import Column as Column

canonical_json = dumps
parse_mapping = parse_pairs
