"""The house of the navigation and search unit tasks: four rooms round a cross-shaped hall,
a back door, and a small soil plot behind the house."""

from __future__ import annotations

from discoverylab.scenarios import layout
from discoverylab.scenarios.base import Scenario
from discoverylab.world.objects import WorldObject

HOUSE_X, HOUSE_Y, HOUSE_W, HOUSE_H = 10, 10, 13, 15
START = (HOUSE_X + HOUSE_W // 2, HOUSE_Y + HOUSE_H)  # outside the front door
# Room origins (their walls' top-left corner): top-left, top-right, bottom-left, bottom-right.
ROOM_SPOTS = ((10, 11), (17, 11), (10, 19), (18, 19))
# First interior column of each room (the original put the bedroom chair at origin + 0..3,
# which lands in a wall for two of the four rooms; ours stays inside the room).
ROOM_INTERIOR_X = {(10, 11): 11, (17, 11): 18, (10, 19): 11, (18, 19): 18}
LOOSE_OBJECTS = ("mushroom", "flower_pot", "seed", "coin", "key", "red_flower", "blue_flower")
LOCATIONS = ("kitchen", "bedroom", "science lab", "empty room", "soil plot")

Rect = tuple[int, int, int, int]  # x0, y0, x1, y1 inclusive


def _maybe_loose_object(sc: Scenario, holder: WorldObject) -> None:
    """With probability 5/6, one random small object on (or in) `holder`."""
    if sc.randint(0, 5) != 0:
        holder.add(layout.spawn(sc.world, sc.choice(LOOSE_OBJECTS)))


def _table_and_chairs(sc: Scenario, x: int, y: int) -> WorldObject:
    """A table with a chair on each side with probability 1/2 (drawn n, s, e, w)."""
    sides = [side for side in "nsew" if sc.randint(0, 1) == 0]
    table = layout.place(sc.world, "table", x, y)
    offsets = {"n": (0, -1), "s": (0, 1), "w": (-1, 0), "e": (1, 0)}
    for side in "nswe":
        if side in sides:
            layout.place(sc.world, "chair", x + offsets[side][0], y + offsets[side][1])
    return table


def _kitchen(sc: Scenario, x: int, y: int, devices: int) -> None:
    world = sc.world
    table = layout.spawn(world, "table")
    if sc.randint(0, 1) == 0:
        table.add(layout.spawn(world, "mushroom"))
    appliances = [layout.spawn(world, kind) for kind in ("fridge", "stove", "sink")] + [table]
    for i, obj in enumerate(sc.shuffled(appliances)):
        if i < devices:
            world.place(obj, x + 1 + i, y)
        else:
            obj.remove_from_world()
    _maybe_loose_object(sc, _table_and_chairs(sc, x + 2, y + 3))


def _bedroom(sc: Scenario, x: int, y: int) -> None:
    world = sc.world
    for i, kind in enumerate(sc.shuffled(["bed", "bedside_table"])):
        obj = layout.place(world, kind, x + 1 + i, y)
        if kind == "bedside_table":
            _maybe_loose_object(sc, obj)
    if sc.randint(0, 1) == 0:
        layout.place(world, "chair", ROOM_INTERIOR_X[(x, y)] + sc.randint(0, 3), y + 3)


def _science_lab(sc: Scenario, x: int, y: int) -> None:
    for i, kind in enumerate(sc.shuffled(["microscope", "spectrometer", "petri_dish"])):
        layout.table_with(sc.world, x + 1 + i, y, layout.spawn(sc.world, kind))
    _maybe_loose_object(sc, _table_and_chairs(sc, x + 2, y + 3))


def build_house(sc: Scenario) -> tuple[dict[str, Rect], str]:
    """Build the house, its rooms and the soil plot. Returns each location's region (one tile
    larger than the room, as the original scores it) and a randomly chosen target location."""
    world = sc.world
    layout.building(world, HOUSE_X, HOUSE_Y, HOUSE_W, HOUSE_H, "House")
    spots: list[tuple[int, int]] = sc.shuffled(ROOM_SPOTS)
    kx, ky = spots[0]
    _kitchen(sc, kx, ky, devices=3 if ky >= HOUSE_Y + 9 else 4)
    _bedroom(sc, *spots[1])
    _science_lab(sc, *spots[2])
    fx = HOUSE_X + sc.randint(0, HOUSE_W - 2)
    fy = HOUSE_Y - sc.randint(5, 7)
    for i in range(3):
        for j in range(3):
            layout.ground(world, "soil", fx + i, fy + j)
            if sc.randint(0, 2) == 0:
                layout.place(world, "plant_generic", fx + i, fy + j)
    regions: dict[str, Rect] = {
        name: (x, y, x + 5, y + 5) for name, (x, y) in zip(LOCATIONS[:4], spots, strict=True)
    }
    regions["soil plot"] = (fx, fy, fx + 3, fy + 3)
    target = sc.choice(LOCATIONS)
    # The hall: walls along y = 16 and 18 and x = 15 and 17, open in the middle.
    for i in range(1, HOUSE_W - 1):
        if i not in (5, 6, 7):
            layout.place(world, "wall", HOUSE_X + i, HOUSE_Y + 6)
            layout.place(world, "wall", HOUSE_X + i, HOUSE_Y + 8)
    for j in range(1, HOUSE_H - 1):
        if j not in (5, 6, 7, 8, 9):
            layout.place(world, "wall", HOUSE_X + 5, HOUSE_Y + j)
            layout.place(world, "wall", HOUSE_X + 7, HOUSE_Y + j)
    layout.door_at(world, HOUSE_X + 6, HOUSE_Y)  # back door
    return regions, target


def decorate(sc: Scenario) -> None:
    """Two trees flanking the start, a plant at (15, 1) and 15 random plants."""
    layout.tree(sc.world, START[0] - 2, START[1])
    layout.tree(sc.world, START[0] + 2, START[1])
    layout.place(sc.world, "plant_generic", 15, 1)
    layout.scatter_plants(sc.world)


def inside(rect: Rect, x: int, y: int) -> bool:
    return rect[0] <= x <= rect[2] and rect[1] <= y <= rect[3]
