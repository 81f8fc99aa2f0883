"""It's (not) Rocket Science! pieces: the speed square (light angle of the star), the 1-meter
pendulum, the launch terminal and the load-cell interface (NPC devices), fuel tanks, the planet
table and the propellant generator.

Physics: one tick is one second; the pendulum's period is 2*pi*sqrt(1 m / g); the star's rays
meet the ground at an angle that grows by 360 * 0.031 km / (2 * pi * R) degrees over the 31
rows of the map (Eratosthenes); the orbit speed at height h is sqrt(G * M / (R + h)).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from discoverylab.world.devices import Device
from discoverylab.world.instruments import Instrument
from discoverylab.world.materials import material
from discoverylab.world.objects import ActionResult, Container, Layer, WorldObject, text_state

if TYPE_CHECKING:
    from discoverylab.world.agent import Agent
    from discoverylab.world.world import World

G = 6.67430e-11
LIGHT_ANGLE = "light_angle"
ROCKET_TANK_L = 10000
TEST_TANK_L = 5000
BOOK = (
    "Rocketry formula sheet\n"
    "- Escape velocity: v_e = sqrt(2 * G * M / r)\n"
    "- Orbital speed of a circular orbit at height h: v = sqrt(G * M / (R + h))\n"
    "- Orbital period: T = 2 * pi * sqrt((R + h)^3 / (G * M))\n"
    "- Surface gravity: g = G * M / R^2\n"
    "- Period of a simple pendulum of length L: T = 2 * pi * sqrt(L / g)\n"
    "- Centripetal acceleration: a = v^2 / r; centripetal force: F = m * v^2 / r\n"
    "- Thrust-to-weight ratio: TWR = F / (m * g)\n"
    "- Specific impulse: Isp = F / (mdot * g)\n"
    "- Rocket equation: delta_v = Isp * g * ln(m0 / m1)\n"
    "- Gravitational constant: G = 6.67430e-11 m^3 kg^-1 s^-2"
)


def orbit_speed(mass: float, radius_km: float, height_km: float) -> float:
    return math.sqrt(G * mass / ((radius_km + height_km) * 1000))


@dataclass(frozen=True, slots=True)
class Fuel:
    density: float  # kg/L
    mass_flow: float  # kg/s
    thrust: float  # N


def fuel_litres(fuel: Fuel, dry_mass: float, speed: float) -> float:
    """Litres of `fuel` that give the rocket the delta-v `speed` (rocket equation)."""
    ve = fuel.thrust / fuel.mass_flow
    return dry_mass * (math.exp(speed / ve) - 1) / fuel.density


def sample_fuels(rng: np.random.Generator, dry_mass: float, speed: float, g: float) -> list[Fuel] | None:
    """An adequate fuel, one without enough thrust and one needing too much fuel (None if the
    grid has no fuel of some kind for these parameters)."""
    density = np.logspace(-2.5, 2, 70)
    mass_flow = 1 + 10 * np.linspace(0, 1000, 200)
    thrust = 1 + 1e4 * np.linspace(0, 1500, 200)
    # The original's meshgrid(mass_flow, thrust, density) grid, shape (thrust, mass flow,
    # density), flattened in C order. A fuel fits the tank iff its density is at least
    # (m0 - dry) / 10,000 L, a suffix of the (increasing) density axis, so each of the three
    # kinds is a run of density indices per (thrust, mass flow) cell: sample a flat index
    # uniformly among the matching ones without building the 2.8 million-cell grid.
    th, mf = thrust[:, None], mass_flow[None, :]
    with np.errstate(over="ignore", invalid="ignore"):
        m0 = dry_mass * np.exp(speed / (th / mf))
        lifts = (th / (m0 * g) > 1).ravel()
    first_fit = np.searchsorted(density, ((m0 - dry_mass) / ROCKET_TANK_L).ravel(), side="left")
    fit_count = len(density) - first_fit
    kinds = (  # (cells' matching counts, first matching density index)
        (np.where(lifts, fit_count, 0), first_fit),
        (np.where(~lifts, fit_count, 0), first_fit),
        (np.where(lifts, first_fit, 0), np.zeros_like(first_fit)),
    )
    fuels = []
    for counts, start in kinds:
        cumulative = np.cumsum(counts)
        total = int(cumulative[-1])
        if total == 0:
            return None
        pick = int(rng.integers(0, total))
        cell = int(np.searchsorted(cumulative, pick, side="right"))
        k = int(start[cell]) + pick - (int(cumulative[cell]) - int(counts[cell]))
        i, j = divmod(cell, len(mass_flow))
        fuels.append(Fuel(float(density[k]), float(mass_flow[j]), float(thrust[i])))
    return fuels


class SpeedSquare(Instrument):
    """Reads the angle of the star's rays on the holder's tile (open sky ground only)."""

    def __init__(self, world: World) -> None:
        super().__init__(world, "speed square", "speed square", [material("metal")], sprite="tape")
        self.readings: set[float] = set()

    def use_with(self, agent: Agent, target: WorldObject) -> ActionResult:
        x, y = self.location()
        for layer in Layer:  # bottom layer first
            for obj in self.world.layer_at(x, y, layer):
                if LIGHT_ANGLE in obj.props:
                    value = obj.props[LIGHT_ANGLE]
                    self.readings.add(value)
                    unit = "millidegree" if value < 2 else "millidegrees"
                    return ActionResult(
                        True,
                        f"The rays coming from Planet X's star are {value} {unit} from the ground at the current "
                        "location.\n",
                        True,
                    )
        return ActionResult(False, "Use on open sky ground tile to measure light angle.\n")


class Pendulum(WorldObject):
    """Counts its oscillations while activated (its tick counter resets while it is off)."""

    needs_tick = True
    movable = False
    passable = False
    activatable = True
    readable = True

    def __init__(self, world: World, period: float) -> None:
        super().__init__(world, "1-meter pendulum", "pendulum", [material("metal")], sprite="pendulum")
        self.period = period
        self.ticks = 0
        self._resting: str | None = None  # the document an off tick left, while it stands
        self.tick()

    def tick(self) -> None:
        if not self.activated and self.ticks == 0 and self.document is self._resting:
            return  # off and at rest (most ticks): the text it would write is the one it shows
        self.ticks = self.ticks + 1 if self.activated else 0
        document = f"{round(self.ticks / self.period, 3)} oscillations in {self.ticks} ticks."
        if document != self.document:
            self.document = document
            self.text_changed()
        self._resting = None if self.activated else self.document

    @text_state("activated", "document")
    def describe_state(self) -> str:
        if not self.activated:
            return f"{self.name} (deactivated)"
        return f"{self.name} (activated) => {self.document}"


class FuelTank(Container):
    """A propellant tank (scenery; the load cell fills the test rocket from it)."""

    movable = False
    passable = False
    is_open = False


STATUS = "\n\nOrbital velocity currently set to {orbitSpeed} m/s.\nFuel type is {fuel}.\nFuel amount is {fuelAmount}L."
STEPS = (1000, 100, 10, 1)


class LaunchTerminal(Device):
    """The launch computer: set the orbital velocity (and, in Challenge, the fuel), then
    confirm the launch (state `launchConfirmed`)."""

    def __init__(self, world: World, fuel: str, amount: int, choose_fuel: bool) -> None:
        super().__init__(world, "computer", "computer", [material("metal")], sprite="computer",
                         variables={"orbitSpeed": 0, "fuel": fuel, "fuelAmount": amount})  # fmt: skip
        self.add_node("root", "-= Launch Terminal - Main menu =-" + STATUS, states_to_add=("interactedWith",))
        self.add_option("root", "Change target orbital velocity.", "velocity")
        if choose_fuel:
            self.add_option("root", "Change fuel type.", "fuel_type")
            self.add_option("root", "Change fuel amount.", "fuel_amount")
        self.add_option("root", "Start countdown!", "countdown")
        self.add_option("root", "Exit", "exit")
        self.add_node("velocity", "-= Launch Terminal - Setting Orbital Velocity =-\n\nOrbital velocity currently "
                      "set to {orbitSpeed} m/s.\n(Must be between 0 and 25,000 m/s).")  # fmt: skip
        self._steps("velocity", "orbitSpeed", "Increase target velocity by {} m/s", "Decrease target velocity by {} m/s",
                    (0, 25000))  # fmt: skip
        self.add_node(
            "fuel_type", "-= Launch Terminal - Setting Fuel Type =-\n\nCurrent fuel type is {fuel}."
        )
        for letter in "ABC":
            self.add_option("fuel_type", f"Fuel {letter}", "fuel_type", callback=self._set_fuel(letter))
        self.add_option("fuel_type", "[Back]", "root")
        self.add_node("fuel_amount", "-= Launch Terminal - Setting Fuel Amount =-\n\nFuel amount currently set to "
                      "{fuelAmount}L.\n(Must be between 0 and 10,000L).")  # fmt: skip
        self._steps(
            "fuel_amount", "fuelAmount", "Increase fuel by {}L", "Decrease fuel by {}L", (0, ROCKET_TANK_L)
        )
        self.add_node("countdown", "-= Launch Terminal - Start Rocket Launch Countdown? =-" + STATUS
                      + "\n\n(Once you confirmed, there's no coming back.)")  # fmt: skip
        self.add_option("countdown", "Confirm", "exit", callback=partial(self.states.add, "launchConfirmed"))
        self.add_option("countdown", "Cancel", "root")
        self.add_node("exit", "Exiting launch terminal.")

    def _steps(self, node: str, var: str, up: str, down: str, clamp: tuple[int, int]) -> None:
        for sign, text in ((1, up), (-1, down)):
            for step in STEPS:
                self.add_option(node, text.format(step), node, modify={var: sign * step}, clamp=clamp)
        self.add_option(node, "[Back]", "root")

    def _set_fuel(self, letter: str) -> Callable[[], None]:
        return partial(self.props.__setitem__, "fuel", letter)  # not a closure: worlds pickle


READOUT = "\n\nSelected fuel: {fuel}\nCurrent weight: {weight} kg\nGenerated thrust: {thrust} kN\nDuration: {duration} ticks"


class LoadCellInterface(Device):
    """Fills the test rocket with 5000 L of a fuel, fires it and shows weight, thrust and time.

    The weight is shown unrounded and the thrust to 0.1 N, so that the fuel's density, mass
    flow and exhaust speed can be computed exactly enough for the launch."""

    needs_tick = True

    def __init__(self, world: World, dry_mass: float, fuels: dict[str, Fuel]) -> None:
        super().__init__(world, "load cell interface", "load cell interface", [material("metal")],
                         sprite="computer", variables={"fuel": "None", "weight": dry_mass, "thrust": 0, "duration": 0})  # fmt: skip
        self.dry_mass = dry_mass
        self.fuels = fuels
        self.thrusts: set[float] = set()
        self.states.add("fuelEmpty")
        busy = ("testInProgress", "testCompleted")
        self.add_node(
            "root", "-= Load Cell Interface - Main menu =-" + READOUT, states_to_add=("interactedWith",)
        )
        self.add_option("root", "Refuel", "refuel", anti_states=(*busy, "fuelEmpty"))
        self.add_option(
            "root", "Refuel (currently empty)", "refuel", requires_states=("fuelEmpty",), anti_states=busy
        )
        self.add_option("root", "Fire!", "fired", anti_states=(*busy, "fuelEmpty"))
        self.add_option("root", "Refresh", "root", requires_states=("testInProgress",))
        self.add_option("root", "Refresh", "completed", requires_states=("testCompleted",))
        self.add_option(
            "root", "Abort!", "aborted", requires_states=("testInProgress",), callback=self._abort
        )
        self.add_option("root", "Exit", "exit")
        self.add_node("refuel", "-= Load Cell Interface - Refueling =-" + READOUT)
        self.add_option("refuel", "Flush fuel from test rocket's tanks", "refuel", callback=self._flush)
        for letter in "ABC":
            self.add_option(
                "refuel", f"Fill rocket with 5000L of fuel {letter}", "root", callback=self._fill(letter)
            )
        self.add_option("refuel", "[Back]", "root")
        self.add_node("fired", "-= Load Cell Interface - Test rocket fired =-" + READOUT,
                      states_to_add=("testInProgress",))  # fmt: skip
        self.add_option("fired", "Test in progress...", "root")
        self.add_node("completed", "-= Load Cell Interface - Test completed =-" + READOUT,
                      states_to_remove=("testCompleted",))  # fmt: skip
        self.add_option("completed", "[Back]", "root")
        self.add_node("aborted", "-= Load Cell Interface - Test aborted =-" + READOUT,
                      states_to_remove=("testCompleted",))  # fmt: skip
        self.add_option("aborted", "[Back]", "root")
        self.add_node("exit", "Exiting Load Cell Interface.")

    def _flush(self) -> None:
        # Fix of the original's crash: an empty rocket is marked empty, so it cannot be fired.
        self.props.update(fuel="None", weight=self.dry_mass, thrust=0, duration=0)
        self.states.add("fuelEmpty")

    def _fill(self, letter: str) -> Callable[[], None]:
        return partial(self._fill_with, letter)  # not a closure: worlds pickle

    def _fill_with(self, letter: str) -> None:
        self.props.update(fuel=letter, weight=self.dry_mass + self.fuels[letter].density * TEST_TANK_L,
                          thrust=0, duration=0)  # fmt: skip
        self.states.discard("fuelEmpty")

    def _abort(self) -> None:
        self.states.discard("testInProgress")
        self.states.add("testCompleted")

    def tick(self) -> None:
        if "testInProgress" not in self.states:
            return
        fuel = self.fuels[self.props["fuel"]]
        self.props["duration"] += 1
        self.props["thrust"] = shown_thrust(fuel)
        if fuel.thrust > 0:
            self.thrusts.add(self.props["thrust"])
        weight = self.props["weight"] - fuel.mass_flow
        if weight <= self.dry_mass:
            weight = self.dry_mass
            self.states.discard("testInProgress")
            self.states.update(("testCompleted", "fuelEmpty"))
        self.props["weight"] = weight


def shown_thrust(fuel: Fuel) -> float:
    return round(fuel.thrust / 1000, 4)
