"""The action mask of new slots looked up by their counts (`DiscreteActions._refresh`,
`SymbolicEncoder.slot_reach`; session 15): the encoder puts the slots within reach (inventory,
own tile, faced tile) first, so the mask follows from how many slots there are, how many lie
within reach and the locations. Checked against the mask built from each slot's own flag."""

from __future__ import annotations

import numpy as np
import pytest

from discoverylab.rl import make_rl_env


@pytest.mark.parametrize(("task", "seed", "radius"), [("MovingAgentsTest", 1, 3), ("PickAndGiveTest", 2, 3),
                                                      ("SpaceSick", 0, 3), ("DiscoveryFeedTest", 3, 2),
                                                      ("Proteomics", 4, 1), ("DoorsWithKeysTest", 5, 0)])  # fmt: skip
def test_masks_by_slot_counts_equal_masks_from_each_slot_s_reach(task: str, seed: int, radius: int) -> None:
    """Every step of a random masked walk (pick-ups, tools held, teleport locations added): the
    slots within reach are exactly the first `slot_reach` ones, and the published mask equals
    the one built afresh from each slot's reach flag. Fails when `slot_reach` is off by one or
    counts a slot out of reach."""
    env = make_rl_env(task, "normal", max_steps=10**9, radius=radius)
    _, info = env.reset(seed=seed)
    base = env.unwrapped
    encoder, agent = base.symbolic, base.scenario.player
    rng = np.random.default_rng(seed)
    checked = 0
    for i in range(300):
        data = encoder.slot_data
        assert [s[2] for s in data] == [True] * encoder.slot_reach + [False] * (len(data) - encoder.slot_reach)
        if agent.dialog_partner is None:
            if base.teleport:
                teleportable, locations = (True,) * len(data), min(len(base.world.teleports), env.num_locations)
            else:
                teleportable, locations = (), -1
            expected = env._build_mask((tuple(s[2] for s in data), teleportable, locations))
            assert np.array_equal(info["action_mask"], expected), (task, i)
            checked += 1
        mask = info["action_mask"]
        allowed = np.flatnonzero(mask if i % 3 == 0 or not mask[:15].any() else mask[:15])
        _, _, term, trunc, info = env.step(int(rng.choice(allowed)))
        if term or trunc:
            _, info = env.reset(seed=seed + 1000 + i)
    assert checked > 200 and env._by_counts, (checked, len(env._by_counts))
