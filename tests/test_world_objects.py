"""The object tree (spec §2-§3): containment, parts, visibility, obscuring layers, passability."""

from __future__ import annotations

from discoverylab.scenarios import layout
from discoverylab.world.catalog import place, spawn
from discoverylab.world.materials import material
from discoverylab.world.npc import NPC
from discoverylab.world.objects import Layer
from discoverylab.world.things import Mold
from world_kit import Player, meadow


def test_add_moves_an_object_from_the_grid_into_a_container_and_back() -> None:
    world = meadow()
    flag = place(world, "flag", 3, 3)
    table = place(world, "table", 4, 4)
    assert flag in world.layer_at(3, 3, Layer.OBJECTS)
    table.add(flag)
    assert flag not in world.top_level_at(3, 3)
    assert flag.parent is table and flag.layer is None
    assert flag.location() == (4, 4)
    jar = spawn(world, "jar")
    table.add(jar)
    jar.add(flag)  # from one container to another
    assert table.contents == [jar] and jar.contents == [flag]
    assert flag.location() == (4, 4) and flag.root() is table
    assert table.contains(flag) and not flag.contains(table)
    world.place(flag, 6, 6)
    assert jar.contents == [] and flag.parent is None and flag.location() == (6, 6)
    flag.detach()
    assert flag.location() == (6, 6) and flag not in world.top_level_at(6, 6)


def test_parts_move_with_the_whole_and_are_never_listed() -> None:
    world = meadow()
    p = Player(world, 5, 5, facing="south")
    mushroom = place(world, "mushroom", 5, 6)
    mold = Mold(world, "mold", "mold", [material("mold_red")], poisonous=True)
    mushroom.add_part(mold)
    assert mold.location() == (5, 6)
    assert mold not in world.objects_at(5, 6)
    assert mold.uuid not in p.nearby_uuids() and mold.uuid not in p.accessible_uuids()
    assert p.do("PICKUP", mushroom).success
    assert mold.location() == (5, 5) and mold.parent is mushroom
    assert mold.uuid not in p.inventory_uuids() and mold.uuid not in p.nearby_uuids()
    assert [m.key for m in mushroom.all_materials()] == ["plant_matter_white", "mold_red"]
    # A part cannot be named in an action even if its uuid is known.
    result = p.do("PICKUP", mold)
    assert not result.success and "could not find an accessible object" in result.message


def test_closed_containers_hide_their_contents_from_view_and_reach() -> None:
    world = meadow()
    p = Player(world, 5, 5, facing="south")
    cabinet = place(world, "bedside_table", 5, 6)
    flag = spawn(world, "flag")
    cabinet.add(flag)
    assert flag not in world.objects_at(5, 6)
    assert flag.uuid not in p.nearby_uuids() and flag.uuid not in p.accessible_uuids()
    assert p.do("OPEN", cabinet).message == "I opened the bedside table."
    assert flag in world.objects_at(5, 6)
    assert flag.uuid in p.accessible_uuids()
    assert p.do("CLOSE", cabinet).message == "I closed the bedside table."
    result = p.do("PICKUP", flag)  # seen before, now hidden again
    assert not result.success and "is not accessible" in result.message
    assert flag.parent is cabinet


def test_contents_of_open_containers_follow_their_holder_in_scan_order() -> None:
    world = meadow()
    table = place(world, "table", 2, 2)
    jar = spawn(world, "jar")
    coin = spawn(world, "coin")
    table.add(jar)
    jar.add(coin)
    assert [o.name for o in world.objects_at(2, 2)] == ["table", "jar", "coin", "grass"]
    assert coin.describe() == f"coin (in jar [uuid: {jar.uuid}])"
    assert jar.describe() == f"jar containing items (on table [uuid: {table.uuid}])"
    assert jar.describe(with_uuid=False) == "jar containing items (on table)"


def test_obscuring_layers_hide_everything_below() -> None:
    world = meadow()
    place(world, "floor", 3, 3)  # floor and grass share the WORLD layer: nothing is hidden ...
    assert [o.name for o in world.objects_at(3, 3)] == ["grass", "floor"]
    layout.ground(world, "floor", 2, 3)  # ... so builders clear the grass (the original's initial filter)
    assert [o.name for o in world.objects_at(2, 3)] == ["floor"]
    place(world, "flag", 2, 3)
    place(world, "wall", 2, 3)  # the wall (BUILDING) hides the floor (WORLD), not the flag above it
    assert [o.name for o in world.objects_at(2, 3)] == ["flag", "wall"]
    assert [o.name for o in world.objects_at(2, 3, respect_obscuring=False)] == ["flag", "wall", "floor"]
    place(world, "fence", 4, 4)  # fences do not obscure
    assert [o.name for o in world.objects_at(4, 4)] == ["fence", "grass"]
    layout.ground(world, "path", 5, 5)
    place(world, "flag", 5, 5)
    assert [o.name for o in world.objects_at(5, 5)] == ["flag", "path"]
    # Several objects on one (obscuring) layer are all shown; only lower layers are hidden.
    place(world, "coin", 5, 5)
    assert [o.name for o in world.objects_at(5, 5)] == ["flag", "coin", "path"]


def test_layers_are_scanned_top_down() -> None:
    world = meadow()
    place(world, "tree_leaves", 2, 2)
    place(world, "flag", 2, 2)
    place(world, "table", 2, 2)
    npc = NPC(world, "sally", 2, 2)
    assert [o.name for o in world.objects_at(2, 2)] == ["tree leaves", "sally", "flag", "table", "grass"]
    assert npc.layer is Layer.AGENT


def test_passability_walls_furniture_closed_contents_and_agents() -> None:
    world = meadow()
    p = Player(world, 5, 5, facing="south")
    place(world, "wall", 5, 4)
    place(world, "table", 6, 5)
    box = place(world, "jar", 4, 5, is_open=False)  # a closed (lidded) jar
    box.add(spawn(world, "rock_glowing", passable=False))
    NPC(world, "sally", 5, 6)
    assert world.blocker_at(5, 4) is not None and world.blocker_at(5, 4).name == "wall"  # type: ignore[union-attr]
    assert world.blocker_at(4, 5) is box.contents[0]
    assert world.is_passable(5, 6)  # agents are passable
    assert not world.is_passable(-1, 0) and not world.is_passable(0, 32)
    obs = p.observe()["agentLocation"]
    assert obs["directions_you_can_move"] == ["south"]
    assert obs["directions_blocked"] == ["north", "east", "west"]
    assert (
        p.do("MOVE_DIRECTION", "west").message
        == "I can't move there. There is something in the way (rock (glowing))."
    )
    assert p.do("MOVE_DIRECTION", "south").message == "I moved to (5, 6)."
    assert p.agent.location() == (5, 6)  # sharing the tile with sally


def test_out_of_bounds_neighbours_are_neither_movable_nor_blocked() -> None:
    world = meadow()
    p = Player(world, 0, 0, facing="north")
    loc = p.observe()["agentLocation"]
    assert loc["directions_you_can_move"] == ["east", "south"]
    assert loc["directions_blocked"] == []


def test_remove_from_world_unregisters_contents_and_parts() -> None:
    world = meadow()
    jar = place(world, "jar", 1, 1)
    mushroom = spawn(world, "mushroom")
    mold = Mold(world, "mold", "mold", [material("mold_red")], poisonous=True)
    mushroom.add_part(mold)
    jar.add(mushroom)
    jar.remove_from_world()
    for obj in (jar, mushroom, mold):
        assert obj.uuid not in world.objects and not obj.alive
    assert jar not in world.top_level_at(1, 1)


def test_unknown_template_and_attribute_are_clear_errors() -> None:
    world = meadow()
    try:
        spawn(world, "unicorn")
    except KeyError as exc:
        assert "Unknown object kind 'unicorn'" in str(exc)
    else:
        raise AssertionError("expected KeyError")
    try:
        spawn(world, "flag", sparkly=True)
    except AttributeError as exc:
        assert "sparkly" in str(exc)
    else:
        raise AssertionError("expected AttributeError")
