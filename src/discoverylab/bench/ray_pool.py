"""The Ray backend's pool (`bench --backend ray`): one job per Ray actor at a time, on a cluster
at an address or on a local cluster that dies with the runner (`ray_cluster`). The executor sees
it as any `pool.Pool`."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from discoverylab.bench.pool import KEEP, PLAYED_ASK_S, Finished
from discoverylab.instances import KEY_ENV


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
        KEEP[:] = [self._keep]
        try:
            return self._run_one(job)
        finally:
            KEEP.clear()

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
