"""It's (not) Rocket Science! rules: generated data, instrument readings, devices, scoring."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.scenarios.rocket_science.scenario import RocketScience
from discoverylab.scenarios.rocket_science.things import TEST_TANK_L, fuel_litres
from world_kit import moves_first


def _env(difficulty: str, seed: int = 0) -> tuple[DiscoveryWorldEnv, RocketScience]:
    env = DiscoveryWorldEnv("RocketScience", difficulty)
    env.reset(seed=seed)
    assert isinstance(env.scenario, RocketScience)
    return env, env.scenario


def _step(env: DiscoveryWorldEnv, action: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    _, _, _, _, info = env.step(action)
    return info["observation"], env.scorecard(reveal=True)


def _say(env: DiscoveryWorldEnv, obs: dict[str, Any], option: str) -> tuple[dict[str, Any], dict[str, Any]]:
    options = obs["dialog_box"]["dialogOptions"]
    number = next(int(k) for k, v in options.items() if v == option)
    return _step(env, {"chosen_dialog_option_int": number})


def _item(card: dict[str, Any], name: str) -> int:
    return int(next(i["score"] for i in card["scoreCard"] if i["name"] == name))


@pytest.mark.parametrize("difficulty", ["easy", "normal", "challenge"])
@pytest.mark.parametrize("seed", range(5))
def test_generated_fuels_have_their_kinds_and_the_speed_is_enterable(difficulty: str, seed: int) -> None:
    _, sc = _env(difficulty, seed)
    assert sc.speed < 24000
    for letter, kind in ((sc.answer, "ok"), (sc.low_thrust, "low"), (sc.too_much, "much")):
        fuel = sc.fuels[letter]
        litres = fuel_litres(fuel, sc.dry_mass, sc.speed)
        twr = fuel.thrust / ((sc.dry_mass + litres * fuel.density) * sc.gravity)
        assert {"ok": litres <= 10000 and twr > 1, "low": litres <= 10000 and twr <= 1,
                "much": litres > 10000 and twr > 1}[kind]  # fmt: skip
    assert sorted(sc.fuels) == ["A", "B", "C"]


def test_easy_states_the_radius_and_leaves_the_gravity_to_the_pendulum() -> None:
    """Easy named a real body ("exactly those of Europa"): its radius and gravity were textbook
    facts, and a lazy agent that kept each body's numbers from public episodes filled every
    sealed sheet. Easy now states a drawn radius; the mass, hence the gravity, is drawn as in
    Normal and measured with the pendulum (its items score in Easy too)."""
    scenarios = [_env("easy", seed)[1] for seed in range(8)]
    assert len({round(sc.gravity, 3) for sc in scenarios}) == 8
    for sc in scenarios:
        text = sc.description()
        assert f"radius of Planet X is {int(sc.radius)} km" in text and "exactly those of" not in text
        assert f"altitude of {int(sc.height)} km" in text
        assert sc.speed == pytest.approx(math.sqrt(6.6743e-11 * sc.mass / ((sc.radius + sc.height) * 1000)))
    env, sc = _env("easy", 0)
    _step(env, {"action": "TELEPORT_TO_LOCATION", "arg1": "control room"})
    _step(env, {"action": "TELEPORT_TO_OBJECT", "arg1": sc.pendulum.uuid})
    _step(env, {"action": "ACTIVATE", "arg1": sc.pendulum.uuid})
    _, card = _step(env, {"action": "READ", "arg1": sc.pendulum.uuid})
    assert _item(card, "Activate pendulum") == 1 and _item(card, "Observe pendulum") == 1
    assert "Measure light angle" not in {i["name"] for i in card["scoreCard"]}


def test_easy_orbit_heights_are_drawn_per_instance() -> None:
    """A fixed 400 km made each body's speed a constant to remember from earlier episodes."""
    heights = {_env("easy", seed)[1].height for seed in range(8)}
    assert len(heights) >= 6 and all(100 <= h <= 10000 for h in heights)


def test_speed_square_reads_the_row_angle_and_fails_indoors() -> None:
    env, sc = _env("normal", 1)
    square = sc.square.uuid
    obs, _ = _step(env, {"action": "TELEPORT_TO_LOCATION", "arg1": "northern observation post"})
    obs, card = _step(env, {"action": "USE", "arg1": square, "arg2": square})
    assert f"are {sc.angle(1)} millidegrees" in obs["lastActionMessage"]
    assert _item(card, "Measure light angle") == 1
    obs, _ = _step(env, {"action": "TELEPORT_TO_LOCATION", "arg1": "control room"})
    obs, card = _step(env, {"action": "USE", "arg1": square, "arg2": square})
    assert "open sky" in obs["lastActionMessage"]
    assert _item(card, "Measure light angle") == 1
    # The radius follows from two rows 30 m apart (Eratosthenes).
    dtheta = (sc.angle(31) - sc.angle(1)) / 1000
    assert 30 * 360 / (2 * math.pi * dtheta) / 1000 == pytest.approx(sc.radius, rel=1e-3)


def test_pendulum_counts_only_while_activated() -> None:
    env, sc = _env("normal", 0)
    pendulum = sc.pendulum
    _step(env, {"action": "TELEPORT_TO_LOCATION", "arg1": "control room"})
    _step(env, {"action": "TELEPORT_TO_OBJECT", "arg1": pendulum.uuid})
    obs, _ = _step(env, {"action": "READ", "arg1": pendulum.uuid})
    assert "0.0 oscillations in 0 ticks." in obs["lastActionMessage"]
    _step(env, {"action": "ACTIVATE", "arg1": pendulum.uuid})
    for _ in range(9):
        obs, card = _step(env, {"action": "READ", "arg1": pendulum.uuid})
    match = re.search(r"([\d.]+) oscillations in (\d+) ticks", obs["lastActionMessage"])
    assert match is not None
    count, ticks = float(match[1]), int(match[2])
    assert count == round(ticks / (2 * math.pi * math.sqrt(1 / sc.gravity)), 3)
    assert _item(card, "Activate pendulum") == 1 and _item(card, "Observe pendulum") == 1


def test_load_cell_shows_density_and_flush_then_fire_cannot_crash() -> None:
    env, sc = _env("challenge", 0)
    cell = sc.load_cell
    _step(env, {"action": "TELEPORT_TO_LOCATION", "arg1": "thrust test site"})
    for _ in range(3):
        _step(env, {"action": "MOVE_DIRECTION", "arg1": "east"})
    _step(env, {"action": "TELEPORT_TO_OBJECT", "arg1": cell.uuid})
    obs, card = _step(env, {"action": "TALK", "arg1": cell.uuid})
    assert _item(card, "Use load cell interface") == 1
    obs, _ = _say(env, obs, "Refuel (currently empty)")
    obs, _ = _say(env, obs, "Fill rocket with 5000L of fuel A")
    assert cell.props["weight"] == pytest.approx(sc.dry_mass + sc.fuels["A"].density * TEST_TANK_L)
    obs, _ = _say(env, obs, "Refuel")
    obs, _ = _say(env, obs, "Flush fuel from test rocket's tanks")
    obs, _ = _say(env, obs, "[Back]")
    assert "Fire!" not in obs["dialog_box"]["dialogOptions"].values()
    obs, _ = _step(env, {"chosen_dialog_option_int": 1})  # keeps ticking without a crash
    assert cell.props["fuel"] == "None"


def test_objects_have_proper_names() -> None:
    _, sc = _env("challenge", 0)
    names = {o.name for o in sc.world.objects.values()}
    assert {"fuel tank (A)", "fuel tank (B)", "fuel tank (C)", "computer", "load cell interface",
            "1-meter pendulum", "rocketry book", "speed square"} <= names  # fmt: skip


def _launch(env: DiscoveryWorldEnv, sc: RocketScience, speed: int) -> dict[str, Any]:
    terminal = sc.terminal
    _step(env, {"action": "TELEPORT_TO_LOCATION", "arg1": "control room"})
    _step(env, {"action": "TELEPORT_TO_OBJECT", "arg1": terminal.uuid})
    obs, _ = _step(env, {"action": "TALK", "arg1": terminal.uuid})
    obs, _ = _say(env, obs, "Change target orbital velocity.")
    terminal.props["orbitSpeed"] = speed  # what the +/- presses would reach
    obs, _ = _say(env, obs, "[Back]")
    obs, _ = _say(env, obs, "Start countdown!")
    _, card = _say(env, obs, "Confirm")
    return card


@pytest.mark.parametrize(("offset", "success"), [(0, True), (3, False)])
def test_launch_decides_the_task(offset: int, success: bool) -> None:
    env, sc = _env("normal", 2)
    card = _launch(env, sc, round(sc.speed) + offset)
    assert card["completed"] is True
    assert card["completedSuccessfully"] is success
    assert _item(card, "Enter correct orbit velocity") == int(success)
    assert _item(card, "Use launch terminal") == 1


def test_challenge_wrong_fuel_fails_even_with_the_right_speed() -> None:
    env, sc = _env("challenge", 1)
    sc.terminal.props.update(fuel=sc.low_thrust, fuelAmount=round(sc.litres))
    card = _launch(env, sc, round(sc.speed))
    assert card["completed"] is True and card["completedSuccessfully"] is False
    assert _item(card, "Enter correct orbit velocity") == 1
    assert _item(card, "Enter correct fuel type and amount") == 0


def test_the_pendulum_at_rest_skipping_its_text_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """An off pendulum at rest returns at once instead of writing its resting text again
    (session 16). Played against the plain tick: the pendulum switched on and off and read in
    between, its document set by other code while off, its count set while off; the oracle's
    episodes; random RL episodes at Normal and Challenge. Every step's text, observation and
    scorecard must match, and the quick return must have been taken."""
    import numpy as np

    from discoverylab.bench.episode import run_episode
    from discoverylab.rl import make_rl_env
    from discoverylab.scenarios.rocket_science.things import Pendulum

    quick = Pendulum.tick

    def plain_tick(self: Pendulum) -> None:  # before session 16
        self.ticks = self.ticks + 1 if self.activated else 0
        document = f"{round(self.ticks / self.period, 3)} oscillations in {self.ticks} ticks."
        if document != self.document:
            self.document = document
            self.text_changed()

    rests: list[bool] = []

    def counted(self: Pendulum) -> None:
        rests.append(not self.activated and self.ticks == 0 and self.document is self._resting)
        quick(self)

    def play() -> list[object]:
        env, sc = _env("normal", 2)
        pendulum = sc.pendulum.uuid
        out: list[object] = []
        _step(env, {"action": "TELEPORT_TO_LOCATION", "arg1": "control room"})
        _step(env, {"action": "TELEPORT_TO_OBJECT", "arg1": pendulum})
        for turn in range(4):
            for action in ("READ", "ACTIVATE", "READ", "READ", "DEACTIVATE", "READ", "READ"):
                out.append(_step(env, {"action": action, "arg1": pendulum}))
            if turn == 1:
                sc.pendulum.document = "a note"  # other code writes its text while it is off
            if turn == 2:
                sc.pendulum.ticks = 5  # or its count
            out.append(_step(env, {"action": "READ", "arg1": pendulum}))
            out.append(sc.pendulum.describe())
        assert "a note" in str(out) and "oscillations in 1 ticks" in str(out)  # (the pendulum was reached)
        for seed in (1, 2):
            _, log = run_episode("RocketScience", "normal", seed, "oracle")
            out += [*log[:-1], log[-1]["scorecard"]]
        for difficulty in ("normal", "challenge"):
            rl = make_rl_env("RocketScience", difficulty, max_steps=10**9, info="full")
            _, info = rl.reset(seed=3)
            rng = np.random.default_rng(3)
            for i in range(300):
                obs, reward, term, trunc, info = rl.step(moves_first(rng, info["action_mask"], i))
                out.append((reward, {k: v.tobytes() for k, v in obs.items()}, info["observation"]))
                if term or trunc:
                    _, info = rl.reset(seed=50 + i)
        return out

    monkeypatch.setattr(Pendulum, "tick", counted)
    resting = play()
    assert any(rests)
    monkeypatch.setattr(Pendulum, "tick", plain_tick)
    assert play() == resting
