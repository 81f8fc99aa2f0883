"""discoverylab: fast, Gymnasium-native scientific-discovery environments for AI agents.

    import discoverylab
    env = discoverylab.make("PickAndPlaceTest")           # or gymnasium.make("discoverylab/PickAndPlaceTest-Normal-v0")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step({"action": "MOVE_DIRECTION", "arg1": "north"})
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def make(task: str, difficulty: str = "normal", **options: Any) -> Any:
    """Create the Gymnasium env for a task. Unknown task or difficulty -> ValueError listing the valid ones.

    Options: max_steps, radius, teleport, render_mode (see `DiscoveryWorldEnv`).
    """
    from discoverylab.env import DiscoveryWorldEnv

    return DiscoveryWorldEnv(task, difficulty, **options)


def tasks(suite: str | None = None) -> dict[str, tuple[str, ...]]:
    """Task id -> valid difficulties (optionally only one suite: "unit", "discovery", "tutorial")."""
    from discoverylab.scenarios.registry import all_tasks

    return {tid: cls.difficulties for tid, cls in all_tasks().items() if suite is None or cls.suite == suite}


def gym_id(task: str, difficulty: str) -> str:
    return f"discoverylab/{task}-{difficulty.capitalize()}-v0"


def register_envs() -> list[str]:
    """Register every task x difficulty as a Gymnasium id (idempotent); returns the ids."""
    import gymnasium

    ids = []
    for task, diffs in tasks().items():
        for diff in diffs:
            env_id = gym_id(task, diff)
            if env_id not in gymnasium.registry:
                gymnasium.register(
                    id=env_id,
                    entry_point="discoverylab.env:DiscoveryWorldEnv",
                    kwargs={"task": task, "difficulty": diff},
                    disable_env_checker=True,
                )
            ids.append(env_id)
    return ids


register_envs()

__all__ = ["__version__", "gym_id", "make", "register_envs", "tasks"]
