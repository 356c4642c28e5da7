"""The simulated user, measured: user_flags and user_faithful, against a fake model user that errs in each way."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats

import whileai as wai
from tests.simulation._fake_endpoint import FakeEndpoint
from whileai.simulation import Endpoint
from whileai.simulation._user import TemplateUser
from whileai.simulation._user_checks import (
    USER_FLAGS,
    UserContext,
    check_user_turns,
    user_error_summary,
    user_flag_rows,
)


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""


SYSTEM = "Help customers with orders."
CTX = UserContext("Where is my order? Something went wrong.", ("ORD-1234",),
                  "the order exists: report its status and do not change it", ("not_found", "server_error"))


def _conv(*turns: tuple[str, str]) -> list[dict]:
    return [{"role": "system", "content": SYSTEM}, *({"role": r, "content": c} for r, c in turns)]


ASK = ("assistant", "Which order do you mean?")


@pytest.mark.parametrize(("turns", "flag", "fragment"), [
    ([ASK, ("user", "It's ORD-9876.")], "user.off_script", "ORD-9876"),
    ([ASK, ("user", "It's ORD-1234."), ASK, ("user", "Sorry, ORD-5555.")], "user.off_script", "ORD-5555"),
    ([ASK, ("user", "Report its status and do not change it. The order exists: report its status and do not change "
                    "it")], "user.leaked", "report its status"),
    ([ASK, ("user", "It came back not_found for me.")], "user.leaked", "not_found"),
    ([ASK, ("user", "The answer is [...] as you know.")], "user.leaked", "[...]"),
    ([ASK, ("user", "Thanks, that's all!")], "user.ended_early", "that's all"),
    ([ASK, ("user", "ORD-1234"), ASK, ("user", "ORD-1234"), ASK, ("user", "ORD-1234")], "user.repeated", "3x"),
    ([ASK, ("user", "How can I help you today?")], "user.broke_role", "How can I help you"),
    ([ASK, ("user", "In this role-play I am the customer.")], "user.broke_role", "role-play"),
])
def test_each_rule_raises_its_flag_with_the_fragment(turns, flag, fragment):
    flags = check_user_turns(_conv(("user", CTX.prompt), *turns), CTX)
    assert [f["flag"] for f in flags] == [flag]
    assert fragment.casefold() in flags[0]["fragment"].casefold()


def test_a_faithful_user_raises_nothing():
    faithful = _conv(("user", CTX.prompt), ASK, ("user", "Sure, it's ORD-1234."),
                     ("assistant", "ORD-1234 has shipped. Anything else I can help with?"), ("user", "No, thanks!"))
    assert check_user_turns(faithful, CTX) == []
    # thanks with the answer in it answers the question: not ended early
    assert check_user_turns(_conv(("user", CTX.prompt), ASK, ("user", "Thanks! It's ORD-1234.")), CTX) == []
    # the opening message is the writer's, not the simulator's: nothing in it is checked
    assert check_user_turns(_conv(("user", "How can I help you? ORD-7777 not_found")), CTX) == []
    # DONE right after a question: ended early, the agent's question is the fragment
    done = check_user_turns(_conv(("user", CTX.prompt), ASK), CTX, ended_on_ask=True)
    assert done == [{"flag": "user.ended_early", "fragment": "DONE after: Which order do you mean?"}]


def _quickstart(user):
    return wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt=SYSTEM, simulator=False,
                        repeats=4, budget=64, user_simulator=user, progress=False)


def test_the_template_user_no_longer_repeats_itself_on_the_quickstart(monkeypatch):
    data = _quickstart("template")
    assert "user_flags" in data.df.columns
    assert data.report.user_flags.get("user.repeated", 0) == 0 and data.report.user_erred_rows == 0
    assert data.df["markers"].struct.field("user_faithful").to_list() == [1.0] * 64

    _old_template(monkeypatch)  # the template before the fix: its first answer, every time
    old = _quickstart("template")
    assert old.report.user_flags["user.repeated"] == 7 and old.report.user_erred_rows == 7
    assert "user erred on 7 of 64 rows (user.repeated 7)" in str(old.report)


def _old_template(monkeypatch):
    fixed = TemplateUser.reply

    def old_reply(self, situation, messages, turn):
        users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        return fixed(self, situation, [m for i, m in enumerate(messages) if i not in users[1:]], turn)

    monkeypatch.setattr(TemplateUser, "reply", old_reply)


def test_pass_at_failure_table_and_delta_report_split_on_user_faithful(monkeypatch):
    _old_template(monkeypatch)

    def judge(row):
        return {"reward": float(not row["seeded"])}

    data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt=SYSTEM, repeats=4, budget=64,
                        user_simulator="template", progress=False, repeat_policy="dynamic", grader=judge,
                        max_rollouts=4)
    # graded in the run: the report's line says how much of the failure rate sits on erred rows
    s = user_error_summary(data.df)
    assert s.erred == 7 and s.graded == 64 and data.report.user_failure_share == pytest.approx(s.failure_share_erred)
    assert f"{s.failures_erred} of {s.failures} failures" in data.report.user_line and "where the user was faithful" \
        in data.report.user_line
    groups = wai.pass_at(data, by="user_faithful").groups
    assert set(groups) == {"marker:user_faithful=0.0", "marker:user_faithful=1.0"}
    assert groups["marker:user_faithful=0.0"]["n_rows"] == 7
    table = wai.failure_table(data, by="user_faithful")
    assert "marker:user_faithful" in str(table) and "0.0" in str(table)
    delta = wai.delta_report(data, data, by="user_faithful")
    assert set(delta.groups) == {"0.0", "1.0"}


def test_no_simulated_user_no_user_columns():
    data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], budget=8, progress=False)
    assert "user_flags" not in data.df.columns and data.report.user_line is None


# --- a model user on a loopback fake server, erring in each way -----------------------------------


class FakeUser(FakeEndpoint):
    """Plays the person: ``mode`` picks the error (or none); it reads what it knows from its system prompt."""

    def __init__(self, mode: str, references: dict[str, str]):
        super().__init__()
        self.mode = mode
        self.references = references

    def reply(self, body):
        system = body["messages"][0]["content"]
        known = re.search(r"may tell when asked: (.*?)\. You are", system).group(1)
        detail = known.split(" = ")[-1] if " = " in known else None
        opening = system.split("conversation:\n\n")[1].split("\n\nWhat you know")[0]
        agent_said = body["messages"][-1]["content"]  # roles turned round: the agent's words come as the user's
        text = "DONE" if "?" not in agent_said and self.mode != "repeated" else {
            "faithful": f"It's {detail}." if detail else "I don't know, sorry.",
            "off_script": "It's ORD-99999, I am sure.",
            "leaked": f"I think the answer is: {self.references[opening]}",
            "ended_early": "Thanks, that's all I needed!",
            "done": "DONE",
            "repeated": "Please just help me.",
            "broke_role": "As an AI language model, I cannot share that.",
        }[self.mode]
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}


def _asking(times: int):
    """An agent that asks which order ``times`` times, then answers without a question."""
    def agent(messages, tools):
        told = sum(1 for m in messages if m["role"] == "user") - 1
        return "Which order do you mean?" if told < times else "Thanks, I have looked into it for you."
    return agent


_asker = _asking(1)


@pytest.fixture(scope="module")
def references():
    base = wai.simulate(_asker, tools=[get_order], system_prompt=SYSTEM, repeats=1, budget=6, progress=False)
    return {r["prompt"]: json.loads(p)["reference"] if isinstance(p := r["privileged"], str) else p["reference"]
            for r in base.rows()}


@pytest.mark.parametrize(("mode", "flag"), [
    ("faithful", None), ("off_script", "user.off_script"), ("leaked", "user.leaked"),
    ("ended_early", "user.ended_early"), ("done", "user.ended_early"), ("repeated", "user.repeated"),
    ("broke_role", "user.broke_role"),
])
def test_a_model_user_that_errs_is_flagged(references, mode, flag):
    fake = FakeUser(mode, references)
    try:
        data = wai.simulate(_asking(3 if mode == "repeated" else 1), tools=[get_order], system_prompt=SYSTEM, repeats=1,
                            budget=6, progress=False, user_simulator=Endpoint("fake-user", base_url=fake.url))
    finally:
        fake.close()
    assert fake.log and data.report.user_simulator == "fake-user"
    flags = data.df["user_flags"].to_list()
    faithful = data.df["markers"].struct.field("user_faithful").to_list()
    if flag is None:
        assert flags == [[]] * 6 and faithful == [1.0] * 6 and data.report.user_erred_rows == 0
        return
    raised = [{f["flag"] for f in row} for row in flags]
    assert all(s == {flag} for s in raised), raised
    assert faithful == [0.0] * 6 and data.report.user_flags == {flag: 6}
    if mode == "leaked":  # the simulator cut the quoted reference; the row says why
        assert all(row[0]["fragment"].endswith("[...]") for row in flags)
        assert not any(ref in str(data.df["messages"].to_list()) for ref in references.values())


def test_user_judge_takes_a_callable_and_an_endpoint():
    calls = []

    def judge(row):  # any judge under the judge contract: markers named after a flag, 0 = the user erred
        calls.append(row)
        users = [m["content"] for m in row["messages"] if m["role"] == "user"]
        return {"reward": 0.0 if len(users) > 1 else 1.0, "reason": "the user gave an id twice"}

    data = wai.simulate(_asker, tools=[get_order], system_prompt=SYSTEM, repeats=1, budget=4, progress=False,
                        user_simulator="template", user_judge=judge)
    assert calls and calls[0]["messages"][0]["content"].startswith("Audit the simulated user")
    judged = [[f["flag"] for f in row] for row in data.df["user_flags"].to_list()]
    assert all(flags == ["user.judged"] for flags in judged) and data.report.user_flags == {"user.judged": 4}

    class Verdicts(FakeEndpoint):
        def reply(self, body):
            verdicts = [{"id": i + 1, "met": i != 4, "why": "it spoke as the assistant" if i == 4 else "fine"}
                        for i in range(5)]
            return {"choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": json.dumps({"criteria": verdicts})}}]}

    fake = Verdicts()
    try:
        data = wai.simulate(_asker, tools=[get_order], system_prompt=SYSTEM, repeats=1, budget=4, progress=False,
                            user_simulator="template", user_judge=Endpoint("judge", base_url=fake.url))
    finally:
        fake.close()
    assert len(fake.log) == 4
    rows = data.df["user_flags"].to_list()
    assert all([f["flag"] for f in row] == ["user.broke_role"] for row in rows)


def test_the_report_line_splits_the_failures_on_erred_rows():
    df = pl.DataFrame({
        "reward": [0.0, 0.0, 1.0, 0.0, 1.0, None],
        "user_flags": [[{"flag": "user.leaked", "fragment": "x"}], [], [], [{"flag": "user.repeated", "fragment": "y"}],
                       [{"flag": "user.repeated", "fragment": "z"}], []],
    })
    s = user_error_summary(df)
    assert (s.rows, s.erred, s.graded, s.failures, s.failures_erred, s.graded_erred) == (6, 3, 5, 3, 2, 3)
    assert s.by_flag == {**dict.fromkeys(USER_FLAGS, 0), "user.leaked": 1, "user.repeated": 2}
    # 3 failures over 5 graded rows; 2 of them on erred rows; the faithful graded rows (2) hold 1 failure
    assert s.line() == ("user erred on 3 of 6 rows (user.leaked 1, user.repeated 2); 2 of 3 failures (67%) sit on "
                        "those rows: failure rate 60% overall, 50% where the user was faithful")


# --- checking the checker: a hand-labelled set ------------------------------------------------------

LABELLED = Path(__file__).resolve().parents[1] / "data" / "user_turns_labelled.jsonl"


def test_the_rule_checks_agree_with_the_hand_labels_through_judge_trust():
    """36 conversations written and labelled by hand (tests/data/user_turns_labelled.jsonl, ``user_errors``)."""
    rows = [json.loads(line) for line in LABELLED.read_text().splitlines()]
    got = user_flag_rows(rows)
    df = pl.DataFrame({"scenario_id": [r["scenario_id"] for r in rows],
                       "reward": [0.0 if g else 1.0 for g in got],  # user_faithful, as the flags set it
                       "gold_reward": [0.0 if r["user_errors"] else 1.0 for r in rows],
                       "gold_kind": ["human"] * len(rows)})
    report = wai.judge_trust(df)
    # the misses are the ones a rule cannot see (a paraphrased reference, an invented status, a phrase not listed)
    missed = sorted(r["scenario_id"] for r, g in zip(rows, got) if bool(g) != bool(r["user_errors"]))
    assert missed == ["lab-05", "lab-30", "lab-35", "lab-36"]
    n, agree = len(rows), len(rows) - len(missed)
    assert report.n_gold == n == 36 and report.agreement == pytest.approx(agree / n)
    # Wilson's interval and Cohen's kappa, by their formulas
    z = stats.norm.ppf(0.975)
    p = agree / n
    centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert report.agreement_ci95 == pytest.approx((centre - half, centre + half))
    rule_ok = np.array([not g for g in got])
    gold_ok = np.array([not r["user_errors"] for r in rows])
    pe = rule_ok.mean() * gold_ok.mean() + (1 - rule_ok.mean()) * (1 - gold_ok.mean())
    assert report.kappa == pytest.approx((p - pe) / (1 - pe))
    assert report.agreement >= 0.85 and report.kappa >= 0.7  # 32 of 36, kappa 0.77: a weaker rule fails here
    # each flag that fires is the one the label names, on every row both flag
    for r, g in zip(rows, got):
        if g and r["user_errors"]:
            assert {f["flag"] for f in g} == set(r["user_errors"]), r["scenario_id"]
