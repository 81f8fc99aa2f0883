"""The instruction-count benchmark (benchmarks/instructions.py) keeps working: its rollouts run
in both modes, the same seed replays the same episode, and a machine without valgrind gets a
clear message. The callgrind runs themselves are a benchmark (too slow for the suite)."""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
from typing import Any

import pytest

from bench_loader import load_benchmark


def _module():  # type: ignore[no-untyped-def]
    return load_benchmark("instructions.py", "instructions_benchmark")


@pytest.fixture(autouse=True)
def _keep_gc_thresholds():  # type: ignore[no-untyped-def]
    """The RL rollouts relax this process's collector (as their callgrind child would): undo it."""
    old = gc.get_threshold()
    yield
    gc.set_threshold(*old)


@pytest.mark.parametrize(("mode", "default_gc", "relaxed"),
                         [("reset", False, True), ("episodes", False, True), ("reset", True, False), ("text", False, False)])  # fmt: skip
def test_rl_modes_count_under_the_collector_rl_speed_uses(mode: str, default_gc: bool, relaxed: bool) -> None:
    """Counts compare with rl_speed.py's clocks: the RL modes run under `relax_gc()` unless
    `--default-gc` (with the default thresholds a change of a few allocations moved a reset's
    count by ±0.7%); the text mode keeps the defaults."""
    from discoverylab.rl.vector_worker import GC_THRESHOLD

    bench = _module()
    gc.set_threshold(700, 10, 10)
    bench.rollout("DialogTest", "normal", mode, 2, default_gc=default_gc)
    assert (gc.get_threshold()[0] == GC_THRESHOLD) is relaxed


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


@pytest.mark.parametrize("mode", ["symbolic", "episodes", "reset"])
def test_seed_shifts_every_seed_of_the_rollout(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--seed K` (session 23): the episodes' seeds and the policy's move by K (another
    rollout, replayed the same); K = 0 is the rollout without the option."""
    bench = _module()
    events = _record_env_calls(monkeypatch)

    count = 3 if mode == "reset" else 150
    runs = []
    for seed in (None, 0, 5, 5):
        events.clear()
        bench.rollout("DoorsTest", "normal", mode, count, **({} if seed is None else {"seed": seed}))
        runs.append(list(events))
    plain, zero, shifted, again = runs
    assert plain == zero and shifted == again and shifted != plain
    resets = [int(e.split()[1]) for e in plain if e.startswith("reset")]
    assert [int(e.split()[1]) for e in shifted if e.startswith("reset")] == [r + 5 for r in resets]


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


@pytest.mark.parametrize("mode", ["symbolic", "episodes", "reset", "text"])
def test_fast_plays_the_same_rollout_with_instrumentation_switched_on_after_the_first_reset(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = _module()
    events = _record_env_calls(monkeypatch)

    def control(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        events.append(" ".join(command))
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(bench.subprocess, "run", control)
    count = 3 if mode == "reset" else 150
    bench.rollout("DoorsTest", "normal", mode, count, fast=True)
    fast = list(events)
    events.clear()
    bench.rollout("DoorsTest", "normal", mode, count)
    switch = f"callgrind_control -i on {os.getpid()}"
    warm = ["reset 0", "reset 1"] if mode == "reset" else ["reset 0"]
    assert fast.count(switch) == 1 and fast[: len(warm) + 1] == [*warm, switch]
    assert [e for e in fast if e != switch] == events
    if mode == "episodes":
        assert sum(1 for e in events if e.startswith("reset")) > 1  # the task's own episodes end and reset


def test_fast_without_callgrind_control_the_message_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    bench = _module()
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "callgrind_control" else "/usr/bin/" + name)
    monkeypatch.setattr(sys, "argv", ["instructions.py", "--steps", "5", "--fast"])
    with pytest.raises(SystemExit, match="apt-get install valgrind"):
        bench.main()


def test_function_counts_only_the_outermost_calls_of_the_named_method(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--function`: after the first reset, each outermost call of the method runs through
    `operator.call` (callgrind collects inside it), once per call however deep it nests, and the
    rollout plays the same episode."""
    bench = _module()
    from discoverylab.world.world import World

    through: list[object] = []
    real_call = bench.operator.call

    def counting_call(function, *args, **kwargs):  # type: ignore[no-untyped-def]
        through.append(function)
        return real_call(function, *args, **kwargs)

    monkeypatch.setattr(bench.operator, "call", counting_call)
    disposed: list[object] = []
    dispose = World.dispose

    def nesting(self):  # type: ignore[no-untyped-def]
        disposed.append(self)
        if len(disposed) == 1:
            World.dispose(self)  # a nested call: not counted again
        return dispose(self)

    monkeypatch.setattr(World, "dispose", nesting)
    bench.rollout("DoorsTest", "normal", "episodes", 250, function="discoverylab.world.world:World.dispose")
    assert len(through) == 2 and len(disposed) == 3  # two episodes ended after the first reset; one nested call
    assert all(f is nesting for f in through)


@pytest.mark.parametrize(("spec", "says"), [("discoverylab.world.world", "give module:name"),
                                            ("no_such_module_x:f", "cannot import"),
                                            ("discoverylab.world.world:World.nope", "is not a function"),
                                            ("discoverylab.world.world:Nope.dispose", "has no 'Nope'")])  # fmt: skip
def test_a_bad_function_is_refused_with_what_is_wrong(spec: str, says: str, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    bench = _module()
    monkeypatch.setattr(sys, "argv", ["instructions.py", "--steps", "5", "--function", spec])
    with pytest.raises(SystemExit) as ended:
        bench.main()
    assert ended.value.code == 2 and says in capsys.readouterr().err


def test_function_wraps_static_and_class_methods_as_callers_call_them(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A class method stays bound to its class and a static method unbound, called on the class
    or on an instance (a class method wrapped as a plain function got the instance as its class)."""
    bench = _module()
    (tmp_path / "wrapped_kinds_x.py").write_text(
        "class K:\n"
        "    @classmethod\n    def made(cls, v):\n        return (cls, v)\n"
        "    @staticmethod\n    def plain(v):\n        return v\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import wrapped_kinds_x

    through: list[object] = []
    real_call = bench.operator.call
    monkeypatch.setattr(bench.operator, "call", lambda f, *a, **k: (through.append(f), real_call(f, *a, **k))[1])
    bench.wrap("wrapped_kinds_x:K.made")
    bench.wrap("wrapped_kinds_x:K.plain")
    k = wrapped_kinds_x.K
    assert k.made(1) == (k, 1) and k().made(2) == (k, 2)
    assert k.plain(3) == 3 and k().plain(4) == 4
    assert len(through) == 4


def _record_env_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every `DiscoveryWorldEnv.step` (its action's repr) and `reset` (`reset SEED`) from now on,
    in order, into the list returned (the calls themselves still run)."""
    from discoverylab.env import DiscoveryWorldEnv

    events: list[str] = []
    step, reset = DiscoveryWorldEnv.step, DiscoveryWorldEnv.reset

    def stepping(self, action):  # type: ignore[no-untyped-def]
        events.append(repr(action))
        return step(self, action)

    def resetting(self, *, seed=None, options=None):  # type: ignore[no-untyped-def]
        events.append(f"reset {seed}")
        return reset(self, seed=seed, options=options)

    monkeypatch.setattr(DiscoveryWorldEnv, "step", stepping)
    monkeypatch.setattr(DiscoveryWorldEnv, "reset", resetting)
    return events
