"""Run an agent's predictor program `def f(s): ...` safely, to grade it on held-out sequences (spec §2.8, §4).

Untrusted code never runs in this process. Two independent layers (docs/tinylabs.md, "Predictor sandbox"):
1. Language (`sandbox_policy`): the program is compiled with RestrictedPython under our policy, and runs
   against guarded attribute/item/write hooks, a short list of pure builtins and read-only proxies of the
   allowed modules, so no module, frame or function globals of the host is reachable from it.
2. Process (`sandbox_child.harden`): a fresh `python -s -P` child (no environment but a fixed hash
   seed) in its own session that, before compiling the program, enters new network and IPC namespaces,
   chroots into an empty directory, closes every other fd, sets CPU, memory, file-size (0), open-file
   (0) and core limits, drops to a uid of its own when started as root, sets RLIMIT_NPROC = 0 (no
   fork) and, last, loads a seccomp filter (`sandbox_seccomp`), an allow-list of the calls the interpreter
   needs: sockets, System V IPC, ptrace, mount, namespaces, exec, opening or changing files, signals to
   others, ... fail with EPERM, every call it does not name with ENOSYS. Results come back over a dedicated pipe; the child's stdout/stderr go to /dev/null, so
   printed text can never pose as a result.
The parent enforces a wall-clock timeout (2 s per 100 calls by default), then kills the child's process
group and, before reaping it, sweeps /proc for anything left in its session, running as its uid or (not
root) being its PID namespace's PID 1 (`sandbox_reap`).
The child streams one record per input, so a program that hangs on input 57 still gets credit for 1-56.
"""

from __future__ import annotations

import ast
import contextlib
import json
import math
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from discoverylab.labs.sequence.sandbox_policy import (
    ALLOWED_MODULES,
    FORBIDDEN_NAMES,
    MAX_CODE_CHARS,
    SAFE_BUILTINS,
    ProgramCompileError,
    compile_program,
)
from discoverylab.labs.sequence.sandbox_reap import pin_init as _pin_init
from discoverylab.labs.sequence.sandbox_reap import sweep as _sweep

__all__ = ["ALLOWED_MODULES", "FORBIDDEN_NAMES", "SAFE_BUILTINS", "ProgramRejected", "SandboxResult",
           "check_program", "run_predictor"]

_CHILD = Path(__file__).with_name("sandbox_child.py")
_UID_BASE = 2_000_000_000  # keep equal to sandbox_child.UID_BASE
# Same program and inputs => same values: `hash(s)` and the order of a set of strings follow the
# hash seed (`-I` would ignore this variable, and the child's env is otherwise empty).
_CHILD_ENV = {"PYTHONHASHSEED": "0"}
_RECORD_BYTES = 128  # a result line is ~20 bytes; anything beyond the cap is dropped unread
# The grader compiles every program to check it: its SyntaxWarnings (`len(s) is 1`, invalid escapes)
# once printed on the grader's stderr. They are the program's, and its child reports them in the result.
warnings.filterwarnings("ignore", module=r"<predictor>\Z")


class ProgramRejected(ValueError):
    """The program failed the static check; the message says which construct is not allowed."""


@dataclass(slots=True)
class SandboxResult:
    """Outputs of the predictor, one per input (None = raised, timed out or not a finite number)."""

    values: list[float | None]
    error: str | None = None
    timed_out: bool = False
    rejected: bool = False
    call_errors: int = 0
    network_isolated: bool | None = None  # None = the child never reported (rejected or crashed early)
    privileges_dropped: bool | None = None
    seccomp: bool | None = None  # the child's syscall filter was loaded (False: no libseccomp or kernel support)
    survivors: int = 0  # processes of the sandbox found alive after it ended (killed; should be 0)
    details: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None


def check_program(code: str, function: str = "f") -> str:
    """Validate `code` under the sandbox policy; return the name of the function to call.

    Raises `ProgramRejected` (syntax error, forbidden construct or import, no usable function). The
    length is checked first: parsing runs in the grader's own process, with no limits."""
    if len(code) > MAX_CODE_CHARS:
        raise ProgramRejected(f"program is longer than {MAX_CODE_CHARS} characters")
    try:
        tree = ast.parse(code, filename="<predictor>")  # (its warnings are ignored, above)
    except SyntaxError as exc:
        raise ProgramRejected(f"syntax error on line {exc.lineno}: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ProgramRejected(f"cannot parse the program: {type(exc).__name__}") from None
    try:
        compile_program(code)
    except ProgramCompileError as exc:
        raise ProgramRejected(str(exc)) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ProgramRejected(f"cannot compile the program: {type(exc).__name__}") from None
    functions = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    if function in functions:
        return function
    if len(functions) == 1:
        return functions[0]
    raise ProgramRejected(f"define a top-level function `def {function}(s):` returning a number in [0, 1]")


def run_predictor(code: str, inputs: Sequence[str], *, function: str = "f", seconds_per_100: float = 2.0,
                  min_seconds: float = 2.0, memory_mb: int = 256) -> SandboxResult:
    """Evaluate `function` from `code` on every input in a sealed child process."""
    try:
        name = check_program(code, function)
    except ProgramRejected as exc:
        return SandboxResult(values=[None] * len(inputs), error=f"rejected: {exc}", rejected=True)
    n = len(inputs)
    timeout = max(min_seconds, seconds_per_100 * n / 100.0)
    _remove_stale_roots()
    root_dir = tempfile.mkdtemp(prefix=f"{_ROOT_PREFIX}{os.getpid()}-")
    read_fd, write_fd = os.pipe()
    proc: subprocess.Popen[bytes] | None = None
    init_fd: int | None = None
    try:
        # Nothing in the payload depends on the grader (its pid, its temp dir, how many files it has
        # open): the child's heap, and so `hash(f)` or a function's repr, would follow it. The root
        # is the child's working directory; the fd number is sent fixed-width.
        payload = {"code": code, "function": name, "inputs": list(inputs), "result_fd": f"{write_fd:010d}",
                   "cpu_seconds": max(1, math.ceil(timeout)), "memory_bytes": memory_mb * 1024 * 1024}
        with tempfile.TemporaryFile() as stdin:
            stdin.write(json.dumps(payload).encode())
            stdin.seek(0)
            try:
                proc = subprocess.Popen(  # -s -P with no other variable: -I, but with a fixed str hash
                    [sys.executable, "-s", "-P", str(_CHILD)], stdin=stdin, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL, env=_CHILD_ENV, cwd=root_dir, start_new_session=True,
                    close_fds=True, pass_fds=(write_fd,),
                )
            except OSError as exc:
                return SandboxResult(values=[None] * n, error=f"sandbox could not start: {exc}"[:300])
        os.close(write_fd)
        write_fd = -1
        data, timed_out = _read_results(read_fd, deadline=time.monotonic() + timeout + 1.0,
                                        cap=_RECORD_BYTES * (n + 4) + 4096)
        init = _namespace_init(data)
        init_fd = _pin_init(proc.pid, init)  # while the go-between lives: only its child is the namespace's PID 1
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the pid is not reaped yet, so it cannot be reused
        # Dead but not reaped until the sweep is done: its pid, and so its session id and its uid
        # (UID_BASE + pid), belong to nothing else meanwhile (they once could, swept after the reap).
        with contextlib.suppress(ChildProcessError):
            os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
        survivors = _sweep(proc.pid, _UID_BASE + proc.pid, init, init_fd)  # (init counts only when pinned)
        returncode = proc.wait()
        leftovers = os.listdir(root_dir)
    finally:
        if proc is not None and proc.returncode is None:  # interrupted while the child ran
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if init_fd is not None and init_fd >= 0:
            os.close(init_fd)
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)
        _remove_tree(root_dir)
    result = _collect(data.decode("utf-8", "replace"), n, timed_out, returncode)
    result.survivors = survivors
    result.details["child_pid"] = str(proc.pid)
    if leftovers:
        result.details["leftover_files"] = str(len(leftovers))
    return result


_ROOT_PREFIX = "discoverylab-sandbox-"
_STALE_AFTER_S = 60.0  # a root is used from its mkdtemp to the child's chroot (well under a second), then only held


def _remove_stale_roots() -> None:
    """Remove the roots (`<prefix><pid>-*`, empty) of graders that died without cleaning up: a
    SIGKILLed grader never reaches its `finally` (the runner's kill tests left one or two per
    suite run). Only a root whose grader pid no longer exists and that is older than a minute:
    a live grader's root (any user's: `kill(pid, 0)` then raises PermissionError) is never touched."""
    try:
        entries = os.scandir(tempfile.gettempdir())
    except OSError:
        return
    now = time.time()
    with entries:
        for entry in entries:
            if not entry.name.startswith(_ROOT_PREFIX):
                continue
            pid_text, _, rest = entry.name.removeprefix(_ROOT_PREFIX).partition("-")
            if not rest or not pid_text.isdigit():  # (an older grader's root, named without its pid)
                continue
            pid = int(pid_text)
            if pid == os.getpid():
                continue
            try:
                os.kill(pid, 0)
                continue  # alive
            except PermissionError:
                continue  # alive, another user's
            except ProcessLookupError:
                pass
            except OSError:
                continue
            with contextlib.suppress(OSError):
                if now - entry.stat(follow_symlinks=False).st_mtime > _STALE_AFTER_S and entry.is_dir(follow_symlinks=False):
                    _remove_tree(entry.path)


def _remove_tree(path: str) -> None:
    """rmtree recurses once per level: a tree deeper than the recursion limit (which a child with
    full powers could make where its root is writable) falls back to `rm -rf`, never a crash."""
    try:
        shutil.rmtree(path, ignore_errors=True)
    except RecursionError:
        subprocess.run(["rm", "-rf", "--", path], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False, timeout=60)


def _read_results(fd: int, *, deadline: float, cap: int) -> tuple[bytes, bool]:
    """Read the result pipe until EOF, the deadline (timed out) or `cap` bytes."""
    chunks: list[bytes] = []
    size = 0
    poller = select.poll()  # not select.select: the pipe's fd number may exceed FD_SETSIZE
    poller.register(fd, select.POLLIN)
    while size < cap:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return b"".join(chunks), True
        if not poller.poll(max(1, int(remaining * 1000))):
            continue
        chunk = os.read(fd, min(65536, cap - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks), False


def _namespace_init(data: bytes) -> int | None:
    """The not-root child's pid (PID 1 of its own PID namespace), from its status line, which was
    written before any program code ran."""
    try:
        record = json.loads(data.split(b"\n", 1)[0])
    except (ValueError, RecursionError):
        return None
    pid = record.get("init_pid") if isinstance(record, dict) and "ready" in record else None
    return pid if isinstance(pid, int) and not isinstance(pid, bool) and pid > 1 else None


def _number(v: object) -> float | None:
    """A value as the child sends it, a finite JSON number; anything else (true, 1e999, NaN, a
    400-digit int) counts as missing, so a forged record never earns what a float could not."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    try:
        x = float(v)
    except OverflowError:
        return None
    return x if math.isfinite(x) else None


def _text(value: object, limit: int = 300) -> str:
    """A message from the child, as every writer can store it: cut to `limit` and with lone
    surrogates escaped (a child that lost its language layer could send any JSON string; one lone
    surrogate once made the runner's score file fail, losing the episode)."""
    try:
        text = value[:limit] if isinstance(value, str) else str(value)[:limit]
    except (RecursionError, MemoryError):  # JSON nested nearly as deep as json.loads allows
        text = f"({type(value).__name__})"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _collect(text: str, n: int, timed_out: bool, returncode: int | None) -> SandboxResult:
    values: list[float | None] = []
    call_errors = 0
    error: str | None = None
    status: dict[str, object] = {}
    first_call_error: str | None = None
    warned: str | None = None
    for position, line in enumerate(text.splitlines()[: n + 3]):
        try:  # a child that lost its language layer could write anything: deep nesting, 5000-digit ints
            record = json.loads(line)
        except (ValueError, RecursionError):
            record = None
        if not isinstance(record, dict) or ("ready" in record) != (position == 0):
            error = "malformed output from the sandbox"  # the status comes first, before any program code
            break
        if "ready" in record:
            status = record
        elif "warnings" in record and position == 1 and isinstance(record["warnings"], list):
            warned = _text("; ".join(map(str, record["warnings"][:3])), 700)  # compile-time, before program code
        elif "fatal" in record:
            error = f"program failed: {_text(record['fatal'])}"
            break
        elif "e" in record:
            call_errors += 1
            first_call_error = first_call_error or _text(record["e"])
            values.append(None)
        else:
            values.append(_number(record.get("v")))
    if len(values) < n and error is None:
        if timed_out:
            error = f"timed out after {len(values)} of {n} inputs"
        elif returncode is not None and returncode in (-signal.SIGXCPU, -signal.SIGKILL):
            error = f"sandbox stopped after {len(values)} of {n} inputs (CPU time limit)"
        elif returncode is not None and returncode < 0:
            error = f"sandbox stopped after {len(values)} of {n} inputs (killed by signal {-returncode})"
        else:
            error = f"sandbox stopped after {len(values)} of {n} inputs (exit status {returncode})"
    values.extend([None] * (n - len(values)))
    details = {"uid": str(status["uid"])} if "uid" in status else {}
    if first_call_error:
        details["call_error"] = first_call_error  # the first exception the program raised, for feedback
    if warned:
        details["compile_warnings"] = warned
    return SandboxResult(
        values=values[:n], error=error, timed_out=timed_out, call_errors=call_errors,
        network_isolated=bool(status["network_isolated"]) if "network_isolated" in status else None,
        privileges_dropped=bool(status["privileges_dropped"]) if "privileges_dropped" in status else None,
        seccomp=bool(status["seccomp"]) if "seccomp" in status else None,
        details=details,
    )
