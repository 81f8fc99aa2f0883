"""Scripted solver for Combinatorial Chemistry, using only what the agent observes.

The experiment: keep the rusted key in the mixing jar and build candidate remedies in it one
measure at a time; after every measure the key's name says whether that mixture derusted it or
at least made it less rusted. Candidate recipes are small integer proportions of the substances
the dispensers offer (singles in Easy, whose task text says so; mixtures otherwise), up to 4
measures at first (more if those all fail). The next candidate is the cheapest to make from
what is in the jar, adding to it when it can and cleaning the jar when it must, with a bias
towards recipes similar to the last mixture that lightened the rust (hill climbing). Every
mixture the jar passes through is a tested recipe. Once the key is clean, dispensers not yet
tried and the cleaner are used once (the procedure the scorecard asks for), and the agent
walks out through the door it unlocks.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Generator, Iterator
from typing import Any

from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import KnowledgeReport
from discoverylab.scenarios.combinatorial_chemistry.things import cosine, recipe_text, reduce_recipe
from discoverylab.scenarios.explore import Explorer, Sighting

Recipe = dict[str, int]
RUST_WORDS = {"heavily": 3, "moderately": 2, "lightly": 1}
SIMILARITY_BIAS = 5.0  # steps a candidate may cost more when it resembles the best mixture so far
MAX_MEASURES_IN_JAR = 8
_DISPENSER = re.compile(r"^Dispenser \((.+)\)$")


def rust_level(name: str) -> int:
    """Rust level shown in a key's name ('rusted key (lightly rusted)' -> 1, 'key (no rust)' -> 0)."""
    for word, level in RUST_WORDS.items():
        if word in name:
            return level
    return 0 if "no rust" in name else 3


def candidate_recipes(substances: list[str], measures: int, singles_only: bool) -> Iterator[Recipe]:
    """Distinct proportions with exactly `measures` measures (reduced, so 2:2 comes as 1:1 once)."""
    for counts in itertools.product(range(measures + 1), repeat=len(substances)):
        kinds = sum(1 for c in counts if c)
        if sum(counts) != measures or (kinds != 1 if singles_only else kinds < 2):
            continue
        recipe = {name: c for name, c in zip(substances, counts, strict=True) if c}
        if reduce_recipe(recipe) == recipe:
            yield recipe


def additions(jar: Recipe, target: Recipe) -> Recipe | None:
    """Measures to add so the jar holds a multiple of `target`; None if cleaning is needed."""
    if not jar:
        return dict(target)
    for k in range(1, MAX_MEASURES_IN_JAR + 1):
        goal = {name: k * n for name, n in target.items()}
        if sum(goal.values()) > MAX_MEASURES_IN_JAR:
            return None
        if all(goal.get(name, 0) >= n for name, n in jar.items()):
            return {name: n - jar.get(name, 0) for name, n in goal.items() if n > jar.get(name, 0)}
    return None


class ChemistryBench:
    """The agent's side of the experiment: where things are and what has been tried."""

    def __init__(self, obs: ot.Obs) -> None:
        self.ex = Explorer(obs)
        self.singles_only = "only a single chemical" in ot.task_text(obs)
        self.jar_contents: Recipe = {}
        self.tested: list[Recipe] = []
        self.best: Recipe | None = None  # the last mixture that lightened the rust
        self.used: set[str] = set()
        self.cleaned = False
        self.key = 0
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

    def key_level(self) -> int:
        for entry in self.ex.obs["inventoryObjects"]:
            if entry["uuid"] == self.key:
                return rust_level(entry["name"])
        raise ot.OracleFailure("the key is no longer in the inventory")

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
        """One measure into the jar; records the mixture as tested and the key's reaction."""
        dispenser = self.dispensers()[substance]
        before = self.key_level()
        yield from self.face(dispenser)
        obs = yield from self.ex.checked(ot.act("USE", dispenser, self.jar))
        self.used.add(substance)
        self.jar_contents[substance] = self.jar_contents.get(substance, 0) + 1
        mixture = reduce_recipe(self.jar_contents)
        self.tested.append(mixture)
        if self.key_level() < before:
            self.best = mixture
        return obs

    def clean(self) -> ot.Steps:
        cleaner = ot.need(self.sighting(lambda n: n == "bottle cleaner"), "the bottle cleaner")
        yield from self.face(cleaner.uuid)
        obs = yield from self.ex.checked(ot.act("USE", cleaner.uuid, self.jar))
        self.jar_contents = {}
        self.cleaned = True
        return obs

    def next_plan(self, measures: int) -> tuple[bool, Recipe] | None:
        """(clean first?, measures to add) for the best untested candidate of up to `measures`."""
        substances = list(self.dispensers())
        best: tuple[float, int, bool, Recipe] | None = None
        order = 0
        for size in range(1, measures + 1):
            for recipe in candidate_recipes(substances, size, self.singles_only):
                order += 1
                if recipe in self.tested:
                    continue
                add = additions(self.jar_contents, recipe)
                clean = add is None
                add = add if add is not None else dict(recipe)
                cost = sum(add.values()) + len(add) + (2 if clean else 0)
                likeness = cosine(recipe, self.best) if self.best else 0.0
                score = cost + SIMILARITY_BIAS * (1.0 - likeness)
                if best is None or (score, order) < (best[0], best[1]):
                    best = (score, order, clean, add)
        return None if best is None else (best[2], best[3])

    def search(self) -> ot.Steps:
        """Try candidates until the key comes out clean."""
        measures = 1 if self.singles_only else 4
        while self.key_level() > 0:
            plan = self.next_plan(measures)
            if plan is None:
                measures += 1
                if measures > MAX_MEASURES_IN_JAR:
                    raise ot.OracleFailure("no recipe of up to 8 measures derusted the key")
                continue
            clean, add = plan
            if clean:
                yield from self.clean()
            facing = next((s for s, uuid in self.dispensers().items() if self.ex.reachable(uuid)), None)
            for substance in sorted(add, key=lambda s: (s != facing, s)):
                for _ in range(add[substance]):
                    yield from self.dispense(substance)
                    if self.key_level() == 0:
                        self.remedy = reduce_recipe(self.jar_contents)
                        return self.ex.obs
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
    yield from ex.take(jar.uuid)
    yield from ex.checked(ot.act("PUT", key.uuid, jar.uuid))
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
