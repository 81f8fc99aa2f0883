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
import time
from collections import Counter
from pathlib import Path
from typing import Any

from discoverylab.server.ray_hosts import (
    LedgerHost,
    RecordsHost,
    RecordsNotWritten,
    ServiceRestarting,
    SessionHost,
    SessionLost,
    StepManyError,
    _call,
    _lost_text,
    _on,
)
from discoverylab.server.session import SessionError, StepResult

__all__ = ["RaySessions", "RecordsNotWritten", "ServiceRestarting", "SessionLost", "StepManyError"]

logger = logging.getLogger(__name__)
STOP_WAIT_S = 10.0  # how long a stopping pool waits for a restarting records actor to take the waiting records
STOP_MARGIN_S = 10.0  # beyond that, for a session actor's own stop (closing its sessions) and DIR's lock


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
        self.where: dict[str, int] = {}  # each session's actor (its index in `actors`): `counts` follows
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
        self.key_id = kid

    def create(self) -> str:
        for _ in range(3):  # an actor that dies as the session is made: another one (a new one if none has room)
            room = self._room()
            if room is None:
                self._recount()  # sessions the actors closed on their own (expired) free their places
                room = self._room()
            if room is None:
                self.actors.append(self.actor_cls.remote(self.per_actor, self.ttl_s, self.key, self.ledger, self._records_args))
                room = len(self.actors) - 1
            try:
                sid = str(_call(self.actors[room].create.remote()))
            except self.ray.exceptions.RayActorError:
                self._lost(room)
                continue
            self.where[sid] = room
            return sid
        raise ServiceRestarting("Three Ray actors died in a row as a session was made on them; see the Ray logs "
                                "(memory, the cluster's nodes) before trying again.")  # fmt: skip

    @property
    def counts(self) -> list[int]:
        """Sessions per actor, as the driver knows them (`where`)."""
        occupied = Counter(self.where.values())
        return [occupied[i] for i in range(len(self.actors))]

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
            for sid in [sid for sid, at in self.where.items() if at == i and sid not in held]:
                del self.where[sid]

    def _lost(self, i: int) -> None:
        """Actor `i` died: no session is placed on it again, and its sessions are gone."""
        self.dead.add(i)
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
        try:
            _call(self.actors[i].close.remote(sid))
        except self.ray.exceptions.RayActorError:
            self._lost(i)

    def shutdown(self, wait_s: float = STOP_WAIT_S) -> None:
        """Stop: every actor records its ended episodes (sheets that never came), then DIR and
        the ledger file are let go and the actors killed. Records the records actor does not take
        within `wait_s` (it restarts, or the disk refuses them) come back from the session actors
        and are written into DIR here, in order; if even that fails, `RecordsNotWritten` carries
        them. A session actor that does not stop in time (a step still running) is said and killed."""
        deadline = time.monotonic() + wait_s
        stops = {i: actor.stop.remote(wait_s) for i, actor in enumerate(self.actors) if i not in self.dead}
        left: list[tuple[str, tuple[Any, ...]]] = []
        for i, ref in stops.items():
            try:
                left += self.ray.get(ref, timeout=max(0.0, deadline - time.monotonic()) + STOP_MARGIN_S)
            except self.ray.exceptions.GetTimeoutError:
                logger.error("Ray session actor %d did not stop within %g s (a step still running?): it is killed, "
                             "and an episode that ended in it since is not recorded", i, wait_s + STOP_MARGIN_S)  # fmt: skip
            except self.ray.exceptions.RayActorError:
                continue  # a dead actor has nothing left to write
            except Exception:  # noqa: BLE001 - the other actors still stop
                logger.exception("Ray session actor %d failed as it stopped", i)
        for host in (self.records, self.ledger):
            if host is not None:
                try:
                    self.ray.get(host.close.remote(), timeout=STOP_MARGIN_S)
                except Exception:  # noqa: BLE001, S110 - a dead or restarting actor holds nothing more
                    pass
        for actor in [*self.actors, self.records, self.ledger]:
            if actor is not None:
                self.ray.kill(actor)
        self.actors, self.where = [], {}
        self.dead.clear()
        self.lost.clear()
        if left:
            self._write_left(left)

    def _write_left(self, left: list[tuple[str, tuple[Any, ...]]]) -> None:
        """Records no actor could write, written into DIR by the driver (the records actor is gone,
        so DIR's lock is free again); `RecordsNotWritten` with the records if that fails too."""
        from discoverylab.bench.rundir import RunLocked
        from discoverylab.server.records import ServerRecords

        assert self.out is not None
        logger.warning("%d records waited for the Ray pool's records actor at its stop; the driver writes them "
                       "into %s", len(left), self.out)  # fmt: skip
        deadline = time.monotonic() + STOP_MARGIN_S
        try:
            while True:
                try:
                    records = ServerRecords(self.out, self.key_id)  # the killed records actor's lock goes with it
                    break
                except RunLocked:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            try:
                records.append_many(left)  # all or none, made durable together
            finally:
                records.close()
        except Exception as exc:  # noqa: BLE001 - said, with the records, in the error
            raise RecordsNotWritten(left, self.out, exc) from None
