"""Tile mirror: the symbolic view of every tile of one world, kept in numpy arrays and plain
lists so the encoder copies a window instead of walking 49 tiles in Python.

A tile's symbolic cell (the kind ids of its top visible objects, whether it is passable, holds
a character or an open door) and its visible objects change only when objects are placed on
it, taken off it, put into or out of something on it, or opened or closed. The world reports
each such tile (`World.watch_tiles`; the engine touches a tile at every `is_open` change as
well as at every move), so the mirror recomputes only those. Tiles are kept as if the
observing agent were elsewhere, so its own steps (most steps of an episode) change nothing
here; the encoder reads the tile the agent stands on itself. Arrays are padded by the view
radius, so a window never leaves them. Tiles are computed lazily, when a view first reaches
them: a reset builds none, and a short episode computes only the part of the map it sees.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Final

import numpy as np
from mypy_extensions import mypyc_attr

from discoverylab.rl.cells import PASSABLE_NOW as _PASSABLE_NOW
from discoverylab.rl.cells import Candidate, entering_edges, tile_cell, window_offsets
from discoverylab.rl.cells import candidate_look as _look
from discoverylab.rl.cells import is_plain as _plain
from discoverylab.rl.cells import stack_key as _stack_key
from discoverylab.rl.window_reads import WindowReads
from discoverylab.world.objects import WorldObject
from discoverylab.world.things import Terrain
from discoverylab.world.unpickle import instance_state, restore
from discoverylab.world.world import World

_UUID: Final = attrgetter("uuid")
_NOTHING_SEEN: Final[frozenset[int]] = frozenset()  # `_fill_first` without a marker
# A tile holding one plain object shows the same cell as any other holding one of its class,
# type and passability (`SceneryMirror._cell`): the cells, keyed so, for every mirror.
_PLAIN_CELLS: dict[tuple[type, str, bool, int], tuple[bytes, bytes, bool]] = {}
_FEW: Final = 8  # `_fill_first` writes up to this many cells slice by slice, more with one numpy assignment
_VIEWS = ("_kinds_view", "_state_view", "_pending_view", "_unseen_view", "_marked_view", "_flag_view")  # `_views`


_STACK_CELLS: dict[tuple[object, ...], tuple[bytes, bytes, bool, int, tuple[int, ...]]] = {}
"""`_full_cell` of a tile of several plain objects (`_stack_key`), with how many of its stack
it shows and the indexes of its slot candidates among them."""


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
class SceneryMirror(WindowReads):
    """Kind ids and tile states of every tile of one world, its visible objects (`visible`,
    `candidates`, indexed [x][y] in world coordinates) and which tiles hold slot candidates.

    Every tile is kept as if `viewer` (the observing agent) stood elsewhere: its own moves
    change no tile (the world does not even report them), and the encoder reads the tile it
    stands on itself. `version` counts the refreshes that changed what tiles show."""

    _touched: list[tuple[int, int]] | None = None  # the tiles counted as changes since `take_touched` (`_recompute`)
    _cell_items: tuple[np.ndarray, np.ndarray] | None = None  # `_cells_views`
    _pending_hint: int = 0  # flat index of a tile found pending last (`_any_pending`)

    def __init__(self, world: World, radius: int, depth: int, viewer: WorldObject | None = None) -> None:
        self.world = world
        self.viewer = viewer
        self.radius = radius
        self.depth = depth
        size = world.size
        side = size + 2 * radius
        self.kinds = np.zeros((side, side, depth), np.uint8)
        self.state = np.zeros((side, side, 4), np.uint8)
        # Per padded tile, the bytes last written to `kinds` and `state` (`_tile` compares a new
        # cell with them, not with slices read back: ~900 instructions each compiled).
        self._kinds_of: list[bytes] = [b""] * (side * side)
        self._state_of: list[bytes] = [b""] * (side * side)
        # The per-tile flags over bytearrays of their own (`_backed`), which the mirror writes.
        self.has_candidates, self._flag_view = _backed((side, side), np.bool_)  # padded, for window slices
        # Lists of lists, [x][y]: each column a copy of one row (`list.copy` per column is cheaper
        # than a comprehension); their entries are replaced, never changed in place.
        self.flags: list[list[bool]] = list(map(list.copy, [[False] * size] * size))  # `has_candidates`, cheap to read
        self.marked, self._marked_view = _backed((side, side), np.bool_)  # visible UUIDs already added to `marker.seen`
        nothing: list[list[WorldObject]] = [[]] * size
        no_candidates: list[tuple[Candidate, ...]] = [()] * size
        self.visible: list[list[list[WorldObject]]] = list(map(list.copy, [nothing] * size))
        self.candidates: list[list[tuple[Candidate, ...]]] = list(map(list.copy, [no_candidates] * size))
        self.marker: object = None
        self.statics: dict[WorldObject, tuple[str, bytes, bytes]] = {}  # per object, the encoder's slot features that follow the name
        self.marked_windows: set[tuple[int, int]] = set()  # corners whose whole window is marked
        self._candidate_tiles: dict[tuple[int, int], list[tuple[int, int, int, int, int]]] = {}
        self._offsets = window_offsets(radius)  # (dx, dy, distance) per window cell (`candidate_tiles`)
        # Per tile with candidates, what slot rows read of them (`_look`; None: unknown).
        self._looks: dict[tuple[int, int], tuple[tuple[str, bool, bool, int], ...] | None] = {}
        self._side = side
        self.version = 0
        self.pending, self._pending_view = _backed((side, side), np.bool_)  # reported tiles not recomputed yet (`refresh`)
        self.waiting = False  # any pending?
        self.changed = world.watch_tiles(mover=viewer)
        # No tile is computed up front: all wait in `pending` until a view reaches them (an
        # episode of a hundred steps sees a fraction of the map; building all 1,024 tiles
        # cost ~2 ms per reset). Plain tiles share their cell per class, type and passability.
        self._checked: tuple[int, int] | None = None  # where `refresh` last found nothing near to do
        self.pending[radius : radius + size, radius : radius + size] = True
        self.unseen, self._unseen_view = _backed((side, side), np.bool_, self._pending_view)  # tiles never computed yet (`refresh`)
        self.waiting = True
        self._last_marked: tuple[int, int] | None = None  # the corner `mark_seen` last marked
        self._marks = entering_edges(radius)  # one step's new window tiles (`mark_seen`)
        self._edges = self._marks if radius else {}  # and within reach (`refresh`: reach 1 > radius 0 reads all)
        self._views()

    def _cell(self, x: int, y: int) -> tuple[bytes, bytes, bool]:
        """Kind ids (padded to `depth`), tile state and whether it holds slot candidates; keeps
        the tile's visible objects and candidates. A tile holding one plain object (grass, a
        floor: most tiles) reuses the cell of its class, type and passability; a tile of several
        plain objects (a wall on its floor, a tree on grass) that of the same stack (`_stack_key`)."""
        world, viewer = self.world, self.viewer
        stack = world.stacks[x][y]
        if len(stack) != 1:
            key = _stack_key(stack, viewer, self.depth)
            if key is None:
                return self._full_cell(x, y)
            found = _STACK_CELLS.get(key)
            if found is None:
                kinds, state, flag = self._full_cell(x, y)
                shown = self.visible[x][y]
                picks = tuple([i for i, o in enumerate(shown) if not isinstance(o, Terrain)])
                _STACK_CELLS[key] = (kinds, state, flag, len(shown), picks)
                return kinds, state, flag
            kinds, state, flag, count, picks = found
            shown = self.visible[x][y] = stack[:count]
            if len(picks) == 1:  # a character on its floor: no comprehension
                o = shown[picks[0]]
                self.candidates[x][y] = ((o.uuid, o),)
            else:
                self.candidates[x][y] = tuple([(shown[i].uuid, shown[i]) for i in picks])
            return kinds, state, flag
        obj = stack[0]
        if not obj.contents and obj is not viewer and _plain(obj):
            plain = (type(obj), obj.type, obj.passable, self.depth)
            cell = _PLAIN_CELLS.get(plain)
            if cell is not None:
                self.visible[x][y] = [obj]
                self.candidates[x][y] = ((obj.uuid, obj),) if cell[2] else ()
                return cell
            cell = _PLAIN_CELLS[plain] = self._full_cell(x, y)
            return cell
        return self._full_cell(x, y)

    def _full_cell(self, x: int, y: int) -> tuple[bytes, bytes, bool]:
        """`_cell` from the tile's objects themselves."""
        world = self.world
        viewer = self.viewer
        objs = world.objects_at(x, y, skip=viewer)  # a fresh list, never changed afterwards
        self.visible[x][y] = objs
        cands = tuple([(o.uuid, o) for o in objs if o is not viewer and not isinstance(o, Terrain)])
        self.candidates[x][y] = cands
        kinds, state = tile_cell(objs, world.blocker_at(x, y, skip=viewer) is None, self.depth)
        return kinds, state, bool(cands)

    def refresh(self, ax: int, ay: int, strict: bool = True) -> None:
        """Bring the tiles around (ax, ay) up to date: those the world reported changed and
        that lie within the view radius (at least 1, for the faced tile). The others wait in
        `pending` until a view reaches them: characters walking far away cost nothing here.

        `strict`: every recomputed tile counts as a change (`version`). Otherwise only a tile
        that shows something else than before does (`_tile`): a world whose ticks report
        tiles that did not change (a reactor redescribing itself each tick) keeps the
        encoder's views. The encoder asks for `strict` whenever a view it keeps reads what
        the mirror does not hold (the agent's own tile and inventory)."""
        r, reach, side = self.radius, max(self.radius, 1), self._side
        last = self._checked  # nothing was pending within reach of it (None: unknown)
        same = last is not None and last[0] == ax and last[1] == ay  # (compiled: no tuple built and compared)
        # One step from `last`: only the entering row or column, and tiles reported now, can
        # be pending within reach (`_refresh_edge`).
        edge = None if last is None or same else self._edges.get((ax - last[0], ay - last[1]))
        reported: list[tuple[int, int]] = []
        changed: set[tuple[int, int]] = self.changed  # (typed a plain set: compiled, `clear` without a method call)
        if changed:
            # Nothing was pending near (ax, ay) before these reports (`_checked`): then the
            # reported tiles within reach are all there is to do here, without scanning the
            # window (a character stepping in view while the agent turns or waits).
            direct: list[tuple[int, int, bool]] | None = [] if same else None
            pending, unseen = self._pending_view, self._unseen_view  # (flat: no numpy scalar per report)
            for x, y in changed:
                at = (y + r) * side + x + r
                if -reach <= x - ax <= reach and -reach <= y - ay <= reach:
                    if direct is not None:
                        direct.append((x, y, bool(unseen[at])))
                        unseen[at] = 0
                        continue
                    if edge is not None:
                        reported.append((x, y))
                pending[at] = 1
                self.waiting = True
            changed.clear()
            if direct is None:
                self._checked = None
            elif direct:
                self._recompute(direct, strict)
        if self.waiting and not same:  # (`_checked` is (ax, ay) only if it was so before)
            if edge is not None:
                found = self._refresh_edge(ax, ay, edge, reported)
                if found:
                    self._recompute(found, strict)
                    self.waiting = self._any_pending()
                self._checked = (ax, ay)
                return
            tiles = self._pending_near(ax, ay, reach)
            if tiles:
                self._recompute(tiles, strict)
                self.waiting = self._any_pending()
            self._checked = (ax, ay)  # nothing pending near here until a change or a move

    def _any_pending(self) -> bool:
        """Whether any tile is pending (`waiting`): the one found last mostly still is (a view
        takes only tiles near the agent), so one byte read spares a copy and search of all."""
        view = self._pending_view
        if view[self._pending_hint]:
            return True
        found = view.find(1)
        if found < 0:
            return False
        self._pending_hint = found
        return True

    def _recompute(self, tiles: list[tuple[int, int, bool]], strict: bool) -> None:
        """Recompute `tiles` ((x, y, never computed before)); count a change (`version`) if one
        computed before shows something new (any, when `strict`). A tile computed for the first
        time lies in no window built before."""
        for tile in tiles:  # (compiled: a loop, no `all` over a `map` of generic calls)
            if not tile[2]:
                break
        else:  # all first: a reset's first view, a walk into unseen land
            self._fill_first(tiles)
            return
        touched = self._touched
        if touched is None:
            touched = self._touched = []
        changed = False
        for x, y, first in tiles:
            if self._tile(x, y, first) or strict:
                if not first:
                    changed = True
                    touched.append((x, y))
        if changed:
            self.version += 1

    def take_touched(self) -> list[tuple[int, int]]:
        """The tiles that counted as changes (`version`) since the last call: the encoder patches
        the agent's place with them instead of rebuilding it (`SymbolicEncoder._forget`)."""
        touched = self._touched or []
        self._touched = []
        return touched

    def _fill_first(self, tiles: list[tuple[int, int, bool]]) -> None:
        """`_tile(x, y, first=True)` for tiles never computed (the ~49 of a reset's first view),
        in one loop: such a tile lies in no window the caches were filled for and counts as no
        change, so nothing but its cell, flags, looks and mark is written. Its flags, looks and
        mark are unset already (no view reached it), so only set ones are written (one byte
        each). A tile of one plain object (`_cell`'s last branch, most tiles of a view) takes
        its cell inline, `_plain` without its call. The cells are written at the end: for a
        whole view's tiles one numpy assignment per array, each tile's cell one item of a flat
        view (`_cells_views`: an item per tile, an index array made once; ~6x cheaper than rows
        indexed by a list), slice by slice for a few (each memoryview write ~1.3k instructions)."""
        looks, flags, visible, candidates = self._looks, self.flags, self.visible, self.candidates
        depth, side, r = self.depth, self._side, self.radius
        corner = r * side + r  # tile (x, y) at flat index y * side + x + corner of the padded arrays
        stacks, viewer = self.world.stacks, self.viewer
        marker_seen = getattr(self.marker, "seen", None)
        seen = _NOTHING_SEEN if marker_seen is None else marker_seen
        plain_cells, passable_now = _PLAIN_CELLS, _PASSABLE_NOW
        flag_view, marked_view = self._flag_view, self._marked_view
        kinds_of, state_of = self._kinds_of, self._state_of
        ats: list[int] = []
        kinds_parts: list[bytes] = []
        state_parts: list[bytes] = []
        for x, y, _ in tiles:
            stack = stacks[x][y]
            at = y * side + x + corner
            cell = None
            if len(stack) == 1:
                obj = stack[0]
                if (not obj.contents and obj is not viewer and not obj.is_agent and not obj.is_passage
                        and type(obj).is_passable_now is passable_now):  # fmt: skip
                    cell = plain_cells.get((type(obj), obj.type, obj.passable, depth))
            if cell is not None:
                kinds, state, flag = cell
                visible[x][y] = [obj]
                if obj.uuid in seen:
                    marked_view[at] = 1
                if flag:  # (else its candidates stay the `()` every tile starts with)
                    candidates[x][y] = ((obj.uuid, obj),)
            else:
                kinds, state, flag = self._cell(x, y)
                if marker_seen is not None and marker_seen.issuperset(map(_UUID, visible[x][y])):  # (in C: no generator)
                    marked_view[at] = 1
            if flag:
                looks[(x, y)] = None  # unknown: the tile's next recompute counts as a change
                flags[x][y] = True
                flag_view[at] = 1
            ats.append(at)
            kinds_parts.append(kinds)
            state_parts.append(state)
            kinds_of[at] = kinds
            state_of[at] = state
        if len(ats) > _FEW:
            kinds_cells, state_cells = self._cells_views()
            at_index = np.array(ats, np.intp)
            kinds_cells[at_index] = np.frombuffer(b"".join(kinds_parts), kinds_cells.dtype)
            state_cells[at_index] = np.frombuffer(b"".join(state_parts), state_cells.dtype)
        else:
            kinds_view, state_view = self._kinds_view, self._state_view
            for at, kinds, state in zip(ats, kinds_parts, state_parts, strict=True):
                kinds_view[at * depth : at * depth + depth] = kinds
                state_view[at * 4 : at * 4 + 4] = state

    def _cells_views(self) -> tuple[np.ndarray, np.ndarray]:
        """Flat views of `kinds` and `state` with one item per tile (a void item of the cell's
        bytes), made when `_fill_first` first batches (a mirror built and dropped unused pays
        nothing)."""
        views = self._cell_items
        if views is None:
            views = self._cell_items = (self.kinds.reshape(-1).view(f"V{self.depth}"), self.state.reshape(-1).view("V4"))
        return views

    def _tile(self, x: int, y: int, first: bool = False) -> bool:
        """Recompute tile (x, y); whether it shows anything else than before. `first`: never
        computed before, so it lies in no window the caches (candidate tiles, marked windows)
        were filled for.

        "Shows" is all a view built from the mirror reads of the tile: its cell, its visible
        objects, and of its slot candidates what the slot rows read that can change (`_look`)."""
        key = (x, y)
        looks, flags, column = self._looks, self.flags[x], self.visible[x]
        visible: list[WorldObject] | None = None  # (two statements: compiled, no tuple built and unpacked)
        look: tuple[tuple[str, bool, bool, int], ...] | None = None
        if not first:
            visible = column[y]
            look = looks.get(key)
        old_flag = flags[y]
        kinds, state, flag = self._cell(x, y)
        shown = column[y]
        at = (y + self.radius) * self._side + x + self.radius
        depth = self.depth
        kinds_at, state_at = at * depth, at * 4
        kinds_of, state_of = self._kinds_of, self._state_of
        differs = (first or flag != old_flag or kinds != kinds_of[at] or state != state_of[at]
                   or visible != shown)  # fmt: skip
        if differs:  # (else the cell is the same bytes: nothing to write)
            self._kinds_view[kinds_at : kinds_at + depth] = kinds
            self._state_view[state_at : state_at + 4] = state
            kinds_of[at] = kinds
            state_of[at] = state
        if not flag:
            if key in looks:  # (compiled: no `pop` method call)
                del looks[key]
        elif differs:  # shown different anyway (a character came or went): no need to look closer
            looks[key] = None  # unknown, so the tile's next recompute counts as a change
        else:
            new_look = _look(self.candidates[x][y])
            differs = new_look != look  # None (unknown) differs from any look
            looks[key] = new_look
        if flag != old_flag:
            flags[y] = flag
            self._flag_view[at] = flag
            if not first:
                self._candidate_tiles.clear()
        seen = getattr(self.marker, "seen", None)
        marked = False
        if seen is not None:
            marked = True
            for o in shown:  # (compiled: a loop, no `map` and `issuperset` calls)
                if o.uuid not in seen:
                    marked = False
                    break
        if marked:
            self._marked_view[at] = True  # nothing new to mark (e.g. the floor a character left)
        else:
            self._marked_view[at] = False
            if not first:
                self.marked_windows.clear()
        return differs

    def __getstate__(self) -> dict[str, object]:
        state = instance_state(self)
        for name in _VIEWS:  # memoryviews do not pickle: rebuilt below
            del state[name]
        state.pop("_cell_items", None)  # views of `kinds` and `state`: a pickled copy would write elsewhere
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        restore(self, state)  # (`world/unpickle.py`)
        self._views()
        # The flag arrays unpickled, put back over bytearrays of their own (`_backed`).
        self.pending, self._pending_view = _backed(self.pending.shape, np.bool_, self.pending.tobytes())
        self.unseen, self._unseen_view = _backed(self.unseen.shape, np.bool_, self.unseen.tobytes())
        self.marked, self._marked_view = _backed(self.marked.shape, np.bool_, self.marked.tobytes())
        self.has_candidates, self._flag_view = _backed(self.has_candidates.shape, np.bool_, self.has_candidates.tobytes())

    def _views(self) -> None:
        """Flat byte views of `kinds` and `state`: a tile's cell is written as one bytes slice
        (a memoryview's slice assignment takes bytes as they are; a bytearray's copies them
        into a bytearray first, ~1.5k instructions against ~600)."""
        self._kinds_view = memoryview(self.kinds.data).cast("B")
        self._state_view = memoryview(self.state.data).cast("B")

    def close(self) -> None:
        self.world.unwatch_tiles(self.changed)


def _backed(shape: tuple[int, ...], dtype: type, data: bytes | bytearray | None = None) -> tuple[np.ndarray, bytearray]:
    """An array of one-byte items over a new bytearray (zeros, or a copy of `data`), and that
    bytearray: the mirror reads and writes a tile's flag through it (compiled, ~100-150
    instructions an item against a memoryview's ~300-800)."""
    count = 1
    for n in shape:
        count *= n
    buf = bytearray(count) if data is None else bytearray(data)
    return np.frombuffer(buf, dtype).reshape(shape), buf
