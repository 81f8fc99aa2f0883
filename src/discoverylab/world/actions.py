"""Parsing, validation and execution of agent actions.

`execute` accepts anything an LLM could send (dicts, JSON text, garbage) and always returns an
`ActionResult`; invalid input yields `success=False` with a specific message and leaves the
world untouched. The checks run in the order the original's messages imply.
"""

from __future__ import annotations

from typing import Any

from discoverylab.world.action_input import (
    ACTION_KEYS,
    DIALOG_KEY,
    MAX_ECHO_CHARS,
    MAX_ERROR_CHARS,
    ActionError,
    _as_int,
    _key_list,
    brief,
    parse_action,
)
from discoverylab.world.action_specs import ACTION_SPECS, DIRECTION, LOCATION, POST_ID
from discoverylab.world.agent import DIRECTIONS, Agent
from discoverylab.world.devices import Device
from discoverylab.world.objects import ActionResult, WorldObject

_CLOCKWISE = ["north", "east", "south", "west"]
_CW = {d: _CLOCKWISE[(i + 1) % 4] for i, d in enumerate(_CLOCKWISE)}  # facing -> facing after a turn
_CCW = {d: _CLOCKWISE[(i + 3) % 4] for i, d in enumerate(_CLOCKWISE)}
_OPPOSITE = {d: _CLOCKWISE[(i + 2) % 4] for i, d in enumerate(_CLOCKWISE)}
ARG_KEYS = ("arg1", "arg2")
_HANDLERS = {name: f"_do_{name.lower()}" for name in ACTION_SPECS}  # action name -> executor method
_LABELS = {
    "PICKUP": "pick up object",
    "DROP": "drop item",
    "PUT": "put item in container",
    "OPEN": "open",
    "CLOSE": "close",
    "ACTIVATE": "activate",
    "DEACTIVATE": "deactivate",
    "TALK": "talk",
    "EAT": "eat",
    "READ": "read",
    "USE": "use object",
    "TELEPORT_TO_OBJECT": "teleport to object",
}


def accessible_objects(agent: Agent) -> dict[int, WorldObject]:
    """What action arguments may name: the inventory, plus everything visible on the agent's
    own tile and on the tile it faces (other agents and their open inventories included)."""
    world = agent.world
    found: dict[int, WorldObject] = {obj.uuid: obj for obj in agent.inventory()} if agent.contents else {}
    x, y = agent.x, agent.y
    dx, dy = DIRECTIONS[agent.facing]
    size = world.size
    for obj in world.objects_at(x, y):
        if obj is not agent and obj.uuid not in found:
            found[obj.uuid] = obj
    x, y = x + dx, y + dy
    if 0 <= x < size and 0 <= y < size:
        for obj in world.objects_at(x, y):
            if obj is not agent and obj.uuid not in found:
                found[obj.uuid] = obj
    return found


def accessible_object(agent: Agent, uid: int) -> WorldObject | None:
    """`accessible_objects(agent).get(uid)` without building the dict: the same places in the
    same order, stopping at the first object with that UUID."""
    if agent.contents:
        for obj in agent.inventory():
            if obj.uuid == uid:
                return obj
    world = agent.world
    x, y = agent.x, agent.y
    for obj in world.objects_at(x, y):
        if obj.uuid == uid and obj is not agent:
            return obj
    dx, dy = DIRECTIONS[agent.facing]
    x, y = x + dx, y + dy
    if 0 <= x < world.size and 0 <= y < world.size:
        for obj in world.objects_at(x, y):
            if obj.uuid == uid and obj is not agent:
                return obj
    return None


class ActionExecutor:
    """Executes actions for one agent against its world."""

    def __init__(self, agent: Agent, teleport: bool = True, strict: bool = False) -> None:
        self.agent = agent
        self.world = agent.world
        self.teleport = teleport
        # Lenient (default, as the original): extra keys such as "thought" and a value in an unused
        # argument slot are ignored, so prompts written for the original work unchanged.
        self.strict = strict

    # ---- entry point ------------------------------------------------------------------
    def execute(self, raw: Any) -> ActionResult:
        try:
            packet = parse_action(raw)
            if self.agent.dialog_partner is not None:
                return self._dialog_choice(packet)
            return self._dispatch(packet)
        except ActionError as exc:
            message = str(exc)
            if len(message) > MAX_ERROR_CHARS:
                message = message[: MAX_ERROR_CHARS - 3] + "..."
            return ActionResult(False, message)

    def _dispatch(self, packet: dict[str, Any]) -> ActionResult:
        if "action" not in packet:
            if DIALOG_KEY in packet:
                raise ActionError("You are not in a dialog. Start one with TALK before choosing a dialog option.")
            raise ActionError(
                "Missing 'action' key in JSON. You are not currently in dialog mode, so send e.g. "
                '{"action": "MOVE_DIRECTION", "arg1": "north"}.'
            )
        name = packet["action"]
        if not isinstance(name, str):
            raise ActionError(f"'action' must be a string naming an action, not {type(name).__name__}.")
        spec = ACTION_SPECS.get(name) if type(name) is str else None  # the usual exact spelling: one lookup
        if spec is None:
            name = name.strip().upper()
            spec = ACTION_SPECS.get(name)
        if spec is None:
            known = ", ".join(s.name for s in ACTION_SPECS.values() if s.advertised)
            raise ActionError(f"Unknown action {brief(packet['action'])}. Known actions: {known}.")
        if spec.teleport and not self.teleport:
            raise ActionError(f"The action {name} is disabled in this environment (teleport handicap off).")
        if self.strict:
            extra = set(packet) - ACTION_KEYS
            if extra:
                raise ActionError(f"Unexpected key(s) {_key_list(extra)}. An action has only 'action', 'arg1' and 'arg2'.")
        kinds = spec.args
        handler = getattr(self, _HANDLERS[name])
        if not kinds and not self.strict:  # moves, turns, waits: nothing to resolve
            return handler()
        if name in ("PUT", "USE"):
            missing = [key for key in ARG_KEYS if packet.get(key) in (None, "")]
            if missing:
                which = "both arguments" if len(missing) == 2 else missing[0]
                raise ActionError(f"Action '{_LABELS[name]}' requires two argument objects. Missing {which}.")
        args = [self._resolve(name, key, kind, packet.get(key)) for key, kind in zip(ARG_KEYS, kinds, strict=False)]
        if self.strict:
            for key in ARG_KEYS[len(kinds) :]:
                if packet.get(key) not in (None, ""):
                    raise ActionError(f"{name} takes {len(kinds)} argument(s); '{key}' is not expected.")
        return handler(*args)

    # ---- argument resolution ----------------------------------------------------------
    def _resolve(self, action: str, key: str, kind: str, value: Any) -> Any:
        if value is None or value == "":
            label = _LABELS.get(action, action)
            raise ActionError(f"Action '{label}' requires '{key}' ({kind}).")
        if kind == DIRECTION:
            if type(value) is str and value in DIRECTIONS:  # already canonical
                return value
            if not isinstance(value, str) or value.strip().lower() not in DIRECTIONS:
                raise ActionError(f"Invalid direction {brief(value)} in '{key}'. Use north, east, south or west.")
            return value.strip().lower()
        if kind == LOCATION:
            if not isinstance(value, str):
                raise ActionError(f"'{key}' must be a teleport location name (a string), not {type(value).__name__}.")
            return value
        uid = _as_int(value)
        if kind == POST_ID:
            if uid is None:
                raise ActionError(f"Invalid post ID {brief(value)} in '{key}': expected an integer.")
            return uid
        if uid is None:
            raise ActionError(f"'{key}' must be an object UUID (an integer), not {brief(value)}.")
        if action == "TELEPORT_TO_OBJECT":
            obj = self.world.objects.get(uid)
            if obj is None and uid in self.agent.seen:
                raise ActionError(f"{key}: the object with UUID {uid} no longer exists (eaten or used up).")
            if obj is None or uid not in self.agent.seen:
                raise ActionError(
                    f"{key}: you have not observed an object with UUID {uid}. "
                    "TELEPORT_TO_OBJECT works only for objects that appeared in your observations."
                )
            return obj
        found = accessible_object(self.agent, uid)
        if found is not None:
            return found
        if uid in self.world.objects and uid in self.agent.seen:
            obj = self.world.objects[uid]
            raise ActionError(
                f"{key}: the {obj.name} (UUID {uid}) is not accessible. Objects must be in your inventory, "
                "on your tile, or on the tile you are facing."
            )
        raise ActionError(
            f"{key}: could not find an accessible object with UUID {uid}. "
            "Use UUIDs from inventoryObjects or accessibleEnvironmentObjects."
        )

    # ---- dialog -----------------------------------------------------------------------
    def _dialog_choice(self, packet: dict[str, Any]) -> ActionResult:
        partner = self.agent.dialog_partner
        assert partner is not None and partner.dialog_tree is not None
        tree = partner.dialog_tree
        if DIALOG_KEY not in packet:
            raise ActionError(
                "Missing `chosen_dialog_option_int` key. You are in a dialog: send "
                '{"chosen_dialog_option_int": N} with N one of the dialog options shown.'
            )
        extra = set(packet) - {DIALOG_KEY}
        if extra and self.strict:
            raise ActionError(f"Unexpected key(s) {_key_list(extra)} while in a dialog; send only '{DIALOG_KEY}'.")
        choice = _as_int(packet[DIALOG_KEY])
        options = tree.visible_options()
        valid = {i + 1: opt.text for i, opt in enumerate(options)}
        if choice is None or choice not in valid:
            raise ActionError(f"`chosen_dialog_option_int` must be one of {sorted(valid)} ({valid}).")
        said = valid[choice]
        node = tree.choose(choice)
        text = node.text.format(**partner.props)
        message = f"We are talking.  You said: {said}\n\n{partner.name} said: {text}"
        if not tree.visible_options():
            tree.reset()
            partner.dialog_partner = None
            self.agent.dialog_partner = None
        self.agent.record("DIALOG", said, None, True, message)
        return ActionResult(True, message)

    # ---- movement ---------------------------------------------------------------------
    def _move(self, direction: str, face: bool) -> ActionResult:
        agent, world = self.agent, self.world
        dx, dy = DIRECTIONS[direction]
        nx, ny = agent.x + dx, agent.y + dy
        if not (0 <= nx < world.size and 0 <= ny < world.size):
            return self._done("MOVE_DIRECTION", direction, None, False, "That would take me beyond the edge of the world.")
        blocker = world.blocker_at(nx, ny)
        if blocker is not None:
            msg = f"I can't move there. There is something in the way ({blocker.name})."
            return self._done("MOVE_DIRECTION", direction, None, False, msg)
        world.walk(agent, nx, ny)
        if face:
            agent.facing = direction
        return self._done("MOVE_DIRECTION", direction, None, True, f"I moved to ({nx}, {ny}).")

    def _do_move_direction(self, direction: str) -> ActionResult:
        return self._move(direction, face=True)

    def _do_move_forward(self) -> ActionResult:
        return self._move(self.agent.facing, face=True)

    def _do_move_backward(self) -> ActionResult:
        return self._move(_OPPOSITE[self.agent.facing], face=False)

    def _rotate(self, direction: str) -> ActionResult:
        self.agent.facing = direction
        return self._done("ROTATE_DIRECTION", direction, None, True, f"I rotated to face {direction}.")

    def _do_rotate_direction(self, direction: str) -> ActionResult:
        return self._rotate(direction)

    def _do_rotate_cw(self) -> ActionResult:
        return self._rotate(_CW[self.agent.facing])

    def _do_rotate_ccw(self) -> ActionResult:
        return self._rotate(_CCW[self.agent.facing])

    def _do_wait(self) -> ActionResult:
        return self._done("WAIT", None, None, True, "I waited.")

    def _do_teleport_to_location(self, name: str) -> ActionResult:
        if name not in self.world.teleports:
            known = sorted(self.world.teleports)
            shown = name if len(name) <= MAX_ECHO_CHARS else name[:MAX_ECHO_CHARS] + "..."
            msg = f"That's not a known teleport location ('{shown}'). I know about the following locations: {known}"
            return self._done("TELEPORT_TO_LOCATION", shown, None, False, msg)
        tx, ty = self.world.teleports[name]
        x, y = _nearest_passable(self.world, tx, ty)
        self.world.walk(self.agent, x, y)  # `place` for a character already on the grid
        return self._done("TELEPORT_TO_LOCATION", name, None, True, f"I teleported to {name} at {x}, {y}.")

    def _do_teleport_to_object(self, obj: WorldObject) -> ActionResult:
        ox, oy = obj.location()
        if ox < 0:
            return self._done("TELEPORT_TO_OBJECT", obj, None, False, f"The {obj.name} does not have a valid location.")
        # The tiles north, east, south and west of the object (the original's order), facing it:
        # the first on the agent's side of every closed door, else the first on its side of every
        # locked door (teleporting out of, or into, a locked room would skip finding its key).
        sides = [(s, ox + DIRECTIONS[s][0], oy + DIRECTIONS[s][1]) for s in _CLOCKWISE]
        free = [(s, x, y) for s, x, y in sides if (x, y) != (ox, oy) and self.world.is_passable(x, y)]
        for locked_only in (False, True):
            if not free:
                break
            zones = self.world.door_zones(locked_only)
            here = self._zones_here(zones) if zones is not None else set()
            side = next((c for c in free if zones is None or zones[c[1]][c[2]] in here), None)
            if side is not None:
                self.world.walk(self.agent, side[1], side[2])
                self.agent.facing = _OPPOSITE[side[0]]
                msg = f"I teleported to the object with UUID {obj.uuid} ({obj.name}) at ({side[1]}, {side[2]})."
                return self._done("TELEPORT_TO_OBJECT", obj, None, True, msg)
        msg = f"I couldn't find a valid location beside the object ({obj.name}, uuid: {obj.uuid}) to teleport to."
        return self._done("TELEPORT_TO_OBJECT", obj, None, False, msg)

    def _zones_here(self, zones: list[list[int]]) -> set[int]:
        """The agent's door zone (on a barrier tile, where only a scripted placement puts it,
        the zones of the tiles beside it)."""
        x, y = self.agent.x, self.agent.y
        if zones[x][y] >= 0:
            return {zones[x][y]}
        near = ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1))
        return {zones[a][b] for a, b in near if self.world.in_bounds(a, b) and zones[a][b] >= 0}

    # ---- object actions ---------------------------------------------------------------
    def _do_pickup(self, obj: WorldObject) -> ActionResult:
        if not obj.movable:
            return self._done("PICKUP", obj, None, False, f"That object ({obj.name}) is not movable.")
        if obj.parent is self.agent:
            return self._done("PICKUP", obj, None, False, f"The {obj.name} is already in my inventory.")
        self.agent.add(obj)
        return self._done("PICKUP", obj, None, True, f"I picked up the {obj.name}.")

    def _do_drop(self, obj: WorldObject) -> ActionResult:
        if not self.agent.contains(obj):
            return self._done("DROP", obj, None, False, f"That object ({obj.name}) is not in my inventory.")
        self.world.place(obj, self.agent.x, self.agent.y, obj.default_layer)
        return self._done("DROP", obj, None, True, f"I dropped the {obj.name}.")

    def _do_put(self, obj: WorldObject, container: WorldObject) -> ActionResult:
        fail = None
        if not self.agent.contains(obj):
            fail = f"That object ({obj.name}) is not in my inventory."
        elif not container.is_container:
            fail = f"That object ({container.name}) is not a container."
        elif not container.is_open and not container.is_npc:
            fail = f"That container ({container.name}) is not open."
        elif obj is container:
            fail = f"I can't put the {obj.name} into itself."
        elif obj.contains(container):
            fail = f"I can't put the {obj.name} into something inside itself."
        if fail:
            return self._done("PUT", obj, container, False, fail)
        container.add(obj)
        if container.is_npc:
            return self._done("PUT", obj, container, True, f"I gave the {obj.name} to {container.name}.")
        return self._done("PUT", obj, container, True, f"I put the {obj.name} into the {container.name}.")

    def _do_open(self, obj: WorldObject) -> ActionResult:
        return self._open_close(obj, True)

    def _do_close(self, obj: WorldObject) -> ActionResult:
        return self._open_close(obj, False)

    def _open_close(self, obj: WorldObject, want_open: bool) -> ActionResult:
        verb, action = ("open", "OPEN") if want_open else ("close", "CLOSE")
        able = "openable" if want_open else "closeable"
        if not obj.openable:
            return self._done(action, obj, None, False, f"That object ({obj.name}) is not {able}.")
        if obj.is_open == want_open:
            state = "open" if want_open else "closed"
            return self._done(action, obj, None, False, f"That object ({obj.name}) is already {state}.")
        if obj.is_passage and want_open and obj.requires_key:
            keys = [o for o in self.agent.inventory() if o.type == "key" and o.key_id == obj.requires_key]
            if not keys:
                return self._done(action, obj, None, False, f"That object ({obj.name}) requires a key to open.")
            if all(k.props.get("rusted") for k in keys):
                return self._done(action, obj, None, False, "The key is rusted and doesn't work.")
        if obj.is_passage and not want_open and obj.location() == (self.agent.x, self.agent.y):
            return self._done(action, obj, None, False, "I can't close the door while I'm standing in it.")
        obj.is_open = want_open
        obj.text_changed()
        return self._done(action, obj, None, True, f"I {verb}ed the {obj.name}." if want_open else f"I closed the {obj.name}.")

    def _do_activate(self, obj: WorldObject) -> ActionResult:
        return self._switch(obj, True)

    def _do_deactivate(self, obj: WorldObject) -> ActionResult:
        return self._switch(obj, False)

    def _switch(self, obj: WorldObject, on: bool) -> ActionResult:
        action, word = ("ACTIVATE", "activate") if on else ("DEACTIVATE", "deactivate")
        if not obj.activatable:
            return self._done(action, obj, None, False, f"That object ({obj.name}) is not {word[:-1]}able.")
        if obj.activated == on:
            return self._done(action, obj, None, False, f"That object ({obj.name}) is already {word}d.")
        obj.activated = on
        obj.text_changed()
        return self._done(action, obj, None, True, f"I {word}d the {obj.name}.")

    def _do_eat(self, obj: WorldObject) -> ActionResult:
        if not obj.edible:
            return self._done("EAT", obj, None, False, f"That object ({obj.name}) is not edible.")
        poisonous = any(o.poisonous for o in (obj, *obj.all_contents(), *_all_parts(obj)))
        self._done("EAT", obj, None, True, f"I ate the {obj.name}.")
        obj.remove_from_world()
        if poisonous:
            self.agent.eat_poison()
        return ActionResult(True, f"I ate the {obj.name}.")

    def _do_read(self, obj: WorldObject) -> ActionResult:
        if not obj.readable:
            return self._done("READ", obj, None, False, f"That object ({obj.name}) is not readable.")
        if not obj.document:
            return self._done("READ", obj, None, False, f"The {obj.name} appears blank. There is nothing to read.", True)
        return self._done("READ", obj, None, True, f"The {obj.name} reads:\n{obj.document}", True)

    def _do_use(self, tool: WorldObject, target: WorldObject) -> ActionResult:
        if isinstance(tool, Device):  # a device is operated through its menu (recorded as the TALK that ran)
            return self._do_talk(tool)
        first = _try_use(self.agent, tool, target)
        if not first.success:
            if isinstance(target, Device):
                return self._do_talk(target)
            swapped = _try_use(self.agent, target, tool)
            if swapped.success:
                note = (
                    f"\n Note, the original action failed (USE, arg1:{tool.uuid}, arg2:{target.uuid}), but the "
                    f"arguments were switched and the action succeeded (USE, arg1:{target.uuid}, arg2:{tool.uuid}). "
                    "Try to enter the arguments in the correct order next time."
                )
                return self._done("USE", target, tool, True, swapped.message + note, swapped.important)
        return self._done("USE", tool, target, first.success, first.message, first.important)

    def _do_talk(self, npc: WorldObject) -> ActionResult:
        if not npc.dialogable or not isinstance(npc, (Agent, Device)):
            return self._done("TALK", npc, None, False, f"You can't talk to that ({npc.name}).")
        busy = getattr(npc, "is_busy", None)
        if busy is not None and busy():
            return self._done("TALK", npc, None, False, f"That agent ({npc.name}) is busy, try again later.")
        if npc.dialog_tree is None or npc.dialog_tree.root not in npc.dialog_tree.nodes:
            return self._done("TALK", npc, None, False, f"That agent ({npc.name}) has no dialog tree set.")
        if npc.dialog_partner is not None and npc.dialog_partner is not self.agent:
            msg = f"That agent ({npc.name}) is busy talking to ({npc.dialog_partner.name})."
            return self._done("TALK", npc, None, False, msg)
        node = npc.dialog_tree.start()
        message = f"We are talking.  You said: Hello!\n\n{npc.name} said: {node.text.format(**npc.props)}"
        if npc.dialog_tree.visible_options():
            npc.dialog_partner = self.agent
            self.agent.dialog_partner = npc
        else:  # nothing to answer: the conversation is over at once (no dialog mode to get stuck in)
            npc.dialog_tree.reset()
        return self._done("TALK", npc, None, True, message)

    # ---- feed -------------------------------------------------------------------------
    def _do_discovery_feed_get_updates(self) -> ActionResult:
        return self._done("DISCOVERY_FEED_GET_UPDATES", None, None, True, self.world.feed.render_updates(), True)

    def _do_discovery_feed_get_articles(self) -> ActionResult:
        return self._done("DISCOVERY_FEED_GET_ARTICLES", None, None, True, self.world.feed.render_articles(), True)

    def _do_discovery_feed_get_post_by_id(self, post_id: int) -> ActionResult:
        head = f"DiscoveryFeed (Search)\nSearch results for DiscoveryFeed document ID {post_id}:\n\n"
        post = self.world.feed.get(post_id)
        if post is None:
            return self._done("DISCOVERY_FEED_GET_POST_BY_ID", post_id, None, False, head + f"No post found with ID {post_id}\n")
        return self._done("DISCOVERY_FEED_GET_POST_BY_ID", post_id, None, True, head + post.render(), True)

    # ---- helpers ----------------------------------------------------------------------
    def _done(self, action: str, arg1: Any, arg2: Any, success: bool, message: str, important: bool = False) -> ActionResult:
        self.agent.record(action, arg1, arg2, success, message)
        return ActionResult(success, message, important)


def _try_use(agent: Agent, tool: WorldObject, target: WorldObject) -> ActionResult:
    if not tool.usable:
        return ActionResult(False, f"That object ({tool.name}) is not usable.")
    result = tool.use_with(agent, target)
    return result


def _all_parts(obj: WorldObject) -> list[WorldObject]:
    out: list[WorldObject] = []
    for part in obj.parts:
        out.append(part)
        out.extend(_all_parts(part))
    return out


def _nearest_passable(world: Any, x: int, y: int) -> tuple[int, int]:
    """The passable tile closest to (x, y) in straight-line distance (ties: smallest (x, y)).
    Searches square rings outwards and stops once no further ring can hold a closer tile."""
    best: tuple[int, tuple[int, int]] | None = None
    for radius in range(2 * world.size):
        if best is not None and best[0] < radius * radius:
            break
        for dx in range(-radius, radius + 1):
            for dy in range(-radius, radius + 1):
                if max(abs(dx), abs(dy)) == radius and world.is_passable(x + dx, y + dy):
                    candidate = (dx * dx + dy * dy, (x + dx, y + dy))
                    if best is None or candidate < best:
                        best = candidate
    return best[1] if best is not None else (x, y)
