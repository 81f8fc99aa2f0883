"""What runs every step in the colony besides its characters: the tickers (the appliances, the
fertilizer bag, the seed jar, the field: its soil, its keeper, the seeds growing in it) and the
scorer's ledger. Compiled with the engine (`make native`, src/discoverylab/native.py): six
tickers tick every step, and an interpreted subclass of a compiled class cost ~3.2k
instructions a tick through mypyc's glue (a Python frame and generic attribute reads). Every
attribute is declared here or in an `__init__` (a compiled object has no `__dict__`).
`things.py` re-exports the tickers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mypy_extensions import mypyc_attr

from discoverylab.world.materials import material
from discoverylab.world.objects import ActionResult, Layer, WorldObject
from discoverylab.world.things import Appliance, FertilizerBag, Jar, SoilTile
from discoverylab.world.unpickle import FastState

if TYPE_CHECKING:
    from discoverylab.world.agent import ActionRecord, Agent
    from discoverylab.world.world import World


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
class FieldSoil(SoilTile):
    """Field soil: ticked by its `FieldKeeper` only from the moment it is dug or given
    something until it is closed again and holds no seed."""

    needs_tick = False
    keeper: FieldKeeper | None = None

    def add(self, obj: WorldObject) -> None:
        super().add(obj)
        self._wake()

    def dig(self, agent: Agent) -> ActionResult:
        result = super().dig(agent)
        self._wake()
        return result

    def _wake(self) -> None:
        keeper = self.keeper
        if keeper is not None:
            keeper.active[self] = None


@mypyc_attr(allow_interpreted_subclasses=True)
class FieldKeeper(WorldObject):
    """One ticker for the whole field: runs the hole logic and the seeds of the tiles that
    were woken (dug or given something), in the order they woke, until they are quiet."""

    needs_tick = True

    def __init__(self, world: World, tiles: list[FieldSoil]) -> None:
        super().__init__(world, "field keeper", "field keeper")
        self.active: dict[FieldSoil, None] = {}
        for tile in tiles:
            tile.keeper = self

    def release(self) -> None:
        self.active = {}  # woken soils point back here (`keeper`): a cycle per dug field

    def tick(self) -> None:
        if not self.active:  # (every tick but while the field is being worked)
            return
        for tile in list(self.active):
            if tile.is_open:
                tile.tick()
            seeds = [o for o in tile.contents if isinstance(o, GrowingSeed)]
            for seed in seeds:
                seed.tick()
            if not tile.is_open and not seeds:
                del self.active[tile]


@mypyc_attr(allow_interpreted_subclasses=True)
class ColonyAppliance(Appliance):
    """The engine's fridge or stove, skipping its per-tick walk when off or empty."""

    def tick(self) -> None:
        if self.activated and self.contents:
            super().tick()


@mypyc_attr(allow_interpreted_subclasses=True)
class ColonyFertilizerBag(FertilizerBag):
    """The engine's bag, with a quick look before counting its pellets each tick."""

    def tick(self) -> None:
        held = self.contents
        if len(held) == 3 and held[0].type == held[1].type == held[2].type == "fertilizer pellet":
            return
        self.refill()  # (never asleep: the colony's characters walk every tick, each step a wake-up call)


def _gone(x: int, y: int) -> WorldObject:
    raise RuntimeError("This seed's world was disposed.")


def _no_seed() -> WorldObject:
    raise RuntimeError("This seed jar's world was disposed.")


@mypyc_attr(allow_interpreted_subclasses=True)
class GrowingSeed(WorldObject):
    """A seed buried in soil (in a tile with its dirt back) grows into a mushroom: a timer of
    10-20 that counts down on each tick with probability (N + P + K of the tile) / 30. Ticked
    by the `FieldKeeper` of the field it is buried in."""

    def __init__(self, world: World, grow: Callable[[int, int], WorldObject]) -> None:
        super().__init__(world, "seed", "seed", [material("seed")])
        self.grow = grow
        self.timer = -1

    def release(self) -> None:
        self.grow = _gone  # a bound method of the scenario, which holds the field and its seeds

    def tick(self) -> None:
        tile = self.parent
        if not isinstance(tile, SoilTile) or tile.has_hole() or self.cooked:
            return
        rng = self.world.rng_objects
        if self.timer < 0:
            self.timer = int(rng.integers(10, 21))
            return
        npk = sum(sum(m.npk) for m in tile.all_materials(include_contents=True))
        if rng.random() < npk / 30:
            self.timer -= 1
        if self.timer <= 0:
            x, y = tile.location()
            self.remove_from_world()
            self.world.place(self.grow(x, y), x, y, Layer.OBJECTS)


@mypyc_attr(allow_interpreted_subclasses=True)
class SeedJar(Jar):
    """Starts with five seeds; every eight ticks, adds one if it holds fewer than five."""

    needs_tick = True

    def __init__(self, world: World, make_seed: Callable[[], WorldObject]) -> None:
        super().__init__(world, "seed jar", "jar", [material("glass")])
        self.make_seed = make_seed
        self.wait = 0
        for _ in range(5):
            self.add(make_seed())

    def release(self) -> None:
        self.make_seed = _no_seed  # a partial over the scenario's grow_mushroom

    def tick(self) -> None:
        self.wait -= 1
        if self.wait > 0:
            return
        self.wait = 8  # it looks at itself every eight ticks
        count = 0
        for obj in self.contents:  # (a loop, not sum() over a generator)
            if obj.type == "seed":
                count += 1
        if count < 5:
            self.add(self.make_seed())


def _unset() -> None:
    raise RuntimeError("The ledger's scorer is not set.")


@mypyc_attr(allow_interpreted_subclasses=True)
class ColonyLedger(FastState):  # (unpickled, attributes inline: `world/unpickle.py`)
    """What the colony's scorer (`SpaceSick.update`, Normal and Challenge) has read so far,
    and the per-tick look that finds nothing new on nearly every tick (`quiet`): interpreted,
    that look cost ~9k instructions a step (a dozen calls and reads of compiled objects)."""

    def __init__(self, player: Agent, histories: list[list[ActionRecord]], watch: dict[int, int],
                 instruments: list[WorldObject], rocks: list[Any]) -> None:  # fmt: skip
        self.player = player
        self.held: list[WorldObject] = []  # everything the agent held at the last read
        self.seen = 0  # the player's records read
        self.histories = histories  # the colonists' (lists that only grow)
        self.marks = [0] * len(histories)  # how far each history has been read
        self.watch = watch  # the scorer's colonists under watch (uuid -> step of the meal)
        self.instruments = instruments
        self.rocks = rocks  # glowing rocks whose light is still to score (Challenge)
        self.score: Callable[[], None] = _unset  # the scorer's own tick (`SpaceSick.__init__`)

    def __call__(self) -> None:
        """The world's per-tick call of the scorer (`World.on_tick`), in its place: the
        scorer's only on a tick with something new (nothing would change on the others:
        `quiet`). The ledger itself, not a bound method, is the callback: compiled, that is a
        builtin method, which `copy.deepcopy` keeps as it is (a clone would score the original)."""
        if not self.quiet():
            self.score()

    def release(self) -> None:
        """Called by `World.dispose`: the scorer's tick is a bound method of the scenario, which
        holds this ledger (a cycle the finished world would wait in for the collector)."""
        self.score = _unset

    def inventory(self) -> list[WorldObject]:
        """Everything the agent holds, containers' contents included (outermost first)."""
        held = list(self.player.contents)
        for obj in held:  # what this loop appends, it visits too
            if obj.contents:
                held.extend(obj.contents)
        return held

    def new_actions(self) -> list[ActionRecord]:
        """The player's records added since the last read (as `Scenario.new_actions`)."""
        history = self.player.history
        start = self.seen
        self.seen = len(history)
        return history[start:]

    def quiet(self) -> bool:
        """Whether this tick has nothing to score: no colonist under watch, no new colonist
        record, no lit rock to score, no successful use of a lab instrument among the player's
        new records (which are then read) and the same inventory. Else nothing is read."""
        if self.watch:
            return False
        histories, marks = self.histories, self.marks
        for i in range(len(histories)):
            if len(histories[i]) != marks[i]:
                return False
        for rock in self.rocks:
            if rock.luminous:
                return False
        history = self.player.history
        end = len(history)
        instruments = self.instruments
        for i in range(self.seen, end):
            record = history[i]
            if record.action == "USE" and record.success and record.arg1 in instruments:
                return False
        if not self._same_inventory():
            return False
        self.seen = end
        return True

    def _same_inventory(self) -> bool:
        """`inventory() == held`, without building the list when nothing held holds anything."""
        contents, held = self.player.contents, self.held
        if len(contents) != len(held):
            return len(contents) < len(held) and self.inventory() == held
        for i in range(len(contents)):
            obj = contents[i]
            if obj is not held[i] or obj.contents:
                return self.inventory() == held
        return True
