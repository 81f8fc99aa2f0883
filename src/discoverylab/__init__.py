"""discoverylab: fast, Gymnasium-native scientific-discovery environments for AI agents.

    import discoverylab
    env = discoverylab.make("PickAndPlaceTest")           # or gymnasium.make("discoverylab/PickAndPlaceTest-Normal-v0")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step({"action": "MOVE_DIRECTION", "arg1": "north"})
"""

from __future__ import annotations

import os
from typing import Any

__version__ = "0.1.0"

if os.environ.get("DISCOVERYLAB_NATIVE", "").strip() not in ("", "0"):  # the compiled engine (`make native`)
    from discoverylab.native import enable_from_env

    enable_from_env()


def make(task: str, difficulty: str = "normal", **options: Any) -> Any:
    """Create the Gymnasium env for a task. Unknown task or difficulty -> ValueError listing the valid ones.

    Options: max_steps, radius, teleport, render_mode, observation, reward ("success" or the
    answer-revealing "procedure"), info ("full" or "lean"); see `DiscoveryWorldEnv`.
    """
    from discoverylab.env import DiscoveryWorldEnv

    return DiscoveryWorldEnv(task, difficulty, **options)


def tasks(suite: str | None = None) -> dict[str, tuple[str, ...]]:
    """Task id -> valid difficulties (optionally only one suite: "unit", "discovery", "tutorial");
    another suite name is a ValueError listing them (it was an empty dict, read as "no tasks")."""
    from discoverylab.scenarios.registry import all_tasks

    found = all_tasks()
    if suite is not None:
        suites = sorted({cls.suite for cls in found.values()})
        if suite not in suites:
            raise ValueError(f"Unknown suite {str(suite)[:200]!r}. Valid suites: {', '.join(suites)}.")
    return {tid: cls.difficulties for tid, cls in found.items() if suite is None or cls.suite == suite}


def gym_id(task: str, difficulty: str) -> str:
    return f"discoverylab/{task}-{difficulty.capitalize()}-v0"


# Built-in Tiny Labs protocols, registered by entry-point string so `import discoverylab` stays
# fast (importing the labs takes ~0.5 s). tests/labs check this list against the lab registry.
LAB_PROTOCOLS = (
    "macro/causal-discovery", "sequence/hidden-property", "sequence/population-dynamics", "sequence/unknown-dynamics",
)
LAB_ENTRY_POINT = "discoverylab.labs.gym_text:TinyLabTextEnv"
MACRO_GYM_ID = "discoverylab/MacroEcon-v0"


def lab_gym_id(protocol: str) -> str:
    """`sequence/hidden-property` -> `discoverylab/Lab-SequenceHiddenProperty-v0`."""
    words = protocol.replace("/", "-").replace("_", "-").split("-")
    return "discoverylab/Lab-" + "".join(w[:1].upper() + w[1:] for w in words if w) + "-v0"


def register_envs() -> list[str]:
    """Register every task x difficulty, every built-in Tiny Labs protocol (text env) and the
    macro numeric env as Gymnasium ids (idempotent); returns the ids. DiscoveryWorld ids are
    set up for RL (`info="lean"`: no observation dict in `info`); pass `info="full"` to
    `gymnasium.make` for it. Their vector entry point (`make_vec(id, num_envs,
    vectorization_mode="vector_entry_point")`, also make_vec's default when no mode is given)
    is the batched multi-process RL env, `discoverylab.rl.vector.BatchedVectorEnv`."""
    import gymnasium

    ids = []
    for protocol in LAB_PROTOCOLS:
        env_id = lab_gym_id(protocol)
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=LAB_ENTRY_POINT, kwargs={"protocol": protocol})
        ids.append(env_id)
    if MACRO_GYM_ID not in gymnasium.registry:
        gymnasium.register(id=MACRO_GYM_ID, entry_point="discoverylab.labs.macroecon.gym_env:MacroEconEnv")
    ids.append(MACRO_GYM_ID)
    for task, diffs in tasks().items():
        for diff in diffs:
            env_id = gym_id(task, diff)
            if env_id not in gymnasium.registry:
                gymnasium.register(
                    id=env_id,
                    entry_point="discoverylab.env:DiscoveryWorldEnv",
                    vector_entry_point="discoverylab.rl.vector:make_batched",
                    kwargs={"task": task, "difficulty": diff, "info": "lean"},
                    disable_env_checker=True,
                )
            ids.append(env_id)
    return ids


register_envs()

__all__ = ["__version__", "gym_id", "make", "register_envs", "tasks"]
