"""Space Sick things: the simplified instruments of the Easy lab, the NPK field test, the sampler,
mushrooms (with or without mold) and the glowing rock that lights up near a poisonous mushroom;
the things that tick every step (appliances, fertilizer bag, seed jar, the field and its seeds)
are compiled with the engine (tickers.py) and re-exported here.

Importing this module registers the readers of the simplified instruments, the NPK field test
and the sampler. Every reading comes from the measured object (its materials, parts and props),
never from the scenario's answer key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from discoverylab.scenarios.space_sick.tickers import (  # (compiled: see tickers.py)
    ColonyAppliance,
    ColonyFertilizerBag,
    FieldKeeper,
    FieldSoil,
    GrowingSeed,
    SeedJar,
)
from discoverylab.world import instruments
from discoverylab.world.catalog import spawn
from discoverylab.world.instruments import Instrument
from discoverylab.world.materials import Material, material
from discoverylab.world.objects import Layer, WorldObject
from discoverylab.world.things import Food, Mold

if TYPE_CHECKING:
    from discoverylab.world.world import World

__all__ = ["ColonyAppliance", "ColonyFertilizerBag", "FieldKeeper", "FieldSoil", "GrowingSeed", "SeedJar"]

COLOURS = ("red", "green", "yellow", "pink")
SIMPLE_INSTRUMENTS = ("densitometer", "spectrometer", "PH meter", "microscope", "radiation meter")
PATHOGENS = ("Bacterium Species 138", "Virus Strain 12", "Fungus Species 3", "Parasite Species 7", "Prion Strain 2")
SIMPLE_TYPE = "simplified instrument"
GLOWING = "rock (glowing)"
LUMINOUS = "rock (highly luminous)"
ROCK_LIGHTS = ("blue", "green", "violet", "orange", "white")  # the lit rocks' colour, drawn per instance


# ---- instruments ----------------------------------------------------------------------------
def _simplified(inst: Instrument, obj: WorldObject) -> str:
    """Easy lab: every instrument reads "normal" except the one that detects the pathogen."""
    head = f"You use the {inst.name} to observe the {obj.name}.\n"
    pathogen = obj.props.get("pathogen")
    if pathogen and inst.props.get("detects_pathogen"):
        return head + f"The readings appear consistent with a {obj.name} that has been contaminated with {pathogen}.\n"
    return head + "The readings appear normal.\n"


def _npk(inst: Instrument, obj: WorldObject) -> str:
    mats = list(obj.all_materials(include_contents=True))
    n, p, k = (min(10.0, sum(m.npk[i] for m in mats)) for i in range(3))
    return (
        f"You use the NPK field test to investigate the {obj.name}.\n"
        "The test ranges from 0 (no presence detected) to 10 (the maximum value of the test has been exceeded). \n"
        f"The screen on the field test reports the following numbers: \n Nitrogen: {n:.1f}\n Phosphorus: {p:.1f}\n"
        f" Potassium: {k:.1f}\n"
    )


def _sample_of(world: World, obj: WorldObject) -> WorldObject:
    """A copy of the object's matter: its materials and its parts' (as sample parts)."""
    sample = WorldObject(world, f"sample of {obj.name}", "sample", [m.copy() for m in obj.materials])
    sample.poisonous = obj.poisonous
    sample.temperature_c = obj.temperature_c
    for part in obj.parts:
        sample.add_part(_sample_of(world, part))
    return sample


def _sampler(inst: Instrument, obj: WorldObject) -> str:
    world = inst.world
    dish = spawn(world, "petri_dish")
    dish.add(_sample_of(world, obj))
    holder = inst.parent
    if holder is not None:
        holder.add(dish)
        where = "your inventory" if holder.is_agent else f"the {holder.name}"
    else:
        world.place(dish, *inst.location(), Layer.OBJECTS)
        where = "the ground"
    return (
        f"You use the sampler to take a sample of the {obj.name}.\n The sample has been placed in {where}.\n"
    )


instruments.READERS[SIMPLE_TYPE] = _simplified
instruments.READERS["NPK field test"] = _npk
instruments.READERS["sampler"] = _sampler


def simple_instrument(world: World, name: str, detects: bool) -> Instrument:
    inst = Instrument(world, name, SIMPLE_TYPE, [material("metal")])
    inst.sprite = {"PH meter": "ph_meter", "radiation meter": "radiation_meter"}.get(name, name)
    if detects:
        inst.props["detects_pathogen"] = True
    return inst


def lab_instrument(world: World, kind: str) -> WorldObject:
    """The Normal science lab's instruments (catalogue ones, plus the NPK test and the sampler)."""
    if kind == "NPK field test":
        return Instrument(world, kind, kind, [material("metal")], sprite="meter")
    if kind == "sampler":
        return Instrument(world, kind, kind, [material("metal")], sprite="meter")
    return spawn(world, {"PH meter": "ph_meter", "radiation meter": "radiation_meter"}.get(kind, kind))


# ---- food and field ---------------------------------------------------------------------------
# Temperatures change only inside stoves and fridges, which apply the cooking and dying thresholds
# themselves, so mushrooms and molds need no per-tick work (seven characters leave little time).
class Mushroom(Food):
    needs_tick = False


class ColonyMold(Mold):
    needs_tick = False


def mushroom(world: World, colour: str, green_matter: bool) -> WorldObject:
    matter = "plant_matter_green" if green_matter else "plant_matter_white"
    return Mushroom(world, "mushroom", "mushroom", [material(matter)], color=colour)


# The molds a colony's mushrooms may carry (one per instance): what the microscope shows of each.
# Every one makes a mycotoxin that survives heating (as aflatoxins, trichothecenes and fumonisins do):
# heat kills the mold, not the poison it has already made.
MOLD_SPECIES = {
    "Aspergillus": "Thread-like filaments ending in round heads of spore chains: an Aspergillus mold",
    "Penicillium": "Thread-like filaments ending in brush-like tufts of spores: a Penicillium mold",
    "Fusarium": "Thread-like filaments with curved, canoe-shaped spores: a Fusarium mold",
    "Alternaria": "Dark thread-like filaments with club-shaped, chambered spores: an Alternaria mold",
    "Stachybotrys": "Dark thread-like filaments with clusters of dark oval spores: a Stachybotrys mold",
}
MOLD_CHANNELS = (2, 3, 4, 5)  # the spectrometer channel a colony's mold raises (drawn per instance)
MOLD_SIGNAL = 0.5  # what the mold adds on that channel


def mold_material(species: str, channel: int) -> Material:
    """The instance's mold: its species' look under the microscope, a peak on one channel."""
    mat = material("mold_red").copy()
    mat.microscope = MOLD_SPECIES[species]
    mat.spectrum = tuple(MOLD_SIGNAL if i + 1 == channel else 0.0 for i in range(len(mat.spectrum)))
    return mat


def mold(world: World, matter: Material | None = None) -> WorldObject:
    return ColonyMold(world, "mold", "mold", [matter or material("mold_red")], poisonous=True)


class GlowingRock(WorldObject):
    """A cave rock that turns highly luminous, in its instance's light colour ("rock (highly
    luminous, blue)"), while a poisonous mushroom is within one tile of it (on any of the 3 x 3
    tiles around it, inside containers and inventories included)."""

    needs_tick = True

    def __init__(self, world: World, light: str = "white") -> None:
        super().__init__(world, GLOWING, "glowing rock", [material("rock")], sprite="rock")
        self.luminous = False
        self.lit_name = f"{LUMINOUS[:-1]}, {light})"

    def tick(self) -> None:
        self.luminous = self._poison_near()
        name = self.lit_name if self.luminous else GLOWING
        if name != self.name:
            self.name = name
            self.text_changed()

    def _poison_near(self) -> bool:
        world = self.world
        rx, ry = self.location()
        for x in range(max(rx - 1, 0), min(rx + 2, world.size)):
            column = world.stacks[x]
            for y in range(max(ry - 1, 0), min(ry + 2, world.size)):
                for top in column[y]:
                    if _bad(top) or (top.contents and any(_bad(o) for o in top.all_contents())):
                        return True
        return False


def _bad(obj: WorldObject) -> bool:
    return obj.poisonous and "mushroom" in obj.type


def poisonous_food(obj: WorldObject) -> bool:
    """What eating it does: poisonous if it, anything in it, or any of its parts is."""
    pending = [obj]
    while pending:
        cur = pending.pop()
        if cur.poisonous:
            return True
        pending.extend(cur.parts)
        pending.extend(cur.contents)
    return False
