"""``CodeExec``: run a reply's code against tests in an isolated process, and say why it failed.

The reply's code (the last fenced block, else the whole reply) is written to a temporary folder
with the setup before it and the tests after it, and run by a fresh Python interpreter in the
sandbox of ``whileai.verify._sandbox`` (``docs/security.md``): new user, network, mount and PID
namespaces (bubblewrap or our own launcher), a read-only view of the interpreter and ``/usr``
with only the work folder writable, a fresh ``/proc``, an empty environment, and limits:

- a wall-clock ``timeout``: past it the whole process group is killed (the PID namespace takes
  every process the program started with it);
- ``RLIMIT_AS`` (``mem_mb``), ``RLIMIT_CPU`` (``cpu_seconds``, else the timeout rounded up),
  ``RLIMIT_FSIZE`` (``CODE_FSIZE_MB``), ``RLIMIT_NPROC`` (``max_procs``), no core files;
- at most ``max_output_bytes`` of output kept: past it the program is killed and fails.

A pass needs exit status 0 *and* a per-call random nonce, printed only after the last test
returned by a checker process the reply's code cannot reach (``_runner.py``): the code runs in a
process of its own, which never holds the nonce, and the tests reach its functions and objects
through a pipe. A program that calls ``sys.exit(0)`` or ``os._exit(0)`` before its tests, or walks
stack frames for the nonce, fails. Otherwise the reason names the failure: the exception line and the failing line of the
tests, a timeout, the memory limit, or the output cap. ``judge_meta["isolation"]`` records which
isolation ran.
"""

from __future__ import annotations

import math
import os
import re
import secrets
import signal
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from whileai.defaults import (
    CODE_FSIZE_MB,
    CODE_ISOLATION,
    CODE_MAX_OUTPUT_BYTES,
    CODE_MAX_PROCS,
    CODE_MEM_MB,
    CODE_TIMEOUT_S,
    CODE_TMP_MB,
)
from whileai.errors import ArgumentError, JudgeError, SandboxError
from whileai.verify._base import Verifier
from whileai.verify._sandbox import (
    ISOLATIONS,
    Isolation,
    available_isolation,
    interpreter_path,
    run_sandboxed,
)

__all__ = ["CodeExec", "extract_code"]

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)
#: Printed (with the nonce) on its own line by the checker after the tests returned.
_DONE = b"\n__wai_tests_done__ "
#: The runner (checker and code process), copied into each call's work folder.
_RUNNER = Path(__file__).with_name("_runner.py")


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
    r"""Pass when the reply's code runs the tests to completion in an isolated subprocess.

    Args:
        tests: Python run after the reply's code in the same module (asserts, or calls that
            raise on a wrong answer). Default: the row's ``tests_field`` (a string, or a list of
            assert lines).
        tests_field: The row key read when ``tests`` is not given.
        setup: Python run before the reply's code (imports, fixtures).
        timeout: Wall-clock seconds (``CODE_TIMEOUT_S``); past it the process group is killed.
        mem_mb: Address-space limit in MB (``CODE_MEM_MB``); 0 for none.
        cpu_seconds: CPU-time limit; None: the timeout rounded up, plus one second.
        max_output_bytes: stdout + stderr kept (``CODE_MAX_OUTPUT_BYTES``); past it the program
            is killed and fails.
        max_procs: ``RLIMIT_NPROC`` in the sandbox (``CODE_MAX_PROCS``).
        isolation: ``"auto"`` (``CODE_ISOLATION``: bubblewrap, else our namespaces launcher),
            ``"bwrap"``, ``"namespaces"``, or ``"none"`` to run unisolated on purpose.
        network: Allow Internet sockets at the Python level (default False). The isolated
            sandboxes have no network either way: only ``isolation="none"`` can reach one.
        python: The interpreter (default: the one running whileai).
        candidate_field: The row key holding the reply (default: the final reply).
        name: The judge name (default ``CodeExec``).

    Raises:
        SandboxError: No isolation works here (or not the one asked for), and ``isolation`` is
            not ``"none"``; or ``python`` is not an interpreter that runs here. A path with
            ``..`` in it is resolved first (the sandbox holds only the interpreter's folders).

    Examples:
        >>> judge = CodeExec(tests="assert add(2, 3) == 5")
        >>> judge({"final_text": "```python\ndef add(a, b):\n    return a + b\n```"})["reward"]
        1.0
    """

    def __init__(self, tests: str | Sequence[str] | None = None, *, tests_field: str = "tests", setup: str = "",
                 timeout: float = CODE_TIMEOUT_S, mem_mb: int = CODE_MEM_MB, cpu_seconds: int | None = None,
                 max_output_bytes: int = CODE_MAX_OUTPUT_BYTES, max_procs: int = CODE_MAX_PROCS,
                 isolation: Isolation = CODE_ISOLATION,
                 network: bool = False, python: str | None = None, candidate_field: str | None = None,
                 name: str | None = None) -> None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0 or math.isinf(timeout):
            raise ArgumentError(f"timeout must be a positive number of seconds, got {timeout!r}. Pass timeout=10.")
        if isinstance(mem_mb, bool) or not isinstance(mem_mb, int) or mem_mb < 0:
            raise ArgumentError(f"mem_mb must be an integer >= 0 (0: no limit), got {mem_mb!r}. Pass mem_mb=512.")
        if cpu_seconds is not None and (isinstance(cpu_seconds, bool) or not isinstance(cpu_seconds, int) or cpu_seconds < 1):
            raise ArgumentError(f"cpu_seconds must be an integer >= 1 or None, got {cpu_seconds!r}. Pass cpu_seconds=10.")
        for label, value, low in (("max_output_bytes", max_output_bytes, 1024), ("max_procs", max_procs, 4)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ArgumentError(f"{label} must be an integer >= {low}, got {value!r}. Leave it at its default.")
        if isolation not in ISOLATIONS:
            raise ArgumentError(f"isolation must be one of {', '.join(ISOLATIONS)}, got {isolation!r}. "
                                "Pass isolation='auto'.")
        if tests is not None and not isinstance(tests, str):
            tests = "\n".join(str(t) for t in tests)
        super().__init__(candidate_field=candidate_field, name=name)
        self.tests = tests
        self.tests_field = tests_field
        self.setup = setup or ""
        self.timeout = float(timeout)
        self.mem_mb = mem_mb
        self.cpu_seconds = cpu_seconds
        self.max_output_bytes = max_output_bytes
        self.max_procs = max_procs
        self.network = bool(network)
        self.python = interpreter_path(python or sys.executable)
        self.isolation = available_isolation(isolation, self.python)

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
        """Run setup, the reply's code and the tests in the sandbox; pass only if the nonce came back."""
        tests = self._tests_for(row)
        code = extract_code(candidate)
        if not code.strip():
            return False, "no code found in the reply", {"returncode": None, "isolation": self.isolation}
        program = f"{self.setup}\n{code}\n\n# ---- tests ----\n{tests}\n"
        setup_last = f"{self.setup}\n".count("\n")
        code_last = f"{self.setup}\n{code}\n".count("\n")
        lines = program.splitlines()
        nonce = secrets.token_hex(16)
        cpu = self.cpu_seconds or math.ceil(self.timeout) + 1
        with tempfile.TemporaryDirectory(prefix="wai-codeexec-") as folder:
            work = os.path.join(folder, "work")
            os.makedirs(work)
            path = os.path.join(work, "program.py")
            runner = os.path.join(work, "runner.py")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(program)
            with open(runner, "w", encoding="utf-8") as handle:
                handle.write(_RUNNER.read_text(encoding="utf-8"))
            argv = [self.python, "-I", runner, "check", path, str(setup_last), str(code_last), str(self.mem_mb << 20),
                    str(cpu), str(CODE_FSIZE_MB << 20), str(self.max_procs), "1" if self.network else "0"]
            run = run_sandboxed(argv, isolation=self.isolation, folder=folder, stdin=f"{nonce}\n".encode(),
                                timeout=self.timeout, max_output_bytes=self.max_output_bytes,
                                tmp_bytes=CODE_TMP_MB << 20)
        stdout, stderr = run.stdout, run.stderr.decode("utf-8", "replace")
        meta: dict[str, Any] = {"returncode": run.returncode, "seconds": round(run.seconds, 3),
                                "isolation": self.isolation, "stderr_tail": stderr[-500:] if stderr else ""}
        if run.timed_out:
            return False, f"timed out after {self.timeout:g} s", meta
        if run.output_capped:
            return False, f"printed more than {self.max_output_bytes} bytes of output (the cap); it was killed", meta
        if stderr.startswith("wai-sandbox:"):
            raise SandboxError(f"the {self.isolation} sandbox must start, got: {stderr.strip()[:300]}. "
                               "Check user namespaces are allowed, or pass isolation='none' on purpose.")
        done = _DONE + nonce.encode()
        if run.returncode == 0 and done in stdout:
            return True, "all tests passed", meta
        if run.returncode == 0:
            return False, "the program exited before its tests finished (exit status 0 without the runner's nonce)", meta
        if "MemoryError" in stderr or (run.returncode in (-signal.SIGKILL, 128 + signal.SIGKILL) and self.mem_mb):
            return False, f"ran out of memory (limit {self.mem_mb} MB)", meta
        if hasattr(signal, "SIGXCPU") and run.returncode in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
            return False, f"used more than {cpu} s of CPU", meta
        return False, _failure_reason(stderr, lines), meta
