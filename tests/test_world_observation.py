"""The text observation (spec §5), the feed window (§6) and UUID assignment (§2)."""

from __future__ import annotations

from discoverylab.world.agent import Agent
from discoverylab.world.catalog import place, spawn
from discoverylab.world.npc import NPC
from discoverylab.world.observation import GROUPS, build_observation
from discoverylab.world.observation_model import Observation
from discoverylab.world.world import World
from world_kit import Player, meadow


def test_all_nine_groups_are_present_with_manhattan_distances() -> None:
    world = World(0)
    p = Player(world, 0, 0)
    groups = p.observe()["nearbyObjects"]["objects"]
    assert list(groups) == list(GROUPS)
    assert groups["same_location"] == [
        {"name": "agent", "description": "agent", "distance": 0, "uuid": p.agent.uuid}
    ]
    assert all(groups[g] == [] for g in GROUPS if g != "same_location")
    world = meadow(w=32, h=32)
    p = Player(world, 10, 10)
    groups = p.observe()["nearbyObjects"]["objects"]
    counts = {g: len(entries) for g, entries in groups.items()}
    assert counts == {
        "north-west": 9, "north": 3, "north-east": 9, "east": 3,
        "south-east": 9, "south": 3, "south-west": 9, "west": 3, "same_location": 2,
    }  # fmt: skip
    assert max(e["distance"] for e in groups["north-west"]) == 6
    assert sorted(e["distance"] for e in groups["east"]) == [1, 2, 3]
    assert {e["distance"] for e in groups["same_location"]} == {0}


def test_the_nearby_note_states_the_radius_that_is_listed() -> None:
    """Issue 24: the note said "within 3 tiles" while listing objects at distance 4-6."""
    world = meadow(w=32, h=32)
    nearby = Player(world, 10, 10).observe()["nearbyObjects"]
    r = nearby["distance"]
    farthest = max(e["distance"] for entries in nearby["objects"].values() for e in entries)
    assert farthest == 2 * r
    assert f"at most {r} tiles away from the agent along each axis" in nearby["note"]
    assert "up to twice that" in nearby["note"]


def test_window_is_clipped_at_the_world_edge() -> None:
    world = meadow(w=32, h=32)
    p = Player(world, 31, 0)
    groups = p.observe()["nearbyObjects"]["objects"]
    assert groups["north"] == groups["north-east"] == groups["east"] == []
    assert len(groups["south-west"]) == 9


def test_scan_order_and_contents_after_their_holder() -> None:
    world = World(0)
    p = Player(world, 5, 5)
    table = place(world, "table", 6, 6)
    jar = spawn(world, "jar")
    table.add(jar)
    place(world, "tree_leaves", 6, 6)
    place(world, "coin", 7, 5)
    place(world, "flag", 6, 5)
    groups = p.observe()["nearbyObjects"]["objects"]
    assert [(e["name"], e["description"], e["distance"]) for e in groups["south-east"]] == [
        ("tree leaves", "tree leaves", 2),  # layers top-down: AIR first
        ("table", "table", 2),
        ("jar", f"empty jar (on table [uuid: {table.uuid}])", 2),  # contents right after their holder
    ]
    assert [(e["name"], e["distance"]) for e in groups["east"]] == [("flag", 1), ("coin", 2)]
    # Across tiles: x ascending (outer), then y ascending (inner).
    world2 = World(0)
    q = Player(world2, 5, 5)
    coins = [place(world2, "coin", x, y) for x, y in ((7, 7), (6, 7), (7, 6), (6, 6))]
    listed = [e["uuid"] for e in q.observe()["nearbyObjects"]["objects"]["south-east"]]
    assert listed == [coins[3].uuid, coins[1].uuid, coins[2].uuid, coins[0].uuid]


def test_accessible_is_own_and_facing_tile_minus_inventory_sorted_by_uuid() -> None:
    world = meadow()
    p = Player(world, 5, 5, facing="east")
    held = spawn(world, "flag")
    p.agent.add(held)
    behind = place(world, "coin", 4, 5)
    here = place(world, "coin", 5, 5)
    ahead = place(world, "shovel", 6, 5)
    friend = Player(world, 6, 5, name="friend")  # other agents and their open inventories are reachable
    gift = spawn(world, "key")
    friend.agent.add(gift)
    npc = NPC(world, "sally", 6, 5)  # an NPC's closed inventory is not
    secret = spawn(world, "coin")
    npc.add(secret)
    obs = p.observe()
    accessible = [e["uuid"] for e in obs["accessibleEnvironmentObjects"]]
    expected = {here, ahead, friend.agent, gift, npc, *world.top_level_at(5, 5), *world.top_level_at(6, 5)}
    expected -= {p.agent, held}
    assert accessible == sorted(o.uuid for o in expected)
    assert behind.uuid not in accessible and secret.uuid not in accessible and held.uuid not in accessible
    assert obs["inventoryObjects"] == [
        {"uuid": held.uuid, "name": "flag", "description": f"flag (held by agent [uuid: {p.agent.uuid}])"}
    ]
    assert {held.uuid, here.uuid, ahead.uuid, gift.uuid} <= p.agent.seen
    assert secret.uuid not in p.agent.seen


def test_inventory_includes_open_carried_containers_sorted_by_uuid() -> None:
    world = meadow()
    p = Player(world)
    items = [spawn(world, kind) for kind in ("jar", "coin", "flag", "key")]
    p.agent.add(items[0])
    for item in items[1:]:
        items[0].add(item)
    assert p.inventory_uuids() == sorted(o.uuid for o in items)
    here = [e["name"] for e in p.observe()["nearbyObjects"]["objects"]["same_location"]]
    assert here == ["agent", "jar", "coin", "flag", "key", "grass"]  # the agent, its inventory, the ground
    items[0].is_open = False
    assert p.inventory_uuids() == [items[0].uuid]
    npc = NPC(world, "sally", 6, 5)
    npc.add(spawn(world, "coin"))
    east = p.observe()["nearbyObjects"]["objects"]["east"]
    assert [e["name"] for e in east if e["distance"] == 1] == ["sally", "grass"]  # a closed inventory


def test_observation_keys_feed_window_and_schema() -> None:
    world = meadow()
    p = Player(world)
    world.teleports.update({"b": (1, 1), "a": (2, 2)})
    world.feed.add_article(0, "Dr. Ana", "Mushrooms", "text")
    for _ in range(5):
        world.tick()
    world.feed.add_update(1, "bob", "old news")
    world.feed.add_update(2, "bob", "fresh news")
    world.feed.add_update(5, "bob", "breaking news")
    obs = build_observation(p.agent, [], "I waited.", "extended text")
    Observation.model_validate(obs)
    assert obs["world_steps"] == 5
    assert [post["content"] for post in obs["discoveryFeed"]["posts"]] == ["fresh news", "breaking news"]
    assert obs["discoveryFeed"]["scientific_articles"] == [
        {"step": 0, "postID": 2, "title": "Mushrooms", "author": "Dr. Ana"}
    ]
    assert obs["lastActionMessage"] == "I waited." and obs["extended_action_message"] == "extended text"
    assert obs["teleportLocations"] == ["a", "b"]
    assert obs["agentLocation"] == {
        "x": 5, "y": 5, "faceDirection": "south",
        "directions_you_can_move": ["north", "east", "south", "west"], "directions_blocked": [],
    }  # fmt: skip
    names = [a["name"] for a in obs["availableActions"]]
    assert "TELEPORT_TO_OBJECT" in names and "MOVE_FORWARD" not in names
    hidden = build_observation(p.agent, [], "", teleport=False)
    assert "teleportLocations" not in hidden
    assert not any(a["name"].startswith("TELEPORT") for a in hidden["availableActions"])


def test_uuids_are_drawn_per_seed_not_by_creation_order() -> None:
    """Same seed, same uuids (determinism); another seed, another order (no role leaks)."""

    def build(seed: int) -> list[int]:
        world = meadow(seed, w=3, h=3)
        Agent(world, "agent", 1, 1)
        spawn(world, "flag")
        return list(world.objects)  # in creation order

    assert build(0) == build(0)
    assert build(0) != build(12345)
    firsts = {spawn(World(seed), "flag").uuid for seed in range(20)}
    assert len(firsts) > 15  # the first object created has no fixed uuid
    uuids = build(0)
    assert len(set(uuids)) == len(uuids) and all(1 <= u <= 65535 for u in uuids)
