"""CodeExec escapes: each case submits code that tries one escape and asserts it fails.

Every program records whether its escape worked and its test is ``assert escaped, "blocked"``,
so a pass (reward 1.0) means the escape worked, and the reason ``AssertionError: blocked`` shows
the program ran to its test and was stopped by the sandbox rather than by some other error.
"""

from __future__ import annotations

import os
import re
import resource
import secrets
import site
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from whileai.defaults import CODE_MAX_OUTPUT_BYTES, CODE_MAX_PROCS
from whileai.verify import CodeExec

BLOCKED = "AssertionError: blocked"
PROJECT = Path(__file__).resolve().parents[2]


def run(box, code: str, *, tests: str = 'assert escaped, "blocked"', **options):
    judge = CodeExec(tests=tests, isolation=box.isolation, python=box.python, **options)
    return judge({"final_text": f"```python\n{code}\n```"})


def assert_blocked(out, box) -> None:
    assert out["reward"] == 0.0, out
    assert out["reason"].startswith(BLOCKED), out
    assert out["judge_meta"]["isolation"] == box.isolation


class Listener:
    """A TCP listener on 127.0.0.1 (free port) that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        self.sock.close()


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


def test_loopback_listener_via_raw_socket_module(box, listener):
    code = f"""
import _socket
escaped = False
try:
    s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    s.settimeout(2)
    s.connect(("127.0.0.1", {listener.port}))
    escaped = True
except OSError:
    pass
"""
    assert_blocked(run(box, code), box)
    assert listener.accepted == 0


def test_loopback_listener_via_subprocess(box, listener):
    code = f"""
import subprocess, sys
probe = "import socket; s = socket.socket(); s.settimeout(2); s.connect(('127.0.0.1', {listener.port}))"
escaped = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True).returncode == 0
"""
    assert_blocked(run(box, code), box)
    assert listener.accepted == 0


def test_host_unix_socket(box, tmp_path):
    path = tmp_path / "host.sock"
    abstract = f"\0wai-reliability-{secrets.token_hex(4)}"
    servers = []
    for address in (str(path), abstract):
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(address)
        server.listen(1)
        servers.append(server)
    code = f"""
import _socket
escaped = False
for address in ({str(path)!r}, {abstract!r}):
    try:
        s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        s.connect(address)
        escaped = True
    except OSError:
        pass
"""
    try:
        assert_blocked(run(box, code), box)
    finally:
        for server in servers:
            server.close()


def test_sys_exit_zero_before_tests(box):
    out = run(box, "import sys\nsys.exit(0)", tests="assert False")
    assert out["reward"] == 0.0 and "exited before its tests finished" in out["reason"]


def test_os_exit_zero_before_tests(box):
    out = run(box, "import os\nos._exit(0)", tests="assert False")
    assert out["reward"] == 0.0 and "exited before its tests finished" in out["reason"]


def test_read_etc_shadow(box):
    assert os.path.exists("/etc/shadow") or os.path.exists("/etc/passwd")
    code = """
escaped = False
for path in ("/etc/shadow", "/etc/passwd", "/etc/hostname"):
    try:
        open(path, "rb").read()
        escaped = True
    except OSError:
        pass
"""
    assert_blocked(run(box, code), box)


def test_read_home_folder(box):
    home = Path.home()
    secret = home / f".wai-reliability-{secrets.token_hex(6)}"
    try:
        secret.write_text("secret")
    except OSError:
        pytest.skip(f"the home folder {home} is not writable here, so no secret can be planted in it")
    code = f"""
import os
escaped = False
try:
    escaped = open({str(secret)!r}).read() == "secret"
except OSError:
    pass
try:
    escaped = escaped or {secret.name!r} in os.listdir({str(home)!r})
except OSError:
    pass
"""
    try:
        assert_blocked(run(box, code), box)
    finally:
        secret.unlink()


def test_read_project_folder(box):
    target = PROJECT / "pyproject.toml"
    assert target.exists()
    code = f"""
escaped = False
try:
    escaped = "whileai" in open({str(target)!r}).read()
except OSError:
    pass
"""
    assert_blocked(run(box, code), box)


def test_read_project_folder_is_readable_without_isolation():
    """The control: unisolated on purpose, the same program reads the project (the test can fail)."""
    code = f"escaped = 'whileai' in open({str(PROJECT / 'pyproject.toml')!r}).read()"
    out = CodeExec(tests='assert escaped, "blocked"', isolation="none")({"final_text": code})
    assert out["reward"] == 1.0 and out["judge_meta"]["isolation"] == "none"


def test_write_outside_temp_site_packages(box):
    name = f"wai_planted_{secrets.token_hex(6)}.py"
    folders = sorted({*site.getsitepackages(), sys.prefix, "/usr/lib/python3/dist-packages", "/usr/local/lib"})
    code = f"""
import os
escaped = False
for folder in {folders!r}:
    try:
        with open(os.path.join(folder, {name!r}), "w") as handle:
            handle.write("print('planted')")
        escaped = True
    except OSError:
        pass
"""
    try:
        assert_blocked(run(box, code), box)
    finally:
        planted = [os.path.join(f, name) for f in folders if os.path.exists(os.path.join(f, name))]
        for path in planted:
            os.unlink(path)
    assert planted == []


def test_write_inside_temp_still_works(box):
    code = "open('scratch.txt', 'w').write('x')\nescaped = open('scratch.txt').read() == 'x'"
    assert run(box, code)["reward"] == 1.0


def test_read_parent_proc_environ(box):
    grader = os.getpid()
    code = f"""
import os
escaped = False
for pid in ["self", str(os.getppid()), "{grader}", *[p for p in os.listdir("/proc") if p.isdigit()]]:
    try:
        data = open(f"/proc/{{pid}}/environ", "rb").read()
    except OSError:
        continue
    if b"PATH=" in data or b"HOME=" in data:
        escaped = True
"""
    assert_blocked(run(box, code), box)


def test_child_in_own_session_holding_stdout(box):
    code = """
import subprocess, sys, time
subprocess.Popen([sys.executable, "-S", "-c", "import time; time.sleep(20)"], start_new_session=True)
time.sleep(20)
"""
    started = time.monotonic()
    out = run(box, code, tests="pass", timeout=3)
    elapsed = time.monotonic() - started
    assert out["reward"] == 0.0 and out["reason"] == "timed out after 3 s"
    assert elapsed < 6, elapsed


def test_child_in_own_session_after_the_program_ends(box):
    code = """
import subprocess, sys
subprocess.Popen([sys.executable, "-S", "-c", "import time; time.sleep(20)"], start_new_session=True)
"""
    started = time.monotonic()
    out = run(box, code, tests="pass", timeout=3)
    assert out["reward"] == 1.0
    assert time.monotonic() - started < 3


def test_output_300_mb(box):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code = "import sys\nchunk = 'x' * 1_000_000\nfor _ in range(300):\n    sys.stdout.write(chunk)\nescaped = True"
    started = time.monotonic()
    out = run(box, code)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert out["reward"] == 0.0 and f"more than {CODE_MAX_OUTPUT_BYTES} bytes" in out["reason"]
    assert grown_mb < 64, grown_mb
    assert time.monotonic() - started < 10


def test_fork_bomb_capped(box):
    code = """
import os, time
forked = 0
for _ in range(150):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(3)
        os._exit(0)
    forked += 1
"""
    out = run(box, code, tests='assert forked >= 150, f"forked {forked}"', timeout=10)
    assert out["reward"] == 0.0, out
    match = re.match(r"AssertionError: forked (\d+)", out["reason"])
    assert match, out["reason"]
    assert int(match.group(1)) < CODE_MAX_PROCS


def _host_processes_with(token: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if token.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(int(pid))
            except OSError:
                pass
    return found


def test_children_do_not_outlive_the_call(box):
    token = f"wai-orphan-{secrets.token_hex(6)}"
    code = f"""
import subprocess, sys
for _ in range(3):
    subprocess.Popen([sys.executable, "-S", "-c", "import time; time.sleep(30)", {token!r}], start_new_session=True)
import time
time.sleep(0.5)
"""
    out = run(box, code, tests="pass", timeout=5)
    assert out["reward"] == 1.0, out
    deadline = time.monotonic() + 2
    while _host_processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _host_processes_with(token) == []


def test_an_interpreter_under_tmp_runs_isolated(tmp_path):
    """A venv under /tmp (a CI checkout's .venv) is bound on top of the sandbox's /tmp, not hidden by it."""
    import subprocess
    import tempfile

    from whileai.errors import SandboxError
    from whileai.verify._sandbox import available_isolation

    folder = Path(tempfile.mkdtemp(prefix="wai-venv-", dir="/tmp"))
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder / "venv")], check=True)
        python = str(folder / "venv" / "bin" / "python")
        try:
            available_isolation("namespaces")  # the kernel allows it for the interpreter running the tests
        except SandboxError as exc:
            pytest.skip(f"no namespaces here: {exc}")
        judge = CodeExec(tests="assert add(2, 3) == 5", isolation="namespaces", python=python)
        out = judge({"final_text": "```python\ndef add(a, b):\n    return a + b\n```"})
        assert out["reward"] == 1.0, out
    finally:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)


KEYCTL = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine)


@pytest.mark.skipif(KEYCTL is None, reason=f"no keyctl(2) number known for {os.uname().machine}")
def test_session_keyring_secret_is_out_of_reach(box, tmp_path):
    """A secret in the grader's session keyring (keyctl add user NAME SECRET @s) stays out of the program's reach.

    The grader runs in a child process that joins a keyring of its own first, so the test leaves
    the session keyring of whoever runs pytest alone.
    """
    secret = secrets.token_hex(8)
    code = f"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
escaped = False
for ring in (-3, -4, -5):  # the session, user and user-session keyrings
    kid = libc.syscall({KEYCTL}, 10, ring, b"user", b"wai-reliability", 0)  # KEYCTL_SEARCH
    if kid > 0:
        buf = ctypes.create_string_buffer(256)
        n = libc.syscall({KEYCTL}, 11, kid, buf, 256)  # KEYCTL_READ
        escaped = escaped or (n > 0 and b"{secret}" in buf.raw)
"""
    grader = f"""
import ctypes, json, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.syscall({KEYCTL}, 1, None) < 0:  # KEYCTL_JOIN_SESSION_KEYRING: a keyring of this process's own
    print(json.dumps({{"skip": "keyctl is refused here"}})); sys.exit(0)
if libc.syscall(248, b"user", b"wai-reliability", b"{secret}", {len(secret)}, -3) < 0:  # add_key to @s
    print(json.dumps({{"skip": "add_key is refused here"}})); sys.exit(0)
from whileai.verify import CodeExec
judge = CodeExec(tests='assert escaped, "blocked"', isolation={box.isolation!r}, python={box.python!r})
print(json.dumps(judge({{"final_text": {code!r}}})))
"""
    if KEYCTL == 219:
        grader = grader.replace("syscall(248,", "syscall(217,")
    import json
    import subprocess

    done = subprocess.run([sys.executable, "-c", grader], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if "skip" in out:
        pytest.skip(out["skip"])
    assert_blocked(out, box)


def test_inherited_fds_env_and_cgroup(box):
    """The program holds stdin, stdout, stderr and its two pipes to the checker only, an empty
    environment (Python's own LC_CTYPE aside, PEP 538), and sees its own cgroup as the root."""
    leak = os.open(os.devnull, os.O_RDONLY)
    os.set_inheritable(leak, True)
    code = """
import os
links = {}
for name in os.listdir("/proc/self/fd"):
    try:
        links[int(name)] = os.readlink(f"/proc/self/fd/{name}")
    except OSError:
        pass  # the listing's own descriptor, closed by now
extra = [target for fd, target in links.items() if fd > 2]
with open("/proc/self/cgroup") as handle:
    groups = [line.strip() for line in handle if line.strip()]
escaped = (len(extra) > 2 or any(not t.startswith("pipe:") for t in extra) or set(os.environ) - {"LC_CTYPE"}
           or [g for g in groups if not g.endswith(":/")])
escaped = bool(escaped)
"""
    try:
        assert_blocked(run(box, code), box)
    finally:
        os.close(leak)


def test_tmp_is_private_and_size_capped(box):
    """The program's /tmp is a tmpfs of CODE_TMP_MB: 300 MB of files do not fit, and none reach the host's disk."""
    from whileai.defaults import CODE_FSIZE_MB, CODE_TMP_MB

    code = f"""
import os
chunk = b"x" * (1 << 20)
written = 0
try:
    for i in range(300 // 32):
        with open(f"/tmp/fill-{{i}}", "wb") as handle:
            for _ in range(32):
                handle.write(chunk)
                written += 1
except OSError:
    pass
too_big = False
try:
    with open("/tmp/one", "wb") as handle:
        for _ in range({CODE_FSIZE_MB} + 8):
            handle.write(chunk)
    too_big = True
except OSError:
    pass
escaped = written >= 300 or written > {CODE_TMP_MB} or too_big
"""
    before = {p.name for p in Path("/tmp").glob("wai-codeexec-*")}
    assert_blocked(run(box, code, timeout=30), box)
    assert {p.name for p in Path("/tmp").glob("wai-codeexec-*")} <= before


def test_pass_nonce_cannot_be_forged_by_walking_stack_frames(box):
    """Code that finds a nonce in frames, gc or its parent's /proc and prints it must not pass a failing test."""
    code = r"""
import gc, os, re, sys
found = set()
frame = sys._getframe()
while frame is not None:
    for value in list(frame.f_locals.values()) + list(frame.f_globals.values()):
        if isinstance(value, str) and re.fullmatch(r"[0-9a-f]{32}", value):
            found.add(value)
    frame = frame.f_back
for obj in gc.get_objects():
    if isinstance(obj, dict):
        for value in list(obj.values()):
            if isinstance(value, str) and re.fullmatch(r"[0-9a-f]{32}", value):
                found.add(value)
for pid in {str(os.getppid()), *[p for p in os.listdir("/proc") if p.isdigit()]}:
    for part in ("cmdline", "environ", "mem"):
        try:
            data = open(f"/proc/{pid}/{part}", "rb").read(1 << 20)
        except (OSError, ValueError):
            continue
        found.update(m.decode() for m in re.findall(rb"[0-9a-f]{32}", data))
for nonce in found:
    sys.stdout.write("\n__wai_tests_done__ " + nonce + "\n")
sys.stdout.flush()
os._exit(0)
"""
    out = run(box, code, tests="assert False")
    assert out["reward"] == 0.0, out
    assert "exited before its tests finished" in out["reason"], out
