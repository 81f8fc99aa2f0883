"""Scenery mirror: the symbolic view of every tile that holds only ground and walls, kept in
numpy arrays so the encoder copies a window instead of walking 49 tiles in Python.

Most tiles of a view are bare floor, grass or wall, whose symbolic cells never change on their
own (`Terrain` and `Wall` have no state the encoder reads). A tile is "scenery" while
`world.observation.plain_objects` says it holds only those (the text observation caches the same
tiles); every other tile (characters, items, doors, soil, furniture, the agent's own tile) is
marked dynamic and encoded object by object as before. The world reports each tile whose objects change (`World.watch_tiles`), so the mirror
recomputes only those. Arrays are padded by the view radius, so a window never leaves them.
"""

from __future__ import annotations

import numpy as np

from discoverylab.rl.view import kind_id
from discoverylab.world.agent import Agent
from discoverylab.world.observation import plain_objects
from discoverylab.world.world import World


class SceneryMirror:
    """Kind ids, tile states and UUIDs of the scenery tiles of one world, plus a dynamic mask."""

    def __init__(self, world: World, radius: int, depth: int) -> None:
        self.world = world
        self.radius = radius
        self.depth = depth
        side = world.size + 2 * radius
        self.kinds = np.zeros((side, side, depth), np.uint8)
        self.state = np.zeros((side, side, 4), np.uint8)
        self.uuids = np.zeros((side, side, depth), np.int64)  # 0 = none (UUIDs start at 1)
        self.dynamic = np.zeros((side, side), bool)
        self.marked = np.zeros((side, side), bool)  # scenery UUIDs already added to `marker.seen`
        self.marker: object = None
        self.marked_windows: set[tuple[int, int]] = set()  # corners whose whole window is marked
        self.changed = world.watch_tiles()
        self._build_all()

    def _build_all(self) -> None:
        """Every tile at once: plain lists first, one array write per field (per-tile numpy
        writes would cost a few ms per reset)."""
        size, r = self.world.size, self.radius
        kinds = [[[0] * self.depth for _ in range(size)] for _ in range(size)]
        uuids = [[[0] * self.depth for _ in range(size)] for _ in range(size)]
        state = [[[0, 0, 0, 0] for _ in range(size)] for _ in range(size)]
        dynamic = [[True] * size for _ in range(size)]
        for x in range(size):
            for y in range(size):
                cell = self._cell(x, y)
                if cell is not None:
                    kinds[y][x], uuids[y][x], state[y][x] = cell
                    dynamic[y][x] = False
        inner = slice(r, r + size)
        self.kinds[inner, inner] = kinds
        self.uuids[inner, inner] = uuids
        self.state[inner, inner] = state
        self.dynamic[inner, inner] = dynamic

    def _cell(self, x: int, y: int) -> tuple[list[int], list[int], list[int]] | None:
        """Kind ids, UUIDs (both padded to `depth`) and tile state of a scenery tile; None for a
        dynamic one (not plain, or more visible objects than the depth holds)."""
        objs = plain_objects(self.world, x, y)
        if objs is None or len(objs) > self.depth:
            return None
        pad = [0] * (self.depth - len(objs))
        free = int(self.world.blocker_at(x, y) is None)
        return [kind_id(o.type) for o in objs] + pad, [o.uuid for o in objs] + pad, [1, free, 0, 0]

    def refresh(self) -> None:
        """Recompute the tiles the world reported changed since the last refresh."""
        if self.changed:
            for x, y in self.changed:
                self._tile(x, y)
            self.changed.clear()

    def mark_seen(self, agent: Agent, x0: int, y0: int, w: int) -> None:
        """Add the scenery UUIDs of the window with corner (x0, y0) to `agent.seen` (as the text
        observation does), skipping tiles already added for this agent (`seen` only grows)."""
        if self.marker is not agent:
            self.marker = agent
            self.marked[:] = False
            self.marked_windows.clear()
        if (x0, y0) in self.marked_windows:
            return
        done = self.marked[y0 : y0 + w, x0 : x0 + w]
        fresh = self.uuids[y0 : y0 + w, x0 : x0 + w][~done]
        agent.seen.update(fresh[fresh != 0].tolist())
        done[...] = True  # a view: writes through to `marked`
        self.marked_windows.add((x0, y0))

    def _tile(self, x: int, y: int) -> None:
        row, col = y + self.radius, x + self.radius
        cell = self._cell(x, y)
        if cell is None:
            self.kinds[row, col] = self.uuids[row, col] = self.state[row, col] = 0
        else:
            self.kinds[row, col], self.uuids[row, col], self.state[row, col] = cell
        self.dynamic[row, col] = cell is None
        seen = getattr(self.marker, "seen", None)
        if seen is not None and (cell is None or all(u in seen for u in cell[1] if u)):
            self.marked[row, col] = True  # nothing new to mark (e.g. the floor a character left)
        else:
            self.marked[row, col] = False
            self.marked_windows.clear()

    def close(self) -> None:
        self.world.unwatch_tiles(self.changed)
