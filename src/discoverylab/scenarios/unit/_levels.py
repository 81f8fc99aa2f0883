"""Procedural level pieces shared by the unit tests (issue 27): pools of names and goal
objects, outdoor scenery that keeps clear of a building placed anywhere, and start cells.

Every draw comes from the scenario's build stream (`Scenario.randint` / `choice` /
`shuffled`), never from the seed itself, so a level's layout, start and goal say nothing about
another level's. All helpers scan only a building's few dozen tiles: resets stay cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from discoverylab.scenarios import layout
from discoverylab.scenarios.base import Scenario
from discoverylab.world.objects import WorldObject
from discoverylab.world.world import World
from discoverylab.world.zones import label_zones

Cell = tuple[int, int]
Rect = tuple[int, int, int, int]  # x0, y0, x1, y1 inclusive

# Characters' names (NPCs to talk to, give to, warn; feed posters): 24, so a named character
# varies across levels.
PEOPLE = (
    "Sally", "Gail", "Harry", "Yugo", "James", "Spock", "Deanna", "Kathryn", "Benjamin", "Michael",
    "Hari", "Bayta", "Salvor", "Arkady", "Hober", "Wanda", "Gaal", "Dors", "Ada", "Bruno", "Chiara",
    "Dmitri", "Esther", "Farid",
)  # fmt: skip

# Goal objects of the doors and search tasks: (template kind, name). Ten coloured flags and
# ten other small things that nothing else in those maps (the house's loose objects
# included) is called, so "pick up the `X`" names
# exactly one object.
GOALS = (
    *(("flag", f"{colour} flag") for colour in ("red", "blue", "green", "yellow", "purple", "orange", "white", "black", "pink", "brown")),
    ("shovel", "shovel"), ("thermometer", "thermometer"),
    ("radiation_meter", "radiation meter"), ("quantum_crystal", "quantum crystal"),
    ("fertilizer_bag", "fertilizer bag"), ("measuring_tape", "measuring tape"), ("rock_glowing", "rock (glowing)"),
    ("densitometer", "densitometer"), ("ph_meter", "PH meter"), ("jar", "jar"),
)  # fmt: skip

# Tree spots of the outdoor maps (the original's), kept only where they miss the building.
TREE_SPOTS = ((3, 3), (6, 25), (9, 4), (25, 5), (28, 22), (4, 14), (26, 27), (12, 28), (29, 10), (2, 22),
              (22, 2), (7, 10), (27, 15), (14, 4))  # fmt: skip


def spawn_goal(sc: Scenario, goal: tuple[str, str]) -> WorldObject:
    kind, name = goal
    return layout.spawn(sc.world, kind, name=name)


def grow(rect: Rect, by: int) -> Rect:
    return rect[0] - by, rect[1] - by, rect[2] + by, rect[3] + by


def inside(rect: Rect, x: int, y: int) -> bool:
    return rect[0] <= x <= rect[2] and rect[1] <= y <= rect[3]


def trees_clear_of(world: World, clear: list[Rect], spots: tuple[Cell, ...] = TREE_SPOTS) -> None:
    """Big trees on those of `spots` whose trunk and leaves miss every rect of `clear`."""
    for x, y in spots:
        if not any(inside(r, x, y) or inside(r, x, y - 1) for r in clear):
            layout.tree(world, x, y)


def _path_cells(clear: list[Rect], path_y: int) -> list[int]:
    """The x of each tile of `outdoor`'s path: row `path_y` from x = 17 on, outside `clear`."""
    return [x for x in range(17, 32) if not any(inside(r, x, path_y) for r in clear)]


def path_holes(clear: list[Rect], path_y: int = 17) -> tuple[tuple[int, int, int, int], ...]:
    """`outdoor`'s path tiles as `layout.fill_grass` holes (x, y, w, h), one per tile: the
    grass there would only be removed again. Only for a scenario that reads none of those
    tiles between the fill and `outdoor` (tests/test_reset_paths.py checks every unit test)."""
    return tuple((x, path_y, 1, 1) for x in _path_cells(clear, path_y))


def outdoor(world: World, clear: list[Rect], path_y: int = 17) -> None:
    """The meadow of the villa-style maps (grass, a path, trees, plants), built after the
    buildings so it keeps clear of them: `clear` are the buildings' rects (and their fronts)."""
    layout.ground_each(world, "path", [(x, path_y) for x in _path_cells(clear, path_y)])
    trees_clear_of(world, [grow(r, 1) for r in clear])
    layout.scatter_plants(world)


def is_free(world: World, x: int, y: int) -> bool:
    """Passable and holding only ground (floor, grass, path)."""
    return world.is_passable(x, y) and all(o.type in GROUND for o in world.top_level_at(x, y))


GROUND = ("floor", "grass", "path")


def free_cells(world: World, rect: Rect) -> list[Cell]:
    """Free cells of `rect`, in scan order (for small rects: a scan costs ~2 us a cell)."""
    out = []
    for x in range(rect[0], rect[2] + 1):
        for y in range(rect[1], rect[3] + 1):
            if is_free(world, x, y):
                out.append((x, y))
    return out


def draw_cell(sc: Scenario, rect: Rect, ok: Callable[[Cell], bool] | None = None) -> Cell:
    """A free cell of `rect` (also passing `ok`), uniform over those: rejection sampling from the
    build stream checks a few cells instead of scanning a large rect on every reset."""
    world = sc.world
    for _ in range(200):
        cell = (sc.randint(rect[0], rect[2]), sc.randint(rect[1], rect[3]))
        if is_free(world, *cell) and (ok is None or ok(cell)):
            return cell
    cells = [c for c in free_cells(world, rect) if ok is None or ok(c)]  # a crowded rect: scan it
    if not cells:
        raise RuntimeError(f"{sc.task_id}: no free cell in {rect}")  # a builder bug, not bad input
    return cast(Cell, sc.choice(cells))


def joined_free_cells(world: World, rect: Rect) -> list[Cell]:
    """The free cells of `rect` in its largest walkable region (4-connected through free cells
    of `rect`, `zones.label_zones`), in scan order: a start there is not shut in a pocket
    between tables (tests/test_level_reach.py)."""
    free = free_cells(world, rect)
    x0, y0 = rect[0], rect[1]
    side = max(rect[2] - x0, rect[3] - y0) + 1
    local = {(x - x0, y - y0) for x, y in free}
    zones = label_zones(side, {(x, y) for x in range(side) for y in range(side)} - local)
    counts: dict[int, int] = {}
    for x, y in local:
        counts[zones[x][y]] = counts.get(zones[x][y], 0) + 1
    if not counts:
        return []
    best = min(counts, key=lambda zone: (-counts[zone], zone))
    return [(x, y) for x, y in free if zones[x - x0][y - y0] == best]


def start_in(sc: Scenario, rect: Rect, preferred: Rect | None = None, joined: bool = False) -> Cell:
    """A start cell drawn from the free cells of `rect` (those inside `preferred` if any are
    free there; with `joined`, only those of its largest walkable region);
    `world.teleports["initial location"]` is set to it."""
    cells = joined_free_cells(sc.world, rect) if joined else free_cells(sc.world, rect)
    if preferred is not None:
        cells = [c for c in cells if inside(preferred, *c)] or cells
    if not cells:
        raise RuntimeError(f"{sc.task_id}: no free start cell in {rect}")  # a builder bug, not bad input
    cell: Cell = sc.choice(cells)
    sc.world.teleports["initial location"] = cell
    return cell
