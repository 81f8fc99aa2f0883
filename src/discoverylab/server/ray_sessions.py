"""Scale the env server out on Ray: one actor per N sessions (needs the `ray` extra).

    import ray
    from discoverylab.server.ray_sessions import RaySessions

    ray.init()                                  # or ray.init(address="ray://head:10001")
    pool = RaySessions(sessions_per_actor=16)
    sid = pool.create()                         # placed on an actor with room, or a new actor
    first = pool.reset(sid, task="PickAndPlaceTest", seed=0)
    result = pool.step(sid, {"action": "MOVE_DIRECTION", "arg1": "north"})
    pool.close(sid)

Each actor is a process holding the same `SessionPool` (sessions, TTL, caps) as `env-serve`, so a
cluster plays as many episodes at once as it has cores; results are the same `StepResult`s. One
ledger actor serves the whole pool, so a sealed test instance plays once per pool, whichever actor
a session lands on (a replay on another actor would copy the gold the first episode revealed).
"""

from __future__ import annotations

from typing import Any

from discoverylab.server.session import ResetRequest, SealedLedger, StepResult


class LedgerHost:
    """The pool's one ledger (an actor): which sealed instances any session has started."""

    def __init__(self) -> None:
        self.ledger = SealedLedger()

    def claim(self, task: str, difficulty: str, index: int) -> bool:
        return self.ledger.claim_name(task, difficulty, index)


class RemoteLedger(SealedLedger):
    """A session actor's view of the pool's ledger actor."""

    def __init__(self, handle: Any) -> None:
        super().__init__()
        self.handle = handle

    def claim_name(self, task: str, difficulty: str, index: int) -> bool:
        import ray

        return bool(ray.get(self.handle.claim.remote(task, difficulty, index)))


class SessionHost:
    """The actor's body: a `SessionPool` of at most `capacity` sessions."""

    def __init__(self, capacity: int, ttl_s: float = 600.0, key: bytes | None = None, ledger: Any = None) -> None:
        from discoverylab.server.app import SessionPool

        self.pool = SessionPool(capacity, ttl_s, key, RemoteLedger(ledger) if ledger is not None else None)

    def create(self) -> str:
        return self.pool.create()

    def reset(self, sid: str, request: dict[str, Any]) -> dict[str, Any]:
        req = ResetRequest(**request)
        return self.pool.run(sid, lambda s: s.reset(req)).model_dump()  # type: ignore[no-any-return]

    def step(self, sid: str, action: Any) -> dict[str, Any]:
        return self.pool.run(sid, lambda s: s.step(action)).model_dump()  # type: ignore[no-any-return]

    def state(self, sid: str) -> dict[str, Any]:
        return self.pool.run(sid, lambda s: s.state())  # type: ignore[no-any-return]

    def answer_sheet(self, sid: str) -> dict[str, Any] | None:
        return self.pool.run(sid, lambda s: s.answer_sheet())  # type: ignore[no-any-return]

    def hand_in(self, sid: str, answers: dict[str, Any], knowledge: str | None = None) -> dict[str, Any]:
        return self.pool.run(sid, lambda s: s.hand_in(answers, knowledge))  # type: ignore[no-any-return]

    def close(self, sid: str) -> bool:
        return self.pool.close(sid)

    def load(self) -> int:
        self.pool.sweep()
        return len(self.pool.slots)


class RaySessions:
    """Sessions spread over Ray actors, `sessions_per_actor` each (a new actor when all are full)."""

    def __init__(self, sessions_per_actor: int = 16, ttl_s: float = 600.0, key: bytes | None = None,
                 num_cpus: float = 1.0) -> None:  # fmt: skip
        import ray

        self.ray = ray
        self.per_actor, self.ttl_s, self.key = sessions_per_actor, ttl_s, key
        self.actor_cls = ray.remote(num_cpus=num_cpus)(SessionHost)
        self.ledger = ray.remote(num_cpus=0)(LedgerHost).remote()
        self.actors: list[Any] = []
        self.counts: list[int] = []
        self.where: dict[str, int] = {}

    def create(self) -> str:
        room = [i for i, count in enumerate(self.counts) if count < self.per_actor]
        if room:
            i = room[0]
        else:
            self.actors.append(self.actor_cls.remote(self.per_actor, self.ttl_s, self.key, self.ledger))
            self.counts.append(0)
            i = len(self.actors) - 1
        sid = str(self.ray.get(self.actors[i].create.remote()))
        self.counts[i] += 1
        self.where[sid] = i
        return sid

    def reset(self, sid: str, **request: Any) -> StepResult:
        return StepResult(**self.ray.get(self.actors[self.where[sid]].reset.remote(sid, request)))

    def step(self, sid: str, action: Any) -> StepResult:
        return StepResult(**self.ray.get(self.actors[self.where[sid]].step.remote(sid, action)))

    def step_many(self, actions: dict[str, Any]) -> dict[str, StepResult]:
        """One step in each of several sessions at once (the actors work in parallel)."""
        refs = {sid: self.actors[self.where[sid]].step.remote(sid, a) for sid, a in actions.items()}
        return {sid: StepResult(**self.ray.get(ref)) for sid, ref in refs.items()}

    def state(self, sid: str) -> dict[str, Any]:
        return dict(self.ray.get(self.actors[self.where[sid]].state.remote(sid)))

    def answer_sheet(self, sid: str) -> dict[str, Any] | None:
        """The task's answer sheet (its form), or None (no sheet: unit tests, Tiny Labs)."""
        return self.ray.get(self.actors[self.where[sid]].answer_sheet.remote(sid))  # type: ignore[no-any-return]

    def hand_in(self, sid: str, answers: dict[str, Any], knowledge: str | None = None) -> dict[str, Any]:
        """Hand in the filled sheet once the episode ended (once; `SessionError` otherwise): its grade."""
        return dict(self.ray.get(self.actors[self.where[sid]].hand_in.remote(sid, answers, knowledge)))

    def close(self, sid: str) -> None:
        i = self.where.pop(sid)
        self.ray.get(self.actors[i].close.remote(sid))
        self.counts[i] -= 1

    def shutdown(self) -> None:
        for actor in [*self.actors, self.ledger]:
            self.ray.kill(actor)
        self.actors, self.counts, self.where = [], [], {}
