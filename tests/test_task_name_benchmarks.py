"""A misspelt task name in the benchmarks that take one: it was a ValueError traceback from deep
in the env (in instructions.py only after two callgrind runs); now a usage error (exit 2) that
lists the tasks, before any work."""

from __future__ import annotations

import sys

import pytest

from bench_loader import load_benchmark, main_exit_code

CASES = [
    ("episode_steps.py", ["DoorTest"], "relax_gc"),
    ("envs_per_process.py", ["--task", "DoorTest"], "measure"),
    ("instructions.py", ["--task", "DoorTest"], "count"),
    ("instructions.py", ["--task", "DoorsTest", "--difficulty", "hard"], "count"),
    ("rl_speed.py", ["--task", "DoorTest", "--default-gc"], "single"),
]


@pytest.mark.parametrize(("script", "argv", "work"), CASES)
def test_a_misspelt_task_is_a_usage_error_before_any_work(script: str, argv: list[str], work: str,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    bench = load_benchmark(script, script.removesuffix(".py") + "_task_bench")
    assert main_exit_code(monkeypatch, bench.main, [script, *argv], (bench, work)) == 2
    assert "DoorsTest" in capsys.readouterr().err  # the valid names (or difficulties) are listed


@pytest.mark.parametrize("src", ["no-such-folder", "."])  # "." is a checkout root, not its src
def test_instructions_src_without_the_package_is_a_usage_error(src: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A --src with no discoverylab in it was put on PYTHONPATH, the installed package was measured
    instead and the figure printed under --src's name (a false A/B comparison)."""
    bench = load_benchmark("instructions.py", "instructions_src_bench")
    monkeypatch.setattr(bench, "count", lambda *a, **k: pytest.fail("counted"))
    monkeypatch.setattr(sys, "argv", ["instructions.py", "--task", "DoorsTest", "--steps", "2", "--src", src])
    with pytest.raises(SystemExit) as exc:
        bench.main()
    assert exc.value.code == 2
