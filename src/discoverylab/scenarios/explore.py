"""Exploration for scripted oracles: a map of where seen objects are, and ways to get around.

The observation lists nearby objects by direction group and Manhattan distance, which pins a
tile exactly only on the pure directions and some corners. `WorldMap` keeps, for every UUID
seen, the set of tiles it could be on and narrows it with every later observation (where it is
seen again, and where it would have been seen but was not), so after a few steps most static
objects have an exact position. `Explorer` wraps an oracle's action loop: it updates the map
after every step and offers travel by teleport hops (TELEPORT_TO_OBJECT to a seen object near
the goal moves several tiles per step), frontier exploration and area sweeps.

Everything here uses only the observation, like any agent could.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from discoverylab.scenarios.oracle_tools import (
    Action,
    Obs,
    OracleFailure,
    Steps,
    act,
    must_succeed,
    nearby_entries,
)

Tile = tuple[int, int]
GROUND = frozenset({"grass", "floor", "path", "soil", "sand", "cave floor"})
_SIGNS = {
    "north": (0, -1), "south": (0, 1), "east": (1, 0), "west": (-1, 0), "north-east": (1, -1),
    "north-west": (-1, -1), "south-east": (1, 1), "south-west": (-1, 1), "same_location": (0, 0),
}  # fmt: skip


def entry_offsets(group: str, distance: int, radius: int) -> list[Tile]:
    """Every (dx, dy) inside the window that matches a nearby entry's group and distance."""
    sx, sy = _SIGNS[group]
    out = []
    for ax in range(radius + 1):
        ay = distance - ax
        if 0 <= ay <= radius and (sx == 0) == (ax == 0) and (sy == 0) == (ay == 0):
            out.append((sx * ax, sy * ay))
    return out


def manhattan(a: Tile, b: Tile) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


@dataclass(slots=True)
class Sighting:
    """What the map knows about one UUID."""

    uuid: int
    name: str
    description: str
    tiles: set[Tile] = field(default_factory=set)

    @property
    def tile(self) -> Tile | None:
        """The exact tile, once only one candidate is left."""
        return next(iter(self.tiles)) if len(self.tiles) == 1 else None

    def near(self) -> Tile:
        """A best guess: the exact tile or the rounded centre of the candidates."""
        xs = [t[0] for t in self.tiles]
        ys = [t[1] for t in self.tiles]
        return round(sum(xs) / len(xs)), round(sum(ys) / len(ys))


class WorldMap:
    """Candidate tiles of every object seen so far, and which tiles have been in view."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self.objects: dict[int, Sighting] = {}
        self.observed: set[Tile] = set()
        self.agent: Tile = (0, 0)

    def update(self, obs: Obs) -> None:
        loc = obs["agentLocation"]
        ax, ay = self.agent = (loc["x"], loc["y"])
        radius = int(obs["nearbyObjects"]["distance"])
        window = {
            (x, y)
            for x in range(max(0, ax - radius), min(self.size, ax + radius + 1))
            for y in range(max(0, ay - radius), min(self.size, ay + radius + 1))
        }
        now: dict[int, tuple[dict[str, Any], set[Tile]]] = {}
        for group, entry in nearby_entries(obs):
            tiles = {(ax + dx, ay + dy) for dx, dy in entry_offsets(group, entry["distance"], radius)}
            now[entry["uuid"]] = (entry, tiles)
        for uuid, (entry, tiles) in now.items():
            known = self.objects.get(uuid)
            if known is None:
                # Tiles seen earlier without this object cannot hold it (static world), unless that
                # would leave nothing (it moved, or just appeared).
                fresh = tiles - self.observed
                self.objects[uuid] = Sighting(uuid, entry["name"], entry["description"], fresh or tiles)
            else:
                known.tiles = (known.tiles & tiles) or tiles
                known.name, known.description = entry["name"], entry["description"]
        for uuid in [u for u in self.objects if u not in now]:
            sighting = self.objects[uuid]
            sighting.tiles -= window
            if not sighting.tiles:
                del self.objects[uuid]  # moved or gone
        self.observed |= window

    # ---- queries ----------------------------------------------------------------------
    def named(self, *names: str) -> list[Sighting]:
        """Sightings with one of these names, nearest to the agent first."""
        found = [s for s in self.objects.values() if s.name in names]
        return sorted(found, key=lambda s: (manhattan(s.near(), self.agent), s.uuid))

    def pinned(self) -> Iterable[tuple[Tile, Sighting]]:
        for sighting in self.objects.values():
            tile = sighting.tile
            if tile is not None:
                yield tile, sighting

    def tiles_with(self, names: Iterable[str]) -> set[Tile]:
        wanted = set(names)
        return {tile for tile, s in self.pinned() if s.name in wanted}

    def frontier(self, tiles: set[Tile]) -> list[Tile]:
        """Those of `tiles` that border a tile never in view, nearest to the agent first."""
        out = []
        for x, y in tiles:
            for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
                if 0 <= nx < self.size and 0 <= ny < self.size and (nx, ny) not in self.observed:
                    out.append((x, y))
                    break
        return sorted(out, key=lambda t: (manhattan(t, self.agent), t))


class Explorer:
    """Runs an oracle's actions and keeps a `WorldMap` of what they revealed.

    Use `obs = yield from ex.act(action)` instead of a bare `yield`, so the map stays current.
    """

    def __init__(self, obs: Obs, max_hops: int = 30) -> None:
        self.obs = obs
        self.map = WorldMap()
        self.map.update(obs)
        self.bad_targets: set[int] = set()  # UUIDs a teleport could not land beside
        self.max_hops = max_hops

    @property
    def here(self) -> Tile:
        return self.map.agent

    @property
    def completed(self) -> bool:
        return bool(self.obs["taskProgress"][0]["completed"])

    def act(self, action: Action) -> Steps:
        obs = yield action
        self.obs = obs
        self.map.update(obs)
        return obs

    def checked(self, action: Action) -> Steps:
        obs = yield from self.act(action)
        must_succeed(obs, action)
        return obs

    def teleport(self, uuid: int) -> Steps:
        """TELEPORT_TO_OBJECT; returns the observation (check `here` to see whether it moved)."""
        obs = yield from self.act(act("TELEPORT_TO_OBJECT", uuid))
        if not obs["lastActionMessage"].startswith("I teleported"):
            self.bad_targets.add(uuid)
        return obs

    # ---- getting around ---------------------------------------------------------------
    def travel(self, goal: Tile, tolerance: int = 1) -> Steps:
        """Get within `tolerance` (Manhattan) of `goal`: teleport beside the exactly-known
        object nearest the goal while that gains at least two tiles, then walk."""
        avoid: set[int] = set()  # anchors whose landing did not bring us closer
        for _ in range(self.max_hops):
            gap = manhattan(self.here, goal)
            if gap <= tolerance:
                break
            target = self._hop_target(goal, gap, avoid)
            if target is not None:
                yield from self.teleport(target)
                if manhattan(self.here, goal) >= gap:
                    avoid.add(target)
                continue
            step = self._step_toward(goal)
            if step is None:
                break
            yield from self.act(act("MOVE_DIRECTION", step))
        return self.obs

    def _hop_target(self, goal: Tile, gap: int, avoid: set[int]) -> int | None:
        best: tuple[int, int, int] | None = None
        for tile, sighting in self.map.pinned():
            if tile == self.here or sighting.uuid in self.bad_targets or sighting.uuid in avoid:
                continue
            # Landing is beside the object; ground is the most reliable anchor.
            rank = (manhattan(tile, goal), 0 if sighting.name in GROUND else 1, sighting.uuid)
            if best is None or rank < best:
                best = rank
        if best is None or best[0] + 2 > gap:
            return None
        return best[2]

    def _step_toward(self, goal: Tile) -> str | None:
        (x, y), (gx, gy) = self.here, goal
        free = self.obs["agentLocation"]["directions_you_can_move"]
        wishes = []
        if gx != x:
            wishes.append(("east" if gx > x else "west", abs(gx - x)))
        if gy != y:
            wishes.append(("south" if gy > y else "north", abs(gy - y)))
        for direction, _ in sorted(wishes, key=lambda w: -w[1]):
            if direction in free:
                return str(direction)
        return None

    def explore_frontier(self, interesting: Callable[[Sighting], bool]) -> Steps:
        """One hop towards the nearest known tile holding an interesting object that borders
        unseen ground. Raises OracleFailure when there is no such tile left."""
        tiles = {tile for tile, s in self.map.pinned() if interesting(s)}
        for tile in self.map.frontier(tiles):
            if manhattan(tile, self.here) <= 1:
                continue
            before = self.here
            yield from self.travel(tile, tolerance=1)
            if self.here != before:
                return self.obs
        raise OracleFailure("nothing left to explore")

    def sweep(self, area: tuple[int, int, int, int], done: Callable[[], bool], radius: int = 3) -> Steps:
        """Bring every tile of `area` (x0, y0, x1, y1 inclusive) into view, greedily choosing the
        viewpoint with the most unseen tiles per estimated step, until `done()`."""
        x0, y0, x1, y1 = area
        wanted = {(x, y) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1)}
        skipped: set[Tile] = set()  # viewpoints that could not be reached
        for _ in range(self.max_hops):
            if done():
                break
            unseen = wanted - self.map.observed
            if not unseen:
                break
            best: tuple[float, Tile] | None = None
            for cx in range(x0, x1 + 1):
                for cy in range(y0, y1 + 1):
                    gain = sum(
                        1 for x in range(cx - radius, cx + radius + 1)
                        for y in range(cy - radius, cy + radius + 1) if (x, y) in unseen
                    )  # fmt: skip
                    if gain == 0 or (cx, cy) in skipped:
                        continue
                    cost = 1 + math.ceil(manhattan((cx, cy), self.here) / 4)
                    score = gain / cost
                    if best is None or score > best[0]:
                        best = (score, (cx, cy))
            if best is None:
                break
            before = (self.here, len(self.map.observed))
            yield from self.travel(best[1], tolerance=1)
            if (self.here, len(self.map.observed)) == before:  # next to it is not enough: go onto it
                yield from self.travel(best[1], tolerance=0)
            if (self.here, len(self.map.observed)) == before:  # unreachable: try the next best
                skipped.add(best[1])
        return self.obs

    def reachable(self, uuid: int) -> bool:
        """Whether the object is accessible now (own tile or the tile faced)."""
        return any(e["uuid"] == uuid for e in self.obs["accessibleEnvironmentObjects"])

    def take(self, uuid: int) -> Steps:
        """Teleport beside a seen object and pick it up (unless it is already in reach)."""
        if not self.reachable(uuid):
            yield from self.teleport(uuid)
        return (yield from self.checked(act("PICKUP", uuid)))

    def holding(self, uuid: int) -> bool:
        return any(e["uuid"] == uuid for e in self.obs["inventoryObjects"])


def grid_path(start: Tile, goal: Tile, tolerance: int, solid: set[Tile], size: int = 32) -> list[Tile] | None:
    """The shortest 4-connected path (excluding `start`) to a tile within `tolerance` of `goal`
    that avoids `solid`, breadth-first, or None: for an oracle walking by what it has seen."""
    came: dict[Tile, Tile | None] = {start: None}
    queue = deque([start])
    while queue:
        cur = queue.popleft()
        if manhattan(cur, goal) <= tolerance and cur != start:
            path = []
            node: Tile | None = cur
            while node is not None and node != start:
                path.append(node)
                node = came[node]
            return path[::-1]
        x, y = cur
        for nxt in ((x, y - 1), (x + 1, y), (x, y + 1), (x - 1, y)):
            if 0 <= nxt[0] < size and 0 <= nxt[1] < size and nxt not in came and nxt not in solid:
                came[nxt] = cur
                queue.append(nxt)
    return None
