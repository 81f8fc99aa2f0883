"""The agent's own place patched instead of rebuilt when tiles change (`SymbolicEncoder._forget`).

A step in which a character walks in view changes two tiles of the window; rebuilding the
agent's place (`SymbolicEncoder._place`: every candidate tile of the window sorted again) costs
more than the change. The patched place keeps the slots of the tiles that did not change and
equals what `_place` would build (tests/test_scenery_caches.py compares every step).
"""

from __future__ import annotations

from bisect import insort
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final

from discoverylab.rl.scenery import SceneryMirror, tile_cell
from discoverylab.rl.view import BY_UUID, SlotData
from discoverylab.world.agent import Agent
from discoverylab.world.things import Terrain

if TYPE_CHECKING:
    from discoverylab.rl.symbolic import _Place

_FIRST: Final = itemgetter(0)  # a candidate's UUID


def _far_key(slot: SlotData) -> tuple[int, int]:
    """An out-of-reach slot's place in `_place`'s order: distance, then UUID."""
    return abs(slot[3]) + abs(slot[4]), slot[0].uuid


def own_part(agent: Agent, mirror: SceneryMirror, live: bool, tiles: bytes, state: bytes, num_slots: int
             ) -> tuple[bytes, bytes, list[SlotData], list[int], int]:  # fmt: skip
    """What `_place` reads of the agent's own tile and inventory: the window's tiles and states
    (the centre read from the world if `live`), the slots of the inventory and the own tile, the
    UUIDs on the own tile to mark seen, the inventory size."""
    ax, ay = agent.x, agent.y
    if not live:
        return tiles, state, [(o, False, True, 0, 0) for _, o in sorted(mirror.candidates[ax][ay], key=_FIRST)], [], 0
    world, r, depth = agent.world, mirror.radius, mirror.depth
    inventory = sorted(agent.inventory(), key=BY_UUID)
    inv_ids = {o.uuid for o in inventory}
    objs = [o for o in world.objects_at(ax, ay) if o is not agent]
    centre = r * (2 * r + 1) + r
    kinds, cell = tile_cell(objs, world.blocker_at(ax, ay) is None, depth)
    tiles = tiles[: centre * depth] + kinds + tiles[(centre + 1) * depth :]
    state = state[: centre * 4] + cell + state[centre * 4 + 4 :]
    own = sorted([o for o in objs if o.uuid not in inv_ids and not isinstance(o, Terrain)], key=BY_UUID)
    first: list[SlotData] = [(o, True, True, 0, 0) for o in inventory[:num_slots]]
    first += [(o, False, True, 0, 0) for o in own]
    return tiles, state, first, [o.uuid for o in objs], min(len(inventory), 255)


def patch_place(place: _Place, agent: Agent, mirror: SceneryMirror, live: bool, touched: list[tuple[int, int]],
                num_slots: int) -> _Place:  # fmt: skip
    """`_place` of the agent's place after the `touched` tiles changed: the window's bytes again,
    the own part again if `live` or the own tile changed (`own_part`), the touched tiles'
    candidates in the window replaced and the others kept (the same slot tuples), in
    `_place`'s order."""
    r = mirror.radius
    w = 2 * r + 1
    ax, ay = agent.x, agent.y
    tiles = mirror.kinds[ay : ay + w, ax : ax + w].tobytes()
    state = mirror.state[ay : ay + w, ax : ax + w].tobytes()
    _, _, first, neighbours, rest, own, inventory_size = place
    if live or (ax, ay) in touched:
        tiles, state, first, own, inventory_size = own_part(agent, mirror, live, tiles, state, num_slots)
    neighbours = dict(neighbours)
    candidates = mirror.candidates
    offsets: set[tuple[int, int]] = set()
    added: list[SlotData] = []
    for x, y in touched:
        dx, dy = x - ax, y - ay
        if -r <= dx <= r and -r <= dy <= r and (dx or dy) and (dx, dy) not in offsets:
            offsets.add((dx, dy))
            found = candidates[x][y]
            if abs(dx) + abs(dy) == 1:
                if found:
                    neighbours[(dx, dy)] = [(o, False, True, dx, dy) for _, o in sorted(found, key=_FIRST)]
                else:
                    neighbours.pop((dx, dy), None)
            added += [(o, False, False, dx, dy) for _, o in found]
    if offsets:
        kept: list[Any] = rest  # (`Any`: compiled code keeps each slot as it is, unboxed and boxed anew otherwise)
        rest = [s for s in kept if (s[3], s[4]) not in offsets]
        for slot in added:
            insort(rest, slot, key=_far_key)
    return tiles, state, first, neighbours, rest, own, inventory_size
