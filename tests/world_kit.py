"""Small-world builders for the engine behaviour tests (tests/test_world_*.py).

Each test builds just the tiles it needs, so a failing rule points at the engine, not at a
scenario.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from discoverylab.world import spares
from discoverylab.world.actions import ActionExecutor
from discoverylab.world.agent import Agent
from discoverylab.world.catalog import inline_plan, place
from discoverylab.world.objects import ActionResult, WorldObject
from discoverylab.world.observation import build_observation
from discoverylab.world.world import World


def meadow(seed: int = 0, x0: int = 0, y0: int = 0, w: int = 12, h: int = 12) -> World:
    """A world with grass on the rectangle (x0, y0, w, h) only (the rest is empty and passable)."""
    world = World(seed)
    for x in range(x0, x0 + w):
        for y in range(y0, y0 + h):
            place(world, "grass", x, y)
    return world


class Player:
    """The player agent plus its executor, with a terse action helper."""

    def __init__(
        self, world: World, x: int = 5, y: int = 5, facing: str = "south", name: str = "agent"
    ) -> None:
        self.world = world
        self.agent = Agent(world, name, x, y, facing=facing)
        self.executor = ActionExecutor(self.agent)

    def do(self, action: str, arg1: Any = None, arg2: Any = None) -> ActionResult:
        packet: dict[str, Any] = {"action": action}
        for key, arg in (("arg1", arg1), ("arg2", arg2)):
            if arg is not None:
                packet[key] = arg.uuid if isinstance(arg, WorldObject) else arg
        return self.executor.execute(packet)

    def say(self, option: int) -> ActionResult:
        return self.executor.execute({"chosen_dialog_option_int": option})

    def observe(self, message: str = "") -> dict[str, Any]:
        return build_observation(self.agent, [], message)

    def accessible_uuids(self) -> list[int]:
        return [e["uuid"] for e in self.observe()["accessibleEnvironmentObjects"]]

    def inventory_uuids(self) -> list[int]:
        return [e["uuid"] for e in self.observe()["inventoryObjects"]]

    def nearby_uuids(self) -> set[int]:
        groups = self.observe()["nearbyObjects"]["objects"]
        return {e["uuid"] for entries in groups.values() for e in entries}

    @property
    def history(self) -> list[Any]:
        return self.agent.history


# The ten unit tests, the order the recycling tests play them in.
UNIT_TESTS = ("DoorsTest", "DialogTest", "NavigationHouseTest", "MovingAgentsTest", "SearchTest",
              "InstrumentMeasurementTest", "PickAndPlaceTest", "PickAndGiveTest", "DoorsWithKeysTest",
              "DiscoveryFeedTest")  # fmt: skip


def readable_kinds(*kinds: str) -> list[str]:
    """Those of `kinds` whose objects `spares.take` can read in this process. CPython shares one
    key table among a class's instance dicts and stops adding names to it after many instances;
    `spares.share_key_tables` fills the tables at import, so today every plain kind is
    readable in any process (`test_a_process_that_built_every_theme_first_still_recycles_...`);
    counts of reuse in a test process hold for these kinds should a class ever add a name late."""
    found = []
    for kind in kinds:
        plan = inline_plan(kind)
        if plan is not None and spares._layout(plan[1], plan[6]) is not None:
            found.append(kind)
    return found


def moves_first(rng: np.random.Generator, mask: np.ndarray, i: int) -> int:
    """A random masked action, a move or turn on even steps when one is allowed (the themes'
    old-against-new episodes: they walk more than a uniform choice would)."""
    allowed = np.flatnonzero(mask if i % 2 else mask[:15]) if mask[:15].any() else np.flatnonzero(mask)
    return int(rng.choice(allowed))


def play_masked(env: Any, steps: int, seed: int) -> None:
    """Random masked steps (moves and turns two steps of three, as `rl_speed.py`)."""
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for i in range(steps):
        mask = info["action_mask"]
        allowed = np.flatnonzero(mask if i % 3 == 0 or not mask[:15].any() else mask[:15])
        *_, term, trunc, info = env.step(int(allowed[int(rng.integers(len(allowed)))]))
        if term or trunc:
            _, info = env.reset(seed=seed + 1 + i)
