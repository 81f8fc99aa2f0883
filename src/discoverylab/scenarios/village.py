"""Lost in Translation maps: the alien village (Normal, Challenge) and the PlanetX Store (Easy).

Coordinates follow the original (spec section 12.8). Every sign and disk text is written with
"[token]" placeholders and translated into the alien language once the map is built.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from discoverylab.scenarios import layout
from discoverylab.scenarios.village_things import (
    COLORS,
    CountingComputer,
    FlagPole,
    FloppyDisk,
    Furniture,
    colored_flower,
    colored_key,
    colored_mushroom,
    measuring_tape,
    paint_bucket,
)
from discoverylab.world.materials import material
from discoverylab.world.objects import Layer, WorldObject
from discoverylab.world.unpickle import FastState
from discoverylab.world.world import World

COLOR_CODES = {"r": "red", "g": "green", "b": "blue", "y": "yellow", "p": "pink", "w": "white", "o": "orange"}
SHOP_LAYOUT = ("xxxxxxx", "xrbywpx", "xxxxxxx", "xgxxxox")  # key shop and paint shop tables
FARM_ROW = "rbywgop"
# General store (9x14 at (7,4)): colour letters = two keys of that colour on a "[colour] [key]"
# table; digits = one item on a "[name]" table (0 = an empty unsigned table).
STORE_LAYOUT = (".........", ".0400000.", ".........", ".100.90p.", ".........", ".b02.00y.", ".........",
                ".g03.081.", ".........", ".040.00w.", ".........", ".5r0.60o.")  # fmt: skip
STORE_ITEMS = {
    "1": "mushroom",
    "2": "pot",
    "3": "jar",
    "4": "shovel",
    "5": "seed",
    "6": "flowerpot",
    "8": "flag",
}
# School (9x11 at (19,7)): B bookcase, T tape table, S computer table, P flag pole, p/t desks,
# digits = desks holding the floppy disk of that program.
SCHOOL_LAYOUT = ("", "..B...B..", "...TpS.P.", "", ".3.t.t.0.", "", ".t.t.1.5.", "", ".t.2.t.4.")
PROGRAMS = {
    0: "[Reset]",
    1: "[Add] [one]",
    2: "[Add] [two]",
    3: "[Add] [three]",
    4: "[Add] [four]",
    5: "[Add] [five]",
}
PAINT_SHOP_INTERIOR = (20, 22, 24, 25)  # x0, y0, x1, y1 inclusive
SCHOOL_INTERIOR = (20, 8, 26, 16)
TELEPORTS = {"key shop": (12, 24), "paint shop": (22, 24), "town square": (16, 18), "general store": (11, 10),
             "school": (23, 10)}  # fmt: skip


@dataclass
class Village(FastState):
    """The objects the scorer and the characters need."""

    paint_signs: dict[str, WorldObject] = field(default_factory=dict)
    computer: CountingComputer | None = None
    reset_disk: FloppyDisk | None = None
    tape: WorldObject | None = None
    pole: FlagPole | None = None


def signed_table(world: World, x: int, y: int, text: str, *items: WorldObject) -> WorldObject:
    table = layout.place(world, "table", x, y, name="table with a sign", readable=True, document=text)
    for item in items:
        table.add(item)
    return table


def _paths(world: World, x: int, y: int, dx: int, dy: int, length: int) -> None:
    for i in range(length):
        tx, ty = x + dx * i, y + dy * i
        if not any(o.type == "path" for o in world.layer_at(tx, ty, Layer.WORLD)):
            layout.ground(world, "path", tx, ty)


def _fence(world: World, x: int, y: int, dx: int, dy: int, length: int) -> None:
    for i in range(length):
        layout.place(world, "fence", x + dx * i, y + dy * i)


def _village_sign(world: World, x: int, y: int) -> None:
    """The arch over a village entrance: two impassable posts either side of the way in."""
    for px in (x, x + 2):
        world.place(Furniture(world, "village sign", "village sign", [material("wood")]), px, y)


def _farm(world: World, x: int, y: int) -> None:
    for i in range(3):
        for j, code in enumerate(FARM_ROW):
            layout.ground(world, "soil", x + j, y + i)
            if i == 0:
                world.place(colored_mushroom(world, COLOR_CODES[code]), x + j, y + i)
            elif i == 2:
                world.place(colored_flower(world, COLOR_CODES[code]), x + j, y + i)


def _shop(world: World, x: int, y: int, sign: str, paint: bool, village: Village) -> None:
    layout.building(world, x, y, 7, 6, sign)
    for i, row in enumerate(SHOP_LAYOUT):
        for j, code in enumerate(row):
            if code not in COLOR_CODES:
                continue
            color = COLOR_CODES[code]
            if paint:
                village.paint_signs[color] = signed_table(
                    world, x + j, y + i, f"[{color}]", paint_bucket(world, color)
                )
            else:
                layout.table_with(world, x + j, y + i, *(colored_key(world, color) for _ in range(3)))


def _general_store(world: World, x: int, y: int) -> None:
    layout.building(world, x, y, 9, 14, "[General Store]\n<The logo is a shopping cart>")
    for i, row in enumerate(STORE_LAYOUT):
        for j, code in enumerate(row):
            tx, ty = x + j, y + i
            if code in COLOR_CODES:
                color = COLOR_CODES[code]
                signed_table(
                    world, tx, ty, f"[{color}] [key]", colored_key(world, color), colored_key(world, color)
                )
            elif code == "9":
                signed_table(world, tx, ty, "[red] [flower]", colored_flower(world, "red"))
            elif code == "0":
                layout.place(world, "table", tx, ty)
            elif code in STORE_ITEMS:
                item = _store_item(world, STORE_ITEMS[code])
                signed_table(world, tx, ty, f"[{item.name}]", item)


def _store_item(world: World, kind: str) -> WorldObject:
    if kind == "mushroom":
        return layout.spawn(world, "mushroom", color="")  # no colour word, like the original's
    if kind == "flowerpot":
        return layout.spawn(world, "flower_pot", name="flowerpot")
    return layout.spawn(world, kind)


def _school(world: World, x: int, y: int, village: Village) -> None:
    layout.building(world, x, y, 9, 11, "[School]\n<The logo is a student hat>")
    computer = CountingComputer(world, "computer", "computer", [material("metal")])
    tape = measuring_tape(world)
    for i, row in enumerate(SCHOOL_LAYOUT):
        for j, code in enumerate(row):
            tx, ty = x + j, y + i
            if code == "P":
                village.pole = FlagPole(world, "flag pole", "flag pole", [material("metal")])
                world.place(village.pole, tx, ty)
            elif code == "S":
                layout.table_with(world, tx, ty, computer)
            elif code == "T":
                layout.table_with(world, tx, ty, tape)
            elif code == "B":
                world.place(Furniture(world, "bookcase", "bookcase", [material("wood")]), tx, ty)
            elif code in "pt":
                layout.place(world, "table", tx, ty, name="desk", type_="desk")
            elif code.isdigit():
                value = int(code)
                disk = FloppyDisk(
                    world, f"floppy disk ({PROGRAMS[value]})", "floppy disk", [material("metal")], value=value
                )
                layout.place(world, "table", tx, ty, name="desk", type_="desk").add(disk)
                if value == 0:
                    village.reset_disk = disk
    computer.pole = village.pole
    village.computer, village.tape = computer, tape


def _town_square(world: World, x: int, y: int) -> None:
    layout.place(
        world, "sign", x + 1, y + 1, name="statue", type_="statue", document="A statue of the colony founder."
    )
    _paths(world, x, y, 1, 0, 3)
    _paths(world, x, y + 1, 1, 0, 3)
    _paths(world, x, y + 2, 1, 0, 3)


def build_village(world: World, paint_shop: bool = True) -> Village:
    """Everything but the characters and the scattered flowers and mushrooms. Without the
    paint shop its corner stays a meadow (the Tutorial puts Dr. House there)."""
    village = Village()
    layout.fill_grass(world)
    _farm(world, 20, 3)
    _shop(world, 9, 21, "[Key Shop]\n<The logo is a key>", False, village)
    if paint_shop:
        _shop(world, 19, 21, "[Paint Shop]\n<The logo is a paint bucket>", True, village)
    _general_store(world, 7, 4)
    _school(world, 19, 7, village)
    _town_square(world, 16, 18)
    for x, y, dx, dy, n in ((17, 1, 0, 1, 30), (12, 28, 1, 0, 11), (17, 19, 1, 0, 15), (1, 19, 1, 0, 16),
                            (11, 18, 0, 1, 1), (23, 18, 0, 1, 1), (22, 27, 0, 1, 1), (12, 27, 0, 1, 1)):  # fmt: skip
        _paths(world, x, y, dx, dy, n)
    for x, y, dx, dy, n in ((6, 2, 0, 1, 16), (6, 2, 1, 0, 10), (6, 21, 0, 1, 8), (6, 29, 1, 0, 10),
                            (19, 29, 1, 0, 10), (28, 21, 0, 1, 8), (19, 2, 1, 0, 10), (28, 2, 0, 1, 16)):  # fmt: skip
        _fence(world, x, y, dx, dy, n)
    _village_sign(world, 16, 2)
    _village_sign(world, 16, 29)
    layout.place(world, "plant_generic", 15, 1)
    layout.scatter_plants(world, 15)
    return village


def scatter_outskirts(world: World) -> None:
    """Four mushrooms and four flowers of every colour on bare grass outside the fences."""
    pending: list[WorldObject] = []
    for color in COLORS:
        for _ in range(4):
            pending += [colored_mushroom(world, color), colored_flower(world, color)]
    rng = world.rng_build
    while pending:
        x, y = (int(v) for v in rng.integers(0, world.size, size=2))
        if not (x < 6 or x > 28 or y < 2 or y > 29):
            continue
        if all(o.type == "grass" for o in world.top_level_at(x, y)):
            world.place(pending.pop(), x, y)


# ---- Easy: the PlanetX Store -------------------------------------------------------------
EASY_KINDS = ("mushroom", "seed", "microscope", "shovel", "dirt", "spectrometer", "thermometer", "radiation_meter",
              "petri_dish", "key", "quantum_crystal", "fertilizer_bag", "coin", "measuring_tape", "rock_glowing")  # fmt: skip
EASY_TABLES = ((16, 10), (17, 10), (18, 10), (19, 10), (20, 10))
EASY_NPC_SPOTS = ((16, 12), (17, 12), (19, 12), (20, 12))
EASY_TREES = ((13, 10), (21, 8), (17, 6), (15, 15), (18, 20), (22, 11), (26, 16), (29, 16), (13, 18), (14, 16),
              (10, 9), (8, 11), (7, 15), (28, 8))  # fmt: skip


def build_store(
    world: World, table_spots: list[tuple[int, int]], order: list[int], words: list[str]
) -> list[tuple[WorldObject, str]]:
    """The locked store with five signed tables, the i-th signed `words[i]` (the instance's alien
    words); returns (object, alien word) in table order."""
    layout.fill_grass(world)
    layout.building(world, 15, 9, 7, 5, "PlanetX Store", key_id=123)
    placed = []
    for (x, y), index, word in zip(table_spots, order[:5], words, strict=True):
        obj = layout.spawn(world, EASY_KINDS[index])
        signed_table(world, x, y, word, obj)
        placed.append((obj, word))
    _paths(world, 17, 14, 1, 0, 15)
    for x, y in EASY_TREES:
        layout.tree(world, x, y)
    layout.place(world, "plant_generic", 15, 1)
    layout.scatter_plants(world, 15)
    return placed
