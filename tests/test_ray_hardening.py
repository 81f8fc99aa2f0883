"""Issue 23.6: Ray deadlines count from the start of the work; no Ray process outlives the runner.

Real Ray clusters, real processes and real signals (`make test` installs Ray). Ray start-up
takes 10-30 s on a small machine: one test worker runs the Ray tests in turn.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from discoverylab.bench.ray_pool import RayPool
from discoverylab.bench.runs import execute

ray = pytest.importorskip("ray", reason="the ray backend is optional: pip install 'discoverylab[ray]'")
# One test worker runs the Ray tests one after another (`--dist loadgroup`): each starts a local
# Ray, 10-20 s on a small machine, and two at once on two cores would only slow both.
pytestmark = pytest.mark.xdist_group("ray")

SRC = Path(__file__).resolve().parents[1] / "src"
LOAD_S = 6.0  # how long a worker takes to load the work (a slow import), far past the deadline
DEADLINE_S = 3.0


class SlowToLoad:
    """Unpickling it sleeps, like a worker importing a heavy package before it can run anything."""

    def __init__(self, delay: float) -> None:
        self.delay = delay

    def __reduce__(self) -> tuple[Any, tuple[float]]:
        return (_load_slowly, (self.delay,))


def _load_slowly(delay: float) -> SlowToLoad:
    time.sleep(delay)
    return SlowToLoad(delay)


def _quick_job(_loaded: SlowToLoad, job: int) -> dict[str, Any]:
    time.sleep(0.2)
    return {"job": job, "status": "ok"}


def _failed(job: int, status: str, message: str) -> dict[str, Any]:
    return {"job": job, "status": status, "error": message}


@pytest.fixture
def fresh_ray() -> Iterator[None]:
    if ray.is_initialized():
        ray.shutdown()
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/
    yield
    ray.shutdown()


def test_ray_worker_startup_does_not_count_against_the_episode_deadline(fresh_ray: None) -> None:
    """Before: every episode was recorded `timeout` (4/4 at a 6 s limit with 0.0 s of work):
    the clock ran from the submission while the Ray worker was still starting."""
    run_one = partial(_quick_job, SlowToLoad(LOAD_S))
    started = time.monotonic()
    outcome = execute(range(4), lambda j: j, run_one, _failed, {}, None, pool=RayPool(run_one, 2),  # type: ignore[arg-type]
                      episode_timeout=DEADLINE_S)  # fmt: skip
    assert [r["status"] for r in outcome.results] == ["ok"] * 4, outcome.results  # type: ignore[index]
    assert time.monotonic() - started > LOAD_S  # the workers really were slow to start


def _processes() -> dict[int, tuple[int, str, bytes]]:
    """pid -> (session id, state, environment) of every process we can read."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        found[int(entry)] = (int(fields[3]), fields[0], environ)  # state, ppid, pgrp, session, ...
    return found


def _marked(mark: str) -> set[int]:
    """Sessions of the live processes whose environment carries `mark` (the run's processes)."""
    needle = f"DISCOVERYLAB_TEST_MARK={mark}".encode()
    return {sid for sid, state, environ in _processes().values() if state != "Z" and needle in environ.split(b"\0")}


def _in_sessions(sessions: set[int]) -> list[int]:
    """Live processes of these sessions. Ray's daemons rename themselves (`ray::DashboardAgent`),
    which overwrites their /proc environ, so the run's processes are found by session. Never this
    test's own session, nor session 0, whatever `sessions` holds: the cleanup kills what this finds."""
    ours = {0, 1, os.getsid(0)}
    wanted = sessions - ours
    return [pid for pid, (sid, state, _) in _processes().items() if sid in wanted and state != "Z" and pid != os.getpid()]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM", "exit"])
def test_no_ray_process_outlives_the_runner(tmp_path: Path, how: str) -> None:
    """Before: after kill -9 of the runner, Ray's DashboardAgent and RuntimeEnvAgent (and more)
    lived on for over a minute."""
    mark = uuid.uuid4().hex
    env = {**os.environ, "DISCOVERYLAB_TEST_MARK": mark,
           "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}  # fmt: skip
    seeds = "0-1" if how == "exit" else "0-400"
    args = [sys.executable, "-c", "from discoverylab.cli.main import main; main()", "bench", "--backend", "ray",
            "--suite", "unit", "--agent", "random", "--max-steps", "5", "--seeds", seeds, "--workers", "2",
            "--out", str(tmp_path / "run")]  # fmt: skip
    stderr = tmp_path / "stderr.log"  # a file: a pipe nobody reads would block the runner when full
    with stderr.open("wb") as sink:
        runner = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=sink, start_new_session=True)
    sessions = {runner.pid}
    try:
        results = tmp_path / "run" / "results.jsonl"
        end = time.monotonic() + 240
        while time.monotonic() < end and runner.poll() is None:
            sessions |= _marked(mark)  # the runner's, and any its helpers started (the keeper's)
            if len(_in_sessions(sessions)) > 3 and (how == "exit" or results.exists() and results.read_text().count("\n") >= 2):
                break
            time.sleep(0.2)
        assert len(_in_sessions(sessions)) > 3, "Ray did not start"  # the runner, GCS, raylet, agents, ...
        if how == "SIGKILL":
            os.kill(runner.pid, signal.SIGKILL)
        elif how == "SIGTERM":
            os.killpg(runner.pid, signal.SIGTERM)  # as Slurm or systemd would
        code = runner.wait(240)
        if how == "exit":
            assert code == 0, stderr.read_text(errors="replace")[-2000:]
        left = _in_sessions(sessions)
        end = time.monotonic() + 15
        while left and time.monotonic() < end:
            time.sleep(0.25)
            left = _in_sessions(sessions)
        names = [Path(f"/proc/{pid}/cmdline").read_bytes()[:80] for pid in left if Path(f"/proc/{pid}").exists()]
        assert not left, f"{len(left)} Ray processes outlived the runner by 15 s: {names}"
    finally:
        if runner.poll() is None:
            runner.kill()
        for pid in _in_sessions(sessions):  # never leave them behind, even when the test fails
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    if how == "exit":
        lines = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
        assert lines and {r["status"] for r in lines} == {"ok"}
