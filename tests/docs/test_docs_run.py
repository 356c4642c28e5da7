"""Every Python and terminal block of the README and docs/ runs as a reader pastes it (make docs-test).

Each page runs top to bottom in a fresh temp folder (``tests/docs/run_page.py``), its own setup on
the page; a block marked ``needs="model-server"`` runs against a loopback fake OpenAI server, one
marked with an import name runs where that import works. The summary at the end counts the blocks
run and skipped; any block that raises fails its page. Slow (each page imports whileai and runs its
programs): outside ``make test``, in ``make docs-test`` which .ci/run calls.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from tests.docs.blocks import ROOT, Block, blocks, pages, shell_commands

#: Blocks run and skipped, for the summary line (tests/docs/conftest.py prints it).
COUNTS: dict[str, int] = {"ran": 0, "skipped": 0}
SKIPPED: list[str] = []
RUNNER = Path(__file__).with_name("run_page.py")
LOCAL_MODEL_URL = "http://localhost:8000/v1"

PAGES = [p for p in pages() if any(b.lang != "output" for b in blocks(p))]


def _prepare(block: Block, server_url: str | None) -> tuple[Block | None, str | None]:
    """The block as it runs here, or None and the reason it cannot."""
    if block.skip is not None:
        return None, block.skip
    code = block.code if block.lang == "python" else shell_commands(block.code)
    if block.needs == "model-server":
        assert server_url is not None
        code = code.replace(LOCAL_MODEL_URL, server_url)
    elif block.needs is not None and importlib.util.find_spec(block.needs) is None:
        return None, f"needs {block.needs}, not installed here"
    return Block(block.page, block.line, block.lang, code), None


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_block_on_the_page_runs(page, tmp_path):
    from tests.exporters._fake_openai import FakeOpenAI

    all_blocks = blocks(page)
    outputs = [b for b in all_blocks if b.lang == "output"]
    code_blocks = [b for b in all_blocks if b.lang != "output"]
    with FakeOpenAI({}) as server:
        runnable: list[Block] = []
        for block in code_blocks:
            ready, why = _prepare(block, server.base_url)
            if ready is None:
                COUNTS["skipped"] += 1
                SKIPPED.append(f"{block.page}:{block.line}: {why}")
            else:
                runnable.append(ready)
        if not runnable:
            pytest.skip(f"every block of {page.name} is marked as not runnable here")
        spec = tmp_path / "blocks.json"
        spec.write_text(json.dumps([asdict(b) for b in runnable]), encoding="utf-8")
        work = tmp_path / "reader"
        work.mkdir()
        proc = subprocess.run([sys.executable, str(RUNNER), str(spec)], cwd=work, capture_output=True,
                              text=True, timeout=600, env=_env(tmp_path))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    assert f"ran {len(runnable)}" in proc.stdout, out[-3000:]
    COUNTS["ran"] += len(runnable)
    for shown in outputs:
        text = shown.code.strip()
        assert text in proc.stdout, f"{shown.page}:{shown.line}: the output shown is not what the page prints:\n{text}\n--- printed:\n{proc.stdout[-3000:]}"


def _env(tmp_path: Path) -> dict[str, str]:
    import os

    env = dict(os.environ)
    env["HOME"] = str(tmp_path / "home")  # wai login and the store write under the reader's home, not ours
    env["WAI_STORE"] = str(tmp_path / "reader" / ".wai" / "store.duckdb")
    env.pop("OPENAI_API_KEY", None)
    env["PYTHONPATH"] = str(ROOT)  # the pages' recipes import nothing from tests/; whileai is installed
    return env
