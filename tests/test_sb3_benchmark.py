"""`benchmarks/sb3.py` with a zero count (`--num-envs 0`, ...): a ValueError traceback from the
env or the model after the set-up (with `--jobs`, one per task process); a usage error now."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from bench_loader import load_benchmark, main_exit_code  # noqa: E402

sb3 = load_benchmark("sb3.py", "sb3_bench")


@pytest.mark.parametrize("argv", [["--num-envs", "0"], ["--workers", "0"], ["--n-steps", "0"], ["--jobs", "2", "--epochs", "0"]])
def test_a_zero_count_is_a_usage_error_before_training(argv: list[str], tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    argv = ["sb3.py", "--tasks", "DoorsTest", "--out", str(tmp_path / "out"), *argv]
    assert main_exit_code(monkeypatch, sb3.main, argv, (sb3, "train"), (sb3, "sweep")) == 2


class Trained(Exception):
    pass


@pytest.mark.parametrize("jobs", [[], ["--jobs", "2"]])
def test_a_bare_run_writes_under_runs_not_over_the_committed_figures(jobs: list[str], tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Before: the default --out was docs/images/sb3_curve, so a run with no --out overwrote the
    sweep's figure, table and data the docs show. It is runs/sb3_curve now (runs/ is git-ignored)."""
    from bench_loader import default_out_is_ignored

    made: list[Path] = []

    def work(*args: object, **kwargs: object) -> None:
        made.extend(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
        raise Trained

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sb3, "train", work)
    monkeypatch.setattr("discoverylab.rl.relax_gc", lambda: None)  # (it tunes gc for the whole process)
    monkeypatch.setattr(sb3, "preflight", lambda: None)
    monkeypatch.setattr(sb3.subprocess, "Popen", work)
    monkeypatch.setattr(sb3.signal, "signal", lambda *a: None)  # the sweep's handlers stay out of pytest
    monkeypatch.setattr(sys, "argv", ["sb3.py", "--tasks", "DoorsTest", *jobs])
    with pytest.raises(Trained):
        sb3.main()
    monkeypatch.undo()  # (Popen: git below)
    assert made[0] == Path("runs") and all(p.parts[0] == "runs" for p in made), made
    default_out_is_ignored("runs/sb3_curve.json")


class Running:
    """A task process of the sweep that never finishes on its own."""

    returncode = None

    def poll(self) -> None:
        return None

    def kill(self) -> None:
        pass


def test_ctrl_c_in_a_sweep_never_overwrites_the_complete_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: Ctrl-C merged the partial curves over <out>.json, .png and .md (a complete summary of
    an earlier run was lost), taking in a curve an earlier run had left for a task not started this
    time. Now they go to <out>-interrupted.*, marked, and the exit code is 130."""
    out = tmp_path / "sweep"
    complete = {suffix: f"complete {suffix}" for suffix in (".json", ".png", ".md")}
    for suffix, text in complete.items():
        out.with_suffix(suffix).write_text(text)
    parts = tmp_path / "sweep.parts"
    parts.mkdir()
    curve = {"task": "SearchTest", "obs": "onehot", "policy": "slot", "eval": [{"steps": 9, "success": 1.0, "seconds": 1.0}]}
    (parts / "SearchTest.json").write_text(json.dumps(curve))  # from an earlier run
    commands: list[list[str]] = []

    def popen(cmd: list[str], **kwargs: object) -> Running:  # DoorsTest starts and writes its first evaluation
        commands.append(cmd)
        curve = {"task": "DoorsTest", "obs": "onehot", "policy": "slot", "eval": [{"steps": 1000, "success": 0.5, "seconds": 1.0}]}
        (parts / "DoorsTest.json").write_text(json.dumps(curve))
        return Running()

    monkeypatch.setattr(sb3.subprocess, "Popen", popen)
    monkeypatch.setattr(sb3, "preflight", lambda: None)
    monkeypatch.setattr(sb3.time, "sleep", lambda seconds: os.kill(os.getpid(), signal.SIGINT))  # Ctrl-C
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        argv = ["sb3.py", "--tasks", "DoorsTest,SearchTest", "--jobs", "1", "--out", str(out)]
        assert main_exit_code(monkeypatch, sb3.main, argv) == 130
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    assert {suffix: out.with_suffix(suffix).read_text() for suffix in complete} == complete
    partial = json.loads((tmp_path / "sweep-interrupted.json").read_text())
    assert [(c["task"], c["stopped"]) for c in partial] == [("DoorsTest", "interrupted (Ctrl-C)")]
    assert "interrupted (Ctrl-C)" in (tmp_path / "sweep-interrupted.md").read_text()
    assert (tmp_path / "sweep-interrupted.png").read_bytes()[:4] == b"\x89PNG"
    assert len(commands) == 1 and "--sweep-task" in commands[0]  # the task process leaves merging to the sweep


def test_a_sweep_s_task_process_leaves_the_merged_summary_to_the_sweep(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Before: a sweep run without --cpus started its task processes without --cpu, and each wrote its
    own curve alone over <out>.json, .png and .md as it finished."""
    out = tmp_path / "sweep"
    out.with_suffix(".json").write_text("complete")
    monkeypatch.setattr(sb3, "train", lambda task, *a, **k: {"model": None, "final": 1.0, "total_steps": 10,
                                                              "seconds_total": 1.0})  # fmt: skip
    monkeypatch.setattr("discoverylab.rl.relax_gc", lambda: None)
    monkeypatch.setattr(sys, "argv", ["sb3.py", "--tasks", "DoorsTest", "--out", str(out), "--sweep-task"])
    sb3.main()
    assert out.with_suffix(".json").read_text() == "complete" and not out.with_suffix(".md").exists()


def test_a_sweep_cut_by_its_time_limit_merges_only_the_tasks_it_started(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Before: at --time-limit the tasks not started yet were dropped, but a curve an earlier run
    had left in the parts folder for one of them was merged into <out>.json as if this run made it."""
    out = tmp_path / "sweep"
    parts = tmp_path / "sweep.parts"
    parts.mkdir()
    curve = {"task": "SearchTest", "obs": "onehot", "policy": "slot", "eval": [{"steps": 9, "success": 1.0, "seconds": 1.0}]}
    (parts / "SearchTest.json").write_text(json.dumps(curve))  # from an earlier run
    monkeypatch.setattr(sb3.subprocess, "Popen", lambda cmd, **kwargs: Running())
    monkeypatch.setattr(sb3, "preflight", lambda: None)
    monkeypatch.setattr(sb3.time, "sleep", lambda seconds: None)
    monkeypatch.setattr(sb3.signal, "signal", lambda *a: None)
    monkeypatch.setattr(sys, "argv", ["sb3.py", "--tasks", "DoorsTest,SearchTest", "--jobs", "1", "--time-limit", "0.001",
                                      "--out", str(out)])  # fmt: skip
    sb3.main()
    assert [c["task"] for c in json.loads(out.with_suffix(".json").read_text())] == ["DoorsTest"]


class Died(Running):
    """A task process that ended (a crash) before its first evaluation."""

    returncode = 1

    def poll(self) -> int:
        return 1


def test_a_task_that_dies_before_its_first_evaluation_shows_no_earlier_run_s_curve(tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Before: the parts folder's <task>.json of an earlier run was merged as this run's curve when
    this run's task died before writing its own; now its row says it has no curve (see its log)."""
    out = tmp_path / "sweep"
    parts = tmp_path / "sweep.parts"
    parts.mkdir()
    stale = {"task": "DoorsTest", "obs": "onehot", "policy": "slot", "eval": [{"steps": 9, "success": 1.0, "seconds": 1.0}]}
    (parts / "DoorsTest.json").write_text(json.dumps(stale))
    monkeypatch.setattr(sb3.subprocess, "Popen", lambda cmd, **kwargs: Died())
    monkeypatch.setattr(sb3, "preflight", lambda: None)
    monkeypatch.setattr(sb3.time, "sleep", lambda seconds: None)
    monkeypatch.setattr(sb3.signal, "signal", lambda *a: None)
    monkeypatch.setattr(sys, "argv", ["sb3.py", "--tasks", "DoorsTest", "--jobs", "1", "--out", str(out)])
    sb3.main()
    (curve,) = json.loads(out.with_suffix(".json").read_text())
    assert curve["eval"] == [] and curve["stopped"] == "no curve: see log_tail", curve


@pytest.mark.parametrize("jobs", [[], ["--jobs", "2"]])
def test_an_out_under_a_file_is_a_usage_error(jobs: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: a NotADirectoryError traceback making `<out>.parts`."""
    (tmp_path / "afile").write_text("x")
    argv = ["sb3.py", "--tasks", "DoorsTest", "--out", str(tmp_path / "afile" / "x"), *jobs]
    assert main_exit_code(monkeypatch, sb3.main, argv, (sb3, "train"), (sb3, "preflight")) == 2


@pytest.mark.parametrize("text", ['{"oops', '[{"x": 1}]', '{"task": "DoorsTest"}', "[1, 2]"])
def test_plot_only_on_a_file_that_is_no_curve_list_is_a_usage_error(text: str, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Before: a JSONDecodeError, KeyError or TypeError traceback from `--plot-only`."""
    (tmp_path / "c.json").write_text(text)
    assert main_exit_code(monkeypatch, sb3.main, ["sb3.py", "--plot-only", "--out", str(tmp_path / "c")]) == 2
    assert not (tmp_path / "c.png").exists() and not (tmp_path / "c.md").exists()
