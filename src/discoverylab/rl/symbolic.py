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
  edible, readable, can talk, movable, named in the task description, number of visible
  contents (those of an open holder, which the text observation lists; a closed holder, a
  covered soil tile included, reads 0 whatever it hides).
- `dialog` (D, 3): per dialog option: present, a text id (CRC32 of the text, 1..255), named
  in the character's current line.
- `agent` (8,): x, y, facing (0 north .. 3 west), in a dialog, inventory size, last action
  succeeded, number of teleport locations, task completed.

"Named in" is a whole-word match of the object's name or the option's text in text the agent
reads anyway (the task description, the dialog line). Building it marks the same objects as
seen as the text observation does, so actions parse identically in every observation mode.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, Final

import numpy as np
from gymnasium import spaces
from mypy_extensions import mypyc_attr

from discoverylab.rl.kept_views import own_part, patch_place
from discoverylab.rl.notes import Notes
from discoverylab.rl.scenery import SceneryMirror
from discoverylab.rl.view import (
    MAX_COUNT,
    NUM_KINDS,
    Slot,
    SlotData,
    kind_id,
    mentioned,
    text_id,
)
from discoverylab.world.action_input import whole_option
from discoverylab.world.agent import DIRECTIONS, Agent
from discoverylab.world.objects import WorldObject
from discoverylab.world.unpickle import FastState
from discoverylab.world.uuids import UUID_LIMIT
from discoverylab.world.world import WORLD_SIZE

DEPTH: Final = 4
SLOT_FEATURES: Final = 17
AGENT_FEATURES: Final = 8
U8 = np.dtype(np.uint8)
_NO_SLOTS: Final[list[SlotData]] = []  # a place's faced tile without slots (never changed)
_NO_BYTES: Final = bytearray()  # `encode`'s buffer is `_NO_BYTES.join(parts)`: a new bytearray
_array = np.ndarray  # a writable array over the step's own buffer (cheaper than frombuffer + reshape)
FACING: Final = {"north": 0, "east": 1, "south": 2, "west": 3}
_FIRST: Final = itemgetter(0)  # a candidate's UUID
_UUID_BITS: Final = UUID_LIMIT.bit_length()  # UUIDs fit in this many bits (`_place`'s sort keys)
_COUNTS: Final = [bytes((n,)) for n in range(256)]  # a slot row's last byte (visible contents), made once
_Place = tuple[bytes, bytes, list[SlotData], dict[tuple[int, int], list[SlotData]], list[SlotData], list[int], int]
_View = tuple[bytes, bytes, bytes, list[SlotData], int, int]  # `_build`: tiles, states, rows, slots, inventory size, reach


_MIDDLES: dict[int, list[bytes | None]] = {}  # `_middles` per window width


def _middles(w: int) -> list[bytes | None]:
    """A slot row's bytes between its static parts, (in inventory, within reach, dx + r, dy + r,
    open, activated), at one index per combination (`_rows`), each made when first needed;
    one list per window width `w`, shared by every encoder."""
    middles = _MIDDLES.get(w)
    if middles is None:
        middles = _MIDDLES[w] = [None] * (16 * w * w)
    return middles


def _record_of(layout: list[tuple[str, tuple[int, ...], int]]) -> np.dtype[np.void] | None:
    """A structured dtype laying `encode`'s keys out as its buffer does (a uint8 subarray field
    per key at its offset): one array over the buffer and a field view per key cost ~0.7 µs
    a step, one `np.ndarray` per key ~1.9 µs. The field views are plain C-contiguous, writable
    uint8 arrays of the key's shape over the same bytes. None (one array per key) when a key's
    shape is empty or has no elements: such a field would read as a scalar or not at all."""
    if any(not shape or 0 in shape for _, shape, _ in layout):
        return None
    return np.dtype({"names": [name for name, _, _ in layout], "formats": [(U8, shape) for _, shape, _ in layout],
                     "offsets": [offset for _, _, offset in layout]})  # fmt: skip


def _reads_own_tile(agent: Agent) -> bool:
    """Whether a view must read the agent's own tile and inventory from the world: the mirror
    keeps that tile as if the agent stood elsewhere, which differs from the view only when
    the agent holds something, obscures what is below or blocks its tile."""
    return bool(agent.contents) or agent.obscures_below or not agent.is_passable_now()


def _fixed_features(o: WorldObject) -> bytes:
    """Slot features that never change for an object (class or constructor attributes):
    container, openable, activatable, edible, readable, can talk, movable."""
    return bytes((o.is_container, o.openable, o.activatable, o.edible, o.readable, o.dialogable or o.is_npc, o.movable))


def _static_features(o: WorldObject, task: str) -> tuple[str, bytes, bytes]:
    """An object's slot features that change only with its name: (the name they were built
    for, (present, kind id), the fixed features then "named in the task")."""
    return o.name, bytes((1, kind_id(o.type))), _fixed_features(o) + bytes((mentioned(o.name, task),))


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
class SymbolicEncoder(FastState):
    """Builds the symbolic observation of one agent; `slots` holds the last slots built."""

    # Typed `Any`, checked by `whole_option`: compiled, an `int` parameter refuses a numpy integer
    # (and a float) with mypyc's bare TypeError before the check can name the option.
    def __init__(self, radius: Any = 3, object_slots: Any = 12, dialog_options: Any = 10, notes: Any = False) -> None:
        # (`int`: compiled, an `Any` attribute made every sum that reads it generic, `_rows`' too)
        self.radius: int = whole_option("radius", radius, 0, WORLD_SIZE)  # negative: numpy's "negative dimensions"
        self.num_slots: int = whole_option("object_slots", object_slots, 0, MAX_COUNT)
        self.num_dialog: int = whole_option("dialog_options", dialog_options, 0, MAX_COUNT)
        radius, object_slots, dialog_options = self.radius, self.num_slots, self.num_dialog
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
        self.notes = Notes(radius, object_slots, dialog_options) if notes else None
        if self.notes is not None:  # what a reader remembers (`rl/notes.py`), after the view's keys
            self.space.spaces.update(self.notes.spaces)
        # (key, shape, offset) in `encode`'s buffer: the view's keys in this order, then the notes'.
        self._layout: list[tuple[str, tuple[int, ...], int]] = []
        self._note_names = list(self.notes.spaces) if self.notes is not None else []
        offset = 0
        for name in ["tiles", "tile_state", "slots", "dialog", "agent", *self._note_names]:
            shape = self.space.spaces[name].shape
            assert shape is not None
            self._layout.append((name, shape, offset))
            offset += int(np.prod(shape))
        self._record = _record_of(self._layout)
        self._names = [name for name, _, _ in self._layout]
        self.slot_data: list[SlotData] = []  # the last observation's slots, as plain tuples
        self.slot_reach = 0  # how many of them (the first ones) lie within reach (`_build`)
        self._slots: list[Slot] | None = []
        self._zero_rows = bytes(object_slots * SLOT_FEATURES)
        self._middles = _middles(w)
        self._built: dict[tuple[int, int, str], _View] = {}  # `_build` per place and facing
        self._version = -1  # the mirror version `_built` was filled at
        self._task = ""  # the task `_built` and `mirror.statics` were filled for
        self._live = False  # whether a view in `_built` read the agent's own tile live (`_build`)
        self._places: dict[tuple[int, int, bool], _Place] = {}  # `_place` per place, kept and emptied with `_built`
        self._no_dialog = bytes(dialog_options * 3)
        self._mirror: SceneryMirror | None = None
        # Set by `BatchedVectorEnv` in its workers (`write_into`): the observation is written
        # into these shared rows (flat byte views per key) and `out_arrays` is returned.
        self.out: dict[str, memoryview] | None = None
        self.out_arrays: dict[str, np.ndarray] = {}

    @property
    def slots(self) -> list[Slot]:
        """The slots of the last observation built (`slot_data` as `Slot` objects)."""
        if self._slots is None:
            self._slots = [Slot(*data) for data in self.slot_data]
        return self._slots

    def encode(self, agent: Agent, task: str, success: bool, completed: bool, message: str = "") -> dict[str, np.ndarray]:
        world = agent.world
        mirror = self._mirror
        if mirror is None or mirror.world is not world or mirror.viewer is not agent:
            if mirror is not None:
                mirror.close()
            mirror = self._mirror = SceneryMirror(world, self.radius, DEPTH, agent)
            self.clear_views()
        reads_own = _reads_own_tile(agent)  # (nothing below changes the agent: asked once)
        if mirror.changed or mirror.waiting:
            # A kept view that read the agent's own tile live (`_build`) changes with tiles the
            # mirror holds no different: then every reported tile counts (`refresh`'s strict).
            mirror.refresh(agent.x, agent.y, self._live or reads_own)
        # Tiles, slots and their rows follow from the agent's place and facing, the task and
        # the world's tiles, which report every change of what they show (`mirror.version`):
        # kept per place and facing until one of the others changes.
        if mirror.version != self._version or task != self._task:
            touched = mirror.take_touched()
            if task == self._task and self.radius:
                self._forget(touched, agent, mirror, reads_own)
            else:
                self.clear_views()
            self._version = mirror.version
            if task != self._task:
                self._task = task
                mirror.statics.clear()
        key = (agent.x, agent.y, agent.facing)
        built = self._built.get(key)
        if built is None:
            if len(self._built) >= 1024:  # bound the memory of a long walk through a still world
                self.clear_views()
            built = self._built[key] = self._build(agent, mirror, task, reads_own)
        tiles, state, rows, data, inventory_size, reach = built
        if data is not self.slot_data:
            self.slot_data, self._slots, self.slot_reach = data, None, reach
        partner = agent.dialog_partner
        in_dialog = partner is not None and partner.dialog_tree is not None
        options: list[str] = []
        dialog: bytes | bytearray = self._no_dialog
        if in_dialog:
            assert partner is not None and partner.dialog_tree is not None
            dialog = shown = bytearray(self.num_dialog * 3)
            tree = partner.dialog_tree
            line = tree.node().text.format(**partner.props)
            for i, opt in enumerate(tree.visible_options()[: self.num_dialog]):
                shown[i * 3 : i * 3 + 3] = bytes((1, text_id(opt.text), mentioned(opt.text, line)))
                options.append(opt.text)
        facts = bytes((agent.x, agent.y, FACING.get(agent.facing, 0), in_dialog, inventory_size,
                       success, min(len(world.teleports), 255), completed))  # fmt: skip
        noted: dict[str, bytes] = {}
        if self.notes is not None:
            self.notes.update(agent, task, message)
            noted = self.notes.encode(agent, task, data, options)
        out = self.out
        if out is not None:  # a batched vector env's rows: write there, no arrays of our own
            out["tiles"][:] = tiles
            out["tile_state"][:] = state
            out["slots"][:] = rows
            out["dialog"][:] = dialog
            out["agent"][:] = facts
            for name, value in noted.items():
                out[name][:] = value
            return self.out_arrays
        # One new buffer per step holds every key's bytes (one copy instead of one per key); each
        # array views its own part of it, writable, as if it owned it.
        parts = [tiles, state, rows, dialog, facts]
        for name in self._note_names:
            parts.append(noted[name])
        buffer = _NO_BYTES.join(parts)  # (one allocation: growing a bytearray part by part reallocated)
        record = self._record
        if record is not None:  # one structured array, each key a field view (`_record_of`)
            whole = _array((), record, buffer)
            return {name: whole[name] for name in self._names}
        obs = {}
        for name, shape, offset in self._layout:
            obs[name] = _array(shape, U8, buffer, offset)
        return obs

    def release(self) -> None:
        """Drop everything that holds the current world's objects (the mirror, kept views, places,
        slot rows and slots) before that world is disposed (`DiscoveryWorldEnv.reset`): what
        nothing else holds is recycled into the next world (`world/spares.py`; the mirror held
        every wall and floor of a villa the agent starts in, and ~30 grass tiles). The next
        `encode` starts from a new mirror, as it does for a new world anyway."""
        if self._mirror is not None:
            self._mirror.close()
            self._mirror = None
        self.clear_views()
        self.slot_data, self._slots, self.slot_reach = [], [], 0

    def clear_views(self) -> None:
        """Forget every kept view and place (the next observation is built from the mirror)."""
        self._built.clear()
        self._places.clear()
        self._live = False

    def _forget(self, touched: list[tuple[int, int]], agent: Agent, mirror: SceneryMirror, live: bool) -> None:
        """Forget the kept views after tiles changed (`touched`, the mirror's report), but patch
        the agent's own place rather than rebuild it (a character stepping in view changes two
        of its tiles: `patch_place`). Other kept views are dropped: where characters walk, a
        view whose window they miss is seldom revisited before they change it too (keeping
        those measured no fewer builds)."""
        ax, ay = agent.x, agent.y
        here = self._places.get((ax, ay, live))
        self.clear_views()
        if here is not None:
            self._places[(ax, ay, live)] = patch_place(here, agent, mirror, live, touched, self.num_slots)

    def _build(self, agent: Agent, mirror: SceneryMirror, task: str, live: bool) -> _View:
        """The window's tiles and states, the slots' rows, the slots, the inventory size and how
        many slots lie within reach (the inventory's, the own tile's and the faced tile's come
        first: the action mask follows from that count, `actions.DiscreteActions._refresh`);
        marks what the agent sees. `live`: `_reads_own_tile(agent)`."""
        r = self.radius
        world = agent.world
        ax, ay = agent.x, agent.y  # the window's corner in the padded arrays
        mirror.mark_seen(agent, ax, ay, 2 * r + 1)  # the own and faced tiles too
        seen = agent.seen
        seen.add(agent.uuid)
        fdx, fdy = DIRECTIONS[agent.facing]
        fx, fy = ax + fdx, ay + fdy
        if not r and 0 <= fx < world.size and 0 <= fy < world.size:  # the faced tile lies outside a 1x1 window
            seen.update([o.uuid for o in mirror.visible[fx][fy]])
        # The mirror keeps the agent's tile as if the agent were elsewhere: that differs from
        # the view (which lists what the agent holds) only when `live`.
        if live:
            self._live = True  # this view follows more than the mirror (`encode`)
        # All but the faced tile's reach is the same for the four facings of a place.
        place = self._places.get((ax, ay, live))
        if place is None:
            place = self._places[(ax, ay, live)] = self._place(agent, mirror, live)
        tiles, state, first, neighbours, far, own, inventory_size = place
        if own:
            seen.update(own)
        faced = neighbours.get((fdx, fdy), _NO_SLOTS)
        slots = first + faced
        reach = len(slots)
        need = self.num_slots - reach
        if need > 0:
            # The first `need` far slots but the faced tile's (in `neighbours`, as many there as
            # in `far`): they lie among the first `need + len(faced)`. (`Any`: compiled code
            # moves them as they are instead of unboxing each and boxing it anew.)
            ahead: list[Any] = far[: need + len(faced)]
            slots += [s for s in ahead if s[3] != fdx or s[4] != fdy][:need]
        else:
            del slots[self.num_slots :]
            reach = self.num_slots
        return tiles, state, self._rows(slots, mirror, task), slots, inventory_size, reach

    def _place(self, agent: Agent, mirror: SceneryMirror, live: bool) -> _Place:
        """What `_build` needs of the agent's place whatever its facing: the window's tiles and
        states; the inventory's slots (by UUID) and the own tile's (by UUID, within reach); per
        neighbour holding candidates, its slots as the faced tile's (by UUID, within reach); all
        other tiles' slots, out of reach, by distance then UUID (in that order, the faced
        neighbour's left out of the last, they are `assemble_slots`'s order); the UUIDs on the
        own tile to mark seen; the inventory size. `live`: the own tile and the inventory are
        read from the world (the mirror keeps that tile without the agent)."""
        w = 2 * self.radius + 1
        ax, ay = agent.x, agent.y
        tiles = mirror.kinds[ay : ay + w, ax : ax + w].tobytes()
        state = mirror.state[ay : ay + w, ax : ax + w].tobytes()
        tiles, state, first, seen_own, inventory_size = own_part(agent, mirror, live, tiles, state, self.num_slots)
        candidates = mirror.candidates
        neighbours: dict[tuple[int, int], list[SlotData]] = {}
        # Far slots by distance, then UUID: keys (distance << UUID bits | UUID) << index bits | index
        # in `slots`, sorted as small plain ints (none equal), slots read back by index (sorting
        # (key, slot) pairs compared tuples: ~2x the instructions, compiled).
        slots: list[Any] = []  # (`Any`: compiled, `rest` below boxes no slot anew)
        far: list[int] = []
        for x, y, dist, dx, dy in mirror.candidate_tiles(ax, ay):
            cands = candidates[x][y]
            if len(cands) == 1:  # most tiles: no comprehension, no sort
                uuid, o = cands[0]
                if dist == 1:
                    neighbours[(dx, dy)] = [(o, False, True, dx, dy)]
                far.append(dist << _UUID_BITS | uuid)
                slots.append((o, False, False, dx, dy))
                continue
            if dist == 1:
                neighbours[(dx, dy)] = [(o, False, True, dx, dy) for _, o in sorted(cands, key=_FIRST)]
            for uuid, o in cands:
                far.append(dist << _UUID_BITS | uuid)
                slots.append((o, False, False, dx, dy))
        bits = len(slots).bit_length()
        keys = [key << bits | i for i, key in enumerate(far)]
        keys.sort()
        mask = (1 << bits) - 1
        rest = [slots[key & mask] for key in keys]
        return tiles, state, first, neighbours, rest, seen_own, inventory_size

    def _rows(self, slots: list[SlotData], mirror: SceneryMirror, task: str) -> bytes:
        """The `slots` array's bytes: per slot its static features (kept per object while its
        name stays, `mirror.statics`) around what can change (reach, place, lid, activation:
        one kept bytes per combination, `_middles`; visible contents), zero rows after the last
        slot. Nothing is kept per slot: a row is four kept parts, joined once for all slots
        (a row kept per slot tuple cost more to look up, compiled, than this costs to build)."""
        r = self.radius
        w = 2 * r + 1
        statics = mirror.statics
        middles = self._middles
        parts: list[bytes] = []
        for o, in_inventory, accessible, dx, dy in slots:
            static = statics.get(o)  # (by the object: an int key is boxed anew per lookup, compiled)
            if static is None or static[0] is not o.name:
                static = statics[o] = _static_features(o, task)
            is_open = o.is_open
            activated = o.activated
            # (ints, not bools: compiled, arithmetic on a bool runs as generic object arithmetic)
            held = 2 if in_inventory else 0
            lid = 2 if is_open else 0
            at = (((held + (1 if accessible else 0)) * w + dx + r) * w + dy + r) * 4 + lid + (1 if activated else 0)
            middle = middles[at]
            if middle is None:
                middle = middles[at] = bytes((in_inventory, accessible, dx + r, dy + r, is_open, activated))
            count = len(o.contents) if is_open else 0  # as the text lists them
            parts.append(static[1])
            parts.append(middle)
            parts.append(static[2])
            parts.append(_COUNTS[count if count < 255 else 255])
        parts.append(self._zero_rows[len(slots) * SLOT_FEATURES :])
        return b"".join(parts)

    def write_into(self, rows: dict[str, np.ndarray]) -> None:
        """Write every later observation into `rows` (one writable C-contiguous uint8 array per
        key, shaped as the space) and return those arrays themselves: the caller owns them."""
        self.out = {key: memoryview(rows[key].data).cast("B") for key in self.space.spaces}
        self.out_arrays = {key: rows[key] for key in self.space.spaces}

    def blank(self) -> dict[str, Any]:
        return {k: np.zeros(s.shape, np.uint8) for k, s in self.space.spaces.items()}  # type: ignore[union-attr]
