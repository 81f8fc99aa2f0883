"""What the RL wrappers see of the world: the agent's window, its object slots, kind ids.

Object slots are the fixed positions that discrete actions and the symbolic observation
share: first the inventory, then the objects within reach (own tile and the tile faced),
then the other objects in view by distance; ground and walls (scenery) are left out. Ties
break by UUID, which carries no task information (UUIDs follow creation, not answers).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter

from mypy_extensions import mypyc_attr

from discoverylab.world.agent import Agent
from discoverylab.world.catalog import templates
from discoverylab.world.objects import WorldObject
from discoverylab.world.reach import accessible_objects
from discoverylab.world.things import Terrain

NUM_KINDS = 256  # kind ids: 0 = nothing, 1..len(catalog) = catalog types, the rest hashed
# Most object slots, teleport locations or dialog options: the pair actions grow as 2K² (2.1M
# at 1,024); 10**6 slots once tried to allocate a 1.8 TiB mask.
MAX_COUNT = 1024


@lru_cache(maxsize=4096)
def kind_id(type_: str) -> int:
    """A stable small id per object type: catalog types first, others by CRC32 into the rest."""
    names = _catalog()
    if type_ in names:
        return names[type_]
    return len(names) + 1 + zlib.crc32(type_.encode()) % (NUM_KINDS - len(names) - 1)


@lru_cache(maxsize=1)
def _catalog() -> dict[str, int]:
    return {name: i + 1 for i, name in enumerate(sorted(templates()))}


@lru_cache(maxsize=4096)
def text_id(text: str) -> int:
    """A stable id in 1..255 for a short text (dialog options)."""
    return 1 + zlib.crc32(text.strip().lower().encode()) % 255


_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")  # what may not touch a whole word


@lru_cache(maxsize=65536)
def mentioned(word: str, text: str) -> bool:
    """Whether `word` appears as a whole word or phrase in `text` (case-insensitive): lowercased,
    an occurrence with no ASCII letter or digit right before or after it. Each new task text
    meets every object name afresh (a miss per name and episode), so occurrences are found with
    `str.find` (a regular expression starting with a look-behind tried every position: ~25k
    instructions a call against ~2k; `tests/test_warm_paths.py` checks both agree)."""
    word = word.strip().lower()
    if not word:
        return False
    text = text.lower()
    size, end, chars = len(word), len(text), _WORD_CHARS
    at = text.find(word)
    while at >= 0:
        after = at + size
        if (at == 0 or text[at - 1] not in chars) and (after == end or text[after] not in chars):
            return True
        at = text.find(word, at + 1)
    return False


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
@dataclass(slots=True)
class Slot:
    obj: WorldObject
    in_inventory: bool
    accessible: bool
    dx: int
    dy: int


def window(agent: Agent, radius: int) -> list[tuple[int, int, list[WorldObject]]]:
    """Visible objects per tile of the (2r+1)^2 window as (dx, dy, objects), row-major by dy, dx;
    tiles outside the world are left out. The agent itself is not listed."""
    world = agent.world
    out = []
    for dy in range(-radius, radius + 1):
        y = agent.y + dy
        if not 0 <= y < world.size:
            continue
        for dx in range(-radius, radius + 1):
            x = agent.x + dx
            if 0 <= x < world.size:
                out.append((dx, dy, [o for o in world.objects_at(x, y) if o is not agent]))
    return out


SlotCandidate = tuple[bool, int, int, WorldObject, bool, bool, int, int]
"""An object in view as a slot candidate: (not reachable, distance, UUID, then its `SlotData`:
object, False (not in the inventory), reachable, dx, dy). Sorting a list of them orders the
slots; ties end at the UUID, which is unique, so objects are never compared."""
SlotData = tuple[WorldObject, bool, bool, int, int]
"""A filled slot as a plain tuple, `Slot`'s fields in order (cheaper to build every step)."""
BY_UUID = attrgetter("uuid")


def object_slots(agent: Agent, radius: int, count: int) -> list[Slot]:
    """Up to `count` slots: inventory, then reachable objects, then the rest of the view."""
    return [Slot(*data) for data in slot_data(agent, radius, count)]


def slot_data(agent: Agent, radius: int, count: int) -> list[SlotData]:
    """`object_slots` as plain tuples, walking the window tile by tile (the symbolic encoder
    gathers the same candidates from its tile mirror)."""
    inventory = sorted(agent.inventory(), key=BY_UUID)
    inv_ids = {o.uuid for o in inventory}
    reach = accessible_objects(agent)
    near: list[SlotCandidate] = []
    for dx, dy, objs in window(agent, radius):
        dist = abs(dx) + abs(dy)
        for obj in objs:
            uuid = obj.uuid
            if uuid in inv_ids or isinstance(obj, Terrain):
                continue
            ok = uuid in reach
            near.append((not ok, dist, uuid, obj, False, ok, dx, dy))
    return assemble_slots(inventory, near, count)


def assemble_slots(inventory: list[WorldObject], near: list[SlotCandidate], count: int) -> list[SlotData]:
    """The inventory (sorted by UUID) first, then the candidates reachable first, by distance,
    then UUID; `near` is sorted in place."""
    near.sort()
    slots: list[SlotData] = [(o, True, True, 0, 0) for o in inventory[:count]]
    slots += [t[3:] for t in near[: count - len(slots)]]  # type: ignore[misc]
    return slots
