"""The sandbox child's seccomp-BPF filter, an allow-list: once it is loaded, the child may make only
the system calls its interpreter needs to run a predictor; every other call fails with an errno and
does nothing (docs/tinylabs.md, "Predictor sandbox").

Why a filter on top of namespaces, chroot and the uid drop: it needs no privilege (only
`PR_SET_NO_NEW_PRIVS`), so it also holds for a grader that is not root on a machine without
unprivileged user namespaces, where nothing else stands between the program and the grader's files,
processes and network. Why an allow-list: the deny-list it replaces allowed every call it did not
name, so a call added to Linux later (or one it forgot) was open to a program that broke the language
layer, and so was the kernel code behind each of the ~350 calls it left open.

What is allowed (`NEEDED`, found by tracing the child with `strace -f` over grades of ordinary,
failing, memory-hungry, recursive and endless programs: after the filter the interpreter only maps,
unmaps and grows memory, writes its records, restores its signal handlers and exits), plus `HARMLESS`
calls CPython and glibc make on paths the trace did not take (a lock under contention, a clock
without the vDSO, a signal handler's return, abort() signalling itself); and, with argument checks,
`kill`/`tkill`/`tgkill` of itself only, `prlimit64` and `get/setpriority` of itself only, `prctl`
reads of its own state, `fcntl` flag reads and writes, `ioctl` of isatty and close-on-exec, and `clone` with no
namespace flag (RLIMIT_NPROC = 0 refuses a new process or thread anyway).

Everything else fails without a kill (the program sees an ordinary OSError, the grade goes on and
stays byte-identical, and no well-behaved predictor makes these calls):
* **ENOSYS** by default: what this list does not know, from a call added to Linux later or a number
  no call has yet (470, 500) to known calls nobody needs (`mbind`, `landlock_*`, `splice`...). It is
  what a kernel without the call says, so glibc falls back where it can (`clone3` to `clone`,
  `faccessat2` to `faccessat`), and it needs no rule: no table of unassigned numbers to load.
* **EPERM** for the calls known to reach out of the process, named in `DENIED` with why, so that a
  program (and a test) can tell the policy from a missing kernel feature: sockets; other processes
  (ptrace, their memory, signals, scheduling, pidfds); System V IPC and POSIX message queues (no fd
  needed); mounts, namespaces and chroot; changing files and looking up paths without an fd (a grader
  without user namespaces runs the child unchrooted); opening files; keys, bpf, perf, modules, kexec,
  reboot, clocks and host names, io_uring and AIO, syslog, sync; exec, memfd and `personality`; and
  `seccomp` itself. With arguments: signals, `prlimit64` and `setpriority` aimed at any other process
  (or at a group or a user), `prctl(PR_SET_PDEATHSIG)`, `PR_SET_DUMPABLE` and `PR_SET_SECCOMP` (a
  program once outlived a SIGKILLed grader by clearing its death signal),
  `fcntl(F_SETOWN/F_SETOWN_EX)` and `ioctl(FIOSETOWN/SIOCSPGRP)` (a file's owner receives its I/O
  signals: the result pipe once carried SIGKILL to the grader), and `clone` with a namespace flag.
A call of another ABI (x32, i386) kills the whole process with SIGSYS.

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
ATTR_CTL_TSYNC = 4  # SCMP_FLTATR_CTL_TSYNC: the filter binds every thread of the process, not only the caller
CMP_NE, CMP_EQ, CMP_MASKED_EQ = 1, 4, 7
LOW_32 = 0xFFFFFFFF
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_SECCOMP = 1, 4, 22
PR_GET_PDEATHSIG, PR_GET_DUMPABLE, PR_GET_NAME, PR_GET_NO_NEW_PRIVS = 2, 3, 16, 39
PRIO_PROCESS = 0  # the only `which` get/setpriority may name (not a group or a user)
F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_SETOWN, F_SETOWN_EX = 1, 2, 3, 4, 8, 15
# The ioctls of the interpreter's own: isatty() (of its /dev/null fds) and os.set_inheritable (close-on-exec).
TCGETS, FIONCLEX, FIOCLEX = 0x5401, 0x5450, 0x5451
FIOSETOWN, SIOCSPGRP = 0x8901, 0x8902  # a file's owner, set through ioctl (sockets; ENOTTY elsewhere)
# Namespace flags that clone(2) takes in its first argument (CLONE_NEWTIME only through clone3/unshare).
CLONE_NAMESPACES = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)

# What the interpreter calls after the filter is loaded (traced; see the module docstring).
NEEDED = (
    "brk", "mmap", "munmap", "mremap",  # CPython's and glibc's allocators
    "write",  # the result records (and print's flush into /dev/null)
    "rt_sigaction",  # finalisation restores the signal handlers
    "exit_group",
)
# Not in the trace, but on paths a predictor's run may take, and process-local.
HARMLESS = (
    "mprotect", "madvise",  # glibc's non-main arenas grow by mprotect and shrink by madvise
    "rt_sigprocmask", "rt_sigreturn", "sigaltstack", "restart_syscall",  # a signal's delivery and return
    "exit",
    "futex", "sched_yield",  # a lock's wait and wake
    "clock_gettime", "clock_getres", "gettimeofday", "time", "nanosleep", "clock_nanosleep",  # no vDSO
    "getpid", "gettid",  # abort() and raise() signal the process itself
    "getrandom",  # os.urandom, random.Random() without a seed: entropy, nothing of the host's
    "close",  # its own fds (the result pipe, once the last record is written)
)

# Calls newer than some libseccomp releases (Debian 12's 2.5.4 knows none of them). Refused with
# ENOSYS by default anyway; named here so they fail with EPERM like the older calls of their kind,
# by their number in the table every architecture shares since Linux 5.1 (`UNIFIED_TABLE_MACHINES`
# only: MIPS and Alpha number them differently).
NEWER_CALLS = {
    "statmount": 457, "listmount": 458,  # the mount tree's paths (the host's, without a mount namespace)
    "lsm_set_self_attr": 460,  # a security module's context, which /proc/self/attr (an fd) once gated
    "setxattrat": 463, "getxattrat": 464, "listxattrat": 465, "removexattrat": 466,  # xattrs by path
    "open_tree_attr": 467, "file_getattr": 468, "file_setattr": 469,  # mounts; inode flags by path
}
UNIFIED_TABLE_MACHINES = frozenset({"x86_64", "aarch64", "arm64", "riscv64", "ppc64le", "s390x", "loongarch64"})

# Refused with EPERM: known to reach out of the process. Sockets of every family: the records go back
# over a pipe, so not even AF_UNIX is needed (an abstract unix socket reaches the grader's listeners
# without any file).
DENIED = (
    "socket", "socketpair",
    # other processes: their memory, their signals, their scheduling, their identity
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "process_mrelease", "kcmp",
    "pidfd_open", "pidfd_getfd", "pidfd_send_signal", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "setsid",
    "setpgid", "sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr", "ioprio_set",
    "migrate_pages", "move_pages", "get_robust_list",  # (another process's: an address in its memory)
    # System V IPC and POSIX message queues: no file descriptor needed, and (without an IPC namespace of
    # the child's own) the host's, so a program could read the grader's shared memory or leave segments
    # behind that outlive it
    "shmget", "shmat", "shmdt", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop",
    "semtimedop", "semctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify",
    "mq_getsetattr",
    # the file system's shape and the way out of a chroot
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr", "unshare", "setns", "open_by_handle_at", "name_to_handle_at",
    # opening files (RLIMIT_NOFILE = 0 refuses a new fd as well)
    "open", "openat", "openat2", "creat",
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
    "readlinkat", "chdir", "fchdir", "getcwd", "getxattr", "lgetxattr", "listxattr", "llistxattr", "uselib",
    *NEWER_CALLS,
    # already done by the child itself (the ASLR restart, its own exec); memfd_create + execveat is
    # the way to run a binary without a file
    "personality", "execve", "execveat", "memfd_create", "memfd_secret",
    # a filter of the program's own: it cannot loosen this one, but it is kernel surface nobody needs
    "seccomp",
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


def _low32(value: int) -> tuple[int, int, int, int]:
    """Argument 0 or 1 (see callers) equal to `value` in the low 32 bits, all the kernel reads of an
    int or unsigned int argument: 0x1_00000001 passes as option 1."""
    return (0, CMP_MASKED_EQ, LOW_32, value)


def sandbox_rules(pid: int) -> list[Rule]:
    """The allow-list for the process `pid` (as it sees itself), with EPERM for `DENIED` and for the
    refused arguments of the calls allowed with checks; every call not named falls to the default."""
    allow, eperm = ACT_ALLOW, action_errno(errno.EPERM)
    rules: list[Rule] = [(allow, name, ()) for name in (*NEEDED, *HARMLESS)]
    rules += [(eperm, name, ()) for name in DENIED]
    # clone3 is not named: its flags sit in memory a filter cannot read, and with the default ENOSYS
    # libc falls back to clone, whose namespace flags are refused here.
    namespaces = sum(CLONE_NAMESPACES)
    rules.append((allow, "clone", ((0, CMP_MASKED_EQ, namespaces, 0),)))
    rules += [(eperm, "clone", ((0, CMP_MASKED_EQ, flag, flag),)) for flag in CLONE_NAMESPACES]
    # Signals to itself only: any bits above the 32 the kernel reads make the comparison unequal (refused).
    for name in ("kill", "tkill", "tgkill"):
        rules += [(allow, name, ((0, CMP_EQ, pid, 0),)), (eperm, name, ((0, CMP_NE, pid, 0),))]
    # Its own limits only (pid 0: "myself"); its own priority only (`who` 0 with a `which` of a group or
    # a user means *every* process of this one's user, the grader's own where no namespace could be made).
    rules += [(allow, "prlimit64", ((0, CMP_EQ, 0, 0),)), (eperm, "prlimit64", ((0, CMP_NE, 0, 0),))]
    rules.append((allow, "getpriority", ((0, CMP_EQ, PRIO_PROCESS, 0), (1, CMP_EQ, 0, 0))))
    rules += [(allow, "setpriority", ((0, CMP_EQ, PRIO_PROCESS, 0), (1, CMP_EQ, 0, 0))),
              (eperm, "setpriority", ((0, CMP_NE, PRIO_PROCESS, 0),)), (eperm, "setpriority", ((1, CMP_NE, 0, 0),))]
    # prctl: reads of its own state; clearing the death signal (which let a program outlive a SIGKILLed
    # grader), becoming dumpable again and a filter of its own are refused.
    rules += [(allow, "prctl", (_low32(option),))
              for option in (PR_GET_PDEATHSIG, PR_GET_DUMPABLE, PR_GET_NAME, PR_GET_NO_NEW_PRIVS)]
    rules += [(eperm, "prctl", (_low32(option),)) for option in (PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_SECCOMP)]
    # A file's owner receives its I/O signals (SIGIO, or any signal F_SETSIG names) when the grader
    # reads the result pipe: a program once made SIGKILL reach any process of the grader's user, the
    # grader too, past the `kill` rules. fcntl's and ioctl's command is an unsigned int: its low 32 bits.
    rules += [(allow, "fcntl", ((1, CMP_MASKED_EQ, LOW_32, command),)) for command in (F_GETFD, F_SETFD, F_GETFL, F_SETFL)]
    rules += [(eperm, "fcntl", ((1, CMP_MASKED_EQ, LOW_32, command),)) for command in (F_SETOWN, F_SETOWN_EX)]
    rules += [(allow, "ioctl", ((1, CMP_MASKED_EQ, LOW_32, command),)) for command in (TCGETS, FIONCLEX, FIOCLEX)]
    rules += [(eperm, "ioctl", ((1, CMP_MASKED_EQ, LOW_32, command),)) for command in (FIOSETOWN, SIOCSPGRP)]
    return rules


def load_filter(lib: Any, rules: Iterable[Rule], default: int = ACT_ALLOW) -> bool:
    """Install a filter of `rules` over the `default` action on every thread of the process (and
    what they start); True if the kernel took it. A name this libseccomp does not know is looked up in
    `NEWER_CALLS` (on `UNIFIED_TABLE_MACHINES`), else skipped (so, over a refusing default, refused);
    any other failure installs nothing."""
    ctx = lib.seccomp_init(default)
    if not ctx:
        return False
    try:  # a call of another ABI (x32, i386 `int 0x80`) kills the whole process, not just its thread
        lib.seccomp_attr_set(ctx, ATTR_ACT_BADARCH, ACT_KILL_PROCESS)  # (before Linux 4.14: the thread)
        # Threads already running (none in the real child; a library that starts some at import would)
        # would keep an unfiltered way out: code that broke out of the language layer can reach any
        # thread's stack. With TSYNC the kernel refuses the whole load if one cannot be synced.
        lib.seccomp_attr_set(ctx, ATTR_CTL_TSYNC, 1)
        unified = os.uname().machine in UNIFIED_TABLE_MACHINES
        unconditional = (_ArgCmp * 1)()  # shared: most rules have no condition (a quarter of the load time)
        for action, name, conditions in rules:
            number = lib.seccomp_syscall_resolve_name(name.encode())
            if number == -1 and unified:  # __NR_SCMP_ERROR: newer than this libseccomp
                number = NEWER_CALLS.get(name, -1)
            if number == -1:
                continue
            args = (_ArgCmp * len(conditions))(*[_ArgCmp(*c) for c in conditions]) if conditions else unconditional
            if lib.seccomp_rule_add_array(ctx, action, number, len(conditions), args) != 0:
                return False
        return bool(lib.seccomp_load(ctx) == 0)
    finally:
        lib.seccomp_release(ctx)


def install(lib: Any, pid: int) -> bool:
    """The sandbox's filter (`sandbox_rules`, every other call ENOSYS) for this process, whose pid is `pid`."""
    return load_filter(lib, sandbox_rules(pid), default=action_errno(errno.ENOSYS))
