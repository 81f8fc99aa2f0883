"""Signals and kills against the real `discoverylab bench` command, as a user's terminal sends them.

Each test starts the CLI in its own process group, waits until some episodes are recorded,
then interrupts it. Afterwards: a prompt exit with the documented code, no worker left alive,
and, after a resume, exactly one record per episode.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from discoverylab.bench.runner import make_jobs, run_jobs, suite_tasks

SRC = Path(__file__).resolve().parents[1] / "src"
UNIT_TASKS = 10  # the unit suite at its one difficulty
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals and /proc")


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "from discoverylab.cli.main import main; main()", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def _start(out: Path, seeds: str = "0-1", *extra: str) -> subprocess.Popen[bytes]:
    args = _cli("bench", "--agent", "random", "--suite", "unit", "--seeds", seeds, "--max-steps", "20",
                "--workers", "2", "--out", str(out), *extra)
    return subprocess.Popen(args, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)  # its own group, like a job in a terminal


def _lines(out: Path) -> list[dict[str, object]]:
    path = out / "results.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def _wait_for_records(out: Path, n: int, proc: subprocess.Popen[bytes], limit: float = 20.0) -> None:
    deadline = time.monotonic() + limit
    while len(_lines(out)) < n:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no records appeared"
        time.sleep(0.05)


def _group_members(pgid: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:  # state, ppid, pgrp
            members.append(int(entry.name))
    return members


def _assert_no_orphans(pgid: int, within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while _group_members(pgid):
        assert time.monotonic() < deadline, f"processes left alive: {_group_members(pgid)}"
        time.sleep(0.05)


def _resume_and_check(out: Path, n_seeds: int = 2) -> None:
    """Resume in-process (same jobs and config as the CLI run) and count records per episode."""
    jobs = make_jobs(suite_tasks("unit"), list(range(n_seeds)), "random", 20)
    results = run_jobs(jobs, out, 2)
    assert [r.status for r in results] == ["ok"] * len(jobs)
    keys = Counter((r["task"], r["seed"]) for r in _lines(out))
    assert len(keys) == UNIT_TASKS * n_seeds
    assert set(keys.values()) == {1}, "an episode was recorded twice"


def test_one_sigint_stops_promptly_records_and_says_how_to_resume(tmp_path: Path) -> None:
    """Before: the run went on ~20 s, ran every remaining episode and recorded none of them."""
    proc = _start(tmp_path)
    _wait_for_records(tmp_path, 3, proc)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground group
    sent = time.monotonic()
    _, err = proc.communicate(timeout=15)
    assert time.monotonic() - sent < 5.0
    assert proc.returncode == 130, err.decode()[-1500:]
    text = err.decode()
    assert "Interrupted by SIGINT" in text and "resume with: discoverylab bench" in text
    recorded = len(_lines(tmp_path))
    assert 3 <= recorded < UNIT_TASKS * 2
    _assert_no_orphans(proc.pid)
    _resume_and_check(tmp_path)


def test_second_sigint_exits_at_once(tmp_path: Path) -> None:
    """Before: a second Ctrl-C hung the runner for good."""
    proc = _start(tmp_path)
    _wait_for_records(tmp_path, 2, proc)
    os.killpg(proc.pid, signal.SIGINT)
    time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 130, err.decode()[-1500:]
    _assert_no_orphans(proc.pid)
    _resume_and_check(tmp_path)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_workers_die_with_their_parent(tmp_path: Path, sig: signal.Signals) -> None:
    """Before: SIGTERM or SIGKILL to the parent alone left the workers running forever."""
    proc = _start(tmp_path, "0-50")
    _wait_for_records(tmp_path, 2, proc)
    workers = [pid for pid in _group_members(proc.pid) if pid != proc.pid]
    assert workers, "the run should have worker processes"
    os.kill(proc.pid, sig)  # the parent alone, not its group
    proc.communicate(timeout=15)
    assert proc.returncode == (143 if sig == signal.SIGTERM else -signal.SIGKILL)
    _assert_no_orphans(proc.pid)


@pytest.mark.parametrize("after_records", [0, 4])
def test_kill_9_of_the_group_then_resume_gives_one_record_per_episode(tmp_path: Path, after_records: int) -> None:
    proc = _start(tmp_path)
    if after_records:
        _wait_for_records(tmp_path, after_records, proc)
    else:
        time.sleep(0.5)  # still importing or starting workers
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=15)
    _assert_no_orphans(proc.pid)
    _resume_and_check(tmp_path)


def test_huge_seed_range_is_generated_lazily(tmp_path: Path) -> None:
    """Before: `--seeds 0-100000` grew the parent to 2.3 GB in 28 s while it built the jobs."""
    proc = _start(tmp_path, "0-100000")
    _wait_for_records(tmp_path, 3, proc)
    status = Path(f"/proc/{proc.pid}/status").read_text()
    rss_kb = int(next(line for line in status.splitlines() if line.startswith("VmRSS")).split()[1])
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=15)
    assert rss_kb < 400_000, f"parent RSS {rss_kb} kB"
    assert proc.returncode == 130 and "of 1000010 episodes done" in err.decode()


@pytest.mark.parametrize("presses", [1, 2])
def test_lab_run_stops_on_ctrl_c_too(tmp_path: Path, presses: int) -> None:
    args = _cli("lab", "run", "sequence/hidden-property", "--agent", "oracle,random", "--seeds", "0-60",
                "--workers", "2", "--no-plots", "--out", str(tmp_path))
    proc = subprocess.Popen(args, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    _wait_for_records(tmp_path, 2, proc)
    for _ in range(presses):
        os.killpg(proc.pid, signal.SIGINT)
        time.sleep(0.02)
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 130, err.decode()[-1500:]
    if presses == 1:
        assert "resume with: discoverylab lab run" in err.decode()
    _assert_no_orphans(proc.pid)
    keys = Counter((r["protocol"], r["seed"], r["agent"]) for r in _lines(tmp_path))
    assert set(keys.values()) == {1}


def _start_busy(out: Path, command: str) -> subprocess.Popen[bytes]:
    """A run whose two workers are always mid-episode (long episodes, many of them)."""
    if command == "bench":
        args = _cli("bench", "--agent", "random", "--suite", "unit", "--seeds", "0-50", "--max-steps", "300",
                    "--workers", "2", "--out", str(out))
    else:
        args = _cli("lab", "run", "sequence/hidden-property", "--agent", "random", "--seeds", "0-500",
                    "--workers", "2", "--no-plots", "--out", str(out))
    return subprocess.Popen(args, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


@pytest.mark.parametrize("command", ["bench", "lab"])
def test_sigterm_to_the_process_group_records_no_spurious_failures(tmp_path: Path, command: str) -> None:
    """Before: SIGTERM to the whole group (what Slurm, systemd and `kill -TERM -PGID` send) killed
    the workers before the runner's handler ran, and their deaths were recorded as `error`
    episodes (4 of 6 runs). Now workers ignore it; the runner stops them and records nothing."""
    for attempt in range(3):
        out = tmp_path / f"run{attempt}"
        proc = _start_busy(out, command)
        _wait_for_records(out, 1 + attempt, proc)  # workers are mid-episode from here on
        os.killpg(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=15)
        assert proc.returncode == 143, err.decode()[-1500:]
        assert "Interrupted by SIGTERM" in err.decode() and "resume with" in err.decode()
        statuses = Counter(str(r["status"]) for r in _lines(out))
        assert set(statuses) == {"ok"}, f"run {attempt}: {statuses}"
        _assert_no_orphans(proc.pid)


def test_workers_ignore_sigterm_and_sigint_themselves(tmp_path: Path) -> None:
    """A signal to a worker alone neither kills it nor costs its episode: only the runner decides."""
    proc = _start_busy(tmp_path, "bench")
    _wait_for_records(tmp_path, 1, proc)
    workers = [pid for pid in _group_members(proc.pid) if pid != proc.pid]
    assert workers
    for pid in workers:
        os.kill(pid, signal.SIGTERM)
        os.kill(pid, signal.SIGINT)
    time.sleep(0.5)
    assert all(pid in _group_members(proc.pid) for pid in workers), "a worker died of a signal"
    os.killpg(proc.pid, signal.SIGINT)
    proc.communicate(timeout=15)
    assert proc.returncode == 130
    assert {str(r["status"]) for r in _lines(tmp_path)} == {"ok"}
    _assert_no_orphans(proc.pid)


_GAP = """
import os, signal, sys
from discoverylab.bench.runs import _Stop
stop = _Stop(lambda: None)
with stop:
    os.kill(os.getpid(), signal.{sig})  # the first signal asks the run to stop
assert stop.signal == "{sig}"
os.kill(os.getpid(), signal.{sig})  # a second one, after the run ended, before the command's own handler
sys.exit(0)
"""


@pytest.mark.parametrize(("sig", "code"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_second_signal_just_after_a_stopped_run_exits_with_the_stop_s_code(sig: str, code: int) -> None:
    """The run's handlers are replaced by the exit-at-once ones as a stopped run ends (before,
    `_Stop` restored Python's default: a second group SIGTERM in that window killed the command by
    signal, -15, seen in CI on `lab run`)."""
    done = subprocess.run([sys.executable, "-c", _GAP.format(sig=sig)], env=_env(), capture_output=True, timeout=60)
    assert done.returncode == code, done.stderr.decode()[-800:]
