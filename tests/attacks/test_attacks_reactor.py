"""Lazy-agent attacks on Reactor Lab (issue 21): each plays through `env.step`, measures nothing,
and must not beat the random agent (0) by more than a small margin.

The issue's row: "blind +10 Hz sweep within one reactor's presses" won 16/100 Easy seeds when
every reactor took 100 presses and ran within 2 Hz. Easy reactors now take 30 presses and run
within 1 Hz (the oracle, which computes the frequency from one reading, needs at most 23
presses, 10 on the median seed 0-99). The attacker here is
the strongest blind sweeper we know: it learns from the training instances where the unknown
crystals' frequencies fall, starts its sweep at the window (reachable within the presses) that
would have caught most of them, and presses +10 Hz until the reactor runs or burns out.
"""

from __future__ import annotations

import math
from functools import cache

import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.instances import make_instance
from discoverylab.scenarios.reactor_lab.oracle_model import plan_presses, press_count
from discoverylab.scenarios.reactor_lab.things import DEFAULT_FREQUENCY, PRESS_LIMITS, TOLERANCES
from env_driver import EnvDriver

TASK = "ReactorLab"


@cache
def unknown_frequencies(difficulty: str, seed: int) -> tuple[float, ...]:
    env = DiscoveryWorldEnv(TASK, difficulty)
    env.reset(seed=seed)
    sc = env.scenario
    assert sc is not None
    known = [r.crystal() for r in sc.reactors if r.crystal() is not None]  # type: ignore[attr-defined]
    out = tuple(c.resonance_freq for c in sc.crystals if c not in known)  # type: ignore[attr-defined]
    env.close()
    return out


def sweep_hits(start: int, presses: int, frequency: float, tolerance: float = TOLERANCES["easy"]) -> bool:
    """Whether reaching `start` and then pressing +10 Hz with the presses left passes within
    the reactor's tolerance of `frequency`."""
    left = presses - press_count(start - DEFAULT_FREQUENCY)
    k = round((frequency - start) / 10)  # the nearest setting of the sweep
    return 0 <= k <= left and abs(start + 10 * k - frequency) < tolerance


def best_start(difficulty: str, train: int) -> int:
    """The sweep start that would have activated most training instances' first unknown crystal."""
    presses = PRESS_LIMITS[difficulty]
    freqs = [unknown_frequencies(difficulty, make_instance(TASK, difficulty, "train", i).seed)[0] for i in range(train)]
    best, best_hits = DEFAULT_FREQUENCY, -1
    for start in range(0, 10000, 2):
        if press_count(start - DEFAULT_FREQUENCY) >= presses:
            continue
        hits = sum(1 for f in freqs if sweep_hits(start, presses, f))
        if hits > best_hits:
            best, best_hits = start, hits
    return best


class Sweeper(EnvDriver):
    def __init__(self, difficulty: str, seed: int) -> None:
        super().__init__(TASK, difficulty, seed, reveal=True)

    def choose_if(self, text: str) -> bool:
        options = self.obs["dialog_box"].get("dialogOptions", {})
        numbers = [int(k) for k, v in options.items() if v == text]
        if numbers:
            self.send({"chosen_dialog_option_int": numbers[0]})
        return bool(numbers)

    def press(self, step: int) -> bool:
        verb = "Increase" if step > 0 else "Decrease"
        return self.choose_if(f"{verb} frequency by {abs(step)} Hz")

    @property
    def success(self) -> bool:
        return bool(self.scenario.scorecard.completed and self.scenario.scorecard.success)


def blind_sweep(difficulty: str, seed: int, start: int) -> bool:
    """Install the first loose crystal in the first empty reactor, go to `start`, press +10 Hz
    until it runs or the task ends. True if the task succeeded."""
    p = Sweeper(difficulty, seed)
    sc = p.scenario
    known = [r for r in sc.reactors if r.crystal() is not None]
    crystal = next(c for c in sc.crystals if not any(r.crystal() is c for r in known))
    reactor = next(r for r in sc.reactors if r.crystal() is None)
    p.take(crystal)
    p.go_to(reactor)
    p.do("PUT", crystal, reactor)
    p.do("TALK", reactor)
    for step in plan_presses(start - int(reactor.frequency)):
        p.press(step)
    while not (p.terminated or reactor.activated or reactor.burnt_out):
        assert p.press(10)
    return p.success


def _attack(difficulty: str, seeds: range, train: int) -> tuple[int, int]:
    start = best_start(difficulty, train)
    return sum(blind_sweep(difficulty, seed, start) for seed in seeds), start


def _margin(n: int) -> float:
    return 2 * math.sqrt(0.02 * 0.98 / n) + 0.05


def test_attack_reactor_easy_blind_sweep_from_the_training_window() -> None:
    wins, start = _attack("easy", range(20), train=200)
    assert wins / 20 <= _margin(20), (wins, start)


@pytest.mark.slow
def test_attack_reactor_easy_blind_sweep_seeds_0_to_49() -> None:
    """(Normal and Challenge: tests/test_shortcuts.py, test_reactor_lab_blind_sweep_fails.)"""
    wins, start = _attack("easy", range(50), train=300)
    assert wins / 50 <= _margin(50), (wins, start)


def test_the_blind_sweep_wins_with_the_old_hundred_presses() -> None:
    """The attack can fail: with the old reactors (100 presses, 2 Hz) the best training window
    holds several times more of the training frequencies than now (the issue measured 16/100)."""
    freqs = [unknown_frequencies("easy", make_instance(TASK, "easy", "train", i).seed)[0] for i in range(200)]

    def caught(presses: int, tolerance: float) -> int:
        starts = [s for s in range(0, 10000, 2) if press_count(s - DEFAULT_FREQUENCY) < presses]
        return max(sum(sweep_hits(s, presses, f, tolerance) for f in freqs) for s in starts)

    old, now = caught(100, 2.0), caught(PRESS_LIMITS["easy"], TOLERANCES["easy"])
    assert old >= 20 and old >= 3 * now, (old, now)
