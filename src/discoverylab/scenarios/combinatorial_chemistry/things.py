"""Combinatorial Chemistry objects: substances that mix by themselves, chemical dispensers, the
bottle cleaner and the rusted key that a remedy of the right proportions derusts (spec 12.2).

A *substance* is either elementary ("Substance A", no contents) or a mixture: a substance whose
(hidden) contents are the elementary measures it was made from. Whenever a container holds two
or more substances they merge into one new mixture, so a container never holds more than one
substance for long. A mixture's name and recipe follow from its measures::

    Substance A                                     one measure
    Substance A (2 measures)                        recipe {Substance A: 1}
    mixture (2 parts Substance C, 1 part Substance A)   recipe {Substance A: 1, Substance C: 2}

Recipes are reduced by their greatest common divisor (2:2 is 1:1).

The rusted key is the experiment's only instrument, and a costly one (issue 21): soaked in a
substance, it shows how strongly that substance attacks its rust ("rust reacting at 45%", the
cosine similarity of the substance's proportions with the remedy's), and only the exact
proportions remove the rust. Every soak in anything else etches the key a little; after
`etch_limit` etchings it no longer fits the lock. A few soaks in chosen probes tell the remedy
(each pure substance's reaction is its share of the remedy); trying candidate remedies one by
one runs out of key long before the candidates run out.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from functools import reduce
from typing import TYPE_CHECKING

from discoverylab.world.materials import material
from discoverylab.world.objects import ActionResult, Container, WorldObject, text_state
from discoverylab.world.things import Key

if TYPE_CHECKING:
    from discoverylab.world.agent import Agent
    from discoverylab.world.world import World

Recipe = dict[str, int]
SUBSTANCE_NAMES = ("Substance A", "Substance B", "Substance C", "Substance D")
RUST_WORDS = {3: "heavily rusted", 2: "moderately rusted", 1: "lightly rusted"}
# Rust level reached by a remedy whose cosine similarity with the key's recipe is at least
# the threshold (the original's hill-climbing help); 0 means derusted. With remedies of up to
# PARTS_MAX parts per substance, near misses reach 0.99 too: only exact proportions derust.
RUST_THRESHOLDS = ((0.99, 0), (0.66, 1), (0.33, 2))
PARTS_MAX = 6  # Normal/Challenge remedies: 1..PARTS_MAX parts of each of their substances
# Soaks in a wrong substance the key survives (see RustedKey). Easy: none (a blind guess is one of
# four); its instrument is the rusted nail, which survives one wrong soak and shows the reaction
# as the key does: one mixture of 1, 2 and 3 parts of A, B and C names the remedy, while pure
# soaks (derusted or not) rule out two of four. Normal/Challenge: one probe per dispenser (3 or 4)
# gives the remedy; 8 leaves twice that.
ETCH_LIMITS = {"easy": 1, "normal": 8, "challenge": 8}
NAIL_ETCH_LIMIT = 2


def reduce_recipe(counts: dict[str, int]) -> Recipe:
    """Counts divided by their greatest common divisor (zero counts dropped)."""
    kept = {name: int(n) for name, n in counts.items() if n > 0}
    divisor = reduce(math.gcd, kept.values(), 0) or 1
    return {name: n // divisor for name, n in sorted(kept.items())}


def cosine(a: dict[str, int], b: dict[str, int]) -> float:
    """Cosine similarity of two recipes over the union of their substances."""
    names = set(a) | set(b)
    dot = sum(a.get(n, 0) * b.get(n, 0) for n in names)
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


def rust_level_for(similarity: float) -> int:
    for threshold, level in RUST_THRESHOLDS:
        if similarity >= threshold:
            return level
    return 3


def reaction_percent(similarity: float) -> int:
    """How strongly a substance attacks the rust, as the key shows it (whole percent)."""
    return int(round(100 * similarity))


def remedy_space(substances: tuple[str, ...], kinds: tuple[int, ...] = (2, 3)) -> list[Recipe]:
    """Every distinct reduced recipe of `kinds` of the substances, 1..PARTS_MAX parts each
    (Normal: 250 recipes of 3 substances; Challenge: 862 of 4), in a fixed order."""
    out: dict[tuple[tuple[str, int], ...], Recipe] = {}
    for counts in itertools.product(range(PARTS_MAX + 1), repeat=len(substances)):
        if sum(1 for c in counts if c) not in kinds:
            continue
        recipe = reduce_recipe(dict(zip(substances, counts, strict=True)))
        out.setdefault(tuple(sorted(recipe.items())), recipe)
    return [out[key] for key in sorted(out)]


def recipe_text(recipe: Recipe) -> str:
    """'1 part Substance A, and 2 parts Substance C' (names sorted, as in the original question)."""
    items = [f"{n} part{'' if n == 1 else 's'} {name}" for name, n in sorted(recipe.items())]
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + ", and " + items[-1]


class Substance(WorldObject):
    """One substance object: an elementary measure or a mixture of measures (its contents)."""

    needs_tick = True
    auto_reacting: bool = True

    def __init__(self, world: World, substance_name: str) -> None:
        letter = substance_name.rsplit(" ", 1)[-1].lower()
        materials = [material(f"substance_{letter}")] if substance_name in SUBSTANCE_NAMES else []
        super().__init__(world, substance_name, "substance", materials)
        self.substance_name = substance_name

    def measures(self) -> list[Substance]:
        """The elementary measures this substance is made of."""
        if not self.contents:
            return [self]
        return [obj for obj in self.contents if isinstance(obj, Substance)]

    @property
    def recipe(self) -> Recipe:
        return reduce_recipe(Counter(m.substance_name for m in self.measures()))

    def refresh_name(self) -> None:
        counts = Counter(m.substance_name for m in self.measures())
        if len(counts) == 1:
            ((name, n),) = counts.items()
            self.name = name if n == 1 else f"{name} ({n} measures)"
        else:
            ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
            self.name = (
                "mixture (" + ", ".join(f"{n} part{'' if n == 1 else 's'} {k}" for k, n in ordered) + ")"
            )
        self.text_changed()

    def tick(self) -> None:
        parent = self.parent
        if parent is not None and len(parent.contents) > 1:  # `react` merges two or more: with fewer it does nothing
            react(parent)  # (each measure waiting in its dispenser ticks alone there, every step)


def react(container: WorldObject) -> Substance | None:
    """Merge every auto-reacting substance in `container` into one new mixture (if there are
    two or more). Returns the new mixture, else None. Idempotent within a tick."""
    if isinstance(container, Substance):
        return None
    reacting = [obj for obj in container.contents if isinstance(obj, Substance) and obj.auto_reacting]
    if len(reacting) < 2:
        return None
    measures = [m for substance in reacting for m in substance.measures()]
    mixture = Substance(container.world, "reacting substance")
    container.add(mixture)
    for measure in measures:
        mixture.add(measure)
    for shell in reacting:
        if shell.parent is container:  # an emptied mixture shell
            shell.remove_from_world()
    mixture.refresh_name()
    return mixture


class ChemicalDispenser(Container):
    """Holds one measure of its substance (hidden) and refills at once when it is dispensed."""

    movable = False
    passable = True
    is_open = False
    usable = True

    def __init__(self, world: World, substance_name: str) -> None:
        super().__init__(world, f"Dispenser ({substance_name})", "dispenser")
        self.substance_name = substance_name
        self.refill()

    def refill(self) -> None:
        if not self.contents:
            self.add(Substance(self.world, self.substance_name))

    def use_with(self, agent: Agent, target: WorldObject) -> ActionResult:
        if not target.is_container:
            return ActionResult(
                False,
                f"You can't use the chemical dispenser on something that isn't a container ({target.name}).",
            )
        if not target.is_open:
            return ActionResult(
                False, f"You can't use the chemical dispenser on a container that isn't open ({target.name})."
            )
        if not self.contents:
            return ActionResult(False, "The chemical dispenser is empty.")
        measure = self.contents[0]
        target.add(measure)
        self.refill()
        return ActionResult(True, f"You dispense {measure.name} into the {target.name}.")


class BottleCleaner(WorldObject):
    """Removes every substance from an open container."""

    movable = False
    usable = True

    def __init__(self, world: World) -> None:
        super().__init__(world, "bottle cleaner", "bottle cleaner")

    def use_with(self, agent: Agent, target: WorldObject) -> ActionResult:
        if not target.is_container:
            return ActionResult(
                False,
                f"You can't use the bottle cleaner on something that isn't a container ({target.name}).",
            )
        if not target.is_open:
            return ActionResult(
                False, f"You can't use the bottle cleaner on a container that isn't open ({target.name})."
            )
        substances = [obj for obj in target.contents if isinstance(obj, Substance)]
        if not substances:
            return ActionResult(False, f"The {target.name} has no substances to remove.")
        for substance in substances:
            substance.remove_from_world()
        return ActionResult(True, f"You clean the {target.name} of all substances.")


class RustedKey(Key):
    """A key (type "key") whose rust only a remedy of the right proportions removes.

    Each tick, if its container holds exactly one substance, the key reacts to it: the exact
    proportions of its remedy derust it; anything else shows how strongly it attacks the rust
    (the cosine similarity of the proportions, in its name), lightens the rust to level 1
    (>= 0.66) or 2 (>= 0.33) if that is lower than before (rust never comes back), and etches
    the key once. At `etch_limit` etchings the key is ruined: it stays rusted and never reacts
    again (the scenario ends the task).
    """

    needs_tick = True
    noun = "key"

    def __init__(self, world: World, remedy: Recipe, key_id: int, etch_limit: int = ETCH_LIMITS["normal"],
                 kind: str = "key") -> None:  # fmt: skip
        super().__init__(world, f"rusted {kind} (heavily rusted)", kind, [material("metal")], key_id=key_id)
        self.remedy = reduce_recipe(remedy)
        self.rust_level = 3
        self.props["rusted"] = True
        self.etch_limit = etch_limit
        self.etched = 0
        self.reaction: int | None = None  # the shown reaction (percent) while soaking

    @property
    def rusted(self) -> bool:
        return bool(self.props["rusted"])

    @property
    def ruined(self) -> bool:
        return self.etched >= self.etch_limit

    @text_state()  # the rust and the reaction show in its name
    def describe_state(self) -> str:
        if self.ruined or not self.rusted:
            return self.name
        return f"{self.name}, etched {self.etched} of {self.etch_limit} times it can take"

    def _rename(self) -> None:
        noun = self.noun
        if self.ruined:
            name = f"ruined {noun} (etched through)"
        elif not self.rusted:
            name = f"{noun} (no rust)"
        elif self.reaction is None:
            name = f"rusted {noun} ({RUST_WORDS[self.rust_level]})"
        else:
            name = f"rusted {noun} ({RUST_WORDS[self.rust_level]}, rust reacting at {self.reaction}%)"
        if name != self.name:
            self.name = name
        self.text_changed()

    def tick(self) -> None:
        holder = self.parent
        if not self.rusted or self.ruined:
            return
        substances = []
        if holder is not None:
            react(holder)  # apply the mixed remedy, not its ingredients
            substances = [obj for obj in holder.contents if isinstance(obj, Substance)]
        if len(substances) != 1:
            if self.reaction is not None:
                self.reaction = None
                self._rename()
            return
        recipe = substances[0].recipe
        if recipe == self.remedy:
            self.props["rusted"] = False
            self.rust_level = 0
            self.reaction = None
            self._rename()
            return
        similarity = cosine(self.remedy, recipe)
        self.rust_level = min(self.rust_level, max(1, rust_level_for(similarity)))
        self.reaction = reaction_percent(similarity)
        self.etched += 1
        self._rename()


class RustyNail(RustedKey):
    """Easy's probe (issue 21): a nail rusted like the key, which reacts to a soak as the key does
    (the remedy derusts it; anything else shows its reaction and etches it) but opens nothing.
    It takes NAIL_ETCH_LIMIT etchings; the key takes one, so the key is for the answer only."""

    noun = "nail"

    def __init__(self, world: World, remedy: Recipe, etch_limit: int = NAIL_ETCH_LIMIT) -> None:
        super().__init__(world, remedy, key_id=-1, etch_limit=etch_limit, kind="nail")
        self._rename()
