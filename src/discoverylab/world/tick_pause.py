"""Tickers that sleep until their tile changes: `World.pause_tick_until_touched`.

A covered soil tile (closed, holding its dirt) ticks every step for nothing: ~1.1k
instructions per tile per tick, and a village holds 21 of them. Such an object may ask to
be left out of `World.tick`'s loop while its tick would do nothing, which for soil holds until
something on its tile changes (its lid, its contents, what lies there), which `World.watch_tiles`
reports. A report wakes it; if that happens during the loop and it ranks after the object
whose tick caused it, it still ticks in this loop, where the plain loop would have ticked it:
the ticks run in the same order, with the same effects, as if it never slept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from mypy_extensions import mypyc_attr

from discoverylab.world.unpickle import FastState

if TYPE_CHECKING:
    from discoverylab.world.objects import WorldObject
    from discoverylab.world.world import TileWatch, World

KEY: Final = "tick_pause"  # its entry in `World.caches` (emptied by `dispose`: no cycle outlives the world)


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
class TickPause(FastState):
    """Per world: the paused tickers by the tile they were paused on, the tile watcher that
    wakes them, and the live snapshot minus the paused ones (`active`, made when needed)."""

    def __init__(self, world: World) -> None:
        self.wake: TileWatch = world.watch_tiles()
        self.at: dict[tuple[int, int], list[WorldObject]] = {}
        self.tiles: set[tuple[int, int]] = set()  # the keys of `at`: `wake.isdisjoint` in C
        self.paused: set[WorldObject] = set()
        self.order: tuple[WorldObject, ...] | None = None  # the world's snapshot `active` was made from
        self.active: tuple[WorldObject, ...] = ()

    def pause(self, obj: WorldObject) -> None:
        """Leave `obj` out of the tick loop until its tile (its outermost holder's) is reported;
        only a ticker on the grid or in something on it, whose changes that tile reports
        (anything else is left as it is)."""
        root = obj.root()
        if root.layer is None or not obj.needs_tick or obj in self.paused:
            return
        tile = (root.x, root.y)
        self.paused.add(obj)
        self.at.setdefault(tile, []).append(obj)
        self.tiles.add(tile)
        self.order = None

    def woken(self) -> bool:
        """Resume the paused objects on the reported tiles (the reports are consumed); whether any."""
        # `get` and `del`, not `pop(tile, None)`, and the watcher read as the set it is: compiled,
        # primitives instead of method calls by name (~600 instructions each).
        at, woke = self.at, False
        wake: set[tuple[int, int]] = self.wake
        for tile in wake:
            objs = at.get(tile)
            if objs is not None:
                del at[tile]
            if objs:
                self.tiles.discard(tile)
                self.paused.difference_update(objs)
                woke = True
        wake.clear()
        if woke:
            self.order = None
        return woke

    def tick(self, world: World) -> None:
        """`World.tick`'s loop over its snapshot (`_ticking`) without the paused objects; after
        each tick, reported tiles wake theirs, and the rest of the loop is taken from the
        snapshot again (a woken object ranked later ticks in this loop, as it would have)."""
        wake: set[tuple[int, int]] = self.wake  # (as a set: compiled, its own length test and `clear`)
        tiles = self.tiles
        if wake:  # (mostly the agent's own step, far from any sleeper: one C-level test)
            if wake.isdisjoint(tiles):
                wake.clear()
            else:
                self.woken()
        order = world._ticking
        if self.order is not order:
            paused = self.paused
            self.active = tuple([o for o in order if o not in paused]) if paused else order
            self.order = order
        todo = self.active
        while todo:
            rest: tuple[WorldObject, ...] = ()
            for obj in todo:
                if obj.alive:
                    obj.tick()
                if wake:  # (a character's step: no sleeper there, mostly)
                    if wake.isdisjoint(tiles):
                        wake.clear()
                    elif self.woken():
                        paused = self.paused
                        rest = tuple([o for o in order[order.index(obj) + 1 :] if o not in paused])
                        break
            todo = rest


def pause_tick(world: World, obj: WorldObject) -> None:
    """`World.pause_tick_until_touched`: the world's `TickPause`, made on first use."""
    pause = world.caches.get(KEY)
    if pause is None:
        pause = world.caches[KEY] = TickPause(world)
    assert isinstance(pause, TickPause)
    pause.pause(obj)
