"""``wai hack-scan`` and ``wai decontaminate``: each prints what its library call returns."""

from __future__ import annotations

import json

from whileai import table
from whileai.guard import decontaminate, hack_scan
from whileai.testing import rollout_table


def test_hack_scan_matches_the_library(wai, tmp_path):
    df = rollout_table(40, 8, seed=3, shortcut="certainly")
    path = tmp_path / "rows.parquet"
    table.write(df, path)
    res = wai("hack-scan", path, "--seed", "1")
    assert res.code == 0
    assert res.out.strip() == str(hack_scan(table.frame(path), seed=1)).strip()
    as_json = json.loads(wai("hack-scan", path, "--json", "--seed", "1").out)
    assert as_json == json.loads(hack_scan(table.frame(path), seed=1).to_json())


def test_decontaminate_writes_the_clean_rows(wai, tmp_path):
    asks = ["Where is my order and when will the parcel arrive at my door?",
            "Please cancel the second item on my invoice before it ships tomorrow.",
            "My card was charged twice for one purchase, can you refund one charge?",
            "How do I change the delivery address on an order already placed?",
            "The blender I bought last week stopped working, what are my options?",
            "Can you tell me which payment methods the store accepts for gift cards?"]
    train = [{"task_id": f"t{i}", "prompt": ask} for i, ask in enumerate(asks)]  # distinct asks, not one-word variants
    evals = [{"task_id": "e1", "prompt": train[0]["prompt"]}]
    src, ev, out = tmp_path / "train.jsonl", tmp_path / "eval.jsonl", tmp_path / "clean.jsonl"
    table.write(table.frame(train), src)
    table.write(table.frame(evals), ev)
    res = wai("decontaminate", src, "--eval", ev, "-o", out)
    assert res.code == 0
    clean, report = decontaminate(table.frame(src), eval=[str(ev)])
    assert res.out.strip() == str(report).strip()
    assert table.frame(out)["task_id"].to_list() == clean["task_id"].to_list() == [f"t{i}" for i in range(1, 6)]


def test_decontaminate_needs_an_eval(wai, tmp_path):
    res = wai("decontaminate", tmp_path / "x.jsonl", "-o", tmp_path / "y.jsonl")
    assert res.code == 2 and "Missing option '--eval'" in res.err


def test_decontaminate_help_example_runs(wai, tmp_path, monkeypatch):
    """docs/cli.md: every --help ends with an example that runs."""
    example = wai("decontaminate", "--help").out.rstrip().splitlines()[-1].split()
    assert example[:2] == ["wai", "decontaminate"]
    monkeypatch.chdir(tmp_path)
    rows = [{"task_id": "t1", "prompt": "Question one about orders and refunds today please now."}]
    for name in ("train.jsonl", "eval.jsonl", "graded.jsonl", "rows.jsonl"):
        table.write(table.frame(rows), tmp_path / name)
    res = wai(*example[1:])
    assert res.code == 0, res


def test_decontaminate_without_output_prints_the_report_only(wai, tmp_path):
    train = [{"task_id": f"t{i}", "prompt": f"Question number {i} about orders and refunds today please."}
             for i in range(3)]
    src, ev = tmp_path / "train.jsonl", tmp_path / "eval.jsonl"
    table.write(table.frame(train), src)
    table.write(table.frame([{"task_id": "e1", "prompt": train[0]["prompt"]}]), ev)
    res = wai("decontaminate", src, "--eval", ev)
    assert res.code == 0
    assert res.out.strip() == str(decontaminate(table.frame(src), eval=[str(ev)]).report).strip()
    assert "not written" in res.err and sorted(p.name for p in tmp_path.iterdir()) == ["eval.jsonl", "train.jsonl"]
    res = wai("decontaminate", src, "--eval", ev, "--engine", "ray")
    assert res.code == 2 and "needs -o" in res.err


def test_decontaminate_near_picks_the_rule(wai, tmp_path):
    """--near eval_cover keeps the earlier rule reachable: one word changed near the start of a short eval
    prompt is a near copy under the default and not under eval_cover; the JSON report names the rule."""
    ask = "Transfer 15 dollars from account 1000 to account 2000 for Ana, then confirm the new balance and email the receipt."
    src, ev = tmp_path / "train.jsonl", tmp_path / "eval.jsonl"
    table.write(table.frame([{"task_id": "t1", "prompt": ask.replace(" to account", " into account")}]), src)
    table.write(table.frame([{"task_id": "e1", "prompt": ask}]), ev)
    for near, caught in (("template", 1), ("eval_cover", 0)):
        res = wai("decontaminate", src, "--eval", ev, "--near", near, "--json")
        assert res.code == 0, res
        report = json.loads(res.out)
        assert report["near_rule"] == near and report["n_near"] == caught
    assert wai("decontaminate", src, "--eval", ev, "--near", "fuzzy").code == 2
