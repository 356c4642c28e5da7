"""The ``namespaces`` sandbox launcher: a standalone script, run by path with ``python -I -S``.

It uses only the standard library (it runs outside any virtual environment's site-packages) and
calls ``unshare(2)``, ``mount(2)`` and ``pivot_root(2)`` through ctypes, since ``os.unshare``
exists only from Python 3.12. One JSON argument describes the sandbox (built by
``whileai.verify._sandbox``). The steps, in the order the kernel needs them:

1. fork; the child unshares new user, mount, network, PID, IPC, UTS and cgroup namespaces;
2. the launcher, still in the parent namespaces, writes the child's uid/gid map: the sandbox's
   uid maps to itself (the caller's own uid, or ``CODE_SANDBOX_UID`` when the caller is root:
   the kernel does not enforce ``RLIMIT_NPROC`` for root, so a fork bomb would not be capped);
3. the child forks PID 1 of the new PID namespace. It builds a tmpfs root, binds the sources
   read-only while its file access is still the caller's, mounts a size-capped tmpfs at ``/tmp``
   (the work folder's files bound read-only into it), a fresh ``/proc``, remounts every mount
   read-only except that ``/tmp``, pivots
   into it and detaches the old root;
4. PID 1 forks the program, which takes the sandbox's uid (non-zero: every capability goes at
   ``execve``), sets ``no_new_privs`` and starts with an empty environment. PID 1 reaps until
   the program exits, then exits with its status, which tears down the namespace and every
   process left in it.

A setup failure prints ``wai-sandbox: <what failed>: <errno text>`` on stderr and exits 125.
"""

import ctypes
import json
import os
import platform
import signal
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 32, 1024, 2048, 4096, 16384
MS_PRIVATE, MS_RELATIME = 1 << 18, 1 << 21
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
PIVOT_ROOT = {"x86_64": 155, "amd64": 155, "aarch64": 41, "arm64": 41}
SETUP_FAILED = 125
# statvfs flags -> the mount flags a read-only remount must keep (the kernel refuses to clear
# flags locked by the parent namespace).
_KEEP = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
         (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME), (os.ST_RELATIME, MS_RELATIME))

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]


def fail(what):
    err = ctypes.get_errno()
    sys.stderr.write(f"wai-sandbox: {what}: {os.strerror(err) if err else 'failed'}\n")
    sys.stderr.flush()
    os._exit(SETUP_FAILED)


def check(result, what):
    if result != 0:
        fail(what)


def enc(text):
    return None if text is None else text.encode()


def mount(source, target, fstype, flags, data=None):
    check(libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


def write(path, text):
    try:
        with open(path, "w") as handle:
            handle.write(text)
    except OSError as exc:
        ctypes.set_errno(exc.errno or 0)
        fail(f"write {path}")


def remount_readonly(target):
    flags = os.statvfs(target).f_flag
    keep = 0
    for st, ms in _KEEP:
        if flags & st:
            keep |= ms
    mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | keep)


def mountpoints_under(root):
    points = []
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            point = line.split()[4].replace("\\040", " ")
            if point == root or point.startswith(root + "/"):
                points.append(point)
    return points


def build_root(cfg):
    root = cfg["root"]
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    # Open the sources with the caller's file access (root reaches /root/...), then create
    # files as the sandbox's uid: a file owned by an unmapped uid cannot be made in here.
    fds = {}
    for bind in cfg["binds"]:
        if bind.get("tmpfs"):
            continue
        try:
            fds[bind["src"]] = os.open(bind["src"], os.O_PATH | os.O_CLOEXEC)
        except OSError as exc:
            ctypes.set_errno(exc.errno or 0)
            fail(f"open {bind['src']}")
    libc.setfsgid(cfg["gid"])
    libc.setfsuid(cfg["uid"])
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m")
    for bind in cfg["binds"]:
        target = root + bind["dest"]
        if bind.get("tmpfs"):  # the sandbox's own /tmp, size-capped: the program writes here only
            os.makedirs(target, exist_ok=True)
            mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={int(bind['size'])}")
            continue
        if bind["dir"]:
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            open(target, "a").close()
        mount(f"/proc/self/fd/{fds[bind['src']]}", target, None, MS_BIND | MS_REC)
    for target, link in cfg["symlinks"]:
        os.makedirs(os.path.dirname(root + link), exist_ok=True)
        os.symlink(target, root + link)
    os.makedirs(root + "/proc", exist_ok=True)
    proc_ok = libc.mount(b"proc", (root + "/proc").encode(), b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) == 0
    writable = root + cfg["work_dest"]
    for point in sorted(mountpoints_under(root), key=len, reverse=True):
        if point == writable or point.startswith(root + "/proc") or point == root:
            continue
        remount_readonly(point)
    remount_readonly(root)
    os.chdir(root)
    check(libc.syscall(PIVOT_ROOT[platform.machine().lower()], b".", b"."), "pivot_root")
    check(libc.umount2(b".", MNT_DETACH), "detach the old root")
    os.chdir(cfg["cwd"])
    for fd in fds.values():
        os.close(fd)
    return proc_ok


def pid_one(cfg):
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    build_root(cfg)
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    program = os.fork()
    if program == 0:
        try:
            os.setresgid(cfg["gid"], cfg["gid"], cfg["gid"])
            os.setresuid(cfg["uid"], cfg["uid"], cfg["uid"])
            os.execve(cfg["argv"][0], cfg["argv"], {})
        except OSError as exc:
            sys.stderr.write(f"wai-sandbox: start {cfg['argv'][0]}: {exc.strerror}\n")
            os._exit(SETUP_FAILED)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(SETUP_FAILED)
        if pid == program:
            os._exit(exit_code(status))


def exit_code(status):
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def main():
    cfg = json.loads(sys.argv[1])
    if platform.machine().lower() not in PIVOT_ROOT:
        sys.stderr.write(f"wai-sandbox: pivot_root: no syscall number known for {platform.machine()}\n")
        os._exit(SETUP_FAILED)
    ready_r, ready_w = os.pipe()
    mapped_r, mapped_w = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(ready_r)
        os.close(mapped_w)
        flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
        if libc.unshare(flags | CLONE_NEWCGROUP) != 0:  # a kernel without cgroup namespaces: the rest still holds
            check(libc.unshare(flags), "unshare user, mount, network and PID namespaces")
        os.write(ready_w, b"1")
        if os.read(mapped_r, 1) != b"1":
            os._exit(SETUP_FAILED)
        grandchild = os.fork()
        if grandchild == 0:
            pid_one(cfg)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        os._exit(exit_code(os.waitpid(grandchild, 0)[1]))
    os.close(ready_w)
    os.close(mapped_r)
    if os.read(ready_r, 1) != b"1":
        _, status = os.waitpid(child, 0)
        os._exit(exit_code(status))
    # The map is written from outside, by the launcher in the parent namespace: as root it maps
    # the sandbox's uid to an unprivileged one, which only a writer holding CAP_SETUID there may.
    write(f"/proc/{child}/setgroups", "deny")
    write(f"/proc/{child}/uid_map", f"{cfg['uid']} {cfg['uid']} 1")
    write(f"/proc/{child}/gid_map", f"{cfg['gid']} {cfg['gid']} 1")
    os.write(mapped_w, b"1")
    _, status = os.waitpid(child, 0)
    os._exit(exit_code(status))


if __name__ == "__main__":
    main()
