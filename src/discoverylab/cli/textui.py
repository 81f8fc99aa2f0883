"""Terminal play: short human commands (the text view itself is `render.text.render_text`).

`parse_command("use 12 on 34")` turns what a person types into an action dict (or raises
ValueError with a hint).
"""

from __future__ import annotations

import json
from typing import Any

_ALIASES = {
    "take": "PICKUP", "pickup": "PICKUP", "get": "PICKUP", "drop": "DROP", "open": "OPEN", "close": "CLOSE",
    "activate": "ACTIVATE", "on": "ACTIVATE", "deactivate": "DEACTIVATE", "off": "DEACTIVATE", "talk": "TALK",
    "eat": "EAT", "read": "READ", "wait": "WAIT", "feed": "DISCOVERY_FEED_GET_UPDATES",
    "articles": "DISCOVERY_FEED_GET_ARTICLES", "post": "DISCOVERY_FEED_GET_POST_BY_ID",
    "tpo": "TELEPORT_TO_OBJECT", "goto": "TELEPORT_TO_OBJECT",
}  # fmt: skip
_DIRS = {"n": "north", "e": "east", "s": "south", "w": "west", "north": "north", "east": "east", "south": "south", "west": "west"}

HELP = """Commands:
  move north | n | e | s | w      move one tile (and face that way)
  rotate east                     turn without moving
  take 12 / drop 12               pick up / drop object with UUID 12
  put 12 in 34 / give 12 to 34    put an item into a container or give it to someone
  use 12 on 34                    use an object (e.g. an instrument) on another
  open 12 / close 12 / activate 12 / deactivate 12 / talk 12 / eat 12 / read 12
  tp <location name>              teleport to a named location;  tpo 12  teleport beside object 12
  feed / articles / post 3        read the DiscoveryFeed
  wait                            do nothing for a step
  1, 2, ...                       choose a dialog option (while in a dialog)
  {"action": ...}                 any raw JSON action
  help / quit"""


def parse_command(text: str) -> dict[str, Any]:
    """Human command -> action dict. Raises ValueError with a hint on nonsense."""
    text = text.strip()
    if not text:
        raise ValueError("Empty command; type 'help'.")
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"Bad JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ValueError("A raw action must be a JSON object.")
        return data
    if text.isdigit():
        return {"chosen_dialog_option_int": int(text)}
    words = text.split()
    verb = words[0].lower()
    rest = words[1:]
    if verb in _DIRS and not rest:
        return {"action": "MOVE_DIRECTION", "arg1": _DIRS[verb]}
    if verb in ("move", "go", "rotate", "turn", "face"):
        if not rest or rest[0].lower() not in _DIRS:
            raise ValueError(f"Say which way: '{verb} north'.")
        name = "MOVE_DIRECTION" if verb in ("move", "go") else "ROTATE_DIRECTION"
        return {"action": name, "arg1": _DIRS[rest[0].lower()]}
    if verb in ("tp", "teleport"):
        if not rest:
            raise ValueError("Say where: 'tp initial location'.")
        return {"action": "TELEPORT_TO_LOCATION", "arg1": " ".join(rest)}
    if verb in ("put", "give", "use"):
        nums = [w for w in rest if w.lstrip("-").isdigit()]
        if len(nums) != 2:
            joiner = "on" if verb == "use" else "in"
            raise ValueError(f"Say two UUIDs: '{verb} 12 {joiner} 34'.")
        return {"action": "USE" if verb == "use" else "PUT", "arg1": int(nums[0]), "arg2": int(nums[1])}
    if verb in _ALIASES:
        action: dict[str, Any] = {"action": _ALIASES[verb]}
        if rest:
            action["arg1"] = int(rest[0]) if rest[0].lstrip("-").isdigit() else " ".join(rest)
        return action
    return {"action": verb.upper(), **({"arg1": rest[0]} if rest else {}), **({"arg2": rest[1]} if len(rest) > 1 else {})}
