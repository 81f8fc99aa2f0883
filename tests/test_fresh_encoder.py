"""The symbolic encoder's kept state (tile mirror, kept views and places, slot rows, masks per
slot list) against none: over long random rollouts of the tasks where characters walk, every
observation equals a new encoder's, the action mask the one made from the tile-by-tile slots,
and `agent.seen` holds exactly what was in view so far (session 24: the check a change of how
characters reach the encoder must pass; tests/test_scenery_caches.py checks cells and slots
against a tile-by-tile walk on every task)."""

from __future__ import annotations

import numpy as np
import pytest

from discoverylab.rl import make_rl_env
from discoverylab.rl.symbolic import SymbolicEncoder
from discoverylab.rl.view import slot_data

WALKERS = ["Proteomics", "SpaceSick", "LostInTranslation", "MovingAgentsTest", "NavigationHouseTest", "DoorsTest"]


def _visible(agent, radius: int) -> set[int]:  # type: ignore[no-untyped-def]
    """The UUIDs an observer sees in the window, walking it tile by tile (and the agent; with
    radius 0, the faced tile too: the actions reach it)."""
    world, seen = agent.world, {agent.uuid}
    tiles = [(agent.x + dx, agent.y + dy) for dy in range(-radius, radius + 1) for dx in range(-radius, radius + 1)]
    if not radius:
        tiles.append(agent.facing_tile())
    for x, y in tiles:
        if world.in_bounds(x, y):
            seen.update(o.uuid for o in world.objects_at(x, y) if o is not agent)
    return seen


def _fresh_equal(env, obs) -> None:  # type: ignore[no-untyped-def]
    """`obs` equals a new encoder's (a new mirror, nothing kept), its slots and reach too, and
    the env's mask equals the one made from the tile-by-tile slots."""
    base = env.unwrapped
    agent, card = base.scenario.player, base.scenario.scorecard
    fresh = SymbolicEncoder(base.radius, base.symbolic.num_slots)
    again = fresh.encode(agent, card.task_description, bool(obs["agent"][5]), bool(obs["agent"][7]))
    assert base.symbolic.slot_data == fresh.slot_data and base.symbolic.slot_reach == fresh.slot_reach
    fresh.release()  # (stops its watcher)
    for key in obs:
        assert np.array_equal(obs[key], again[key]), key
    if agent.dialog_partner is None:
        slots = slot_data(agent, base.radius, env.num_slots)
        assert base.symbolic.slot_data == slots
        assert np.array_equal(env.action_masks(), env._world_mask(agent, slots, False))


def _rollout(task: str, seed: int, steps: int, radius: int = 3) -> None:
    env = make_rl_env(task, "normal", max_steps=10**9, radius=radius)
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    agent = env.unwrapped.scenario.player
    expected = _visible(agent, radius)
    for i in range(steps):
        assert agent.seen == expected, (task, seed, i)  # marked exactly what was in view, never more
        if i % 2 == 0:
            _fresh_equal(env, obs)
        mask = info["action_mask"]
        allowed = np.flatnonzero(mask if i % 3 == 0 or not mask[:15].any() else mask[:15])
        obs, _, term, trunc, info = env.step(int(allowed[int(rng.integers(len(allowed)))]))
        if term or trunc:
            obs, info = env.reset(seed=seed + 1000 + i)
            agent = env.unwrapped.scenario.player
            expected = set()
        expected |= _visible(agent, radius)


@pytest.mark.parametrize("task", WALKERS)
@pytest.mark.parametrize("seed", [0, 1])
def test_observations_masks_and_seen_equal_a_fresh_encoders(task: str, seed: int) -> None:
    _rollout(task, seed, steps=300)


@pytest.mark.parametrize("task", ["Proteomics", "MovingAgentsTest"])
def test_a_window_of_radius_zero_marks_the_faced_tile_seen(task: str) -> None:
    _rollout(task, seed=2, steps=200, radius=0)
