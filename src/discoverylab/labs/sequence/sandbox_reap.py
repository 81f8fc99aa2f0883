"""After a sandbox child ends: kill whatever of it is left, and only that (docs/tinylabs.md, "Predictor sandbox").

`run_predictor` kills the child's process group, then sweeps /proc for processes still in its session,
running as its uid (UID_BASE + its pid, as root) or being its PID namespace's PID 1 (not root, where a
program can leave the session). Two rules keep the sweep from killing a stranger that was given a number
the sandbox used: the child stays unreaped (a zombie) until the sweep is done, so its pid, session id and
uid belong to nothing else; and every process is signalled through a pidfd taken before its status is
read again, the namespace's PID 1 through one taken while it was still the go-between's own child.
"""

from __future__ import annotations

import logging
import os
import signal
from pathlib import Path

logger = logging.getLogger("discoverylab.labs.sequence.sandbox")


def _pin(pid: int) -> int | None:
    """A pidfd of `pid`, which names that process until closed, never a later one given its number;
    -1 where pidfds are missing (Linux < 5.3: signals then go by pid), None if `pid` is gone."""
    try:
        return os.pidfd_open(pid)
    except ProcessLookupError:
        return None
    except OSError:
        return -1


def _signal(pid: int, fd: int, sig: int) -> bool:
    """Send `sig` through the pidfd `fd` (by pid where it is -1); False if that process is gone."""
    try:
        if fd >= 0:
            signal.pidfd_send_signal(fd, sig)
        else:
            os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _proc_status(pid: int) -> tuple[str, str] | None:
    """/proc/<pid>/stat and /proc/<pid>/status, or None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text(), Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None


def _field(status: str, name: str) -> list[str]:
    return next((line.split()[1:] for line in status.splitlines() if line.startswith(f"{name}:")), [])


def pin_init(go_between: int, init: int | None) -> int | None:
    """A pidfd (-1: by pid) of the not-root child's PID 1, whose pid its status line gave, if that pid is
    still PID 1 of a namespace and the go-between's own child. Taken before the go-between is killed,
    which leaves it a PID 1 that left the session orphaned: a later process given the same number
    (another grader's sandbox, also PID 1 of its namespace) is never taken for it."""
    fd = _pin(init) if init is not None else None
    if fd is None or init is None:
        return None
    read = _proc_status(init)
    nspid = _field(read[1], "NSpid") if read else []
    ours = read is not None and _field(read[1], "PPid") == [str(go_between)] and len(nspid) >= 2 and nspid[-1] == "1"
    if ours and _signal(init, fd, 0):  # still alive, so what was read was its own status
        return fd
    if fd >= 0:
        os.close(fd)
    return None


def sweep(session: int, uid: int, init: int | None = None, init_fd: int | None = None) -> int:
    """Kill and count processes left in the child's session, running as its uid or (not root: a
    program could leave the session with setsid) being its namespace's PID 1, pinned by `init_fd`
    (expected: none). Each is signalled through a pidfd taken before its status is read again, so a
    process that ends meanwhile is never confused with a new one given its number."""
    found = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        is_init = init_fd is not None and pid == init
        read = _proc_status(pid)
        if read is None or not (is_init or _belongs(read, session, uid)):
            continue
        fd = init_fd if is_init and init_fd is not None else _pin(pid)
        if fd is None:
            continue
        try:
            again = _proc_status(pid)  # now that the pidfd holds the process
            alive = again is not None and again[0][again[0].rindex(")") + 2] != "Z"
            if again and alive and (is_init or _belongs(again, session, uid)) and _signal(pid, fd, signal.SIGKILL):
                found += 1
        finally:
            if fd >= 0 and fd != init_fd:
                os.close(fd)
    if found:
        logger.warning("sandbox left %d process(es) behind; killed", found)
    return found


def _belongs(read: tuple[str, str], session: int, uid: int) -> bool:
    """In the session `session` or running as `uid` (a real, effective, saved or file-system uid)."""
    stat, status = read
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[3]) == session or str(uid) in _field(status, "Uid")
