"""The Rocket Science oracle: measures like an agent would and computes the launch settings.

Easy: the task states the radius; a 50-tick pendulum reading gives g, hence the orbital speed.
Normal/Challenge: light angles at the two observation posts (30 m apart) give the radius too. Challenge: the
load cell gives each fuel's density (fill weight), mass flow (weight loss per tick) and thrust;
the rocket equation gives the litres, the thrust-to-weight ratio rules out the weak fuel.
"""

from __future__ import annotations

import math
import re
from collections.abc import Generator
from typing import Any

from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import KnowledgeReport
from discoverylab.scenarios.rocket_science.things import ROCKET_TANK_L, TEST_TANK_L

Gen = Generator[ot.Action, ot.Obs, Any]
_NUM = r"(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)"


class RocketOracle:
    def __init__(self, obs: ot.Obs) -> None:
        self.obs = obs
        self.text = ot.task_text(obs)
        self.found: dict[str, Any] = {}  # what was measured or worked out, for the report
        self.fuels: dict[str, tuple[float, float]] = {}  # letter -> (thrust-to-weight, litres)

    def act(self, action: ot.Action) -> Gen:
        self.obs = yield from ot.checked(action)
        return self.obs

    def say(self, option: str) -> Gen:
        options = self.obs["dialog_box"]["dialogOptions"]
        self.obs = yield {"chosen_dialog_option_int": ot.option_index(options, option)}
        return self.obs

    def options(self) -> list[str]:
        return list(self.obs["dialog_box"].get("dialogOptions", {}).values())

    def dialog(self) -> str:
        return str(self.obs["dialog_box"].get("dialogIn", ""))

    def uuid(self, name: str) -> int:
        for entry in self.obs["inventoryObjects"]:
            if entry["name"] == name:
                return int(entry["uuid"])
        return int(ot.require(ot.find_nearby(self.obs, name), name)["uuid"])

    def run(self) -> Gen:
        height = float(ot.need(re.search(r"altitude of (\d+) km", self.text), "the orbit height")[1]) * 1000
        yield from self.act(ot.act("READ", self.uuid("rocketry book")))
        stated = re.search(r"radius of Planet X is (\d+) km", self.text)  # Easy
        speed, gravity = yield from self.measure(height, float(stated[1]) * 1000 if stated else None)
        self.found |= {"gravity": gravity, "orbit_height_km": height / 1000, "orbit_speed": speed}
        fuel: tuple[str, int] | None = None
        if "load cell interface" in self.text:
            fuel = yield from self.test_fuels(speed, gravity)
        yield from self.launch(round(speed), fuel)
        return self.report(fuel)

    def report(self, fuel: tuple[str, int] | None) -> KnowledgeReport:
        f = self.found
        lines = [
            f"The planet's radius is about {f['radius_km']:.1f} km.",
            f"The surface gravity is about {f['gravity']:.2f} m/s^2.",
        ]
        if "period" in f:
            lines.append(f"The 1-meter pendulum's period is about {f['period']:.2f} s.")
        lines.append(f"The orbit speed at {f['orbit_height_km']:g} km is about {f['orbit_speed']:.1f} m/s.")
        for letter, (twr, litres) in sorted(self.fuels.items()):
            if twr <= 1:
                lines.append(f"Fuel {letter} has a thrust-to-weight ratio of at most 1 ({twr:.2f}).")
            elif litres > ROCKET_TANK_L:
                why = " (its test load burnt out at once: far too light)" if math.isinf(litres) else ""
                lines.append(f"Fuel {letter} would need more than {ROCKET_TANK_L:,} L{why}.")
        if fuel is not None:
            lines.append(f"Use fuel {fuel[0]}. About {fuel[1]} L of fuel {fuel[0]}.")
            f = f | {"fuel": fuel[0], "litres": fuel[1]}
        return KnowledgeReport(" ".join(lines), dict(f))

    def measure(self, height: float, radius: float | None = None) -> Gen:
        """(orbital speed, gravity) from the pendulum and, unless `radius` (m) is stated, the
        light angles at the two posts."""
        yield from self.act(ot.act("TELEPORT_TO_LOCATION", "control room"))
        pendulum = self.uuid("1-meter pendulum")
        yield from self.act(ot.act("TELEPORT_TO_OBJECT", pendulum))
        yield from self.act(ot.act("ACTIVATE", pendulum))
        angles = []
        for post in ("northern observation post", "southern observation post") if radius is None else ():
            yield from self.act(ot.act("TELEPORT_TO_LOCATION", post))
            obs = yield from self.act(ot.act("USE", self.uuid("speed square"), self.uuid("speed square")))
            angles.append(
                float(ot.need(re.search(rf"are {_NUM} milli", obs["lastActionMessage"]), "angle")[1])
            )
        yield from self.act(ot.act("TELEPORT_TO_LOCATION", "control room"))
        yield from self.act(ot.act("TELEPORT_TO_OBJECT", pendulum))
        for _ in range(200):
            obs = yield from self.act(ot.act("READ", pendulum))
            match = ot.need(
                re.search(rf"{_NUM} oscillations in (\d+) ticks", obs["lastActionMessage"]), "pendulum"
            )
            count, ticks = float(match[1]), int(match[2])
            if ticks >= 50 and count > 0:
                break
        gravity = 4 * math.pi**2 / (ticks / count) ** 2
        if radius is None:
            dtheta = abs(angles[1] - angles[0]) / 1000  # degrees over the 30 m between the posts
            radius = 30 * 360 / (2 * math.pi * dtheta)
        self.found |= {"radius_km": radius / 1000, "period": ticks / count}
        return radius * math.sqrt(gravity / (radius + height)), gravity

    def numbers(self) -> tuple[float, float, int]:
        text = self.dialog()
        weight = float(ot.need(re.search(rf"Current weight: {_NUM} kg", text), "weight")[1])
        thrust = float(ot.need(re.search(rf"Generated thrust: {_NUM} kN", text), "thrust")[1])
        duration = int(ot.need(re.search(r"Duration: (\d+) ticks", text), "duration")[1])
        return weight, thrust, duration

    def open_load_cell(self) -> Gen:
        """Walk to the thrust test site's load cell and talk to it; returns the empty rocket's
        weight it shows (the dry mass)."""
        yield from self.act(ot.act("TELEPORT_TO_LOCATION", "thrust test site"))
        for _ in range(8):  # the test stand is east of the tanks
            if ot.find_nearby(self.obs, "load cell interface"):
                break
            yield from self.act(ot.act("MOVE_DIRECTION", "east"))
        cell = self.uuid("load cell interface")
        yield from self.act(ot.act("TELEPORT_TO_OBJECT", cell))
        yield from self.act(ot.act("TALK", cell))
        dry, _, _ = self.numbers()
        return dry

    def test_fuels(self, speed: float, gravity: float) -> Gen:
        dry = yield from self.open_load_cell()
        best: tuple[float, str, int] | None = None
        for letter in "ABC":
            refuel = next(o for o in self.options() if o.startswith("Refuel"))
            yield from self.say(refuel)
            yield from self.say(f"Fill rocket with 5000L of fuel {letter}")
            full, _, _ = self.numbers()
            yield from self.say("Fire!")
            yield from self.say("Test in progress...")
            weight, thrust, duration = self.numbers()
            if "Abort!" in self.options():
                yield from self.say("Abort!")
            while not any(o.startswith("Refuel") for o in self.options()):
                opts = self.options()
                yield from self.say("[Back]" if "[Back]" in opts else "Refresh")
            if duration < 1 or weight <= dry or thrust <= 0:
                # Burnt out at once: the whole test load went in under two ticks, so this fuel
                # is far too light to be carried in the amount a launch needs (the report says so).
                self.fuels[letter] = (math.inf, math.inf)
                continue
            density = (full - dry) / TEST_TANK_L
            flow = (full - weight) / duration
            ve = thrust * 1000 / flow
            litres = dry * (math.exp(min(speed / ve, 700)) - 1) / density
            twr = thrust * 1000 / ((dry + litres * density) * gravity)
            self.fuels[letter] = (twr, litres)
            if litres <= ROCKET_TANK_L and twr > 1:
                margin = min(twr - 1, (ROCKET_TANK_L - litres) / ROCKET_TANK_L)
                if best is None or margin > best[0]:
                    best = (margin, letter, round(litres))
        yield from self.say("Exit")
        chosen = ot.need(best, "a usable fuel")
        return chosen[1], chosen[2]

    def launch(self, speed: int, fuel: tuple[str, int] | None) -> Gen:
        yield from self.act(ot.act("TELEPORT_TO_LOCATION", "control room"))
        computer = self.uuid("computer")
        yield from self.act(ot.act("TELEPORT_TO_OBJECT", computer))
        yield from self.act(ot.act("TALK", computer))
        yield from self.say("Change target orbital velocity.")
        yield from self.step_to("orbitSpeed", r"Orbital velocity currently set to (\d+)", speed,
                                "Increase target velocity by {} m/s", "Decrease target velocity by {} m/s")  # fmt: skip
        yield from self.say("[Back]")
        if fuel is not None:
            yield from self.say("Change fuel type.")
            yield from self.say(f"Fuel {fuel[0]}")
            yield from self.say("[Back]")
            yield from self.say("Change fuel amount.")
            yield from self.step_to("fuelAmount", r"Fuel amount currently set to (\d+)", fuel[1],
                                    "Increase fuel by {}L", "Decrease fuel by {}L")  # fmt: skip
            yield from self.say("[Back]")
        yield from self.say("Start countdown!")
        yield from self.say("Confirm")

    def step_to(self, _var: str, pattern: str, target: int, up: str, down: str) -> Gen:
        for _ in range(200):
            now = int(ot.need(re.search(pattern, self.dialog()), _var)[1])
            delta = target - now
            if delta == 0:
                return
            step = next(s for s in (1000, 100, 10, 1) if abs(delta) >= s)
            yield from self.say((up if delta > 0 else down).format(step))
        raise ot.OracleFailure(f"could not set {_var} to {target}")


def solve(obs: ot.Obs) -> Gen:
    return (yield from RocketOracle(obs).run())
