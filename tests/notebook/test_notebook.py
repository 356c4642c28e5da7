"""A notebook run headless in a real Jupyter kernel: every display renders with its headline numbers.

Needs the notebook extra (``pip install 'whileai[notebook]'``; ``make test-notebook``); skipped
without it. No cell output may hold a raw carriage return or an ANSI escape: progress is a widget
in a notebook, never a redrawn terminal line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="the notebook test needs the notebook extra: pip install 'whileai[notebook]'")
nbclient = pytest.importorskip("nbclient", reason="the notebook test needs the notebook extra: pip install 'whileai[notebook]'")
pytest.importorskip("ipykernel", reason="the notebook test needs the notebook extra: pip install 'whileai[notebook]'")

from tests.charts.reports import build  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PLOTLY = "application/vnd.plotly.v1+json"
ANSI = re.compile(r"\x1b\[")

SETUP = """
import whileai as wai
from whileai import table
from whileai.simulation import seeded_agent, tool
from whileai.store import Store
from whileai.testing import rollout_table
from tests.charts.reports import build

R = build()
"""

SIMULATE = """
@tool
def get_order(order_id: str) -> dict:
    \"\"\"Look up an order by id.\"\"\"

data = wai.simulate(seeded_agent([get_order]), tools=[get_order], budget=32, repeats=4)
data
"""

CELLS = {
    "setup": SETUP,
    "scored": "scored = wai.ScoredData(table.frame(rollout_table(40, 4, seed=3)))\nscored",
    "simulate": SIMULATE,
    "store": "store = Store(STORE)\nstore.save_dataset(rollout_table(8, 2), 'demo')\nstore.datasets()",
    **{name: f"R[{name!r}]" for name in ("pass_at", "delta_report", "curriculum", "select", "hack_scan",
                                         "judge_trust", "eval_variance", "holdout_size")},
    "figure": "fig = R['pass_at'].figure()\ntype(fig).__name__",
}


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    store = tmp_path_factory.mktemp("nb") / "store.duckdb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"STORE = {str(store)!r}")]
    nb.cells += [nbformat.v4.new_code_cell(src, metadata={"name": name}) for name, src in CELLS.items()]
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}})
    client.execute()
    return {c.metadata.get("name"): c for c in nb.cells if c.metadata.get("name")}


def _outputs(cell):
    return [o for o in cell.outputs if o.output_type in ("execute_result", "display_data", "stream", "error")]


def _result(cell):
    results = [o for o in cell.outputs if o.output_type == "execute_result"]
    assert results, f"cell {cell.metadata['name']} displayed nothing: {cell.outputs}"
    return results[0]["data"]


def test_no_cell_errors_and_no_raw_carriage_return_or_ansi(executed):
    for name, cell in executed.items():
        for out in _outputs(cell):
            assert out.output_type != "error", f"{name}: {out.get('ename')}: {out.get('evalue')}"
            text = json.dumps(out)  # every mime type and stream text
            raw = out.get("text", "") + "".join(v for v in out.get("data", {}).values() if isinstance(v, str))
            assert "\r" not in raw, f"{name} wrote a carriage return"
            assert not ANSI.search(raw) and "\\u001b[" not in text, f"{name} wrote an ANSI escape"


@pytest.mark.parametrize("name", ["pass_at", "delta_report", "curriculum", "select", "hack_scan", "judge_trust",
                                  "eval_variance", "holdout_size"])
def test_report_displays_html_markdown_and_its_figure(executed, name):
    report = build()[name]
    data = _result(executed[name])
    assert {"text/plain", "text/html", "text/markdown", PLOTLY} <= set(data)
    assert data["text/plain"] == repr(report)
    assert report.display_line().split(" · ")[0] in data["text/html"].replace("&#x27;", "'")
    assert data[PLOTLY] == json.loads(json.dumps(report.figure_spec()))


def test_headline_numbers_are_in_the_displays(executed):
    r = build()
    checks = {
        "pass_at": [f"{r['pass_at'].pass_at_1:.2f}", f"{r['pass_at'].pass_at_k:.2f}"],
        "delta_report": ["PASS", f"{r['delta_report'].target_delta:+.3f}"],
        "judge_trust": ["FAIL", f"{100 * r['judge_trust'].agreement:.0f}%"],
        "holdout_size": [str(r["holdout_size"].n_tasks)],
        "eval_variance": [f"{r['eval_variance'].run_std:.4f}"],
        "select": [str(r["select"].n_selected)],
    }
    for name, numbers in checks.items():
        data = _result(executed[name])
        for number in numbers:
            assert number in data["text/html"] and number in data["text/plain"], (name, number)


def test_data_objects_and_listings_render_as_tables(executed):
    scored = _result(executed["scored"])
    assert "rows=160, tasks=40, k=4, graded=100%" in scored["text/html"] and "<table>" in scored["text/html"]
    sim = _result(executed["simulate"])
    assert sim["text/plain"].startswith("SimulationData(rows=32, tasks=8, k=4") and "<table>" in sim["text/html"]
    listing = _result(executed["store"])
    assert "<table>" in listing["text/html"] and "demo" in listing["text/html"]


def test_figure_is_a_plotly_figure_in_the_kernel(executed):
    assert _result(executed["figure"])["text/plain"] in ("'Figure'", "'dict'")


def test_simulate_progress_is_a_widget_not_a_redrawn_line(executed):
    pytest.importorskip("ipywidgets", reason="tqdm.auto draws a widget only with ipywidgets")
    kinds = [set(o.get("data", {})) for o in executed["simulate"].outputs if o.output_type == "display_data"]
    assert any("application/vnd.jupyter.widget-view+json" in k for k in kinds), executed["simulate"].outputs
    assert not [o for o in executed["simulate"].outputs if o.output_type == "stream" and o.name == "stderr"]
