"""Pieces shared by several unit-test tasks: the object pool and the villa map."""

from __future__ import annotations

from discoverylab.scenarios import layout
from discoverylab.scenarios.base import Scenario
from discoverylab.scoring.scorecard import Scorecard, ScorecardItem
from discoverylab.world.objects import WorldObject
from discoverylab.world.world import World

# The 16-object pool of the pick-and-place family (template kinds, in the original's order).
OBJECT_POOL = (
    "mushroom", "seed", "microscope", "shovel", "dirt", "flower_pot", "spectrometer", "thermometer",
    "radiation_meter", "petri_dish", "key", "quantum_crystal", "fertilizer_bag", "coin", "measuring_tape",
    "rock_glowing",
)  # fmt: skip

VILLA_TABLE_SPOTS = ((17, 10), (18, 10), (19, 10), (16, 11), (16, 12), (20, 11), (20, 12), (17, 13), (19, 13))


def outdoor_base(world: World, trees: int = 14) -> None:
    """Grass, a path, big trees and plants around the working area."""
    layout.fill_grass(world)
    for x in range(17, 32):
        layout.ground(world, "path", x, 15 + 2)
    spots = [(3, 3), (6, 25), (9, 4), (25, 5), (28, 22), (4, 14), (26, 27), (12, 28), (29, 10), (2, 22), (22, 2),
             (7, 10), (27, 15), (14, 4)]  # fmt: skip
    for x, y in spots[:trees]:
        layout.tree(world, x, y)
    layout.scatter_plants(world)


def villa(world: World, name: str = "Pick and Place Villa") -> None:
    """The locked 7x6 villa at (15, 9); its door needs key 123, which does not exist."""
    layout.building(world, 15, 9, 7, 6, name, key_id=123)


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


def villa_objects_and_container(scenario: Scenario) -> tuple[list[WorldObject], WorldObject]:
    """Five pool objects on villa tables and a pot or jar on a sixth, in the original's draw
    order; returns (the five objects, the first being the target; the container)."""
    world = scenario.world
    spots = scenario.shuffled(VILLA_TABLE_SPOTS)
    objects = scenario.shuffled(spawn_pool(world, OBJECT_POOL))
    containers = scenario.shuffled(spawn_pool(world, ["pot", "jar"]))
    for obj, (x, y) in zip(objects[:5], spots[:5], strict=True):
        layout.table_with(world, x, y, obj)
    layout.table_with(world, *spots[5], containers[0])
    for unused in [*objects[5:], *containers[1:]]:
        unused.remove_from_world()
    return objects[:5], containers[0]
