"""Lazy-agent attacks on Rocket Science: answers that skip measuring the planet.

The discovery is the planet's radius (light angles at the two posts) and gravity (the pendulum),
hence the orbital speed; Easy states the radius, so the gravity (the pendulum) is its discovery.

- Reading the terminal: Easy/Normal preset the fuel, and the terminal showed the amount the
  launch needs (the rocket equation of the orbit speed). Testing that fuel once on the load cell
  (density, mass flow, thrust) turned the amount back into the speed: 71 Normal and 83 Easy seeds
  of 0-99 launched without a single measurement of the planet. The preset is a full tank now.
- The load cell's three fuel kinds (one fits the tank, one would need more than the tank, one
  lacks thrust) bound the speed: the bound is about as wide as the speed itself; with the
  gravity from the pendulum too (the radius skipped) still about 1,300 m/s (median).
- Remembering: Easy orbited at 400 km around one of 13 named real bodies, so each body had one
  speed, to be copied from an earlier episode's gold; then, with the height drawn, each body's
  radius and G*M (textbook facts) still gave the speed. Easy now states a drawn radius and draws
  the mass as Normal does.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.instances import make_instance
from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.answer_forms import answer_form
from discoverylab.scenarios.rocket_science.oracle import Gen, RocketOracle
from discoverylab.scenarios.rocket_science.things import ROCKET_TANK_L, TEST_TANK_L, shown_thrust
from discoverylab.scoring.answer_sheet import grade
from dw_helpers import drive

TASK = "RocketScience"
SAMPLE = range(4)  # before the fix the terminal attack won 3 of these 4 Normal seeds


class TerminalReader(RocketOracle):
    """Reads the preset fuel and amount off the terminal, tests that fuel once, inverts the
    rocket equation for the speed and launches: no light angle, no pendulum."""

    def run(self) -> Gen:
        yield from self.act(ot.act("TELEPORT_TO_LOCATION", "control room"))
        computer = self.uuid("computer")
        yield from self.act(ot.act("TELEPORT_TO_OBJECT", computer))
        yield from self.act(ot.act("TALK", computer))
        text = self.dialog()
        fuel = ot.need(re.search(r"Fuel type is (\w+)", text), "the preset fuel")[1]
        amount = float(ot.need(re.search(r"Fuel amount is (\d+)L", text), "the preset amount")[1]) + 0.5
        yield from self.say("Exit")
        dry = yield from self.open_load_cell()
        yield from self.say(next(o for o in self.options() if o.startswith("Refuel")))
        yield from self.say(f"Fill rocket with 5000L of fuel {fuel}")
        full, _, _ = self.numbers()
        yield from self.say("Fire!")
        yield from self.say("Test in progress...")
        weight, thrust, duration = self.numbers()
        if "Abort!" in self.options():
            yield from self.say("Abort!")
        yield from self.say("[Back]" if "[Back]" in self.options() else "Exit")
        if "Exit" in self.options():
            yield from self.say("Exit")
        density = (full - dry) / TEST_TANK_L
        ve = thrust * 1000 / ((full - weight) / max(duration, 1))
        speed = ve * math.log(1 + amount * density / dry)
        yield from self.launch(min(round(speed), 24_999), None)


def play(difficulty: str, seed: int) -> bool:
    """One episode of `TerminalReader` through `env.step`; True if the launch succeeded."""
    env = DiscoveryWorldEnv(TASK, difficulty)
    _, info = env.reset(seed=seed)
    info = drive(env, TerminalReader(info["observation"]).run(), info)
    return bool(info["scorecard"]["completedSuccessfully"])


@pytest.mark.parametrize("difficulty", ["easy", "normal"])
def test_attack_read_the_fuel_amount_off_the_terminal(difficulty: str) -> None:
    """The preset amount is a full tank: it says nothing about the speed."""
    assert sum(play(difficulty, seed) for seed in SAMPLE) == 0


@pytest.mark.slow
@pytest.mark.parametrize("difficulty", ["easy", "normal"])
def test_attack_read_the_fuel_amount_off_the_terminal_seeds_0_to_99(difficulty: str) -> None:
    assert sum(play(difficulty, seed) for seed in range(100)) == 0


def _scenario(difficulty: str, seed: int) -> Any:
    env = DiscoveryWorldEnv(TASK, difficulty)
    env.reset(seed=seed)
    return env


def test_the_preset_amount_is_the_same_full_tank_on_every_seed() -> None:
    for difficulty in ("easy", "normal"):
        amounts = {_scenario(difficulty, seed).scenario.terminal.props["fuelAmount"] for seed in range(6)}
        assert amounts == {ROCKET_TANK_L}, difficulty


def _bound_midpoint(sc: Any) -> float:
    """The middle of the speeds the three fuel kinds allow, from the load cell's numbers alone."""

    def reach(letter: str) -> float:  # the speed a full tank of this fuel gives
        fuel = sc.fuels[letter]
        return shown_thrust(fuel) * 1000 / fuel.mass_flow * math.log(1 + ROCKET_TANK_L * fuel.density / sc.dry_mass)

    upper = min(reach(sc.answer), reach(sc.low_thrust))  # both fit the tank
    return (reach(sc.too_much) + upper) / 2  # ... and the third does not


def test_attack_bound_the_speed_with_the_fuel_kinds() -> None:
    hits = 0
    for seed in range(10):
        env = _scenario("normal", seed)
        sc = env.scenario
        hits += abs(_bound_midpoint(sc) - sc.speed) < 2
        env.close()
    assert hits == 0


def _speed_bounds(sc: Any, gravity: float) -> tuple[float, float]:
    """The speeds the fuel kinds allow once the gravity is known: the too-heavy fuel cannot reach
    the speed with a full tank, the others can; the working fuel lifts the fuelled rocket, the
    weak one does not (from the load cell's numbers and the gravity alone)."""
    fuels, dry = sc.fuels, sc.dry_mass

    def ve(letter: str) -> float:
        return float(shown_thrust(fuels[letter]) * 1000 / fuels[letter].mass_flow)

    def lift_limit(letter: str) -> float:  # the speed at which the fuelled rocket weighs its thrust
        thrust = shown_thrust(fuels[letter]) * 1000
        return ve(letter) * math.log(thrust / (gravity * dry)) if thrust > gravity * dry else 0.0

    def reach(letter: str) -> float:
        return ve(letter) * math.log(1 + ROCKET_TANK_L * fuels[letter].density / dry)

    low = max(reach(sc.too_much), lift_limit(sc.low_thrust))
    return low, min(reach(sc.answer), reach(sc.low_thrust), lift_limit(sc.answer))


def test_attack_pendulum_and_load_cell_without_the_radius() -> None:
    """Combined: the gravity (the pendulum, taken exactly here) adds the thrust conditions to the
    fuel kinds' bounds; the radius (the light angles) is skipped. The speed stays hundreds of m/s
    wide (median about 1,300 m/s on seeds 0-99)."""
    hits = 0
    for seed in range(10):
        env = _scenario("normal", seed)
        low, high = _speed_bounds(env.scenario, env.scenario.gravity)
        hits += abs((low + high) / 2 - env.scenario.speed) < 2
        env.close()
    assert hits == 0


def test_attack_remember_g_m_from_public_easy_instances() -> None:
    """Easy states the radius and the height: a lazy agent takes G*M from the public training
    instance nearest in radius (v^2 (R + h) of its gold) and computes this instance's speed, no
    pendulum. (While Easy named a real body, remembering each body's numbers won every sheet.)"""
    remembered: list[tuple[float, float]] = []  # (radius km, G*M)
    for index in range(40):
        env = _scenario("easy", make_instance(TASK, "easy", "train", index).seed)
        sc = env.scenario
        remembered.append((sc.radius, sc.speed**2 * (sc.radius + sc.height) * 1000))
        env.close()
    hits = launches = 0
    for index in range(20):
        env = _scenario("easy", make_instance(TASK, "easy", "dev", index).seed)
        sc = env.scenario
        gm = min(remembered, key=lambda r: abs(r[0] - sc.radius))[1]
        guess = math.sqrt(gm / ((sc.radius + sc.height) * 1000))
        launches += abs(guess - sc.speed) < 2
        form = answer_form(env)
        hits += grade(form, {"orbit_speed_m_s": guess}, {"orbit_speed_m_s": sc.speed}).score > 0
        env.close()
    assert hits <= 1 and launches <= 1, (hits, launches)
