"""select(mode="rl"): drop counts per reason and in order, round-robin order, stamps, errors."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tests.selection._helpers import group, reference_rl, row, wilson_reference
from whileai import optimize, select_for_rl
from whileai.data import ScoredData, Selection
from whileai.errors import ArgumentError, TrainingSelectionError
from whileai.selection import calibration_of
from whileai.testing import rollout_table

FIXTURE = Path(__file__).parents[1] / "data" / "wai131" / "scored.jsonl"


def known_table() -> list[dict]:
    """Every drop reason once or twice, with the truth worked out by hand in the tests below."""
    a = group("tA", [1.0, 0.0, 1.0, 0.0], fault="timeout") + [row("tA", 0.0, calls=(), reply=None, index=9)]
    b = group("tB", [1.0, 1.0, 1.0, 0.0], fault="stale")
    b.append(copy.deepcopy(b[0]))  # the same trajectory twice
    c = group("tC", [1.0] * 9 + [0.0])
    d = group("tD", [1.0] + [0.0] * 9)
    e = group("tE", [1.0] * 4)
    f = group("tF", [0.0] * 4) + [row("tF", 0.0, calls=(), reply="... !!", index=8)]
    g0 = row("tG", 1.0, reply="same reply", index=0)
    g = [g0, copy.deepcopy(g0), row("tG", 0.0, reply="cut off mid", truncated=True, index=2)]
    h = group("tH", [0.0, 1.0, None, 0.0, 1.0], fault="timeout")
    i = group("tI", [1.0, 0.0, 0.0, 1.0, 0.0, 1.0])
    i[0]["truncated"] = True
    return a + b + c + d + e + f + g + h + i


def test_every_drop_count_matches_the_hand_worked_truth():
    rows = known_table()
    sel = select_for_rl(rows, target=None)
    r = sel.report
    assert r.n == len(rows) == 53
    assert r.gates == {"no_output": 1, "garbage": 1, "ungraded": 1}
    assert r.junk_dropped == 3
    assert r.duplicates["n_dropped"] == 2 and r.duplicates["groups_affected"] == 2
    assert r.truncated_dropped == 2 and r.truncated_found == 2
    assert r.unanimous_groups_dropped == 3
    assert r.unanimous == {"all_pass": 1, "all_fail": 1, "single": 1}
    assert r.collapsed_groups_dropped == 1  # tG was mixed as graded
    assert r.band_dropped == {"too_easy": 1, "too_hard": 1} and r.band_groups_dropped == 2
    assert r.dropped == {"privileged_leak": 0, "junk": 3, "duplicate": 2, "truncated": 2, "unanimous": 9, "band": 20, "target": 0}
    assert r.groups_eligible == 4 and r.groups_selected == 4
    assert r.n_selected == 17 == r.n - sum(r.dropped.values())
    assert sel.df["task_key"].unique(maintain_order=True).to_list() == ["tA", "tB", "tI", "tH"]


def test_drop_counts_agree_with_a_plain_python_reference_on_random_tables():
    rng = np.random.default_rng(5)
    for trial in range(4):
        rows = []
        for t in range(30):
            k = int(rng.integers(2, 9))
            p = float(rng.random())
            for j in range(k):
                reply = str(rng.choice(["ok done", "done", "", "..."], p=[0.6, 0.25, 0.1, 0.05]))
                calls = () if rng.random() < 0.3 else (("get_order", {"id": str(rng.integers(0, 2))}),)
                reward = None if rng.random() < 0.05 else float(rng.random() < p)
                rows.append(row(f"t{trial}-{t}", reward, calls=calls, reply=reply, index=j,
                                truncated=bool(rng.random() < 0.1), fault=str(rng.choice(["timeout", "stale"]))))
        for policy in ("drop", "keep", "penalize"):
            ref = reference_rl(rows, truncated=policy)
            try:
                r = select_for_rl(rows, target=None, truncated=policy).report
            except TrainingSelectionError:
                assert not ref["eligible"]
                continue
            assert r.gates == {k: ref["gates"].get(k, 0) for k in ("no_output", "garbage", "ungraded")}
            assert r.duplicates["n_dropped"] == ref["duplicates"]
            assert r.truncated_found == ref["truncated"]
            assert r.unanimous_groups_dropped == len(ref["unanimous"])
            assert r.dropped["unanimous"] == ref["unanimous_rows"]
            assert r.band_dropped == {"too_easy": len(ref["too_easy"]), "too_hard": len(ref["too_hard"])}
            assert r.groups_selected == len(ref["eligible"])
            assert r.n_selected == sum(ref["rows"].values())


def test_round_robin_across_fault_kinds_then_pass_rates_and_middle_order():
    rows = known_table()
    # spread: timeout(tA .4, tH .5), stale(tB), no fault(tI) -> tA, tB, tI, then tH
    spread = select_for_rl(rows, target=None).df["task_key"].unique(maintain_order=True).to_list()
    assert spread == ["tA", "tB", "tI", "tH"]
    middle = select_for_rl(rows, target=None, order="middle").df["task_key"].unique(maintain_order=True).to_list()
    assert middle == ["tH", "tB", "tI", "tA"]


def test_spread_takes_a_low_a_middle_and_a_high_ask_in_turn():
    rates = {"m1": [1, 1, 0, 0], "h1": [1, 1, 1, 0], "l1": [1, 0, 0, 0], "m2": [1, 1, 0, 0], "l2": [1, 0, 0, 0],
             "h2": [1, 1, 1, 0]}
    rows = [r for t, rw in rates.items() for r in group(t, [float(x) for x in rw])]
    spread = select_for_rl(rows, target=None, band=(0.0, 1.0)).df["task_key"].unique(maintain_order=True).to_list()
    assert spread == ["l1", "m1", "h1", "l2", "m2", "h2"]
    middle = select_for_rl(rows, target=None, band=(0.0, 1.0), order="middle")
    assert middle.df["task_key"].unique(maintain_order=True).to_list() == ["m1", "m2", "h1", "l1", "l2", "h2"]


def test_kinds_alternate_in_first_seen_order():
    rows = (group("x1", [1.0, 0.0], fault="timeout") + group("y1", [1.0, 0.0], fault="stale")
            + group("x2", [1.0, 0.0], fault="timeout") + group("x3", [0.0, 1.0], fault="timeout")
            + group("y2", [0.0, 1.0], fault="stale"))
    order = select_for_rl(rows, target=None).df["task_key"].unique(maintain_order=True).to_list()
    assert order == ["x1", "y1", "x2", "y2", "x3"]
    assert select_for_rl(rows, target=None).report.fault_kinds == {"timeout": 3, "stale": 2}


@pytest.mark.parametrize(("target", "groups", "n"), [(8, ["tA", "tB"], 8), (12, ["tA", "tB"], 8),
                                                     (13, ["tA", "tB", "tI"], 13), (1, ["tA"], 4)])
def test_target_takes_whole_groups_and_never_splits(target, groups, n):
    sel = select_for_rl(known_table(), target=target)
    assert sel.df["task_key"].unique(maintain_order=True).to_list() == groups
    assert sel.report.n_selected == n
    assert sel.report.dropped["target"] == 17 - n
    if target == 1:
        assert any("more than target=1" in w for w in sel.report.warnings)


def test_band_edges_are_inclusive():
    rows = group("lo", [1.0, 0.0, 0.0, 0.0, 0.0]) + group("hi", [1.0, 1.0, 1.0, 1.0, 0.0]) + group("in", [1.0, 0.0])
    sel = select_for_rl(rows, target=None)
    assert set(sel.df["task_key"].to_list()) == {"lo", "hi", "in"}
    sel2 = select_for_rl(rows, target=None, band=(0.25, 0.75))
    assert set(sel2.df["task_key"].to_list()) == {"in"}
    assert sel2.report.band_dropped == {"too_easy": 1, "too_hard": 1}
    assert set(select_for_rl(rows, target=None, band=(0.25, 0.75), enforce_band=False).df["task_key"]) == {"lo", "hi", "in"}


def test_calibration_stamps_match_the_wilson_formula_and_count_k_as_graded():
    sel = select_for_rl(known_table(), target=None)
    truth = {"tA": (2, 5), "tB": (4, 5), "tH": (2, 4), "tI": (3, 6)}  # passes, graded rollouts before the prune
    for r in sel.rows():
        cal = calibration_of(r)
        assert cal is not None
        c, n = truth[r["scenario_id"]]
        assert cal.task_id == r["scenario_id"] and cal.n == n
        assert cal.pass_rate == pytest.approx(c / n)
        lo, hi = wilson_reference(c, n)
        assert cal.pass_rate_ci95 == pytest.approx((round(lo, 4), round(hi, 4)), abs=1e-9)
        assert cal.student.version == "pol@1"


def test_truncated_keep_and_penalize():
    rows = group("t", [1.0, 0.0, 1.0, 0.0]) + [row("t", 1.0, reply="long and cut", truncated=True, index=7)]
    kept = select_for_rl(rows, truncated="keep", target=None)
    assert kept.report.truncated_kept == 1 and kept.report.truncated_selected == 1
    assert kept.df.filter(pl.col("overlong"))["final_text"].to_list() == ["long and cut"]
    pen = select_for_rl(rows, truncated="penalize", target=None)
    cut = pen.df.filter(pl.col("reward_before_penalty").is_not_null())
    assert cut["reward"].to_list() == [0.0] and cut["reward_before_penalty"].to_list() == [1.0]
    assert pen.report.truncated_penalized == 1
    # the stamp keeps the pass rate as graded (3 of 5), not the penalized one
    assert calibration_of(pen.rows()[0]).pass_rate == pytest.approx(0.6)
    dropped = select_for_rl(rows, target=None)
    assert dropped.report.n_selected == 4 and "overlong" not in dropped.df.columns


def test_penalize_can_rescue_an_all_pass_ask_as_failure_contrast():
    rows = group("t", [1.0, 1.0, 1.0]) + [row("t", 1.0, reply="cut", truncated=True, index=5)]
    with pytest.raises(TrainingSelectionError):
        select_for_rl(rows, target=None)  # all pass once the truncated one is dropped
    with pytest.raises(TrainingSelectionError, match="too easy"):
        select_for_rl(rows, target=None, truncated="penalize")  # mixed now, but measured at 4/4 > 0.8
    assert select_for_rl(rows, target=None, truncated="penalize", enforce_band=False).report.n_selected == 4


def test_report_hygiene_warnings_and_print():
    sel = select_for_rl(known_table(), target=None)
    text = str(sel)
    assert text.startswith("rl selection: kept 17 of 53 rows")
    assert "unanimous groups dropped: 3; duplicates dropped: 2; truncated drop: 2" in text
    assert any("fewer than 16" in w for w in sel.report.hygiene_warnings)
    assert any("pass^k and pass@k do not survive the prune" in w for w in sel.report.hygiene_warnings)
    firm = select_for_rl(rollout_table(12, 16, pass_rates=[0.5] * 12, seed=1), target=None)
    assert not any("fewer than 16" in w for w in firm.report.hygiene_warnings)
    assert firm.report.band_rollouts == 16


def test_pooled_correlations_match_numpy_and_flag_at_threshold():
    rng = np.random.default_rng(3)
    rows = []
    for t in range(20):
        for j in range(6):
            reward = float(rng.random() < 0.5)
            reply = "word " * int(5 + 20 * reward + rng.integers(0, 5))
            rows.append(row(f"t{t}", reward, reply=reply, index=j))
    sel = select_for_rl(rows, target=None, band=(0.0, 1.0))
    df = sel.df
    expected = np.corrcoef(df["reward"].to_numpy(), df["final_text"].str.len_chars().to_numpy())[0, 1]
    corr = sel.report.correlations
    assert corr["correlations"]["reply_length"] == pytest.approx(expected, abs=1e-4)
    assert corr["correlations"]["tool_calls"] is None  # constant: one call everywhere
    assert "reply_length" in corr["flagged"]
    assert any("rewards reply length" in w for w in sel.report.hygiene_warnings)


def test_eval_sourced_rows_are_counted_and_warned_not_dropped():
    rows = group("t", [1.0, 0.0, 1.0, 0.0], source="eval") + group("u", [1.0, 0.0], source="grade")
    sel = select_for_rl(rows, target=None)
    assert sel.report.eval_sourced == 4 and sel.report.eval_sourced_input == 4
    assert sel.report.n_selected == 6
    assert any("evaluate()" in w for w in sel.report.warnings)


def test_hack_scan_runs_only_with_endorsed_and_degrades_gracefully(monkeypatch):
    import sys
    import types

    seen = {}

    def fake_scan(rows, *, endorsed=()):
        seen["endorsed"] = list(endorsed)
        seen["n"] = rows.height
        return {"regime": "train", "warnings": ["fake scan warning"]}

    fake = types.ModuleType("whileai.guard")
    fake.hack_scan = fake_scan
    monkeypatch.setitem(sys.modules, "whileai.guard", fake)
    rows = known_table()
    assert select_for_rl(rows, target=None).report.hack_scan is None
    sel = select_for_rl(rows, target=None, endorsed=["tool:get_order"])
    assert seen == {"endorsed": ["tool:get_order"], "n": 17}
    assert sel.report.hack_scan["regime"] == "train"
    assert "fake scan warning" in sel.report.hygiene_warnings
    assert "hack scan: train" in str(sel)


def test_ungraded_empty_band_and_bad_arguments_raise_clear_errors():
    with pytest.raises(TrainingSelectionError, match="Grade first"):
        select_for_rl(group("t", [None, None]))
    with pytest.raises(TrainingSelectionError, match="must keep at least one group.*unanimous"):
        select_for_rl(group("t", [1.0, 1.0]) + group("u", [0.0, 0.0]))
    with pytest.raises(ArgumentError, match="truncated must be one of 'drop', 'keep', 'penalize', got 'cut'"):
        select_for_rl(known_table(), truncated="cut")
    with pytest.raises(ArgumentError, match="order must be one of 'spread', 'middle'"):
        select_for_rl(known_table(), order="random")
    with pytest.raises(ArgumentError, match="band must satisfy"):
        select_for_rl(known_table(), band=(0.8, 0.2))
    with pytest.raises(ArgumentError, match="target must be an integer"):
        select_for_rl(known_table(), target=0)
    with pytest.raises(ArgumentError, match="mode must be one of 'rl', 'sft', got 'dpo'"):
        optimize(known_table(), mode="dpo")
    with pytest.raises(ArgumentError, match="belong to mode='sft'"):
        optimize(known_table(), mode="rl", select="top_k_overall")
    with pytest.raises(ArgumentError, match="belong to mode='rl'"):
        optimize(known_table(), mode="sft", truncated="keep")


def test_fluent_select_returns_a_selection_carrying_meta_and_leaves_input_alone():
    rows = known_table()
    before = copy.deepcopy(rows)
    scored = ScoredData(rows, meta={"system_prompt": "Help.", "tools": []})
    sel = scored.select(mode="rl", target=8)
    assert isinstance(sel, Selection)
    assert sel.meta == {"system_prompt": "Help.", "tools": [], "mode": "rl"}
    assert rows == before
    assert "calibration" not in scored.df.columns


def test_wai_select_is_a_plain_function_however_the_step_package_was_imported():
    import inspect

    import whileai
    import whileai.selection as package  # the step package has its own name, so it never shadows wai.select

    rows = known_table()
    assert package.publish_gate is not None and whileai.optimize is optimize is whileai.select
    assert inspect.isfunction(whileai.select) and "training signal" in inspect.getdoc(whileai.select)
    assert whileai.select(rows, mode="rl", target=8).report.n_selected == 8
    assert whileai.select_for_rl is select_for_rl
    assert inspect.signature(whileai.select_for_rl).return_annotation == "Selection"


def test_matches_whileai_0131_on_its_own_quickstart_rows():
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    sel = optimize(rows, mode="rl")
    r = sel.report
    # whileai 0.131 printed: kept 11 of 32 rows; unanimous groups dropped: 3; duplicates dropped: 18; groups kept: 4
    assert (r.n_selected, r.n, r.unanimous_groups_dropped, r.duplicates["n_dropped"], r.groups_selected) == (11, 32, 3, 18, 4)
    assert r.band_groups_dropped == 0


def test_replies_quoting_their_privileged_context_are_dropped_first():
    key = "already done: say so and do not repeat the action"
    rows = group("t", [1.0, 0.0, 1.0, 0.0, 1.0], privileged={"reference": key})
    rows[0]["final_text"] = rows[0]["messages"][-1]["content"] = f"Per the reference, {key}."
    sel = select_for_rl(rows, target=None)
    assert sel.report.privileged_leaks_dropped == 1
    assert sel.report.privileged_leaks["n_checked"] == 5 and sel.report.dropped["privileged_leak"] == 1
    assert sel.report.n_selected == 4 and "Per the reference" not in " ".join(sel.df["final_text"].to_list())
    assert calibration_of(sel.rows()[0]).n == 5  # the stamp is over the rows as graded
    assert "privileged leaks dropped: 1" in str(sel)


def test_an_asks_fault_kind_is_its_most_common_one_ties_alphabetical():
    def ask(task, faults):
        rows = group(task, [float(i % 2) for i in range(len(faults))])
        for r, f in zip(rows, faults):
            if f is not None:
                r["fault_kind"] = f
        return rows

    rows = (ask("a", ["timeout", "timeout", "stale", None]) + ask("b", ["timeout", "stale"])
            + ask("c", [None, None]) + ask("d", ["stale", None, "rate_limit", "rate_limit"]))
    sel = select_for_rl(rows, target=None, band=(0.0, 1.0))
    assert sel.report.fault_kinds == {"timeout": 1, "stale": 1, "no fault": 1, "rate_limit": 1}
    order = sel.df["task_key"].unique(maintain_order=True).to_list()
    assert order == ["a", "b", "c", "d"]  # one ask per kind, kinds in first-seen order


def test_first_and_duplicated_match_one_stable_sort():
    from whileai.selection._rl import _first_and_duplicated

    rng = np.random.default_rng(3)
    for n in (0, 1, 7, 5_000):
        h = rng.integers(0, max(2, n // 3), n).astype(np.uint64)
        order = np.argsort(h, kind="stable")
        ranked = h[order]
        start = np.r_[True, ranked[1:] != ranked[:-1]] if n else np.zeros(0, bool)
        run = np.cumsum(start) - 1
        first, dup = np.empty(n, bool), np.empty(n, bool)
        first[order] = start
        dup[order] = np.bincount(run)[run] > 1 if n else np.zeros(0, bool)
        got_first, got_dup = _first_and_duplicated(pl.Series("h", h))
        assert got_first.to_list() == first.tolist() and got_dup.to_list() == dup.tolist()
