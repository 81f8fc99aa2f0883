"""The "ansi" view of an observation: what `discoverylab play` shows and `render_mode="ansi"` returns."""

from __future__ import annotations

from typing import Any


def render_text(obs: dict[str, Any]) -> str:
    """A compact, human-readable view of one observation."""
    loc = obs["agentLocation"]
    task = obs["taskProgress"][0]
    done, won = task["completed"], task["completedSuccessfully"]  # won: None on a sealed instance
    status = "in progress" if not done else "ended" if won is None else "SUCCESS" if won else "FAILED"
    lines = [
        f"Step {obs['world_steps']} | at ({loc['x']}, {loc['y']}) facing {loc['faceDirection']} | "
        f"can move: {', '.join(loc['directions_you_can_move']) or '-'} | task: {status}",
        f"Task: {task['description'].strip()}",
        f"> {obs['lastActionMessage'].strip()}",
    ]
    inv = obs["inventoryObjects"]
    lines.append("Inventory: " + (", ".join(f"{o['description']} [{o['uuid']}]" for o in inv) or "(empty)"))
    acc = obs["accessibleEnvironmentObjects"]
    lines.append("Within reach: " + (", ".join(f"{o['description']} [{o['uuid']}]" for o in acc) or "-"))
    nearby = []
    for group, entries in obs["nearbyObjects"]["objects"].items():
        names = [f"{e['name']} [{e['uuid']}]" for e in entries if e["name"] not in ("grass", "floor", "path", "wall")]
        if names:
            nearby.append(f"  {group}: {', '.join(names)}")
    if nearby:
        lines.append("Nearby:")
        lines.extend(nearby)
    dialog = obs["dialog_box"]
    if dialog.get("is_in_dialog"):
        lines.append(f"Dialog: {dialog.get('dialogIn', '')}")
        for key, text in dialog.get("dialogOptions", {}).items():
            lines.append(f"  {key}. {text}")
    for post in obs["discoveryFeed"]["posts"]:
        lines.append(f"Feed #{post['postID']} {post['author']}: {post['content']}")
    if obs.get("teleportLocations"):
        lines.append("Teleport locations: " + ", ".join(obs["teleportLocations"]))
    return "\n".join(lines)
