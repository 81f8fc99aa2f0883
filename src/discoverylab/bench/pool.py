"""Worker pools for the resumable executor: local processes (default) or Ray tasks.

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
from discoverylab.instances import KEY_ENV

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
_KEEP: list[Callable[[Any], None]] = []  # in a Ray actor: where the job's `report_played` record goes
PLAYED_ASK_S = 10.0  # how long a stopping runner waits for a Ray actor to say what its job played


def report_played(value: Any) -> None:
    """In a worker: hand the runner `value`, the job's record if the job stopped now. The runner
    records it (not the job's final record) when a Ctrl-C or SIGTERM stops the run before the job
    returns (a local worker sends it; a Ray actor keeps it until the runner asks); elsewhere
    (in-process) this does nothing."""
    if _KEEP:
        _KEEP[0](value)
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
    return bool(_CURRENT or _KEEP)


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


class RayPool:
    """Jobs on Ray actors, one job per actor at a time, on a cluster at `address` or a local one.

    Deadlines count from the start of the work (issue 23.6): an actor is started and made ready
    (its process up, `run_one` and its imports loaded) before it is given a job, and `started`
    says when the job was handed over. A local cluster is started through `ray_cluster`'s keeper
    (Linux), so no Ray process outlives the runner, even after `kill -9`.
    """

    def __init__(self, run_one: Callable[[Any], Any], workers: int, *, address: str | None = None) -> None:
        try:
            import ray
        except ImportError as exc:
            raise RuntimeError("the ray backend needs Ray: pip install 'discoverylab[ray]'") from exc
        self._ray = ray
        if not ray.is_initialized():
            if address is None:
                address = _owned_cluster_address()
            # Settings such as the LLM endpoint and request deadline travel as environment variables;
            # the evaluator's key does not: jobs carry their instances, and Ray shows a runtime env to
            # anyone on the cluster and sets it beside every episode.
            env = {k: v for k, v in os.environ.items() if k.startswith(("DISCOVERYLAB_", "OPENAI_")) and k != KEY_ENV}
            ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False,
                     runtime_env={"env_vars": env} if env else None)  # fmt: skip
        # Two threads: `played` answers while `run` still works (the judge), so a stop keeps the episode.
        self._actor_class = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0,  # type: ignore[call-overload]
                                       max_concurrency=2)(_RayWorker)  # (an actor option Ray's stubs leave out)
        self._run_one = ray.put(run_one)
        self._size = max(1, workers)
        self._starting: dict[Any, Any] = {}  # ready ref -> actor
        self._idle: list[Any] = []
        self._busy: dict[Any, tuple[int, Any, float]] = {}  # result ref -> (job id, actor, start)
        self._queue: list[tuple[int, Any]] = []  # jobs waiting for a ready actor

    def capacity(self) -> int:
        return self._size - len(self._busy) - len(self._queue)

    def submit(self, job_id: int, job: Any) -> None:
        self._queue.append((job_id, job))
        self._dispatch()

    def started(self, job_id: int) -> float | None:
        return next((start for jid, _, start in self._busy.values() if jid == job_id), None)

    def played(self, job_id: int) -> Any:
        """Asked as the run stops: what the job's actor kept from `report_played` (None: nothing yet,
        or the actor does not answer in `PLAYED_ASK_S`). Before, a stop dropped a Ray episode that
        was being judged, and a resume played it again."""
        for jid, actor, _ in self._busy.values():
            if jid == job_id:
                try:
                    return self._ray.get(actor.played.remote(job_id), timeout=PLAYED_ASK_S)
                except Exception:  # noqa: BLE001 - a dead or stuck actor: its episode is in flight, dropped
                    return None
        return None

    def _dispatch(self) -> None:
        while self._queue and self._idle:
            job_id, job = self._queue.pop(0)
            actor = self._idle.pop()
            self._busy[actor.run.remote(job, job_id)] = (job_id, actor, time.monotonic())
        wanted = min(len(self._queue) - len(self._starting),
                     self._size - len(self._busy) - len(self._idle) - len(self._starting))
        for _ in range(max(0, wanted)):
            actor = self._actor_class.remote(self._run_one)
            self._starting[actor.ready.remote()] = actor  # type: ignore[attr-defined]

    def poll(self, timeout: float) -> list[Finished]:
        refs = list(self._starting) + list(self._busy)
        if not refs:
            time.sleep(min(timeout, 0.05))
            return []
        ready, _ = self._ray.wait(refs, num_returns=1, timeout=timeout)
        if ready:
            ready, _ = self._ray.wait(refs, num_returns=len(refs), timeout=0)
        out: list[Finished] = []
        for ref in ready:
            if ref in self._starting:
                actor = self._starting.pop(ref)
                try:
                    self._ray.get(ref)
                    self._idle.append(actor)
                except Exception as exc:  # noqa: BLE001 - an actor that cannot start costs the next job
                    self._ray.kill(actor)
                    if self._queue:
                        job_id, _job = self._queue.pop(0)
                        out.append(Finished(job_id, failure=f"the Ray worker did not start: {type(exc).__name__}: {exc}"))
            elif ref in self._busy:
                job_id, actor, _ = self._busy.pop(ref)
                try:
                    out.append(Finished(job_id, value=self._ray.get(ref)))
                    self._idle.append(actor)
                except Exception as exc:  # noqa: BLE001 - a lost task becomes a failure record
                    self._ray.kill(actor)
                    out.append(Finished(job_id, failure=f"the Ray task failed: {type(exc).__name__}: {exc}"))
        self._dispatch()
        return out

    def kill(self, job_id: int) -> None:
        self._queue = [(jid, job) for jid, job in self._queue if jid != job_id]
        for ref, (jid, actor, _) in list(self._busy.items()):
            if jid == job_id:
                self._ray.kill(actor)  # the actor's process goes; a fresh one is started when needed
                del self._busy[ref]
        self._dispatch()

    def shutdown(self, kill: bool) -> None:
        for actor in [*self._starting.values(), *self._idle, *(a for _, a, _ in self._busy.values())]:
            self._ray.kill(actor)
        self._starting.clear()
        self._idle.clear()
        self._busy.clear()
        self._queue.clear()


class _RayWorker:
    """A Ray actor holding `run_one`: loading it (and its imports) is start-up, not episode time."""

    def __init__(self, run_one: Callable[[Any], Any]) -> None:
        self._run_one = run_one
        self._job_id: int | None = None
        self._played: Any = None

    def ready(self) -> bool:
        return True

    def run(self, job: Any, job_id: int) -> Any:
        self._job_id, self._played = job_id, None
        _KEEP[:] = [self._keep]
        try:
            return self._run_one(job)
        finally:
            _KEEP.clear()

    def _keep(self, value: Any) -> None:
        self._played = value

    def played(self, job_id: int) -> Any:
        """Job `job_id`'s `report_played` record (None: none yet, or the actor has not begun that
        job: never the record of the job before); answered beside `run`."""
        return self._played if self._job_id == job_id else None


_CLUSTER: list[Any] = []  # the keeper of this process's local cluster (kept alive until exit)


def _owned_cluster_address() -> str | None:
    """Start (once per process) a local cluster that dies with this process; None: let ray.init start one."""
    from discoverylab.bench import ray_cluster

    if not ray_cluster.supported():
        return None
    if not _CLUSTER:
        _CLUSTER.append(ray_cluster.OwnedCluster())
    return str(_CLUSTER[0].address)
