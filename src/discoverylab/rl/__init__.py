"""RL plumbing for DiscoveryWorld: discrete actions with exact masks, the symbolic tensor
observation, and `make_rl_env`, which puts them together (docs/rl.md)."""

from __future__ import annotations

from typing import Any

from discoverylab.rl.actions import DiscreteActions
from discoverylab.rl.symbolic import SymbolicEncoder
from discoverylab.rl.vector_worker import relax_gc


def make_rl_env(task: str, difficulty: str = "normal", object_slots: int = 12, **options: Any) -> DiscreteActions:
    """A DiscoveryWorld env for RL: symbolic observation, lean info, `Discrete` actions with
    `action_masks()`; reward "success" unless `reward="procedure"` is passed (revealing)."""
    from discoverylab.env import DiscoveryWorldEnv

    options.setdefault("info", "lean")
    env = DiscoveryWorldEnv(task, difficulty, observation="symbolic", object_slots=object_slots, **options)
    return DiscreteActions(env, object_slots=object_slots)


__all__ = ["DiscreteActions", "SymbolicEncoder", "make_rl_env", "relax_gc"]
