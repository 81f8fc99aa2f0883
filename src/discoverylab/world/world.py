"""The world: a 32x32 grid of 6-layer tiles, the object registry, time and randomness.

Each tile is one list, `stacks[x][y]`: its top-level objects sorted by layer, top layer first,
in arrival order within a layer (`layer_at` reads one layer of it). One structure, not a
second per-layer grid beside it: a reset builds (and frees) 1,024 lists instead of 7,168.

All randomness of an episode comes from one seed split into named child streams, so a
scenario's layout, NPC wandering and instrument noise never perturb each other. The seed itself
stays private (`_seed`, and the streams are rebuilt without their `SeedSequence`): a sealed
test instance's seed must not be readable from the world an agent plays in.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from mypy_extensions import mypyc_attr

from discoverylab.world import spares
from discoverylab.world.feed import DiscoveryFeed
from discoverylab.world.objects import Layer, WorldObject, stack_insert, visible_into
from discoverylab.world.streams import NpcDraws, seeded_rng
from discoverylab.world.tick_pause import KEY as TICK_PAUSE
from discoverylab.world.tick_pause import TickPause, pause_tick
from discoverylab.world.unpickle import FastState
from discoverylab.world.uuids import UUID_LIMIT, UuidPool
from discoverylab.world.zones import ReachPlan, door_reach, door_zones, label_zones

if TYPE_CHECKING:
    from discoverylab.world.agent import Agent

WORLD_SIZE = 32
_RELEASING: dict[type, bool] = {}  # per object class: whether it overrides `WorldObject.release`
_HAS_DICT: dict[type, bool] = {}  # per object class: whether its objects have a `__dict__` (`dispose`)


@mypyc_attr(native_class=False)  # compiled (`make native`): mypyc cannot extend RuntimeError natively
class WorldError(RuntimeError):
    """A programming error while building or changing the world (not an agent mistake)."""


@mypyc_attr(native_class=False)  # compiled: mypyc cannot extend set natively
class TileWatch(set[tuple[int, int]], FastState):
    """The tiles reported to one watcher (`World.watch_tiles`); moves of `mover` itself (placing
    it on the grid, walking it, taking it off) are not recorded."""

    mover: WorldObject | None = None


def _untie_fields(obj: WorldObject) -> None:
    """`dispose`'s untying of a character or device whose attributes are compiled fields: the
    links emptied instead of removed."""
    for key, empty in (("dialog_tree", None), ("dialog_partner", None), ("history", [])):
        if hasattr(obj, key):
            setattr(obj, key, empty)


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
class World(FastState):
    """Grid, registry and clock. Scenarios build it; actions and ticks change it."""

    # Streams made on first read (children 0, 2 and 3 of `SeedSequence(seed)`, by the properties
    # `rng_build`, `rng_noise`, `rng_objects`): the layout's, which a scenario replaces at once
    # (`reseed_build`), and the two that few tasks read (an instrument's noise, a theme's
    # objects): two streams less per reset. Not the NPC stream, which NPCs read every tick. Class-level
    # defaults, not set in `__init__`: a World past 30 instance attributes leaves CPython 3.11's
    # shared key table (+1.4% of Proteomics' `World.tick`). Properties, not a descriptor that
    # fills `__dict__`: a compiled (mypyc) class has none.
    _rng_build: np.random.Generator | None = None
    _rng_noise: np.random.Generator | None = None
    _rng_objects: np.random.Generator | None = None
    _fills: spares.Fills | None = None  # `record_fill`'s, for the next world (`dispose`)

    def __init__(self, seed: int, size: int = WORLD_SIZE) -> None:
        self._seed = int(seed)
        self.size = size
        # Child 1 of `SeedSequence(seed)` (what its `spawn(5)` gave; 4 is the UUID pool's), without the spawn.
        # Read by the characters through a block drawn ahead (`NpcDraws`); others read `rng_npc`.
        self.npc_draws = NpcDraws(self._stream(1))
        # Per tile, the top-level objects top layer first: the observation scans this flat list.
        # A disposed world's emptied lists when one is kept (`spares.take_stacks`).
        self.stacks: list[list[list[WorldObject]]] = spares.take_stacks(size) or [[[] for _ in range(size)] for _ in range(size)]
        self.objects: dict[int, WorldObject] = {}
        # What `dispose` unties: objects built by a constructor (`register`: characters, devices,
        # custom releasers, whatever `spawn` makes; plain kinds that `catalog.place` builds inline
        # are never registered) and every object ever given contents or parts (`add`, `add_part`).
        self._built: dict[int, WorldObject] = {}
        self.holders: dict[WorldObject, None] = {}
        self._uuid_pool = UuidPool(self._stream(4))  # see world/uuids.py
        self._uuid_index = 0
        self._uuids = self._uuid_pool.drawn  # the pool's entries drawn so far, extended as needed
        self._passages: list[WorldObject] | None = None
        self._walls: list[tuple[int, int]] = []  # the walls' tiles (zones._closed_doors)
        self._zones: dict[tuple[bool, tuple[tuple[int, int], ...]], list[list[int]]] = {}
        self._reach: dict[tuple[bool, tuple[tuple[int, int], ...]], tuple[ReachPlan, list[int]]] = {}  # zones.door_reach
        self._wall_free: int | None = None  # every tile but the walls, as a zone mask (zones.door_reach)
        self._tickers: list[WorldObject] = []
        self.removed_holders: list[WorldObject] = []  # destroyed objects that held others (see `dispose`)
        self._ticking: tuple[WorldObject, ...] = ()  # `tick`'s snapshot of the live tickers
        self._tickers_dirty = False
        self.agents: list[Agent] = []  # the player first, then NPCs in creation order
        self.feed = DiscoveryFeed()
        self.teleports: dict[str, tuple[int, int]] = {}
        self.step = 0
        self.background_radiation = 0.05
        self.on_tick: list[Callable[[], None]] = []
        self._watchers: list[TileWatch] = []  # see `watch_tiles`
        self.caches: dict[str, object] = {}  # per-world caches of observation builders (rebuilt when missing)

    def _stream(self, child: int) -> np.random.Generator:
        """Child `child` of `SeedSequence(seed)`: what `spawn(5)[child]` is, made alone (its
        words hashed by `seeded_rng`, not by a `SeedSequence`)."""
        return seeded_rng(self._seed, (child,))

    @property
    def rng_npc(self) -> np.random.Generator:
        """The NPC stream (child 1) where the characters' draws left it (`NpcDraws.settled`)."""
        return self.npc_draws.settled()

    @rng_npc.setter
    def rng_npc(self, rng: np.random.Generator) -> None:
        self.npc_draws = NpcDraws(rng)
        self.npc_draws.adopt = True  # (it may keep a half of a word)

    @property
    def rng_build(self) -> np.random.Generator:
        """The layout's stream (child 0; a scenario replaces it at once: `reseed_build`)."""
        rng = self._rng_build
        if rng is None:
            rng = self._rng_build = self._stream(0)
        return rng

    @rng_build.setter
    def rng_build(self, rng: np.random.Generator) -> None:
        self._rng_build = rng

    @property
    def rng_noise(self) -> np.random.Generator:
        """An instrument's noise (child 2)."""
        rng = self._rng_noise
        if rng is None:
            rng = self._rng_noise = self._stream(2)
        return rng

    @property
    def rng_objects(self) -> np.random.Generator:
        """A theme's objects' stream (child 3)."""
        rng = self._rng_objects
        if rng is None:
            rng = self._rng_objects = self._stream(3)
        return rng

    def reseed_build(self, label: str) -> None:
        """Draw the layout from (seed, label) instead of the seed alone, so that e.g. two
        difficulties of one seed share nothing (the answer of one is not shown by the other)."""
        self.rng_build = self.child_rng(label)

    def child_rng(self, label: str) -> np.random.Generator:
        """A stream of its own for (seed, label): e.g. a scenario's answer, drawn independently of
        the layout draws and of other instances (no arithmetic on the seed, no blocks of seeds)."""
        return seeded_rng([self._seed, zlib.crc32(label.encode("utf-8"))])

    def fresh(self) -> World:
        """A new, unbuilt world on this one's seed (sealed or not), for evaluator-side gold that
        needs the instance's starting state after the episode changed it."""
        return World(self._seed, self.size)

    @property
    def sealed(self) -> bool:
        """A sealed test instance's world: what it tells the agent never says how the task went."""
        return self._seed >= 2**32

    @property
    def seed(self) -> int:
        """A public world's seed (< 2**32); a sealed one refuses. Transitional: draw from `child_rng`."""
        if self.sealed:
            raise WorldError("This world is sealed: its seed is not readable; draw from world.child_rng(label).")
        return self._seed

    # ---- registry ---------------------------------------------------------------------
    def next_uuid(self) -> int:
        """The pool's next UUID (`register` files the object under it)."""
        i = self._uuid_index
        if i >= len(self._uuids):  # a block of ints at a time: cheaper than a numpy scalar per object
            if i >= UUID_LIMIT:
                raise WorldError(f"Too many objects: the UUID pool ({UUID_LIMIT}) is exhausted.")
            self._uuid_pool.extend(i + 1)
        self._uuid_index = i + 1
        return self._uuids[i]

    def register(self, obj: WorldObject) -> int:
        uuid = self.next_uuid()
        self.objects[uuid] = self._built[uuid] = obj
        if obj.needs_tick:
            self._tickers.append(obj)
            self._tickers_dirty = True  # joins `tick`'s snapshot from the next tick on
        return uuid

    def take_uuids(self, count: int) -> list[int]:
        """The next `count` UUIDs of the pool, as `register` would hand them out one by one (for
        builders that create many plain objects at once; they add them to `objects` themselves)."""
        i = self._uuid_index
        if i + count > UUID_LIMIT:
            raise WorldError(f"Too many objects: the UUID pool ({UUID_LIMIT}) is exhausted.")
        if i + count > len(self._uuids):
            self._uuid_pool.extend(i + count)
        self._uuid_index = i + count
        return self._uuids[i : i + count]

    def record_fill(self, kind: str, objs: list[WorldObject], uuids: list[int]) -> None:
        """Note plain objects of `kind` built as `catalog.build_plain` builds them (the grass
        fill, a building's floors and walls, `catalog.place`'s shared scenery): once this world
        is disposed, the next world's builds of `kind` may reuse those left untouched (`world/spares.py`)."""
        fills = self._fills
        if fills is None:
            fills = self._fills = {}
        known = fills.get(kind)
        if known is None:
            fills[kind] = (objs, uuids)
        else:
            known[0].extend(objs)
            known[1].extend(uuids)

    def unregister(self, obj: WorldObject) -> None:
        self.objects.pop(obj.uuid, None)
        self._built.pop(obj.uuid, None)  # a destroyed holder is in `removed_holders`: `dispose` still unties it
        self.holders.pop(obj, None)
        if obj.needs_tick:
            self._tickers_dirty = True  # `tick` drops the dead ones once

    def add_agent(self, agent: Agent) -> None:
        self.agents.append(agent)

    @property
    def player(self) -> Agent:
        return self.agents[0]

    # ---- grid -------------------------------------------------------------------------
    def watch_tiles(self, mover: WorldObject | None = None) -> TileWatch:
        """A set that collects every tile whose objects change from now on (placed, removed, or
        their contents changed), for a consumer that keeps per-tile state and clears the set as
        it catches up (the RL symbolic encoder). Nothing is recorded while nobody watches.
        `mover`: an object whose own moves the consumer follows itself (it keeps the tiles as
        if `mover` were not there: `objects_at(..., skip=mover)`); changes of what it holds are
        still reported, at its tile."""
        watcher = TileWatch()
        watcher.mover = mover
        self._watchers.append(watcher)
        return watcher

    def unwatch_tiles(self, watcher: set[tuple[int, int]]) -> None:
        self._watchers = [w for w in self._watchers if w is not watcher]

    def touch(self, x: int, y: int) -> None:
        """Tell the watchers that tile (x, y) changed."""
        for watcher in self._watchers:
            watcher.add((x, y))

    def _moved(self, obj: WorldObject, x: int, y: int) -> None:
        """Tell the watchers that `obj` arrived at or left tile (x, y) (see `watch_tiles`)."""
        for watcher in self._watchers:
            if watcher.mover is not obj:
                watcher.add((x, y))

    def in_bounds(self, x: int, y: int) -> bool:
        return 0 <= x < self.size and 0 <= y < self.size

    def place(self, obj: WorldObject, x: int, y: int, layer: Layer | None = None) -> WorldObject:
        """Put `obj` top-level on tile (x, y) (moving it from wherever it was)."""
        if not (0 <= x < self.size and 0 <= y < self.size):
            raise WorldError(f"Cannot place {obj.name!r} at ({x}, {y}): outside the {self.size}x{self.size} world.")
        if obj.parent is not None or obj.layer is not None:  # a new object (most, while building) is nowhere yet
            obj.detach()
        if layer is None:
            layer = obj.layer_hint if obj.layer_hint is not None else obj.default_layer
        obj.x, obj.y, obj.layer = x, y, layer
        stack = self.stacks[x][y]
        stack_insert(stack, obj, layer)
        if self._watchers:
            self._moved(obj, x, y)
        return obj

    def walk(self, obj: WorldObject, x: int, y: int, quiet: TileWatch | None = None) -> None:
        """`place(obj, x, y)` for a top-level object already on the grid at its usual layer (a
        character's step): the same lists, order and watcher reports, without the detach and
        layer work, since seven characters may step every tick. Anything else goes to `place`.
        `quiet`: a watcher not told of this walk, as if `obj` were its `mover` meanwhile
        (`paths.walk_unheard`: the path cache)."""
        layer, hint = obj.layer, obj.layer_hint
        if (
            obj.parent is not None or layer is None or layer is not (hint if hint is not None else obj.default_layer)
            or not (0 <= x < self.size and 0 <= y < self.size)
        ):  # fmt: skip
            self._place_unheard(obj, x, y, quiet)
            return
        ox, oy = obj.x, obj.y
        try:
            self.stacks[ox][oy].remove(obj)
        except ValueError:  # not where it claims to be: `place` copes
            self._place_unheard(obj, x, y, quiet)
            return
        obj.x, obj.y = x, y
        stack = self.stacks[x][y]
        if stack and stack[-1].layer < layer and (top := stack[0].layer) is not None and top < layer:  # type: ignore[operator]
            stack.insert(0, obj)  # where `stack_insert`'s scan stops at once (a character onto grass)
        else:
            stack_insert(stack, obj, layer)
        for watcher in self._watchers:  # `_moved` inline, twice: the world's most frequent change
            if watcher is not quiet and watcher.mover is not obj:  # (one loop for both tiles)
                tiles: set[tuple[int, int]] = watcher  # (its own `add`: a set's, called as one)
                tiles.add((ox, oy))
                tiles.add((x, y))

    def _place_unheard(self, obj: WorldObject, x: int, y: int, quiet: TileWatch | None) -> None:
        """`place(obj, x, y)` with `quiet` (if any) not told of `obj`'s moves meanwhile."""
        if quiet is None:
            self.place(obj, x, y)
            return
        mover, quiet.mover = quiet.mover, obj
        try:
            self.place(obj, x, y)
        finally:
            quiet.mover = mover

    def grid_remove(self, obj: WorldObject) -> None:
        if obj.layer is None:
            return
        stack = self.stacks[obj.x][obj.y]
        if obj in stack:
            stack.remove(obj)
            if self._watchers:
                self._moved(obj, obj.x, obj.y)
        obj.layer = None

    def layer_at(self, x: int, y: int, layer: Layer) -> list[WorldObject]:
        """The top-level objects on one layer of tile (x, y), in arrival order (a new list)."""
        return [obj for obj in self.stacks[x][y] if obj.layer == layer]

    def top_level_at(self, x: int, y: int) -> list[WorldObject]:
        """Top-level objects on a tile, top layer first (a copy: safe to mutate the tile)."""
        return list(self.stacks[x][y])

    def objects_at(self, x: int, y: int, respect_obscuring: bool = True, skip: WorldObject | None = None) -> list[WorldObject]:
        """What an observer sees on a tile: top-down, each object then its visible contents;
        stops below the first layer holding an obscuring object (floors hide the grass).
        `skip`: a top-level object to see the tile without (as if it stood elsewhere)."""
        out: list[WorldObject] = []
        layer = None
        obscured = False
        stack = self.stacks[x][y] if skip is None else self._stack_without(x, y, skip)
        for obj in stack:
            if obj.layer != layer:
                if obscured and respect_obscuring:
                    break
                layer = obj.layer
            out.append(obj)
            if obj.obscures_below:
                obscured = True
            if obj.contents and obj.is_open and visible_into(obj.contents, out):
                obscured = True
        return out

    def _stack_without(self, x: int, y: int, skip: WorldObject) -> list[WorldObject]:
        """The tile's stack as if `skip` stood elsewhere (`objects_at`, `blocker_at`)."""
        stack = self.stacks[x][y]
        return [o for o in stack if o is not skip] if skip in stack else stack

    def blocker_at(self, x: int, y: int, skip: WorldObject | None = None) -> WorldObject | None:
        """The first impassable thing on a tile (closed contents included), else None; `skip`
        as for `objects_at`."""
        return _first_blocker(self.stacks[x][y] if skip is None else self._stack_without(x, y, skip))

    def is_passable(self, x: int, y: int) -> bool:
        return 0 <= x < self.size and 0 <= y < self.size and self.blocker_at(x, y) is None

    def door_zones(self, locked_only: bool) -> list[list[int]] | None:
        """Per tile, the number of its zone: the tiles connected without crossing a wall or a
        closed door (only a locked one if `locked_only`). None when no such door exists. Cached
        until a door opens or closes (walls never move once built): `zones.door_zones`."""
        return door_zones(self, locked_only)

    def door_reach(self, locked_only: bool, x: int, y: int) -> int | None:
        """The tiles of (x, y)'s door zone as a bit mask (`zones.tile_bit`), None when no closed
        (locked) door exists: what teleports ask (`zones.door_reach`)."""
        return door_reach(self, locked_only, x, y)

    def _label_zones(self, barrier: set[tuple[int, int]]) -> list[list[int]]:
        """Zone numbers per tile, [x][y] (`zones.label_zones`)."""
        return label_zones(self.size, barrier)

    def find(self, predicate: Callable[[WorldObject], bool]) -> list[WorldObject]:
        """All live objects matching `predicate` (for scenario building and scoring)."""
        return [obj for obj in self.objects.values() if predicate(obj)]

    def dispose(self) -> None:
        """Break the object graph's reference cycles so a finished world is freed at once by
        reference counting instead of waiting for (and slowing) the cyclic garbage collector.
        Only what can be in a cycle is visited: registered objects (`_built`) and holders, live
        or destroyed; plain objects built inline (a thousand grass tiles) are freed without a visit.
        Last, the fills it recorded (`record_fill`) go to `world/spares.py`: the next fill of
        their kind reuses the untouched ones (they keep this emptied world alive until then)."""
        destroyed, pending = [], list(self.removed_holders)  # destroyed subtrees are no longer in `objects`
        while pending:
            obj = pending.pop()
            destroyed.append(obj)
            pending += obj.contents + obj.parts
        releasing = _RELEASING
        for obj in (*self._built.values(), *self.holders, *destroyed):
            cls = type(obj)
            custom = releasing.get(cls)
            if custom is None:
                custom = releasing[cls] = cls.release is not WorldObject.release
            if custom:
                obj.release()  # links a class of its own keeps (e.g. callbacks into its scenario)
            if obj.contents:  # only what is set: most objects hold nothing
                obj.contents = []
            if obj.parts:
                obj.parts = []
            if obj.parent is not None:
                obj.parent = None
            if obj.is_agent or obj.dialogable:  # characters and devices: partners point at each other, trees and records at them
                has_dict = _HAS_DICT.get(cls)
                if has_dict is None:  # per class: a compiled one's AttributeError cost ~5,000 instructions each time
                    has_dict = _HAS_DICT[cls] = hasattr(obj, "__dict__")
                if has_dict:
                    attrs = obj.__dict__
                    for key in ("dialog_tree", "dialog_partner", "history"):
                        attrs.pop(key, None)
                else:  # a compiled class (`make native`): typed fields, no dict
                    _untie_fields(obj)
        if self._fills:  # the plain objects it built: the next world's builds may reuse the untouched ones
            spares.offer(self, self._fills)
            self._fills = None
        for hook in self.on_tick:  # a per-tick callable object may hold its scenario (Space Sick's ledger)
            release = getattr(hook, "release", None)
            if release is not None:
                release()
        self.objects, self.removed_holders, self.agents, self.on_tick = {}, [], [], []
        self._built, self.holders = {}, {}
        self._uuid_pool.close()
        self._passages, self._zones, self._reach, self._wall_free = None, {}, {}, None
        self._tickers, self._ticking, self._watchers = [], (), []
        stacks, self.caches, self.stacks = self.stacks, {}, []
        spares.offer_stacks(stacks, self.size)  # emptied for the next world's, when nothing else holds them

    # ---- time -------------------------------------------------------------------------
    def pause_tick_until_touched(self, obj: WorldObject) -> None:
        """Leave the ticker `obj` (on the grid, or in something on it) out of `tick`'s loop until
        its tile is reported changed (`watch_tiles`), for an object whose tick does nothing until
        then (covered soil): it ticks again in its place in the order (world/tick_pause.py)."""
        pause_tick(self, obj)

    def tick(self) -> None:
        """Advance one step: object behaviours, then scorers and observers, then feed signals."""
        if self._tickers_dirty:  # objects created or destroyed since: a new snapshot
            self._tickers = [obj for obj in self._tickers if obj.alive]
            self._ticking = tuple(self._tickers)
            self._tickers_dirty = False
        # Typed (only `pause_tick` stores it): compiled, `pause.tick` is then a direct call, not a
        # look-up of the method by name (~260 instructions a step).
        pause: TickPause | None = self.caches.get(TICK_PAUSE)  # type: ignore[assignment]
        if pause is None:
            for obj in self._ticking:  # one created during this loop first ticks next step
                if obj.alive:
                    obj.tick()
        else:  # the same loop without the objects asleep (`pause_tick_until_touched`)
            pause.tick(self)
        for callback in self.on_tick:
            callback()
        signals = self.feed.signals.get(self.step)  # `signals_at` without its call: mostly none
        if signals:
            for signal in signals:
                for agent in self.agents:
                    agent.states.add(signal)
        self.step += 1


def _first_blocker(objs: list[WorldObject]) -> WorldObject | None:
    """The first impassable object of `objs`, each followed by its `all_contents()` (in that
    order), else None. A recursive loop, not that generator: compiled, each of its items cost
    ~560 instructions, and characters look for blockers on every step they take (a table's
    stack of plates, say)."""
    for obj in objs:
        if not obj.is_passable_now():
            return obj
        if obj.contents:
            inside = _first_blocker(obj.contents)
            if inside is not None:
                return inside
    return None
