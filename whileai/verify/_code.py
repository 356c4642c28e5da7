"""``CodeExec``: run a reply's code against tests in a separate process, and say why it failed.

The reply's code (the last fenced block, else the whole reply) is written to a temporary folder
with the setup before it and the tests after it, and run by a fresh Python interpreter:

- a wall-clock ``timeout`` (the whole process group is killed past it),
- an address-space limit (``mem_mb``, ``resource.RLIMIT_AS``) and optionally a CPU-seconds limit,
- no network: the child gets a minimal environment (no proxy variables, no keys), Internet
  sockets and name lookups raise inside it, and where the kernel allows it the child also moves
  into its own empty network namespace (``unshare``),
- isolated mode (``python -I``): no user site-packages, no ``PYTHON*`` variables.

Exit status 0 is a pass. Otherwise the reason names the failure: the exception line and the
failing line of the tests, a timeout, or the memory limit.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from typing import Any

from whileai.defaults import CODE_MEM_MB, CODE_TIMEOUT_S
from whileai.errors import ArgumentError, JudgeError
from whileai.verify._base import Verifier

__all__ = ["CodeExec", "extract_code"]

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)

# Runs in the child before the program: limits, no network, then the program as __main__.
_BOOT = r'''
import os, sys
path, mem, cpu, net = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
try:
    import resource
    if mem > 0:
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    if cpu > 0:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20))
except (ImportError, ValueError, OSError):
    pass
if not net:
    unshare = getattr(os, "unshare", None)
    if unshare is not None:
        try:
            unshare(os.CLONE_NEWUSER | os.CLONE_NEWNET)
        except (OSError, AttributeError):
            pass
    import socket as _socket_mod, _socket
    _base = _socket_mod.socket
    _local = {getattr(_socket_mod, "AF_UNIX", None)}
    def _refuse(*args, **kwargs):
        raise OSError("network access is disabled in CodeExec")
    class _GuardedSocket(_base):
        def __init__(self, family=-1, type=-1, proto=-1, fileno=None):
            if fileno is None and (family == -1 or family not in _local):
                _refuse()
            super().__init__(family, type, proto, fileno)
    _socket_mod.socket = _GuardedSocket
    _socket_mod.SocketType = _GuardedSocket
    for _name in ("create_connection", "getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr",
                  "create_server"):
        if hasattr(_socket_mod, _name):
            setattr(_socket_mod, _name, _refuse)
        if hasattr(_socket, _name):
            setattr(_socket, _name, _refuse)
sys.argv = [path]
sys.path.insert(0, os.path.dirname(path))
import runpy
runpy.run_path(path, run_name="__main__")
'''


def extract_code(text: str) -> str:
    r"""The code in a reply: the last fenced block tagged python (or untagged), else the whole text.

    Examples:
        >>> extract_code("Here:\n```python\ndef f():\n    return 1\n```\nDone.")
        'def f():\n    return 1\n'
    """
    blocks = _FENCE.findall(text or "")
    if blocks:
        python = [body for lang, body in blocks if lang.lower() in ("python", "py", "python3", "")]
        return (python or [blocks[-1][1]])[-1]
    return text or ""


def _child_env(tmp: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": tmp,
        "TMPDIR": tmp,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


def _failure_reason(stderr: str, program_lines: list[str]) -> str:
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    if not lines:
        return "the program exited with an error and printed nothing"
    last = lines[-1].strip()
    where = ""
    for match in re.finditer(r'File "[^"]*program\.py", line (\d+)', stderr):
        number = int(match.group(1))
        if 1 <= number <= len(program_lines):
            where = program_lines[number - 1].strip()
    if where and where not in last:
        return f"{last[:300]} at `{where[:200]}`"
    return last[:400]


class CodeExec(Verifier):
    r"""Pass when the reply's code runs the tests to completion in a sandboxed subprocess.

    Args:
        tests: Python run after the reply's code in the same module (asserts, or calls that
            raise on a wrong answer). Default: the row's ``tests_field`` (a string, or a list of
            assert lines).
        tests_field: The row key read when ``tests`` is not given.
        setup: Python run before the reply's code (imports, fixtures).
        timeout: Wall-clock seconds (``CODE_TIMEOUT_S``); past it the process group is killed.
        mem_mb: Address-space limit in MB (``CODE_MEM_MB``); 0 for none.
        cpu_seconds: CPU-time limit; None for none (the wall clock still applies).
        network: Allow network access (default False).
        python: The interpreter (default: the one running whileai).
        candidate_field: The row key holding the reply (default: the final reply).
        name: The judge name (default ``CodeExec``).

    Examples:
        >>> judge = CodeExec(tests="assert add(2, 3) == 5")
        >>> judge({"final_text": "```python\ndef add(a, b):\n    return a + b\n```"})["reward"]
        1.0
    """

    def __init__(self, tests: str | Sequence[str] | None = None, *, tests_field: str = "tests", setup: str = "",
                 timeout: float = CODE_TIMEOUT_S, mem_mb: int = CODE_MEM_MB, cpu_seconds: int | None = None,
                 network: bool = False, python: str | None = None, candidate_field: str | None = None,
                 name: str | None = None) -> None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ArgumentError(f"timeout must be a positive number of seconds, got {timeout!r}. Pass timeout=10.")
        if isinstance(mem_mb, bool) or not isinstance(mem_mb, int) or mem_mb < 0:
            raise ArgumentError(f"mem_mb must be an integer >= 0 (0: no limit), got {mem_mb!r}. Pass mem_mb=512.")
        if cpu_seconds is not None and (isinstance(cpu_seconds, bool) or not isinstance(cpu_seconds, int) or cpu_seconds < 1):
            raise ArgumentError(f"cpu_seconds must be an integer >= 1 or None, got {cpu_seconds!r}. Pass cpu_seconds=10.")
        if tests is not None and not isinstance(tests, str):
            tests = "\n".join(str(t) for t in tests)
        super().__init__(candidate_field=candidate_field, name=name)
        self.tests = tests
        self.tests_field = tests_field
        self.setup = setup or ""
        self.timeout = float(timeout)
        self.mem_mb = mem_mb
        self.cpu_seconds = cpu_seconds
        self.network = bool(network)
        self.python = python or sys.executable

    def _tests_for(self, row: Mapping[str, Any]) -> str:
        if self.tests is not None:
            return self.tests
        value = row.get(self.tests_field)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, (list, tuple)) and value:
            return "\n".join(str(v) for v in value)
        raise JudgeError(f"CodeExec needs tests: pass CodeExec(tests=...) or put them in the row's {self.tests_field!r} "
                         "field, got neither.")

    def check(self, candidate: str, row: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any]]:
        """Run setup, the reply's code and the tests in a subprocess."""
        tests = self._tests_for(row)
        code = extract_code(candidate)
        if not code.strip():
            return False, "no code found in the reply", {"returncode": None}
        program = f"{self.setup}\n{code}\n\n# ---- tests ----\n{tests}\n"
        lines = program.splitlines()
        with tempfile.TemporaryDirectory(prefix="wai-codeexec-") as tmp:
            path = os.path.join(tmp, "program.py")
            boot = os.path.join(tmp, "boot.py")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(program)
            with open(boot, "w", encoding="utf-8") as handle:
                handle.write(_BOOT)
            args = [self.python, "-I", boot, path, str(self.mem_mb << 20), str(self.cpu_seconds or 0),
                    "1" if self.network else "0"]
            started = time.monotonic()
            proc = subprocess.Popen(args, cwd=tmp, env=_child_env(tmp), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True)
            try:
                out, err = proc.communicate(timeout=self.timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                out, err = proc.communicate()
                timed_out = True
            seconds = time.monotonic() - started
        stderr = err.decode("utf-8", "replace")
        meta: dict[str, Any] = {"returncode": proc.returncode, "seconds": round(seconds, 3),
                                "stderr_tail": stderr[-500:] if stderr else ""}
        if timed_out:
            return False, f"timed out after {self.timeout:g} s", meta
        if proc.returncode == 0:
            return True, "all tests passed", meta
        if "MemoryError" in stderr or (proc.returncode in (-signal.SIGKILL,) and self.mem_mb):
            return False, f"ran out of memory (limit {self.mem_mb} MB)", meta
        if hasattr(signal, "SIGXCPU") and proc.returncode == -signal.SIGXCPU:
            return False, f"used more than {self.cpu_seconds} s of CPU", meta
        return False, _failure_reason(stderr, lines), meta


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError, OSError):
        proc.kill()
