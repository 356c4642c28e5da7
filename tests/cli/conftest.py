"""Run ``wai`` in-process through ``main()`` (the real error handler), capturing its output."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from typing import NamedTuple

import pytest

from whileai.cli.main import main


class Result(NamedTuple):
    code: int
    out: str
    err: str


@pytest.fixture
def wai(capsys, monkeypatch):
    def run(*args: str, stdin: str | None = None) -> Result:
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return Result(code, out, err)

    return run


@pytest.fixture
def wai_process():
    """Run the installed ``wai`` as a subprocess (for exit codes, signals and start-up time)."""
    exe = os.path.join(os.path.dirname(sys.executable), "wai")

    def run(*args: str, **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=60, **kwargs)

    run.exe = exe  # type: ignore[attr-defined]
    return run
