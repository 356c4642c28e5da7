"""whileai: post-training for language-model agents that call tools.

``import whileai as wai``. Simulate the situations an agent meets against a world that fails on
purpose, grade every rollout, measure pass rates with honest intervals, select the rows that
carry training signal, guard against contamination and reward hacking, export for a trainer, and
prove the gain on a held-out set. Offline, no account, no key.

Names resolve lazily (PEP 562), so ``import whileai`` stays fast and never touches the network;
duckdb, httpx and scipy load only when a call that needs them runs. Type checkers read the
``TYPE_CHECKING`` block below, so ``wai.pass_at`` has its real signature there.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from whileai._aliases import ALIASES
from whileai._version import __version__ as __version__

#: Public name -> the module that defines it: the one public door (docs/architecture.md).
_PUBLIC: dict[str, str] = {
    # whileai.data
    "PreferencePairs": "whileai.data",
    "RolloutData": "whileai.data",
    "build_preference_pairs": "whileai.data",
    "ScoredData": "whileai.data",
    "Selection": "whileai.data",
    "SimulationData": "whileai.data",
    "calibrate": "whileai.data",
    "run_judge": "whileai.data",
    "select": "whileai.data",
    "select_for_rl": "whileai.data",
    "select_for_sft": "whileai.data",
    "simulate": "whileai.data",
    # whileai._loop
    "quickstart": "whileai._loop",
    # whileai.table
    "IntoRows": "whileai.table",
    "StepResult": "whileai.table",
    "frame": "whileai.table",
    "task_key": "whileai.table",
    # whileai.errors
    "JudgeError": "whileai.errors",
    "PublishGateError": "whileai.errors",
    "SchemaError": "whileai.errors",
    "StageError": "whileai.errors",
    "StoreError": "whileai.errors",
    "TrainingSelectionError": "whileai.errors",
    "WaiError": "whileai.errors",
    # whileai.defaults
    "BOOTSTRAP_DRAWS": "whileai.defaults",
    "CI_LEVEL": "whileai.defaults",
    "DIFFICULTY_BAND": "whileai.defaults",
    "HACK_THRESHOLD": "whileai.defaults",
    # whileai.report
    "Report": "whileai.report",
    # whileai.measure
    "Comparison": "whileai.measure",
    "DeltaReport": "whileai.measure",
    "EvalVarianceReport": "whileai.measure",
    "FailureTable": "whileai.measure",
    "HoldoutSizeReport": "whileai.measure",
    "MarkerSummary": "whileai.measure",
    "MetricSummary": "whileai.measure",
    "PassAt": "whileai.measure",
    "SelfCheckReport": "whileai.measure",
    "compare_runs": "whileai.measure",
    "delta_report": "whileai.measure",
    "detectable_effect": "whileai.measure",
    "eval_variance": "whileai.measure",
    "failure_table": "whileai.measure",
    "format_delta_report": "whileai.measure",
    "group_stats": "whileai.measure",
    "holdout_size": "whileai.measure",
    "marker_summary": "whileai.measure",
    "metric_summary": "whileai.measure",
    "noise_band": "whileai.measure",
    "pass_at": "whileai.measure",
    "self_check": "whileai.measure",
    "task_stats": "whileai.measure",
    # whileai.simulation
    "Endpoint": "whileai.simulation",
    "SimulationReport": "whileai.simulation",
    "Tool": "whileai.simulation",
    "seeded_agent": "whileai.simulation",
    "tool": "whileai.simulation",
    # whileai.grade
    "Criterion": "whileai.grade",
    "Rubric": "whileai.grade",
    "attach_labels": "whileai.grade",
    "format_judge_trust": "whileai.grade",
    "judge_probes": "whileai.grade",
    "judge_trust": "whileai.grade",
    "rubric_judge": "whileai.grade",
    # whileai.selection
    "Calibration": "whileai.selection",
    "calibration_of": "whileai.selection",
    "curriculum": "whileai.selection",
    "group_signal": "whileai.selection",
    "publish_gate": "whileai.selection",
    "retire_solved": "whileai.selection",
    # whileai.exporters
    "export_dataset": "whileai.exporters",
    "export_environment": "whileai.exporters",
    "export_preference": "whileai.exporters",
    "load_environment": "whileai.exporters",
    "loss_mask": "whileai.exporters",
    "preference_rows": "whileai.exporters",
    "push_to_hub": "whileai.exporters",
    "to_trl": "whileai.exporters",
    "tool_call_roundtrip": "whileai.exporters",
    "training_rows": "whileai.exporters",
    "trl_dataset": "whileai.exporters",
    # whileai.guard
    "STAGES": "whileai.guard",
    "Spec": "whileai.guard",
    "Trait": "whileai.guard",
    "decontaminate": "whileai.guard",
    "dedupe_groups": "whileai.guard",
    "grounding_report": "whileai.guard",
    "hack_scan": "whileai.guard",
    "leak_report": "whileai.guard",
    "length_report": "whileai.guard",
    "load_spec": "whileai.guard",
    "mark_grounding": "whileai.guard",
    "near_duplicate_prompts": "whileai.guard",
    "refusal_report": "whileai.guard",
    "reward_correlations": "whileai.guard",
    "spec_version": "whileai.guard",
    "stage_of": "whileai.guard",
    "stage_report": "whileai.guard",
    "stamp_spec": "whileai.guard",
    "stamp_stage": "whileai.guard",
    "style_markers": "whileai.guard",
    "style_report": "whileai.guard",
    "trace_flag_report": "whileai.guard",
    "trace_markers": "whileai.guard",
    "ungrounded_arguments": "whileai.guard",
}

_SUBMODULES = ("cli", "data", "defaults", "errors", "exporters", "grade", "guard", "measure", "platform", "report",
               "selection", "simulation", "stats", "store", "table", "testing", "train", "verify")


def _register(module: str, names: tuple[str, ...]) -> None:
    """Add a package's public names to the door (one line per package, kept in sync by tests)."""
    for name in names:
        _PUBLIC.setdefault(name, module)


_register("whileai.train", ("HackMonitor", "TrainResult", "format_hack_monitor", "profile", "selection_report", "trl_reward"))
_register("whileai.train.judge", ("reward_model",))  # the trained RM as a judge; wai.train.reward_model trains one
_register("whileai.platform", ("Behavior", "Example", "Harness", "PlatformError", "attach_delta", "attach_holdout", "track"))

__all__ = sorted([*_PUBLIC, *ALIASES, "__version__"])


def __getattr__(name: str) -> Any:
    alias = ALIASES.get(name)
    target = alias.preferred if alias is not None else name
    module = _PUBLIC.get(target)
    if module is not None:
        value = getattr(importlib.import_module(module), target)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"whileai.{name}")
    raise AttributeError(f"module 'whileai' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(__all__) | set(_SUBMODULES))


if TYPE_CHECKING:  # pragma: no cover - what type checkers see: _PUBLIC and ALIASES, nothing else (tested)
    from whileai._loop import (
        quickstart as quickstart,
    )
    from whileai.data import (
        PreferencePairs as PreferencePairs,
    )
    from whileai.data import (
        RolloutData as RolloutData,
    )
    from whileai.data import (
        ScoredData as ScoredData,
    )
    from whileai.data import (
        Selection as Selection,
    )
    from whileai.data import (
        SimulationData as SimulationData,
    )
    from whileai.data import (
        build_preference_pairs as build_preference_pairs,
    )
    from whileai.data import (
        calibrate as calibrate,
    )
    from whileai.data import (
        run_judge as run_judge,
    )
    from whileai.data import select as optimize  # noqa: F401 - an alias (whileai/_aliases.py)
    from whileai.data import (
        select as select,
    )
    from whileai.data import (
        select_for_rl as select_for_rl,
    )
    from whileai.data import (
        select_for_sft as select_for_sft,
    )
    from whileai.data import (
        simulate as simulate,
    )
    from whileai.defaults import (
        BOOTSTRAP_DRAWS as BOOTSTRAP_DRAWS,
    )
    from whileai.defaults import (
        CI_LEVEL as CI_LEVEL,
    )
    from whileai.defaults import (
        DIFFICULTY_BAND as DIFFICULTY_BAND,
    )
    from whileai.defaults import (
        HACK_THRESHOLD as HACK_THRESHOLD,
    )
    from whileai.errors import (
        JudgeError as JudgeError,
    )
    from whileai.errors import (
        PublishGateError as PublishGateError,
    )
    from whileai.errors import (
        SchemaError as SchemaError,
    )
    from whileai.errors import (
        StageError as StageError,
    )
    from whileai.errors import (
        StoreError as StoreError,
    )
    from whileai.errors import (
        TrainingSelectionError as TrainingSelectionError,
    )
    from whileai.errors import (
        WaiError as WaiError,
    )
    from whileai.exporters import export_dataset as export  # noqa: F401 - an alias (whileai/_aliases.py)
    from whileai.exporters import (
        export_dataset as export_dataset,
    )
    from whileai.exporters import export_dataset as export_training  # noqa: F401 - an alias (whileai/_aliases.py)
    from whileai.exporters import (
        export_environment as export_environment,
    )
    from whileai.exporters import (
        export_preference as export_preference,
    )
    from whileai.exporters import (
        load_environment as load_environment,
    )
    from whileai.exporters import (
        loss_mask as loss_mask,
    )
    from whileai.exporters import (
        preference_rows as preference_rows,
    )
    from whileai.exporters import (
        push_to_hub as push_to_hub,
    )
    from whileai.exporters import (
        to_trl as to_trl,
    )
    from whileai.exporters import (
        tool_call_roundtrip as tool_call_roundtrip,
    )
    from whileai.exporters import (
        training_rows as training_rows,
    )
    from whileai.exporters import (
        trl_dataset as trl_dataset,
    )
    from whileai.grade import (
        Criterion as Criterion,
    )
    from whileai.grade import (
        Rubric as Rubric,
    )
    from whileai.grade import (
        attach_labels as attach_labels,
    )
    from whileai.grade import (
        format_judge_trust as format_judge_trust,
    )
    from whileai.grade import judge_probes as cheat_probes  # noqa: F401 - an alias (whileai/_aliases.py)
    from whileai.grade import (
        judge_probes as judge_probes,
    )
    from whileai.grade import (
        judge_trust as judge_trust,
    )
    from whileai.grade import (
        rubric_judge as rubric_judge,
    )
    from whileai.guard import (
        STAGES as STAGES,
    )
    from whileai.guard import (
        Spec as Spec,
    )
    from whileai.guard import (
        Trait as Trait,
    )
    from whileai.guard import (
        decontaminate as decontaminate,
    )
    from whileai.guard import (
        dedupe_groups as dedupe_groups,
    )
    from whileai.guard import (
        grounding_report as grounding_report,
    )
    from whileai.guard import (
        hack_scan as hack_scan,
    )
    from whileai.guard import (
        leak_report as leak_report,
    )
    from whileai.guard import (
        length_report as length_report,
    )
    from whileai.guard import (
        load_spec as load_spec,
    )
    from whileai.guard import (
        mark_grounding as mark_grounding,
    )
    from whileai.guard import (
        near_duplicate_prompts as near_duplicate_prompts,
    )
    from whileai.guard import (
        refusal_report as refusal_report,
    )
    from whileai.guard import (
        reward_correlations as reward_correlations,
    )
    from whileai.guard import (
        spec_version as spec_version,
    )
    from whileai.guard import (
        stage_of as stage_of,
    )
    from whileai.guard import (
        stage_report as stage_report,
    )
    from whileai.guard import (
        stamp_spec as stamp_spec,
    )
    from whileai.guard import (
        stamp_stage as stamp_stage,
    )
    from whileai.guard import (
        style_markers as style_markers,
    )
    from whileai.guard import (
        style_report as style_report,
    )
    from whileai.guard import (
        trace_flag_report as trace_flag_report,
    )
    from whileai.guard import (
        trace_markers as trace_markers,
    )
    from whileai.guard import (
        ungrounded_arguments as ungrounded_arguments,
    )
    from whileai.measure import (
        Comparison as Comparison,
    )
    from whileai.measure import (
        DeltaReport as DeltaReport,
    )
    from whileai.measure import (
        EvalVarianceReport as EvalVarianceReport,
    )
    from whileai.measure import (
        FailureTable as FailureTable,
    )
    from whileai.measure import (
        HoldoutSizeReport as HoldoutSizeReport,
    )
    from whileai.measure import (
        MarkerSummary as MarkerSummary,
    )
    from whileai.measure import (
        MetricSummary as MetricSummary,
    )
    from whileai.measure import (
        PassAt as PassAt,
    )
    from whileai.measure import (
        SelfCheckReport as SelfCheckReport,
    )
    from whileai.measure import (
        compare_runs as compare_runs,
    )
    from whileai.measure import delta_report as compare  # noqa: F401 - an alias (whileai/_aliases.py)
    from whileai.measure import (
        delta_report as delta_report,
    )
    from whileai.measure import (
        detectable_effect as detectable_effect,
    )
    from whileai.measure import (
        eval_variance as eval_variance,
    )
    from whileai.measure import (
        failure_table as failure_table,
    )
    from whileai.measure import (
        format_delta_report as format_delta_report,
    )
    from whileai.measure import (
        group_stats as group_stats,
    )
    from whileai.measure import (
        holdout_size as holdout_size,
    )
    from whileai.measure import (
        marker_summary as marker_summary,
    )
    from whileai.measure import (
        metric_summary as metric_summary,
    )
    from whileai.measure import (
        noise_band as noise_band,
    )
    from whileai.measure import (
        pass_at as pass_at,
    )
    from whileai.measure import (
        self_check as self_check,
    )
    from whileai.measure import (
        task_stats as task_stats,
    )
    from whileai.platform import (
        Behavior as Behavior,
    )
    from whileai.platform import (
        Example as Example,
    )
    from whileai.platform import (
        Harness as Harness,
    )
    from whileai.platform import (
        PlatformError as PlatformError,
    )
    from whileai.platform import (
        attach_delta as attach_delta,
    )
    from whileai.platform import (
        attach_holdout as attach_holdout,
    )
    from whileai.platform import (
        track as track,
    )
    from whileai.report import (
        Report as Report,
    )
    from whileai.selection import (
        Calibration as Calibration,
    )
    from whileai.selection import (
        calibration_of as calibration_of,
    )
    from whileai.selection import (
        curriculum as curriculum,
    )
    from whileai.selection import (
        group_signal as group_signal,
    )
    from whileai.selection import (
        publish_gate as publish_gate,
    )
    from whileai.selection import (
        retire_solved as retire_solved,
    )
    from whileai.simulation import (
        Endpoint as Endpoint,
    )
    from whileai.simulation import (
        SimulationReport as SimulationReport,
    )
    from whileai.simulation import (
        Tool as Tool,
    )
    from whileai.simulation import (
        seeded_agent as seeded_agent,
    )
    from whileai.simulation import (
        tool as tool,
    )
    from whileai.table import (
        IntoRows as IntoRows,
    )
    from whileai.table import (
        StepResult as StepResult,
    )
    from whileai.table import (
        frame as frame,
    )
    from whileai.table import (
        task_key as task_key,
    )
    from whileai.train import (
        HackMonitor as HackMonitor,
    )
    from whileai.train import (
        TrainResult as TrainResult,
    )
    from whileai.train import (
        format_hack_monitor as format_hack_monitor,
    )
    from whileai.train import (
        profile as profile,
    )
    from whileai.train import (
        selection_report as selection_report,
    )
    from whileai.train import (
        trl_reward as trl_reward,
    )
    from whileai.train.judge import (
        reward_model as reward_model,
    )
