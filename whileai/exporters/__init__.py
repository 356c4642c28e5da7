"""Export: training rows a trainer takes as they are.

OpenAI wire rows, TRL rows, preference pairs and a ``verifiers`` environment, written streaming
and atomically to JSONL or Parquet, or pushed to the Hugging Face Hub with a dataset card.
"""

from whileai.exporters._environment import export_environment, load_environment
from whileai.exporters._export import (
    export_dataset,
    loss_mask,
    to_trl,
    tool_call_roundtrip,
    training_rows,
    trl_dataset,
)
from whileai.exporters._hub import HubPush, push_to_hub
from whileai.exporters._preference import export_preference, preference_rows
from whileai.exporters._report import (
    EnvironmentReport,
    ExportReport,
    PreferenceExportReport,
    ToolCallRoundtrip,
)

__all__ = [
    "EnvironmentReport",
    "ExportReport",
    "HubPush",
    "PreferenceExportReport",
    "ToolCallRoundtrip",
    "export_dataset",
    "export_environment",
    "export_preference",
    "load_environment",
    "loss_mask",
    "preference_rows",
    "push_to_hub",
    "to_trl",
    "tool_call_roundtrip",
    "training_rows",
    "trl_dataset",
]
