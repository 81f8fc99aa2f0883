"""It's (not) Rocket Science! (spec section 12.7): measure the planet, compute the orbital speed
(and, in Challenge, the propellant and its amount), enter them in the launch terminal."""

from __future__ import annotations

import math

from discoverylab.scenarios import layout
from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.registry import register
from discoverylab.scenarios.rocket_science.oracle import solve
from discoverylab.scenarios.rocket_science.things import (
    BOOK,
    LIGHT_ANGLE,
    ROCKET_TANK_L,
    TEST_TANK_L,
    Fuel,
    FuelTank,
    LaunchTerminal,
    LoadCellInterface,
    Pendulum,
    SpeedSquare,
    fuel_litres,
    orbit_speed,
    sample_fuels,
    shown_thrust,
)
from discoverylab.world import things
from discoverylab.world.agent import Agent
from discoverylab.world.materials import material, shared_material
from discoverylab.world.objects import WorldObject

CONTROL_ROOM = (7, 20, 13, 24)  # x0, y0, x1, y1: no open sky inside


def _sky(x: int, y: int) -> bool:
    x0, y0, x1, y1 = CONTROL_ROOM
    return not (x0 <= x <= x1 and y0 <= y <= y1)


@register
class RocketScience(Scenario):
    """Put a probe in orbit: measure the planet's radius and gravity, compute the orbital speed
    for the requested height and enter it in the launch terminal (Challenge: also pick the right
    propellant and compute how much of it the rocket needs).

    Description: a sand world on Planet X with a launch pad and rocket, a control room (launch
    terminal, 1-meter pendulum), two observation posts 30 m apart (signs at the north and south
    edges) and a thrust test site with three fuel tanks and a load-cell test stand. The agent holds
    a rocketry book (formula sheet) and a speed square. The speed square gives the angle of the
    star's rays at the agent's tile; the angle differs between rows by the arc the 30 m subtend
    (Eratosthenes: the radius). The pendulum's period (oscillations per tick, one tick = 1 s)
    gives the gravity, hence the mass. The launch happens once: no second chance.
    Actions: READ the book and the pendulum, ACTIVATE the pendulum, USE speed square ON anything
    (itself), TALK to (or USE) the launch terminal "computer" and the "load cell interface", whose
    menus step numbers by +/-1000, 100, 10, 1; teleports to control room, rocket, northern and
    southern observation posts, thrust test site.
    Observation: standard text observation; readings come in action messages and dialog texts.
    Scoring: Read the rocketry book /1, Activate pendulum /1, Observe pendulum /1, Use launch
    terminal /1, Enter correct orbit velocity /1 (within 2 m/s, decided at the launch
    confirmation); Normal/Challenge add Measure light angle /2 (distinct readings); Challenge adds Use load
    cell interface /1, Try the different fuel types /3 (distinct thrusts seen firing) and Enter
    correct fuel type and amount /1 (within 2 L). The task completes when the launch is confirmed
    and succeeds iff the decided items scored.
    Difficulty knobs: Easy: the radius (400..10000 km) stated in the task, the mass
    (1e23..1e25 kg, hence the gravity) to be measured with the pendulum, orbit height
    100..10000 km, fuel preset (a full tank). Normal: random radius 400..10000 km, mass
    1e23..1e25 kg, height 100..10000 km, to be measured, fuel preset (a full tank). Challenge:
    as Normal, and the rocket is unfuelled: choose among fuels A, B, C (one works, one lacks
    thrust, one needs more than the 10,000 L tank) by testing 5000 L samples.
    Registered ids: discoverylab/RocketScience-Easy-v0, discoverylab/RocketScience-Normal-v0,
    discoverylab/RocketScience-Challenge-v0.
    """

    task_id = "RocketScience"
    title = "It's (not) Rocket Science!"
    suite = "discovery"
    difficulties = ("easy", "normal", "challenge")
    task_name = "NotRocketScienceTask"

    # ---- building -----------------------------------------------------------------------
    def build(self) -> Agent:
        world = self.world
        self.burn(20)
        self._generate()
        self._map()
        self.book = WorldObject(
            world, "rocketry book", "book", [material("paper")], readable=True, document=BOOK
        )
        self.square = SpeedSquare(world)
        player = Agent(world, "agent", 16, 3)
        player.add(self.book)
        player.add(self.square)
        world.teleports.update({
            "control room": (11, 23), "rocket": (16, 3), "northern observation post": (6, 1),
            "southern observation post": (6, 31), "thrust test site": (23, 25),
        })  # fmt: skip
        self.player = player
        self._declare_scorecard()
        return player

    def _generate(self) -> None:
        """Planet, orbit, rocket and fuels; redrawn until the measurements an agent can make
        determine the answers to within the scorer's tolerances."""
        rng = self.world.rng_build
        for _ in range(500):
            radius = float(self.randint(400, 10000))
            delta = 360 * 0.031 / (2 * math.pi * radius)
            theta0 = self.randint(2, 5) + (float(rng.random()) - 0.5) * delta * 15
            mass = 1e23 + float(rng.random()) * (1e25 - 1e23)
            height = float(self.randint(100, 10000))
            dry = float(self.randint(1000, 10000))
            gravity = 6.67430e-11 * mass / (radius * 1000) ** 2
            speed = orbit_speed(mass, radius, height)
            if speed >= 24000:
                continue
            fuels = sample_fuels(rng, dry, speed, gravity)
            if fuels is None:
                continue
            letters = self.shuffled(["A", "B", "C"])
            self.radius, self.mass, self.height, self.dry_mass = radius, mass, height, dry
            self.gravity, self.speed, self.delta, self.theta0 = gravity, speed, delta, theta0
            self.fuels = dict(zip(letters, fuels, strict=True))
            self.answer, self.low_thrust, self.too_much = letters
            self.litres = fuel_litres(fuels[0], dry, speed)
            if self._measurable():
                return
        raise RuntimeError("could not generate a solvable rocket launch")

    def angle(self, y: int) -> float:
        return round((self.theta0 + self.delta * y / 31) * 1000, 5)

    def _measurable(self) -> bool:
        """The speed recomputed from the rounded readings (angles at rows 1 and 31, Easy: the
        stated radius; a 50-tick pendulum reading; the load cell's numbers) is within 1 m/s, the
        amount within 1 L."""
        period = 2 * math.pi * math.sqrt(1 / self.gravity)
        count = round(50 / period, 3)
        if count <= 0:
            return False
        g = 4 * math.pi**2 / (50 / count) ** 2
        dtheta = abs(self.angle(31) - self.angle(1)) / 1000
        r = self.radius * 1000 if self.difficulty == "easy" else 30 * 360 / (2 * math.pi * dtheta)
        v = math.sqrt(g * r * r / (r + self.height * 1000))
        if abs(v - self.speed) >= 1:
            return False
        fuel = self.fuels[self.answer]
        if fuel.density * TEST_TANK_L < 3 * fuel.mass_flow:
            return False
        shown = Fuel(fuel.density, fuel.mass_flow, shown_thrust(fuel) * 1000)
        return abs(fuel_litres(shown, self.dry_mass, v) - self.litres) < 1

    def _terrain(self, name: str, x: int, y: int) -> WorldObject:
        sprite = {"sand path": "path:1"}.get(name, "")
        obj = things.Terrain(self.world, name, name, [shared_material("stone")], sprite=sprite)
        if _sky(x, y):
            obj.props[LIGHT_ANGLE] = self.angle(y)
        return self.world.place(obj, x, y)

    def _map(self) -> None:
        world = self.world
        pad = {(x, y) for x in range(13, 20) for y in range(0, 5)}
        for x in range(world.size):
            for y in range(world.size):
                if (x, y) in pad:
                    self._terrain("launch pad", x, y)
                elif 15 <= x <= 17 or y == 25:
                    self._terrain("sand path", x, y)
                elif not (
                    CONTROL_ROOM[0] <= x <= CONTROL_ROOM[2] and CONTROL_ROOM[1] <= y <= CONTROL_ROOM[3]
                ):
                    self._terrain("sand", x, y)
        self._solid("rocket", 16, 2, "rocket:body")
        self._solid("rocket top", 16, 1, "rocket:top")
        layout.building(world, 7, 20, 7, 5, "Control Room")
        self.pendulum = Pendulum(world, 2 * math.pi * math.sqrt(1 / self.gravity))
        world.place(self.pendulum, 8, 21)
        for x in (10, 11, 12):
            layout.place(world, "sign", x, 20, name="monitor", document="Launch status: waiting for launch.")
        fuel = None if self.difficulty == "challenge" else self.answer
        # Easy/Normal: a full tank. The amount the launch needs (the rocket equation of the orbit
        # speed) gave the speed away to an agent that tested that fuel on the load cell.
        amount = 0 if self.difficulty == "challenge" else ROCKET_TANK_L
        self.terminal = LaunchTerminal(world, str(fuel), amount, self.difficulty == "challenge")
        for x in (10, 11, 12):
            table = layout.place(world, "table", x, 22)
            if x == 11:
                table.add(self.terminal)
        layout.place(world, "sign", 22, 24, document="Propellant Tanks")
        for i, letter in enumerate("ABC"):
            world.place(
                FuelTank(
                    world, f"fuel tank ({letter})", "fuel tank", [material("metal")], sprite="machine:grey"
                ),
                23 + i,
                24,
            )
        self._solid("test rocket", 27, 23, "rocket:body")
        for x, y in ((26, 23), (28, 23), (26, 22), (27, 22), (28, 22)):
            self._solid("load cell wall", x, y, "wall:face")
        self.load_cell = LoadCellInterface(world, self.dry_mass, self.fuels)
        world.place(self.load_cell, 28, 24)
        layout.place(
            world, "sign", 5, 1, document="This sign is exactly 30 meters north of the southern sign."
        )
        layout.place(
            world, "sign", 5, 31, document="This sign is exactly 30 meters south of the northern sign."
        )
        layout.place(world, "sign", 15, 27, name="village sign", document="Welcome to the launch site!")
        placed = 0
        while placed < 14:
            x, y = self.randint(0, 31), self.randint(5, 18)
            if 12 <= x <= 20 or world.top_level_at(x, y)[-1].type != "sand":
                continue
            self._solid("cactus" if placed % 2 else "big cactus", x, y, "cactus")
            placed += 1

    def _solid(self, name: str, x: int, y: int, sprite: str) -> None:
        obj = WorldObject(
            self.world, name, name, [material("wood")], movable=False, passable=False, sprite=sprite
        )
        self.world.place(obj, x, y)

    # ---- scorecard ----------------------------------------------------------------------
    def _declare_scorecard(self) -> None:
        card, diff = self.scorecard, self.difficulty
        self.read_book = card.add("Read the rocketry book", "The rocketry book has been read.", 1)
        full = diff != "easy"  # Easy states the radius: no light angles
        if full:
            self.angles = card.add(
                "Measure light angle", "The light angle has been measured at two places.", 2
            )
        self.activate = card.add("Activate pendulum", "The pendulum has been activated.", 1)
        self.observe = card.add("Observe pendulum", "The pendulum has been read.", 1)
        self.use_terminal = card.add("Use launch terminal", "The launch terminal has been used.", 1)
        if diff == "challenge":
            self.use_cell = card.add("Use load cell interface", "The load cell interface has been used.", 1)
            self.tried = card.add("Try the different fuel types", "Each fuel type has been test-fired.", 3)
        self.velocity = card.add("Enter correct orbit velocity", "The launch used the right orbit speed.", 1)
        if diff == "challenge":
            self.fuel_item = card.add(
                "Enter correct fuel type and amount", "The launch used the right fuel.", 1
            )
        if full:  # (Easy states it)
            card.ask(f"Does it clearly state the planet's radius is approximately {int(self.radius)} km?",
                     f"The planet's radius is about {int(self.radius)} km.")  # fmt: skip
        card.ask(f"Does it clearly state the planet's gravity is approximately {round(self.gravity, 2)} m/s^2?",
                 f"The surface gravity is about {round(self.gravity, 2)} m/s^2.")  # fmt: skip
        period = round(2 * math.pi * math.sqrt(1 / self.gravity), 2)
        card.ask(f"Does it clearly state the pendulum's period is approximately {period} seconds?",
                 f"The 1-meter pendulum's period is about {period} s.")  # fmt: skip
        h, v = int(self.height), round(self.speed, 1)
        card.ask(f"Does it clearly state the target orbit speed to reach an orbital height of {h} km is "
                 f"approximately {v} m/s? (plus or minus 3 m/s)", f"The orbit speed at {h} km is about {v} m/s.")  # fmt: skip
        if diff == "challenge":
            a, low, much = self.answer, self.low_thrust, self.too_much
            card.ask(f"Does it clearly eliminate fuel type {low} as it wouldn't generate enough thrust to liftoff "
                     "the rocket (i.e., its thrust to weight ratio is lower or equal to 1 g)?",
                     f"Fuel {low} has a thrust-to-weight ratio of at most 1.")  # fmt: skip
            card.ask(f"Does it clearly eliminate fuel type {much} as its density is to low and would require more "
                     "fuel than what the rocket can hold?", f"Fuel {much} would need more than 10,000 L.")  # fmt: skip
            card.ask(f"Does it clearly state what fuel type to use {a} (between A,B,C)?", f"Use fuel {a}.")
            litres = round(self.litres)  # nearest litre: the check's 6% must not hinge on truncation
            card.ask(f"Does it clearly state the amount needed of fuel type {a} is approximately {litres} "
                     "liters? (plus or minus 2 liters)", f"About {litres} L of fuel {a}.")  # fmt: skip

    def description(self) -> str:
        diff = self.difficulty
        text = (
            "You are at the new rocket launch site on Planet X.  Your task is to put a probe into a circular orbit "
            f"at an altitude of {int(self.height)} km above the surface by entering the required orbital speed in the "
            "launch terminal (the `computer` in the control room), then starting the countdown.  There is a single "
            "rocket, so you must get it right the first time."
        )
        if diff == "challenge":
            text += (
                "  The rocket is not fuelled yet: choose one of the three propellants (fuel A, B or C) and how much "
                "of it to load (at most 10,000 L).  The test rocket at the thrust test site has the same dry mass as "
                "the launch rocket; the `load cell interface` fills it with 5000 L samples, fires it and shows its "
                "weight and thrust."
            )
        if diff == "easy":
            text += f"  The radius of Planet X is {int(self.radius)} km (from the survey); its mass is not known."
        text += (
            "  Notes: each cell of the map is a 1 m square; one tick lasts one second; neglect air resistance; mind "
            "the units; the formulas in your rocketry book are simplifications; keep the decimals in your "
            "calculations."
        )
        if diff != "easy":
            text += "  Look around for two observation posts to the north and south."
        return text

    # ---- scoring ------------------------------------------------------------------------
    def update(self) -> None:
        for record in self.new_actions():
            if record.action == "READ" and record.arg1 is self.book:
                self.read_book.set(1)
            if record.action == "READ" and record.arg1 is self.pendulum:
                self.observe.set(1)
        if self.difficulty != "easy":
            count = len(self.square.readings)
            if count:
                self.angles.set(min(count, 2) * 1, completed=count >= 2)
        if self.pendulum.activated:
            self.activate.set(1)
        if "interactedWith" in self.terminal.states:
            self.use_terminal.set(1)
        if self.difficulty == "challenge":
            if "interactedWith" in self.load_cell.states:
                self.use_cell.set(1)
            self.tried.set(len(self.load_cell.thrusts))
        if "launchConfirmed" not in self.terminal.states:
            return
        props = self.terminal.props
        right_speed = abs(props["orbitSpeed"] - self.speed) < 2
        self.velocity.set(int(right_speed), completed=True)
        success = right_speed
        if self.difficulty == "challenge":
            right_fuel = props["fuel"] == self.answer and abs(props["fuelAmount"] - self.litres) < 2
            self.fuel_item.set(int(right_fuel), completed=True)
            success = success and right_fuel
        self.scorecard.finish(success)

    @staticmethod
    def oracle(obs: ot.Obs) -> OracleGen:
        return solve(obs)
