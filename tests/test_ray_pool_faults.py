"""The Ray pool survives its actors' deaths and its sessions' expiry, and says what happened.

Before: a session actor that died left the driver placing new sessions on it (every `create`
failed with Ray's `ActorDiedError` while that actor had room by the driver's count); its sessions
raised Ray's error rather than saying the episode was lost; an unknown session id was a bare
`KeyError`; sessions that expired on their actor kept counting, so each `create` started another
actor; the records actor, once dead, never came back (every later ended episode lost its record);
and one failed session in `step_many` threw away the others' results, whose steps had happened.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="the ray scale-out is optional: pip install 'discoverylab[ray]'")
pytestmark = pytest.mark.xdist_group("ray")  # one local Ray at a time (see test_env_server_ray.py)

KEY = b"f" * 32
WAIT = {"action": "WAIT"}


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _pool(per_actor: int, **options: Any) -> Any:
    from discoverylab.server.ray_sessions import RaySessions

    return RaySessions(sessions_per_actor=per_actor, num_cpus=0.25, **options)


def _dies(actor: Any) -> None:
    """Kill the actor's process and wait until Ray knows (a call to it then fails)."""
    ray.kill(actor)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            ray.get(actor.__ray_ready__.remote(), timeout=5)
        except ray.exceptions.RayActorError:
            return
        time.sleep(0.1)
    raise AssertionError("the killed actor still answers")


def test_a_dead_session_actor_loses_its_sessions_by_name_and_is_never_used_again(local_ray: None) -> None:
    from discoverylab.server.app import NoSession
    from discoverylab.server.ray_sessions import SessionLost

    pool = _pool(3)
    try:
        first = pool.create()
        pool.reset(first, task="PickAndPlaceTest", seed=0)
        _dies(pool.actors[pool.where[first]])
        with pytest.raises(SessionLost, match="held by a Ray actor that died") as lost:
            pool.step(first, WAIT)
        assert lost.value.status == 410
        with pytest.raises(SessionLost):  # and again: still the truth, not "no session"
            pool.state(first)
        pool.close(first)  # closing a lost session is no error
        # the dead actor had room for two more: a new session goes to a live actor
        second = pool.create()
        assert pool.where[second] != 0 and pool.reset(second, task="PickAndPlaceTest", seed=1).step == 0
        assert pool.step(second, WAIT).step == 1
        with pytest.raises(NoSession, match="No session 'never-made'"):
            pool.step("never-made", WAIT)
    finally:
        pool.shutdown()


def test_expired_sessions_free_their_places_on_the_driver(local_ray: None) -> None:
    pool = _pool(1, ttl_s=0.3)
    try:
        pool.reset(pool.create(), task="PickAndPlaceTest", seed=0)
        time.sleep(1.0)  # the actor's reaper closes the idle session
        for n in range(3):
            pool.reset(pool.create(), task="PickAndPlaceTest", seed=n)
            time.sleep(1.0)
        assert len(pool.actors) == 1  # one place, freed each time: no actor per session ever made
    finally:
        pool.shutdown()


def test_step_many_keeps_the_steps_that_happened_when_one_session_fails(local_ray: None) -> None:
    from discoverylab.server.ray_sessions import SessionLost, StepManyError

    pool = _pool(1)
    try:
        sids = [pool.create() for _ in range(3)]
        for n, sid in enumerate(sids):
            pool.reset(sid, task="PickAndPlaceTest", seed=n)
        _dies(pool.actors[pool.where[sids[1]]])
        with pytest.raises(StepManyError) as failed:
            pool.step_many({sid: WAIT for sid in [*sids, "never-made"]})
        assert sorted(failed.value.results) == sorted([sids[0], sids[2]])
        assert all(result.step == 1 for result in failed.value.results.values())
        assert isinstance(failed.value.errors[sids[1]], SessionLost) and set(failed.value.errors) == {sids[1], "never-made"}
        assert pool.step(sids[0], WAIT).step == 2  # the step that the error carried happened once
    finally:
        pool.shutdown()


def test_a_dead_records_actor_comes_back_and_no_ended_episode_loses_its_record(local_ray: None, tmp_path: Path) -> None:
    """The records actor's process dies: Ray restarts it (its DIR and lock are taken again); the
    records made meanwhile wait in their session actor, in order, and are written once it is back,
    even for a session closed at once. Before, it never came back and every later record was lost."""
    out = tmp_path / "served"
    pool = _pool(2, key=KEY, ledger=tmp_path / "played.jsonl", out=out)
    try:
        sid = pool.create()
        pool.reset(sid, task="PickAndPlaceTest", split="test", index=1, max_steps=2)
        ray.kill(pool.records, no_restart=False)  # its process dies; Ray starts it again
        while not pool.step(sid, WAIT).done:  # the end is answered; its record waits if need be
            pass
        pool.close(sid)
        other = pool.create()
        pool.reset(other, task="PickAndPlaceTest", split="test", index=2, max_steps=1)
        assert pool.step(other, WAIT).done
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(_indices(out)) < 2:
            time.sleep(0.2)
        assert sorted(_indices(out)) == [1, 2]  # both on disk while the pool still runs
    finally:
        pool.shutdown()
    assert sorted(_indices(out)) == [1, 2]  # and once each


def _indices(out: Path) -> list[int]:
    results = out / "results.jsonl"
    return [json.loads(line)["index"] for line in results.read_text().splitlines()] if results.is_file() else []


def _break_disk(out: Path) -> None:
    """DIR's logs folder becomes a file: every DiscoveryWorld record is refused with an OSError."""
    import shutil

    shutil.rmtree(out / "logs", ignore_errors=True)
    (out / "logs").write_text("not a folder")


def _mend_disk(out: Path) -> None:
    (out / "logs").unlink()
    (out / "logs").mkdir()


def _end(pool: Any, sid: str) -> None:
    """Play the session to its end; a 507 (the records actor refused its record) is a truthful answer."""
    from discoverylab.server.records import RecordWriteError

    try:
        while not pool.step(sid, WAIT).done:
            pass
    except RecordWriteError as exc:
        assert exc.status == 507 and "could not be written" in str(exc), exc


def test_a_record_refused_while_older_ones_wait_is_kept_and_none_is_lost(local_ray: None, tmp_path: Path) -> None:
    """Double fault: the records actor restarts (records wait in the session actor), then refuses
    them (the disk). Before, each refused record was dropped from the wait list (its session had
    been answered already, so nothing wrote it again): both episodes lost their records. Now they
    stay, in order, and are written once the disk takes them, while the pool runs."""
    out = tmp_path / "served"
    pool = _pool(2, out=out)
    try:
        first, second = pool.create(), pool.create()
        pool.reset(first, task="PickAndPlaceTest", seed=1, max_steps=2)
        pool.reset(second, task="PickAndPlaceTest", seed=2, max_steps=1)
        _break_disk(out)
        ray.kill(pool.records, no_restart=False)  # its process dies; Ray starts it again
        _end(pool, first)  # its record waits for the restarting records actor
        _end(pool, second)
        time.sleep(3)  # the records actor is back and refuses them at each reaper tick
        assert _seeds(out) == []
        _mend_disk(out)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(_seeds(out)) < 2:
            time.sleep(0.2)
        assert _seeds(out) == [1, 2]  # in order, while the pool still runs
    finally:
        pool.shutdown(wait_s=1.0)
    assert _seeds(out) == [1, 2]  # and once each


def test_a_stop_with_the_records_actor_gone_is_bounded_and_the_driver_writes_its_records(
    local_ray: None, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, the stop waited 60 s per session actor for a records actor that might never come
    back, then left the waiting records unwritten. Now it waits `wait_s`, and the driver writes them."""
    out = tmp_path / "served"
    pool = _pool(2, out=out)
    sid = pool.create()
    pool.reset(sid, task="PickAndPlaceTest", seed=3, max_steps=1)
    _dies(pool.records)  # gone for good: its restarts spent, or its node lost
    _end(pool, sid)  # answered; the record waits in the session actor
    started = time.monotonic()
    with caplog.at_level("WARNING", logger="discoverylab.server.ray_sessions"):
        pool.shutdown(wait_s=1.0)
    assert time.monotonic() - started < 15
    assert _seeds(out) == [3]
    assert "1 records waited for the Ray pool's records actor" in caplog.text


def test_records_no_one_can_write_at_the_stop_come_back_in_a_truthful_error(local_ray: None, tmp_path: Path) -> None:
    from discoverylab.bench.episode import EpisodeRecord
    from discoverylab.server.ray_sessions import RecordsNotWritten

    out = tmp_path / "served"
    pool = _pool(2, out=out)
    sid = pool.create()
    pool.reset(sid, task="PickAndPlaceTest", seed=4, max_steps=1)
    _dies(pool.records)
    _end(pool, sid)
    _break_disk(out)
    with pytest.raises(RecordsNotWritten) as kept:
        pool.shutdown(wait_s=1.0)
    assert "1 ended episodes' records could not be written" in str(kept.value) and kept.value.status == 507
    [(method, args)] = kept.value.records
    assert method == "append_dw" and isinstance(args[2], EpisodeRecord) and args[2].seed == 4


def _seeds(out: Path) -> list[int]:
    results = out / "results.jsonl"
    return [json.loads(line)["seed"] for line in results.read_text().splitlines()] if results.is_file() else []
