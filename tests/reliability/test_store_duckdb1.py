"""A store file this whileai creates opens in DuckDB 1.x, the releases users' notebooks and tools have.

The check runs a separate interpreter with ``duckdb<2``: ``$WAI_DUCKDB1_PYTHON`` when set (``make
test-store-compat`` builds one), else a throwaway venv made here; it skips, saying why, when
``duckdb<2`` cannot be installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import whileai as wai

from ._support import rows

_READ = textwrap.dedent("""
    import json, sys, duckdb
    con = duckdb.connect(sys.argv[1], read_only=True)
    out = {
        "duckdb": duckdb.__version__,
        "datasets": con.execute("SELECT id, n_rows FROM datasets ORDER BY id").fetchall(),
        "runs": con.execute("SELECT count(*) FROM runs").fetchone()[0],
        "migrations": [r[0] for r in con.execute("SELECT name FROM _wai_migrations ORDER BY name").fetchall()],
    }
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def duckdb1_python(tmp_path_factory) -> str:
    given = os.environ.get("WAI_DUCKDB1_PYTHON")
    if given:
        return given
    venv = tmp_path_factory.mktemp("duckdb1") / "venv"
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True,
                       timeout=120)
        python = str(venv / "bin" / "python")
        # this interpreter's pip installs into the throwaway venv's site-packages, so no pip bootstrap is needed
        site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              check=True, capture_output=True, text=True, timeout=60).stdout.strip()
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", site, "duckdb<2"],
                       check=True, capture_output=True, text=True, timeout=300)
    except (subprocess.SubprocessError, OSError) as exc:
        detail = getattr(exc, "stderr", "") or exc
        pytest.skip(f"duckdb<2 could not be installed into a throwaway venv ({str(detail).strip()[-200:]})")
    return python


def test_store_file_opens_in_duckdb_1x(tmp_path, duckdb1_python):
    store = wai.store.open(tmp_path / "store.duckdb")
    store.save_dataset(rows(), "refunds")
    store.record_run(rows(), name="base")
    result = subprocess.run([duckdb1_python, "-c", _READ, str(store.path)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["duckdb"].startswith("1."), seen["duckdb"]
    assert seen["datasets"] == [["refunds@1", 4]] and seen["runs"] == 1
    assert seen["migrations"] == sorted(m.__name__ for m in __import__("whileai.store._migrations",
                                                                        fromlist=["MIGRATIONS"]).MIGRATIONS)
    assert Path(store.path).exists()
