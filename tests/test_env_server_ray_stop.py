"""The Ray pool's stop with many answer sheets pending, on a slow disk.

Each session actor sent its stop's records to the records actor one call at a time, and each was
written with two fsyncs (its log, its line): on a slow disk the stop ran past its wait, the session
actor was killed, and the records it had not sent yet were lost. The stop's records now go in one
call and are made durable together (two syncs of the filesystem whatever their number).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="the ray scale-out is optional: pip install 'discoverylab[ray]'")
pytestmark = pytest.mark.xdist_group("ray")  # one local Ray at a time (see test_env_server_ray.py)

KEY = b"s" * 32
N = 6
FSYNC_S = 0.4  # the slow disk: each fsync, and each sync of the filesystem, takes this long


def _slow_disk_hook(tally: str) -> Any:
    """A Ray worker setup hook: every fsync and filesystem sync in the worker is slow and tallied."""

    def install() -> None:
        import os as worker_os
        import time as worker_time

        from discoverylab.bench import records

        def tallied(real: Any, what: str) -> Any:
            def slow(*args: Any) -> Any:
                fd = worker_os.open(tally, worker_os.O_WRONLY | worker_os.O_APPEND | worker_os.O_CREAT)
                worker_os.write(fd, f"{what} {worker_os.getpid()}\n".encode())
                worker_os.close(fd)
                worker_time.sleep(FSYNC_S)
                return real(*args)

            return slow

        worker_os.fsync = tallied(worker_os.fsync, "fsync")
        sync = getattr(records, "sync_filesystem", None)
        if sync is not None:
            records.sync_filesystem = tallied(sync, "syncfs")

    return install


@pytest.fixture(scope="module")
def slow_ray(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tally = tmp_path_factory.mktemp("disk") / "syncs.txt"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"worker_process_setup_hook": _slow_disk_hook(str(tally))})  # fmt: skip
    yield tally
    ray.shutdown()


def test_the_pools_stop_writes_every_pending_sheet_within_its_wait(slow_ray: Path, tmp_path: Path) -> None:
    from discoverylab.server.ray_sessions import RaySessions

    out = tmp_path / "served"
    pool = RaySessions(sessions_per_actor=N, num_cpus=0.25, key=KEY, out=out, ledger=tmp_path / "played.jsonl")
    try:
        for seed in range(N):
            sid = pool.create()
            pool.reset(sid, task="Proteomics", difficulty="easy", seed=seed, max_steps=1)
            assert pool.step(sid, {"action": "WAIT"}).done  # its sheet pending, its record on disk
        assert len(pool.actors) == 1
    finally:
        slow_ray.write_text("")
        pool.shutdown(wait_s=2.0)
    syncs = slow_ray.read_text().splitlines()
    assert len(syncs) <= 3, f"{len(syncs)} syncs at the stop of {N} pending sheets"
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    last = {row["seed"]: row for row in rows}
    assert sorted(last) == list(range(N)) and len(rows) == 2 * N
    assert all(row["error"] == "not handed in: the server stopped" for row in last.values())
    logs = sorted((out / "logs").iterdir())
    assert len(logs) == N and all(p.suffix == ".jsonl" for p in logs)
    assert all(json.loads(p.read_text().splitlines()[-1])["type"] == "end" for p in logs)
