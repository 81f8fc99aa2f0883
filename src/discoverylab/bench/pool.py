"""Worker pools for the resumable executor: local processes (default); Ray actors in `ray_pool`.

A pool runs one job per worker at a time and tells the executor, through `poll`, which jobs
finished and which workers died. The executor can kill the worker of one job (episode deadline)
or every worker (Ctrl-C) at any moment; a local worker is a plain process on a private pipe, so
killing it can never leave a shared queue locked, which is what made a second Ctrl-C hang
`ProcessPoolExecutor`.

Local workers die with their parent: Linux's `PR_SET_PDEATHSIG` kills them when the parent
goes (even by SIGKILL), and a watchdog thread that checks the parent pid covers the other cases.
They ignore SIGINT and SIGTERM: those reach a whole process group, and stopping is the parent's
decision (it kills its workers with SIGKILL).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.context import BaseContext
from typing import Any, Protocol

from discoverylab.bench.rundir import describe_io_error, is_disk_error

PR_SET_PDEATHSIG = 1
WATCHDOG_PERIOD_S = 0.5


@dataclass(frozen=True, slots=True)
class Finished:
    """A job came back: `value` is its record, or `failure` says why there is none."""

    job_id: int
    value: Any = None
    failure: str | None = None
    io_error: str | None = None  # the worker could not write (a full disk): the run must stop


@dataclass(frozen=True, slots=True)
class Started:
    """A worker took its job: the episode's deadline counts from here, not from the submission."""

    job_id: int


@dataclass(frozen=True, slots=True)
class Played:
    """The job's record as it stands before slow work that cannot change the episode (the
    knowledge judge): a stop keeps it rather than dropping a finished episode (`report_played`)."""

    job_id: int
    value: Any


_CURRENT: list[tuple[Connection, int]] = []  # in a local worker: its pipe and the job it runs
KEEP: list[Callable[[Any], None]] = []  # in a Ray actor (`ray_pool`): where the job's `report_played` record goes
PLAYED_ASK_S = 10.0  # how long a stopping runner waits for a Ray actor to say what its job played


def report_played(value: Any) -> None:
    """In a worker: hand the runner `value`, the job's record if the job stopped now. The runner
    records it (not the job's final record) when a Ctrl-C or SIGTERM stops the run before the job
    returns (a local worker sends it; a Ray actor keeps it until the runner asks); elsewhere
    (in-process) this does nothing."""
    if KEEP:
        KEEP[0](value)
        return
    if not _CURRENT:
        return
    conn, job_id = _CURRENT[0]
    try:
        conn.send(Played(job_id, value))
    except (BrokenPipeError, OSError):
        pass


def in_worker() -> bool:
    """Whether this code runs a job of a pool that takes `report_played` (worth preparing one)."""
    return bool(_CURRENT or KEEP)


class Pool(Protocol):
    """What the executor needs from a backend."""

    def capacity(self) -> int: ...
    def submit(self, job_id: int, job: Any) -> None: ...
    def started(self, job_id: int) -> float | None: ...  # monotonic time the work began (None: not yet)
    def played(self, job_id: int) -> Any: ...  # the record `report_played` sent for the job (None: none)
    def poll(self, timeout: float) -> list[Finished]: ...
    def kill(self, job_id: int) -> None: ...
    def shutdown(self, kill: bool) -> None: ...


def die_with_parent(parent_pid: int) -> None:
    """Make this process exit when `parent_pid` does (call first thing in a worker)."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass  # the watchdog below still works
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(WATCHDOG_PERIOD_S)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()


def _worker_main(conn: Connection, run_one: Callable[[Any], Any], parent_pid: int,
                 initializer: Callable[..., None] | None, initargs: Sequence[Any],
                 close_fds: Sequence[int]) -> None:
    die_with_parent(parent_pid)
    # Ctrl-C, and the SIGTERM that Slurm, systemd and `kill -TERM -PGID` send, reach the whole group.
    # A worker that died of it would be reported as a failed episode before the runner's handler ran
    # (issue 23.4), so workers ignore both: the runner decides, and kills them itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for fd in close_fds:  # e.g. the run lock inherited through fork: only the parent may hold it
        try:
            os.close(fd)
        except OSError:
            pass
    if initializer is not None:
        initializer(*initargs)
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        job_id, job = message
        try:
            conn.send(Started(job_id))
        except (BrokenPipeError, OSError):
            return
        _CURRENT[:] = [(conn, job_id)]
        try:
            reply = Finished(job_id, value=run_one(job))
        except BaseException as exc:  # noqa: BLE001 - report, never die silently
            if isinstance(exc, OSError) and is_disk_error(exc):
                reply = Finished(job_id, io_error=describe_io_error(exc))
            else:
                reply = Finished(job_id, failure=f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}")
        finally:
            _CURRENT.clear()
        try:
            conn.send(reply)
        except (BrokenPipeError, OSError):
            return


@dataclass(slots=True)
class _Worker:
    process: multiprocessing.process.BaseProcess
    conn: Connection
    job_id: int | None = None
    started: float | None = None
    played: Any = None  # the job's `Played` record, if its worker sent one


class LocalPool:
    """Up to `workers` processes, started on demand and replaced when one dies or is killed."""

    def __init__(self, run_one: Callable[[Any], Any], workers: int, *, context: BaseContext | None = None,
                 initializer: Callable[..., None] | None = None, initargs: Sequence[Any] = (),
                 close_fds: Sequence[int] = ()) -> None:
        self._run_one = run_one
        self._size = max(1, workers)
        self._ctx = context or multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        self._initializer = initializer
        self._initargs = tuple(initargs)
        # Only a forked child inherits our descriptors; in a spawned one these numbers mean other files.
        self._close_fds = tuple(close_fds) if self._ctx.get_start_method() == "fork" else ()
        self._workers: list[_Worker] = []

    def capacity(self) -> int:
        return self._size - sum(1 for w in self._workers if w.job_id is not None)

    def _start(self) -> _Worker:
        parent_conn, child_conn = self._ctx.Pipe()
        process = self._ctx.Process(  # type: ignore[attr-defined]
            target=_worker_main, name="discoverylab-worker", daemon=True,
            args=(child_conn, self._run_one, os.getpid(), self._initializer, self._initargs, self._close_fds),
        )  # fmt: skip
        process.start()
        child_conn.close()
        worker = _Worker(process, parent_conn)
        self._workers.append(worker)
        return worker

    def submit(self, job_id: int, job: Any) -> None:
        idle = next((w for w in self._workers if w.job_id is None), None)
        worker = idle or self._start()
        worker.job_id, worker.started, worker.played = job_id, None, None
        try:
            worker.conn.send((job_id, job))
        except (BrokenPipeError, OSError):
            pass  # the worker died; poll() reports it through its sentinel

    def poll(self, timeout: float) -> list[Finished]:
        busy = [w for w in self._workers if w.job_id is not None]
        if not busy:
            time.sleep(min(timeout, 0.05))
            return []
        handles: list[Any] = [w.conn for w in busy] + [w.process.sentinel for w in busy]
        ready = set(wait(handles, timeout))
        out: list[Finished] = []
        for worker in busy:
            reply: Finished | None = None
            if worker.conn in ready:
                try:
                    message = worker.conn.recv()
                    while isinstance(message, (Started, Played)):  # news of the job, not its end
                        if message.job_id == worker.job_id:
                            if isinstance(message, Started):
                                worker.started = time.monotonic()
                            else:
                                worker.played = message.value
                        if not worker.conn.poll():
                            break
                        message = worker.conn.recv()
                    else:
                        reply = message
                    if reply is None:
                        continue  # working; its result comes later
                except (EOFError, OSError):
                    reply = None
            if reply is not None:
                worker.job_id = None
                out.append(reply)
            elif worker.conn in ready or worker.process.sentinel in ready:
                worker.process.join(timeout=1.0)
                code = worker.process.exitcode
                out.append(Finished(worker.job_id or 0, failure=f"the worker process died (exit code {code})"))
                self._drop(worker)
        return out

    def started(self, job_id: int) -> float | None:
        return next((w.started for w in self._workers if w.job_id == job_id), None)

    def played(self, job_id: int) -> Any:
        return next((w.played for w in self._workers if w.job_id == job_id), None)

    def kill(self, job_id: int) -> None:
        for worker in list(self._workers):
            if worker.job_id == job_id:
                self._drop(worker)

    def _drop(self, worker: _Worker) -> None:
        if worker.process.is_alive():
            worker.process.kill()
        worker.process.join(timeout=2.0)
        worker.conn.close()
        self._workers.remove(worker)

    def pids(self) -> list[int]:
        return [w.process.pid for w in self._workers if w.process.pid is not None]

    def shutdown(self, kill: bool) -> None:
        for worker in list(self._workers):
            if kill or worker.job_id is not None:
                self._drop(worker)
                continue
            try:
                worker.conn.send(None)
            except (BrokenPipeError, OSError):
                pass
            worker.process.join(timeout=2.0)
            self._drop(worker)
