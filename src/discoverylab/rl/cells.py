"""A tile's symbolic cell and window geometry, shared by every tile mirror (`rl/scenery.py`)
and the encoder (`rl/symbolic.py`, which reads the agent's own tile live); what decides
whether tiles share a cell (`is_plain`, `stack_key`)."""

from __future__ import annotations

from functools import cache
from types import FunctionType
from typing import Final

from discoverylab.rl.view import kind_id
from discoverylab.world.objects import WorldObject

Candidate = tuple[int, WorldObject]
"""(UUID, object) of a visible object that may fill an object slot (anything but ground)."""


def candidate_look(candidates: tuple[Candidate, ...]) -> tuple[tuple[str, bool, bool, int], ...]:
    """What a slot row reads of each candidate that can change while it stays on its tile (the
    name its static features follow, open, activated, the number of contents); kept per tile to
    tell a reported tile that changed from one that did not (`SceneryMirror._tile`)."""
    return tuple([(o.name, o.is_open, o.activated, len(o.contents)) for _, o in candidates])


def is_plain(obj: WorldObject) -> bool:
    """Whether a tile holding only `obj` (nothing inside) looks like any other tile holding only
    an object of its class, type and passability: not a character or a passage, and passable
    by the engine's own rule."""
    return not obj.is_agent and not obj.is_passage and type(obj).is_passable_now is WorldObject.is_passable_now


PASSABLE_NOW = WorldObject.is_passable_now  # the engine's own passability rule (`is_plain`)
COMPILED: Final = not isinstance(is_plain, FunctionType)
"""Whether these modules run compiled (`discoverylab.native`): then a loop over a window's tiles
(~50 instructions a tile) beats numpy's calls on tiny arrays (~1-3k each), which the pure
engine keeps (there a loop costs ~400 a tile). Both ways give the same values
(`WindowReads.candidate_tiles`; tests/test_scenery_caches.py compares them)."""


def stack_key(stack: list[WorldObject], viewer: WorldObject | None, depth: int) -> tuple[object, ...] | None:
    """What a tile's cell follows from when its objects are all plain (`is_plain`) or characters
    (a character stepping in view: most reported tiles where characters wander), none holding
    anything nor the viewer: per object its class, type, passability, layer, whether it hides
    what lies below (`objects_at` shows a prefix of the stack that these decide, `blocker_at`
    finds the first impassable one) and is a character; None for any other tile."""
    key: list[object] = [depth]
    for o in stack:
        if o.contents or o is viewer or o.is_passage or type(o).is_passable_now is not PASSABLE_NOW:
            return None
        key.append((type(o), o.type, o.passable, o.layer, o.obscures_below, o.is_agent))
    return tuple(key)


_KINDS: dict[str, int] = {}  # type -> kind id (a plain dict: cheaper than the lru_cache per object)
# Per depth, a cell's kind bytes per what they follow from: the type of a tile's one object, or
# the tuple of its top `depth` objects' types. Building them anew (a list, `bytes`, `ljust`) cost
# ~2k instructions a cell compiled, a lookup ~0.2-0.4k: every cell `_full_cell` computes
# (characters, doors, the agent's own tile) asks. Bounded: cleared past `_KIND_CELLS_LIMIT`.
_KIND_CELLS: dict[int, dict[object, bytes]] = {}
_KIND_CELLS_LIMIT: Final = 4096
# A cell's state bytes (inside, passable, character, open door) at passable * 4 + character * 2 + door.
_STATES: Final = [bytes((1, passable, character, door)) for passable in (0, 1) for character in (0, 1) for door in (0, 1)]


def kind_bytes(objs: list[WorldObject], depth: int) -> bytes:
    """Kind ids of the first `depth` objects, zero-padded to `depth`: a tile's symbolic cell."""
    cells = _KIND_CELLS.get(depth)
    if cells is None:
        cells = _KIND_CELLS[depth] = {}
    key: object = objs[0].type if len(objs) == 1 else tuple([o.type for o in objs[:depth]])
    found = cells.get(key)
    if found is None:
        if len(cells) >= _KIND_CELLS_LIMIT:
            cells.clear()
        kinds = _KINDS
        found = bytes([kinds.get(o.type) or kinds.setdefault(o.type, kind_id(o.type)) for o in objs[:depth]]).ljust(depth, b"\0")
        cells[key] = found
    return found


def tile_cell(objs: list[WorldObject], passable: bool, depth: int) -> tuple[bytes, bytes]:
    """A tile's symbolic cell from what it shows: the kind ids of its top `depth` objects, and
    its state (inside the world, passable, holds a character, holds an open door)."""
    character = door = 0
    for o in objs:
        if o.is_agent:
            character = 2
        if o.is_passage and o.is_open:
            door = 1
    return kind_bytes(objs, depth), _STATES[(4 if passable else 0) + character + door]


@cache
def grid_steps(width: int, height: int) -> tuple[tuple[int, int], ...]:
    """(dx, dy) of each cell of a width x height block from its corner, row by row (the order of
    a raveled numpy slice's cell indexes: `refresh`, `mark_seen`)."""
    return tuple([(dx, dy) for dy in range(height) for dx in range(width)])


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
