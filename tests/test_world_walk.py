"""The tick's fast paths keep the world as the general ones would: `World.walk` against
`World.place`, the ticker snapshot against a fresh list, the feed's signal index against a scan."""

from __future__ import annotations

import pytest

from discoverylab.world.catalog import place, spawn
from discoverylab.world.npc import NPC
from discoverylab.world.objects import Layer, WorldObject
from discoverylab.world.world import World, WorldError
from world_kit import meadow


def _scene() -> tuple[World, NPC, set[tuple[int, int]]]:
    """A character between two busy tiles: a table with a jar on one, a bird and an item on the other."""
    world = meadow(3)
    npc = NPC(world, "sally", 5, 5)
    place(world, "table", 4, 5).add(spawn(world, "jar"))
    place(world, "mushroom", 6, 5)
    place(world, "mushroom", 5, 5)
    bird = spawn(world, "jar")
    world.place(bird, 6, 5, Layer.AIR)
    return world, npc, world.watch_tiles()


def _grid(world: World) -> list[list[list[int]]]:
    """Every tile's stack (and each object's layer) as uuids."""
    return [
        [[o.uuid for o in world.stacks[x][y]] + [-1] + [int(o.layer) for o in world.stacks[x][y]]
         for y in range(world.size)]
        for x in range(world.size)
    ]  # fmt: skip


@pytest.mark.parametrize("target", [(6, 5), (5, 6), (5, 4)])
def test_walk_leaves_the_world_as_place_does(target: tuple[int, int]) -> None:
    walked, by_walk, seen_walk = _scene()
    placed, by_place, seen_place = _scene()
    walked.walk(by_walk, *target)
    placed.place(by_place, *target)
    assert _grid(walked) == _grid(placed)
    assert (by_walk.x, by_walk.y, by_walk.layer) == (by_place.x, by_place.y, by_place.layer) == (*target, Layer.AGENT)
    assert seen_walk == seen_place == {(5, 5), target}
    stack = walked.stacks[6][5] if target == (6, 5) else walked.stacks[target[0]][target[1]]
    assert stack.index(by_walk) == sum(o.layer > Layer.AGENT for o in stack)  # below the air, above the rest


def test_walk_hands_unusual_cases_to_place() -> None:
    world, npc, seen = _scene()
    world.place(npc, 5, 5, Layer.OBJECTS)  # a one-off layer: a step puts it back on its own
    world.walk(npc, 5, 6)
    assert npc.layer == Layer.AGENT and npc in world.layer_at(5, 6, Layer.AGENT)
    assert npc not in world.stacks[5][5] and npc not in world.layer_at(5, 5, Layer.OBJECTS)
    item = spawn(world, "mushroom")
    npc.add(item)  # held: walking it onto the grid takes it out of the hands
    world.walk(item, 7, 7)
    assert item.parent is None and item not in npc.contents and world.stacks[7][7][0] is item
    with pytest.raises(WorldError, match="outside"):
        world.walk(npc, 5, world.size)
    assert (npc.x, npc.y) == (5, 6) and npc in world.stacks[5][6]
    assert {(5, 5), (5, 6), (7, 7)} <= seen


class _Counter(WorldObject):
    needs_tick = True

    def __init__(self, world: World, log: list[str], spawn_child: bool = False) -> None:
        super().__init__(world, "counter", "counter")
        self.log, self.spawn_child = log, spawn_child

    def tick(self) -> None:
        self.log.append(f"{self.name}@{self.world.step}")
        if self.spawn_child:
            self.spawn_child = False
            child = _Counter(self.world, self.log)
            child.name = "child"


def test_tickers_created_in_a_tick_start_next_step_and_removed_ones_stop() -> None:
    world = World(0)
    log: list[str] = []
    parent = _Counter(world, log, spawn_child=True)
    world.place(parent, 1, 1)
    world.tick()
    assert log == ["counter@0"]
    world.tick()
    assert log == ["counter@0", "counter@1", "child@1"]
    parent.remove_from_world()
    world.tick()
    assert log[-1] == "child@2" and log.count("counter@2") == 0


def test_feed_signals_come_per_step_in_post_order() -> None:
    world = World(0)
    feed = world.feed
    feed.add_update(2, "chef", "Food!", signals=["eat", "sit"])
    feed.add_update(3, "farmer", "Seeds.", signals=["plant"])
    feed.add_update(2, "bell", "Ding.", signals=["eat"])
    feed.add_update(2, "crier", "Nothing to do.")
    assert feed.signals_at(2) == ("eat", "sit", "eat")
    assert feed.signals_at(3) == ("plant",) and feed.signals_at(4) == ()
    agent = NPC(world, "sally", 1, 1)
    for _ in range(3):  # steps 0, 1, 2
        world.tick()
    assert {"eat", "sit"} <= agent.states and "plant" not in agent.states
    world.tick()
    assert "plant" in agent.states
