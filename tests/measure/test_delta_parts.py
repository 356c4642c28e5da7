"""DeltaReport.metrics and .groups are typed (MetricDelta, GroupDelta) and dump what the dicts did.

``tests/data/delta_pin/delta_reports.json`` holds, per scenario below, ``model_dump_json()``,
``repr(model_dump())`` and ``to_json()`` as the code before the entries were typed wrote them
(pinned by running these scenarios on it): the same keys in the same order, NaN and None where
they were, lists where there were lists. The scenarios reach every way an entry is made or
changed: markers and a guard, ``by=`` groups, an unpaired NOT COMPARABLE (whose moved verdicts
are reset), a given and a derived run_std, balanced rollouts, too few tasks and empty arms.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tests.measure.test_delta import BASE, _table
from whileai.measure import DeltaReport, delta_report
from whileai.measure._delta import GroupDelta, MetricDelta

PINNED = json.loads((Path(__file__).parents[1] / "data" / "delta_pin" / "delta_reports.json").read_text())


def _scenario(name: str) -> DeltaReport:
    mk = np.clip(BASE + 0.2, 0, 1)
    if name == "pass_marker_guard":
        return delta_report(_table(BASE, seed=1, marker_rates=BASE),
                            _table(np.clip(BASE + 0.3, 0, 1), seed=2, policy="v2", marker_rates=mk * 0.5),
                            must_not_regress=["honest_claims"])
    if name == "by_tier":
        rates_after = np.where(np.arange(40) % 2 == 0, np.clip(BASE + 0.45, 0, 1), np.clip(BASE - 0.3, 0, 1))
        return delta_report(_table(BASE, seed=1, k=8), _table(rates_after, seed=2, k=8, policy="v2"), by="tier")
    if name == "unpaired":
        return delta_report(_table(BASE * 0.2, seed=1, marker_rates=BASE),
                            _table(np.clip(BASE + 0.6, 0, 1), seed=2, prefix="u", policy="v2", marker_rates=BASE))
    if name == "run_std":
        return delta_report(_table(BASE, seed=1), _table(np.clip(BASE + 0.05, 0, 1), seed=2, policy="v2"),
                            run_std=0.05, run_std_runs=3)
    if name == "derived_runs":
        runs_b = pl.concat([_table(BASE, seed=10 + i, eval_run=i) for i in range(3)])
        runs_a = pl.concat([_table(np.clip(BASE + 0.1, 0, 1), seed=20 + i, eval_run=i, policy="v2") for i in range(3)])
        return delta_report(runs_b, runs_a)
    if name == "balanced":
        return delta_report(_table(BASE, seed=1, k=4), _table(BASE, seed=2, k=6, policy="v2"), balance_rollouts=True)
    if name == "tiny":
        return delta_report(_table(BASE[:2], seed=1), _table(BASE[:2], seed=2, policy="v2"))
    assert name == "empty"
    return delta_report([], [])


_FLOAT = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?")


def _digits(text: str) -> str:
    """The text with every decimal number at 12 significant digits: the pins were taken with one
    SciPy, and a p-value's last digits move between releases (make test-floor runs SciPy 1.13)."""
    return _FLOAT.sub(lambda m: format(float(m.group()), ".12g"), text)


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_report_dumps_what_it_did(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = _scenario(name)
    assert all(isinstance(m, MetricDelta) for m in report.metrics.values())
    assert all(type(g) is GroupDelta for g in report.groups.values())
    pinned = PINNED[name]
    assert _digits(report.model_dump_json()) == _digits(pinned["dump_json"])
    assert _digits(repr(report.model_dump())) == _digits(pinned["dump_repr"])
    assert _digits(report.to_json()) == _digits(pinned["to_json"])
    # a stored report's entries load back to the same JSON (its NaN top-level floats, stored as null, do not
    # validate as float: a limit of DeltaReport older than the typed entries)
    stored = json.loads(pinned["dump_json"])
    back = DeltaReport.model_validate({"metrics": stored["metrics"], "groups": stored["groups"]})
    assert json.dumps(back.model_dump(mode="json")["metrics"]) == json.dumps(stored["metrics"])
    assert json.dumps(back.model_dump(mode="json")["groups"]) == json.dumps(stored["groups"])


def test_entries_read_as_the_dicts_did():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by = _scenario("by_tier")
        unpaired = _scenario("unpaired")
    t = by.metrics["pass_at_1"]
    assert t["gain_verdict"] == t.gain_verdict == by.target_verdict and t.get("noise_band") is None
    assert by.groups["odd"]["direction"] == by.groups["odd"].direction == "down" and by.groups_down == ["odd"]
    assert "gain_verdict" not in by.groups["odd"]  # a group entry has the compare_runs keys only
    assert t == json.loads(PINNED["by_tier"]["to_json"])["metrics"]["pass_at_1"]
    # NOT COMPARABLE on 0 paired tasks: the test's b_better is no gain, and the report's lists forget it
    p1 = unpaired.metrics["pass_at_1"]
    assert (p1.verdict, p1.gain_verdict, p1.n_paired) == ("b_better", "insufficient_data", 0)
    assert unpaired.improved == [] and unpaired.target_verdict == "insufficient_data"
