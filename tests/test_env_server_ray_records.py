"""The Ray pool keeps what env-serve keeps: the played-once ledger in a file, the evaluator's records.

Its ledger lived in the ledger actor's memory, so a new pool (a restart) played every sealed test
instance again, its gold already seen; and it wrote no records, so an evaluator serving the test
split on Ray had only the client's numbers. The ledger actor now keeps env-serve's `FileLedger`
and a records actor writes `out=DIR` as env-serve's `--out` does, each record on disk before the
client hears of the episode's end (a session actor that dies loses none).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from discoverylab.bench.rundir import RunLocked
from discoverylab.instances import key_id
from discoverylab.server.ledger import LedgerError, default_ledger_path
from discoverylab.server.session import AlreadyPlayed

ray = pytest.importorskip("ray", reason="the ray scale-out is optional: pip install 'discoverylab[ray]'")
pytestmark = pytest.mark.xdist_group("ray")  # one local Ray at a time (see test_env_server_ray.py)

KEY = b"r" * 32
TASK, DIFFICULTY, FIELD = "Proteomics", "easy", "outlier_species"


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _pool(**options: Any) -> Any:
    from discoverylab.server.ray_sessions import RaySessions

    return RaySessions(sessions_per_actor=1, num_cpus=0.25, key=KEY, **options)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_sealed_instance_played_on_one_pool_is_refused_by_the_next(local_ray: None, tmp_path: Path) -> None:
    ledger = tmp_path / "played.jsonl"
    first = _pool(ledger=ledger)
    try:
        first.reset(first.create(), task="PickAndPlaceTest", split="test", index=3)
        with pytest.raises(LedgerError, match="in use"):  # one holder per ledger, as env-serve
            _pool(ledger=ledger)
    finally:
        first.shutdown()
    again = _pool(ledger=ledger)  # a restart: the file remembers
    try:
        assert again.played == 1
        with pytest.raises(AlreadyPlayed, match="plays once"):
            again.reset(again.create(), task="PickAndPlaceTest", split="test", index=3)
    finally:
        again.shutdown()
    default = _pool()  # with a key and no ledger named: env-serve's default file
    try:
        default.reset(default.create(), task="PickAndPlaceTest", split="test", index=5)
    finally:
        default.shutdown()
    assert [row["index"] for row in _lines(default_ledger_path(key_id(KEY)))] == [5]


def test_ray_pool_writes_the_evaluators_records_and_a_dead_actor_loses_none(local_ray: None, tmp_path: Path) -> None:
    out = tmp_path / "served"
    pool = _pool(ledger=tmp_path / "played.jsonl", out=out)
    try:
        with pytest.raises(RunLocked):  # DIR is held by the pool's records actor
            _pool(ledger=tmp_path / "other.jsonl", out=out)
        sid = pool.create()
        result = pool.reset(sid, task=TASK, difficulty=DIFFICULTY, split="test", index=1, max_steps=1, agent="ray-agent")
        while not result.done:
            result = pool.step(sid, {"action": "WAIT"})
        pending = _lines(out / "results.jsonl")  # written before the end step was answered
        assert [(r["agent"], r["index"], r["answers_score"]) for r in pending] == [("ray-agent", 1, None)]
        sheet = pool.answer_sheet(sid)
        assert sheet is not None
        tried = sheet["fields"][0]["schema"]["enum"][0]
        receipt = pool.hand_in(sid, {FIELD: tried}, knowledge="a report")
        assert receipt["received"] is True and not {"score", "fields"} & set(receipt)  # as env-serve: no grade
        done = _lines(out / "results.jsonl")[-1]
        (graded,) = done["answers_grade"]["fields"]
        assert graded["correct"] is (graded["gold"] == tried) and done["knowledge"] == "a report"
        # an episode that ends on another actor, whose process then dies: its record is already on disk
        other = pool.create()
        assert pool.where[other] != pool.where[sid]
        pool.reset(other, task="PickAndPlaceTest", split="test", index=2, max_steps=1)
        assert pool.step(other, {"action": "WAIT"}).done
        ray.kill(pool.actors[pool.where[other]])
        assert [r["index"] for r in _lines(out / "results.jsonl")] == [1, 1, 2]
        assert (out / "logs" / "PickAndPlaceTest-normal-test2-remote.jsonl").is_file()
        # a session that goes before its end is recorded where it stands (the agent cannot walk away)
        third = pool.create()
        pool.reset(third, task="PickAndPlaceTest", split="test", index=4)
        pool.close(third)
        assert "abandoned" in _lines(out / "results.jsonl")[-1]["error"]
    finally:
        pool.shutdown()
    assert json.loads((out / "run.json").read_text())["runner"] == "env-serve"
    fresh = _pool(ledger=tmp_path / "fresh.jsonl", out=out)  # a new ledger, but DIR holds test#1's record
    try:
        with pytest.raises(AlreadyPlayed):
            fresh.reset(fresh.create(), task=TASK, difficulty=DIFFICULTY, split="test", index=1)
    finally:
        fresh.shutdown()


def test_a_client_that_walks_away_is_recorded_once_its_session_expires(local_ray: None, tmp_path: Path) -> None:
    """A session actor sweeps its idle sessions on its own, as env-serve's reaper does: a sealed
    episode its client left unfinished is recorded `abandoned` after the TTL, not only if a later
    request happens to reach that actor (with none, the pool's stop dropped it unrecorded)."""
    from discoverylab.server.ray_sessions import RaySessions

    out = tmp_path / "served"
    pool = RaySessions(sessions_per_actor=1, num_cpus=0.25, key=KEY, ttl_s=0.5, ledger=tmp_path / "p.jsonl", out=out)
    try:
        pool.reset(pool.create(), task="PickAndPlaceTest", split="test", index=6)
        deadline = time.monotonic() + 30
        while not (out / "results.jsonl").is_file() and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        pool.shutdown()
    (row,) = _lines(out / "results.jsonl")
    assert row["index"] == 6 and "abandoned: the session expired" in row["error"]
