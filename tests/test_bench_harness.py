"""The benchmark harness measures the child it runs, not the process that runs it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(autouse=True)
def benchmarks_importable(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``benchmarks/`` on the path for the test, its modules forgotten after it, pass or fail."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    yield
    for name in ("bench_cli", "_harness", "_real"):
        sys.modules.pop(name, None)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="VmHWM is read from /proc (Linux)")
def test_a_cells_peak_leaves_out_the_parents_memory() -> None:
    # ru_maxrss of a child keeps the resident size it had before exec (the parent's, copied by
    # fork): a benchmark parent holding data made every cell report at least that much
    from _harness import fresh_cell

    small = fresh_cell("json", "dumps", 1)
    held = np.ones(64 * 2**20)  # 512 MiB resident in this process while the child runs
    big = fresh_cell("json", "dumps", 1)
    assert small["error"] is None and big["error"] is None
    assert big["peak_mib"] < small["peak_mib"] + 64, (small, big)
    assert big["peak_mib"] < 256
    del held


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="VmHWM is read from /proc (Linux)")
def test_a_commands_peak_leaves_out_the_parents_memory() -> None:
    # the same for the `wai` command benchmark, which reads the child's VmHWM while it runs
    import bench_cli

    held = np.ones(64 * 2**20)  # 512 MiB resident in this process while the child runs
    _, quiet, code, _, _ = bench_cli._run([sys.executable, "-c", "import time; time.sleep(0.05)"])
    _, busy, _, _, _ = bench_cli._run([sys.executable, "-c", "import numpy, time; a = numpy.ones(2**25); time.sleep(0.2)"])
    del held
    assert code == 0
    assert quiet < 64, quiet
    assert 256 <= busy < 256 + 96, busy  # the child's own 256 MiB array, seen while it ran


# ---- bench_real: the rows users have, the DuckDB floor, the child runner ------------------------


@pytest.fixture(scope="module")
def tiny_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """A before and an after run of 30 tasks x 8 from the row generator, and the same rows written by whileai."""
    sys.path.insert(0, str(BENCHMARKS))
    import _real

    try:
        gen = _real.generator_path()
    except _real.BenchSetupError as exc:
        pytest.skip(str(exc))
    folder = tmp_path_factory.mktemp("rows")
    paths = {}
    for name, shift in (("before", 0.0), ("after", 0.4)):
        out = folder / f"{name}.jsonl"
        subprocess.run([sys.executable, str(gen), "--n-tasks", "30", "--k", "8", "--seed", "3", "--shift", str(shift),
                        "--out", str(out)], check=True, capture_output=True)
        paths[name] = out
    own = folder / "own"
    saved, _real.OWN_DATA = _real.OWN_DATA, own
    try:
        ob, oa = _real.own_files(paths["before"]), _real.own_files(paths["after"])
    finally:
        _real.OWN_DATA = saved
    sys.modules.pop("_real", None)
    return {"gen": (paths["before"], paths["after"]), "own": (ob[0], oa[0]), "parquet": (ob[1], oa[1])}


@pytest.mark.parametrize("kind", ["gen", "own", "parquet"])
def test_the_floor_queries_give_whileais_numbers(tiny_runs: dict[str, tuple[Path, Path]], kind: str) -> None:
    import _real
    import duckdb

    import whileai as wai

    before, after = tiny_runs[kind]
    con = duckdb.connect()
    floor = dict(con.execute(_real.per_task_sql(before)).fetchall())
    ours = wai.pass_at(str(before))
    per_task = dict(zip(ours.per_task["task_key"].to_list(), ours.per_task["pass_rate"].to_list(), strict=True))
    assert len(floor) == 30 and floor.keys() == per_task.keys()
    for task, rate in per_task.items():
        assert floor[task] == pytest.approx(rate, abs=1e-12), task
    n_tasks, pass1 = con.execute(_real.floor_sql("pass_at", before)[-1]).fetchone()
    assert (n_tasks, pass1) == (30, pytest.approx(ours.pass_at_1, abs=1e-12))
    n_paired, delta, se = con.execute(_real.floor_sql("compare", before, after)[-1]).fetchone()
    after_rates = dict(con.execute(_real.per_task_sql(after)).fetchall())
    diffs = np.array([after_rates[t] - floor[t] for t in floor])
    assert n_paired == wai.compare(str(before), str(after)).n_paired_tasks == 30
    assert delta == pytest.approx(diffs.mean(), abs=1e-12)
    assert se == pytest.approx(diffs.std(ddof=1) / np.sqrt(30), abs=1e-12)


@pytest.mark.parametrize("kind", ["gen", "parquet"])
def test_the_select_floors_fetch_whole_rows_of_the_rule(tiny_runs: dict[str, tuple[Path, Path]], kind: str) -> None:
    import _real
    import duckdb

    from whileai.defaults import DIFFICULTY_BAND

    before, _ = tiny_runs[kind]
    con = duckdb.connect()
    rates = dict(con.execute(_real.per_task_sql(before)).fetchall())
    width = len(con.execute(f"SELECT * FROM {_real.source(before)} LIMIT 1").fetchone())
    rl = con.execute(_real.floor_sql("select_rl", before)[-1]).fetchall()
    lo, hi = DIFFICULTY_BAND
    band = {t for t, r in rates.items() if lo <= r <= hi}
    assert band and len(rl) == 8 * len(band)  # every band task of 30 fits the target: all their rows
    assert all(len(row) == width for row in rl)
    cols = [d[0] for d in con.execute(_real.floor_sql("select_sft", before)[-1]).description]
    sft = con.execute(_real.floor_sql("select_sft", before)[-1]).fetchall()
    key, reward = cols.index("scenario_id"), cols.index("reward")
    assert len(sft) == sum(r > 0 for r in rates.values())  # one passing row per task that passed once
    assert len({row[key] for row in sft}) == len(sft) and all(row[reward] == 1 for row in sft)


def test_the_runner_reports_the_childs_own_peak_and_kills_above_the_limit() -> None:
    import _real

    held = np.ones(64 * 2**20)  # 512 MiB resident here while the children run
    small = _real.run_python("import time; time.sleep(0.05)")
    busy = _real.run_python("import numpy, time; a = numpy.ones(2**25); time.sleep(0.1)")
    big = _real.run_python("import numpy, time; a = numpy.ones(2**27); time.sleep(5)", memory_mib=512)
    bad = _real.run_python("raise SystemExit('no such file')")
    del held
    assert small.ok and busy.ok, (small, busy)
    assert small.peak_mib < 64 and 256 <= busy.peak_mib < 256 + 96, (small.peak_mib, busy.peak_mib)
    assert big.status == "killed above 0.5 GB" and big.peak_mib > 512, big
    assert bad.status.startswith("failed (exit 1): no such file"), bad


def test_a_missing_generator_says_what_to_pass(tmp_path: Path) -> None:
    import _real

    with pytest.raises(_real.BenchSetupError, match="--generator PATH/make_rollouts.py.*--data"):
        _real.generator_path(tmp_path / "make_rollouts.py")
