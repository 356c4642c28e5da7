"""The sandbox each escape test runs against: our namespaces launcher and bubblewrap.

The user-namespace check runs once. A test skips only where the kernel forbids user namespaces
(or bubblewrap is missing, for its half); a sandbox that fails for any other reason fails the
tests.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import sys
from typing import NamedTuple

import pytest

from whileai.verify._sandbox import sandbox_reasons

CLONE_NEWUSER = 0x10000000


@functools.lru_cache(maxsize=1)
def userns_forbidden() -> str:
    """Why the kernel refuses a user namespace here (empty: it allows one), tried in a child."""
    if not sys.platform.startswith("linux"):
        return f"user namespaces are Linux only, this is {sys.platform}"
    pid = os.fork()
    if pid == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        os._exit(0 if libc.unshare(CLONE_NEWUSER) == 0 else min(ctypes.get_errno(), 250))
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return "" if code == 0 else f"the kernel forbids user namespaces here (unshare: {os.strerror(code)})"


class Box(NamedTuple):
    isolation: str
    python: str


@pytest.fixture(params=["namespaces", "bwrap"])
def box(request) -> Box:
    """An isolation and an interpreter it can run (bubblewrap may need the system Python)."""
    forbidden = userns_forbidden()
    if forbidden:
        pytest.skip(forbidden)
    if request.param == "bwrap":
        if shutil.which("bwrap") is None:
            pytest.skip("bubblewrap is not installed (make install-sandbox installs it)")
        for python in (sys.executable, "/usr/bin/python3"):
            if os.path.exists(python) and not sandbox_reasons(python)["bwrap"]:
                return Box("bwrap", python)
        pytest.skip(f"bubblewrap cannot run an interpreter here: {sandbox_reasons()['bwrap']}")
    return Box("namespaces", sys.executable)
