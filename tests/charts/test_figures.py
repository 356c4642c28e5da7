"""Every .figure() is Plotly figure JSON plotly.js-basic draws, with the report's own numbers."""

from __future__ import annotations

import json
import math

import pytest

import whileai as wai
from tests.charts.reports import build
from whileai import charts
from whileai.defaults import DIFFICULTY_BAND, FIGURE_TRACE_TYPES
from whileai.errors import ArgumentError

REPORTS = build()

# report name -> traces its figure has
TRACES = {"pass_at": 1, "delta_report": 1, "curriculum": 1, "select": 2, "hack_scan": 1, "judge_trust": 3,
          "eval_variance": 2, "holdout_size": 1, "failure_table": 1}


def _plotly_validates(spec):
    go = pytest.importorskip("plotly.graph_objects", reason="plotly's own validator needs the notebook extra")
    go.Figure(spec)  # raises ValueError on anything plotly.js does not know


def test_every_charted_report_is_covered():
    assert set(TRACES) == set(REPORTS)


@pytest.mark.parametrize("name", sorted(TRACES))
def test_figure_is_valid_plotly_json_of_basic_traces(name):
    spec = REPORTS[name].figure_spec()
    assert charts.check_figure(spec) == spec
    assert len(spec["data"]) == TRACES[name]
    assert all(t.get("type", "scatter") in FIGURE_TRACE_TYPES for t in spec["data"])
    json.dumps(spec, allow_nan=False)  # NaN never reaches the page
    _plotly_validates(spec)


@pytest.mark.parametrize("name", sorted(TRACES))
def test_figure_method_returns_a_plotly_figure_or_the_dict(name):
    out = REPORTS[name].figure()
    try:
        import plotly.graph_objects as go
    except ImportError:
        assert out == REPORTS[name].figure_spec()
    else:
        assert isinstance(out, go.Figure) and len(out.data) == TRACES[name]


def _err_bounds(trace, key):
    e = trace[key]
    return e["array"], e["arrayminus"]


def test_pass_at_bars_carry_the_report_numbers():
    r = REPORTS["pass_at"]
    t = r.figure_spec()["data"][0]
    assert t["x"] == ["pass@1", f"pass^{r.k}", f"pass@{r.k}"]
    assert t["y"] == pytest.approx([r.pass_at_1, r.pass_pow_k, r.pass_at_k])
    plus, minus = _err_bounds(t, "error_y")
    for value, ci, p, m in zip(t["y"], [r.ci95, r.pass_pow_k_ci95, r.pass_at_k_ci95], plus, minus):
        assert value + p == pytest.approx(ci[1]) and value - m == pytest.approx(ci[0])


def test_delta_forest_has_every_metric_band_and_verdict():
    r = REPORTS["delta_report"]
    spec = r.figure_spec()
    t = spec["data"][0]
    assert t["y"] == list(r.metrics)
    assert t["x"] == pytest.approx([m["delta"] for m in r.metrics.values()])
    i = t["y"].index(r.target)
    plus, minus = _err_bounds(t, "error_x")
    assert t["x"][i] - minus[i] == pytest.approx(r.target_ci95[0]) and t["x"][i] + plus[i] == pytest.approx(r.target_ci95[1])
    band = spec["layout"]["shapes"][0]
    assert (band["x0"], band["x1"]) == pytest.approx((-r.noise_band, r.noise_band))
    assert spec["layout"]["title"]["text"].startswith(r.verdict_word()[0])


def test_curriculum_histogram_counts_every_graded_task_and_marks_the_band():
    r = REPORTS["curriculum"]
    spec = r.figure_spec()
    counts = spec["data"][0]["y"]
    rates = [t["pass_rate"] for part in (r.trainable, r.retired, r.not_ready) for t in part]
    assert sum(counts) == len(rates) == r.n_tasks - r.n_thin
    # reference: count by hand into ten bins, the last closed
    ref = [0] * 10
    for p in rates:
        ref[min(int(p * 10 + 1e-9), 9)] += 1
    assert counts == ref
    shape = spec["layout"]["shapes"][0]
    assert (shape["x0"], shape["x1"]) == DIFFICULTY_BAND


def test_select_histogram_overlays_the_kept_tasks():
    r = REPORTS["select"]
    tasks, kept = r.figure_spec()["data"]
    assert sum(tasks["y"]) == r.n_tasks and sum(kept["y"]) == r.groups_selected
    assert all(k <= t for k, t in zip(kept["y"], tasks["y"]))


def test_hack_scan_bars_are_the_top_features_against_the_floor():
    r = REPORTS["hack_scan"]
    spec = r.figure_spec()
    t = spec["data"][0]
    top = r.features[: r.top_features]
    assert t["y"] == [f.name for f in top] and t["x"] == pytest.approx([f.rho for f in top])
    assert sorted(s["x0"] for s in spec["layout"]["shapes"]) == pytest.approx([-r.tau, r.tau])
    colours = dict(zip(t["y"], t["marker"]["color"]))
    from whileai.defaults import CHART_BAD, CHART_GOOD

    assert all(colours[f.name] == CHART_GOOD for f in top if f.endorsed)
    assert all(colours[f.name] == CHART_BAD for f in top if not f.endorsed and f.above_floor)
    assert r.top_feature in t["y"]


def test_judge_trust_chart_has_agreement_kappa_and_length_bias():
    r = REPORTS["judge_trust"]
    left, short, long_ = r.figure_spec()["data"]
    assert left["y"] == pytest.approx([r.agreement, r.kappa])
    plus, minus = _err_bounds(left, "error_y")
    assert r.agreement - minus[0] == pytest.approx(r.agreement_ci95[0])
    assert r.kappa + plus[1] == pytest.approx(r.kappa_ci95[1])
    ls = r.length_sensitivity
    assert short["y"] == pytest.approx([ls["gold_1"]["short"]["pass_rate"], ls["gold_0"]["short"]["pass_rate"]])
    assert long_["y"] == pytest.approx([ls["gold_1"]["long"]["pass_rate"], ls["gold_0"]["long"]["pass_rate"]])


def test_holdout_power_curve_crosses_the_target_at_the_answer():
    from scipy.stats import nct
    from scipy.stats import t as student_t

    from whileai.measure._holdout import min_sign_flip_tasks

    r = REPORTS["holdout_size"]

    def power(n: int) -> float:  # the paired t test's power, from scipy's noncentral t directly
        q = student_t.ppf(1 - r.alpha / 2, n - 1)
        nc = r.effect * math.sqrt(n) / r.task_std
        return float(nct.sf(q, n - 1, nc) + nct.cdf(-q, n - 1, nc))

    spec = r.figure_spec()
    t = spec["data"][0]
    x, y = t["x"], t["y"]
    floor = min_sign_flip_tasks(r.alpha)
    assert y == pytest.approx([power(int(n)) if n >= floor else 0.0 for n in x], abs=1e-9)
    assert all(b >= a for a, b in zip(y, y[1:]))  # power grows with tasks
    # the t test's answer is the first n at the target power; the sign-flip test's (n_tasks) is never fewer
    n_t = r.n_tasks if r.n_tasks_t_test is None else r.n_tasks_t_test
    assert power(n_t) >= r.power > power(n_t - 1) and r.n_tasks >= n_t
    lines = {s["yref"]: s for s in spec["layout"]["shapes"]}
    assert lines["y"]["y0"] == r.power and lines["paper"]["x0"] == r.n_tasks


def test_eval_variance_curve_is_the_detectable_gain_from_run_std():
    from whileai.stats.power import detectable_effect_sd

    r = REPORTS["eval_variance"]
    line, point = r.figure_spec()["data"]
    sd = math.sqrt(2 * r.tasks_in_every_run) * r.run_std
    assert line["y"] == pytest.approx([detectable_effect_sd(int(n), sd) for n in line["x"]])
    # at the tasks measured, the detectable gain is z_sum x sqrt(2) x run_std (two single runs)
    from whileai.stats.power import z_sum

    assert point["y"][0] == pytest.approx(z_sum() * math.sqrt(2) * r.run_std)


def test_builders_turn_nan_into_gaps():
    spec = charts.interval_bars(["a", "b"], [float("nan"), 0.5], [None, 0.4], [None, 0.7])
    assert spec["data"][0]["y"] == [None, 0.5]
    assert spec["data"][0]["error_y"]["array"][0] is None
    json.dumps(spec, allow_nan=False)


def test_histogram_counts_matches_numpy_reference():
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.random(500)
    x[:3] = [0.0, 1.0, np.nan]
    assert charts.histogram_counts(x) == np.histogram(x[~np.isnan(x)], bins=10, range=(0, 1))[0].tolist()


def test_check_figure_refuses_what_the_page_cannot_draw():
    with pytest.raises(ArgumentError, match="trace type must be one of"):
        charts.check_figure({"data": [{"type": "heatmap", "z": [[1]]}], "layout": {}})
    with pytest.raises(ArgumentError, match="must have 1 to 50 traces, got 0"):
        charts.check_figure({"data": [], "layout": {}})
    with pytest.raises(ArgumentError, match="must be a dict with a 'data' list"):
        charts.check_figure([1, 2])
    with pytest.raises(ArgumentError, match="at most 200000 bytes"):
        charts.check_figure({"data": [{"type": "scatter", "y": list(range(60_000))}], "layout": {}})


def test_html_page_loads_the_vendored_bundle_and_escapes_labels():
    page = charts.html_page([charts.interval_bars(["</script><b>x"], [0.5])], titles=["<i>t</i>"])
    assert charts.plotly_js_path().resolve().as_uri() in page
    assert "</script><b>" not in page and "&lt;i&gt;" in page
    assert charts.plotly_js_path().stat().st_size > 500_000
    assert charts.PLOTLY_JS_VERSION == "4.1.1"


def test_charts_imports_no_plotly():
    import subprocess
    import sys

    code = "import sys, whileai.charts; print('plotly' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_failure_table_bars_carry_each_group_and_flag_the_ones_below():
    from whileai.defaults import CHART_BAD

    r = REPORTS["failure_table"]
    spec = r.figure_spec()
    t = spec["data"][0]
    assert t["x"] == [g.group for g in r.groups]
    assert t["y"] == pytest.approx([g.pass_rate for g in r.groups])
    plus, minus = _err_bounds(t, "error_y")
    assert [y + p for y, p in zip(t["y"], plus)] == pytest.approx([g.ci95[1] for g in r.groups])
    assert [c == CHART_BAD for c in t["marker"]["color"]] == [g.below for g in r.groups]
    assert spec["layout"]["shapes"][0]["y0"] == pytest.approx(r.pass_rate)


def test_pass_at_by_draws_one_bar_per_group():
    from whileai.testing import rollout_table

    r = wai.pass_at(rollout_table(40, 4, seed=3), by="fault_kind")
    t = r.figure_spec()["data"][0]
    assert t["x"] == [name.split("=", 1)[1] for name in r.groups]
    assert t["y"] == pytest.approx([g["pass_at_1"] for g in r.groups.values()])
    charts.check_figure(r.figure_spec())
