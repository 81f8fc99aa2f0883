"""The agent's own place patched instead of rebuilt when tiles change (`SymbolicEncoder._forget`).

A step in which a character walks in view changes two tiles of the window; rebuilding the
agent's place (`SymbolicEncoder._place`: every candidate tile of the window sorted again) costs
more than the change. The patched place keeps the slots of the tiles that did not change and
equals what `_place` would build (tests/test_scenery_caches.py compares every step).
"""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final

from discoverylab.rl.scenery import SceneryMirror, tile_cell
from discoverylab.rl.view import BY_UUID, SlotData
from discoverylab.world.agent import Agent
from discoverylab.world.objects import WorldObject
from discoverylab.world.things import Terrain
from discoverylab.world.uuids import UUID_LIMIT

if TYPE_CHECKING:
    from discoverylab.rl.symbolic import _Place

_FIRST: Final = itemgetter(0)  # a candidate's UUID


_UUID_BITS: Final = UUID_LIMIT.bit_length()  # a far slot's sort key: distance << this | UUID (as `_place`'s)


def _by_uuid(objs: list[WorldObject]) -> list[WorldObject]:
    """`objs` sorted by UUID: none or one (most tiles and inventories) as they are, two by one
    comparison (compiled, a call of `sorted` with a key costs ~2k instructions)."""
    if len(objs) < 2:
        return objs
    if len(objs) == 2:
        first, second = objs[0], objs[1]
        return objs if first.uuid < second.uuid else [second, first]
    return sorted(objs, key=BY_UUID)


def own_part(agent: Agent, mirror: SceneryMirror, live: bool, tiles: bytes, state: bytes, num_slots: int
             ) -> tuple[bytes, bytes, list[SlotData], list[int], int]:  # fmt: skip
    """What `_place` reads of the agent's own tile and inventory: the window's tiles and states
    (the centre read from the world if `live`), the slots of the inventory and the own tile, the
    UUIDs on the own tile to mark seen, the inventory size."""
    ax, ay = agent.x, agent.y
    if not live:
        found = mirror.candidates[ax][ay]
        return tiles, state, [(o, False, True, 0, 0) for _, o in (sorted(found, key=_FIRST) if len(found) > 1 else found)], [], 0
    world, r, depth = agent.world, mirror.radius, mirror.depth
    inventory = _by_uuid(agent.inventory())
    inv_ids = {o.uuid for o in inventory}
    objs = [o for o in world.objects_at(ax, ay) if o is not agent]
    centre = r * (2 * r + 1) + r
    kinds, cell = tile_cell(objs, world.blocker_at(ax, ay) is None, depth)
    tiles = tiles[: centre * depth] + kinds + tiles[(centre + 1) * depth :]
    state = state[: centre * 4] + cell + state[centre * 4 + 4 :]
    own = _by_uuid([o for o in objs if o.uuid not in inv_ids and not isinstance(o, Terrain)])
    first: list[SlotData] = [(o, True, True, 0, 0) for o in inventory[:num_slots]]
    first += [(o, False, True, 0, 0) for o in own]
    return tiles, state, first, [o.uuid for o in objs], min(len(inventory), 255)


def _centre(place: _Place, tiles: bytes, state: bytes, r: int, depth: int) -> tuple[bytes, bytes]:
    """The window's `tiles` and `state` with the centre cell `place` read live (`own_part`)."""
    centre = r * (2 * r + 1) + r
    kinds_at, state_at = centre * depth, centre * 4
    old_tiles, old_state = place[0], place[1]
    tiles = tiles[:kinds_at] + old_tiles[kinds_at : kinds_at + depth] + tiles[kinds_at + depth :]
    state = state[:state_at] + old_state[state_at : state_at + 4] + state[state_at + 4 :]
    return tiles, state


def patch_place(place: _Place, agent: Agent, mirror: SceneryMirror, live: bool, touched: list[tuple[int, int]],
                num_slots: int) -> _Place:  # fmt: skip
    """`_place` of the agent's place after the `touched` tiles changed: the window's bytes again,
    the own part again if the own tile changed (`own_part`; else kept, its live centre too),
    the touched tiles' candidates in the window replaced and the others kept (the same slot
    tuples), in `_place`'s order."""
    r = mirror.radius
    w = 2 * r + 1
    ax, ay = agent.x, agent.y
    tiles = mirror.kinds[ay : ay + w, ax : ax + w].tobytes()
    state = mirror.state[ay : ay + w, ax : ax + w].tobytes()
    _, _, first, neighbours, rest, own, inventory_size = place
    if (ax, ay) in touched:  # (what the agent holds changes only with a report of its tile, as
        # `World.watch_tiles` says: a kept view is reused as long as nothing is reported either)
        tiles, state, first, own, inventory_size = own_part(agent, mirror, live, tiles, state, num_slots)
    elif live:  # the centre as read live before
        tiles, state = _centre(place, tiles, state, r, mirror.depth)
    neighbours = dict(neighbours)
    candidates = mirror.candidates
    offsets: set[tuple[int, int]] = set()
    added: list[tuple[int, Any]] = []  # (`_place`'s sort key, slot) of the touched tiles' candidates
    for x, y in touched:
        dx, dy = x - ax, y - ay
        if -r <= dx <= r and -r <= dy <= r and (dx or dy) and (dx, dy) not in offsets:
            offsets.add((dx, dy))
            found = candidates[x][y]
            dist = abs(dx) + abs(dy)
            if dist == 1:
                if found:
                    neighbours[(dx, dy)] = [(o, False, True, dx, dy) for _, o in sorted(found, key=_FIRST)]
                else:
                    neighbours.pop((dx, dy), None)
            added += [(dist << _UUID_BITS | uuid, (o, False, False, dx, dy)) for uuid, o in found]
    if offsets:
        rest = _merged(rest, added, offsets, r)
    return tiles, state, first, neighbours, rest, own, inventory_size


def _merged(rest: list[SlotData], added: list[tuple[int, Any]], offsets: set[tuple[int, int]], r: int) -> list[SlotData]:
    """`rest` (in `_place`'s order: distance, then UUID) without the slots of the tiles at
    `offsets`, with the `added` slots ((sort key, slot)) in their places: one pass, each kept
    slot as it is (a binary insertion with a key function cost ~700 instructions per key read,
    compiled; a generic read of a slot's dx, dy ~160 each)."""
    w = 2 * r + 1
    gone = [False] * (w * w)  # per window cell, row by row: its slots are replaced
    for dx, dy in offsets:
        gone[(dy + r) * w + dx + r] = True
    added.sort()  # (keys are unique: UUIDs are)
    n = len(added)
    i = 0
    merged: list[Any] = []
    kept: list[Any] = rest  # (`Any`: compiled code keeps each slot as it is, unboxed and boxed anew otherwise)
    for item in kept:
        slot: SlotData = item  # (compiled: its fields read typed, `item` stored as it is)
        dx, dy = slot[3], slot[4]
        if gone[(dy + r) * w + dx + r]:
            continue
        if i < n:
            key = ((dx if dx >= 0 else -dx) + (dy if dy >= 0 else -dy)) << _UUID_BITS | slot[0].uuid
            while i < n and added[i][0] < key:
                merged.append(added[i][1])
                i += 1
        merged.append(item)
    while i < n:
        merged.append(added[i][1])
        i += 1
    return merged
