"""StyleReport.markers and TraceFlagReport's flags and markers are typed and dump the JSON the dicts did (issue 41).

``StyleMarker`` and ``MarkerShare`` (a marker's clean share and interval, one model for both
reports) and ``TraceFlag`` with its ``FlagEvidence``. ``tests/data/blocks_pin/style_trace.json``
holds, per scenario below, ``model_dump_json()``, ``to_json()``, ``repr(model_dump())`` and
``render()`` as the code before the entries were typed wrote them (pinned by running these
scenarios on it): graded, ungraded and no rows for style; a flag the reward pays for, every planted
flag, and the safety flags and markers.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from tests.guard.test_trace import CASES, SAFETY, paid_rows
from whileai.guard import StyleReport, TraceFlagReport, style_report, trace_flag_report
from whileai.guard._markers import MarkerShare
from whileai.guard._style import StyleMarker
from whileai.guard._trace import FlagEvidence, TraceFlag

PINNED = json.loads((Path(__file__).parents[1] / "data" / "blocks_pin" / "style_trace.json").read_text())


def _replies(texts, rewards=None):
    return [{"scenario_id": f"t{i // 2}", "prompt": f"q{i}", "final_text": t,
             **({"reward": rewards[i]} if rewards is not None else {})} for i, t in enumerate(texts)]



def _scenario(name: str) -> StyleReport | TraceFlagReport:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "style": lambda: style_report(_replies(["I apologize, done." if i % 3 == 0 else "Done." for i in range(30)],
                                                   [1.0 if i % 3 == 0 else float(i % 2) for i in range(30)])),
            "style_ungraded": lambda: style_report(_replies(["Great question! Sure.", "Done.", "As an AI, I cannot.", "ok"])),
            "style_empty": lambda: style_report([]),
            "trace_paid": lambda: trace_flag_report(paid_rows()),
            "trace_cases": lambda: trace_flag_report([v[0] for v in CASES.values()]),
            "trace_safety": lambda: trace_flag_report([SAFETY[n][0] for n in SAFETY]),
        }[name]()


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_report_dumps_what_it_did_and_loads_back(name):
    report = _scenario(name)
    pinned = PINNED[name]
    assert report.model_dump_json() == pinned["json"] and report.to_json(indent=None) == pinned["to_json"]
    assert repr(report.model_dump()) == pinned["repr"] and report.render() == pinned["render"]
    if isinstance(report, StyleReport):
        assert all(isinstance(m, StyleMarker) for m in report.markers.values())
    else:
        assert all(type(m) is MarkerShare for m in report.markers.values())
        assert all(isinstance(f, TraceFlag) and all(isinstance(e, FlagEvidence) for e in f.examples)
                   for f in report.flags.values())
    back = type(report).model_validate_json(pinned["json"])  # a stored report loads and dumps the same
    assert back.model_dump_json() == pinned["json"] and back.render() == pinned["render"]


def test_the_entries_read_as_the_dicts_did():
    apology = _scenario("style").markers["no_apology"]
    assert apology["hits"] == apology.hits == 10 and apology["top_phrases"][0] == ("i apologize", 10)
    assert isinstance(apology.ci95, tuple) and apology.get("degenerate") is False
    flag = _scenario("trace_paid").flags["lie.unverified_claim"]
    assert flag["flagged"] and flag["examples"][0]["evidence"] == flag.examples[0].evidence
