"""A tile's symbolic cell and window geometry, shared by every tile mirror (`rl/scenery.py`)
and the encoder (`rl/symbolic.py`, which reads the agent's own tile live)."""

from __future__ import annotations

from functools import cache

from discoverylab.rl.view import kind_id
from discoverylab.world.objects import WorldObject

_KINDS: dict[str, int] = {}  # type -> kind id (a plain dict: cheaper than the lru_cache per object)


def kind_bytes(objs: list[WorldObject], depth: int) -> bytes:
    """Kind ids of the first `depth` objects, zero-padded to `depth`: a tile's symbolic cell."""
    kinds = _KINDS
    return bytes([kinds.get(o.type) or kinds.setdefault(o.type, kind_id(o.type)) for o in objs[:depth]]).ljust(depth, b"\0")


def tile_cell(objs: list[WorldObject], passable: bool, depth: int) -> tuple[bytes, bytes]:
    """A tile's symbolic cell from what it shows: the kind ids of its top `depth` objects, and
    its state (inside the world, passable, holds a character, holds an open door)."""
    character = door = 0
    for o in objs:
        if o.is_agent:
            character = 1
        if o.is_passage and o.is_open:
            door = 1
    return kind_bytes(objs, depth), bytes((1, passable, character, door))


@cache
def window_steps(w: int) -> tuple[tuple[int, int], ...]:
    """(dx, dy) of each cell of a w-wide window from its corner, row by row (`mark_seen`)."""
    return tuple([(dx, dy) for dy in range(w) for dx in range(w)])


@cache
def window_offsets(radius: int) -> tuple[tuple[int, int, int] | None, ...]:
    """Per cell of a (2 * radius + 1)-wide window, row by row: (dx, dy, distance) from its
    centre; None for the centre itself (`candidate_tiles` leaves the own tile out)."""
    r = radius
    return tuple([(dx, dy, abs(dx) + abs(dy)) if dx or dy else None for dy in range(-r, r + 1) for dx in range(-r, r + 1)])


@cache
def entering_edges(reach: int) -> dict[tuple[int, int], tuple[int, int, bool]]:
    """Per one-tile step (dx, dy), the tiles within `reach` of the new centre that were not
    within reach of the old one (the window's entering row or column): the offset of its
    first tile from the new centre and whether it runs along x (a row) or along y (a column),
    its 2 * reach + 1 tiles in row-major order, as a window scan lists them (`SceneryMirror.refresh`,
    `mark_seen`)."""
    return {(1, 0): (reach, -reach, False), (-1, 0): (-reach, -reach, False),
            (0, 1): (-reach, reach, True), (0, -1): (-reach, -reach, True)}  # fmt: skip
