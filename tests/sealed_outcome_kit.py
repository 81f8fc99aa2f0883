"""A sealed instance played to a win and to a loss with the same actions and the same world.

The loss is the win's twin: the same sealed Proteomics Easy instance and the oracle's actions,
with the hidden answer moved to another species right after the reset (what the agent sees is
built before, and never depends on it), so the flag the oracle plants beside the outlier's statue
now stands beside a wrong one. Every byte an agent reads must then be the same in both runs;
only the evaluator's card (`scorecard(reveal=True)`) tells them apart.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.instances import Instance, make_instance

KEY = b"sealed-outcome-kit-key-000000001"
TASK, DIFFICULTY, INDEX = "Proteomics", "easy", 2


def instance(split: str = "test") -> Instance:
    return make_instance(TASK, DIFFICULTY, split, INDEX, KEY if split == "test" else None)


def lose(scenario: Any) -> None:
    """Make this episode a loss: the answer becomes another shown species (hidden state only)."""
    scenario.answer = next(sp for sp in scenario.species if sp is not scenario.answer)


@cache
def _oracle_actions(split: str) -> tuple[str, ...]:
    env = DiscoveryWorldEnv(TASK, DIFFICULTY)
    _, info = env.reset(options={"instance": instance(split)})
    solver = type(env.scenario).oracle(info["observation"])
    actions: list[str] = []
    item = next(solver)
    while True:
        while not isinstance(item, dict):  # a knowledge report announced mid-episode
            item = solver.send(info["observation"])
        actions.append(json.dumps(item))
        _, _, terminated, truncated, info = env.step(item)
        if terminated or truncated:
            break
        item = solver.send(info["observation"])
    assert env.scorecard(reveal=True)["completedSuccessfully"], "the oracle must win the kit's instance"
    return tuple(actions)


def oracle_actions(split: str = "test") -> list[dict[str, Any]]:
    """The oracle's winning actions on the kit's instance of `split` (the twin loses with them)."""
    return [json.loads(a) for a in _oracle_actions(split)]


def canonical(value: Any) -> str:
    """Bytes to compare: JSON with sorted keys (arrays as their bytes and shape)."""
    import numpy as np

    def default(obj: Any) -> Any:
        if isinstance(obj, np.ndarray):
            return [obj.dtype.str, list(obj.shape), obj.tobytes().hex()]
        if isinstance(obj, np.generic):
            return obj.item()
        return repr(obj)

    return json.dumps(value, sort_keys=True, default=default)
