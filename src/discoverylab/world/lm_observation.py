"""The observation rewritten for language models: same facts, far fewer tokens.

The structured observation (observation.py) keeps the original's keys, so prompts written for
the original work. Read by a language model, most of it is repetition: three constant notes,
the 19-action list (2.1 KB, 20-32% of every step), every object written as
`{"name": "floor", "description": "floor", "distance": 2, "uuid": 12902}`, nine direction groups
that are mostly empty. This module renders the same content as short text lines, sends what never
changes (action list, argument kinds, notes, the task text) once per episode through
`lm_instructions`, and shows the dialog choices instead of the action list while in a dialog.
It is a pure function of the observation dict, so it works on saved logs and costs nothing
when unused. Measured sizes are in docs/performance.md.
"""

from __future__ import annotations

from typing import Any

from discoverylab.world.action_specs import (
    ACTION_FORMAT_HELP,
    ACTION_SPECS,
    DIRECTION,
    LOCATION,
    OBJECT,
    POST_ID,
)
from discoverylab.world.observation import GROUPS

ARGUMENT_KINDS = {
    OBJECT: "an integer UUID of an object in your inventory, on your tile or on the tile you face",
    DIRECTION: "north, east, south or west",
    LOCATION: "a name from the teleport locations",
    POST_ID: "an integer DiscoveryFeed post ID",
}
LINE_FORMAT_HELP = (
    "Observations are short text. Objects are written `UUID name` (plus `: description` when it says "
    "more than the name); nearby objects are grouped by direction with their distance in tiles as "
    "`dN` (Manhattan distance; listed are objects at most 3 tiles away along each axis, so up to d6: they may be obscured; only objects in your inventory, "
    "on your tile or on the tile you face can be used). `agents` lists characters and devices near "
    "you with their actions of the last 3 steps."
)


def action_lines(teleport: bool = True) -> list[str]:
    """One line per advertised action: `NAME(arg1: kind, ...) - description`."""
    lines = []
    for spec in ACTION_SPECS.values():
        if not spec.advertised or (spec.teleport and not teleport):
            continue
        args = ", ".join(f"arg{i + 1}: {kind}" for i, kind in enumerate(spec.args))
        lines.append(f"{spec.name}({args}) - {spec.description}")
    return lines


def lm_instructions(teleport: bool = True, teleport_locations: list[str] | None = None) -> str:
    """What a model needs once per episode: action format, argument kinds, actions, locations."""
    kinds = "; ".join(f"{kind}: {text}" for kind, text in ARGUMENT_KINDS.items() if teleport or kind != LOCATION)
    parts = [ACTION_FORMAT_HELP, f"Argument kinds - {kinds}.", LINE_FORMAT_HELP, "Actions:", *action_lines(teleport)]
    if teleport and teleport_locations:
        parts.append("Teleport locations: " + ", ".join(teleport_locations))
    return "\n".join(parts)


def _obj(entry: dict[str, Any], distance: bool = False) -> str:
    text = f"{entry['uuid']} {entry['name']}"
    if entry.get("description") and entry["description"] != entry["name"]:
        text += f": {entry['description']}"
    if distance:
        text += f" d{entry['distance']}"
    return text


def _history(entry: dict[str, Any]) -> str:
    args = " ".join(str(entry[k]) for k in ("arg1", "arg2") if k in entry)
    ok = "ok" if entry.get("success") else "failed"
    return f"{entry.get('actionType', '?')} {args} ({ok}, step {entry.get('step', '?')})".replace("  ", " ")


def lm_observation(obs: dict[str, Any], actions: str = "context") -> str:
    """The observation as compact text lines for a language model.

    Args:
        obs: the structured observation (`info["observation"]`).
        actions: "context" (default): no action list (it is in `lm_instructions`, sent once), but
            the dialog choices while in a dialog; "every": also append the action list each step,
            as the original does.
    """
    loc = obs["agentLocation"]
    lines = [
        f"step {obs['world_steps']}; you are at ({loc['x']}, {loc['y']}) facing {loc['faceDirection']}; "
        f"can move: {', '.join(loc['directions_you_can_move']) or 'nowhere'}; "
        f"blocked: {', '.join(loc['directions_blocked']) or 'none'}",
        f"last action: {obs['lastActionMessage']}",
    ]
    if obs.get("extended_action_message") and obs["extended_action_message"] != obs["lastActionMessage"]:
        lines.append(f"details: {obs['extended_action_message']}")
    lines.append("inventory: " + ("; ".join(_obj(e) for e in obs["inventoryObjects"]) or "empty"))
    lines.append("accessible (your tile and the tile you face): " + ("; ".join(_obj(e) for e in obs["accessibleEnvironmentObjects"]) or "nothing"))
    nearby = obs["nearbyObjects"]["objects"]
    lines.append("nearby:")
    for group in GROUPS:
        if nearby.get(group):
            lines.append(f" {group}: " + "; ".join(_obj(e, distance=True) for e in nearby[group]))
    agents = obs["nearbyAgents"]["list_of_agents"]
    if agents:
        shown = [name + (" [" + "; ".join(_history(h) for h in hist) + "]" if hist else "") for name, hist in agents.items()]
        lines.append("agents: " + ", ".join(shown))
    feed = obs["discoveryFeed"]
    if feed["posts"]:
        lines.append("feed posts: " + " | ".join(f"#{p['postID']} step {p['step']} {p['author']}: {p['content']}" for p in feed["posts"]))
    if feed["scientific_articles"]:
        lines.append("articles: " + "; ".join(f"#{a['postID']} {a['title']} ({a['author']}, step {a['step']})" for a in feed["scientific_articles"]))
    for task in obs["taskProgress"]:
        state = _task_state(task)
        lines.append(f"task {task['taskName']}: {state}")
    dialog = obs["dialog_box"]
    if dialog.get("is_in_dialog"):
        lines.append(f"DIALOG: {dialog.get('dialogIn', '')}")
        options = dialog.get("dialogOptions") or {}
        if options:
            lines.append('Answer with {"chosen_dialog_option_int": N}, N one of:')
            lines.extend(f" {key}: {text}" for key, text in options.items())
    elif actions == "every":
        lines.append("actions: " + " | ".join(action_lines("teleportLocations" in obs)))
    return "\n".join(lines)


def _task_state(task: dict[str, Any]) -> str:
    """A task line's state; a sealed instance's decided task is "ended" (its outcome is the
    evaluator's: `completedSuccessfully` is None), a win and a loss alike."""
    if not task["completed"]:
        return "in progress"
    if task["completedSuccessfully"] is None:
        return "ended"
    return "succeeded" if task["completedSuccessfully"] else "failed"
