"""The instruction-count benchmark (benchmarks/instructions.py) keeps working: its rollouts run
in both modes, the same seed replays the same episode, and a machine without valgrind gets a
clear message. The callgrind runs themselves are a benchmark (too slow for the suite)."""

from __future__ import annotations

import shutil
import sys

import pytest

from bench_loader import load_benchmark


def _module():  # type: ignore[no-untyped-def]
    return load_benchmark("instructions.py", "instructions_benchmark")


@pytest.mark.parametrize(("task", "mode"), [("SpaceSick", "text"), ("DoorsTest", "symbolic")])
def test_rollouts_run_and_replay(task: str, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    bench = _module()
    from discoverylab.env import DiscoveryWorldEnv

    steps: list[str] = []
    original = DiscoveryWorldEnv.step

    def counting(self, action):  # type: ignore[no-untyped-def]
        steps.append(repr(action))
        return original(self, action)

    monkeypatch.setattr(DiscoveryWorldEnv, "step", counting)
    bench.rollout(task, "normal", mode, 40)
    first = list(steps)
    steps.clear()
    bench.rollout(task, "normal", mode, 40)
    assert len(first) == 40 and steps == first and len(set(first)) > 3  # varied actions, replayed


def test_without_valgrind_the_message_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    bench = _module()
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(sys, "argv", ["instructions.py", "--steps", "5"])
    with pytest.raises(SystemExit, match="apt-get install valgrind"):
        bench.main()


def test_reset_mode_resets_the_rl_env_with_fresh_seeds(monkeypatch: pytest.MonkeyPatch) -> None:
    bench = _module()
    from discoverylab.env import DiscoveryWorldEnv

    seeds: list[int | None] = []
    original = DiscoveryWorldEnv.reset

    def counting(self, *, seed=None, options=None):  # type: ignore[no-untyped-def]
        seeds.append(seed)
        return original(self, seed=seed, options=options)

    monkeypatch.setattr(DiscoveryWorldEnv, "reset", counting)
    bench.rollout("DoorsTest", "normal", "reset", 3)
    assert seeds == [0, 1, 2, 3, 4]
