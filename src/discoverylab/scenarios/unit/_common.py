"""Pieces shared by several unit-test tasks: the object pool and the villa map."""

from __future__ import annotations

from discoverylab.scenarios import layout
from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.explore import Explorer
from discoverylab.scenarios.unit._levels import Cell, Rect, outdoor, path_holes, start_in
from discoverylab.scoring.scorecard import Scorecard, ScorecardItem
from discoverylab.world.catalog import spawn_some
from discoverylab.world.objects import WorldObject
from discoverylab.world.world import World

# The 16-object pool of the pick-and-place family (template kinds, in the original's order).
OBJECT_POOL = (
    "mushroom", "seed", "microscope", "shovel", "dirt", "flower_pot", "spectrometer", "thermometer",
    "radiation_meter", "petri_dish", "key", "quantum_crystal", "fertilizer_bag", "coin", "measuring_tape",
    "rock_glowing",
)  # fmt: skip

# Table spots inside the 7x6 villa, relative to its top-left wall corner (the original's, at
# (15, 9)); the six interior cells between them see the whole villa in a 7x7 view.
VILLA_W, VILLA_H = 7, 6
VILLA_TABLE_SPOTS = ((2, 1), (3, 1), (4, 1), (1, 2), (1, 3), (5, 2), (5, 3), (2, 4), (4, 4))
VILLA_CENTRE = (2, 2, 4, 3)  # x0, y0, x1, y1 relative, inclusive
# Challenge's nine tables would fill all nine spots above and fence the agent into the centre
# (or a corner) of the 7x6 villa; it is 9x7 instead, its tables drawn among the wall-side tiles
# of the top and bottom rows (not before the door) and the middle of each side wall. The 5x3
# middle and the side tiles next to the corners stay free, so every free tile joins every other
# and every table stands beside a free tile.
VILLA_CHALLENGE_W, VILLA_CHALLENGE_H = 9, 7
VILLA_CHALLENGE_SPOTS = (
    *((x, 1) for x in range(1, 8)), *((x, 5) for x in range(1, 8) if x != 4), (1, 3), (7, 3),
)  # fmt: skip


class Site:
    """Where a building of a level stands: its top-left wall corner, drawn from the build stream
    anywhere its walls, its front door and the tile before it fit in the world."""

    def __init__(self, sc: Scenario, w: int, h: int, margin: int = 2) -> None:
        size = sc.world.size
        self.w, self.h = w, h
        self.x = sc.randint(margin, size - margin - w)
        self.y = sc.randint(margin, size - margin - h - 1)

    def at(self, dx: int, dy: int) -> Cell:
        """A cell given relative to the corner."""
        return self.x + dx, self.y + dy

    def rel(self, rect: Rect) -> Rect:
        return self.x + rect[0], self.y + rect[1], self.x + rect[2], self.y + rect[3]

    @property
    def interior(self) -> Rect:
        return self.x + 1, self.y + 1, self.x + self.w - 2, self.y + self.h - 2

    @property
    def footprint(self) -> Rect:
        """The walls and the tile in front of the door."""
        return self.x, self.y, self.x + self.w - 1, self.y + self.h


def bare_site(site: Site) -> tuple[tuple[int, int, int, int], ...]:
    """`layout.fill_grass`'s holes for a level laid round `site`: the building's tiles and
    those of the path `outdoor_around` lays (each covered before anything reads it)."""
    return ((site.x, site.y, site.w, site.h), *path_holes([site.footprint]))


def villa(sc: Scenario, name: str = "Pick and Place Villa") -> Site:
    """A meadow and the locked villa (7x6; 9x7 at Challenge) at a drawn site; its door needs
    key 123, which does not exist."""
    w, h = (VILLA_CHALLENGE_W, VILLA_CHALLENGE_H) if sc.difficulty == "challenge" else (VILLA_W, VILLA_H)
    site = Site(sc, w, h)
    layout.fill_grass(sc.world, under=bare_site(site))
    layout.building(sc.world, site.x, site.y, w, h, name, key_id=123)
    return site


def outdoor_around(sc: Scenario, site: Site) -> None:
    """Grass, a path, big trees and plants around the working area, clear of the building."""
    outdoor(sc.world, [site.footprint])


def start_inside(sc: Scenario, site: Site, centre: Rect | None) -> Cell:
    """The agent's start: a free interior cell, in `centre` (relative) where one is free;
    when `centre` is None, anywhere inside that joins the building's largest walkable region
    (not a corner fenced off by tables)."""
    if centre is None:
        return start_in(sc, site.interior, joined=True)
    return start_in(sc, site.interior, site.rel(centre))


def spawn_pool(world: World, kinds: tuple[str, ...] | list[str]) -> list[WorldObject]:
    return [layout.spawn(world, kind) for kind in kinds]


def score_pick_and_place(
    card: Scorecard, target: WorldObject, container: WorldObject, pick: ScorecardItem, place: ScorecardItem
) -> None:
    """The pick-and-place rule: picked up, then placed in the container; anything else put in
    the container first decides the task unsuccessfully."""
    if target.held_by_agent:
        pick.set(1)
    if target.parent is container:
        place.set(1)
    if container.contents and not place.completed:
        card.finish(False)
    elif pick.completed and place.completed:
        card.finish(True)


def villa_objects_and_container(
    scenario: Scenario, site: Site, objects: int = 5, both_containers: bool = False
) -> tuple[list[WorldObject], WorldObject]:
    """`objects` pool objects on villa tables and a pot or jar on another (both with
    `both_containers`: the second a distractor); returns (the objects, the first being the
    target; the container)."""
    world = scenario.world
    table_spots = VILLA_CHALLENGE_SPOTS if site.w == VILLA_CHALLENGE_W else VILLA_TABLE_SPOTS
    spots = [site.at(*s) for s in scenario.shuffled(table_spots)]
    pool = shuffled_kept(scenario, OBJECT_POOL, objects)
    keep = 2 if both_containers else 1
    containers = shuffled_kept(scenario, ("pot", "jar"), keep)
    for obj, (x, y) in zip(pool, spots[:objects], strict=True):
        layout.table_with(world, x, y, obj)
    for i in range(keep):
        layout.table_with(world, *spots[objects + i], containers[i])
    return pool, containers[0]


def shuffled_kept(sc: Scenario, kinds: tuple[str, ...], count: int) -> list[WorldObject]:
    """The first `count` objects of `sc.shuffled(spawn_pool(world, kinds))`, the others removed
    from the world: the same draw, objects and UUIDs, without building the others
    (`catalog.spawn_some`; spawning draws nothing, so drawing the order first is the same)."""
    order: list[int] = sc.shuffled(list(range(len(kinds))))
    kept = spawn_some(sc.world, kinds, order[:count])
    return [kept[i] for i in order[:count]]


def put_named_in(ex: Explorer, item: str, container: str) -> OracleGen:
    """The oracles' errand: look around the villa until both named objects are in sight (a start
    cell may not see everything), take the item and PUT it in the container."""
    for name in (item, container):
        while not ex.map.named(name):
            yield from ex.explore_frontier(lambda s: s.name == "floor")
    thing = ex.map.named(item)[0].uuid
    yield from ex.take(thing)
    target = ex.map.named(container)[0].uuid
    if not ex.reachable(target):
        yield from ex.teleport(target)
    yield from ex.checked(ot.act("PUT", thing, target))
