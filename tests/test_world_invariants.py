"""Random play on a small, busy world never crashes and never corrupts the object tree."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from discoverylab.scenarios import layout
from discoverylab.world.action_specs import ACTION_SPECS, DIRECTION, OBJECT
from discoverylab.world.catalog import place, spawn
from discoverylab.world.materials import material
from discoverylab.world.npc import NPC
from discoverylab.world.things import Mold
from discoverylab.world.world import World
from world_kit import Player, meadow


def _busy_world(seed: int) -> tuple[World, Player]:
    world = meadow(seed, w=16, h=16)
    layout.building(world, 8, 2, 5, 5, "Shed", key_id=2)
    layout.building(world, 2, 9, 5, 5, "Kitchen")
    p = Player(world, 5, 5)
    p.agent.add(spawn(world, "key", key_id=2))
    p.agent.add(spawn(world, "shovel"))
    p.agent.add(spawn(world, "thermometer"))
    stove = place(world, "stove", 3, 10)
    place(world, "fridge", 4, 10)
    table = place(world, "table", 5, 6)
    jar = spawn(world, "jar")
    table.add(jar)
    mushroom = spawn(world, "mushroom")
    mushroom.add_part(Mold(world, "mold", "mold", [material("mold_red")], poisonous=True))
    jar.add(mushroom)
    stove.add(spawn(world, "pot"))
    for x in range(6, 9):
        layout.ground(world, "soil", x, 8)
    place(world, "fertilizer_bag", 6, 7)
    place(world, "sign", 4, 4, document="Hello.")
    npc = NPC(world, "sally", 7, 5)
    tree = npc.dialog_tree
    assert tree is not None
    tree.add_node("root", "Hi.")
    tree.add_option("root", "Walk", "walk", callback=lambda: npc.enqueue("goto", priority=5, x=4, y=11))
    tree.add_option("root", "Bye", "end")
    tree.add_node("walk", "Off I go.")
    tree.add_node("end", "Bye.")
    npc.enqueue("wander", x=7, y=5)
    world.teleports.update({"shed": (10, 4), "kitchen": (4, 11)})
    return world, p


def _random_action(rng: np.random.Generator, p: Player) -> dict[str, Any]:
    if p.agent.dialog_partner is not None:
        return {"chosen_dialog_option_int": int(rng.integers(0, 4))}
    name = str(rng.choice(sorted(ACTION_SPECS)))
    spec = ACTION_SPECS[name]
    held = p.inventory_uuids()
    reachable = p.accessible_uuids() + held
    known = sorted(p.agent.seen) or [0]
    packet: dict[str, Any] = {"action": name}
    for i, kind in enumerate(spec.args):
        if kind == OBJECT:
            pool = reachable if reachable and rng.random() < 0.8 else known
            if name in ("PUT", "DROP") and i == 0 and held:
                pool = held
            packet[f"arg{i + 1}"] = int(rng.choice(pool))
        elif kind == DIRECTION:
            packet[f"arg{i + 1}"] = str(rng.choice(["north", "east", "south", "west"]))
        else:
            packet[f"arg{i + 1}"] = (
                str(rng.choice(["shed", "kitchen", "moon"])) if name.startswith("TELE") else 1
            )
    return packet


def _check_tree(world: World) -> None:
    for uuid, obj in world.objects.items():
        assert obj.alive and obj.uuid == uuid
        if obj.parent is None:
            assert obj.layer is not None, f"{obj} is neither on the grid nor held"
            stack = world.stacks[obj.x][obj.y]
            assert obj in world.layer_at(obj.x, obj.y, obj.layer) and obj in stack
            assert [o.layer for o in stack] == sorted((o.layer for o in stack), reverse=True)  # top layer first
        else:
            assert obj.layer is None and obj.parent.alive
            assert (obj in obj.parent.contents) != (obj in obj.parent.parts)
            assert obj.parent.uuid in world.objects
    on_grid = [o for x in range(world.size) for y in range(world.size) for o in world.stacks[x][y]]
    assert len(on_grid) == len(set(map(id, on_grid)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_play_keeps_the_object_tree_consistent(seed: int) -> None:
    world, p = _busy_world(seed)
    rng = np.random.default_rng(seed)
    successes = 0
    for step in range(250):
        p.observe()  # marks what is visible as seen, like the env does
        result = p.executor.execute(_random_action(rng, p))
        successes += result.success
        world.tick()
        if step % 25 == 0:
            _check_tree(world)
    _check_tree(world)
    assert successes > 20
