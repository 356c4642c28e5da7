"""Export: training rows a trainer takes as they are.

OpenAI wire rows, TRL rows, preference pairs and a ``verifiers`` environment, written streaming
and atomically to JSONL or Parquet.
"""

from whileai.export._environment import export_environment, load_environment
from whileai.export._export import (
    export_dataset,
    export_training,
    loss_mask,
    to_trl,
    tool_call_roundtrip,
    training_rows,
    trl_dataset,
)
from whileai.export._preference import export_preference, preference_rows
from whileai.export._report import (
    EnvironmentReport,
    ExportReport,
    PreferenceExportReport,
    ToolCallRoundtrip,
)

#: ``wai.export``: the same function object as export_dataset (whileai 0.131 ``export``).
export = export_dataset

__all__ = [
    "EnvironmentReport",
    "ExportReport",
    "PreferenceExportReport",
    "ToolCallRoundtrip",
    "export",
    "export_dataset",
    "export_environment",
    "export_preference",
    "export_training",
    "load_environment",
    "loss_mask",
    "preference_rows",
    "to_trl",
    "tool_call_roundtrip",
    "training_rows",
    "trl_dataset",
]

from whileai._callable import make_callable  # noqa: E402

make_callable(__name__)
