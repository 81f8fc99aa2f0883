"""The text observation: what one agent perceives, as a JSON-ready dict (spec section 5).

Built only when asked (a pure function of the world plus the last action's messages). Keys
follow the original DiscoveryWorld so prompts and parsers carry over; `teleportLocations`
and `availableActions` are additions (docs/differences.md). The typed schema is in
`observation_model.py`.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from mypy_extensions import mypyc_attr

from discoverylab.world.action_specs import action_list
from discoverylab.world.agent import DIRECTIONS, Agent
from discoverylab.world.objects import WorldObject, is_text_audited
from discoverylab.world.reach import accessible_objects
from discoverylab.world.things import Door
from discoverylab.world.world import World

NEARBY_NOTE = (
    "The objects below are at most {r} tiles away from the agent along each axis (the square around it; 'distance' counts the steps, up to twice that), but may not necessarily be usable if they are "
    "obscured by other objects. Only objects in your inventory, on your tile or on the tile you face can be used."
)
FEED_NOTE = "This section contains recent posts (from the last few steps) on the Discovery Feed social media platform."
AGENTS_NOTE = "This section lists the recent action history (last 3 steps) of other agents near you."
_UUID = attrgetter("uuid")
GROUPS = ("north-west", "north", "north-east", "east", "south-east", "south", "south-west", "west", "same_location")
_ACTIONS_CACHE: dict[bool, list[dict[str, object]]] = {}


def _entry(obj: WorldObject) -> dict[str, Any]:
    return {"uuid": obj.uuid, "name": obj.name, "description": obj.describe()}


def _group_name(dx: int, dy: int) -> str:
    if dx == 0 and dy == 0:
        return "same_location"
    ns = "north" if dy < 0 else "south" if dy > 0 else ""
    ew = "west" if dx < 0 else "east" if dx > 0 else ""
    return f"{ns}-{ew}" if ns and ew else ns or ew


_GROUP_TABLE = {(dx, dy): _group_name(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)}


def _group(dx: int, dy: int) -> str:
    return _GROUP_TABLE[((dx > 0) - (dx < 0), (dy > 0) - (dy < 0))]


_WINDOWS: dict[tuple[int, int], list[list[tuple[int, int, int]] | None]] = {}


def _window_at(size: int, radius: int, ax: int, ay: int) -> list[tuple[int, int, int]]:
    """(x * size + y, index into GROUPS, distance) of every in-bounds tile of the window around
    (ax, ay), x-major as the original lists them; cached per world size, radius and position."""
    table = _WINDOWS.get((size, radius))
    if table is None:
        table = _WINDOWS[(size, radius)] = [None] * (size * size)
    cells = table[ax * size + ay]
    if cells is None:
        span = range(-radius, radius + 1)
        cells = table[ax * size + ay] = [
            ((ax + dx) * size + ay + dy, GROUPS.index(_group(dx, dy)), abs(dx) + abs(dy))
            for dx in span
            for dy in span
            if 0 <= ax + dx < size and 0 <= ay + dy < size
        ]
    return cells


def _history_entry(record: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"actionType": record.action}
    for key, arg in (("arg1", record.arg1), ("arg2", record.arg2)):
        if arg is None:
            continue
        if isinstance(arg, WorldObject):
            entry[key] = arg.uuid
            entry[f"{key}_desc"] = f"{arg.name}: {arg.describe()}"
        else:
            entry[key] = arg
    entry.update({"success": record.success, "message": record.message, "step": record.step})
    return entry


def _audited(cls: type[WorldObject]) -> bool:
    """Whether every text of `cls` that a tile shows reads only state whose changes reach
    `World.watch_tiles`: its `describe_state` is marked with `text_state` and its `describe`
    is WorldObject's own."""
    return is_text_audited(cls.describe_state) and cls.describe is WorldObject.describe


_PASSABILITY = (WorldObject.is_passable_now, Door.is_passable_now)  # read `passable`, `is_open`


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
class _TileText:
    """Per world, what each tile shows: `(entries, characters)` with the (name, description,
    uuid) of its visible objects and its characters and devices (whose recent history is read
    live), `UNKNOWN` until first looked at, None for a tile holding an object whose text is not
    audited (described afresh every time). Kept current through `World.watch_tiles`, which hears
    of membership changes and of `WorldObject.text_changed`: most tiles in view never change."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.changed = world.watch_tiles()
        self.cells: list[Any] = [UNKNOWN] * (world.size * world.size)  # x-major, as `_window_at`
        self.free: list[bool | None] = [None] * (world.size * world.size)  # passable? None: not known
        self.audited: dict[type, bool] = {}

    def text(self, i: int) -> tuple[tuple[tuple[str, str, int], ...], tuple[WorldObject, ...]] | None:
        objs = self.world.objects_at(*divmod(i, self.world.size))
        audited = self.audited
        for obj in objs:
            ok = audited.get(type(obj))
            if ok is None:
                ok = audited[type(obj)] = _audited(type(obj))
            if not ok:
                return None
        entries = tuple((o.name, o.describe_state() if o.parent is None else o.describe(), o.uuid) for o in objs)
        return entries, tuple(o for o in objs if o.is_agent or o.dialogable)

    def passable(self, i: int) -> bool:
        """Whether nothing on tile `i` blocks (`World.blocker_at`); kept while the tile is
        unchanged if every object there decides by the engine's own rules (`passable`, a door's
        `is_open`)."""
        x, y = divmod(i, self.world.size)
        passable = self.world.blocker_at(x, y) is None
        stack = self.world.stacks[x][y]
        if all(type(o).is_passable_now in _PASSABILITY for top in stack for o in (top, *top.all_contents())):
            self.free[i] = passable
        return passable

    def refresh(self) -> None:
        if self.changed:
            cells, free, size = self.cells, self.free, self.world.size
            for x, y in self.changed:
                cells[x * size + y] = UNKNOWN
                free[x * size + y] = None
            self.changed.clear()


UNKNOWN = False  # not looked at yet (a singleton that survives pickling and deep copies)


def _tile_text(world: World) -> _TileText:
    index = world.caches.get("tile_text")
    if not isinstance(index, _TileText):
        index = world.caches["tile_text"] = _TileText(world)
    index.refresh()
    return index


def _accessible_entries(agent: Agent, cells: list[Any], inventory: set[int]) -> list[dict[str, Any]] | None:
    """The entries of `actions.accessible_objects` minus the inventory, from the cached text of
    the agent's tile and the tile it faces (a cached description is `describe()`); None when
    either tile is not cached (then ask `accessible_objects`)."""
    world = agent.world
    size = world.size
    dx, dy = DIRECTIONS[agent.facing]
    fx, fy = agent.x + dx, agent.y + dy
    tiles = [cells[agent.x * size + agent.y]]
    if 0 <= fx < size and 0 <= fy < size:
        tiles.append(cells[fx * size + fy])
    found: dict[int, tuple[str, str]] = {}
    me = agent.uuid
    for cell in tiles:
        if not cell:  # UNKNOWN (out of the window) or None (not audited)
            return None
        for name, desc, uuid in cell[0]:
            if uuid != me and uuid not in inventory:
                found[uuid] = (name, desc)
    return [{"uuid": u, "name": found[u][0], "description": found[u][1]} for u in sorted(found)]


def _recent_history(history: list[Any], after: int) -> list[dict[str, Any]]:
    """Entries of the records made after step `after`, oldest first. Walks back from the end
    (records are appended in step order), so the cost does not grow with the episode."""
    start = len(history)
    while start > 0 and history[start - 1].step > after:
        start -= 1
    return [_history_entry(r) for r in history[start:]]


def build_observation(
    agent: Agent,
    task_progress: list[dict[str, Any]],
    last_message: str,
    extended_message: str = "",
    radius: int = 3,
    teleport: bool = True,
) -> dict[str, Any]:
    """Everything the agent perceives this step. Marks every listed UUID as seen."""
    world = agent.world
    seen = agent.seen
    ax, ay = agent.x, agent.y

    nearby: dict[str, list[dict[str, Any]]] = {g: [] for g in GROUPS}
    objects_at = world.objects_at
    seen_add = seen.add
    size = world.size
    recent_step = world.step - 3
    other_agents: dict[str, list[dict[str, Any]]] = {}
    index = _tile_text(world)
    cells = index.cells
    groups = [nearby[g] for g in GROUPS]
    for i, group, dist in _window_at(size, radius, ax, ay):
        out = groups[group]
        cell = cells[i]
        if cell is UNKNOWN:
            cell = cells[i] = index.text(i)
        if cell is not None:
            entries, characters = cell
            for name, desc, uuid in entries:
                seen_add(uuid)
                out.append({"name": name, "description": desc, "distance": dist, "uuid": uuid})
            if characters:
                for obj in characters:
                    if obj is not agent:  # characters and devices
                        recent = _recent_history(obj.history, recent_step)  # type: ignore[attr-defined]
                        other_agents[f"{obj.name} uuid {obj.uuid}"] = recent
            continue
        for obj in objects_at(*divmod(i, size)):  # an object whose text is not audited: describe afresh
            uuid = obj.uuid
            seen_add(uuid)
            desc = obj.describe_state() if obj.parent is None else obj.describe()
            out.append({"name": obj.name, "description": desc, "distance": dist, "uuid": uuid})
            if (obj.is_agent or obj.dialogable) and obj is not agent:
                recent = _recent_history(obj.history, recent_step)  # type: ignore[attr-defined]
                other_agents[f"{obj.name} uuid {uuid}"] = recent

    inventory = sorted(agent.inventory(), key=_UUID)
    inv_ids = {o.uuid for o in inventory}
    seen.update(inv_ids)
    accessible = _accessible_entries(agent, cells, inv_ids)
    if accessible is None:
        objs = sorted((o for u, o in accessible_objects(agent).items() if u not in inv_ids), key=_UUID)
        accessible = [_entry(o) for o in objs]
    for entry in accessible:
        seen_add(entry["uuid"])

    can_move: list[str] = []
    blocked: list[str] = []
    free = index.free
    for name, (dx, dy) in DIRECTIONS.items():
        nx, ny = ax + dx, ay + dy
        if 0 <= nx < size and 0 <= ny < size:
            i = nx * size + ny
            passable = free[i]
            if passable is None:
                passable = index.passable(i)
            (can_move if passable else blocked).append(name)

    partner = agent.dialog_partner
    if partner is not None and partner.dialog_tree is not None:
        tree = partner.dialog_tree
        dialog: dict[str, Any] = {
            "is_in_dialog": True,
            "dialogIn": tree.node().text.format(**partner.props),
            "dialogOptions": {str(i + 1): opt.text for i, opt in enumerate(tree.visible_options())},
        }
    else:
        dialog = {"is_in_dialog": False}

    if teleport not in _ACTIONS_CACHE:
        _ACTIONS_CACHE[teleport] = action_list(teleport)
    obs: dict[str, Any] = {
        "accessibleEnvironmentObjects": accessible,
        "agentLocation": {
            "x": ax,
            "y": ay,
            "faceDirection": agent.facing,
            "directions_you_can_move": can_move,
            "directions_blocked": blocked,
        },
        "dialog_box": dialog,
        "discoveryFeed": {
            "description": FEED_NOTE,
            "posts": world.feed.recent_updates(world.step),
            "scientific_articles": [
                {"step": p.step, "postID": p.post_id, "title": p.title, "author": p.author} for p in world.feed.articles
            ],
        },
        "extended_action_message": extended_message,
        "inventoryObjects": [_entry(o) for o in inventory],
        "lastActionMessage": last_message,
        "nearbyAgents": {"description": AGENTS_NOTE, "list_of_agents": other_agents},
        "nearbyObjects": {"note": NEARBY_NOTE.format(r=radius), "distance": radius, "objects": nearby},
        "taskProgress": task_progress,
        "world_steps": world.step,
    }
    if teleport:
        obs["teleportLocations"] = sorted(world.teleports)
    obs["availableActions"] = _ACTIONS_CACHE[teleport]
    return obs
