"""Smoke test of the PPO baseline (benchmarks/ppo.py): a few hundred masked steps and an update.
Skipped without torch (the optional `rl` extra)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bench_loader import load_benchmark

pytest.importorskip("torch")


def _ppo():  # type: ignore[no-untyped-def]
    return load_benchmark("ppo.py", "ppo_baseline")


def test_ppo_runs_a_few_hundred_masked_steps(tmp_path: Path) -> None:
    ppo = _ppo()
    curve = ppo.train(300, 5, envs_per_task=1, rollout=25, max_steps=15, eval_every=150, eval_episodes=1)
    assert curve["total_steps"] >= 300 and curve["steps"] == sorted(curve["steps"])
    kinds = {*ppo.TASKS, *(f"{t} (sampled)" for t in ppo.TASKS)}  # greedy and sampled-action success
    assert set(curve["final"]) == kinds and all(0.0 <= v <= 1.0 for v in curve["final"].values())
    assert curve["eval"] and all(0.0 <= e[t] <= 1.0 for e in curve["eval"] for t in kinds)
    assert all(math.isfinite(v) for t in ppo.TASKS for v in curve["train_success"][t])
    ppo.plot(curve, tmp_path / "curve.png")
    assert (tmp_path / "curve.png").stat().st_size > 1000


def test_ppo_schedule_is_by_steps_not_wall_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 27: the learning rate decayed with elapsed minutes, so one seed gave 0.23 or 0.73
    depending on machine load. A clock that races (a busy machine) must change nothing."""
    import torch

    ppo = _ppo()
    assert ppo.lr_at(0, 1000) == 5e-4 and ppo.lr_at(500, 1000) == pytest.approx(2.5e-4)
    quiet = ppo.train(120, 600, envs_per_task=1, rollout=20, max_steps=10, eval_episodes=0, tasks=("DialogTest",))
    ticks = iter(range(0, 10**9, 30))  # every reading half a minute later: the budget is 10 hours
    monkeypatch.setattr(ppo.time, "perf_counter", lambda: float(next(ticks)))
    busy = ppo.train(120, 600, envs_per_task=1, rollout=20, max_steps=10, eval_episodes=0, tasks=("DialogTest",))
    for a, b in zip(quiet["policy"].parameters(), busy["policy"].parameters(), strict=True):
        assert torch.equal(a, b)


def test_ppo_main_refuses_a_wrong_task_or_count_as_a_usage_error(monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    ppo = _ppo()
    for argv, says in ((["--tasks", "DialogTest,Nope"], "Unknown task 'Nope'"), (["--envs-per-task", "0"], "envs-per-task")):
        monkeypatch.setattr("sys.argv", ["ppo.py", *argv, "--steps", "50", "--out", "/nonexistent/x"])
        with pytest.raises(SystemExit) as stop:  # before: ValueError / IndexError tracebacks from the first env
            ppo.main()
        assert stop.value.code == 2 and says in capsys.readouterr().err
