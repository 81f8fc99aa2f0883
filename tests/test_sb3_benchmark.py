"""`benchmarks/sb3.py` with a zero count (`--num-envs 0`, ...): a ValueError traceback from the
env or the model after the set-up (with `--jobs`, one per task process); a usage error now."""

from __future__ import annotations

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
