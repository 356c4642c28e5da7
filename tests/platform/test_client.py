"""The client against the local store (no server) and against the app in-process: the same answers."""

from __future__ import annotations

import math
import warnings

import pytest

import whileai.platform as wp
from whileai.errors import ArgumentError, PlatformError
from whileai.measure import eval_variance
from whileai.platform._client import FractionWarning
from whileai.platform.server import create_app
from whileai.stats.intervals import t_quantile
from whileai.testing import rollout_table


@pytest.fixture(params=["store", "app"])
def tracked(request, tmp_path):
    if request.param == "store":
        yield wp.track({"name": "refunds", "model": "m1", "tools": ["lookup"]}, store=tmp_path / "s.duckdb")
        return
    app = create_app(tmp_path / "app.duckdb")
    yield wp.track({"name": "refunds", "model": "m1", "tools": ["lookup"]}, transport=app)
    app.state.db.close()


def rows_of(n, fails):
    return [wp.Example(prompt=f"ask {i}", reply=f"reply {i}", ok=i >= fails, why="w", tags={"tier": str(i % 3)})
            for i in range(n)]


def test_report_run_flow(tracked, capsys):
    base = tracked.run("v0")
    base.score(wp.Behavior(name="refunds", rubric="refund only with an order id", agreement=0.9, human_n=120,
                           noise_floor=2.0, test_version="h@1"), 60, ci=3, n=100, rows=rows_of(30, 12))
    base.finish(say=False)
    cand = tracked.run("sft-v1", harness=wp.Harness(label="p1@m1", instructions="Be brief.", model="m1"))
    for step in range(40):
        cand.log(step=step, loss=1.0 / (step + 1), lr=1e-5, reward=0.5)
    cand.score("refunds", 0.72, ci=0.03, n=100, fraction=True, rows=rows_of(600, 150))
    record = cand.finish(gpu="A10G", seconds=56)
    out = capsys.readouterr().out
    assert "## What happened" in out and "sft-v1 beats v0 on refunds by +12.0 points" in out
    assert record.status == "done" and record.cost_usd == 0.02 and record.cost_basis.startswith("estimate: A10G")
    assert record.record["provenance"]["pins"]["harness"] == wp.Harness(instructions="Be brief.", model="m1").version
    assert record.n_points == 40 and record.last_step == 39
    assert [p["step"] for p in cand.points()] == list(range(40)) and cand.points()[0]["reward"] == 0.5
    rows = cand.rows("refunds")
    assert len(rows) == 600 and [r.prompt for r in rows[:2]] == ["ask 0", "ask 1"] and rows[0].tags == {"tier": "0"}
    score = cand.scores()[0]
    assert score.value == 72.0 and score.ci == pytest.approx(3.0) and score.n_rows == 600
    assert [e.ok for e in score.examples] == [False] * 14 + [True] * 6
    v = tracked.verdict("refunds")
    assert v.word == "beats" and not v.unproven and v.candidate == "sft-v1" and v.served == "v0"
    assert tracked.brief().means == v.line
    assert [e.behavior for e in tracked.evals()] == ["refunds"]
    assert tracked.runs() == [base.id, cand.id]


def test_open_binds_to_an_existing_run_and_unknown_ids_say_404(tracked):
    run = tracked.run("v0")
    again = tracked.open(run.id)
    again.note("longer training, same data")
    assert tracked.open(run.id).notes == "longer training, same data"
    with pytest.raises(PlatformError, match="run 'nope' does not exist") as info:
        tracked.open("nope")
    assert info.value.status == 404 and info.value.code == "not_found"
    with pytest.raises(PlatformError, match="already exists; a POST never resets") as info:
        tracked.run("v0", id=run.id)
    assert info.value.status == 409


def test_bad_input_is_refused_before_anything_is_sent(tracked):
    run = tracked.run("v0")
    with pytest.raises(ArgumentError, match="behavior name must be lower-case.*Use 'refund_policy'"):
        run.score("refund policy", 50)
    with pytest.raises(ArgumentError, match="ScoreBody field 'value'"):
        run.score("refunds", 150)
    with pytest.raises(ArgumentError, match="note must be markdown of at most 8192"):
        run.note("x" * 9000)
    with pytest.raises(ArgumentError, match="Experiment field 'question'"):
        tracked.experiment("")
    with pytest.raises(ArgumentError, match="Figure field 'figure'.*a trace type must be one of"):
        tracked.figure("f", {"data": [{"type": "heatmap"}]})
    assert run.scores() == []


def test_a_bare_score_between_zero_and_one_warns_once(tracked):
    run = tracked.run("v0")
    with pytest.warns(FractionWarning, match="fraction=True"):
        run.score("refunds", 0.71)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FractionWarning)
        rec = run.score("refunds", 0.5)
    assert rec.value == 0.5  # posted as it is: nothing rescales a score


class FlakyBackend:
    """Fails every other log call after storing it (the answer is lost), to prove retries store once."""

    def __init__(self, inner):
        self.inner, self.calls = inner, 0

    def describe(self):
        return "flaky"

    def call(self, op, **kw):
        if op == "log":
            self.calls += 1
            if self.calls % 3 == 0:
                raise PlatformError(503, "unreachable", "down")
            if self.calls % 3 == 1:
                self.inner.call(op, **kw)
                raise PlatformError(503, "unreachable", "answer lost")
        return self.inner.call(op, **kw)


def test_log_never_raises_and_a_retried_batch_is_stored_once(tmp_path):
    tracked = wp.track("a scripted agent", name="flaky", store=tmp_path / "s.duckdb")
    run = tracked.run("v0")
    run.backend = FlakyBackend(tracked.backend)
    with pytest.warns(RuntimeWarning, match="kept and sent on the next flush"):
        for step in range(100):
            run.log(step=step, loss=float(step))
    for _ in range(10):
        if run.flush():
            break
    assert [p["step"] for p in tracked.backend.call("points", run_id=run.id)] == list(range(100))
    with pytest.warns(RuntimeWarning, match="dropped a point"):
        run.log(step=100, loss="not a number")  # dropped with a warning, never raised
    with pytest.warns(RuntimeWarning, match="metric 'accuracy' must be a number"):
        run.log(step=101, lr=None, accuracy={"nested": 1})


def test_a_nan_or_inf_metric_is_stored_as_null_and_holds_back_no_point(tracked):
    """JSON has no NaN: a point that could not be sent held every later point back, on a server only."""
    run = tracked.run("v1")
    with pytest.warns(RuntimeWarning, match=r"stores loss, lr, gnorm = NaN or inf at step 10 as null"):
        for step in range(60):
            bad = step == 10
            run.log(step=step, loss=math.nan if bad else 1.0, gnorm=math.inf if bad else 2, lr=-math.inf if bad else 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once; nothing is left unsent
        run.log(step=60, loss=math.nan)
        assert run.flush()
    points = run.points()
    assert [p["step"] for p in points] == list(range(61))
    assert points[10]["loss"] is None and points[10].get("gnorm") is None and points[10]["lr"] is None
    assert points[11]["loss"] == 1.0 and points[11]["gnorm"] == 2 and points[60]["loss"] is None
    run.finish(say=False)


def test_a_step_past_64_bits_is_dropped_with_a_warning_not_kept_forever(tracked):
    run = tracked.run("v1")
    with pytest.warns(RuntimeWarning, match="dropped a point"):
        run.log(step=10**20, loss=1.0)
    run.log(step=2**63 - 1, loss=1.0)
    assert run.flush() and [p["step"] for p in run.points()] == [2**63 - 1]


def test_delta_and_holdout_keep_the_reports(tracked):
    before = rollout_table(60, 4, seed=1)
    after = rollout_table(60, 4, seed=1, shift=0.15, replica=1)
    run = tracked.run("sft-v1")
    report = run.delta(before, after)
    record = tracked.open(run.id).record
    assert record.delta["headline_verdict"] == report.headline_verdict
    block = record.summary["holdout"]
    assert set(block) == {"metric", "before", "after", "delta", "ci95", "verdict"} and block["before"]["n_tasks"] == 60
    assert block["verdict"] == report.target_verdict and block["after"]["k"] == 4
    other = tracked.run("v2")
    assert other.holdout(before, after)["before"]["ci95"] is not None
    assert tracked.dashboard().deltas[run.id]["holdout"] == block


def test_attach_delta_on_a_finished_run(tmp_path):
    store = tmp_path / "s.duckdb"
    run = wp.track("agent", name="a", store=store).run("v1")
    run.finish(say=False)
    wp.attach_delta(run.id, rollout_table(30, 2, seed=3), rollout_table(30, 2, seed=3, shift=0.1), store=store)
    wp.attach_holdout(run.id, rollout_table(30, 2, seed=3), rollout_table(30, 2, seed=4), store=store)
    again = wp.track("agent", name="a", store=store).open(run.id).record
    assert again.delta is not None and again.summary["holdout"]["after"]["n_tasks"] == 30


def test_noise_floor_is_posted_from_reruns(tracked):
    reruns = [rollout_table(80, 2, seed=5, replica=r) for r in range(3)]
    floor = tracked.noise_floor("refunds", *reruns)
    report = eval_variance(*reruns)
    assert floor == pytest.approx(float(t_quantile(0.95, 2)) * report.run_std * math.sqrt(2) * 100)
    assert tracked.behaviors()["refunds"].noise_floor == pytest.approx(floor)
    with pytest.raises(ArgumentError, match="two or more re-runs, got 1"):
        tracked.noise_floor("refunds", reruns[0])


def test_experiment_figure_live_and_dashboard(tracked):
    tracked.experiment("Does SFT on passes fix refunds?", hypothesis="yes", decide="promote at +5")
    class Fig:
        def to_plotly_json(self):
            return {"data": [{"type": "bar", "y": [1, 2]}], "layout": {"sliders": [1], "title": "x"}}
    tracked.figure("pass-rate", Fig(), caption="pass rate by tier")
    run = tracked.run("v0")
    run.score("refunds", 60, ci=3, n=60)
    tracked.live("2026-12-01", replies=1000, flagged=4)
    d = tracked.dashboard()
    assert d.experiment.question.startswith("Does SFT") and d.figures[0].figure["layout"] == {"title": "x"}
    assert d.live[0].version == "v0" and d.live[0].flagged == 4
    assert d.missing[0].missing == ["record"]  # an eval-only run owes no hours or cost
    assert d.brief is not None and d.verdicts[0].word == "no_comparison"


def test_archive_delete_run_and_delete(tracked):
    a, b = tracked.run("v0"), tracked.run("v1")
    assert tracked.open(a.id).archive().archived
    tracked.delete_run(b.id)
    assert tracked.runs() == [] and tracked.runs(archived=True) == [a.id]
    tracked.delete()
    with pytest.raises(PlatformError, match="agent 'refunds' does not exist"):
        tracked.dashboard()


def test_describe_reads_agent_objects_without_importing_frameworks():
    class FunctionTool:
        def __init__(self, name):
            self.name = name

    class OpenAIAgent:
        name, model, instructions = "support", "gpt-4.1", "Refund only with an order id."
        tools = [FunctionTool("lookup_order"), FunctionTool("refund")]

    spec = wp.describe(OpenAIAgent())
    assert (spec.name, spec.model, spec.tools) == ("support", "gpt-4.1", ["lookup_order", "refund"])

    class Model:
        model_name = "claude-x"

    class Toolset:
        tools = {"search": object()}

    class PydanticAgent:
        name, model, _instructions = None, Model(), ["Be brief."]
        _function_toolset = Toolset()

    spec = wp.describe(PydanticAgent(), name="pa")
    assert (spec.name, spec.model, spec.instructions, spec.tools) == ("pa", "claude-x", "Be brief.", ["search"])

    class Node:
        class bound:  # noqa: N801
            tools_by_name = {"calc": None}

    class Graph:
        nodes = {"tools": Node()}

    assert wp.describe(Graph(), name="lg").tools == ["calc"]
    with pytest.raises(ArgumentError, match="AgentSpec field 'name'"):
        wp.describe({"name": "bad name!"})


def test_scoring_with_a_behavior_keeps_a_measured_floor(tracked):
    tracked.noise_floor("refunds", *(rollout_table(40, 2, seed=9, replica=r) for r in range(3)))
    run = tracked.run("v0")
    run.score(wp.Behavior(name="refunds", rubric="r", graded_by="program"), 50, ci=2, n=60)
    stored = tracked.behaviors()["refunds"]
    assert stored.noise_floor is not None and stored.rubric == "r" and stored.graded_by == "program"


@pytest.mark.parametrize("run_id", ["", "a/b", "../runs", ".."])
def test_an_id_that_would_name_another_route_is_refused_before_it_is_sent(tmp_path, run_id):
    """open('') fetched GET /runs/ (the listing) and failed decoding it as one run."""
    app = create_app(tmp_path / "app.duckdb")
    tracked = wp.track({"name": "refunds", "model": "m1"}, transport=app)
    with pytest.raises(ArgumentError, match=r"run_id must be an id or a name, without '/'"):
        tracked.open(run_id)
    app.state.db.close()
