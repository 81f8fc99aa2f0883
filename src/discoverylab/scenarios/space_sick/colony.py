"""The Space Sick colony (Normal and Challenge): science lab, cafeteria, farm, cave, infirmary,
barracks and the seven characters. Coordinates follow spec section 12.6 where the lab's
furniture leaves room to walk.

Mushrooms are all created before any mold, and every mushroom gets a mold created for it (kept
as a part only when that mushroom is moldy), so creation order and uuids say nothing about
which mushrooms are contaminated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from discoverylab.scenarios import layout
from discoverylab.scenarios.space_sick.characters import Chef, Colonist, Farmer
from discoverylab.scenarios.space_sick.things import (
    COLOURS,
    MOLD_CHANNELS,
    MOLD_SPECIES,
    ROCK_LIGHTS,
    ColonyAppliance,
    ColonyFertilizerBag,
    FieldKeeper,
    FieldSoil,
    GlowingRock,
    GrowingSeed,
    SeedJar,
    lab_instrument,
    mold,
    mold_material,
    mushroom,
)
from discoverylab.world.agent import Agent
from discoverylab.world.catalog import spawn
from discoverylab.world.materials import material
from discoverylab.world.objects import Layer, WorldObject

if TYPE_CHECKING:
    from discoverylab.scenarios.space_sick.scenario import SpaceSick
    from discoverylab.world.world import World

LAB_INSTRUMENTS = ("microscope", "spectrometer", "PH meter", "radiation meter", "sampler", "thermometer",
                   "NPK field test")  # fmt: skip
# Spores of the mold reach this share of the mushrooms of other colours (Normal).
SPORE_SPREAD = 0.35
# Moldy colours: one of the five options, drawn per instance.
MOLD_OPTIONS = (("red",), ("green",), ("yellow",), ("pink",), ("red", "pink"))
FIELD = [(x, y) for x in range(10, 16) for y in range(13, 18)]
COLONIST_HOMES = ((18, 25), (16, 18), (18, 11), (13, 5), (8, 19))
TREES = ((28, 2), (30, 9), (29, 18), (30, 27), (2, 14), (4, 28), (9, 30), (17, 30), (24, 29), (7, 2))
# Kept free of plants and trees: the meadow below the cave (a quiet place to test things).
QUIET = {(x, y) for x in range(0, 10) for y in range(5, 10)}
TELEPORTS = {
    "science lab": (11, 24), "cafeteria": (23, 24), "farm": (13, 10), "farm field": (12, 15),
    "cave": (3, 5), "town square": (16, 18), "barracks": (22, 14), "infirmary": (22, 6),
}  # fmt: skip


@dataclass(slots=True)
class Colony:
    """Where things are, for the characters and the scorer."""

    tables: list[WorldObject] = field(default_factory=list)
    prep_table: WorldObject | None = None
    pot: WorldObject | None = None
    shovel: WorldObject | None = None
    seed_jar: WorldObject | None = None
    soil: list[FieldSoil] = field(default_factory=list)
    field_tiles: list[tuple[int, int]] = field(default_factory=lambda: list(FIELD))
    infirmary: tuple[int, int] = (23, 6)
    dining_spot: tuple[int, int] = (23, 25)
    farm_spot: tuple[int, int] = (13, 10)
    shovel_spot: tuple[int, int] = (12, 9)
    colonists: list[Colonist] = field(default_factory=list)
    rocks: list[GlowingRock] = field(default_factory=list)
    instruments: list[WorldObject] = field(default_factory=list)


def build_colony(sc: SpaceSick) -> Agent:
    world = sc.world
    challenge = sc.difficulty == "challenge"
    colony = sc.colony = Colony()
    layout.fill_grass(world)
    sc.burn()
    sc.moldy = () if challenge else MOLD_OPTIONS[sc.balanced(len(MOLD_OPTIONS), "mold")]
    # Which mold (microscope), which spectrometer channel it raises, how the rocks light up: drawn
    # per instance, so what an agent reports about them needs this instance's measurements.
    sc.mold_species = sc.choice(tuple(MOLD_SPECIES))
    sc.mold_channel = sc.choice(MOLD_CHANNELS)
    sc.rock_light = sc.choice(ROCK_LIGHTS)
    sc.mold_matter = mold_material(sc.mold_species, sc.mold_channel)
    _science_lab(world, colony)
    _cafeteria(world, colony)
    _farm(sc, colony)
    _cave(sc, colony, challenge)
    _dwellings(world)
    foods = _mushrooms(sc, 12 if challenge else 15)
    for table, food in zip(colony.tables, foods[:5], strict=True):
        table.add(food)
    for food, (x, y) in zip(foods[5:], sc.shuffled(FIELD), strict=False):
        world.place(food, x, y, Layer.OBJECTS)
    for x, y in TREES:
        layout.tree(world, x, y)
    _plants(sc)
    world.teleports.update(TELEPORTS)
    player = Agent(world, "agent", 12, 18, facing="north")
    player.add(spawn(world, "shovel"))
    player.add(GrowingSeed(world, sc.grow_mushroom))
    Chef(world, 20, 21, colony)
    Farmer(world, 11, 12, colony)
    for i, home in enumerate(COLONIST_HOMES):
        colony.colonists.append(Colonist(world, f"Colonist {i}", 12 + i, 19, home, colony))
    return player


def new_mushroom(sc: SpaceSick, colour: str, rng_draw: float, green: bool) -> WorldObject:
    """A mushroom of `colour`, with its mold created right after it either way. Normal: the mold
    colonises every mushroom of its host colour(s), and its spores reach a mushroom of another
    colour when `rng_draw` < SPORE_SPREAD (a diet of the "usual" safe colours is no cure);
    Challenge: poisonous iff `rng_draw` < 0.5."""
    world = sc.world
    food = mushroom(world, colour, green)
    growth = mold(world, sc.mold_matter.copy())
    spread = sc.difficulty == "normal" and rng_draw < SPORE_SPREAD
    if colour in sc.moldy or spread:
        if colour not in sc.moldy:
            growth.name = "mold spores"
        food.add_part(growth)
        food.poisonous = True  # the mold's mycotoxin: heat kills the mold, not the toxin
    else:
        growth.remove_from_world()
    if sc.difficulty == "challenge" and rng_draw < 0.5:
        food.poisonous = True
    return food


def _mushrooms(sc: SpaceSick, count: int) -> list[WorldObject]:
    """`count` mushrooms in random order, every colour at least once."""
    challenge = sc.difficulty == "challenge"
    colours = sc.shuffled([*COLOURS, *(sc.choice(COLOURS) for _ in range(count - len(COLOURS)))])
    rng = sc.world.rng_build
    draws = [float(rng.random()) for _ in colours]
    if challenge and min(draws) >= 0.5:  # at least one poisonous mushroom for the rocks to find
        draws[int(rng.integers(0, count))] = 0.0
    greens = [(bool(rng.random() < 0.5) if challenge else c == "green") for c in colours]
    return [new_mushroom(sc, c, d, g) for c, d, g in zip(colours, draws, greens, strict=True)]


def _science_lab(world: World, colony: Colony) -> None:
    layout.building(world, 8, 21, 8, 6, "Science Lab")
    spots = {"microscope": (9, 22), "spectrometer": (10, 22), "PH meter": (11, 22), "radiation meter": (12, 22),
             "sampler": (9, 25), "thermometer": (14, 24)}  # fmt: skip
    for kind in LAB_INSTRUMENTS:
        inst = lab_instrument(world, kind)
        colony.instruments.append(inst)
        if kind in spots:
            layout.table_with(world, *spots[kind], inst)
        else:
            world.place(inst, 14, 25, Layer.OBJECTS)
    layout.table_with(world, 9, 24, spawn(world, "petri_dish"))
    source = layout.place(
        world, "quantum_crystal", 14, 22, name="radioactive source", type_="radioactive source", sprite="crystal"
    )
    source.materials = [material("heavy_radioactive")]
    source.temperature_c = 50.0


def _cafeteria(world: World, colony: Colony) -> None:
    layout.building(world, 19, 20, 8, 7, "Cafeteria")
    colony.tables = [layout.place(world, "table", x, 23) for x in range(21, 26)]
    colony.pot = spawn(world, "pot", name="cafeteria pot")
    colony.prep_table = layout.table_with(world, 22, 21, colony.pot)
    world.place(appliance(world, "fridge"), 23, 21)
    layout.place(world, "sink", 24, 21)
    world.place(appliance(world, "stove"), 25, 21)
    layout.table_with(world, 25, 25, spawn(world, "flower_pot"))
    layout.place(world, "chair", 20, 25)


def _farm(sc: SpaceSick, colony: Colony) -> None:
    world = sc.world
    layout.building(world, 11, 8, 4, 4, "Farm")
    colony.seed_jar = SeedJar(world, partial(GrowingSeed, world, sc.grow_mushroom))  # picklable: no closure
    layout.table_with(world, 13, 9, colony.seed_jar)
    colony.shovel = layout.place(world, "shovel", *colony.shovel_spot)
    bag = ColonyFertilizerBag(world, "fertilizer bag", "fertilizer bag", [material("paper")])
    world.place(bag, 12, 10)
    for x, y in FIELD:
        layout.clear_ground(world, x, y)
        soil = FieldSoil(world, "soil", "soil")
        soil.add(spawn(world, "dirt"))
        world.place(soil, x, y, Layer.WORLD)
        colony.soil.append(soil)
    FieldKeeper(world, colony.soil)


def _cave(sc: SpaceSick, colony: Colony, challenge: bool) -> None:
    world = sc.world
    for x in range(0, 6):
        for y in range(0, 5):
            layout.clear_ground(world, x, y)
            layout.place(world, "floor", x, y, name="cave floor", type_="cave floor", sprite="cave_floor")
            if (x in (0, 5) or y in (0, 4)) and (x, y) != (3, 4):
                layout.place(world, "wall", x, y, name="cave wall", type_="cave wall", sprite="cave_wall")
    layout.place(world, "sign", 2, 5, document="Cave")
    for x, y in ((1, 2), (2, 1)):
        if challenge:
            rock = GlowingRock(world, sc.rock_light)
            colony.rocks.append(rock)
            world.place(rock, x, y, Layer.OBJECTS)
        else:
            layout.place(world, "rock_glowing", x, y)
    for x, y in ((4, 1), (3, 3), (1, 3)):
        layout.place(world, "rock_glowing", x, y, name="rock")


def _dwellings(world: World) -> None:
    layout.building(world, 19, 4, 8, 5, "Infirmary")
    for x in (20, 21):
        layout.place(world, "bed", x, 5)
    layout.place(world, "table", 25, 5)
    world.place(appliance(world, "fridge"), 25, 7)
    layout.building(world, 19, 11, 8, 7, "Barracks")
    for x in (20, 22, 24, 25):
        layout.place(world, "bed", x, 12)
        layout.place(world, "bedside_table", x, 13 if x != 25 else 14)
    layout.place(world, "sign", 17, 19, name="statue", type_="statue", sprite="statue",
                 document="Colony founder, first to set foot on Planet X.")  # fmt: skip


def appliance(world: World, kind: str) -> WorldObject:
    """A fridge (on, -4 C) or a stove (off, 350 C) that costs nothing while idle."""
    if kind == "fridge":
        return ColonyAppliance(world, kind, kind, [material("metal")], set_point=-4.0, activated=True)
    return ColonyAppliance(world, kind, kind, [material("metal")], set_point=350.0)


def _plants(sc: SpaceSick) -> None:
    world = sc.world
    placed = 0
    while placed < 15:
        x, y = sc.randint(0, world.size - 1), sc.randint(0, world.size - 1)
        objs = world.top_level_at(x, y)
        if (x, y) not in QUIET and len(objs) == 1 and objs[0].type == "grass":
            layout.place(world, "plant_generic", x, y)
            placed += 1
