"""Scripted solver for Combinatorial Chemistry, using only what the agent observes.

The experiment: soaked in one substance, the rusted key shows how strongly it attacks the rust
("rust reacting at 45%"), and each soak that does not derust it etches the key (the task text
gives how many it survives). So the key is dipped only into chosen probes and taken out at once:

* Normal / Challenge: each dispenser's substance alone. A pure substance's reaction is its share
  of the remedy (the remedy's proportions, normalised); the remedy is the simplest whole-number
  recipe whose reactions round to the ones read. One probe per dispenser: 3 or 4 etchings.
* Easy (the task text says the remedy is one chemical, and the key takes no wrong soak): the
  rusted nail, which reacts as the key does, is dipped into one mixture of 1, 2, 3 ... parts of
  all but the last substance; its reaction names the part of the remedy, 0% the last substance.
  One etching of the nail.

Then the jar is cleaned, the remedy dispensed with the key out of the jar, and the key dipped: it
comes out clean. Dispensers not yet used are used once (the procedure the scorecard asks for),
and the agent walks out through the door the key unlocks.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Generator
from typing import Any

from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import KnowledgeReport
from discoverylab.scenarios.combinatorial_chemistry.things import cosine, recipe_text, reduce_recipe
from discoverylab.scenarios.explore import Explorer, Sighting

Recipe = dict[str, int]
RUST_WORDS = {"heavily": 3, "moderately": 2, "lightly": 1}
MAX_PARTS = 12  # the largest part the inference considers (the generator draws up to 6)
_DISPENSER = re.compile(r"^Dispenser \((.+)\)$")
_REACTION = re.compile(r"rust reacting at (\d+)%")


def rust_level(name: str) -> int:
    """Rust level shown in a key's name ('rusted key (lightly rusted)' -> 1, 'key (no rust)' -> 0)."""
    for word, level in RUST_WORDS.items():
        if word in name:
            return level
    return 0 if "no rust" in name else 3


def infer_remedy(readings: dict[str, int]) -> Recipe:
    """The simplest recipe (fewest parts) whose pure-substance reactions round to `readings`
    (percent per substance); if none does, the closest in direction."""
    names = [n for n, r in sorted(readings.items()) if r > 0]
    target = {n: readings[n] for n in names}
    best: tuple[int, Recipe] | None = None
    closest: tuple[float, Recipe] = (-1.0, {})
    for counts in itertools.product(range(1, MAX_PARTS + 1), repeat=len(names)):
        recipe = dict(zip(names, counts, strict=True))
        if reduce_recipe(recipe) != recipe:
            continue
        norm = math.sqrt(sum(c * c for c in counts))
        if all(round(100 * recipe[n] / norm) == target[n] for n in names):
            if best is None or sum(counts) < best[0]:
                best = (sum(counts), recipe)
        likeness = cosine(recipe, target)
        if likeness > closest[0]:
            closest = (likeness, recipe)
    return best[1] if best is not None else closest[1]


class ChemistryBench:
    """The agent's side of the experiment: where things are and what has been tried."""

    def __init__(self, obs: ot.Obs) -> None:
        self.ex = Explorer(obs)
        self.singles_only = "only a single chemical" in ot.task_text(obs)
        self.jar_contents: Recipe = {}
        self.used: set[str] = set()
        self.cleaned = False
        self.key = 0
        self.nail = 0  # Easy's probe (0: the probes use the key)
        self.jar = 0
        self.remedy: Recipe = {}  # the mixture in the jar when the key came out clean

    # ---- what the agent sees ----------------------------------------------------------
    def sighting(self, predicate: Any) -> Sighting | None:
        found = [s for s in self.ex.map.objects.values() if predicate(s.name)]
        return min(found, key=lambda s: s.uuid) if found else None

    def dispensers(self) -> dict[str, int]:
        out = {}
        for s in self.ex.map.objects.values():
            match = _DISPENSER.match(s.name)
            if match:
                out[match[1]] = s.uuid
        return dict(sorted(out.items()))

    def key_name(self, uuid: int = 0) -> str:
        for entry in self.ex.obs["inventoryObjects"]:
            if entry["uuid"] == (uuid or self.key):
                return str(entry["name"])
        raise ot.OracleFailure("the key (or nail) is no longer in the inventory")

    def key_level(self) -> int:
        return rust_level(self.key_name())

    def look_around(self) -> ot.Steps:
        """Bring the whole shed floor into view (every dispenser and the cleaner)."""
        for _ in range(10):
            floor = {tile for tile, s in self.ex.map.pinned() if s.name == "floor"}
            frontier = [t for t in self.ex.map.frontier(floor) if t != self.ex.here]
            if not frontier:
                break
            before = self.ex.here
            yield from self.ex.travel(frontier[0], tolerance=0)
            if self.ex.here == before:
                break
        return self.ex.obs

    # ---- bench work -------------------------------------------------------------------
    def face(self, uuid: int) -> ot.Steps:
        if not self.ex.reachable(uuid):
            yield from self.ex.teleport(uuid)
        return self.ex.obs

    def dispense(self, substance: str) -> ot.Steps:
        """One measure into the jar (the key is not in it)."""
        dispenser = self.dispensers()[substance]
        yield from self.face(dispenser)
        obs = yield from self.ex.checked(ot.act("USE", dispenser, self.jar))
        self.used.add(substance)
        self.jar_contents[substance] = self.jar_contents.get(substance, 0) + 1
        return obs

    def clean(self) -> ot.Steps:
        cleaner = ot.need(self.sighting(lambda n: n == "bottle cleaner"), "the bottle cleaner")
        yield from self.face(cleaner.uuid)
        obs = yield from self.ex.checked(ot.act("USE", cleaner.uuid, self.jar))
        self.jar_contents = {}
        self.cleaned = True
        return obs

    def make(self, recipe: Recipe) -> ot.Steps:
        """A clean jar holding exactly `recipe`."""
        if self.jar_contents:
            yield from self.clean()
        facing = next((s for s, uuid in self.dispensers().items() if self.ex.reachable(uuid)), None)
        for substance in sorted(recipe, key=lambda s: (s != facing, s)):
            for _ in range(recipe[substance]):
                yield from self.dispense(substance)
        return self.ex.obs

    def soak(self, item: int = 0) -> Generator[ot.Action, ot.Obs, int]:
        """Dip the key (or `item`) into the jar for one step and take it out: the reaction in
        percent (100 when the rust came off)."""
        item = item or self.key
        yield from self.ex.checked(ot.act("PUT", item, self.jar))
        name = self.key_name(item)
        yield from self.ex.checked(ot.act("PICKUP", item))
        if rust_level(name) == 0 and item == self.key:
            self.remedy = reduce_recipe(self.jar_contents)
            return 100
        match = _REACTION.search(name)
        return int(ot.need(match, f"the key's reaction in {name!r}")[1])

    def probe(self, recipe: Recipe, item: int = 0) -> Generator[ot.Action, ot.Obs, int]:
        yield from self.make(recipe)
        return (yield from self.soak(item))

    def search(self) -> ot.Steps:
        """Probe, infer the remedy, make it and dip the key."""
        substances = list(self.dispensers())
        if self.singles_only:
            weights = {name: i + 1 for i, name in enumerate(substances[:-1])}
            norm = math.sqrt(sum(w * w for w in weights.values()))
            reading = yield from self.probe(weights, self.nail)
            matches = [n for n, w in weights.items() if round(100 * w / norm) == reading]
            remedy = {matches[0] if matches else substances[-1]: 1}
        else:
            readings = {}
            for name in substances:
                readings[name] = yield from self.probe({name: 1})
            remedy = infer_remedy(readings)
        if (yield from self.probe(remedy)) != 100:
            raise ot.OracleFailure(f"the inferred remedy {remedy} did not derust the key")
        return self.ex.obs

    def leave(self) -> ot.Steps:
        """Walk to the door from inside, open it with the key and step out."""
        door = ot.need(self.sighting(lambda n: n == "door"), "the shed door")
        dx, dy = door.tile or door.near()
        floor = self.ex.map.tiles_with({"floor"})
        beside = [
            (dx + ox, dy + oy) for ox, oy in ((0, -1), (0, 1), (-1, 0), (1, 0)) if (dx + ox, dy + oy) in floor
        ]
        inside = min(
            ot.need(beside or None, "the floor inside the door"), key=lambda t: math.dist(t, self.ex.here)
        )
        yield from self.ex.travel(inside, tolerance=0)
        direction = {(0, 1): "south", (0, -1): "north", (1, 0): "east", (-1, 0): "west"}[
            (dx - inside[0], dy - inside[1])
        ]
        yield from self.ex.act(ot.act("ROTATE_DIRECTION", direction))
        yield from self.ex.checked(ot.act("OPEN", door.uuid))
        for _ in range(2):
            yield from self.ex.checked(ot.act("MOVE_DIRECTION", direction))
        return self.ex.obs


def solve_chemistry(obs: ot.Obs) -> Generator[ot.Action, ot.Obs, KnowledgeReport | None]:
    bench = ChemistryBench(obs)
    ex = bench.ex
    key = ot.need(bench.sighting(lambda n: n.startswith("rusted key")), "the rusted key")
    jar = ot.need(bench.sighting(lambda n: n == "jar"), "the mixing jar")
    bench.key, bench.jar = key.uuid, jar.uuid
    yield from bench.look_around()
    yield from ex.take(key.uuid)
    nail = bench.sighting(lambda n: n.startswith("rusted nail"))
    if nail is not None:
        bench.nail = nail.uuid
        yield from ex.take(nail.uuid)
    yield from ex.take(jar.uuid)
    yield from bench.search()
    for substance in bench.dispensers():  # the rest of the procedure: every dispenser, the cleaner
        if substance not in bench.used:
            yield from bench.dispense(substance)
    if not bench.cleaned:
        yield from bench.clean()
    yield from bench.leave()
    return chemistry_report(bench.remedy, sorted(bench.dispensers()))


def chemistry_report(remedy: Recipe, substances: list[str]) -> KnowledgeReport | None:
    """The recipe that derusted the key, and what it leaves out."""
    if not remedy:
        return None
    if len(remedy) == 1 and len(substances) > 1 and sum(remedy.values()) == 1:
        (name,) = remedy
        text = (f"The rust remover is {name} on its own (a single chemical, not a mixture). Placing the rusted key "
                f"in a jar holding only {name} removes the rust.")  # fmt: skip
    else:
        others = [s for s in substances if s not in remedy]
        rest = f"The remedy contains no {' or '.join(others)}." if others else "The remedy uses every substance."
        text = (f"The rust remover is a mixture of {recipe_text(remedy)}; any multiple of these proportions works "
                f"as well. {rest}")  # fmt: skip
    return KnowledgeReport(text, {"remedy": dict(remedy), "unused": [s for s in substances if s not in remedy]})
