"""A probe's outcome is a typed block (ProbeResult) that dumps the JSON it did as a dict."""

from __future__ import annotations

import json

from whileai.grade._probes import ProbeReport, ProbeResult

# as judge_probes dumped them when each probe's outcome was a dict (both kinds, and a skipped probe)
STORED = {
    "filler": {"n": 40, "kind": "additive", "errors": 0, "flips_up": 3, "flips_down": 1, "net_flips": 2,
               "pass_before": 0.5, "pass_after": 0.55, "denominator": 20, "exploit_rate": 0.1,
               "ci95": [0.0279, 0.3010], "low_power": False, "resolves": None, "flagged": False},
    "empty_success": {"n": 40, "kind": "replacement", "errors": 2, "passes": 9, "pass_before": 0.5,
                      "pass_after": 0.2368, "denominator": 38, "exploit_rate": 0.2368, "ci95": [0.13, 0.39],
                      "low_power": False, "resolves": None, "flagged": True},
    "keyword_stuffing": {"n": 0, "skipped": "no rubric words to stuff"},
}


def test_a_stored_probe_report_loads_into_blocks_and_dumps_the_same_json():
    report = ProbeReport.model_validate({"judge_name": "j", "n": 40, "probes": STORED})
    assert all(isinstance(p, ProbeResult) for p in report.probes.values())
    assert json.loads(report.model_dump_json())["probes"] == STORED
    assert list(report.to_dict()["probes"]["filler"]) == list(STORED["filler"])  # the key order too
    assert report.probes["empty_success"]["flagged"] and report.probes["keyword_stuffing"].get("skipped")
    assert "keyword_stuffing" in report.render() and "EXPLOITABLE" in report.render()
