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

from discoverylab.rl.scenery import KIND_IDS, SceneryMirror, kind_bytes
from discoverylab.rl.view import (
    BY_UUID,
    NUM_KINDS,
    Slot,
    SlotCandidate,
    SlotData,
    assemble_slots,
    kind_id,
    mentioned,
    text_id,
)
from discoverylab.world.agent import DIRECTIONS, Agent
from discoverylab.world.objects import WorldObject
from discoverylab.world.things import Terrain

DEPTH = 4
SLOT_FEATURES = 17
AGENT_FEATURES = 8
U8 = np.dtype(np.uint8)
_array = np.ndarray  # a writable array over the step's own buffer (cheaper than frombuffer + reshape)
FACING = {"north": 0, "east": 1, "south": 2, "west": 3}


def _fixed_features(o: WorldObject) -> bytes:
    """Slot features that never change for an object (class or constructor attributes):
    container, openable, activatable, edible, readable, can talk, movable."""
    return bytes((o.is_container, o.openable, o.activatable, o.edible, o.readable, o.dialogable or o.is_npc, o.movable))


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
        self.slot_data: list[SlotData] = []  # the last observation's slots, as plain tuples
        self._slots: list[Slot] | None = []
        self._row_bytes = object_slots * SLOT_FEATURES
        self._own: tuple[list[WorldObject], bytes, bool, list[tuple[int, WorldObject]]] | None = None
        self._task = ""
        self._mentions: dict[str, bool] = {}  # object name -> named in `_task`
        self._shapes: list[tuple[int, ...]] = [
            (w, w, DEPTH), (w, w, 4), (object_slots, SLOT_FEATURES), (dialog_options, 3), (AGENT_FEATURES,),
        ]  # fmt: skip
        self._mirror: SceneryMirror | None = None

    @property
    def slots(self) -> list[Slot]:
        """The slots of the last observation built (`slot_data` as `Slot` objects)."""
        if self._slots is None:
            self._slots = [Slot(*data) for data in self.slot_data]
        return self._slots

    def encode(self, agent: Agent, task: str, success: bool, completed: bool) -> dict[str, np.ndarray]:
        r = self.radius
        w = 2 * r + 1
        world = agent.world
        mirror = self._mirror
        if mirror is None or mirror.world is not world or mirror.viewer is not agent:
            if mirror is not None:
                mirror.close()
            mirror = self._mirror = SceneryMirror(world, r, DEPTH, agent)
            self._own = None
        if mirror.changed:
            mirror.refresh()
        ax, ay = agent.x, agent.y  # the window's corner in the padded arrays
        tiles = bytearray(mirror.kinds[ay : ay + w, ax : ax + w].tobytes())  # every tile but the agent's
        state = bytearray(mirror.state[ay : ay + w, ax : ax + w].tobytes())
        mirror.mark_seen(agent, ax, ay, w)  # the own and faced tiles too: all the text observation marks
        seen = agent.seen
        seen.add(agent.uuid)
        if agent.contents:
            inventory = sorted(agent.inventory(), key=BY_UUID)
            inv_ids = {o.uuid for o in inventory}
            seen.update(inv_ids)
        else:
            inventory, inv_ids = [], set()
        # The agent's own tile: the mirror's cell lists the agent itself, the view leaves it out.
        own = self._own
        cell = mirror.visible[ax][ay]
        if own is None or own[0] is not cell:  # a tile's list is replaced whenever it changes
            objs = [o for o in cell if o is not agent]
            own = self._own = (cell, kind_bytes(objs, DEPTH), any(o.is_agent for o in objs),
                               [(o.uuid, o) for o in objs if not isinstance(o, Terrain)])  # fmt: skip
        centre = r * w + r
        tiles[centre * DEPTH : (centre + 1) * DEPTH] = own[1]
        state[centre * 4 + 2] = own[2]
        # Slot candidates: the own tile's (within reach), then those of the other tiles that
        # hold any, of which only the faced tile's are within reach (`accessible_objects`).
        near: list[SlotCandidate] = [(False, 0, uuid, o, False, True, 0, 0) for uuid, o in own[3] if uuid not in inv_ids]
        fdx, fdy = DIRECTIONS[agent.facing]
        fx, fy = ax + fdx, ay + fdy
        if not r and 0 <= fx < world.size and 0 <= fy < world.size:  # the faced tile lies outside a 1x1 window
            seen.update([o.uuid for o in mirror.visible[fx][fy]])
        candidates = mirror.candidates
        for x, y, dist, dx, dy in mirror.candidate_tiles(ax, ay):
            ok = x == fx and y == fy
            near += [(not ok, dist, uuid, o, False, ok, dx, dy) for uuid, o in candidates[x][y]]
        slots = self.slot_data = assemble_slots(inventory, near, self.num_slots)
        self._slots = None
        if task is not self._task:
            self._task, self._mentions = task, {}
        mentions = self._mentions
        fixed = mirror.fixed_features
        kinds = KIND_IDS
        values: list[int] = []
        for o, in_inventory, accessible, dx, dy in slots:
            flags = fixed.get(o.uuid)
            if flags is None:
                flags = fixed[o.uuid] = _fixed_features(o)
            name = o.name
            named = mentions.get(name)
            if named is None:
                named = mentions[name] = mentioned(name, task)
            kind = kinds.get(o.type) or kinds.setdefault(o.type, kind_id(o.type))
            values += (1, kind, in_inventory, accessible, dx + r, dy + r, o.is_open, o.activated)
            values += flags
            values += (named, min(len(o.contents), 255))
        rows = bytearray(values)
        rows += bytes(self._row_bytes - len(rows))
        dialog = bytearray(self.num_dialog * 3)
        partner = agent.dialog_partner
        in_dialog = partner is not None and partner.dialog_tree is not None
        if in_dialog:
            assert partner is not None and partner.dialog_tree is not None
            tree = partner.dialog_tree
            line = tree.node().text.format(**partner.props)
            for i, opt in enumerate(tree.visible_options()[: self.num_dialog]):
                dialog[i * 3 : i * 3 + 3] = bytes((1, text_id(opt.text), mentioned(opt.text, line)))
        facts = bytearray((ax, ay, FACING.get(agent.facing, 0), in_dialog, min(len(inventory), 255),
                           success, min(len(world.teleports), 255), completed))  # fmt: skip
        shapes = self._shapes
        return {
            "tiles": _array(shapes[0], U8, tiles),
            "tile_state": _array(shapes[1], U8, state),
            "slots": _array(shapes[2], U8, rows),
            "dialog": _array(shapes[3], U8, dialog),
            "agent": _array(shapes[4], U8, facts),
        }

    def blank(self) -> dict[str, Any]:
        return {k: np.zeros(s.shape, np.uint8) for k, s in self.space.spaces.items()}  # type: ignore[union-attr]
