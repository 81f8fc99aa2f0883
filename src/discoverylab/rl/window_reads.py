"""What the tile mirror (`rl/scenery.py`) reads of a whole window at once: the tiles holding
slot candidates around a place, the UUIDs a view marks seen, and the entering row or column
of a one-tile move (only it can hold pending or unmarked tiles then: one byte slice is read
instead of the window). A mixin of `SceneryMirror`, which owns the arrays and lists."""

from __future__ import annotations

from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Final

import numpy as np
from mypy_extensions import mypyc_attr

from discoverylab.rl.cells import COMPILED, grid_steps
from discoverylab.world.agent import Agent
from discoverylab.world.objects import WorldObject
from discoverylab.world.unpickle import FastState

if TYPE_CHECKING:
    from discoverylab.world.world import World

_UUID: Final = attrgetter("uuid")
_ROW_MAJOR: Final = itemgetter(1, 0)  # a tile's (x, y, ...) in a window scan's order: by row, then column


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
class WindowReads(FastState):
    """Window reads of `SceneryMirror` (see there for the attributes)."""

    world: World
    radius: int
    _side: int
    visible: list[list[list[WorldObject]]]
    flags: list[list[bool]]
    has_candidates: np.ndarray
    marked: np.ndarray
    pending: np.ndarray
    unseen: np.ndarray
    marked_windows: set[tuple[int, int]]
    marker: object
    _candidate_tiles: dict[tuple[int, int], list[tuple[int, int, int, int, int]]]
    _offsets: tuple[tuple[int, int, int] | None, ...]
    _last_marked: tuple[int, int] | None
    _marks: dict[tuple[int, int], tuple[int, int, bool]]
    _pending_view: bytearray  # (the arrays' own buffers: `scenery._backed`)
    _unseen_view: bytearray
    _marked_view: bytearray

    def candidate_tiles(self, ax: int, ay: int) -> list[tuple[int, int, int, int, int]]:
        """(x, y, distance, dx, dy) of the tiles around the agent at (ax, ay) that hold slot
        candidates, its own tile left out (the encoder reads that one live); per position,
        until a tile's candidate flag changes."""
        tiles = self._candidate_tiles.get((ax, ay))
        if tiles is None:
            if COMPILED:
                tiles = self._flagged_tiles(ax, ay)
            else:
                w = 2 * self.radius + 1
                offsets = self._offsets
                tiles = []
                for cell in self.has_candidates[ay : ay + w, ax : ax + w].ravel().nonzero()[0].tolist():
                    offset = offsets[cell]
                    if offset is not None:
                        dx, dy, dist = offset
                        tiles.append((ax + dx, ay + dy, dist, dx, dy))
            self._candidate_tiles[(ax, ay)] = tiles
        return tiles

    def _flagged_tiles(self, ax: int, ay: int) -> list[tuple[int, int, int, int, int]]:
        """`candidate_tiles` read from `flags` tile by tile, in the same (row-major) order: what
        compiled code does (`cells.COMPILED`: ~30 instructions a tile against ~2.6k for each of
        the numpy calls on the window's tiny array)."""
        r, size, flags = self.radius, self.world.size, self.flags
        x0, x1 = max(ax - r, 0), min(ax + r + 1, size)
        tiles: list[tuple[int, int, int, int, int]] = []
        for y in range(max(ay - r, 0), min(ay + r + 1, size)):
            dy = y - ay
            far = dy if dy >= 0 else -dy  # (`abs` is a generic call in compiled code)
            for x in range(x0, x1):
                if flags[x][y]:
                    dx = x - ax
                    if dx or dy:
                        tiles.append((x, y, far + (dx if dx >= 0 else -dx), dx, dy))
        return tiles

    def _refresh_edge(self, ax: int, ay: int, edge: tuple[int, int, bool], reported: list[tuple[int, int]]
                      ) -> list[tuple[int, int, bool]]:  # fmt: skip
        """`refresh`'s window scan one step from the place it last left with nothing pending
        within reach: only the entering row or column (`edge`, `entering_edges`) and the tiles
        reported in this refresh can be pending, so only they are read (one byte slice for the
        edge): the same tiles, in the same row-major order, as the whole window's scan finds,
        taken off `pending` for `refresh` to recompute."""
        r, side = self.radius, self._side
        pending, unseen = self._pending_view, self._unseen_view
        x0, y0, along_x = ax + edge[0], ay + edge[1], edge[2]
        step = 1 if along_x else side
        start = (y0 + r) * side + x0 + r  # (r >= reach: the edge lies inside the padded arrays)
        strip = bytes(pending[start : start + step * 2 * r + 1 : step])
        tiles: list[tuple[int, int, bool]] = []
        for i in range(len(strip)):  # (compiled: a bytes item is a C read, a `find` a method call)
            if strip[i]:
                at = start + i * step
                pending[at] = 0
                tiles.append((x0 + i, y0, bool(unseen[at])) if along_x else (x0, y0 + i, bool(unseen[at])))
                unseen[at] = 0
        for x, y in reported:  # (the set of reports holds each tile once)
            at = (y + r) * side + x + r
            if pending[at]:
                pending[at] = 0
                tiles.append((x, y, bool(unseen[at])))
                unseen[at] = 0
        if reported and tiles:
            tiles.sort(key=_ROW_MAJOR)
        return tiles

    def _pending_near(self, ax: int, ay: int, reach: int) -> list[tuple[int, int, bool]]:
        """`refresh`'s scan of the whole window within `reach` of (ax, ay): its pending tiles
        row by row ((x, y, never computed)), taken off `pending` and `unseen` (never computed
        implies pending). One bytes copy of the window's rows read item by item (compiled: C
        reads, no numpy call on a tiny slice, ~2.6k instructions each); a row of several
        cleared in one slice each (a reset's first view is all pending), a few item by item."""
        r, side = self.radius, self._side
        pending, unseen = self._pending_view, self._unseen_view
        top, left = max(ay + r - reach, 0), max(ax + r - reach, 0)  # padded: tile (x, y) at [y + r, x + r]
        bottom, right = min(ay + r + reach + 1, side), min(ax + r + reach + 1, side)
        tiles: list[tuple[int, int, bool]] = []
        if not COMPILED:  # interpreted, numpy's calls beat a loop over the window's tiles
            near = self.pending[top:bottom, left:right]
            cells = near.ravel().nonzero()[0].tolist()
            if cells:
                width = right - left
                new = self.unseen[top:bottom, left:right]
                first = new.ravel().tolist()
                steps, x0, y0 = grid_steps(width, bottom - top), left - r, top - r  # (a table: no divmod per tile)
                for cell in cells:
                    dx, dy = steps[cell]
                    tiles.append((x0 + dx, y0 + dy, first[cell]))
                near[...] = False  # views: write through to `pending` and `unseen`
                new[...] = False
            return tiles
        rows = bytes(pending[top * side : bottom * side])
        firsts = b""  # `unseen` of the same rows, copied once something is pending
        blank: bytearray | None = None
        for row in range(top, bottom):
            base = (row - top) * side
            count = 0
            for col in range(left, right):
                if rows[base + col]:
                    if not firsts:
                        firsts = bytes(unseen[top * side : bottom * side])
                    tiles.append((col - r, row - r, firsts[base + col] != 0))
                    count += 1
            at = row * side
            if count > 2:  # the row's window cells off both in one slice each, as numpy's views did
                if blank is None:
                    blank = bytearray(right - left)  # (bytearray into bytearray: a plain copy)
                pending[at + left : at + right] = blank
                unseen[at + left : at + right] = blank
            elif count:  # a few: item by item
                for col in range(left, right):
                    if rows[base + col]:
                        pending[at + col] = 0
                        unseen[at + col] = 0
        return tiles

    def mark_seen(self, agent: Agent, x0: int, y0: int, w: int) -> None:
        """Add the visible UUIDs of the window with corner (x0, y0) to `agent.seen` (as the text
        observation does), skipping tiles already added for this agent (`seen` only grows)."""
        if self.marker is not agent:
            self.marker = agent
            self.marked[:] = False
            self.marked_windows.clear()
        windows = self.marked_windows
        last, self._last_marked = self._last_marked, (x0, y0)
        if (x0, y0) in windows:
            return
        r, size, visible = self.radius, self.world.size, self.visible
        if last is not None and w == 2 * r + 1 and last in windows:
            edge = self._marks.get((x0 - last[0], y0 - last[1]))
            if edge is not None:
                self._mark_edge(agent, x0, y0, edge)
                windows.add((x0, y0))
                return
        done = self.marked[y0 : y0 + w, x0 : x0 + w]
        cells = (~done).ravel().nonzero()[0].tolist()
        if cells:
            # One `update` for the window (a new place's ~7 new tiles, a reset's 49), a tile of
            # one object (most) without a `map`; bounds checked only at the world's edge.
            uuids: list[int] = []
            append, extend = uuids.append, uuids.extend
            inside = r <= x0 and x0 + r < size and r <= y0 and y0 + r < size  # padded corner: the window's centre
            if inside and len(cells) == w * w and w == 2 * r + 1:  # a new place's whole window (a first view)
                columns = visible[x0 - r : x0 + r + 1]
                for y in range(y0 - r, y0 + r + 1):  # row by row, as the cells run
                    for column in columns:
                        objs = column[y]
                        if len(objs) == 1:
                            append(objs[0].uuid)
                        else:
                            extend(map(_UUID, objs))
                cells = []
            steps = grid_steps(w, w)
            for cell in cells:
                dx, dy = steps[cell]
                x, y = x0 + dx - r, y0 + dy - r
                if inside or (0 <= x < size and 0 <= y < size):
                    objs = visible[x][y]
                    if len(objs) == 1:
                        append(objs[0].uuid)
                    else:
                        extend(map(_UUID, objs))
            agent.seen.update(uuids)
        done[...] = True  # a view: writes through to `marked`
        windows.add((x0, y0))

    def _mark_edge(self, agent: Agent, x0: int, y0: int, edge: tuple[int, int, bool]) -> None:
        """`mark_seen` one step from a window marked whole (`marked_windows`): only the entering
        row or column (`edge`, `entering_edges`) can hold unmarked tiles, so only they are read
        (one byte slice), in the window scan's order (its UUIDs in the same order)."""
        r, size, side, visible = self.radius, self.world.size, self._side, self.visible
        marked = self._marked_view
        x1, y1, along_x = x0 + edge[0], y0 + edge[1], edge[2]
        step = 1 if along_x else side
        start = (y1 + r) * side + x1 + r
        strip = bytes(marked[start : start + step * 2 * r + 1 : step])
        if strip.find(0) < 0:
            return
        uuids: list[int] = []
        for i in range(len(strip)):  # (compiled: a bytes item is a C read, a `find` a method call)
            if strip[i]:
                continue
            marked[start + i * step] = 1
            x, y = (x1 + i, y1) if along_x else (x1, y1 + i)
            if 0 <= x < size and 0 <= y < size:
                objs = visible[x][y]
                if len(objs) == 1:  # most tiles: no `map` (compiled, ~1k instructions a tile)
                    uuids.append(objs[0].uuid)
                else:
                    uuids += map(_UUID, objs)
        agent.seen.update(uuids)
