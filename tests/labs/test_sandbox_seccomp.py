"""The sandbox child's seccomp filter (`sandbox_seccomp`), attacked with full Python after the real `harden`.

A stand-in child runs `harden` (language layer bypassed: "a program that broke the language layer")
and then tries every refused system call family, one JSON line per attempt on its result pipe, for the
three grader paths: root; not root with user namespaces (emulated with `unshare --user`); not root
*without* them (a real uid 1000 via `setpriv`, `_isolate_network` failing as on such a machine: no
network namespace, no chroot, no capability to drop, so the filter alone stands). Every attempt must
come back refused with the filter's own errno (EPERM; ENOSYS for clone3), in every path, which the
other layers alone would not give (ENETUNREACH, ENOENT, ESRCH, EINVAL...). An attempt whose line is
missing counts as an escape (a successful exec replaces the process). A control run without the
filter shows the same attacks really work in the third path, so these tests can fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_sandbox_escapes import IS_ROOT, _user_namespaces

from discoverylab.labs.sequence import sandbox_child, sandbox_seccomp
from discoverylab.labs.sequence.grading import grade_hidden_property
from discoverylab.labs.sequence.heldout import HeldOutSet
from discoverylab.labs.sequence.parsing import FinalAnswer, Hypothesis
from discoverylab.labs.sequence.programs import reference_program
from discoverylab.labs.sequence.properties import DEFAULT_PARAMS, compute
from discoverylab.labs.sequence.sandbox import run_predictor
from sandbox_kit import use_child_with_seccomp_patch

HAVE_LIBSECCOMP = sandbox_seccomp.load_library() is not None
USER = 1000
SETPRIV = ["setpriv", f"--reuid={USER}", f"--regid={USER}", "--clear-groups", "--"]
pytestmark = pytest.mark.skipif(not (IS_ROOT and HAVE_LIBSECCOMP),
                                reason="needs root (as in CI) to emulate the grader paths, and libseccomp")


def _interpreter_runs_as_user() -> bool:
    """This interpreter can run as uid 1000 (setpriv from util-linux; here it even falls back to the
    system's standard library when its own prefix sits in a directory only root may enter)."""
    if not (IS_ROOT and shutil.which("setpriv")):
        return False
    try:
        return subprocess.run([*SETPRIV, sys.executable, "-I", "-c", "import ctypes, json, socket"],
                              capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False

# name -> Python statement run after harden; `check(r)` raises OSError(errno) when a libc call returned -1.
ATTACKS = {
    "socket_inet_connect_to_our_listener": "s = socket.socket(); s.settimeout(1); s.connect(('127.0.0.1', PORT))",
    "socket_inet6": "socket.socket(socket.AF_INET6, socket.SOCK_STREAM)",
    "socket_unix_abstract_to_our_listener": "socket.socket(socket.AF_UNIX).connect(UNIX_NAME)",
    "socket_netlink": "socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)",
    "socket_packet": "socket.socket(socket.AF_PACKET, socket.SOCK_RAW)",
    "socketpair_unix": "socket.socketpair()",
    "ptrace_attach_parent": "check(libc.ptrace(16, os.getppid(), 0, 0))",
    "ptrace_attach_sibling": "check(libc.ptrace(16, BYSTANDER, 0, 0))",
    "ptrace_traceme": "check(libc.ptrace(0, 0, 0, 0))",
    "process_vm_readv_sibling": "check(libc.process_vm_readv(BYSTANDER, ctypes.byref(iov), 1, ctypes.byref(iov), 1, 0))",
    "process_vm_writev_sibling": "check(libc.process_vm_writev(BYSTANDER, ctypes.byref(iov), 1, ctypes.byref(iov), 1, 0))",
    "mount_tmpfs": "check(libc.mount(b'none', b'/', b'tmpfs', 0, None))",
    "umount_root": "check(libc.umount2(b'/', 2))",
    "pivot_root": "check(libc.syscall(155, b'.', b'.'))",
    "chroot_again": "os.chroot('.')",
    "unshare_user_namespace": "check(libc.unshare(0x10000000))",
    "unshare_network_namespace": "check(libc.unshare(0x40000000))",
    "setns_on_our_pipe": "check(libc.setns(OUT, 0))",
    "clone_new_user_namespace": "clone(0x10000000)",
    "clone_new_network_namespace": "clone(0x40000000)",
    "clone_new_pid_namespace": "clone(0x20000000)",
    "clone3_new_user_namespace": "check(libc.syscall(435, clone_args(0x10000000), 88))",
    "keyctl_process_keyring": "check(libc.syscall(250, 0, -2, 1))",
    "add_key": "check(libc.syscall(248, b'user', b'x', b'y', 1, -2))",
    "request_key": "check(libc.syscall(249, b'user', b'x', None, 0))",
    "bpf_map_create": "check(libc.syscall(321, 0, ctypes.create_string_buffer(128), 128))",
    "perf_event_open": "check(libc.syscall(298, ctypes.create_string_buffer(128), 0, -1, -1, 0))",
    "userfaultfd": "check(libc.syscall(323, 0))",
    "kexec_load": "check(libc.syscall(246, 0, 0, None, 0))",
    "kexec_file_load": "check(libc.syscall(320, -1, -1, 0, None, 0))",
    "init_module": "check(libc.syscall(175, None, 0, b''))",
    "finit_module": "check(libc.syscall(313, -1, b'', 0))",
    "delete_module": "check(libc.syscall(176, b'discoverylab_none', 0))",
    "reboot_bad_magic": "check(libc.syscall(169, 0, 0, 0, None))",
    "personality_query": "check(libc.personality(0xFFFFFFFF))",
    "io_uring_setup": "check(libc.syscall(425, 1, ctypes.create_string_buffer(120)))",
    "io_uring_enter": "check(libc.syscall(426, 0, 0, 0, 0, None, 0))",
    "io_uring_register": "check(libc.syscall(427, 0, 0, None, 0))",
    "open_by_handle_at": "check(libc.syscall(304, -100, ctypes.create_string_buffer(64), 0))",
    "name_to_handle_at": "check(libc.syscall(303, -100, b'/', ctypes.create_string_buffer(64), "
                         "ctypes.byref(ctypes.c_int()), 0))",
    "signal_sibling": "os.kill(BYSTANDER, 0)",
    "signal_parent": "os.kill(os.getppid(), 0)",
    "signal_every_process": "os.kill(-1, 0)",
    "pidfd_open_sibling": "check(libc.syscall(434, BYSTANDER, 0))",
    "prlimit_of_sibling": "resource.prlimit(BYSTANDER, resource.RLIMIT_NOFILE)",
    "clear_death_signal": "check(libc.prctl(1, 0, 0, 0, 0))",
    "clear_death_signal_with_high_bits": "check(libc.syscall(157, ctypes.c_long(0x1_00000001), 0, 0, 0, 0))",
    "renice_sibling": "os.setpriority(os.PRIO_PROCESS, BYSTANDER, 19)",
    # `who` 0 means "mine": for a user, every process of the grader's user where no namespace could be made
    "renice_every_process_of_the_user": "os.setpriority(os.PRIO_USER, 0, 19)",
    "renice_own_process_group": "os.setpriority(os.PRIO_PGRP, 0, 19)",
    "io_priority_of_every_process_of_the_user": "check(libc.syscall(251, 3, 0, 3 << 13))",
    # the result pipe's owner gets its I/O signals (any signal, with F_SETSIG) when the grader reads it
    "own_the_pipe_for_a_sibling": "check(libc.fcntl(OUT, 8, BYSTANDER))",
    "own_the_pipe_for_a_sibling_ex": "check(libc.fcntl(OUT, 15, ctypes.byref((ctypes.c_int * 2)(1, BYSTANDER))))",
    "own_the_pipe_with_high_bits": "check(libc.syscall(72, OUT, ctypes.c_long(0x1_00000008), BYSTANDER))",
    "sync_every_file_system": "check(libc.syscall(162))",  # (libc's sync() returns nothing)
    # System V IPC and POSIX message queues: no file descriptor needed (test_sandbox_escapes_host)
    "shmget_new_segment": "check(libc.shmget(0, 4096, 0o1600))",
    "shmctl_remove_a_segment": "check(libc.shmctl(0, 0, None))",
    "msgget_new_queue": "check(libc.msgget(0, 0o1600))",
    "semget_new_set": "check(libc.semget(0, 1, 0o1600))",
    "mq_unlink_by_name": "check(libc.syscall(241, b'discoverylab-none'))",  # (libc turns EPERM into EACCES)
    "pin_sibling_to_a_cpu": "os.sched_setaffinity(BYSTANDER, {0})",
    "make_dumpable": "check(libc.prctl(4, 1, 0, 0, 0))",
    "new_session": "os.setsid()",
    "unlink_canary": "os.unlink(CANARY)",
    "rename_canary": "os.rename(CANARY, CANARY + '.moved')",
    "chmod_canary": "os.chmod(CANARY, 0o777)",
    "mkdir_here": "os.mkdir('made-here')",
    "execveat_shell": "check(libc.syscall(322, -100, b'/bin/sh', None, None, 0))",
    # Path lookups that need no new fd: unchrooted (a grader without user namespaces) they told a program
    # which of the grader's files exist, their sizes, and where /proc's links lead.
    "stat_canary": "os.stat(CANARY)",
    "lstat_canary": "os.lstat(CANARY)",
    "statx_canary": "check(libc.syscall(332, -100, CANARY.encode(), 0, 0xFFF, ctypes.create_string_buffer(256)))",
    "access_canary": "check(libc.access(CANARY.encode(), 0))",
    "faccessat2_canary": "check(libc.syscall(439, -100, CANARY.encode(), 0, 0))",
    "statfs_of_the_canarys_file_system": "os.statvfs(CANARY)",
    "readlink_own_executable": "os.readlink('/proc/self/exe')",
    "readlink_the_parents_working_directory": "os.readlink(f'/proc/{os.getppid()}/cwd')",
    "chdir_to_the_canarys_directory": "os.chdir(os.path.dirname(CANARY))",
    "getcwd": "os.getcwd()",
    "getxattr_canary": "os.getxattr(CANARY, 'user.keep')",
    "listxattr_canary": "os.listxattr(CANARY)",
    # Newer than Debian 12's libseccomp 2.5.4, whose filter skipped every name it could not resolve:
    # setxattrat planted an xattr on the grader's file, past the filter.
    "setxattrat_canary": "check(libc.syscall(463, -100, CANARY.encode(), 0, b'user.planted', xattr_args(b'x'), ctypes.c_long(16)))",
    "removexattrat_canary": "check(libc.syscall(466, -100, CANARY.encode(), 0, b'user.keep'))",
    "getxattrat_canary": "check(libc.syscall(464, -100, CANARY.encode(), 0, b'user.keep', xattr_args(bytes(8)), ctypes.c_long(16)))",
    "listxattrat_canary": "check(libc.syscall(465, -100, CANARY.encode(), 0, ctypes.create_string_buffer(256), ctypes.c_long(256)))",
    "file_getattr_canary": "check(libc.syscall(468, -100, CANARY.encode(), ctypes.create_string_buffer(64), ctypes.c_long(24), 0))",
    "file_setattr_canary": "check(libc.syscall(469, -100, CANARY.encode(), ctypes.create_string_buffer(64), ctypes.c_long(24), 0))",
    "listmount_of_the_host": "check(libc.syscall(458, mount_request(), (ctypes.c_uint64 * 64)(), ctypes.c_long(64), 0))",
    "statmount_of_the_root": "check(libc.syscall(457, mount_request(), ctypes.create_string_buffer(512), "
                             "ctypes.c_long(512), 0))",
    "open_tree_attr_of_the_root": "check(libc.syscall(467, -100, b'/', 1, None, ctypes.c_long(0)))",
    "lsm_set_self_attr": "check(libc.syscall(460, 100, ctypes.create_string_buffer(64), ctypes.c_long(64), 0))",
    "syslog_buffer_size": "check(libc.syscall(103, 10, None, 0))",  # (refused by the kernel too here, see below)
    # kernel AIO contexts: no fd needed, drawn from the machine-wide fs.aio-max-nr
    "aio_context": "check(libc.syscall(206, 64, ctypes.byref(ctypes.c_ulong(0))))",
    "robust_list_of_sibling": "check(libc.syscall(274, BYSTANDER, ctypes.byref(ctypes.c_void_p()), "
                              "ctypes.byref(ctypes.c_size_t())))",  # an address in its memory
    "own_the_pipe_by_ioctl": "check(libc.ioctl(OUT, 0x8901, ctypes.byref(ctypes.c_int(BYSTANDER))))",
    "socket_vsock": "socket.socket(40, socket.SOCK_STREAM)",
    "socket_alg": "socket.socket(38, socket.SOCK_SEQPACKET)",
    # Off the allow-list: the deny-list let each of these through (and every call it did not name).
    "read_the_canary": "os.read(os.open(CANARY, os.O_RDONLY), 16)",  # (max_files=8 here: an fd is to be had)
    "fchdir_to_an_open_fd": "os.fchdir(OUT)",
    "memfd_create_for_execveat": "check(libc.syscall(319, b'payload', 0))",
    "seccomp_a_filter_of_its_own": "check(libc.syscall(317, 1, 0, allow_all_filter()))",
    "prctl_set_seccomp": "check(libc.prctl(22, 2, allow_all_filter(), 0, 0))",
    "migrate_pages_of_itself": "check(libc.syscall(256, 0, 64, ctypes.byref(ctypes.c_ulong(1)), "
                               "ctypes.byref(ctypes.c_ulong(1))))",
    "landlock_ruleset_version": "check(libc.syscall(444, None, 0, 1))",  # (ENOSYS: unknown to the list)
    "mbind_own_memory": "check(libc.syscall(237, 0, 0, 0, None, 0, 0))",
    "unassigned_number_470": "check(libc.syscall(470, 0, 0, 0))",  # (no call yet: the kernel says ENOSYS too,
    "unassigned_number_500": "check(libc.syscall(500, 0, 0, 0))",  # test_sandbox_allowlist reads the filter)
    "execve_shell": "os.execv('/bin/sh', ['sh', '-c', 'exit 0'])",  # last: if it works, the process is gone
}
# Refused as calls the allow-list does not know (ENOSYS, as from a kernel without them: libc falls back);
# every other attack is refused as known to reach out (EPERM).
OFF_THE_LIST = frozenset({"clone3_new_user_namespace", "landlock_ruleset_version", "mbind_own_memory",
                          "unassigned_number_470", "unassigned_number_500"})
ALLOWED = {  # what an ordinary program (or the child itself) may still do
    "signal_itself": "os.kill(os.getpid(), 0)",
    "own_limits": "resource.setrlimit(resource.RLIMIT_CORE, (0, 0))",
    "own_priority": "os.setpriority(os.PRIO_PROCESS, 0, min(19, os.getpriority(os.PRIO_PROCESS, 0) + 1))",
    "read_death_signal": "sig = ctypes.c_int(); check(libc.prctl(2, ctypes.byref(sig), 0, 0, 0)); "
                         "assert sig.value == 9, sig.value",
    "entropy": "os.urandom(16)",
    "flags_of_its_own_pipe": "os.set_inheritable(OUT, False)",
    "sleep": "time.sleep(0.01)",
}

_CHILD = r"""
import ctypes, importlib.util, json, os, resource, socket, sys, time
spec = importlib.util.spec_from_file_location("child", sys.argv[1])
child = importlib.util.module_from_spec(spec)
spec.loader.exec_module(child)
root, OUT, config = sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
if config["no_user_namespaces"]:  # as on a machine with unprivileged user namespaces off
    child._isolate_network = lambda libc: False
status = child.harden(cpu_seconds=10, memory_bytes=512 << 20, root_dir=root, keep_fds=(OUT,), max_files=8,
                      filter_syscalls=config["filter"])
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
PORT, UNIX_NAME, BYSTANDER, CANARY = config["port"], config["unix_name"], config["bystander"], config["canary"]
class Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
buf = ctypes.create_string_buffer(8)
iov = Iovec(ctypes.cast(buf, ctypes.c_void_p), 8)
def check(result):
    if result == -1:
        raise OSError(ctypes.get_errno(), "refused")
def clone(flags):
    pid = libc.syscall(56, flags | 17, 0, 0, 0, 0)
    if pid == 0:
        os._exit(0)
    check(pid)
    os.waitpid(pid, 0)
def xattr_args(value):  # (size arguments go as longs: a c_int leaves the register's upper half unset)
    buf = ctypes.create_string_buffer(value, len(value))
    keep.append(buf)
    return (ctypes.c_uint64 * 2)(ctypes.addressof(buf), len(value))
def allow_all_filter():  # a sock_fprog of one instruction, SECCOMP_RET_ALLOW
    keep.append((ctypes.c_uint64 * 1)(0x7FFF0000 << 32 | 0x06))
    keep.append((ctypes.c_uint64 * 2)(1, ctypes.addressof(keep[-1])))
    return keep[-1]
def mount_request():
    return (ctypes.c_uint64 * 3)(24, 0xFFFFFFFFFFFFFFFF, 0)  # size 24, the root mount, no parameter
keep = []
def clone_args(flags):
    args = (ctypes.c_uint64 * 11)()
    args[0], args[4] = flags, 17
    return args
def report(record):
    os.write(OUT, (json.dumps(record) + "\n").encode())
report({"status": status})
for kind, table in (("allowed", config["allowed"]), ("attack", config["attacks"])):
    for name, statement in table.items():
        try:
            exec(statement)
            outcome = "DONE"
        except BaseException as exc:
            outcome = f"{type(exc).__name__}:{getattr(exc, 'errno', '')}"
        report({kind: name, "outcome": outcome})
report({"end": True})
os.close(OUT)
time.sleep(20)  # until the test has read /proc/<pid>/status from outside and killed it
"""


def _xattrs(path: Path) -> list[str]:
    try:
        return sorted(os.listxattr(path))
    except OSError:
        return []


def _seccomp_field(pid: int) -> str:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Seccomp:"):
                return line.split()[1]
    return "?"


def _run(path: str, *, filter_syscalls: bool = True, attacks: dict[str, str] | None = None,
         settle: float = 0.0) -> dict[str, Any]:
    """Run the stand-in child as the grader `path` ("root", "user_namespaces", "no_user_namespaces");
    return its status, outcomes, what the kernel says of its seccomp mode and what our listeners saw
    (`settle`: seconds a signal sent as the pipe was read gets to end the bystander before it is checked)."""
    as_user = path != "root"
    work = Path(tempfile.mkdtemp(prefix="discoverylab-seccomp-test-"))
    os.chmod(work, 0o755)
    root, home = work / "root", work / "home"
    root.mkdir(mode=0o700)
    home.mkdir(mode=0o755)
    canary = home / "canary.txt"
    canary.write_text("canary")
    with contextlib.suppress(OSError):  # (a file system without user xattrs: nothing to keep or plant)
        os.setxattr(canary, "user.keep", b"1")
    xattrs = _xattrs(canary)
    if as_user:
        for p in (root, home, canary):
            os.chown(p, USER, USER)
    server = socket.create_server(("127.0.0.1", 0))
    server.setblocking(False)
    unix_name = f"\0discoverylab-seccomp-{os.getpid()}"
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(unix_name)
    unix.listen()
    unix.setblocking(False)
    prefix = {"root": [], "user_namespaces": ["unshare", "--user", f"--map-user={USER}", f"--map-group={USER}"],
              "no_user_namespaces": SETPRIV}[path]
    bystander = subprocess.Popen([*(SETPRIV if path == "no_user_namespaces" else []), "sleep", "60"])
    read_fd, write_fd = os.pipe()
    config = {"no_user_namespaces": path == "no_user_namespaces", "filter": filter_syscalls, "port": server.getsockname()[1],
              "unix_name": unix_name, "bystander": bystander.pid, "canary": str(canary), "allowed": ALLOWED,
              "attacks": ATTACKS if attacks is None else attacks}
    proc = subprocess.Popen([*prefix, sys.executable, "-I", "-c", _CHILD, sandbox_child.__file__, str(root),
                             str(write_fd), json.dumps(config)],
                            pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    os.close(write_fd)
    try:
        with os.fdopen(read_fd, "rb") as fh:
            lines = [json.loads(line) for line in fh.read().splitlines()]
        status = lines[0]["status"] if lines and "status" in lines[0] else {}
        seccomp_mode = _seccomp_field(status.get("init_pid") or proc.pid)
        accepted = []
        for listener in (server, unix):
            with contextlib.suppress(BlockingIOError):
                accepted.append(listener.accept())
        with contextlib.suppress(subprocess.TimeoutExpired):
            bystander.wait(timeout=settle)
        alive = bystander.poll() is None
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=30)
        bystander.kill()
        bystander.wait()
        server.close()
        unix.close()
        canary_intact = (canary.exists() and canary.read_text() == "canary" and (canary.stat().st_mode & 0o777) != 0o777
                         and _xattrs(canary) == xattrs)
        leftovers = os.listdir(root) if root.exists() else []
        shutil.rmtree(work, ignore_errors=True)
    assert status, stderr.decode()[-2000:]
    return {"status": status, "outcomes": {r["attack"]: r["outcome"] for r in lines if "attack" in r},
            "allowed": {r["allowed"]: r["outcome"] for r in lines if "allowed" in r},
            "seccomp_mode": seccomp_mode, "accepted": len(accepted), "bystander_alive": alive,
            "canary_intact": canary_intact, "leftovers": leftovers, "returncode": proc.returncode}


PATHS = ["root", "user_namespaces", "no_user_namespaces"]


@pytest.fixture(scope="module")
def reports() -> Iterator[dict[str, dict[str, Any]]]:
    """One stand-in child per grader path, run once for the whole module (each runs every attack)."""
    available = {"root": True, "user_namespaces": _user_namespaces(), "no_user_namespaces": _interpreter_runs_as_user()}
    yield {path: _run(path) for path in PATHS if available[path]}


def _report(reports: dict[str, dict[str, Any]], path: str) -> dict[str, Any]:
    if path not in reports:
        pytest.skip("needs util-linux unshare and user namespaces, or setpriv and an interpreter uid 1000 can run")
    return reports[path]


@pytest.mark.parametrize("path", PATHS)
def test_the_filter_is_really_installed(path: str, reports: dict[str, dict[str, Any]]) -> None:
    """The status says so, and the kernel too: /proc/<pid>/status of the sealed process says `Seccomp: 2`."""
    report = _report(reports, path)
    assert report["status"]["seccomp"] is True and report["seccomp_mode"] == "2"
    assert report["status"]["network_isolated"] is (path != "no_user_namespaces")
    assert report["status"]["chrooted"] is (path != "no_user_namespaces")
    assert report["status"]["ipc_isolated"] is (path != "no_user_namespaces")  # the filter alone there


@pytest.mark.parametrize("name", list(ATTACKS))
@pytest.mark.parametrize("path", PATHS)
def test_denied_syscall_fails_with_the_filters_errno(path: str, name: str, reports: dict[str, dict[str, Any]]) -> None:
    report = _report(reports, path)
    expected = "OSError:38" if name in OFF_THE_LIST else "PermissionError:1"  # ENOSYS: clone3 falls back to clone
    assert report["outcomes"].get(name, "ESCAPED (no line: the process was replaced)") == expected


@pytest.mark.parametrize("path", PATHS)
def test_nothing_outside_was_reached_and_ordinary_calls_still_work(path: str, reports: dict[str, dict[str, Any]],
                                                                   ) -> None:
    report = _report(reports, path)
    assert report["accepted"] == 0 and report["bystander_alive"] and report["canary_intact"]
    assert report["leftovers"] == []
    assert report["allowed"] == dict.fromkeys(ALLOWED, "DONE")  # the filter targets, it does not block everything


CONTROL = ("socket_inet_connect_to_our_listener", "socket_unix_abstract_to_our_listener", "keyctl_process_keyring",
           "signal_sibling", "prlimit_of_sibling", "renice_sibling", "clear_death_signal", "stat_canary",
           "readlink_own_executable", "setxattrat_canary", "aio_context",
           "robust_list_of_sibling", "read_the_canary", "memfd_create_for_execveat", "landlock_ruleset_version",
           "mbind_own_memory", "seccomp_a_filter_of_its_own", "unlink_canary", "execve_shell")


@pytest.mark.skipif(not _interpreter_runs_as_user(), reason="needs setpriv and an interpreter uid 1000 can run")
def test_without_the_filter_these_attacks_work_for_a_grader_without_user_namespaces() -> None:
    """The control: in the third path nothing but the filter stops them (the listeners accept, the
    sibling is signalled, the canary goes, exec replaces the process), so the tests above can fail."""
    report = _run("no_user_namespaces", filter_syscalls=False, attacks={k: ATTACKS[k] for k in CONTROL})
    assert report["status"]["seccomp"] is False
    outcomes = report["outcomes"]
    assert {name: outcomes[name] for name in CONTROL[:-1] if outcomes[name] != "DONE"} == {}
    assert "execve_shell" not in outcomes and report["accepted"] == 2 and not report["canary_intact"]


@pytest.mark.skipif(not _interpreter_runs_as_user(), reason="needs setpriv and an interpreter uid 1000 can run")
@pytest.mark.parametrize("filter_syscalls", [True, False], ids=["with_the_filter", "control_without_it"])
def test_the_result_pipe_cannot_carry_a_signal_to_a_sibling(filter_syscalls: bool) -> None:
    """F_SETOWN names a sibling of the grader's user as the pipe's owner, F_SETSIG picks SIGKILL and
    O_ASYNC arms it: when the grader reads the pipe, the kernel sends the signal, past the `kill` rules.
    Without the filter the sibling dies (the control); with it, F_SETOWN fails and the sibling lives."""
    attack = ("check(libc.fcntl(OUT, 8, BYSTANDER)); check(libc.fcntl(OUT, 10, 9)); "
              "check(libc.fcntl(OUT, 4, os.O_WRONLY | os.O_ASYNC))")
    report = _run("no_user_namespaces", filter_syscalls=filter_syscalls,
                  attacks={"sigkill_through_the_pipe": attack, "keep_the_pipe_armed": "time.sleep(0.5)"},
                  settle=0.5)  # (the owner is signalled as the grader reads, while the child holds the pipe)
    if filter_syscalls:
        assert report["outcomes"]["sigkill_through_the_pipe"] == "PermissionError:1" and report["bystander_alive"]
    else:
        assert report["outcomes"]["sigkill_through_the_pipe"] == "DONE" and not report["bystander_alive"]


def test_a_call_of_another_abi_kills_the_child() -> None:
    """An x32 system call number (0x40000000 + getpid) is not matched by the x86_64 rules: the
    filter's bad-architecture action kills the whole process (SIGSYS), not only its thread."""
    import platform

    if platform.machine() != "x86_64":
        pytest.skip("the x32 ABI exists on x86_64 only")
    report = _run("root", attacks={"x32_getpid": "libc.syscall(0x40000000 + 39)", "after": "pass"})
    assert report["outcomes"] == {} and report["returncode"] == -signal.SIGSYS


_SYSLOG_PROBE = r"""
import ctypes, json, os, sys
from discoverylab.labs.sequence import sandbox_seccomp
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
if sys.argv[1] == "with_the_filter":
    libc.prctl(38, 1, 0, 0, 0)
    assert sandbox_seccomp.install(sandbox_seccomp.load_library(), os.getpid())
size = libc.syscall(103, 10, None, 0)  # SYSLOG_ACTION_SIZE_BUFFER
print(json.dumps([size, ctypes.get_errno()]))
"""


def _holds_cap_syslog() -> bool:
    with open("/proc/self/status") as fh:
        effective = next(int(line.split()[1], 16) for line in fh if line.startswith("CapEff:"))
    return bool(effective >> 34 & 1)  # CAP_SYSLOG


@pytest.mark.skipif(not _holds_cap_syslog(), reason="needs CAP_SYSLOG (root in CI) to stand in for dmesg_restrict=0")
@pytest.mark.parametrize("filter_syscalls", [True, False], ids=["with_the_filter", "control_without_it"])
def test_the_kernel_log_is_refused_even_where_the_kernel_would_show_it(filter_syscalls: bool) -> None:
    """syslog(2) reads the kernel's log for any user where `kernel.dmesg_restrict` is 0, and this machine
    sets 1 (a test must not change it for the whole machine): a process holding CAP_SYSLOG passes the
    same check, so it stands in. Without the filter it gets the log's size (the control); with it, EPERM."""
    src = str(Path(sandbox_child.__file__).resolve().parents[3])
    mode = "with_the_filter" if filter_syscalls else "control_without_it"
    done = subprocess.run([sys.executable, "-c", _SYSLOG_PROBE, mode], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": src})
    assert done.returncode == 0, done.stderr[-2000:]
    size, error = json.loads(done.stdout)
    if filter_syscalls:
        assert (size, error) == (-1, 1)
    else:
        assert size > 0, error


def test_rules_cover_every_family_the_sandbox_promises() -> None:
    """Every refused call is known to this libseccomp (a typo would silently allow it) and the list
    holds the families docs/tinylabs.md names."""
    lib = sandbox_seccomp.load_library()
    rules = sandbox_seccomp.sandbox_rules(4242)
    unknown = [name for _, name, _ in rules if lib.seccomp_syscall_resolve_name(name.encode()) < 0
               and name not in sandbox_seccomp.NEWER_CALLS]
    assert unknown == []
    for name, number in sandbox_seccomp.NEWER_CALLS.items():  # (a newer libseccomp knows some by name)
        assert lib.seccomp_syscall_resolve_name(name.encode()) in (-1, number), name
    named = {name for _, name, _ in rules}
    promised = {"socket", "socketpair", "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2",
                "unshare", "setns", "clone", "pivot_root", "chroot", "keyctl", "add_key", "bpf",
                "perf_event_open", "userfaultfd", "kexec_load", "kexec_file_load", "init_module", "finit_module",
                "delete_module", "reboot", "personality", "io_uring_setup", "io_uring_enter", "io_uring_register",
                "open_by_handle_at", "name_to_handle_at", "execve", "execveat", "kill", "prctl", "prlimit64",
                "shmget", "shmat", "shmctl", "msgget", "msgsnd", "semget", "semop", "mq_open", "mq_unlink",
                "setpriority", "ioprio_set", "sync", "fcntl", "ioctl", "syslog", "io_setup", "stat", "newfstatat",
                "statx", "access", "faccessat2", "readlink", "readlinkat", "chdir", "getcwd", "getxattr", "listxattr",
                "get_robust_list", "open", "openat", "fchdir", "memfd_create", "seccomp", "migrate_pages",
                *sandbox_seccomp.NEWER_CALLS}
    assert promised <= named, promised - named
    allowed = {name for action, name, _ in rules if action == sandbox_seccomp.ACT_ALLOW}
    assert not allowed & set(sandbox_seccomp.DENIED) and "clone3" not in named  # (clone3: the default, ENOSYS)


# ---- the real child, through run_predictor ------------------------------------------------------------

_NO_LIBSECCOMP = "module.load_library = lambda: None  # as on a machine without libseccomp2"


@pytest.fixture
def no_libseccomp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`run_predictor`'s real child (policy and all) where libseccomp cannot be loaded."""
    use_child_with_seccomp_patch(_NO_LIBSECCOMP, tmp_path / "child_without_libseccomp.py", monkeypatch)


def _grade() -> tuple[dict[str, float], list[dict[str, Any]]]:
    rng = np.random.default_rng(11)
    seqs = ["".join(rng.choice(list("ACGT"), size=12)) for _ in range(60)]
    truth = [compute("gc_content", s, DEFAULT_PARAMS) for s in seqs]
    programs = [reference_program("gc_content", DEFAULT_PARAMS, 12), "def f(s):\n    return s.count('A') / len(s)",
                "def f(s):\n    return 1 / (len(s) - 12)"]
    answer = FinalAnswer(hypotheses=[Hypothesis(rank=i + 1, description="x", python=code)
                                     for i, code in enumerate(programs)],
                         predictions={s: 0.5 for s in seqs[:5]}, structured=True)
    score = grade_hidden_property(answer, HeldOutSet(seqs, truth, ["random"] * 60), range(5), quantum=0.1,
                                  truth={"property": "gc_content"})
    return dict(score.parts), score.details["hypotheses"]


def test_ordinary_predictors_grade_the_same_with_and_without_the_filter(monkeypatch: pytest.MonkeyPatch,
                                                                        tmp_path: Path) -> None:
    """Same scores, values and errors byte for byte; only `program_seccomp` tells the runs apart."""
    parts, entries = _grade()
    assert [e["program_seccomp"] for e in entries] == [True, True, True]
    use_child_with_seccomp_patch(_NO_LIBSECCOMP, tmp_path / "child_without_libseccomp.py", monkeypatch)
    bare_parts, bare_entries = _grade()
    assert [e.pop("program_seccomp") for e in bare_entries] == [False, False, False]
    assert [e.pop("program_seccomp") for e in entries] == [True, True, True]
    assert json.dumps(parts, sort_keys=True) == json.dumps(bare_parts, sort_keys=True)
    assert json.dumps(entries, sort_keys=True) == json.dumps(bare_entries, sort_keys=True)
    assert parts["program_exact"] == 1.0 and entries[2]["program_call_error"] == "ZeroDivisionError: division by zero"


def test_without_libseccomp_the_status_says_so_and_grading_works(no_libseccomp: None) -> None:
    result = run_predictor("def f(s):\n    return len(s) / 8", ["ACGT", "GG"])
    assert result.ok and result.values == [0.5, 0.25] and result.seccomp is False
    assert result.network_isolated is True and result.privileges_dropped is True


_GRADER_WITHOUT_USER_NAMESPACES = r"""
import ctypes, json, sys
from discoverylab.labs.sequence import sandbox_seccomp
# This machine's kernel allows unprivileged user namespaces; refuse unshare to this grader and all it
# starts, as a kernel with them off would (the child's `_isolate_network` then fails for real).
assert sandbox_seccomp.load_filter(sandbox_seccomp.load_library(), [(sandbox_seccomp.action_errno(1), "unshare", ())])
from discoverylab.labs.sequence.sandbox import run_predictor
out = {}
for name, code in (("ok", "def f(s):\n    return 0.25"), ("err", "def f(s):\n    return 1 / 0"),
                   ("mem", "def f(s):\n    x = [0] * (10 ** 9)\n    return 1.0")):
    r = run_predictor(code, ["A", "C"])
    out[name] = [r.values, r.error, r.details.get("call_error"), r.survivors, r.network_isolated, r.seccomp]
print(json.dumps(out))
"""


@pytest.mark.skipif(not _user_namespaces(), reason="needs util-linux unshare and user namespaces")
def test_grading_works_for_a_non_root_grader_without_user_namespaces() -> None:
    """`run_predictor` end to end from a grader that sees itself as uid 1000 (emulated as in
    test_sandbox_escapes; a real uid 1000 may not even reach this interpreter) and whose kernel
    refuses it user namespaces: no network namespace and no chroot, but the filter is on and the
    values come back as for root."""
    src = str(Path(sandbox_child.__file__).resolve().parents[3])
    done = subprocess.run(["unshare", "--user", f"--map-user={USER}", f"--map-group={USER}", sys.executable, "-c",
                           _GRADER_WITHOUT_USER_NAMESPACES], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": src})
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert out["ok"] == [[0.25, 0.25], None, None, 0, False, True]
    assert out["err"] == [[None, None], None, "ZeroDivisionError: division by zero", 0, False, True]
    assert out["mem"][1] == "program failed: MemoryError" and out["mem"][3:] == [0, False, True]
