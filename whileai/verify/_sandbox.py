"""Run a Python program isolated from the machine: the sandbox under ``verify.CodeExec``.

Three isolations (``docs/security.md``):

- ``bwrap``: bubblewrap (``/usr/bin/bwrap``), when it is installed and can run this interpreter
  as an unprivileged user;
- ``namespaces``: our own launcher (``_launcher.py``) calling ``unshare(2)`` through ctypes;
- ``none``: a plain subprocess with an empty environment and resource limits, only on request.

Both isolated ones give the program new user, network, mount, PID, IPC and UTS namespaces, a root
that holds only the interpreter's prefixes, ``/usr``, ``/lib*``, a few ``/etc`` files the dynamic
loader reads, a minimal ``/dev`` and a fresh ``/proc``, all read-only except the work folder
(mounted at ``/tmp``). When whileai runs as root the sandbox runs as ``CODE_SANDBOX_UID``, since
the kernel does not enforce ``RLIMIT_NPROC`` for root. ``"auto"`` picks the first that works here,
probed once per interpreter; none working is a :class:`~whileai.errors.SandboxError`.

The parent reads stdout and stderr in bounded chunks (past ``max_output_bytes`` the program is
killed), waits on the process rather than on pipe EOF (a grandchild holding a pipe open cannot
stretch the timeout) and kills the whole process group when the program ends or runs out of time.
"""

from __future__ import annotations

import functools
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

from whileai.defaults import CODE_SANDBOX_GID, CODE_SANDBOX_UID, CODE_TMP_MB
from whileai.errors import SandboxError

__all__ = ["ISOLATIONS", "Isolation", "SandboxRun", "available_isolation", "run_sandboxed", "sandbox_reasons"]

Isolation = Literal["auto", "bwrap", "namespaces", "none"]
ISOLATIONS = ("auto", "bwrap", "namespaces", "none")
_LAUNCHER = str(Path(__file__).with_name("_launcher.py"))
#: Where the work folder appears inside the sandbox.
WORK_DEST = "/tmp"
_DEVICES = ("null", "zero", "full", "random", "urandom")
# /etc entries the dynamic loader and time functions read; the rest of /etc (shadow, passwd,
# ssl keys, hosts) stays out.
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime")
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_READ_CHUNK = 65536


class SandboxRun(NamedTuple):
    """What one sandboxed run gave back."""

    returncode: int | None
    stdout: bytes
    stderr: bytes
    seconds: float
    timed_out: bool
    output_capped: bool


def _sandbox_ids() -> tuple[int | None, int | None]:
    """The uid/gid the sandbox drops to (only when running as root), else (None, None)."""
    if os.geteuid() == 0:
        return CODE_SANDBOX_UID, CODE_SANDBOX_GID
    return None, None


@functools.lru_cache(maxsize=8)
def _prefixes(python: str) -> tuple[str, ...]:
    """The folders an interpreter needs: its prefixes and the folder of its real executable."""
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    else:
        out = subprocess.run([python, "-I", "-c", "import sys; print(sys.prefix); print(sys.base_prefix); "
                              "print(sys.exec_prefix); print(sys.base_exec_prefix)"], capture_output=True,
                             text=True, timeout=30, check=False, env={})
        found = {line for line in out.stdout.splitlines() if line.startswith("/")}
    found.add(os.path.dirname(os.path.dirname(os.path.realpath(python))))
    found.add(os.path.dirname(os.path.abspath(python)))
    keep: list[str] = []
    for path in sorted({os.path.realpath(p) for p in found} | {os.path.abspath(p) for p in found}, key=len):
        if not os.path.isdir(path) or path == "/":
            continue
        if any(path == k or path.startswith(k + "/") for k in keep) or path.startswith("/usr/"):
            continue
        keep.append(path)
    return tuple(keep)


def _layout(python: str, work: str, tmp_bytes: int) -> tuple[list[dict[str, object]], list[tuple[str, str]]]:
    """Binds (all read-only), the size-capped tmpfs at ``/tmp`` and symlinks that make the sandbox's root.

    The work folder's files are bound read-only into the sandbox's own ``/tmp``, a tmpfs of at most
    ``tmp_bytes``: the program writes there, never onto the host's disk.
    """
    binds: list[dict[str, object]] = []
    links: list[tuple[str, str]] = []
    for path in _SYSTEM:
        if os.path.islink(path):
            links.append((os.readlink(path), path))
        elif os.path.isdir(path):
            binds.append({"src": path, "dest": path, "dir": True, "rw": False})
    for name in _ETC:
        path = f"/etc/{name}"
        if os.path.exists(path):
            binds.append({"src": os.path.realpath(path), "dest": path, "dir": os.path.isdir(path), "rw": False})
    for prefix in _prefixes(python):
        binds.append({"src": prefix, "dest": prefix, "dir": True, "rw": False})
    for name in _DEVICES:
        if os.path.exists(f"/dev/{name}"):
            binds.append({"src": f"/dev/{name}", "dest": f"/dev/{name}", "dir": False, "rw": True})
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        links.append((target, f"/dev/{name}"))
    binds.append({"tmpfs": True, "dest": WORK_DEST, "size": int(tmp_bytes), "dir": True, "rw": True})
    for name in sorted(os.listdir(work)):
        path = os.path.join(work, name)
        binds.append({"src": path, "dest": f"{WORK_DEST}/{name}", "dir": os.path.isdir(path), "rw": False})
    # Parents before children: an interpreter prefix under the work folder's mount point (a venv in
    # /tmp, as a CI checkout has) must be mounted on top of it, not hidden beneath it.
    binds.sort(key=lambda b: str(b["dest"]).rstrip("/").count("/"))
    return binds, links


def _bwrap_command(python: str, work: str, argv: Sequence[str], tmp_bytes: int) -> list[str]:
    binds, links = _layout(python, work, tmp_bytes)
    cmd = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--clearenv", "--cap-drop", "ALL",
           "--tmpfs", "/"]
    for bind in binds:
        if str(bind["dest"]).startswith("/dev/"):
            continue
        if bind.get("tmpfs"):
            cmd += ["--perms", "1777", "--size", str(bind["size"]), "--tmpfs", str(bind["dest"])]
            continue
        cmd += ["--bind" if bind["rw"] else "--ro-bind", str(bind["src"]), str(bind["dest"])]
    for target, link in links:
        if not link.startswith("/dev/"):
            cmd += ["--symlink", target, link]
    cmd += ["--dev", "/dev", "--proc", "/proc", "--remount-ro", "/", "--chdir", WORK_DEST, "--", *argv]
    return cmd


def _namespaces_command(python: str, work: str, root: str, argv: Sequence[str], tmp_bytes: int) -> list[str]:
    binds, links = _layout(python, work, tmp_bytes)
    uid, gid = _sandbox_ids()
    if uid is None:
        uid, gid = os.getuid(), os.getgid()
    cfg = {"binds": binds, "symlinks": links, "root": root, "work_dest": WORK_DEST, "cwd": WORK_DEST,
           "uid": uid, "gid": gid, "argv": list(argv)}
    return [sys.executable, "-I", "-S", _LAUNCHER, json.dumps(cfg)]


def _prepare(folder: str) -> tuple[str, str]:
    """Make the work folder and the new root's mount point, owned by the sandbox's user."""
    work = os.path.join(folder, "work")
    root = os.path.join(folder, "root")
    os.makedirs(work, exist_ok=True)
    os.makedirs(root, exist_ok=True)
    uid, gid = _sandbox_ids()
    if uid is not None and gid is not None:
        for path in (folder, work, root):
            os.chown(path, uid, gid)
    return work, root


def _command(isolation: str, python: str, folder: str, argv: Sequence[str],
             tmp_bytes: int) -> tuple[list[str], dict[str, object]]:
    work, root = _prepare(folder)
    if isolation == "bwrap":
        uid, gid = _sandbox_ids()
        extra: dict[str, object] = {} if uid is None else {"user": uid, "group": gid, "extra_groups": []}
        return _bwrap_command(python, work, argv, tmp_bytes), {"cwd": "/", **extra}
    if isolation == "namespaces":
        return _namespaces_command(python, work, root, argv, tmp_bytes), {"cwd": "/"}
    return list(argv), {"cwd": work}


def _inside(path: str, isolation: str, folder: str) -> str:
    """A file of the work folder as the program sees it."""
    rel = os.path.relpath(path, os.path.join(folder, "work"))
    return f"{WORK_DEST}/{rel}" if isolation != "none" else path


@functools.lru_cache(maxsize=16)
def _probe(isolation: str, python: str) -> str:
    """Empty when ``isolation`` runs ``python`` here, else why not (cached per process)."""
    import tempfile

    if isolation == "bwrap" and shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    if isolation == "namespaces" and not sys.platform.startswith("linux"):
        return f"Linux namespaces are not available on {sys.platform}"
    check = ("import os, sys; assert os.getpid() <= 3, os.getpid(); "
             "assert not os.path.exists('/etc/shadow'); open('/tmp/probe', 'w').close(); print('ok')")
    with tempfile.TemporaryDirectory(prefix="wai-probe-") as folder:
        try:
            result = run_sandboxed([python, "-I", "-c", check], isolation=isolation, folder=folder, stdin=b"",
                                   timeout=30.0, max_output_bytes=1 << 16)
        except OSError as exc:
            return f"{isolation} could not start: {exc}"
    if result.returncode == 0 and result.stdout.strip() == b"ok":
        return ""
    text = (result.stderr or result.stdout).decode("utf-8", "replace").strip().splitlines()
    return f"{isolation} failed here: {text[-1] if text else f'exit status {result.returncode}'}"


def interpreter_path(python: str) -> str:
    """``python`` as an absolute path with no ``.`` or ``..`` in it, the link to the interpreter kept.

    Inside the sandbox only the interpreter's own folders exist, so a ``..`` that passes through a
    folder outside them (``/repo/tests/../.venv/bin/python``) cannot be followed there. The folder
    is resolved as the kernel would (through links), the file name kept as given: a venv's
    ``python`` link must stay a link for the interpreter to find its ``pyvenv.cfg``.
    """
    folder, name = os.path.split(os.path.abspath(os.path.expanduser(python)))
    return os.path.join(os.path.realpath(folder), name)


def interpreter_problem(python: str) -> str:
    """Empty when ``python`` runs here unisolated, else why not (a missing file, not a program, a crash)."""
    if not os.path.isfile(python):
        return "no such file" if not os.path.exists(python) else "not a file"
    if not os.access(python, os.X_OK):
        return "not executable"
    try:
        out = subprocess.run([python, "-I", "-c", "print('ok')"], capture_output=True, timeout=30, check=False, env={})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"it could not start ({type(exc).__name__}: {exc})"
    if out.returncode != 0 or out.stdout.strip() != b"ok":
        lines = out.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"it failed to run ({lines[-1] if lines else f'exit status {out.returncode}'})"
    return ""


def sandbox_reasons(python: str | None = None) -> dict[str, str]:
    """Why each isolated sandbox cannot run ``python`` here (empty string: it works)."""
    python = python or sys.executable
    return {name: _probe(name, python) for name in ("bwrap", "namespaces")}


def available_isolation(isolation: str, python: str | None = None) -> str:
    """The isolation a run will use: ``isolation`` itself, or for ``"auto"`` the first that works.

    Raises:
        SandboxError: The requested isolation (or, for ``"auto"``, every one) cannot run here.
    """
    python = interpreter_path(python or sys.executable)
    problem = interpreter_problem(python)
    if problem:
        raise SandboxError(
            f"CodeExec's python must be a Python interpreter that runs here, got {python!r}: {problem}. "
            "Pass CodeExec(python=...) the full path of a working interpreter (sys.executable by default); "
            "isolation is not the problem.", argument="python", value=python, reason="bad_interpreter")
    if isolation == "none":
        return "none"
    names = ("bwrap", "namespaces") if isolation == "auto" else (isolation,)
    why: list[str] = []
    for name in names:
        reason = _probe(name, python)
        if not reason:
            return name
        why.append(reason)
    raise SandboxError(
        f"CodeExec must run submitted code isolated (new user, network, mount and PID namespaces), "
        f"got no working isolation for isolation={isolation!r} on this machine ({'; '.join(why)}). "
        "Install bubblewrap (apt-get install bubblewrap) or allow user namespaces "
        "(sysctl user.max_user_namespaces=15000), or pass isolation='none' to run it unisolated on purpose.",
        argument="isolation", value=isolation, reason="no_isolation", counts={"probes_failed": len(why)})


def run_sandboxed(argv: Sequence[str], *, isolation: str, folder: str, stdin: bytes, timeout: float,
                  max_output_bytes: int, tmp_bytes: int = CODE_TMP_MB << 20) -> SandboxRun:
    """Run ``argv`` under ``isolation`` with ``folder``'s ``work`` files in its own ``/tmp``.

    ``argv`` names files of the work folder by their host path; they are rewritten to the path
    the program sees (read-only, in a tmpfs ``/tmp`` of at most ``tmp_bytes`` the program may
    write; with ``isolation="none"`` the work folder itself). ``stdin`` is written to the
    program's stdin, which is then closed. The program starts in a session keyring of its own
    with no inherited descriptor beyond stdin, stdout and stderr, and an empty environment.
    """
    argv = [_inside(a, isolation, folder) if a.startswith(os.path.join(folder, "work") + "/") else a for a in argv]
    cmd, extra = _command(isolation, argv[0], folder, argv, tmp_bytes)
    _KEYRING_CALL[0] = _keyring_call()
    started = time.monotonic()
    proc = subprocess.Popen(cmd, env={}, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, close_fds=True, preexec_fn=_own_keyring,
                            **extra)  # type: ignore[call-overload]
    try:
        return _collect(proc, stdin, started, timeout, max_output_bytes)
    finally:
        _kill_group(proc)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


#: keyctl(2) by machine (asm-generic and x86_64 numbering) and KEYCTL_JOIN_SESSION_KEYRING.
_KEYCTL = {"x86_64": 250, "amd64": 250, "aarch64": 219, "arm64": 219}
_KEYCTL_JOIN_SESSION_KEYRING = 1


@functools.lru_cache(maxsize=1)
def _keyring_call() -> Any:
    """The libc call that joins a new session keyring, resolved in the parent (no import after fork)."""
    import ctypes
    import platform

    number = _KEYCTL.get(platform.machine().lower())
    if number is None:
        return None
    return functools.partial(ctypes.CDLL(None, use_errno=True).syscall, number, _KEYCTL_JOIN_SESSION_KEYRING, None)


def _own_keyring() -> None:
    """In the child before exec: join a new anonymous session keyring (keyctl(2)).

    The grader's session keyring (secrets ``keyctl add ... @s`` put there) is then out of the
    program's reach: keys are readable by their possessor, and the program no longer possesses
    them. A kernel without keyrings (or a seccomp filter refusing keyctl) has none to leak.
    """
    call = _KEYRING_CALL[0]
    if call is not None:
        call()


_KEYRING_CALL: list[Any] = [None]


def _collect(proc: subprocess.Popen[bytes], stdin: bytes, started: float, timeout: float,
             cap: int) -> SandboxRun:
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write(stdin)
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    buffers = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    selector = selectors.DefaultSelector()
    for fd in buffers:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ)
    deadline = started + timeout
    timed_out = capped = False
    with selector:
        while proc.poll() is None:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            capped = _drain(selector, buffers, cap, min(left, 0.05))
            if capped:
                break
        _kill_group(proc)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        if not capped:  # what the program wrote before it ended, without waiting for EOF
            capped = _drain(selector, buffers, cap, 0.0)
    out, err = (bytes(b) for b in buffers.values())
    return SandboxRun(proc.returncode, out, err, time.monotonic() - started, timed_out, capped)


def _drain(selector: selectors.BaseSelector, buffers: dict[int, bytearray], cap: int, wait: float) -> bool:
    """Read what is ready (at most ``cap`` bytes in all); True when the program printed more than ``cap``."""
    for key, _ in selector.select(wait):
        fd = int(key.fd)
        while True:
            try:
                chunk = os.read(fd, _READ_CHUNK)
            except BlockingIOError:
                break
            if not chunk:
                selector.unregister(fd)
                break
            room = cap - sum(len(b) for b in buffers.values())
            buffers[fd] += chunk[:max(room, 0)]
            if len(chunk) > room:
                return True
    return False


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass
    try:
        proc.kill()
    except (ProcessLookupError, OSError):
        pass
