"""One local Ray for every engine test in the session (2 CPUs, no dashboard, no other address).

Starting Ray takes seconds; the four test files share one instance instead of starting one each.
``RAY_TEST_KEY_ENV`` is set before ``ray.init`` so the local workers inherit it (the simulate tests
read an endpoint key from it in the workers).
"""

from __future__ import annotations

import os

import polars as pl
import pytest

RAY_TEST_KEY_ENV = "WAI_RAY_TEST_KEY"
RAY_TEST_KEY = "sk-ray-fake-0123456789"
#: Part files a test run is written as (a folder Ray reads as several blocks).
PARTS = 4


def write_parts(df: pl.DataFrame, folder) -> None:
    """``df`` as ``PARTS`` Parquet part files in a new ``folder``, in row order."""
    folder.mkdir()
    step = -(-df.height // PARTS)
    for i in range(PARTS):
        df[i * step:(i + 1) * step].write_parquet(folder / f"part-{i:03d}.parquet")


@pytest.fixture(scope="session")
def local_ray():
    ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'whileai[ray]'; make test-ray)")
    pytest.importorskip("ray.data", reason="ray[data] is not installed (pip install 'whileai[ray]')")
    os.environ[RAY_TEST_KEY_ENV] = RAY_TEST_KEY
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.default_hash_shuffle_parallelism = 4
    # Ray's default shuffle (hash, aggregator actors) starts actors for every groupby: about 10 s a
    # groupby on this 2-CPU Ray, against 0.4 s for the sort-based shuffle, on these small parts.
    # The engine runs under either (it never sets the user's DataContext); the tests take the fast one.
    from ray.data.context import ShuffleStrategy

    ctx.shuffle_strategy = ShuffleStrategy.SORT_SHUFFLE_PULL_BASED
    yield ray
    ray.shutdown()
    os.environ.pop(RAY_TEST_KEY_ENV, None)
