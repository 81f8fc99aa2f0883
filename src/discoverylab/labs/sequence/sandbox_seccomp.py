"""The sandbox child's seccomp-BPF filter: the system calls a program that broke the language layer
would use to reach out of its process fail with EPERM (docs/tinylabs.md, "Predictor sandbox").

Why a filter on top of namespaces, chroot and the uid drop: it needs no privilege (only
`PR_SET_NO_NEW_PRIVS`), so it also holds for a grader that is not root on a machine without
unprivileged user namespaces, where nothing else stands between the program and the grader's files,
processes and network. EPERM rather than killing: the program sees an ordinary `PermissionError`, the
grade goes on and stays byte-identical, and nothing a well-behaved predictor does is ever refused.

libseccomp (Debian `libseccomp2`) through a few ctypes calls, loaded by its soname: the `pyseccomp`
binding finds the library with `ctypes.util.find_library`, which runs `ldconfig` twice and cost
~35 ms in every child (a third of a 100-input grade). Standard library only, loaded by path by
`sandbox_child` like the policy, so the child never imports a `discoverylab` of another checkout.
"""

from __future__ import annotations

import ctypes
import errno
import os
from collections.abc import Iterable
from typing import Any

ACT_ALLOW = 0x7FFF0000
ACT_KILL_PROCESS = 0x80000000
ATTR_ACT_BADARCH = 2
CMP_NE, CMP_MASKED_EQ = 1, 7
LOW_32 = 0xFFFFFFFF
PR_SET_PDEATHSIG, PR_SET_DUMPABLE = 1, 4
PRIO_PROCESS, IOPRIO_WHO_PROCESS = 0, 1  # the only `which` each call may name (not a group or a user)
F_SETOWN, F_SETOWN_EX = 8, 15
FIOSETOWN, SIOCSPGRP = 0x8901, 0x8902  # the same owner, set through ioctl (sockets; ENOTTY elsewhere)
# Namespace flags that clone(2) takes in its first argument (CLONE_NEWTIME only through clone3/unshare).
CLONE_NAMESPACES = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)

# Calls newer than some libseccomp releases (Debian 12's 2.5.4 knows none of them, and a name it cannot
# resolve used to be skipped: `setxattrat` then changed the grader's files by path, past the filter).
# Where the library cannot resolve one, its number in the table every architecture shares since
# Linux 5.1 is used (`UNIFIED_TABLE_MACHINES` only: MIPS and Alpha number them differently).
NEWER_CALLS = {
    "statmount": 457, "listmount": 458,  # the mount tree's paths (the host's, without a mount namespace)
    "lsm_set_self_attr": 460,  # a security module's context, which /proc/self/attr (an fd) once gated
    "setxattrat": 463, "getxattrat": 464, "listxattrat": 465, "removexattrat": 466,  # xattrs by path
    "open_tree_attr": 467, "file_getattr": 468, "file_setattr": 469,  # mounts; inode flags by path
}
UNIFIED_TABLE_MACHINES = frozenset({"x86_64", "aarch64", "arm64", "riscv64", "ppc64le", "s390x", "loongarch64"})

# Refused outright. Sockets of every family: the records go back over a pipe, so not even AF_UNIX is
# needed (an abstract unix socket reaches the grader's listeners without any file).
DENIED = (
    "socket", "socketpair",
    # other processes: their memory, their signals, their identity
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_open", "pidfd_getfd",
    "pidfd_send_signal", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "setsid", "setpgid",
    # System V IPC and POSIX message queues: no file descriptor needed, and (without an IPC namespace of
    # the child's own) the host's, so a program could read the grader's shared memory or leave segments
    # behind that outlive it
    "shmget", "shmat", "shmdt", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop",
    "semtimedop", "semctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify",
    "mq_getsetattr",
    # the file system's shape and the way out of a chroot
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr", "unshare", "setns", "open_by_handle_at", "name_to_handle_at",
    # changing files, by path (no open fd needed: a grader that is not root may have no chroot) or fd
    "unlink", "unlinkat", "rename", "renameat", "renameat2", "rmdir", "mkdir", "mkdirat", "link",
    "linkat", "symlink", "symlinkat", "mknod", "mknodat", "chmod", "fchmod", "fchmodat", "fchmodat2",
    "chown", "fchown", "lchown", "fchownat", "truncate", "ftruncate", "fallocate", "utime", "utimes",
    "utimensat", "futimesat", "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr",
    "fremovexattr",
    # kernel surface
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd", "kexec_load",
    "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "acct", "swapon",
    "swapoff", "quotactl", "sethostname", "setdomainname", "settimeofday", "clock_settime", "adjtimex",
    "clock_adjtime", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "sync",  # writes back every file system of the host, however often it is called
    "syslog",  # the kernel's log, readable by anyone where kernel.dmesg_restrict is 0
    # kernel AIO contexts: no file descriptor, drawn from a machine-wide pool (fs.aio-max-nr)
    "io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents",
    # path lookups that need no new fd: where a grader without user namespaces runs the child unchrooted,
    # they told a program which of the grader's files exist, their sizes and times, and where links such
    # as /proc/<grader>/cwd, /proc/<grader>/fd/N or /proc/self/exe lead; a program needs none of them
    "stat", "lstat", "newfstatat", "statx", "statfs", "access", "faccessat", "faccessat2", "readlink",
    "readlinkat", "chdir", "getcwd", "getxattr", "lgetxattr", "listxattr", "llistxattr", "uselib",
    *NEWER_CALLS,
    # already done by the child itself (the ASLR restart, its own exec)
    "personality", "execve", "execveat",
)

Rule = tuple[int, str, tuple[tuple[int, int, int, int], ...]]


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


def action_errno(code: int) -> int:
    """SCMP_ACT_ERRNO(code): the call fails with `code` and does nothing."""
    return 0x00050000 | (code & 0xFFFF)


def load_library() -> Any | None:
    """libseccomp, or None where it is missing (the grade then says `seccomp: false`). Call it
    before the chroot: dlopen needs the file system."""
    try:
        lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    except OSError:
        return None
    lib.seccomp_init.argtypes = (ctypes.c_uint32,)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_attr_set.argtypes = (ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32)
    lib.seccomp_attr_set.restype = ctypes.c_int
    lib.seccomp_release.argtypes = (ctypes.c_void_p,)
    lib.seccomp_release.restype = None
    lib.seccomp_load.argtypes = (ctypes.c_void_p,)
    lib.seccomp_load.restype = ctypes.c_int
    lib.seccomp_syscall_resolve_name.argtypes = (ctypes.c_char_p,)
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = (ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp))
    lib.seccomp_rule_add_array.restype = ctypes.c_int
    return lib


def sandbox_rules(pid: int) -> list[Rule]:
    """Everything the sandbox refuses, for the process `pid` (as it sees itself): the fixed list,
    clone3 as ENOSYS (its flags sit in memory a filter cannot read, so libc falls back to clone,
    whose namespace flags are refused here), signals and `prlimit` aimed at any other process,
    and clearing the parent-death signal (which let a program outlive a SIGKILLed grader)."""
    eperm = action_errno(errno.EPERM)
    rules: list[Rule] = [(eperm, name, ()) for name in DENIED]
    rules.append((action_errno(errno.ENOSYS), "clone3", ()))
    rules += [(eperm, "clone", ((0, CMP_MASKED_EQ, flag, flag),)) for flag in CLONE_NAMESPACES]
    # Another process (a pid argument that is not this one, or 0 for "myself"): any bits above the
    # 32 the kernel reads make the comparison unequal, so they are refused too.
    rules += [(eperm, name, ((0, CMP_NE, pid, 0),)) for name in ("kill", "tkill", "tgkill")]
    rules += [(eperm, name, ((0, CMP_NE, 0, 0),)) for name in (
        "prlimit64", "sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr",
        "migrate_pages", "move_pages",
        "get_robust_list")]  # (another process's: an address in the grader's memory, where it is the same uid)
    # Priorities of this process only: `who` 0 with a `which` of a group or a user means *every*
    # process of this one's user, the grader's own where no namespace could be made.
    rules += [(eperm, name, ((1, CMP_NE, 0, 0),)) for name in ("setpriority", "ioprio_set")]
    rules += [(eperm, name, ((0, CMP_NE, which, 0),)) for name, which in (
        ("setpriority", PRIO_PROCESS), ("ioprio_set", IOPRIO_WHO_PROCESS))]
    # A file's owner receives its I/O signals (SIGIO, or any signal F_SETSIG names) when the grader
    # reads the result pipe: a program once made SIGKILL reach any process of the grader's user, the
    # grader too, past the `kill` rules. fcntl's command is an unsigned int: its low 32 bits.
    rules += [(eperm, "fcntl", ((1, CMP_MASKED_EQ, LOW_32, command),)) for command in (F_SETOWN, F_SETOWN_EX)]
    rules += [(eperm, "ioctl", ((1, CMP_MASKED_EQ, LOW_32, command),)) for command in (FIOSETOWN, SIOCSPGRP)]
    # prctl's option is an int: match its low 32 bits only, or 0x1_00000001 would pass as option 1.
    rules += [(eperm, "prctl", ((0, CMP_MASKED_EQ, LOW_32, option),)) for option in (PR_SET_PDEATHSIG, PR_SET_DUMPABLE)]
    return rules


def load_filter(lib: Any, rules: Iterable[Rule]) -> bool:
    """Install a filter that allows everything but `rules` on the calling thread (and what it
    starts); True if the kernel took it. A name this libseccomp does not know is looked up in
    `NEWER_CALLS` (on `UNIFIED_TABLE_MACHINES`), else skipped; any other failure installs nothing."""
    ctx = lib.seccomp_init(ACT_ALLOW)
    if not ctx:
        return False
    try:  # a call of another ABI (x32, i386 `int 0x80`) kills the whole process, not just its thread
        lib.seccomp_attr_set(ctx, ATTR_ACT_BADARCH, ACT_KILL_PROCESS)  # (before Linux 4.14: the thread)
        unified = os.uname().machine in UNIFIED_TABLE_MACHINES
        for action, name, conditions in rules:
            number = lib.seccomp_syscall_resolve_name(name.encode())
            if number == -1 and unified:  # __NR_SCMP_ERROR: newer than this libseccomp
                number = NEWER_CALLS.get(name, -1)
            if number == -1:
                continue
            args = (_ArgCmp * max(1, len(conditions)))(*[_ArgCmp(*c) for c in conditions])
            if lib.seccomp_rule_add_array(ctx, action, number, len(conditions), args) != 0:
                return False
        return bool(lib.seccomp_load(ctx) == 0)
    finally:
        lib.seccomp_release(ctx)


def install(lib: Any, pid: int) -> bool:
    """The sandbox's filter (`sandbox_rules`) for this process, whose pid is `pid`."""
    return load_filter(lib, sandbox_rules(pid))
