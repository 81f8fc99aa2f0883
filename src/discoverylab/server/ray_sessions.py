"""Scale the env server out on Ray: one actor per N sessions (needs the `ray` extra).

    import ray
    from discoverylab.server.ray_sessions import RaySessions

    ray.init()                                  # or ray.init(address="ray://head:10001")
    pool = RaySessions(sessions_per_actor=16)   # with a key: ledger=FILE (or the default), out=DIR
    sid = pool.create()                         # placed on an actor with room, or a new actor
    first = pool.reset(sid, task="PickAndPlaceTest", seed=0)
    result = pool.step(sid, {"action": "MOVE_DIRECTION", "arg1": "north"})
    pool.close(sid)

Each actor is a process holding the same `SessionPool` (sessions, TTL, caps) as `env-serve`, so a
cluster plays as many episodes at once as it has cores; results are the same `StepResult`s. One
ledger actor serves the whole pool, so a sealed test instance plays once per pool, whichever actor
a session lands on (a replay on another actor would copy the gold the first episode revealed);
with a key it keeps env-serve's ledger file (`ledger.FileLedger`), so a new pool replays none.

`out=DIR` gives the pool env-serve's `--out` records. A session actor builds each record (it holds
the episode) and hands it to the pool's one records actor, which holds DIR (its lock, run.json) and
appends and fsyncs it before the step or hand-in is answered. So an ended episode is on disk before
its client hears of the end, and a session actor that crashes loses only the episodes still in
play, as a killed env-serve does. Records sent back to the driver instead would lose those the
actor makes on its own (a session expired or replaced: `abandoned`, `not handed in`), and actors
writing DIR themselves would need its one lock and the evaluator's disk on every node. The ledger
and records actors run on the driver's node: FILE and DIR are paths there.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

from discoverylab.bench.episode import EpisodeRecord
from discoverylab.labs.run_record import LabRecord
from discoverylab.server.records import EpisodeRecords, records_config
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

    def close(self) -> None:
        if self.records is not None:
            self.records.close()


class RemoteRecords(EpisodeRecords):
    """A session actor's records: built here, written by the records actor before it answers.

    While the records actor restarts (its process died), records wait here in order (`backlog`)
    and go as soon as it is back: with the next record, the actor's reaper tick or its stop.
    Written then, not lost with the session that made them."""

    def __init__(self, handle: Any, out: str, key_id: str | None) -> None:
        super().__init__(Path(out), records_config(key_id))
        self.handle = handle
        self.backlog: list[tuple[str, tuple[Any, ...]]] = []
        self._sending = threading.Lock()

    def append_dw(self, name: str, log: list[dict[str, Any]], record: EpisodeRecord) -> None:
        self._send("append_dw", (name, log, record))

    def append_lab(self, record: LabRecord) -> None:
        self._send("append_lab", (record,))

    def _send(self, method: str, args: tuple[Any, ...]) -> None:
        with self._sending:
            self.backlog.append((method, args))
            self._flush()

    def flush(self, wait_s: float = 0.0) -> int:
        """Send the waiting records (for up to `wait_s` seconds while the actor restarts); how many still wait."""
        deadline = time.monotonic() + wait_s
        while True:
            with self._sending:
                left = self._flush()
            if not left or time.monotonic() >= deadline:
                return left
            time.sleep(0.2)

    def _flush(self) -> int:
        while self.backlog:
            method, args = self.backlog[0]
            try:
                _service_call(getattr(self.handle, method).remote(*args), "records")
            except ServiceRestarting:
                return len(self.backlog)  # kept, in order, for the next try
            except BaseException:
                self.backlog.pop(0)  # the records actor refused it (e.g. a full disk): the caller's error says so
                raise
            self.backlog.pop(0)
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
                self._flush_quietly(0.0)  # records that waited for a restarting records actor
            if time.monotonic() - swept >= every:
                swept = time.monotonic()
                self.pool.sweep()

    def _flush_quietly(self, wait_s: float) -> None:
        assert self.records is not None
        try:
            left = self.records.flush(wait_s)
        except Exception:  # noqa: BLE001 - the reaper goes on; the records actor logged why it refused
            logger.exception("a waiting record could not be written")
            return
        if left and wait_s:
            logger.error("%d records still wait for the restarting records actor", left)

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

    def stop(self) -> None:
        """The pool stops: ended episodes still waiting for a sheet are recorded, as env-serve's stop does."""
        self._stopped.set()
        self.pool.close_all()
        if self.records is not None and self.records.backlog:
            self._flush_quietly(60.0)  # the records actor restarting: wait for it rather than drop them

    def held(self) -> list[str]:
        """The sessions this actor still holds (idle ones past the TTL closed first)."""
        self.pool.sweep()
        return list(self.pool.slots)


class RaySessions:
    """Sessions spread over Ray actors, `sessions_per_actor` each (a new actor when all are full).

    `key`: the evaluator's key (else $DISCOVERYLAB_EVAL_KEY); with one, the played sealed instances
    are kept in `ledger` (default: env-serve's, `ledger.default_ledger_path`). `out`: env-serve's
    `--out` records. A bad FILE or DIR raises here (`LedgerError`, `RunDirError`, `RunLocked`,
    `RunConfigMismatch`), before any session starts."""

    def __init__(self, sessions_per_actor: int = 16, ttl_s: float = 600.0, key: bytes | None = None,
                 num_cpus: float = 1.0, *, out: Path | None = None, ledger: Path | None = None) -> None:  # fmt: skip
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from discoverylab.instances import key_id, load_key
        from discoverylab.server.ledger import ledger_path

        held = key if key is not None else load_key()
        kid = key_id(held) if held is not None else None
        self.ledger_path = ledger_path(kid, ledger, "ledger", "key=")
        self.ray = ray
        self.per_actor, self.ttl_s, self.key = sessions_per_actor, ttl_s, held
        self.actor_cls = ray.remote(num_cpus=num_cpus)(SessionHost)
        self.actors: list[Any] = []
        self.counts: list[int] = []
        self.where: dict[str, int] = {}
        self.dead: set[int] = set()  # actors whose process died (`_lost`): nothing is placed there again
        self.lost: set[str] = set()  # sessions that were on them (`SessionLost`, not "no session")
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        self.out = Path(out) if out is not None else None
        self.records: Any = None
        self.ledger = _on(here, LedgerHost).remote(str(self.ledger_path) if self.ledger_path is not None else None, kid)
        try:
            self.played = int(_call(self.ledger.ready.remote()))
            if self.out is not None:
                self.records = _on(here, RecordsHost).remote(str(self.out), kid)
                for name in _call(self.records.ready.remote()):  # played on an earlier pool or server with DIR
                    _call(self.ledger.claim.remote(*name))
        except BaseException:
            self.shutdown()
            raise
        self._records_args = (self.records, str(self.out), kid) if self.records is not None else None

    def create(self) -> str:
        for _ in range(3):  # an actor that dies as the session is made: another one (a new one if none has room)
            room = self._room()
            if room is None:
                self._recount()  # sessions the actors closed on their own (expired) free their places
                room = self._room()
            if room is None:
                self.actors.append(self.actor_cls.remote(self.per_actor, self.ttl_s, self.key, self.ledger, self._records_args))
                self.counts.append(0)
                room = len(self.actors) - 1
            try:
                sid = str(_call(self.actors[room].create.remote()))
            except self.ray.exceptions.RayActorError:
                self._lost(room)
                continue
            self.counts[room] += 1
            self.where[sid] = room
            return sid
        raise ServiceRestarting("Three Ray actors died in a row as a session was made on them; see the Ray logs "
                                "(memory, the cluster's nodes) before trying again.")  # fmt: skip

    def _room(self) -> int | None:
        """The first live actor with a free place, by the driver's count."""
        return next((i for i, n in enumerate(self.counts) if n < self.per_actor and i not in self.dead), None)

    def _recount(self) -> None:
        """Ask each live actor which sessions it still holds: an actor closes idle sessions after
        the TTL on its own, and the driver would otherwise count them (and start new actors) forever."""
        live = [i for i in range(len(self.actors)) if i not in self.dead]
        refs = {i: self.actors[i].held.remote() for i in live}
        for i, ref in refs.items():
            try:
                held = set(_call(ref))
            except self.ray.exceptions.RayActorError:
                self._lost(i)
                continue
            self.counts[i] = len(held)
            for sid in [sid for sid, at in self.where.items() if at == i and sid not in held]:
                del self.where[sid]

    def _lost(self, i: int) -> None:
        """Actor `i` died: no session is placed on it again, and its sessions are gone."""
        self.dead.add(i)
        self.counts[i] = 0
        for sid in [sid for sid, at in self.where.items() if at == i]:
            del self.where[sid]
            self.lost.add(sid)

    def _index(self, sid: str) -> int:
        from discoverylab.server.app import NoSession

        i = self.where.get(sid)
        if i is not None:
            return i
        if sid in self.lost:
            raise SessionLost(_lost_text(sid))
        raise NoSession(f"No session {str(sid)[:40]!r}: it was closed, expired after {self.ttl_s:g} s idle, or never created here.")

    def _ask(self, sid: str, method: str, *args: Any) -> Any:
        """One call to the actor holding `sid`; the actor's death is `SessionLost`, not Ray's error."""
        i = self._index(sid)
        return self._answer(sid, i, getattr(self.actors[i], method).remote(sid, *args))

    def _answer(self, sid: str, i: int, ref: Any) -> Any:
        try:
            return _call(ref)
        except self.ray.exceptions.RayActorError:
            self._lost(i)
            raise SessionLost(_lost_text(sid)) from None

    def reset(self, sid: str, **request: Any) -> StepResult:
        return StepResult(**self._ask(sid, "reset", request))

    def step(self, sid: str, action: Any) -> StepResult:
        return StepResult(**self._ask(sid, "step", action))

    def step_many(self, actions: dict[str, Any]) -> dict[str, StepResult]:
        """One step in each of several sessions at once (the actors work in parallel). If any
        session's step fails, `StepManyError` carries the others' results (those steps happened)
        and each failure; otherwise every session's result."""
        refs: dict[str, tuple[int, Any]] = {}
        errors: dict[str, SessionError] = {}
        for sid, action in actions.items():
            try:
                i = self._index(sid)
            except SessionError as exc:
                errors[sid] = exc
                continue
            refs[sid] = (i, self.actors[i].step.remote(sid, action))
        results: dict[str, StepResult] = {}
        for sid, (i, ref) in refs.items():
            try:
                results[sid] = StepResult(**self._answer(sid, i, ref))
            except SessionError as exc:
                errors[sid] = exc
        if errors:
            raise StepManyError(results, errors)
        return results

    def answer_sheet(self, sid: str) -> dict[str, Any] | None:
        sheet = self._ask(sid, "answer_sheet")
        return dict(sheet) if sheet is not None else None

    def hand_in(self, sid: str, answers: dict[str, Any], knowledge: str | None = None) -> dict[str, Any]:
        """As env-serve's: the grade, or for a sealed instance a receipt (the grade is `out`'s)."""
        return dict(self._ask(sid, "hand_in", answers, knowledge))

    def state(self, sid: str) -> dict[str, Any]:
        return dict(self._ask(sid, "state"))

    def close(self, sid: str) -> None:
        """Close a session (recorded as env-serve's DELETE records it). Closing one that is already
        gone (expired, its actor dead, closed before) does nothing."""
        i = self.where.pop(sid, None)
        self.lost.discard(sid)
        if i is None:
            return
        self.counts[i] -= 1
        try:
            _call(self.actors[i].close.remote(sid))
        except self.ray.exceptions.RayActorError:
            self._lost(i)

    def shutdown(self) -> None:
        """Stop: every actor records its ended episodes (sheets that never came), then DIR and
        the ledger file are let go and the actors killed."""
        for host, method in [*((a, "stop") for a in self.actors), (self.records, "close"), (self.ledger, "close")]:
            if host is not None:
                try:
                    _call(getattr(host, method).remote())
                except Exception:  # noqa: BLE001, S110 - a dead actor has nothing left to write or hold
                    pass
        for actor in [*self.actors, self.records, self.ledger]:
            if actor is not None:
                self.ray.kill(actor)
        self.actors, self.counts, self.where = [], [], {}
        self.dead.clear()
        self.lost.clear()
