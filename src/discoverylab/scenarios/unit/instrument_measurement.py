"""Small Skills: Instrument Measurement."""

from __future__ import annotations

import re

from discoverylab.scenarios import layout
from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.explore import Explorer
from discoverylab.scenarios.registry import register
from discoverylab.scenarios.unit._common import (
    Site,
    bare_site,
    outdoor_around,
    shuffled_kept,
    spawn_pool,
    start_inside,
)
from discoverylab.world.agent import Agent
from discoverylab.world.materials import Material
from discoverylab.world.objects import WorldObject

INSTRUMENTS = ("densitometer", "spectrometer", "thermometer", "microscope", "ph_meter")
# Spots relative to the building's top-left wall corner (the original's building was at (14, 9)).
INSTRUMENT_SPOTS = ((2, 1), (3, 1), (4, 1), (5, 1), (6, 1))
OBJECTS = ("mushroom", "seed", "shovel", "dirt", "key", "fertilizer_bag", "rock_glowing")
OBJECT_SPOTS = ((2, 4), (3, 4), (5, 4), (6, 4))
POT_SPOTS = ((1, 2), (1, 3), (7, 3), (7, 2))
CENTRE = (4, 2, 4, 3)  # the start cells that see the whole building
SURFACES = ("scratched", "rough", "smooth", "bumpy")
# property key -> (words in the task text, instrument kind, instrument name)
PROPERTIES = {
    "density": ("density", "densitometer", "densitometer"),
    "ph": ("PH", "ph_meter", "PH meter"),
    "temperature": ("temperature", "thermometer", "thermometer"),
    "spectrum": ("spectrum (on channel 3)", "spectrometer", "spectrometer"),
    "microscope": ("microscopic description", "microscope", "microscope"),
}
NUMERIC_RULES = (
    "If the value is less than 2.5, place it in pot A.\n"
    "If the value is between 2.5 and 5.0, place it in pot B.\n"
    "If the value is between 5.0 and 7.5, place it in pot C.\n"
    "If the value is greater than 7.5, place it in pot D.\n"
)
SURFACE_RULES = (
    "If the object has a rough surface, place it in pot A.\n"
    "If the object has a smooth surface, place it in pot B.\n"
    "If the object has a bumpy surface, place it in pot C.\n"
    "If the object has any other kind of surface, place it in pot D.\n"
)
# What the oracle reads from each instrument's message.
_NUMBER = r"(\d+(?:\.\d+)?)"
READINGS = {
    "density": rf"approximately {_NUMBER} grams",
    "PH": rf"PH of {_NUMBER}",
    "temperature": rf"temperature of {_NUMBER} degrees",
    "spectrum (on channel 3)": rf"Channel 3: {_NUMBER}",
}


@register
class InstrumentMeasurementTest(Scenario):
    """Measure one property of an object with the right instrument and sort it by the value.

    Description: the Ministry of Measurement holds five instruments (densitometer,
    spectrometer, thermometer, microscope, PH meter) on tables, four objects with randomly drawn
    properties, and four pots A-D. The task names the object and the property and gives the
    value ranges (or surface kinds) that decide the pot.
    Actions: PICKUP, USE <instrument> ON <object>, PUT (teleports help).
    Observation: standard text observation; readings come in the action message.
    Scoring: Pick up the object /1, Measure the object /1 (a successful USE of the right
    instrument on it), Place the object /1 (in the right pot). Anything in a wrong pot, or
    anything else in the right pot first, ends the task unsuccessfully; placing without measuring
    leaves it open until the measurement is made.
    Difficulty knobs: the level draws where the building stands, the instruments' and objects'
    tables, the objects, their values, the target, the property and the start cell (one of the
    two central cells, which see everything). Easy: two objects and only three instruments (the
    right one among them). Challenge: the pots A-D stand in a shuffled order and the start is
    any free cell that the room's tables do not fence off (its corners are; the room is wider
    than the view).
    Registered ids: discoverylab/InstrumentMeasurementTest-Easy-v0, discoverylab/InstrumentMeasurementTest-Normal-v0,
    discoverylab/InstrumentMeasurementTest-Challenge-v0.
    """

    task_id = "InstrumentMeasurementTest"
    title = "Small Skills: Instrument Measurement Test"
    suite = "unit"
    task_name = "SmallSkillsInstrumentMeasurementTask"
    difficulties = ("easy", "normal", "challenge")

    def build(self) -> Agent:
        world = self.world
        self.burn()
        site = Site(self, 9, 6)
        layout.fill_grass(world, under=bare_site(site))
        layout.building(world, site.x, site.y, 9, 6, "Ministry of Measurement", key_id=123)
        self.property = self.choice(list(PROPERTIES))
        kinds = list(INSTRUMENTS)
        if self.difficulty == "easy":  # the right instrument and two others
            right = PROPERTIES[self.property][1]
            kinds = [right, *[k for k in self.shuffled(INSTRUMENTS) if k != right][:2]]
        instruments = dict(zip(kinds, spawn_pool(world, kinds), strict=True))
        for obj, (x, y) in zip(self.shuffled(list(instruments.values())), self.shuffled(INSTRUMENT_SPOTS), strict=False):
            layout.table_with(world, *site.at(x, y), obj)
        count = 2 if self.difficulty == "easy" else 4
        objects = shuffled_kept(self, OBJECTS, count)
        surfaces = list(SURFACES)
        for obj, (x, y) in zip(objects, self.shuffled(OBJECT_SPOTS), strict=False):
            layout.table_with(world, *site.at(x, y), obj)
            self._randomise(obj, surfaces)
        self.target = objects[0]
        self.pots = [layout.spawn(world, "pot", name=f"pot {letter}") for letter in "ABCD"]
        pot_spots = self.shuffled(POT_SPOTS) if self.difficulty == "challenge" else POT_SPOTS
        for pot, (x, y) in zip(self.pots, pot_spots, strict=True):
            layout.table_with(world, *site.at(x, y), pot)
        self.instrument = instruments[PROPERTIES[self.property][1]]
        self.pot = self.pots[self._pot_index()]
        outdoor_around(self, site)
        start = start_inside(self, site, None if self.difficulty == "challenge" else CENTRE)
        name = self.target.name
        self.pick = self.scorecard.add("Pick up the object", f"Pick up the {name}.", 1)
        self.measure = self.scorecard.add(
            "Measure the object", f"Measure the {name} with the {self.instrument.name}.", 1
        )
        self.place = self.scorecard.add("Place the object", f"Place the {name} in {self.pot.name}.", 1)
        return Agent(world, "agent", *start)

    def _uniform(self) -> float:
        return round(float(self.world.rng_build.uniform(1.0, 10.0)), 1)

    def _randomise(self, obj: WorldObject, surfaces: list[str]) -> None:
        """Give the object one generated material, so every instrument reads the drawn values."""
        # Its eight `_uniform` values in one draw: the values and stream state of eight scalar
        # draws (tests/test_reset_paths.py), at the cost of about one.
        drawn = [round(value, 1) for value in self.world.rng_build.uniform(1.0, 10.0, size=8).tolist()]
        obj.density = drawn[0]
        ph = drawn[1]
        obj.temperature_c = drawn[2]
        spectrum = tuple(drawn[3:])
        surface = self.choice(surfaces)
        surfaces.remove(surface)
        obj.materials = [
            Material(
                key="generated", name="material", microscope=f"a {surface} surface", spectrum=spectrum, ph=ph
            )
        ]

    def _pot_index(self) -> int:
        material = self.target.materials[0]
        if self.property == "microscope":
            surface = material.microscope
            for i, word in enumerate(("rough", "smooth", "bumpy")):
                if surface == f"a {word} surface":
                    return i
            return 3
        value = {
            "density": self.target.density,
            "ph": material.ph,
            "temperature": self.target.temperature_c,
            "spectrum": material.spectrum[2],
        }[self.property]
        return 0 if value <= 2.5 else 1 if value <= 5.0 else 2 if value <= 7.5 else 3

    def description(self) -> str:
        words = PROPERTIES[self.property][0]
        rules = SURFACE_RULES if self.property == "microscope" else NUMERIC_RULES
        return (
            f"Your task is measure the {words} of the `{self.target.name}`, and place it in a specific container "
            f"depending on the measured value.\n{rules}"
        )

    def update(self) -> None:
        target = self.target
        if target.held_by_agent:
            self.pick.set(1)
        new_records = self.new_actions()
        if not self.measure.completed:
            for record in new_records:
                if (
                    record.action == "USE"
                    and record.success
                    and record.arg1 is self.instrument
                    and record.arg2 is target
                ):
                    self.measure.set(1)
                    break
        if target.parent is self.pot:
            self.place.set(1)
        wrong = False
        for pot in self.pots:  # a loop, not any() over a generator: this runs every tick
            if pot.contents and pot is not self.pot:
                wrong = True
                break
        if wrong or (self.pot.contents and not self.place.completed):
            self.scorecard.finish(False)
        elif self.scorecard.all_completed():
            self.scorecard.finish(True)

    @staticmethod
    def oracle(obs: ot.Obs) -> OracleGen:
        text = ot.task_text(obs)
        (item,) = ot.quoted(text)
        words = ot.need(re.search(r"measure the (.+?) of the `", text), "the property in the task")[1]
        instrument = {w: name for w, _, name in PROPERTIES.values()}[words]
        ex = Explorer(obs)

        def uuid_of(name: str) -> OracleGen:
            while not ex.map.named(name):  # from a corner of the room not everything is in view
                yield from ex.explore_frontier(lambda s: s.name == "floor")
            return ex.map.named(name)[0].uuid

        thing = yield from uuid_of(item)
        yield from ex.take(thing)
        tool = yield from uuid_of(instrument)
        if not ex.reachable(tool):
            yield from ex.teleport(tool)
        obs = yield from ex.checked(ot.act("USE", tool, thing))
        pot = yield from uuid_of(_choose_pot(text, words, obs["lastActionMessage"]))
        if not ex.reachable(pot):
            yield from ex.teleport(pot)
        yield from ex.checked(ot.act("PUT", thing, pot))


_SURFACE_RULE = re.compile(r"has a (\w+) surface, place it in (pot \w)")
_OTHER_SURFACE_RULE = re.compile(r"any other kind of surface, place it in (pot \w)")
_RANGE_RULE = re.compile(rf"(?:less than|between {_NUMBER} and) {_NUMBER}, place it in (pot \w)")
_ABOVE_RULE = re.compile(rf"greater than {_NUMBER}, place it in (pot \w)")


def _choose_pot(task: str, words: str, reading: str) -> str:
    """Apply the task's rules (as written in its text) to an instrument reading."""
    if words == "microscopic description":
        for kind, pot in _SURFACE_RULE.findall(task):
            if f"a {kind} surface" in reading:
                return str(pot)
        return ot.need(_OTHER_SURFACE_RULE.search(task), "a pot for other surfaces")[1]
    value = float(ot.need(re.search(READINGS[words], reading), f"a {words} reading")[1])
    for low, high, pot in _RANGE_RULE.findall(task):
        if (not low or value > float(low)) and value <= float(high):
            return str(pot)
    return ot.need(_ABOVE_RULE.search(task), "a pot for the largest values")[2]
