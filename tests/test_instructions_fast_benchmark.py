"""The steps-only instruction count (benchmarks/instructions_fast.py) plays instructions.py's
rollout: the same actions from the same seed, instrumentation switched on once after the first
reset, and a machine without valgrind gets a clear message. The callgrind runs themselves are a
benchmark (too slow for the suite)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Any

import pytest

from bench_loader import load_benchmark


@pytest.mark.parametrize("mode", ["symbolic", "episodes"])
def test_the_rollout_is_instructions_py_s_with_instrumentation_switched_on_after_the_reset(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = load_benchmark("instructions_fast.py", "instructions_fast_benchmark")
    plain = load_benchmark("instructions.py", "instructions_benchmark")
    from discoverylab.env import DiscoveryWorldEnv

    events: list[str] = []
    step, reset = DiscoveryWorldEnv.step, DiscoveryWorldEnv.reset

    def stepping(self, action):  # type: ignore[no-untyped-def]
        events.append(repr(action))
        return step(self, action)

    def resetting(self, *, seed=None, options=None):  # type: ignore[no-untyped-def]
        events.append(f"reset {seed}")
        return reset(self, seed=seed, options=options)

    def control(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        events.append(" ".join(command))
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(DiscoveryWorldEnv, "step", stepping)
    monkeypatch.setattr(DiscoveryWorldEnv, "reset", resetting)
    monkeypatch.setattr(fast.subprocess, "run", control)
    fast.rollout("DoorsTest", "normal", mode, 150)
    ours = list(events)
    events.clear()
    plain.rollout("DoorsTest", "normal", mode, 150)
    switch = f"callgrind_control -i on {os.getpid()}"
    assert ours.count(switch) == 1 and ours[1] == switch and ours[0] == "reset 0"
    assert [e for e in ours if e != switch] == events
    assert sum(1 for e in events if e.startswith("reset")) > (1 if mode == "episodes" else 0)


def test_without_valgrind_the_message_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = load_benchmark("instructions_fast.py", "instructions_fast_benchmark")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(sys, "argv", ["instructions_fast.py", "--steps", "5"])
    with pytest.raises(SystemExit, match="apt-get install valgrind"):
        fast.main()
