"""``wai inspect``, ``pass-at``, ``compare``, ``holdout-size``, ``self-check``, ``quickstart``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import whileai as wai_lib
from whileai import table
from whileai.cli.compare import exit_status
from whileai.measure import delta_report, holdout_size, pass_at, self_check
from whileai.store import describe
from whileai.testing import rollout_table

INSPECT_LOG = Path(__file__).parent.parent / "data" / "inspect" / "hand_made_log.json"


@pytest.fixture
def runs(tmp_path):
    def write(name, **kwargs):
        path = tmp_path / f"{name}.parquet"
        table.write(rollout_table(40, 4, seed=1, **kwargs), path)
        return path

    return {
        "before": write("before", policy_version="v1"),
        "better": write("better", shift=0.35, policy_version="v2"),
        "worse": write("worse", shift=-0.35, policy_version="v2"),
        "same": write("same", policy_version="v2"),
        "elsewhere": write("elsewhere", task_prefix="other-", policy_version="v2"),
    }


def test_inspect(wai, runs):
    res = wai("inspect", runs["before"])
    assert res.code == 0 and res.out.strip() == str(describe(runs["before"])).strip()
    assert "160 rows, 40 tasks, k=4" in res.out
    data = json.loads(wai("inspect", runs["before"], "--json").out)
    assert data["n_tasks"] == 40 and data["ci95"] is not None
    res = wai("inspect", INSPECT_LOG)
    assert res.code == 0 and "6 rows, 3 tasks, k=2" in res.out


@pytest.mark.parametrize("name", ["sim.jsonl", "scored.jsonl", "export.jsonl"])
def test_inspect_reads_whileai_131_rows(wai, name):
    path = Path(__file__).parent.parent / "data" / "wai131" / name
    res = wai("inspect", path)
    assert res.code == 0, res.err
    assert res.out.strip() == str(describe(path)).strip()


def test_inspect_reads_openai_chat_jsonl(wai, tmp_path):
    path = tmp_path / "chat.jsonl"
    lines = [{"messages": [{"role": "user", "content": f"ask {i % 3}"}, {"role": "assistant", "content": "ok"}],
              "reward": float(i % 2)} for i in range(6)]
    path.write_text("\n".join(json.dumps(line) for line in lines))
    res = wai("inspect", path)
    assert res.code == 0 and "6 rows, 3 tasks, k=2" in res.out


def test_pass_at(wai, runs):
    res = wai("pass-at", runs["before"])
    assert res.code == 0 and res.out.strip() == str(pass_at(runs["before"])).strip()
    assert res.out.startswith("pass@1 ")
    assert wai("pass-at", runs["before"], "--k", "2").out.strip() == str(pass_at(runs["before"], k=2)).strip()
    assert wai("pass-at", runs["before"], "--table").out.strip() == pass_at(runs["before"]).table(style="text").strip()
    data = json.loads(wai("pass-at", runs["before"], "--json").out)
    assert data["pass_at_1"] == pytest.approx(pass_at(runs["before"]).pass_at_1)
    lines = "\n".join(json.dumps(r) for r in table.rows(table.frame(runs["before"])))
    assert wai("pass-at", "-", stdin=lines).out.strip() == res.out.strip()


def test_pass_at_min_k(wai, tmp_path):
    # three rollouts a task: below MIN_K the k-way numbers are n/a, and the advice names min_k;
    # --min-k 3 reports them as pass_at(min_k=3) does
    path = tmp_path / "k3.parquet"
    table.write(rollout_table(30, 3, seed=4), path)
    default = json.loads(wai("pass-at", path, "--json").out)
    assert default["pass_pow_k"] is None and "min_k" in default["note"]
    res = wai("pass-at", path, "--min-k", "3", "--json")
    assert res.code == 0
    data = json.loads(res.out)
    assert data["k"] == 3 and data["pass_pow_k"] == pytest.approx(pass_at(path, min_k=3).pass_pow_k)
    assert wai("pass-at", path, "--min-k", "0").code == 2


@pytest.mark.parametrize(("after", "first", "code"), [
    ("better", "PASS", 0), ("same", "NO DIFFERENCE", 0), ("worse", "FAIL", 1), ("elsewhere", "NOT COMPARABLE", 3),
])
def test_compare_exit_status_follows_the_verdict(wai, runs, after, first, code):
    res = wai("compare", runs["before"], runs[after])
    assert res.out.splitlines()[0].startswith(first)
    assert res.code == code
    assert res.out.strip() == str(delta_report(runs["before"], runs[after])).strip()


def test_compare_options(wai, runs):
    res = wai("compare", runs["before"], runs["same"], "--must-not-regress", "honest_claims", "--by", "tier", "--json")
    data = json.loads(res.out)
    expected = delta_report(table.frame(runs["before"]), table.frame(runs["same"]), must_not_regress=["honest_claims"],
                            by="tier")
    assert data["headline_verdict"] == expected["headline_verdict"]
    assert data["groups"] == json.loads(expected.to_json())["groups"]
    assert res.code == 0


def test_exit_status_words():
    assert [exit_status(h) for h in ("PASS", "NO DIFFERENCE (within eval noise)", "FAIL",
                                     "NOT COMPARABLE (situations)", "")] == [0, 0, 1, 3, 4]


def test_holdout_size(wai):
    res = wai("holdout-size", "--effect", "0.05", "--base", "0.6", "--k", "4")
    assert res.code == 0 and res.out.strip() == str(holdout_size(0.05, base=0.6, k=4)).strip()
    res = wai("holdout-size", "--effect", "0")
    assert res.code == 2 and res.err.startswith("error: ")


def test_self_check(wai):
    res = wai("self-check", "--trials", "5", "--seed", "1")
    report = self_check(trials=5, seed=1)
    assert res.out.strip() == str(report).strip()
    assert res.code == (1 if report.n_flagged else 0)


def test_quickstart_writes_and_records(wai, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = wai("quickstart")
    assert res.code == 0, res.err
    assert res.out.startswith("pass@1 ") and (tmp_path / "train.jsonl").exists()
    [run] = wai_lib.store.open().runs()
    assert run.name == "quickstart" and run.id in res.out and run.n_tasks == 16
    assert run.policy and run.policy.startswith("seeded_agent") and run.judge
    assert table.frame(tmp_path / "train.jsonl").height > 0
