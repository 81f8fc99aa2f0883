"""The sandbox child: seal this process, then run one predictor program on a batch of inputs.

Started by `sandbox.run_predictor` as `python -s -P sandbox_child.py` (hash seed 0) with the payload
(JSON) on stdin and a dedicated result pipe; stdout and stderr go to /dev/null, so nothing the program
could ever write there reaches the grader. Standard library only (plus the policy and seccomp files beside it,
loaded by path), so the child never imports a `discoverylab` that might come from another checkout.

`harden` is the process layer (docs/tinylabs.md, "Predictor sandbox"), applied after everything the
program may use is imported and before the program is compiled:
  no new privileges -> own network namespace (a grader that is not root: inside user, mount and
  PID namespaces of its own, forking once so the program runs as PID 1 there) -> own IPC namespace -> chroot into an empty directory -> close every other fd -> CPU / memory /
  file-size / open-file / core limits, and none of the host's priority or signal quotas -> drop to an unprivileged uid of its own (root) or drop every
  capability of the user namespace (not root) -> RLIMIT_NPROC = 0 -> die with the parent -> a seccomp
  filter (`sandbox_seccomp.py`, beside this file), an allow-list of the calls the interpreter needs: the
  calls a program could reach out with fail with EPERM, every other call with ENOSYS. Not root, the empty root is a read-only tmpfs of the child's own mount namespace, so
  nothing can be created in it.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import json
import math
import os
import re
import resource
import signal
import socket
import sys
import types
import warnings
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
ADDR_NO_RANDOMIZE = 0x0040000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
CAPABILITY_VERSION_3 = 0x20080522
LAST_CAPABILITY = 63  # every capability number the kernel could know; unknown ones are skipped
UID_BASE = 2_000_000_000  # the sandbox runs as UID_BASE + its pid: a uid no account or other child has


# Limits the child would otherwise inherit from the grader's host: a host that grants realtime
# priorities or negative nice values (limits.conf `rtprio`, `nice`: audio groups) let a program make
# itself SCHED_FIFO and starve the grader and everything else on its CPU until the CPU limit struck,
# or renice itself above them. RLIMIT_SIGPENDING counts per user (the grader's, where no namespace
# could be made): each POSIX timer holds one, so a program filled the quota the grader's user shares.
_NO_PRIORITY = ((resource.RLIMIT_RTPRIO, 0), (resource.RLIMIT_RTTIME, 0), (resource.RLIMIT_NICE, 0),
                (resource.RLIMIT_SIGPENDING, 0))


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def _isolate_network(libc: Any) -> bool:
    """A new, empty network namespace (only a down loopback): no socket can reach anything. A grader
    that is not root first enters a user namespace of its own (its uid mapped to root there) with
    its own mount and PID namespaces, which lets the chroot below work and hides the grader's
    processes (`_fork_into_pid_namespace`); `_drop_capabilities` then takes that root's powers away."""
    if os.geteuid() == 0:
        if libc.unshare(CLONE_NEWNET) != 0:
            return False
    else:
        uid, gid = os.getuid(), os.getgid()
        if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID) != 0:
            return False
        try:
            for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
                with open(f"/proc/self/{name}", "w") as fh:
                    fh.write(text)
        except OSError:
            return False
    try:
        return all(name == "lo" for _, name in socket.if_nameindex())
    except OSError:
        return False


def _isolate_ipc(libc: Any) -> bool:
    """An IPC namespace of its own: System V shared memory, message queues and semaphores, and POSIX
    message queues, need no file descriptor (so neither the chroot nor RLIMIT_NOFILE stops them) and
    would otherwise be the host's: a program could read or write a segment of the grader's or anyone's,
    and leave segments behind that outlive it, holding host memory no limit of the child counts. A new
    namespace starts empty and everything in it ends with its last process. Needs CAP_SYS_ADMIN (root,
    or the user namespace's root, so after `_isolate_network`); the seccomp filter refuses the calls too."""
    return bool(libc.unshare(CLONE_NEWIPC) == 0)


def _fork_into_pid_namespace(libc: Any, parent: int) -> int:
    """Only children enter a new PID namespace: fork. The parent (which runs no program code) waits
    and ends the way its child ended, so the grader sees the same exit status or signal; the child,
    PID 1 there, sees no process of the grader's and takes its namespace down with it when it
    ends. Returns, in the child, a pipe end that reads EOF once the parent is gone."""
    watch, hold = os.pipe()
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the go-between dies with the grader
    if os.getppid() != parent:
        os._exit(1)
    pid = os.fork()
    if pid == 0:
        os.close(hold)
        return watch
    top = max(65536, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
    os.closerange(3, hold)  # the result pipe too: the grader's EOF comes from the child alone
    os.closerange(hold + 1, top)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status))


def _drop_capabilities(libc: Any) -> bool:
    """Empty the bounding, effective, permitted and inheritable capability sets (the user
    namespace's root could otherwise leave the chroot or mount file systems)."""
    for cap in range(LAST_CAPABILITY + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # two {effective, permitted, inheritable} words, all zero
    return bool(libc.capset(header, data) == 0)


def harden(*, cpu_seconds: int, memory_bytes: int, root_dir: str | None = None, keep_fds: tuple[int, ...] = (),
           max_files: int = 0, filter_syscalls: bool = True) -> dict[str, Any]:
    """Seal the current process; return what could be sealed (network isolation needs kernel support,
    the seccomp filter libseccomp). `root_dir` None: the working directory, whose path is then held
    only while it is used (see `main`). `filter_syscalls=False` only for tests of the other mechanisms alone."""
    libc = _libc()
    seccomp_module = _load_beside("sandbox_seccomp.py") if filter_syscalls else None
    seccomp_lib = seccomp_module.load_library() if seccomp_module else None  # before the chroot: dlopen
    parent = os.getppid()
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    is_root = os.geteuid() == 0
    uid = os.getuid()  # as the rest of the system sees this process (kept unless root drops below)
    network_isolated = _isolate_network(libc)
    ipc_isolated = _isolate_ipc(libc)
    watch = _fork_into_pid_namespace(libc, parent) if network_isolated and not is_root else -1
    init_pid = None  # not root: our pid as the grader numbers it; killing this PID 1 ends the namespace
    if watch >= 0:  # (the program could leave the grader's process group and session with setsid)
        with contextlib.suppress(OSError, ValueError), open("/proc/self/status") as fh:
            nspid = next((line.split()[1:] for line in fh if line.startswith("NSpid:")), [])
            init_pid = int(nspid[0]) if len(nspid) >= 2 and nspid[-1] == "1" else None
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    chrooted = False
    # Not root: the namespace's root owns root_dir, so it could fill it (a directory 3000 deep once
    # crashed the grader's clean-up); an empty read-only tmpfs of this mount namespace covers it.
    root = os.getcwd() if root_dir is None else root_dir
    read_only_root = not is_root and network_isolated and libc.mount(
        b"none", root.encode(), b"tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
        b"size=4k,nr_inodes=2,mode=0555") == 0
    os.chdir(root)  # by path, so into the tmpfs just mounted there
    del root
    if is_root or network_isolated:  # not root: allowed inside the user namespace just entered
        try:  # a container may withhold CAP_SYS_CHROOT; the uid drop below still guards the files
            os.chroot(".")
            os.chdir("/")
            chrooted = True
        except OSError:
            pass
    keep = sorted({0, 1, 2, *keep_fds, *([watch] if watch >= 0 else [])})
    low = 3
    for fd in [*keep, max(65536, resource.getrlimit(resource.RLIMIT_NOFILE)[1])]:
        if fd >= low:
            os.closerange(low, fd)  # close_range(2) on Linux: cheap even for a huge range
            low = fd + 1
    for limit, value in ((resource.RLIMIT_CORE, 0), (resource.RLIMIT_FSIZE, 0),
                         (resource.RLIMIT_NOFILE, max_files), (resource.RLIMIT_MEMLOCK, 0),
                         (resource.RLIMIT_MSGQUEUE, 0), (resource.RLIMIT_AS, memory_bytes), *_NO_PRIORITY):
        resource.setrlimit(limit, (value, value))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    if is_root:
        uid = UID_BASE + os.getpid()
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        privileges_dropped = os.geteuid() != 0 and os.getuid() != 0
    else:  # the user namespace's root (or the grader's own uid, if no namespace could be made)
        privileges_dropped = _drop_capabilities(libc) if os.geteuid() == 0 else True
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))  # counted per uid; as root it would be ignored
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # after setuid, which clears it
    if watch >= 0:  # in the PID namespace getppid() is 0: ask the pipe whether the go-between lives
        os.set_blocking(watch, False)
        try:
            gone = os.read(watch, 1) == b""
        except BlockingIOError:
            gone = False
        os.close(watch)
        if gone:
            os._exit(1)
    elif os.getppid() != parent:  # the grader died before the death signal was armed
        os._exit(1)
    # Last, since harden itself needs those calls; the pid as this process sees it (1, not root). True
    # only when the kernel took our filter (a container's own filter would also show as `Seccomp: 2`).
    seccomp = bool(seccomp_module and seccomp_lib and seccomp_module.install(seccomp_lib, os.getpid()))
    return {"network_isolated": network_isolated, "ipc_isolated": ipc_isolated,
            "privileges_dropped": privileges_dropped, "chrooted": chrooted, "read_only_root": read_only_root, "uid": uid,
            "init_pid": init_pid, "seccomp": seccomp}


def _load_beside(filename: str) -> types.ModuleType:
    """A module file next to this one, loaded by path (never an installed `discoverylab`)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), filename)
    spec = importlib.util.spec_from_file_location(f"_predictor_{filename.removesuffix('.py')}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _send(fd: int, record: dict[str, Any]) -> None:
    os.write(fd, (json.dumps(record) + "\n").encode())


def _describe(exc: BaseException, limit: int) -> str:
    """`Type: message`, with memory addresses masked so grades stay byte-identical between runs and
    lone surrogates escaped (`chr(55296)` in a message once crashed the runner's score file). A message
    that cannot even be rendered (`ValueError(10 ** 5000)`, args nested too deep) once crashed this
    reporter, losing every later input: now the type alone says what was raised."""
    name = type(exc).__name__
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - the program's own exception: anything may fail in it
        return f"{name} (its message could not be shown)"
    text = f"{name}: {message[:limit]}" if message else name
    return re.sub(r"0x[0-9a-fA-F]+", "0x?", text).encode("utf-8", "backslashreplace").decode("utf-8")


def _warning_text(caught: warnings.WarningMessage) -> str:
    """`line N: Category: message` of a compile-time warning (`len(s) is 1`, an invalid escape), for
    the agent's feedback: they once printed on the grader's stderr instead (its compile check)."""
    return f"line {caught.lineno}: {caught.category.__name__}: {str(caught.message)[:200]}"


def _value(v: Any) -> float | None:
    """A prediction must be a number (`True` counts, as in Python: 1.0); a non-finite one is missing.
    Anything else raises, so the input counts as a call error whose message says what came back:
    `float()` once turned the text "0.5" (or " 1e-3 ") into a value, grading text as a number."""
    if not isinstance(v, int | float):
        shown = f" {v[:40]!r}" if isinstance(v, str | bytes) else ""
        raise TypeError(f"a prediction must be a number, not {type(v).__name__}{shown}")
    x = float(v)
    return x if math.isfinite(x) else None


def _restart_without_aslr() -> None:
    """Start again with address randomisation off, where the kernel allows personality(2): `hash(f)`
    and the order of a set of functions follow addresses, so a program could otherwise score
    differently on every run. Best effort: a container's seccomp filter may refuse it."""
    libc = _libc()
    persona = libc.personality(0xFFFFFFFF)
    if persona < 0 or persona & ADDR_NO_RANDOMIZE:
        return
    libc.personality(persona | ADDR_NO_RANDOMIZE)
    if not libc.personality(0xFFFFFFFF) & ADDR_NO_RANDOMIZE:
        return
    os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])  # stdin is not read yet


def main() -> None:
    """Read the payload, seal, compile, then stream one record per input to the result fd."""
    _restart_without_aslr()
    payload = json.loads(sys.stdin.buffer.read())
    out = int(payload["result_fd"])
    policy = _load_beside("sandbox_policy.py")
    namespace = policy.build_namespace()
    for name in policy.ALLOWED_MODULES:  # build every module proxy before the file system goes away
        namespace["__builtins__"]["__import__"](name)
    status = harden(cpu_seconds=int(payload["cpu_seconds"]), memory_bytes=int(payload["memory_bytes"]),
                    keep_fds=(out,))  # the root: its working directory (the grader's `cwd`)
    _send(out, {"ready": True, **status})
    try:
        with warnings.catch_warnings(record=True) as caught:  # (this process has one thread)
            warnings.simplefilter("always")
            code = policy.compile_program(payload["code"])
        if caught:  # before any program code runs, so the grader believes it only here, second
            _send(out, {"warnings": [_warning_text(w) for w in caught[:3]]})
        exec(code, namespace)
        fn = namespace[payload["function"]]
    except BaseException as exc:  # the program's own module-level code failed
        _send(out, {"fatal": _describe(exc, 300)})
        return
    for s in payload["inputs"]:
        try:
            record: dict[str, Any] = {"v": _value(fn(s))}
        except BaseException as exc:
            if isinstance(exc, MemoryError | RecursionError) or not isinstance(exc, Exception):
                _send(out, {"fatal": type(exc).__name__})
                return
            record = {"e": _describe(exc, 200)}
        _send(out, record)


if __name__ == "__main__":
    main()
