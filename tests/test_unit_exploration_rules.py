"""Anti-gold trajectories and layout rules of the doors, navigation and search unit tasks.

The oracle tests (test_unit_tasks.py) show each task can be solved; these check the rules the
task texts promise. They peek at the scenario to know where things are.
"""

from __future__ import annotations

from typing import Any

import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.scenarios.unit._house import inside
from discoverylab.world.objects import Layer
from env_driver import EnvDriver


class Driver(EnvDriver):
    def __init__(self, task: str, seed: int = 0) -> None:
        super().__init__(task, seed=seed, max_steps=300)

    @property
    def card(self) -> dict[str, Any]:
        return dict(self.scenario.scorecard.to_dict())

    def scores(self) -> list[int]:
        return [item["score"] for item in self.card["scoreCard"]]


# ---- doors ------------------------------------------------------------------------------
def test_doors_count_once_opened_and_flag_alone_does_not_finish() -> None:
    d = Driver("DoorsTest")
    first = d.scenario.doors[0]
    d.go_to(first)
    assert d.do("OPEN", first) == "I opened the door."
    assert d.do("CLOSE", first) == "I closed the door."
    d.go_to(d.scenario.flag)
    assert d.do("PICKUP", d.scenario.flag) == f"I picked up the {d.scenario.flag.name}."
    assert d.scores() == [1, 1]
    assert not d.card["completed"] and not d.terminated


@pytest.mark.parametrize("seed", range(20))
def test_doors_layout_is_a_chain_of_seven_interior_doors(seed: int) -> None:
    d = Driver("DoorsTest", seed)
    doors = d.scenario.doors
    x0, y0, x1, y1 = d.scenario.building
    assert (x1 - x0, y1 - y0) == (13, 13)
    assert len({(door.x, door.y) for door in doors}) == 7
    for door in doors:
        assert x0 < door.x < x1 and y0 < door.y < y1
        walls = d.env.world.layer_at(door.x, door.y, Layer.BUILDING)  # type: ignore[union-attr]
        assert not any(o.type == "wall" for o in walls)


def test_locked_door_needs_its_key_and_keys_score_when_held() -> None:
    d = Driver("DoorsWithKeysTest")
    door3, key3 = d.scenario.doors[2], d.scenario.keys[2]
    d.go_to(door3)
    assert d.do("OPEN", door3) == "That object (door) requires a key to open."
    d.go_to(key3)
    assert d.do("PICKUP", key3) == "I picked up the key."
    d.go_to(door3)
    assert d.do("OPEN", door3) == "I opened the door."
    assert d.scores() == [0, 1, 1]


@pytest.mark.parametrize("seed", range(20))
def test_each_key_lies_just_south_of_its_door(seed: int) -> None:
    d = Driver("DoorsWithKeysTest", seed)
    for door, key in zip(d.scenario.doors, d.scenario.keys, strict=True):
        assert key.key_id == door.requires_key
        assert key.y == door.y + 1


# ---- navigation ---------------------------------------------------------------------------
def _nav_seed(target: str) -> int:
    for seed in range(100):
        env = DiscoveryWorldEnv("NavigationHouseTest")
        env.reset(seed=seed)
        assert env.scenario is not None
        if env.scenario.target == target:  # type: ignore[attr-defined]
            return seed
    raise AssertionError(target)


def test_dropping_the_flag_outside_the_location_fails() -> None:
    d = Driver("NavigationHouseTest", _nav_seed("kitchen"))
    flag = d.scenario.flag
    assert d.do("DROP", flag) == f"I dropped the {flag.name}."
    assert d.terminated and d.card["completed"] and not d.card["completedSuccessfully"]
    assert d.scores() == [0, 0]


def test_dropping_the_flag_in_another_room_fails() -> None:
    d = Driver("NavigationHouseTest", _nav_seed("bedroom"))
    fridge = d.env.world.find(lambda o: o.type == "fridge")[0]  # type: ignore[union-attr]
    d.go_to(fridge)
    assert d.do("DROP", d.scenario.flag) == f"I dropped the {d.scenario.flag.name}."
    assert d.card["completed"] and not d.card["completedSuccessfully"]


@pytest.mark.parametrize("seed", range(30))
def test_rooms_hold_their_furniture(seed: int) -> None:
    d = Driver("NavigationHouseTest", seed)
    world, regions = d.env.world, d.scenario.regions
    assert world is not None
    signature = {"kitchen": {"fridge", "stove", "sink"}, "bedroom": {"bed"}, "science lab": {"microscope"},
                 "soil plot": {"soil"}}  # fmt: skip
    for place, kinds in signature.items():
        found = world.find(lambda o, k=kinds: o.type in k)
        assert found and all(inside(regions[place], *o.location()) for o in found), place
    x0, y0, x1, y1 = regions["empty room"]
    for x in range(x0 + 1, x1 - 1):
        for y in range(y0, y1 - 1):
            assert {o.type for o in world.top_level_at(x, y)} <= {"floor", "wall"}, (x, y)
    for chair in world.find(lambda o: o.type == "chair"):
        assert not any(o.type == "wall" for o in world.layer_at(chair.x, chair.y, Layer.BUILDING))


# ---- search -------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(20))
def test_search_flag_tile_rule(seed: int) -> None:
    """The instance's own coin (not the seed's parity) says whether only bare floor counts."""
    d = Driver("SearchTest", seed)
    flag, house = d.scenario.flag, d.scenario.house
    assert house.x - 4 <= flag.x <= house.x + 16 and house.y - 3 <= flag.y <= house.y + 17
    assert d.card["criticalHypotheses"] == [f"The {flag.name} is located at ({flag.x}, {flag.y})."]
    ground = {o.type for o in d.env.world.layer_at(flag.x, flag.y, Layer.WORLD)}  # type: ignore[union-attr]
    if int(d.env.world.child_rng("SearchTest/floor-only").integers(0, 2)) == 0:  # type: ignore[union-attr]
        assert ground == {"floor"}
    else:
        assert ground in ({"grass"}, {"floor"})
