"""Issue 23.5: a disk that fills mid-run, on a real (tiny) tmpfs, through the real write paths.

Before: a traceback, exit 1, no resume hint, and partial `.tmp` logs left behind (never cleaned,
after kills either). Now: one line naming the file and ENOSPC with the resume command, exit 74,
no temp file left, and a resume after freeing space finishes the run with one record per episode.
Needs root to mount a tmpfs (CI runs as root); skipped with the reason otherwise.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from discoverylab.bench import records
from discoverylab.bench.episode import EpisodeRecord
from discoverylab.bench.pool import LocalPool
from discoverylab.bench.rundir import RunLock
from discoverylab.bench.runner import _failed, _job_key, _run_job, make_jobs, run_config, suite_tasks
from discoverylab.bench.runs import execute

SRC = Path(__file__).resolve().parents[1] / "src"
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="tmpfs mounts are Linux-only")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs at tmp_path/disk, unmounted afterwards."""
    if shutil.which("mount") is None or shutil.which("umount") is None:
        pytest.skip("no mount/umount command to make a small tmpfs")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {mounted.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _grow(disk: Path, size: str = "64m") -> None:
    """'Free space': the user deletes something; here the tmpfs grows."""
    subprocess.run(["mount", "-o", f"remount,size={size}", str(disk)], check=True)


def _bench(out: Path, seeds: str) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-c", "from discoverylab.cli.main import main; main()", "bench", "--agent", "random",
            "--suite", "unit", "--seeds", seeds, "--max-steps", "60", "--workers", "2", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)


def _temp_files(out: Path) -> list[str]:
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.name.endswith(".tmp"))


def test_disk_full_mid_run_is_one_line_with_the_resume_command(small_disk: Path) -> None:
    out = small_disk / "run"
    (out / "logs").mkdir(parents=True)
    stale = out / "logs" / "Old-normal-s0-random.jsonl.4242.tmp"  # left by an earlier kill -9
    stale.write_text('{"type": "start"')
    result = _bench(out, "0-40")
    assert result.returncode == 74, result.stderr[-2000:]
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    stopped = [line for line in result.stderr.splitlines() if line.startswith("Stopped:")]
    assert len(stopped) == 1, result.stderr[-2000:]
    assert "No space left on device (ENOSPC)" in stopped[0] and "resume with: discoverylab bench" in stopped[0]
    assert f"cannot write {out}" in stopped[0], stopped[0]  # names the file that could not be written
    assert _temp_files(out) == [], "partial temp files left behind"
    _grow(small_disk)
    again = _bench(out, "0-1")
    assert again.returncode == 0, again.stderr[-2000:]
    rows = list(records.read_jsonl(out / "results.jsonl"))
    keys = Counter((r["task"], r["seed"]) for r in rows if r["status"] == "ok")
    wanted = {(task, seed) for task, _ in suite_tasks("unit") for seed in (0, 1)}
    assert wanted <= set(keys) and all(keys[k] == 1 for k in wanted)
    assert _temp_files(out) == []


def test_a_full_disk_under_results_jsonl_stops_the_runner_cleanly(small_disk: Path) -> None:
    """The runner's own append fails (the workers write nothing): the run stops, nothing is lost."""
    out = small_disk / "run"
    out.mkdir()
    filler = out / "filler"
    filler.write_bytes(b"\0" * (1024 * 1024 - 12 * 1024))  # leaves room for a few records only
    jobs = make_jobs(suite_tasks("unit"), range(5), "random", 5)
    config = run_config(5)
    with RunLock(out):
        outcome = execute(jobs, _job_key, partial(_run_job, out=None, config=config), partial(_failed, config), {},
                          out / "results.jsonl", pool=LocalPool(partial(_run_job, out=None, config=config), 2))
    assert outcome.io_error and "No space left on device (ENOSPC)" in outcome.io_error, outcome.io_error
    assert str(out / "results.jsonl") in outcome.io_error
    kept = len(outcome.results)
    assert 0 < kept < len(jobs) and outcome.dropped >= 1
    lines = (out / "results.jsonl").read_bytes().split(b"\n")
    whole = [json.loads(line) for line in lines[:-1]]  # the last piece may be a torn line; resume cuts it
    assert len(whole) == kept and all(EpisodeRecord.model_validate(r).status == "ok" for r in whole)


def test_temp_files_are_cleaned_when_the_lock_is_taken_and_released(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "transcripts").mkdir()
    leftovers = [tmp_path / "logs" / "a.jsonl.17.tmp", tmp_path / "transcripts" / "b.jsonl.9.tmp",
                 tmp_path / "run.json.3.tmp", tmp_path / ".write-test-5"]
    keep = [tmp_path / "logs" / "a.jsonl", tmp_path / "notes.tmp", tmp_path / "results.jsonl"]
    for path in leftovers + keep:
        path.write_text("x")
    lock = RunLock(tmp_path).acquire()
    assert not any(p.exists() for p in leftovers) and all(p.exists() for p in keep)
    late = tmp_path / "scores" / "c.json.tmp"  # a writer killed while the run held the lock
    late.parent.mkdir()
    late.write_text("{")
    lock.release()
    assert not late.exists() and all(p.exists() for p in keep)


def test_judge_on_a_full_disk_is_one_line_and_exit_74(small_disk: Path, scripted_llm: Any) -> None:
    """`discoverylab judge` appends each verdict row as it comes. Before: on a full disk (or with a
    folder in the way of knowledge.jsonl) it ended in an OSError traceback."""
    from typer.testing import CliRunner

    from discoverylab.bench.episode import run_episode
    from discoverylab.cli import app
    from rubric_judge import rubric_judge

    scripted_llm.responder = rubric_judge
    out = small_disk / "run"
    out.mkdir()
    record, _ = run_episode("Proteomics", "easy", 0, "oracle")
    for seed in range(3):
        records.append_jsonl(out / "results.jsonl", record.model_copy(update={"seed": seed}))
    args = ["judge", str(out), "--base-url", scripted_llm.base_url, "--model", "j"]
    (out / "knowledge.jsonl").mkdir()
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "knowledge.jsonl is not a file" in result.output, result.output
    (out / "knowledge.jsonl").rmdir()
    free = shutil.disk_usage(small_disk).free
    (out / "filler").write_bytes(b"\0" * free)  # nothing left for a verdict row
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 74, result.output
    assert "No space left on device (ENOSPC)" in result.output and "Traceback" not in result.output, result.output


def test_a_batch_the_full_disk_refuses_leaves_no_line_and_no_temp_file(small_disk: Path) -> None:
    """A server's stop writes its records together (`records.DurableBatch`); a disk that fills in
    the middle leaves none of its lines (so the batch can be given again without doubling any) and
    no temp file, and says which file."""
    out = small_disk / "served"
    (out / "labs").mkdir(parents=True)
    (out / "results.jsonl").write_text('{"seed": 0}\n')
    (out / "labs" / "results.jsonl").write_text('{"seed": 1}\n')
    before = {p: p.read_bytes() for p in (out / "results.jsonl", out / "labs" / "results.jsonl")}
    batch = records.DurableBatch(out)
    batch.write_jsonl(out / "logs" / "a.jsonl", [{"type": "end"}])
    batch.append_jsonl(out / "results.jsonl", {"seed": 2})
    batch.append_jsonl(out / "labs" / "results.jsonl", {"seed": 3, "pad": "x" * 2_000_000})
    with pytest.raises(OSError) as full:
        batch.commit()
    assert full.value.errno == errno.ENOSPC and full.value.filename == str(out / "labs" / "results.jsonl")
    assert {p: p.read_bytes() for p in before} == before
    assert _temp_files(out) == []
    _grow(small_disk)
    again = records.DurableBatch(out)
    again.append_jsonl(out / "results.jsonl", {"seed": 2})
    again.commit()
    assert [json.loads(line)["seed"] for line in (out / "results.jsonl").read_text().splitlines()] == [0, 2]


def test_a_batch_writing_one_file_twice_keeps_the_second_and_its_temp_name_is_cleared_after_a_kill(
        tmp_path: Path) -> None:
    """Two sessions of one instance and agent name share a log file: the later one wins, as when
    written one after the other; a temp file a kill leaves behind is one the run folder's check clears."""
    from discoverylab.bench.rundir import TEMP_NAME

    batch = records.DurableBatch(tmp_path)
    batch.write_jsonl(tmp_path / "logs" / "a.jsonl", [{"n": 1}])
    batch.write_jsonl(tmp_path / "logs" / "a.jsonl", [{"n": 2}])
    [temp] = list((tmp_path / "logs").iterdir())
    assert TEMP_NAME.search(temp.name), temp.name
    batch.commit()
    assert [p.name for p in (tmp_path / "logs").iterdir()] == ["a.jsonl"]
    assert json.loads((tmp_path / "logs" / "a.jsonl").read_text()) == {"n": 2}
