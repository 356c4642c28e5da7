"""What a type checker sees at the public door: mypy's ``reveal_type`` on ``wai.*`` names real parameters.

The file below is checked with mypy's API, third-party packages skipped (their types read as
``Any``: what is asserted is whileai's own parameters and return types), so the check takes a few
seconds of CPU with a fresh cache.
"""

from __future__ import annotations

import inspect
import re

import pytest

from whileai._aliases import ALIASES
from whileai._lazy import exports_of
from whileai.selection import select_for_rl, select_for_sft
from whileai.simulation import simulate as simulate_step

mypy_api = pytest.importorskip("mypy.api")

SKIPPED = "polars,numpy,pydantic,pydantic_core,pyarrow,duckdb,scipy,httpx,httpcore,starlette,jinja2,click,tqdm,uvicorn,anyio"
CONFIG = "[mypy]\nignore_missing_imports = True\nfollow_imports = silent\n" + "[mypy-{}]\nfollow_imports = skip\n".format(
    ",".join(f"{name}.*" for name in SKIPPED.split(",")))

#: Expression -> what reveal_type says of it.
PROBES = {
    "simulate": "wai.simulate",
    "simulate_local": "wai.simulate(budget=8)",
    "simulate_ray": 'wai.simulate(engine="ray", output="rows/")',
    "select": "wai.select",
    "select_rl_report": 'wai.select([], mode="rl").report',
    "select_sft_report": 'wai.select([], mode="sft").report',
    "select_ray": 'wai.select([], out="kept/")',
    "select_for_rl_report": "wai.select_for_rl([]).report",
    "select_for_sft_report": "wai.select_for_sft([]).report",
    "method_select": 'wai.ScoredData([]).select(mode="sft")',
    "train_holdout": "wai.TrainResult().holdout",
    "leak_leaked": "wai.leak_report([]).leaked",
    "delta_metrics": "wai.delta_report([], []).metrics",
    "delta_groups": "wai.delta_report([], []).groups",
    "sim_generation": "wai.SimulationReport().generation",
    "gate_signal": "wai.publish_gate([]).signal",
    "gate_calibration": "wai.publish_gate([]).calibration",
    "gate_duplicates": "wai.publish_gate([]).duplicates",
    "gate_near_duplicates": "wai.publish_gate([]).near_duplicate_prompts",
    "gate_length": "wai.publish_gate([]).length",
    "rl_signal": "wai.select_for_rl([]).report.signal",
    "train_knobs": "wai.TrainResult().knobs",
    "train_curve": "wai.TrainResult().curve",
    "train_selection": "wai.TrainResult().selection",
    "sim_lost": "wai.SimulationReport().lost",
    "sim_egress": "wai.SimulationReport().egress",
    "pairs_length": "wai.selection.PairsReport().length",
    "curriculum_trainable": "wai.curriculum([]).trainable",
    "curriculum_tiers": "wai.curriculum([]).tiers",
    "grade_failures": "wai.grade.GradeReport().failures",
    "refusal_examples": "wai.refusal_report([]).examples",
    "contamination_examples": "wai.decontaminate([], eval=[]).report.examples",
    "grounding_invented": "wai.grounding_report([]).invented",
    "trust_disagreements": "wai.judge_trust([]).disagreements",
    "style_markers": "wai.guard.style_report([]).markers",
    "trace_flags": "wai.guard.trace_flag_report([]).flags",
    "trace_markers": "wai.guard.trace_flag_report([]).markers",
    "trust_probes": "wai.judge_trust([]).probes",
    "describe_markers": "wai.store.describe([]).markers",
}
PUBLIC_FUNCTIONS = sorted(n for n in exports_of("whileai") if n[0].islower() and n not in ALIASES)


@pytest.fixture(scope="module")
def revealed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("door")
    lines = ["import whileai as wai"]
    lines += [f"reveal_type({expr})  # {key}" for key, expr in PROBES.items()]
    lines += [f"reveal_type(wai.{name})  # public:{name}" for name in PUBLIC_FUNCTIONS]
    (folder / "door.py").write_text("\n".join(lines) + "\n")
    (folder / "mypy.ini").write_text(CONFIG)
    out, err, _ = mypy_api.run(["--config-file", str(folder / "mypy.ini"), "--cache-dir", str(folder / "cache"),
                                "--no-error-summary", str(folder / "door.py")])
    keys = [line.rsplit("# ", 1)[1] for line in lines[1:]]
    notes = {}
    for line in out.splitlines():
        found = re.match(r".*door\.py:(\d+): note: Revealed type is \"(.*)\"$", line)
        if found:
            notes[keys[int(found.group(1)) - 2]] = found.group(2)
    assert len(notes) == len(keys), out + err
    return notes


def _overloads(text: str) -> list[str]:
    """The signatures of an ``Overload(def (...), def (...))`` reveal, in order."""
    return re.split(r"(?<=[\w\]]), def \(", text)


def _keyword_names(fn) -> list[str]:
    return [p.name for p in inspect.signature(fn).parameters.values() if p.kind is p.KEYWORD_ONLY]


def test_simulate_names_every_parameter_of_the_step(revealed):
    step = [{"score_rows": "grader", "user_audit": "user_judge"}.get(n, n) for n in _keyword_names(simulate_step)]
    local = _overloads(revealed["simulate"])[1]  # the local engine's overload
    assert "*args" not in revealed["simulate"]
    for name in step:
        if name != "num_workers":  # Ray's own option: the Ray overload names it
            assert f" {name}: " in local, name
    assert "engine: Literal['local']" in local and "engine: Literal['ray']" in revealed["simulate"]


def test_simulate_returns_what_the_engine_gives(revealed):
    assert revealed["simulate_local"] == "whileai.data.SimulationData"
    assert "whileai.table.raydata.FolderResult" in revealed["simulate_ray"]


def test_select_names_each_modes_options(revealed):
    rl, sft, ray = _overloads(revealed["select"])
    assert all(f" {name}: " in rl for name in _keyword_names(select_for_rl))
    assert all(f" {name}: " in sft for name in _keyword_names(select_for_sft))
    assert "mode: Literal['rl']" in rl and "mode: Literal['sft']" in sft and " out: " in ray


def test_selection_reports_are_typed(revealed):
    for key in ("select_rl_report", "select_for_rl_report"):
        assert revealed[key] == "whileai.selection._rl.RLSelectionReport"
    for key in ("select_sft_report", "select_for_sft_report"):
        assert revealed[key] == "whileai.selection._sft.SFTSelectionReport"
    assert revealed["method_select"] == "whileai.data.Selection[whileai.selection._sft.SFTSelectionReport]"
    assert "whileai.table.raydata.FolderResult" in revealed["select_ray"]


@pytest.mark.parametrize("name", PUBLIC_FUNCTIONS)
def test_no_public_function_is_untyped(revealed, name):
    text = revealed[f"public:{name}"]
    assert text != "Any" and "*args: Any" not in text, f"wai.{name}: {text}"


def test_report_blocks_are_typed(revealed):
    """A report field with a shape reads as its block, not ``dict[str, Any]`` (issue 41)."""
    assert revealed["train_holdout"] == "whileai.train._result.HeldOutRates | whileai.train._result.HeldOutNumbers | None"
    assert revealed["leak_leaked"] == "list[whileai.guard._leak.LeakedRow]"
    assert revealed["delta_metrics"] == "dict[str, whileai.measure._delta.MetricDelta]"
    assert revealed["delta_groups"] == "dict[str, whileai.measure._delta.GroupDelta]"
    assert revealed["sim_generation"] == "whileai.simulation._report.Generation"
    assert revealed["gate_signal"] == revealed["rl_signal"] == "whileai.selection._groups.Signal"
    assert revealed["gate_calibration"] == "whileai.selection._calibration.CalibrationCounts"
    assert revealed["gate_duplicates"] == "whileai.selection._hygiene.Duplicates"
    assert revealed["gate_near_duplicates"] == "whileai.selection._hygiene.NearDuplicateAsks"
    assert revealed["gate_length"] == "whileai.selection._hygiene.LengthSpread"
    assert revealed["train_knobs"] == "whileai.train._result.Knobs"
    assert revealed["train_curve"] == "list[whileai.train._result.CurvePoint]"
    assert revealed["train_selection"] == "whileai.train._profile.SelectionReport | None"
    assert revealed["sim_lost"] == "list[whileai.simulation._report.LostRollout]"
    assert revealed["sim_egress"] == "list[whileai.simulation._report.Egress]"
    assert revealed["pairs_length"] == "whileai.selection._pairs.PairLengths"
    assert revealed["curriculum_trainable"] == "list[whileai.selection._curriculum.CurriculumTask]"
    assert revealed["curriculum_tiers"] == "list[list[whileai.selection._curriculum.CurriculumTask]]"
    assert revealed["grade_failures"] == "list[whileai.grade._run.GradeFailure]"
    assert revealed["refusal_examples"] == "list[whileai.guard._style.RefusedRow]"
    assert revealed["contamination_examples"] == "list[whileai.guard._decontam.ContaminatedRow]"
    assert revealed["grounding_invented"] == "list[whileai.guard._grounding.InventedArgument]"
    assert revealed["trust_disagreements"] == "list[whileai.grade._trust.Disagreement]"
    assert revealed["style_markers"] == "dict[str, whileai.guard._style.StyleMarker]"
    assert revealed["trace_flags"] == "dict[str, whileai.guard._trace.TraceFlag]"
    assert revealed["trace_markers"] == "dict[str, whileai.guard._markers.MarkerShare]"
    assert revealed["trust_probes"] == "whileai.grade._probes.ProbeReport | None"
    assert revealed["describe_markers"] == "dict[str, whileai.store._describe.MarkerRows]"
