"""The house of the navigation and search unit tasks: four rooms round a cross-shaped hall,
a back door, and a small soil plot behind the house. The house stands at a drawn site."""

from __future__ import annotations

from discoverylab.scenarios import layout
from discoverylab.scenarios.base import Scenario
from discoverylab.scenarios.unit._levels import Cell, Rect, inside
from discoverylab.world.objects import WorldObject
from discoverylab.world.unpickle import FastState

HOUSE_W, HOUSE_H = 13, 15
# Room origins (their walls' top-left corner) relative to the house's corner: top-left,
# top-right, bottom-left, bottom-right (the original's house stood at (10, 10)).
ROOM_SPOTS = ((0, 1), (7, 1), (0, 9), (8, 9))
# First interior column of each room, relative to the house (the original put the bedroom
# chair at origin + 0..3, which lands in a wall for two of the four rooms; ours stays inside).
ROOM_INTERIOR_X = {(0, 1): 1, (7, 1): 8, (0, 9): 1, (8, 9): 8}
LOOSE_OBJECTS = ("mushroom", "flower_pot", "seed", "coin", "key", "red_flower", "blue_flower")
LOCATIONS = ("kitchen", "bedroom", "science lab", "empty room", "soil plot")
# The hall's walls relative to the house's corner, in the order they are placed: rows 6 and 8
# (column by column), then columns 5 and 7 (row by row), open in the middle.
HALL_WALLS = (
    *((i, row) for i in range(1, HOUSE_W - 1) if i not in (5, 6, 7) for row in (6, 8)),
    *((col, j) for j in range(1, HOUSE_H - 1) if j not in (5, 6, 7, 8, 9) for col in (5, 7)),
)

__all__ = ["HOUSE_H", "HOUSE_W", "LOCATIONS", "House", "Rect", "decorate", "inside"]


class House(FastState):
    """Where the house stands: its corner is drawn from the build stream wherever the house,
    the soil plot behind it (5-7 tiles north) and the tile before its front door fit."""

    def __init__(self, sc: Scenario) -> None:
        self.x = sc.randint(2, sc.world.size - 2 - HOUSE_W)
        self.y = sc.randint(7, sc.world.size - 2 - HOUSE_H)

    @property
    def site(self) -> tuple[int, int, int, int]:
        """(x, y, w, h) of the house's walls and floor (`layout.fill_grass`'s `under`)."""
        return self.x, self.y, HOUSE_W, HOUSE_H

    @property
    def front(self) -> Cell:
        """The tile just outside the front door (the original's start)."""
        return self.x + HOUSE_W // 2, self.y + HOUSE_H

    @property
    def hall(self) -> Cell:
        """The middle of the hall."""
        return self.x + HOUSE_W // 2, self.y + 7

    @property
    def rect(self) -> Rect:
        return self.x, self.y, self.x + HOUSE_W - 1, self.y + HOUSE_H - 1

    def area(self, margin_x: int = 4, margin_y: int = 3) -> Rect:
        """The house and a margin round it, clipped to the world."""
        return (max(0, self.x - margin_x), max(0, self.y - margin_y),
                min(31, self.x + HOUSE_W - 1 + margin_x), min(31, self.y + HOUSE_H - 1 + margin_y))  # fmt: skip


def _maybe_loose_object(sc: Scenario, holder: WorldObject) -> None:
    """With probability 5/6, one random small object on (or in) `holder`."""
    if sc.randint(0, 5) != 0:
        holder.add(layout.spawn(sc.world, sc.choice(LOOSE_OBJECTS)))


def _table_and_chairs(sc: Scenario, x: int, y: int) -> WorldObject:
    """A table with a chair on each side with probability 1/2 (drawn n, s, e, w)."""
    # One draw of four: the values and stream state of `sc.randint(0, 1)` per side (tested).
    heads = sc.world.rng_build.integers(0, 2, size=4).tolist()
    sides = [side for side, head in zip("nsew", heads, strict=True) if head == 0]
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


def _bedroom(sc: Scenario, x: int, y: int, interior_x: int) -> None:
    world = sc.world
    for i, kind in enumerate(sc.shuffled(["bed", "bedside_table"])):
        obj = layout.place(world, kind, x + 1 + i, y)
        if kind == "bedside_table":
            _maybe_loose_object(sc, obj)
    if sc.randint(0, 1) == 0:
        layout.place(world, "chair", interior_x + sc.randint(0, 3), y + 3)


def _science_lab(sc: Scenario, x: int, y: int) -> None:
    for i, kind in enumerate(sc.shuffled(["microscope", "spectrometer", "petri_dish"])):
        layout.table_with(sc.world, x + 1 + i, y, layout.spawn(sc.world, kind))
    _maybe_loose_object(sc, _table_and_chairs(sc, x + 2, y + 3))


def _soil_plot(sc: Scenario, fx: int, fy: int) -> None:
    """A 3x3 soil plot at (fx, fy), a plant on each tile with probability 1/3."""
    world = sc.world
    plants = iter(world.rng_build.integers(0, 3, size=9).tolist())  # `sc.randint(0, 2)` per tile, in one draw
    for i in range(3):
        for j in range(3):
            layout.ground(world, "soil", fx + i, fy + j)
            if next(plants) == 0:
                layout.place(world, "plant_generic", fx + i, fy + j)


def _clear_top_right_opening(sc: Scenario, hx: int, hy: int) -> None:
    """The top-right room opens on the hall at its bottom-left tile (house (8, 5)); a kitchen's
    or lab's table there stands at (9, 4), and its west and south chairs together shut that
    tile off from the room (about 1 level in 50 had its room, and any goal in it, out of
    walking reach: tests/test_level_reach.py). The west chair goes then; no draw changes."""
    world = sc.world
    west, south = (hx + 8, hy + 4), (hx + 9, hy + 5)
    chairs = [[o for o in world.top_level_at(*cell) if o.type == "chair"] for cell in (west, south)]
    if chairs[0] and chairs[1]:
        chairs[0][0].remove_from_world()


def build_house(sc: Scenario, house: House) -> tuple[dict[str, Rect], str]:
    """Build the house, its rooms and the soil plot. Returns each location's region (one tile
    larger than the room, as the original scores it) and a randomly chosen target location."""
    world = sc.world
    hx, hy = house.x, house.y
    layout.building(world, hx, hy, HOUSE_W, HOUSE_H, "House")
    spots: list[tuple[int, int]] = sc.shuffled(ROOM_SPOTS)
    rooms = [(hx + rx, hy + ry) for rx, ry in spots]
    kx, ky = rooms[0]
    _kitchen(sc, kx, ky, devices=3 if spots[0][1] >= 9 else 4)
    _bedroom(sc, *rooms[1], interior_x=hx + ROOM_INTERIOR_X[spots[1]])
    _science_lab(sc, *rooms[2])
    _clear_top_right_opening(sc, hx, hy)
    fx = hx + sc.randint(0, HOUSE_W - 2)
    fy = hy - sc.randint(5, 7)
    _soil_plot(sc, fx, fy)
    regions: dict[str, Rect] = {
        name: (x, y, x + 5, y + 5) for name, (x, y) in zip(LOCATIONS[:4], rooms, strict=True)
    }
    regions["soil plot"] = (fx, fy, fx + 3, fy + 3)
    target = sc.choice(LOCATIONS)
    # The hall: walls along rows 6 and 8 and columns 5 and 7 of the house, open in the middle
    # (`place_each`: what a `place` per tile in this order gives, in one call).
    layout.place_each(world, "wall", [(hx + dx, hy + dy) for dx, dy in HALL_WALLS])
    layout.door_at(world, hx + 6, hy)  # back door
    return regions, target


def decorate(sc: Scenario, house: House) -> None:
    """Two trees flanking the front door's tile, a plant at (15, 1) and 15 random plants."""
    sx, sy = house.front
    for x in (sx - 2, sx + 2):
        if all(o.type == "grass" for o in sc.world.top_level_at(x, sy)):  # never over the goal
            layout.tree(sc.world, x, sy)
    if all(o.type == "grass" for o in sc.world.top_level_at(15, 1)):
        layout.place(sc.world, "plant_generic", 15, 1)
    layout.scatter_plants(sc.world)
