"""The symbolic observation: a fixed-shape tensor view of what the agent perceives, for RL.

A `gymnasium.spaces.Dict` of uint8 `Box`es (W = 2 * radius + 1, K object slots, D dialog
options):

- `tiles` (W, W, 4): kind ids of up to four visible objects per tile of the egocentric
  window (top first; 0 = nothing or outside the world), north up, the agent at the centre.
- `tile_state` (W, W, 4): inside the world, passable now, another character on it, an open
  door on it.
- `slots` (K, 17): per object slot (the same slots the discrete actions name, see
  `discoverylab.rl.view`): present, kind id, in inventory, within reach, dx + radius,
  dy + radius (0, 0 for the inventory), open, activated, container, openable, activatable,
  edible, readable, can talk, movable, named in the task description, number of contents.
- `dialog` (D, 3): per dialog option: present, a text id (CRC32 of the text, 1..255), named
  in the character's current line.
- `agent` (8,): x, y, facing (0 north .. 3 west), in a dialog, inventory size, last action
  succeeded, number of teleport locations, task completed.

"Named in" is a whole-word match of the object's name or the option's text in text the agent
reads anyway (the task description, the dialog line). Building it marks the same objects as
seen as the text observation does, so actions parse identically in every observation mode.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from discoverylab.rl.scenery import SceneryMirror
from discoverylab.rl.view import (
    BY_UUID,
    NUM_KINDS,
    Slot,
    SlotCandidate,
    assemble_slots,
    kind_id,
    mentioned,
    text_id,
)
from discoverylab.world.actions import accessible_objects
from discoverylab.world.agent import Agent
from discoverylab.world.things import Terrain

DEPTH = 4
SLOT_FEATURES = 17
AGENT_FEATURES = 8
FACING = {"north": 0, "east": 1, "south": 2, "west": 3}
_KINDS: dict[str, int] = {}  # type -> kind id (a plain dict: cheaper than the lru_cache per object)


class SymbolicEncoder:
    """Builds the symbolic observation of one agent; `slots` holds the last slots built."""

    def __init__(self, radius: int = 3, object_slots: int = 12, dialog_options: int = 10) -> None:
        self.radius = radius
        self.num_slots = object_slots
        self.num_dialog = dialog_options
        w = 2 * radius + 1
        self.space = spaces.Dict(
            {
                "tiles": spaces.Box(0, NUM_KINDS - 1, (w, w, DEPTH), np.uint8),
                "tile_state": spaces.Box(0, 1, (w, w, 4), np.uint8),
                "slots": spaces.Box(0, 255, (object_slots, SLOT_FEATURES), np.uint8),
                "dialog": spaces.Box(0, 255, (dialog_options, 3), np.uint8),
                "agent": spaces.Box(0, 255, (AGENT_FEATURES,), np.uint8),
            }
        )
        self.slots: list[Slot] = []
        self._mirror: SceneryMirror | None = None

    def encode(self, agent: Agent, task: str, success: bool, completed: bool) -> dict[str, np.ndarray]:
        r = self.radius
        w = 2 * r + 1
        world = agent.world
        mirror = self._mirror
        if mirror is None or mirror.world is not world:
            if mirror is not None:
                mirror.close()
            mirror = self._mirror = SceneryMirror(world, r, DEPTH)
        mirror.refresh()
        ax, ay = agent.x, agent.y  # the window's corner in the padded arrays
        tiles = bytearray(mirror.kinds[ay : ay + w, ax : ax + w].tobytes())  # scenery cells, then the rest
        state = bytearray(mirror.state[ay : ay + w, ax : ax + w].tobytes())
        mirror.mark_seen(agent, ax, ay, w)
        seen = agent.seen
        seen_add = seen.add
        seen_add(agent.uuid)
        inventory = sorted(agent.inventory(), key=BY_UUID) if agent.contents else []
        inv_ids = {o.uuid for o in inventory}
        reach = accessible_objects(agent)
        seen.update(reach)
        blocker_at, objects_at = world.blocker_at, world.objects_at
        kinds = _KINDS
        # Dynamic tiles only (scenery never fills a slot); slot candidates are gathered on the way,
        # the same candidates `rl.view.object_slots` gathers.
        near: list[SlotCandidate] = []
        for cell in mirror.dynamic[ay : ay + w, ax : ax + w].ravel().nonzero()[0].tolist():
            dy, dx = divmod(cell, w)
            dx -= r
            dy -= r
            x, y = ax + dx, ay + dy
            dist = abs(dx) + abs(dy)
            character = door = 0
            i = cell * DEPTH
            end = i + DEPTH
            for obj in objects_at(x, y):
                if obj is agent:
                    continue
                uuid = obj.uuid
                seen_add(uuid)
                if i < end:
                    kind = kinds.get(obj.type)
                    tiles[i] = kind if kind is not None else kinds.setdefault(obj.type, kind_id(obj.type))
                    i += 1
                if obj.is_agent:
                    character = 1
                if obj.is_passage and obj.is_open:
                    door = 1
                if uuid not in inv_ids and not isinstance(obj, Terrain):
                    ok = uuid in reach
                    near.append((not ok, dist, uuid, obj, ok, dx, dy))
            state[cell * 4 : cell * 4 + 4] = bytes((1, blocker_at(x, y) is None, character, door))
        self.slots = assemble_slots(inventory, near, self.num_slots)
        rows = bytearray(self.num_slots * SLOT_FEATURES)
        for i, s in enumerate(self.slots):
            o = s.obj
            rows[i * SLOT_FEATURES : (i + 1) * SLOT_FEATURES] = bytes((
                1, kind_id(o.type), s.in_inventory, s.accessible, s.dx + r, s.dy + r, o.is_open, o.activated,
                o.is_container, o.openable, o.activatable, o.edible, o.readable, o.dialogable or o.is_npc,
                o.movable, mentioned(o.name, task), min(len(o.contents), 255),
            ))  # fmt: skip
        dialog = bytearray(self.num_dialog * 3)
        partner = agent.dialog_partner
        in_dialog = partner is not None and partner.dialog_tree is not None
        if in_dialog:
            assert partner is not None and partner.dialog_tree is not None
            tree = partner.dialog_tree
            line = tree.node().text.format(**partner.props)
            for i, opt in enumerate(tree.visible_options()[: self.num_dialog]):
                dialog[i * 3 : i * 3 + 3] = bytes((1, text_id(opt.text), mentioned(opt.text, line)))
        facts = bytearray((agent.x, agent.y, FACING.get(agent.facing, 0), in_dialog, min(len(agent.inventory()), 255),
                           success, min(len(world.teleports), 255), completed))  # fmt: skip
        return {
            "tiles": np.frombuffer(tiles, np.uint8).reshape(w, w, DEPTH),
            "tile_state": np.frombuffer(state, np.uint8).reshape(w, w, 4),
            "slots": np.frombuffer(rows, np.uint8).reshape(self.num_slots, SLOT_FEATURES),
            "dialog": np.frombuffer(dialog, np.uint8).reshape(self.num_dialog, 3),
            "agent": np.frombuffer(facts, np.uint8),
        }

    def blank(self) -> dict[str, Any]:
        return {k: np.zeros(s.shape, np.uint8) for k, s in self.space.spaces.items()}  # type: ignore[union-attr]
