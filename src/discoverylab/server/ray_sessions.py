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

import threading
from pathlib import Path
from typing import Any

from discoverylab.bench.episode import EpisodeRecord
from discoverylab.labs.run_record import LabRecord
from discoverylab.server.records import EpisodeRecords, records_config
from discoverylab.server.session import ResetRequest, SealedLedger, StepResult


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


def _on(node: Any, cls: type) -> Any:
    """An actor class pinned to `node`, using no CPU (the pool's ledger and records: files there)."""
    import ray

    return ray.remote(cls).options(num_cpus=0, scheduling_strategy=node)


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
        return bool(_call(self.handle.claim.remote(task, difficulty, index)))


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
    """A session actor's records: built here, written by the records actor before it answers."""

    def __init__(self, handle: Any, out: str, key_id: str | None) -> None:
        super().__init__(Path(out), records_config(key_id))
        self.handle = handle

    def append_dw(self, name: str, log: list[dict[str, Any]], record: EpisodeRecord) -> None:
        _call(self.handle.append_dw.remote(name, log, record))

    def append_lab(self, record: LabRecord) -> None:
        _call(self.handle.append_lab.remote(record))


class SessionHost:
    """The actor's body: a `SessionPool` of at most `capacity` sessions."""

    def __init__(self, capacity: int, ttl_s: float = 600.0, key: bytes | None = None, ledger: Any = None,
                 records: tuple[Any, str, str | None] | None = None) -> None:  # fmt: skip
        from discoverylab.server.app import SessionPool

        self.pool = SessionPool(capacity, ttl_s, key, RemoteLedger(ledger) if ledger is not None else None,
                                records=RemoteRecords(*records) if records is not None else None)  # fmt: skip
        # as env-serve's reaper: a session whose client went is closed (and recorded) after `ttl_s`,
        # not whenever a later request happens to land on this actor (perhaps never)
        self._stopped = threading.Event()
        threading.Thread(target=self._reap, name="session-reaper", daemon=True).start()

    def _reap(self) -> None:
        while not self._stopped.wait(max(0.05, min(self.pool.ttl_s / 4, 30.0))):
            self.pool.sweep()

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

    def load(self) -> int:
        self.pool.sweep()
        return len(self.pool.slots)


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
        room = [i for i, count in enumerate(self.counts) if count < self.per_actor]
        if room:
            i = room[0]
        else:
            self.actors.append(self.actor_cls.remote(self.per_actor, self.ttl_s, self.key, self.ledger, self._records_args))
            self.counts.append(0)
            i = len(self.actors) - 1
        sid = str(_call(self.actors[i].create.remote()))
        self.counts[i] += 1
        self.where[sid] = i
        return sid

    def _host(self, sid: str) -> Any:
        return self.actors[self.where[sid]]

    def reset(self, sid: str, **request: Any) -> StepResult:
        return StepResult(**_call(self._host(sid).reset.remote(sid, request)))

    def step(self, sid: str, action: Any) -> StepResult:
        return StepResult(**_call(self._host(sid).step.remote(sid, action)))

    def step_many(self, actions: dict[str, Any]) -> dict[str, StepResult]:
        """One step in each of several sessions at once (the actors work in parallel)."""
        refs = {sid: self._host(sid).step.remote(sid, a) for sid, a in actions.items()}
        return {sid: StepResult(**_call(ref)) for sid, ref in refs.items()}

    def answer_sheet(self, sid: str) -> dict[str, Any] | None:
        sheet = _call(self._host(sid).answer_sheet.remote(sid))
        return dict(sheet) if sheet is not None else None

    def hand_in(self, sid: str, answers: dict[str, Any], knowledge: str | None = None) -> dict[str, Any]:
        """As env-serve's: the grade, or for a sealed instance a receipt (the grade is `out`'s)."""
        return dict(_call(self._host(sid).hand_in.remote(sid, answers, knowledge)))

    def state(self, sid: str) -> dict[str, Any]:
        return dict(_call(self._host(sid).state.remote(sid)))

    def close(self, sid: str) -> None:
        i = self.where.pop(sid)
        _call(self.actors[i].close.remote(sid))
        self.counts[i] -= 1

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
