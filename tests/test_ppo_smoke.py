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
