"""Test helpers shared by the DiscoveryWorld tests."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from discoverylab.world.world import World


def world_fingerprint(world: World) -> list[Any]:
    """Everything an action can change: where each object is, its state, agents' facing/dialog."""
    rows: list[Any] = []
    for uuid, obj in sorted(world.objects.items()):
        parent = obj.parent.uuid if obj.parent is not None else None
        rows.append((
            uuid, obj.name, obj.x, obj.y, obj.layer, parent, obj.is_open, obj.activated,
            tuple(o.uuid for o in obj.contents), getattr(obj, "facing", None),
            getattr(getattr(obj, "dialog_partner", None), "uuid", None),
        ))  # fmt: skip
    return rows


def drive(env: Any, actions: Generator[dict[str, Any], str, Any], info: dict[str, Any], *,
          wait_out: bool = False) -> dict[str, Any]:  # fmt: skip
    """Play a strategy written as an oracle-style generator (it yields actions and is sent each
    observation) through `env.step` until the episode ends or the strategy stops (it raises
    `StopIteration` or `OracleFailure`); `wait_out`: then WAIT until the episode ends. The last
    step's `info` (the reset's if no step was taken)."""
    from discoverylab.scenarios.oracle_tools import OracleFailure

    done = False
    try:
        action = next(actions)
        while True:
            _, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            if done:
                break
            action = actions.send(info["observation"])
    except (StopIteration, OracleFailure):
        while wait_out and not done:
            _, _, terminated, truncated, info = env.step({"action": "WAIT"})
            done = terminated or truncated
    return info
