"""whileai: post-training for language-model agents that call tools.

``import whileai as wai``. Simulate the situations an agent meets against a world that fails on
purpose, grade every rollout, measure pass rates with honest intervals, select the rows that
carry training signal, guard against contamination and reward hacking, export for a trainer, and
prove the gain on a held-out set. Offline, no account, no key.

Names resolve lazily (PEP 562), so ``import whileai`` stays fast and never touches the network;
duckdb, httpx and scipy load only when a call that needs them runs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it (the one public door; CONVENTIONS.md point 1)
_LAZY: dict[str, str] = {
    # fluent data
    "RolloutData": "whileai.data",
    "ScoredData": "whileai.data",
    "Selection": "whileai.data",
    "SimulationData": "whileai.data",
    # table
    "frame": "whileai.table",
    "task_key": "whileai.table",
    # errors
    "WaiError": "whileai.errors",
    "SchemaError": "whileai.errors",
    "JudgeError": "whileai.errors",
    "PublishGateError": "whileai.errors",
    "TrainingSelectionError": "whileai.errors",
    "StoreError": "whileai.errors",
    "StageError": "whileai.errors",
    # defaults
    "BOOTSTRAP_DRAWS": "whileai.defaults",
    "CI_LEVEL": "whileai.defaults",
    "DIFFICULTY_BAND": "whileai.defaults",
    "HACK_THRESHOLD": "whileai.defaults",
    # report
    "Report": "whileai.report",
}

_SUBMODULES = ("cli", "data", "defaults", "errors", "export", "grade", "guard", "measure", "report", "select",
               "simulate", "stats", "store", "table", "testing", "verify")


def _register(module: str, names: tuple[str, ...]) -> None:
    for name in names:
        _LAZY.setdefault(name, module)


# Step packages list their public names here as they land (kept in sync by tests/test_public_api.py).
_register("whileai.measure", ("Comparison", "DeltaReport", "EvalVarianceReport", "FailureTable", "HoldoutSizeReport", "MarkerSummary", "MetricSummary", "PassAt", "SelfCheckReport", "compare", "compare_runs", "delta_report", "detectable_effect", "eval_variance", "failure_table", "format_delta_report", "holdout_size", "marker_summary", "metric_summary", "noise_band", "pass_at", "self_check", "task_stats"))
_register("whileai.simulate", ("Endpoint", "SimulationReport", "Tool", "quickstart", "seeded_agent", "simulate", "tool"))
_register("whileai.grade", ("Criterion", "Rubric", "attach_labels", "cheat_probes", "format_judge_trust", "judge_probes", "judge_trust", "rubric_judge", "run_judge"))
_register("whileai.select", ("Calibration", "PreferencePairs", "build_preference_pairs", "calibrate", "calibration_of", "curriculum", "format_curriculum", "group_signal", "group_stats", "optimize", "publish_gate", "retire_solved", "select", "select_for_rl", "select_for_sft"))
_register("whileai.export", ("export", "export_dataset", "export_environment", "export_preference", "export_training", "load_environment", "loss_mask", "preference_rows", "to_trl", "tool_call_roundtrip", "training_rows", "trl_dataset"))
_register("whileai.guard", ("STAGES", "Spec", "Trait", "decontaminate", "dedupe_groups", "format_hack_scan", "format_leak_report", "format_stages", "grounding_report", "hack_scan", "leak_report", "length_report", "load_spec", "mark_grounding", "near_duplicate_prompts", "refusal_report", "reward_correlations", "spec_version", "stage_of", "stage_report", "stamp_spec", "stamp_stage", "style_markers", "style_report", "trace_flag_report", "trace_markers", "ungrounded_arguments"))

# The step packages named like their main function are callable packages (whileai/_callable.py):
# wai.simulate(...), wai.select(...), wai.export(...) run the function, and the name stays the package.
for _name in ("export", "select", "simulate"):
    _LAZY.pop(_name, None)

__all__ = sorted([*_LAZY, "__version__", "export", "select", "simulate"])


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"whileai.{name}")
    raise AttributeError(f"module 'whileai' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(__all__) | set(_SUBMODULES))




if TYPE_CHECKING:  # pragma: no cover
    from whileai.data import RolloutData, ScoredData, Selection, SimulationData  # noqa: F401
