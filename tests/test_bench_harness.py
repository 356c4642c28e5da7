"""The benchmark harness measures the child it runs, not the process that runs it."""

from __future__ import annotations

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
    for name in ("bench_cli", "_harness"):
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
