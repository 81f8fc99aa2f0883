"""RL plumbing for DiscoveryWorld: discrete actions with exact masks, the symbolic tensor
observation, and `make_rl_env`, which puts them together (docs/rl.md)."""

from __future__ import annotations

from typing import Any

from discoverylab.rl.actions import DiscreteActions
from discoverylab.rl.features import OneHotObservation, make_sb3_env
from discoverylab.rl.levels import Levels
from discoverylab.rl.shaping import ExploreShaping
from discoverylab.rl.symbolic import SymbolicEncoder
from discoverylab.rl.vector_worker import relax_gc


def make_rl_env(task: str, difficulty: str = "normal", object_slots: int = 12, levels: str | None = None,
                num_levels: int | None = None, level_key: bytes | None = None, **options: Any) -> DiscreteActions:  # fmt: skip
    """A DiscoveryWorld env for RL: symbolic observation, lean info, `Discrete` actions with
    `action_masks()`; reward "success" unless `reward="explore"` (shaped, answer-independent)
    or `reward="procedure"` (revealing) is passed. `levels` ("train", "dev", ...) and
    `num_levels` make unseeded resets draw instances of that split (`Levels`; the sealed
    "test" split needs the evaluator's `level_key`)."""
    from discoverylab.env import DiscoveryWorldEnv

    options.setdefault("info", "lean")
    if options.get("reward", "success") not in ("success", "procedure", "explore"):
        raise ValueError(f"Unknown reward mode {options['reward']!r}; valid: success, procedure, explore.")
    if options.get("observation", "symbolic") != "symbolic":  # else Python's "multiple values for keyword"
        raise ValueError("make_rl_env serves the symbolic observation only; for others use discoverylab.make or gymnasium.make.")
    options.pop("observation", None)
    shaping = None
    if options.get("reward") == "explore":
        options["reward"] = "success"
        shaping = ExploreShaping()
    env: Any = DiscoveryWorldEnv(task, difficulty, observation="symbolic", object_slots=object_slots, **options)
    if levels is not None or num_levels is not None or level_key is not None:  # "" is no split: refused, not "train"
        env = Levels(env, "train" if levels is None else levels, num_levels, level_key)
    return DiscreteActions(env, object_slots=object_slots, shaping=shaping)


__all__ = ["DiscreteActions", "ExploreShaping", "Levels", "OneHotObservation", "SymbolicEncoder", "make_rl_env", "make_sb3_env", "relax_gc"]
