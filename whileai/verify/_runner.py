"""CodeExec's runner: the tests run in a checker process the reply's code cannot reach.

A standalone script (standard library only), copied into the sandbox's work folder and run as
``python -I runner.py check PROGRAM SETUP_LINES CODE_LINES MEM CPU FSIZE NPROC NETWORK``:

- the **checker** reads the per-call nonce from stdin, points stdin at ``/dev/null``, marks itself
  not dumpable (``PR_SET_DUMPABLE`` 0: a process of the same user can then neither ptrace it nor
  read its ``/proc/<pid>/mem``), and starts the **code process** (``runner.py code ...``) with a
  fresh interpreter, which never holds the nonce;
- the code process runs the setup and the reply's code as ``__main__``, then answers requests
  over two pipes: a name of its module, a call, an attribute, an operator;
- the checker runs the setup and the tests in a module whose missing names are looked up in the
  code process (builtins stay the checker's: the reply cannot redefine ``all`` or ``type`` for
  the tests). Plain values (None, bool, int, float, complex, str, bytes, and lists, tuples,
  dicts, sets of them, exactly those types) come back as values; anything else as a proxy whose
  calls, attributes and operators run in the code process. Only when the last test returned does
  the checker print the nonce.

No trick inside the code process (walking stack frames, ``gc``, ``ctypes``, patching builtins)
can print the nonce: it is not in that process, and the checker is not reachable from it. What
the reply's objects answer to the tests is still theirs to answer (an object whose ``__eq__``
says True to everything compares equal; ``type(x) is list`` in a test rules it out).
"""

import marshal
import os
import struct
import sys

_PLAIN = (type(None), bool, int, float, complex, str, bytes)
_CONTAINERS = (list, tuple, dict, set, frozenset)
_MAX_DEPTH = 64
_MAX_MESSAGE = 64 << 20
DONE = "\n__wai_tests_done__ "


def _plain(value, depth=0):
    """Whether ``value`` is made only of the exact plain types (no subclass: its methods are code's)."""
    kind = type(value)
    if kind in _PLAIN:
        return True
    if kind not in _CONTAINERS or depth > _MAX_DEPTH:
        return False
    if kind is dict:
        return all(_plain(k, depth + 1) and _plain(v, depth + 1) for k, v in value.items())
    return all(_plain(v, depth + 1) for v in value)


def _send(fd, message):
    data = marshal.dumps(message)
    os.write(fd, struct.pack("<I", len(data)))
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_exactly(fd, n):
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _receive(fd):
    (size,) = struct.unpack("<I", _read_exactly(fd, 4))
    if size > _MAX_MESSAGE:
        raise EOFError
    return marshal.loads(_read_exactly(fd, size))


def _limits(mem, cpu, fsize, nproc):
    import resource

    for kind, value in ((resource.RLIMIT_CORE, 0), (resource.RLIMIT_FSIZE, fsize), (resource.RLIMIT_NPROC, nproc),
                        (resource.RLIMIT_CPU, cpu), (resource.RLIMIT_AS, mem)):
        if value > 0 or kind == resource.RLIMIT_CORE:
            try:
                resource.setrlimit(kind, (value, value))
            except (ValueError, OSError):
                pass


def _guard_network():
    """Refuse Internet sockets at the Python level (a clear reason; the network namespace is what holds)."""
    import _socket
    import socket as socket_module

    base = socket_module.socket
    local = {getattr(socket_module, "AF_UNIX", None)}

    def refuse(*args, **kwargs):
        raise OSError("network access is disabled in CodeExec")

    class GuardedSocket(base):
        def __init__(self, family=-1, type=-1, proto=-1, fileno=None):
            if fileno is None and (family == -1 or family not in local):
                refuse()
            super().__init__(family, type, proto, fileno)

    socket_module.socket = GuardedSocket
    socket_module.SocketType = GuardedSocket
    for name in ("create_connection", "getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr",
                 "create_server"):
        if hasattr(socket_module, name):
            setattr(socket_module, name, refuse)
        if hasattr(_socket, name):
            setattr(_socket, name, refuse)


def _source(path, first, last):
    """Lines ``first``..``last`` (1-based, inclusive) of the program, the others blank: line numbers stay."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    return "\n".join(line if first <= i + 1 <= last else "" for i, line in enumerate(lines))


# ---- the code process ----------------------------------------------------------------------------

_OPS = {
    "__eq__": lambda a, b: a == b, "__ne__": lambda a, b: a != b, "__lt__": lambda a, b: a < b,
    "__le__": lambda a, b: a <= b, "__gt__": lambda a, b: a > b, "__ge__": lambda a, b: a >= b,
    "__add__": lambda a, b: a + b, "__radd__": lambda a, b: b + a, "__sub__": lambda a, b: a - b,
    "__rsub__": lambda a, b: b - a, "__mul__": lambda a, b: a * b, "__rmul__": lambda a, b: b * a,
    "__truediv__": lambda a, b: a / b, "__floordiv__": lambda a, b: a // b, "__mod__": lambda a, b: a % b,
    "__pow__": lambda a, b: a ** b, "__neg__": lambda a: -a, "__abs__": abs, "__len__": len, "__bool__": bool,
    "__iter__": iter, "__next__": next, "__repr__": repr, "__str__": str, "__hash__": hash, "__int__": int,
    "__float__": float, "__index__": lambda a: a.__index__(), "__getitem__": lambda a, k: a[k],
    "__contains__": lambda a, k: k in a, "__setitem__": lambda a, k, v: a.__setitem__(k, v),
    "__delitem__": lambda a, k: a.__delitem__(k), "__round__": round,
}


def _code(program, code_last, requests, answers):
    namespace = {"__name__": "__main__", "__file__": program, "__builtins__": __builtins__}
    sys.argv = [program]
    sys.path.insert(0, os.path.dirname(program))
    exec(compile(_source(program, 1, code_last), program, "exec"), namespace)
    sys.stdout.flush()
    sys.stderr.flush()
    objects = {}

    def encode(value):
        if _plain(value):
            return ("v", value)
        objects[id(value)] = value
        return ("r", id(value))

    def decode(item):
        return objects[item[1]] if item[0] == "r" else item[1]

    _send(answers, ("ready",))
    while True:
        try:
            request = _receive(requests)
        except EOFError:
            break
        try:
            kind = request[0]
            if kind == "get":
                if request[1] not in namespace:
                    _send(answers, ("missing",))
                    continue
                result = namespace[request[1]]
            elif kind == "attr":
                result = getattr(decode(request[1]), request[2])
            elif kind == "call":
                args = [decode(a) for a in request[2]]
                kwargs = {k: decode(v) for k, v in request[3].items()}
                result = decode(request[1])(*args, **kwargs)
            elif kind == "op":
                result = _OPS[request[2]](decode(request[1]), *[decode(a) for a in request[3]])
            else:
                raise RuntimeError(f"unknown request {kind!r}")
            answer = ("ok", encode(result))
        except BaseException as exc:  # noqa: BLE001 - every error of the reply's code goes back to the tests
            if isinstance(exc, (SystemExit, KeyboardInterrupt)):
                raise
            answer = ("raise", type(exc).__name__, str(exc)[:2000])
        sys.stdout.flush()
        sys.stderr.flush()
        _send(answers, answer)


# ---- the checker ---------------------------------------------------------------------------------


class RemoteError(Exception):
    """An exception of the reply's code that is not a built-in one, seen from the tests."""


def _checker(program, setup_last, code_last, argv_limits, network):
    import builtins
    import ctypes
    import subprocess

    nonce = sys.stdin.readline().strip()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: the code process cannot ptrace or read us
    except (OSError, AttributeError):
        pass
    req_r, req_w = os.pipe()
    ans_r, ans_w = os.pipe()
    child = subprocess.Popen([sys.executable, "-I", __file__, "code", program, str(code_last), *argv_limits, network,
                              str(req_r), str(ans_w)], stdin=subprocess.DEVNULL, pass_fds=(req_r, ans_w), env={})
    os.close(req_r)
    os.close(ans_w)

    def finish_with_child():
        os.close(req_w)
        code = child.wait()
        sys.stdout.flush()
        os._exit(code if code >= 0 else 128 - code)  # exit 0 here: "exited before its tests finished"

    try:
        first = _receive(ans_r)
    except EOFError:
        finish_with_child()
    if first != ("ready",):
        finish_with_child()

    def ask(*request):
        try:
            _send(req_w, request)
            answer = _receive(ans_r)
        except (EOFError, OSError):
            finish_with_child()
        if answer[0] == "ok":
            return _decoded(answer[1])
        if answer[0] == "missing":
            return _MISSING
        kind = getattr(builtins, str(answer[1]), None)
        if isinstance(kind, type) and issubclass(kind, Exception) and kind.__module__ == "builtins":
            raise kind(answer[2])
        raise RemoteError(f"{answer[1]}: {answer[2]}")

    def encoded(value):
        if isinstance(value, Remote):
            return ("r", object.__getattribute__(value, "_ref"))
        if _plain(value):
            return ("v", value)
        raise TypeError(f"CodeExec tests can pass plain values (numbers, text, lists, dicts) or the reply's own "
                        f"objects to the reply's code, got {type(value).__name__}")

    def _decoded(item):
        if item[0] == "r":
            remote = object.__new__(Remote)
            object.__setattr__(remote, "_ref", item[1])
            return remote
        value = item[1]
        if not _plain(value):  # a well-formed code process only sends plain values
            raise TypeError("the reply's code sent a value that is not plain")
        return value

    class Remote:
        """An object of the reply's code: every call, attribute and operator runs in the code process."""

        __slots__ = ("_ref",)

        def __getattr__(self, name):
            return ask("attr", encoded(self), name)

        def __call__(self, *args, **kwargs):
            return ask("call", encoded(self), [encoded(a) for a in args], {k: encoded(v) for k, v in kwargs.items()})

    def _op(name):
        def method(self, *args):
            return ask("op", encoded(self), name, [encoded(a) for a in args])
        method.__name__ = name
        return method

    for name in _OPS:
        setattr(Remote, name, _op(name))

    class Module(dict):
        def __missing__(self, name):
            if hasattr(builtins, name):  # the tests' builtins are the checker's: code cannot shadow them
                raise KeyError(name)
            value = ask("get", name)
            if value is _MISSING:
                raise KeyError(name)
            return value

    namespace = Module(__name__="__main__", __file__=program, __builtins__=builtins)
    _limits(*(int(v) for v in argv_limits))
    if network != "1":
        _guard_network()
    if setup_last:
        exec(compile(_source(program, 1, setup_last), program, "exec"), namespace)
    exec(compile(_source(program, code_last + 1, 10**9), program, "exec"), namespace)
    sys.stdout.flush()
    sys.stderr.flush()
    os.close(req_w)
    code = child.wait()
    if code != 0:
        os._exit(code if code > 0 else 128 - code)
    os.write(1, (DONE + nonce + "\n").encode())
    os._exit(0)


_MISSING = object()


def main():
    role = sys.argv[1]
    if role == "code":
        program, code_last = sys.argv[2], int(sys.argv[3])
        mem, cpu, fsize, nproc, network = sys.argv[4:9]
        requests, answers = int(sys.argv[9]), int(sys.argv[10])
        _limits(int(mem), int(cpu), int(fsize), int(nproc))
        if network != "1":
            _guard_network()
        _code(program, code_last, requests, answers)
        sys.stdout.flush()
        os._exit(0)
    program, setup_last, code_last = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    _checker(program, setup_last, code_last, sys.argv[5:9], sys.argv[9])


if __name__ == "__main__":
    main()
