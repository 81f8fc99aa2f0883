"""Tile watchers that follow one object's moves themselves (`World.watch_tiles(mover=...)`,
the RL tile mirror's view of the world) and tiles seen as if an object stood elsewhere
(`objects_at` / `blocker_at` with `skip`)."""

from __future__ import annotations

from discoverylab.world.agent import Agent
from discoverylab.world.catalog import place, spawn
from discoverylab.world.npc import NPC
from world_kit import meadow


def test_a_movers_own_moves_are_not_reported_to_its_watcher() -> None:
    world = meadow(1)
    agent = Agent(world, "you", 5, 5)
    npc = NPC(world, "sally", 8, 8)
    mine, everyone = world.watch_tiles(mover=agent), world.watch_tiles()
    world.walk(agent, 5, 6)
    world.place(agent, 9, 2)
    assert not mine and everyone == {(5, 5), (5, 6), (9, 2)}
    everyone.clear()
    world.walk(npc, 8, 9)  # anyone else's move is reported to both
    assert mine == everyone == {(8, 8), (8, 9)}


def test_what_the_mover_holds_is_still_reported_at_its_tile() -> None:
    world = meadow(2)
    agent = Agent(world, "you", 3, 3)
    jar = place(world, "jar", 3, 4)
    mine = world.watch_tiles(mover=agent)
    agent.add(jar)  # picked up: the tile it left and the holder's tile change
    assert mine == {(3, 4), (3, 3)}
    mine.clear()
    jar.is_open = not jar.is_open
    jar.text_changed()
    assert mine == {(3, 3)}


def test_skip_sees_the_tile_as_if_the_object_stood_elsewhere() -> None:
    world = meadow(3)
    agent = Agent(world, "you", 4, 4)
    bare = world.objects_at(4, 4, skip=agent)
    agent.add(spawn(world, "jar"))  # an open holder: the view lists what it holds
    world.walk(agent, 4, 5)
    assert world.objects_at(4, 4) == world.objects_at(4, 4, skip=agent) == bare
    seen = world.objects_at(4, 5)
    assert seen[0] is agent and len(seen) > len(world.objects_at(4, 5, skip=agent))
    assert world.objects_at(4, 5, skip=agent) == [o for o in seen if o is not agent and o.parent is not agent]
    wall = place(world, "wall", 6, 6)
    assert world.blocker_at(6, 6) is wall and world.blocker_at(6, 6, skip=wall) is None
    assert world.blocker_at(6, 6, skip=agent) is wall
