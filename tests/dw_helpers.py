"""Test helpers shared by the DiscoveryWorld tests."""

from __future__ import annotations

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
