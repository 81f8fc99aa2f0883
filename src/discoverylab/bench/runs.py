"""Resumable batch execution shared by the DiscoveryWorld benchmark and the Tiny Labs runner.

Jobs whose key is already among the finished records are not run again; each new record is
appended durably (see `records.append_jsonl`) the moment its episode ends, so a killed run
loses at most the episodes in flight. Jobs are pulled lazily from any iterable, so a run over
100 000 seeds costs memory only for the episodes that finished.

Episodes run in worker processes (or Ray tasks, see `pool.py`), never in the parent, so the
parent can always stop them: at an episode's deadline (status `timeout`, counted from the moment a worker
took the episode, so a worker's start-up never counts), on the first Ctrl-C
or SIGTERM (finished episodes stay recorded, the ones in flight are dropped and redone on
resume, except one already played whose worker is judging it, kept as `pool.report_played` left
it; a failure that arrives after the signal is one of its casualties, so it is dropped
too, never recorded), and at once on a second Ctrl-C. After `breaker` episodes in a row end in
`llm_error` (a dead server; an `ok` or `agent_error` episode, whose model answered, starts the
count again), no further episode starts: `Outcome.breaker_message` says why, and
the episodes not run are not recorded (a resume runs them). A write that fails (a full disk,
in the runner or in a worker) stops the run the same way: `Outcome.io_error` says which file
and why, finished episodes stay recorded and the ones in flight are redone on resume.
`run_one` must be picklable (a module-level function or a `functools.partial` of one).
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from discoverylab.bench import records
from discoverylab.bench.pool import Finished, LocalPool, Pool
from discoverylab.bench.rundir import describe_io_error

J = TypeVar("J")
R = TypeVar("R", bound=BaseModel)

BREAKER_DEFAULT = 3
POLL_S = 0.1
STARTUP_LIMIT_S = 300.0  # a job no worker took this long after its submission is given up


@dataclass(slots=True)
class Outcome(Generic[R]):
    """What a run did: the records of every job reached, in job order, and how it ended."""

    results: list[R] = field(default_factory=list)
    interrupted: str | None = None  # "SIGINT" or "SIGTERM" when a signal stopped the run
    dropped: int = 0  # episodes in flight when the run was stopped (not recorded)
    breaker_message: str | None = None  # set when the circuit breaker stopped the run
    io_error: str | None = None  # set when a write failed (a full disk): the run stopped there


class _Stop:
    """Signal handlers for the duration of a run: the first signal asks to stop, the second kills."""

    def __init__(self, kill_all: Callable[[], None]) -> None:
        self.signal: str | None = None
        self._kill_all = kill_all
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _Stop:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signal is None:
            self.signal = signal.Signals(signum).name
            return
        self._kill_all()
        raise KeyboardInterrupt(f"second {signal.Signals(signum).name}: stopped at once")

    def __exit__(self, *exc: object) -> None:
        if self.signal is not None and self._previous:  # stopped: the command is on its way out
            exit_on_signal()  # no gap where SIGTERM's default would kill it (-15, not 143)
            return
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


def exit_on_signal() -> None:
    """From now on SIGINT / SIGTERM end the process at once with 130 / 143 (`bench.exits`'
    `exit_at_once_on_another_signal`, which also ignores signals from the exit handlers on).
    `_Stop` installs it as the run it stopped ends: restoring Python's default for SIGTERM there
    left a window in which a second group SIGTERM killed the command by signal."""

    def now(signum: int, _frame: object) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130 if signum == signal.SIGINT else 143)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, now)


def execute(
    jobs: Iterable[J],
    job_key: Callable[[J], Hashable],
    run_one: Callable[[J], R],
    fail: Callable[[J, str, str], R],
    finished: dict[Hashable, R],
    results_path: Path | None = None,
    *,
    workers: int = 1,
    on_done: Callable[[R], None] | None = None,
    pool: Pool | None = None,
    episode_timeout: float | None = None,
    breaker: int = BREAKER_DEFAULT,
) -> Outcome[R]:
    """Run the jobs not yet in `finished`, `workers` at a time; see the module docstring.

    `fail(job, status, message)` builds the record of a job that produced none (its worker died
    or its deadline passed). `on_done` is called once per job reached.
    """
    work = pool if pool is not None else LocalPool(run_one, workers)
    outcome: Outcome[R] = Outcome()
    order: list[Hashable] = []
    seen: set[Hashable] = set()
    latest: dict[Hashable, R] = {}
    running: dict[int, tuple[J, Hashable, float]] = {}
    llm_failures = 0
    last_llm_error = ""
    ids = itertools.count()
    pending = iter(jobs)
    exhausted = False

    def record(job_key_: Hashable, rec: R) -> None:
        nonlocal llm_failures, last_llm_error
        if results_path is not None:
            try:
                records.append_jsonl(results_path, rec)
            except OSError as exc:  # a full disk: stop, say so in one line; resume redoes this episode
                outcome.io_error = describe_io_error(exc, results_path)
                outcome.dropped += 1
                return
        latest[job_key_] = rec
        status = getattr(rec, "status", "ok")
        if status == "ok":
            finished[job_key_] = rec
        if status == "llm_error":
            llm_failures += 1
            # first line only: a worker's error may carry a traceback, which would cut the message
            last_llm_error = (str(getattr(rec, "error", "") or "").strip().splitlines() or [""])[0][:300]
        elif status in ("ok", "agent_error"):  # the endpoint answered (agent_error: with garbage)
            llm_failures = 0
        if on_done is not None:
            on_done(rec)

    def kill_all() -> None:
        work.shutdown(kill=True)

    def take(finished_now: list[Finished]) -> None:
        for done in finished_now:
            if done.io_error is not None and outcome.io_error is None:
                outcome.io_error = done.io_error  # its episode stays in `running`: dropped, redone
            if outcome.io_error is not None or (stop.signal is not None and not _is_ok(done)):
                continue  # a casualty of the stop itself, not the episode's result: dropped, redone
            entry = running.pop(done.job_id, None)
            if entry is None:
                continue
            job, key, _ = entry
            if done.failure is not None:
                record(key, fail(job, "error", done.failure))
            else:
                record(key, done.value)

    def keep_played() -> None:
        """A stop: a job whose episode has been played (its worker still judging it) is recorded as
        it stood, not dropped; a resume would play it again (pool.report_played)."""
        take(work.poll(0))  # news that came in since the last poll
        for job_id, (_job, key, _) in list(running.items()):
            if outcome.io_error is None and (value := work.played(job_id)) is not None:
                del running[job_id]
                record(key, value)

    with _Stop(kill_all) as stop:
        try:
            while True:
                if stop.signal is not None or outcome.io_error is not None:
                    if stop.signal is not None and outcome.io_error is None:
                        keep_played()
                    break
                while not exhausted and work.capacity() > 0 and stop.signal is None and outcome.io_error is None:
                    if breaker and llm_failures >= breaker:
                        outcome.breaker_message = (
                            f"the LLM endpoint failed {llm_failures} episodes in a row (last: {last_llm_error}); "
                            "the remaining episodes were not run: fix the endpoint and "
                            + ("run the same command again to resume" if results_path is not None else
                               "run again (nothing was recorded to resume from: give --out DIR)"))
                        exhausted = True  # stop pulling jobs; the ones in flight still finish
                        break
                    try:
                        job = next(pending)
                    except StopIteration:
                        exhausted = True
                        break
                    key = job_key(job)
                    if key in seen:  # the same episode asked for twice: run and list it once
                        continue
                    seen.add(key)
                    order.append(key)
                    if key in finished:
                        latest[key] = finished[key]
                        if on_done is not None:
                            on_done(finished[key])
                        continue
                    job_id = next(ids)
                    running[job_id] = (job, key, time.monotonic())
                    work.submit(job_id, job)
                if exhausted and not running:
                    break
                take(work.poll(POLL_S))
                if episode_timeout is not None and stop.signal is None and outcome.io_error is None:
                    now = time.monotonic()
                    for job_id, (job, key, submitted) in list(running.items()):
                        # From the start of the work: a worker's start-up (a Ray worker process
                        # importing the package) is no part of the episode (issue 23.6).
                        began = work.started(job_id)
                        if began is not None and now - began > episode_timeout:
                            message = (f"the episode passed its deadline of {episode_timeout:g} s "
                                       "(--episode-timeout) and was stopped")
                        elif began is None and now - submitted > episode_timeout + STARTUP_LIMIT_S:
                            message = (f"no worker started the episode within {STARTUP_LIMIT_S:g} s "
                                       "(the workers could not start, or the cluster has no free CPU)")
                        else:
                            continue
                        work.kill(job_id)
                        del running[job_id]
                        record(key, fail(job, "timeout", message))
        finally:
            outcome.dropped += len(running)
            work.shutdown(kill=stop.signal is not None or bool(running))
    outcome.interrupted = stop.signal
    outcome.results = [latest[key] for key in order if key in latest]
    return outcome


def _is_ok(done: Finished) -> bool:
    return done.failure is None and getattr(done.value, "status", "ok") == "ok"

