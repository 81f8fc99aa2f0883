"""Parsing, validation and execution of agent actions.

`execute` accepts anything an LLM could send (dicts, JSON text, garbage) and always returns an
`ActionResult`; invalid input yields `success=False` with a specific message and leaves the
world untouched. The checks run in the order the original's messages imply.
"""

from __future__ import annotations

from typing import Any, Final

from mypy_extensions import mypyc_attr

from discoverylab.world.action_input import (
    ACTION_KEYS,
    DIALOG_KEY,
    MAX_ERROR_CHARS,
    ActionError,
    _as_int,
    _key_list,
    brief,
    parse_action,
)
from discoverylab.world.action_specs import ACTION_SPECS, DIRECTION, LOCATION, POST_ID
from discoverylab.world.agent import DIRECTIONS, ActionRecord, Agent
from discoverylab.world.devices import Device
from discoverylab.world.movement import MovementActions
from discoverylab.world.objects import ActionResult, WorldObject
from discoverylab.world.reach import accessible_object

ARG_KEYS: Final = ("arg1", "arg2")
_DIALOG_KEYS: Final = frozenset({DIALOG_KEY})
# action name -> (argument kinds, needs teleport): one lookup per action (`_run` has the handlers)
_ROUTES: Final = {name: (spec.args, spec.teleport) for name, spec in ACTION_SPECS.items()}
_LABELS: Final = {
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




def _huge_int(value: Any) -> bool:
    """An integer (or integral float or digit string) too large for `_as_int`: the error path's
    message says so instead of "expected an integer"."""
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, str):
        return value.strip().lstrip("+-").isdigit()
    return isinstance(value, int)


def _blank(value: Any) -> bool:
    """An argument left out: None or "" (tested without `==`, which a value such as pandas.NA
    answers with an error)."""
    return value is None or (isinstance(value, str) and not value)


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
class ActionExecutor(MovementActions):
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
        route = _ROUTES.get(name) if type(name) is str else None  # the usual exact spelling: one lookup
        if route is None:
            if not isinstance(name, str):
                raise ActionError(f"'action' must be a string naming an action, not {type(name).__name__}.")
            name = name.strip().upper()
            route = _ROUTES.get(name)
            if route is None:
                known = ", ".join(s.name for s in ACTION_SPECS.values() if s.advertised)
                raise ActionError(f"Unknown action {brief(packet['action'])}. Known actions: {known}.")
        kinds, teleport = route
        if teleport and not self.teleport:
            raise ActionError(f"The action {name} is disabled in this environment (teleport handicap off).")
        if not self.strict:
            if not kinds:  # moves, turns, waits: nothing to resolve
                return self._run(name, None, None)
            if len(kinds) == 1:  # one argument: most actions (a canonical direction needs no resolving)
                value = packet.get("arg1")
                if kinds[0] == DIRECTION and type(value) is str and value in DIRECTIONS:
                    return self._run(name, value, None)
                return self._run(name, self._resolve(name, "arg1", kinds[0], value), None)
        else:
            extra = set(packet) - ACTION_KEYS
            if extra:
                raise ActionError(f"Unexpected key(s) {_key_list(packet, ACTION_KEYS)}. An action has only 'action', 'arg1' and 'arg2'.")
        if name in ("PUT", "USE"):
            missing = [key for key in ARG_KEYS if _blank(packet.get(key))]
            if missing:
                which = "both arguments" if len(missing) == 2 else missing[0]
                raise ActionError(f"Action '{_LABELS[name]}' requires two argument objects. Missing {which}.")
        args = [self._resolve(name, key, kind, packet.get(key)) for key, kind in zip(ARG_KEYS, kinds, strict=False)]
        if self.strict:
            for key in ARG_KEYS[len(kinds) :]:
                if not _blank(packet.get(key)):
                    raise ActionError(f"{name} takes {len(kinds)} argument(s); '{key}' is not expected.")
        return self._run(name, args[0] if args else None, args[1] if len(args) > 1 else None)

    def _run(self, name: str, a: Any, b: Any) -> ActionResult:
        """Action `name`'s handler on its arguments (None where it takes fewer). Called
        directly, not as `getattr(self, "_do_...")(...)`: compiled, that made a bound method
        and parsed its arguments, ~600 instructions a step. An RL policy's usual actions (moves
        and turns) are tested first; `name` is an `ACTION_SPECS` key (`_dispatch` checked)."""
        if name == "MOVE_DIRECTION":
            return self._do_move_direction(a)
        if name == "ROTATE_DIRECTION":
            return self._do_rotate_direction(a)
        if name == "MOVE_FORWARD":
            return self._do_move_forward()
        if name == "MOVE_BACKWARD":
            return self._do_move_backward()
        if name == "ROTATE_CW":
            return self._do_rotate_cw()
        if name == "ROTATE_CCW":
            return self._do_rotate_ccw()
        if name == "WAIT":
            return self._do_wait()
        if name == "PICKUP":
            return self._do_pickup(a)
        if name == "DROP":
            return self._do_drop(a)
        if name == "PUT":
            return self._do_put(a, b)
        if name == "OPEN":
            return self._do_open(a)
        if name == "CLOSE":
            return self._do_close(a)
        if name == "ACTIVATE":
            return self._do_activate(a)
        if name == "DEACTIVATE":
            return self._do_deactivate(a)
        if name == "TALK":
            return self._do_talk(a)
        if name == "EAT":
            return self._do_eat(a)
        if name == "READ":
            return self._do_read(a)
        if name == "USE":
            return self._do_use(a, b)
        if name == "TELEPORT_TO_LOCATION":
            return self._do_teleport_to_location(a)
        if name == "TELEPORT_TO_OBJECT":
            return self._do_teleport_to_object(a)
        if name == "DISCOVERY_FEED_GET_UPDATES":
            return self._do_discovery_feed_get_updates()
        if name == "DISCOVERY_FEED_GET_ARTICLES":
            return self._do_discovery_feed_get_articles()
        if name == "DISCOVERY_FEED_GET_POST_BY_ID":
            return self._do_discovery_feed_get_post_by_id(a)
        raise AssertionError(f"No handler for action {name}.")  # a new ACTION_SPECS entry needs one here

    # ---- argument resolution ----------------------------------------------------------
    def _resolve(self, action: str, key: str, kind: str, value: Any) -> Any:
        if value is None or (isinstance(value, str) and not value):  # `_blank`, inline: every object action comes here
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
                what = "no post has an ID that large" if _huge_int(value) else "expected an integer"
                raise ActionError(f"Invalid post ID {brief(value)} in '{key}': {what}.")
            return uid
        if uid is None:
            if _huge_int(value):
                raise ActionError(f"'{key}' must be an object UUID (an integer in 1..65535), not {brief(value)}: "
                                  "no object has a UUID that large.")
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
        if uid == self.agent.uuid:  # listed at the agent's own location, so agents try it
            raise ActionError(f"{key}: UUID {uid} is you; an action takes another object (in your inventory, "
                              "on your tile, or on the tile you are facing).")
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
            raise ActionError(f"Unexpected key(s) {_key_list(packet, _DIALOG_KEYS)} while in a dialog; send only '{DIALOG_KEY}'.")
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

    # ---- waiting (moves, turns and teleports: `MovementActions`) ------------------------
    def _do_wait(self) -> ActionResult:
        return self._done("WAIT", None, None, True, "I waited.")

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
        # `Agent.record` inline (once per step): the same record.
        self.agent.history.append(ActionRecord(action, arg1, arg2, success, message, self.world.step))
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
