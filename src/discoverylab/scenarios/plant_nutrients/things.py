"""Plant Nutrients pieces: nutrient soil, the soil nutrient meter, seeds that grow only under a
nutrient rule, the refilling seed jar and the soil controllers (NPC devices).

Importing this module registers the soil nutrient meter's reader in `instruments.READERS`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from discoverylab.world import instruments
from discoverylab.world.agent import Agent
from discoverylab.world.catalog import spawn
from discoverylab.world.devices import Device
from discoverylab.world.instruments import Instrument
from discoverylab.world.materials import material
from discoverylab.world.objects import ActionResult, WorldObject
from discoverylab.world.things import Jar, SoilTile
from discoverylab.world.world import World

NUTRIENTS = ("potassium", "titanium", "lithium", "thorium", "barium")
LEVELS = {0: "zero", 1: "low", 2: "medium", 3: "high"}
METER = "soil nutrient meter"
MUSHROOM_COLORS = ("red", "green", "yellow", "pink")  # TSV mushroom1..4
KEY = "soilNutrients"


def levels_of(obj: WorldObject) -> dict[str, int]:
    """The soil nutrient levels an object carries (empty for anything but soil and its dirt)."""
    value = obj.props.get(KEY)
    return dict(value) if isinstance(value, dict) else {}


def _meter(inst: Instrument, obj: WorldObject) -> str:
    head = f"You use the soil nutrient meter to investigate the {obj.name}.\n"
    levels = levels_of(obj)
    if not levels:
        return head + "The results are inconclusive.\n"
    return (
        head + "The results are as follows:\n" + "".join(f"- {n}: {LEVELS[v]}\n" for n, v in levels.items())
    )


instruments.READERS[METER] = _meter


class NutrientSoil(SoilTile):
    """A soil tile with `soilNutrients`; digging copies them onto the dirt."""

    def dig(self, agent: Agent) -> ActionResult:
        dirt = next((o for o in self.contents if o.type == "dirt"), None)
        if dirt is not None:
            dirt.props[KEY] = levels_of(self)
        return super().dig(agent)


def make_soil(world: World, x: int, y: int, levels: Mapping[str, int]) -> NutrientSoil:
    from discoverylab.scenarios.layout import clear_ground

    clear_ground(world, x, y)
    tile = NutrientSoil(world, "soil", "soil", [])
    tile.props[KEY] = {n: int(levels.get(n, 0)) for n in NUTRIENTS}
    tile.add(spawn(world, "dirt"))
    world.place(tile, x, y)
    return tile


def make_meter(world: World) -> Instrument:
    return Instrument(world, METER, METER, [material("metal")])


@dataclass(frozen=True, slots=True)
class Rule:
    """When a seed grows. kind: "is" (n1 == v1, Normal) or a two-nutrient rule (Challenge):
    "and" (n1 == v1 and n2 == v2), "or" / "xor" (both present, and n1 == v1 or / xor n2 == v2),
    "not" (n1 == v1, and n2 present but != v2: at v2 it stops the seed).

    Every Challenge rule needs both of its nutrients in the soil. In the original "or", "xor" and
    a one-nutrient "not" (n1 present, != v1) held for a single nutrient at one level, so three
    fixed test fields of two nutrients each, set without measuring anything, grew plants on 51%
    of seeds; now a field must hold the right pair (and levels), and no fixed setting beats a
    random one (tests/attacks/test_attacks_plant_nutrients.py). The pilot plots carry every
    nutrient, so they read the same under both versions."""

    kind: str
    n1: str
    v1: int
    n2: str = ""
    v2: int = 0

    def holds(self, levels: Mapping[str, int]) -> bool:
        """(Buried seeds ask every tick: one branch per kind, no table of every kind's answer.)"""
        level1, level2 = levels.get(self.n1, 0), levels.get(self.n2, 0) if self.n2 else 0
        a, kind = level1 == self.v1, self.kind
        if kind == "is":
            return a
        b = bool(self.n2) and level2 == self.v2
        if kind == "and":
            return a and b
        both = level1 > 0 and level2 > 0
        if kind == "or":
            return both and (a or b)
        if kind == "xor":
            return both and a != b
        if kind == "not":
            return a and level2 > 0 and not b
        raise KeyError(kind)

    def sentence(self) -> str:
        one, two = f"{self.n1} is present at a {LEVELS[self.v1]} level", ""
        if self.n2:
            two = f"{self.n2} is present at a {LEVELS[self.v2]} level"
        both = f"both {self.n1} and {self.n2} are present"
        if self.kind == "xor":
            return f"The seed will grow if {both}, and either {one}, or {two}, but not both."
        if self.kind == "and":
            return f"The seed will grow if both {one}, and {two}."
        if self.kind == "or":
            return f"The seed will grow if {both}, and either {one}, or {two}."
        if self.kind == "not":
            return (f"The seed will grow if {one}, and {self.n2} is present but NOT at a {LEVELS[self.v2]} "
                    f"level.")  # fmt: skip
        return f"The seed will grow if {one}."


class NutrientSeed(WorldObject):
    """A seed that grows into a mushroom when buried in soil whose levels satisfy its rule.

    Each tick, if its direct parent is a soil tile without a hole, the rule holds on the tile's
    levels and it is not cooked: the first such tick sets a timer U{3..6}, later ones count it
    down, and the first such tick at 0 replaces the seed by a mushroom lying on the tile (with
    `locationGrown`). Ticks where a condition fails change nothing.
    """

    needs_tick = True

    def __init__(self, world: World, rule: Rule) -> None:
        super().__init__(world, "seed", "seed", [material("seed")])
        self.rule = rule
        self.timer: int | None = None

    def tick(self) -> None:
        tile = self.parent
        if not isinstance(tile, SoilTile) or self.cooked:
            return
        # In soil, with a hole or levels its rule rejects, a seed waits for the soil's contents
        # or levels to change, which its tile reports (`_imprint` too): asleep till then.
        if tile.has_hole():
            self.world.pause_tick_until_touched(self)
            return
        levels = tile.props.get(KEY)  # `levels_of` without its copy: `holds` only reads
        if not self.rule.holds(levels if isinstance(levels, dict) else {}):
            self.world.pause_tick_until_touched(self)
            return
        if self.timer is None:
            self.timer = int(self.world.rng_noise.integers(3, 7))
        elif self.timer > 0:
            self.timer -= 1
        else:
            x, y = tile.x, tile.y
            color = MUSHROOM_COLORS[int(self.world.rng_noise.integers(0, 4))]
            self.remove_from_world()
            mushroom = spawn(self.world, "mushroom", color=color)
            mushroom.props["locationGrown"] = (x, y)
            self.world.place(mushroom, x, y)


class SeedJar(Jar):
    """The seed jar; with `refill` it gets a new seed on every tick it holds none."""

    needs_tick = True

    def __init__(self, world: World, rule: Rule, refill: bool) -> None:
        super().__init__(world, "seed jar", "jar", [material("glass")])
        self.rule = rule
        self.refill = refill

    def tick(self) -> None:
        if not self.refill:
            return
        for obj in self.contents:  # a loop, not any() over a generator: every tick
            if obj.type == "seed":
                return
        self.add(NutrientSeed(self.world, self.rule))


class SoilController(Device):
    """A field's controller: pick a level per nutrient, then imprint them on the field once.

    Pending selections are states (`<nutrient>_<level>`) kept across conversations; imprinting
    sets every tile of the field (unselected nutrients 0) and swaps in a read-only menu. At most
    `max_nutrients` nutrients can be selected (state `full` hides the others' Set options), so a
    field tests one hypothesis, not every nutrient at once (no "all five at level k" sweep).
    """

    def __init__(self, world: World, number: int, field: Sequence[SoilTile], max_nutrients: int = 5) -> None:
        super().__init__(world, f"soil nutrient controller (field #{number})", "soil controller",
                         [material("metal")], sprite="computer")  # fmt: skip
        self.number = number
        self.field = list(field)
        self.imprinted: dict[str, int] | None = None
        self.max_nutrients = max_nutrients
        k = number
        limit = "one nutrient" if max_nutrients == 1 else f"{max_nutrients} nutrients"
        self.add_node("root", f"Hello, I am the soil nutrient controller for Field #{k}. "
                              f"I can change the nutrient levels in the soil (at most {limit} per field).")  # fmt: skip
        for n in NUTRIENTS:
            title = n.capitalize()
            states = tuple(f"{n}_{v}" for v in (1, 2, 3))
            self.add_option("root", f"Set {title} Level (Current: Unset)", f"set_{n}", anti_states=(*states, "full"))
            for v, state in zip((1, 2, 3), states, strict=True):
                word = LEVELS[v].capitalize()
                self.add_option(
                    "root", f"Set {title} Level (Current: {word})", f"set_{n}", requires_states=(state,)
                )
            self.add_node(f"set_{n}", f"What level would you like the {title} to be at in field #{k}?")
            for v in (1, 2, 3):
                self.add_option(
                    f"set_{n}", f"{title} level: {LEVELS[v]}", f"{n}_set_{v}", callback=self._select(n, v)
                )
                self.add_node(f"{n}_set_{v}", f"{title} level now set to {LEVELS[v]}.")
                self.add_option(f"{n}_set_{v}", "Back to main menu", "root")
            self.add_option(f"set_{n}", "Back to main menu", "root")
        self.add_option("root", "Imprint current selections on this field (Note: can't be changed)", "imprint",
                        callback=self._imprint)  # fmt: skip
        self.add_option("root", "Cancel and exit", "cancel", callback=self._clear)
        self.add_node("imprint", f"Setting the nutrient levels in field {k} to your selections.")
        self.add_node("cancel", "Selections have been canceled.")

    def selections(self) -> dict[str, int]:
        return {n: v for n in NUTRIENTS for v in (1, 2, 3) if f"{n}_{v}" in self.states}

    def _select(self, nutrient: str, level: int) -> _Select:
        return _Select(self, nutrient, level)

    def _clear(self) -> None:
        self.states.clear()

    def _update_full(self) -> None:
        if len(self.selections()) >= self.max_nutrients:
            self.states.add("full")
        else:
            self.states.discard("full")

    def _imprint(self) -> None:
        chosen = self.selections()
        self.imprinted = chosen
        for tile in self.field:
            tile.props[KEY] = {n: chosen.get(n, 0) for n in NUTRIENTS}
            self.world.touch(tile.x, tile.y)  # wakes the seeds asleep in it (`NutrientSeed.tick`)
        k = self.number
        listing = "".join(f"- {n}: {LEVELS[chosen[n]] if n in chosen else 'unknown'}\n" for n in NUTRIENTS)
        self.add_node("done", f"Hello, I am the soil nutrient controller for Field #{k}. The nutrient levels in the "
                              f"soil in Field #{k} have already been set, and can not be changed further. They are:"
                              f"\n\n{listing if chosen else ''}")  # fmt: skip
        self.add_option("done", "Exit", "bye")
        self.add_node("bye", "Goodbye.")
        assert self.dialog_tree is not None
        self.dialog_tree.root = "done"


@dataclass(slots=True)
class _Select:
    """A picklable menu callback: make `level` the pending selection for `nutrient`."""

    device: SoilController
    nutrient: str
    level: int

    def __call__(self) -> None:
        states = self.device.states
        states.difference_update({f"{self.nutrient}_{v}" for v in (1, 2, 3)})
        states.add(f"{self.nutrient}_{self.level}")
        self.device._update_full()


class SoilControllerEasy(Device):
    """Easy's controller: the agent names the nutrient plants need (state `select_<nutrient>`)."""

    def __init__(self, world: World) -> None:
        super().__init__(
            world, "soil nutrient controller", "soil controller", [material("metal")], sprite="computer"
        )
        self.add_node("root", "Hello, I am the soil nutrient controller.  Please select which nutrient is required "
                              "for plants to grow.")  # fmt: skip
        for n in NUTRIENTS:
            title = n.capitalize()
            self.add_option("root", title, f"sel_{n}")
            self.add_node(f"sel_{n}", f"Selected {title} as the nutrient required for plants to grow.",
                          states_to_add=(f"select_{n}",))  # fmt: skip
            self.add_option(f"sel_{n}", "OK", "exit")
        self.add_option("root", "Cancel", "exit")
        self.add_node("exit", "Exiting the soil nutrient controller.")

    def selected(self) -> list[str]:
        return [n for n in NUTRIENTS if f"select_{n}" in self.states]
