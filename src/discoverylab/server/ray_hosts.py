"""The Ray pool's actors and their errors (`ray_sessions.RaySessions` is the driver that uses them).

`LedgerHost` (the played-once ledger) and `RecordsHost` (env-serve's `--out` records) are one
actor each per pool, on the driver's node; `SessionHost` is each session actor's body, a
`SessionPool` whose ledger and records are `RemoteLedger` and `RemoteRecords` views of those two.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from discoverylab.bench.episode import EpisodeRecord
from discoverylab.labs.run_record import LabRecord
from discoverylab.server.records import EpisodeRecords, RecordKept, records_config, write_failure
from discoverylab.server.session import ResetRequest, SealedLedger, SessionError, StepResult

logger = logging.getLogger(__name__)


class SessionLost(SessionError):
    """The Ray actor that held a session died (its process ended): the episode in play is gone;
    every episode that had ended is already on disk (`out`). The client starts a new session."""

    status = 410


class StepManyError(SessionError):
    """`step_many` where some sessions failed: `results` holds the steps that happened, `errors`
    each failed session's error (its own status)."""

    def __init__(self, results: dict[str, StepResult], errors: dict[str, SessionError]) -> None:
        first = next(iter(errors.values()))
        super().__init__(f"{len(errors)} of {len(results) + len(errors)} sessions failed to step (first: {first}); "
                         "the others' results are in `results`.")  # fmt: skip
        self.results, self.errors = results, errors
        self.status = getattr(first, "status", 400)


def _lost_text(sid: str) -> str:
    return (f"Session {str(sid)[:40]!r} was held by a Ray actor that died: its episode in play is lost (every "
            "episode that had ended is recorded). Create a new session.")  # fmt: skip


class ServiceRestarting(SessionError):
    """The pool's ledger or records actor died and Ray restarts it (its state is in its file):
    the request can be tried again; an ended episode's record is written again when its session goes."""

    status = 503


class RecordsNotWritten(SessionError):
    """The pool stopped with records neither its records actor nor its driver could write into DIR
    (the disk refuses them): `records` holds them, in order (`(method, args)`: `append_dw` with
    the log's name, the log and the `EpisodeRecord`, or `append_lab` with the `LabRecord`)."""

    status = 507

    def __init__(self, records: list[tuple[str, tuple[Any, ...]]], out: Path, cause: Exception) -> None:
        reason = write_failure(cause)
        super().__init__(f"{len(records)} ended episodes' records could not be written to {out} as the Ray pool "
                         f"stopped ({reason}); they are kept in this error's `records`, to write once there is room.")
        self.records = records


def _call(ref: Any) -> Any:
    """`ray.get`, the actor's own error raised as itself (Ray wraps it in a `RayTaskError`)."""
    import ray

    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, Exception):
            raise cause from None
        raise


def _service_call(ref: Any, what: str) -> Any:
    """`_call` to the pool's ledger or records actor: its death is a 503 that says so, not a
    `RayActorError` (a 500 with Ray's text)."""
    import ray

    try:
        return _call(ref)
    except ray.exceptions.RayActorError as exc:
        raise ServiceRestarting(f"The Ray pool's {what} actor died ({type(exc).__name__}); Ray restarts it from its "
                                "file: a refused request can be tried again, and an ended episode's record is "
                                "written when its session closes") from None  # fmt: skip


def _on(node: Any, cls: type) -> Any:
    """An actor class pinned to `node`, using no CPU (the pool's ledger and records: files there).
    Ray restarts it if its process dies: what it holds is in its file (the ledger's claims, DIR's
    records and lock, taken again by the new process), so the pool goes on."""
    import ray

    return ray.remote(cls).options(num_cpus=0, scheduling_strategy=node, max_restarts=-1)


class LedgerHost:
    """The pool's one ledger (an actor): which sealed instances any session has started, kept in
    the file `path` (env-serve's `FileLedger`) when the pool has a key."""

    def __init__(self, path: str | None = None, key_id: str | None = None) -> None:
        from discoverylab.server.ledger import FileLedger, LedgerError

        self.ledger = SealedLedger()
        self.error: Exception | None = None  # raised by `ready`: an actor's failed start says nothing itself
        if path is not None and key_id is not None:
            try:
                self.ledger = FileLedger(Path(path), key_id)
            except LedgerError as exc:
                self.error = exc

    def ready(self) -> int:
        """How many instances were played before (or the ledger's start-up error)."""
        if self.error is not None:
            raise self.error
        return len(self.ledger.started)

    def claim(self, task: str, difficulty: str, index: int) -> bool:
        return self.ledger.claim_name(task, difficulty, index)

    def close(self) -> None:
        close = getattr(self.ledger, "close", None)
        if close is not None:
            close()  # the flock goes: the claims are on disk


class RemoteLedger(SealedLedger):
    """A session actor's view of the pool's ledger actor."""

    def __init__(self, handle: Any) -> None:
        super().__init__()
        self.handle = handle

    def claim_name(self, task: str, difficulty: str, index: int) -> bool:
        return bool(_service_call(self.handle.claim.remote(task, difficulty, index), "ledger"))


class RecordsHost:
    """The pool's records actor: env-serve's `ServerRecords` on DIR (checked and locked here), the
    one writer of every session actor's records."""

    def __init__(self, out: str, key_id: str | None) -> None:
        from discoverylab.server.records import ServerRecords

        self.records: ServerRecords | None = None
        self.error: Exception | None = None
        try:
            self.records = ServerRecords(Path(out), key_id)
        except Exception as exc:  # noqa: BLE001 - RunDirError, RunLocked, RunConfigMismatch: `ready` raises it
            self.error = exc

    def ready(self) -> list[tuple[str, str, int]]:
        """The sealed instances DIR holds records of (or DIR's start-up error)."""
        if self.error is not None:
            raise self.error
        assert self.records is not None
        return sorted(self.records.sealed_played())

    def append_dw(self, name: str, log: list[dict[str, Any]], record: EpisodeRecord) -> None:
        assert self.records is not None
        self.records.append_dw(name, log, record)

    def append_lab(self, record: LabRecord) -> None:
        assert self.records is not None
        self.records.append_lab(record)

    def append_many(self, items: list[tuple[str, tuple[Any, ...]]]) -> None:
        """Several records made durable together, all or none (`ServerRecords.append_many`), so
        the sender keeps them all on an error."""
        assert self.records is not None
        self.records.append_many(items)

    def close(self) -> None:
        if self.records is not None:
            self.records.close()


class RemoteRecords(EpisodeRecords):
    """A session actor's records: built here, written by the records actor before it answers.

    A record the records actor cannot take waits here, in order (`backlog`), and goes with the
    next record, the actor's reaper tick or its stop: while the records actor restarts (its
    process died; the step is answered, its record follows), and when it refuses one (a full
    disk: `RecordKept`, the request gets 507). Never dropped: what is still waiting when the pool
    stops goes back to the driver (`SessionHost.stop`), which writes it into DIR itself."""

    def __init__(self, handle: Any, out: str, key_id: str | None) -> None:
        super().__init__(Path(out), records_config(key_id))
        self.handle = handle
        self.backlog: list[tuple[str, tuple[Any, ...]]] = []
        self.refused: Exception | None = None  # why the records actor last refused the first waiting record
        self._sending = threading.Lock()
        self._holding = 0  # the thread whose records wait to go together (`batched`), or 0

    @contextmanager
    def batched(self) -> Iterator[None]:
        """This thread's records meanwhile wait here and go together with the next flush (one call,
        made durable together: the pool's stop, `SessionHost.stop`), not one call each."""
        self._holding = threading.get_ident()
        try:
            yield
        finally:
            self._holding = 0

    def append_dw(self, name: str, log: list[dict[str, Any]], record: EpisodeRecord) -> None:
        self._send("append_dw", (name, log, record))

    def append_lab(self, record: LabRecord) -> None:
        self._send("append_lab", (record,))

    def _send(self, method: str, args: tuple[Any, ...]) -> None:
        with self._sending:
            self.backlog.append((method, args))
            if self._holding != threading.get_ident():
                self._flush()

    def flush(self, wait_s: float = 0.0) -> int:
        """Send the waiting records (for up to `wait_s` seconds while the actor restarts); how many
        still wait. A refusal raises `RecordKept` at once (the disk, not a restart)."""
        deadline = time.monotonic() + wait_s
        while True:
            with self._sending:
                left = self._flush()
            if not left or time.monotonic() >= deadline:
                return left
            time.sleep(0.2)

    def take_backlog(self) -> list[tuple[str, tuple[Any, ...]]]:
        """The records still waiting, handed over (the pool stops: its driver writes them)."""
        with self._sending:
            left, self.backlog = self.backlog, []
            return left

    def _flush(self) -> int:
        """Send the waiting records: one alone as it is, several in one call (`append_many`: all
        or none written), so a stop's hundreds cost two syncs of the disk, not two fsyncs each."""
        if not self.backlog:
            return 0
        items = list(self.backlog)
        call = (self.handle.append_many.remote(items) if len(items) > 1
                else getattr(self.handle, items[0][0]).remote(*items[0][1]))  # fmt: skip
        try:
            _service_call(call, "records")
        except ServiceRestarting:
            return len(self.backlog)  # kept, in order, for the next try
        except Exception as exc:  # noqa: BLE001 - refused (a full disk): kept too, said to the caller
            self.refused = exc
            raise RecordKept(exc, len(self.backlog)) from None
        del self.backlog[:len(items)]
        self.refused = None
        return 0


class SessionHost:
    """The actor's body: a `SessionPool` of at most `capacity` sessions."""

    def __init__(self, capacity: int, ttl_s: float = 600.0, key: bytes | None = None, ledger: Any = None,
                 records: tuple[Any, str, str | None] | None = None) -> None:  # fmt: skip
        from discoverylab.server.app import SessionPool

        self.records = RemoteRecords(*records) if records is not None else None
        self.pool = SessionPool(capacity, ttl_s, key, RemoteLedger(ledger) if ledger is not None else None,
                                records=self.records)  # fmt: skip
        # as env-serve's reaper: a session whose client went is closed (and recorded) after `ttl_s`,
        # not whenever a later request happens to land on this actor (perhaps never)
        self._stopped = threading.Event()
        threading.Thread(target=self._reap, name="session-reaper", daemon=True).start()

    def _reap(self) -> None:
        every = max(0.05, min(self.pool.ttl_s / 4, 30.0))
        swept = time.monotonic()
        while not self._stopped.wait(min(every, 1.0)):
            if self.records is not None and self.records.backlog:
                self._flush_quietly(0.0)  # records that waited for a restarting or refusing records actor
            if time.monotonic() - swept >= every:
                swept = time.monotonic()
                self.pool.sweep()

    def _flush_quietly(self, wait_s: float) -> None:
        assert self.records is not None
        said = self.records.refused is not None  # a refusal is logged once, not at every tick
        try:
            self.records.flush(wait_s)
        except RecordKept as exc:
            if not said:
                logger.error("The records actor refuses a record (%s): %d records wait in this session actor, in "
                             "order, and are tried again every second", exc.cause, exc.waiting)  # fmt: skip
        else:
            if said:
                logger.warning("The records actor takes records again: the waiting ones are written")

    def create(self) -> str:
        return self.pool.create()

    def reset(self, sid: str, request: dict[str, Any]) -> dict[str, Any]:
        req = ResetRequest(**request)
        return self.pool.run(sid, lambda s: s.reset(req)).model_dump()  # type: ignore[no-any-return]

    def step(self, sid: str, action: Any) -> dict[str, Any]:
        return self.pool.run(sid, lambda s: s.step(action)).model_dump()  # type: ignore[no-any-return]

    def answer_sheet(self, sid: str) -> dict[str, Any] | None:
        return self.pool.run(sid, lambda s: s.answer_sheet())  # type: ignore[no-any-return]

    def hand_in(self, sid: str, answers: Any, knowledge: str | None = None) -> dict[str, Any]:
        return self.pool.run(sid, lambda s: s.hand_in(answers, knowledge))  # type: ignore[no-any-return]

    def state(self, sid: str) -> dict[str, Any]:
        return self.pool.run(sid, lambda s: s.state())  # type: ignore[no-any-return]

    def close(self, sid: str) -> bool:
        return self.pool.close(sid)

    def stop(self, wait_s: float = 0.0) -> list[tuple[str, tuple[Any, ...]]]:
        """The pool stops: ended episodes still waiting for a sheet are recorded, as env-serve's stop
        does. Records the records actor does not take within `wait_s` (restarting, or refusing
        them) are handed back, in order, for the driver to write."""
        self._stopped.set()
        self.pool.close_all()
        if self.records is None:
            return []
        if self.records.backlog:
            self._flush_quietly(wait_s)
        return self.records.take_backlog()

    def held(self) -> list[str]:
        """The sessions this actor still holds (idle ones past the TTL closed first)."""
        self.pool.sweep()
        return list(self.pool.slots)
