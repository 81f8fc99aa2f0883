"""Observation-only solver for Plant Nutrients.

It measures every pilot plot it can walk to (soil tiles connected to where it starts), labels
each plot by whether a mushroom stands on it, keeps every candidate rule consistent with the
labels, and then imprints test fields with the setting that most candidates say will grow,
plants two seeds and waits; a field that stays bare rules out the candidates that predicted
growth there.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import deque
from collections.abc import Generator

from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import KnowledgeReport
from discoverylab.scenarios.plant_nutrients.things import LEVELS, NUTRIENTS, Rule

Gen = Generator[ot.Action, ot.Obs, None]
WORDS = {"zero": 0, "low": 1, "medium": 2, "high": 3}
OFFSETS = {"north": (0, -1), "south": (0, 1), "east": (1, 0), "west": (-1, 0)}
GROW_WAIT = 12
Plot = tuple[dict[str, int], bool]


def _here(obs: ot.Obs, name: str) -> dict | None:
    for entry in obs["nearbyObjects"]["objects"].get("same_location", []):
        if entry["name"] == name:
            return entry
    return None


def _levels(message: str) -> dict[str, int]:
    return {n: WORDS[w] for n, w in re.findall(r"- (\w+): (zero|low|medium|high)", message)}


def _path(
    start: tuple[int, int], goals: set[tuple[int, int]], soil: set[tuple[int, int]]
) -> list[str] | None:
    """Moves from `start` over soil tiles to the nearest goal (BFS)."""
    queue: deque[tuple[tuple[int, int], list[str]]] = deque([(start, [])])
    seen = {start}
    while queue:
        (x, y), moves = queue.popleft()
        if (x, y) in goals:
            return moves
        for name, (dx, dy) in OFFSETS.items():
            nxt = (x + dx, y + dy)
            if nxt in soil and nxt not in seen:
                seen.add(nxt)
                queue.append((nxt, [*moves, name]))
    return None


class PlantOracle:
    def __init__(self, obs: ot.Obs) -> None:
        self.obs = obs
        self.text = ot.task_text(obs)
        self.plots: dict[tuple[int, int], Plot] = {}
        self.report: KnowledgeReport | None = None

    def do(self, action: ot.Action) -> Generator[ot.Action, ot.Obs, ot.Obs]:
        self.obs = yield from ot.checked(action)
        return self.obs

    def loc(self) -> tuple[int, int]:
        return self.obs["agentLocation"]["x"], self.obs["agentLocation"]["y"]

    # ---- survey -------------------------------------------------------------------------
    def survey(self, meter: int, enough: int | None = None) -> Gen:
        """Measure connected pilot plots (all, or stop once `enough` incl. one with a plant)."""
        soil: set[tuple[int, int]] = set()
        while True:
            soil.update((x, y) for x, y, e in ot.known_positions(self.obs) if e["name"] == "soil")
            here = self.loc()
            tile = _here(self.obs, "soil")
            if tile is not None and here not in self.plots:
                soil.add(here)
                yield from self.do(ot.act("USE", meter, tile["uuid"]))
                grown = _here(self.obs, "mushroom") is not None
                self.plots[here] = (_levels(self.obs["lastActionMessage"]), grown)
            if enough is not None and len(self.plots) >= enough and any(g for _, g in self.plots.values()):
                return
            moves = _path(here, soil - set(self.plots), soil)
            if not moves:
                return
            for move in moves:
                yield from self.do(ot.act("MOVE_DIRECTION", move))

    # ---- easy ---------------------------------------------------------------------------
    def run_easy(self) -> Generator[ot.Action | KnowledgeReport, ot.Obs, None]:
        meter = ot.require(ot.find_accessible(self.obs, "soil nutrient meter"), "the meter")["uuid"]
        yield from self.do(ot.act("PICKUP", meter))
        yield from self.survey(meter, enough=2)
        levels = next(lv for lv, grown in self.plots.values() if grown)
        nutrient = max(levels, key=lambda n: levels[n])
        self.obs = yield from ot.go_to_object(self.obs, "soil nutrient controller")
        uuid = ot.require(ot.find_accessible(self.obs, "soil nutrient controller"), "the controller")["uuid"]
        picks = iter([nutrient.capitalize(), "OK"])
        self.report = KnowledgeReport(
            f"Seeds grow in soil with {nutrient} present (at a {LEVELS[levels[nutrient]]} level).",
            {"nutrient": nutrient, "level": LEVELS[levels[nutrient]]},
        )
        yield self.report  # announced now: entering the answer ends the task
        self.obs = yield from ot.converse(
            self.obs, uuid, lambda box: ot.option_index(box["dialogOptions"], next(picks))
        )

    # ---- normal / challenge -------------------------------------------------------------
    def run_station(self) -> Gen:
        yield from self.do(ot.act("TELEPORT_TO_LOCATION", "Storage Building"))
        for name in ("soil nutrient meter", "seed jar", "shovel"):
            self.obs = yield from ot.take(self.obs, name)
        meter = ot.require(ot.find_inventory(self.obs, "soil nutrient meter"), "the meter")["uuid"]
        yield from self.do(ot.act("TELEPORT_TO_LOCATION", "Pilot Field"))
        yield from self.survey(meter)
        combos = "combination of two nutrients" in self.text
        cap = 2 if "two nutrients per field" in self.text else 1
        rules = _hypotheses(combos)
        candidates = [r for r in rules if all(r.holds(lv) == g for lv, g in self.plots.values())]
        for field in (1, 2, 3):
            if not candidates:
                raise ot.OracleFailure("no rule fits the pilot field")
            plots = list(self.plots.values())
            candidates.sort(key=lambda r: -_likelihood(r, plots))
            setting = _telling_setting(candidates, cap)
            grew = yield from self.try_field(field, setting)
            if grew:
                left = [r for r in candidates if r.holds(setting)]
                left.sort(key=lambda r: -_likelihood(r, list(self.plots.values())))
                self.report = _rule_report(left, combos)
                return
            candidates = [r for r in candidates if not r.holds(setting)]
        raise ot.OracleFailure("no test field grew plants")

    def try_field(self, k: int, setting: dict[str, int]) -> Generator[ot.Action, ot.Obs, bool]:
        yield from self.do(ot.act("TELEPORT_TO_LOCATION", f"Experimental Field #{k}"))
        name = f"soil nutrient controller (field #{k})"
        self.obs = yield from ot.go_to_object(self.obs, name)
        uuid = ot.require(ot.find_accessible(self.obs, name), name)["uuid"]
        picks: list[str] = []
        for n, v in setting.items():
            if v:
                title = n.capitalize()
                word = [w for w, i in WORDS.items() if i == v][0]
                picks += [
                    f"Set {title} Level (Current: Unset)",
                    f"{title} level: {word}",
                    "Back to main menu",
                ]
        picks.append("Imprint current selections on this field (Note: can't be changed)")
        queue = iter(picks)
        self.obs = yield from ot.converse(
            self.obs, uuid, lambda box: ot.option_index(box["dialogOptions"], next(queue))
        )
        yield from self.do(ot.act("TELEPORT_TO_LOCATION", f"Experimental Field #{k}"))
        planted = []
        for move in ("north", None):
            yield from self.plant()
            planted.append(self.loc())
            if move:
                yield from self.do(ot.act("MOVE_DIRECTION", move))
        for _ in range(GROW_WAIT):
            grown = {(x, y) for x, y, e in ot.known_positions(self.obs) if e["name"] == "mushroom"}
            if all(spot in grown for spot in planted):
                return True
            self.obs = yield ot.act("WAIT")
        return False

    def plant(self) -> Gen:
        tile = ot.require(_here(self.obs, "soil"), "soil underfoot")["uuid"]
        shovel = ot.require(ot.find_inventory(self.obs, "shovel"), "the shovel")["uuid"]
        yield from self.do(ot.act("USE", shovel, tile))
        seed = ot.require(ot.find_inventory(self.obs, "seed"), "a seed")["uuid"]
        yield from self.do(ot.act("PUT", seed, tile))
        dirt = ot.require(ot.find_inventory(self.obs, "dirt"), "the dirt")["uuid"]
        yield from self.do(ot.act("PUT", dirt, tile))


# How a pilot field illustrates each kind of rule: the (n1 right, n2 right) patterns its positive
# and negative plots cycle through (the task's design: ten examples on each side).
_PATTERNS = {
    ("xor", True): [(True, False), (False, True)], ("xor", False): [(True, True), (False, False)],
    ("and", True): [(True, True)], ("and", False): [(True, False), (False, True)],
    ("or", True): [(True, False), (False, True), (True, True)], ("or", False): [(False, False)],
    ("not", True): [(True, False)], ("not", False): [(True, True), (False, False), (False, True)],
    ("is", True): [(True, False)], ("is", False): [(False, False)],
}  # fmt: skip


def _likelihood(rule: Rule, plots: list[Plot]) -> float:
    """Log-likelihood of the pilot plots if `rule` made them: the rule's nutrients follow its
    pattern (a wrong level is one of the two others), every other nutrient is uniform on 1..3."""
    total = 0.0
    for levels, grown in plots:
        patterns = _PATTERNS[(rule.kind, grown)]
        p = 0.0
        for right1, right2 in patterns:
            q = 1.0
            for n, v, right in ((rule.n1, rule.v1, right1), (rule.n2, rule.v2, right2)):
                if not n:
                    continue
                level = levels.get(n, 0)
                q *= (1.0 if level == v else 0.0) if right else (0.5 if level not in (0, v) else 0.0)
            p += q / len(patterns)
        others = sum(1 for n in NUTRIENTS if n not in (rule.n1, rule.n2))
        total += math.log(max(p, 1e-12)) + others * math.log(1 / 3)
    return total


def _rule_report(rules: list[Rule], combos: bool) -> KnowledgeReport | None:
    """The rule the pilot field and the grown test field leave (the first, if several still fit)."""
    if not rules:
        return None
    rule = rules[0]
    facts = {"rule": rule.kind, "nutrient": rule.n1, "level": LEVELS[rule.v1], "candidates_left": len(rules)}
    if rule.n2:
        facts |= {"nutrient2": rule.n2, "level2": LEVELS[rule.v2]}
    if combos:
        return KnowledgeReport(rule.sentence(), facts)
    text = f"Seeds grow iff the soil's {rule.n1} level is {LEVELS[rule.v1]}; the other nutrients do not matter."
    return KnowledgeReport(text, facts)


def _hypotheses(combos: bool) -> list[Rule]:
    """Normal: one nutrient at one level; Challenge: two nutrients ("not" is not symmetric)."""
    if not combos:
        return [Rule("is", n, v) for n in NUTRIENTS for v in (1, 2, 3)]
    rules = []
    for n1, n2 in itertools.permutations(NUTRIENTS, 2):
        for v1, v2 in itertools.product((1, 2, 3), repeat=2):
            kinds = ("and", "or", "xor", "not") if n1 < n2 else ("not",)
            rules += [Rule(kind, n1, v1, n2, v2) for kind in kinds]
    return rules


def _telling_setting(candidates: list[Rule], cap: int) -> dict[str, int]:
    """A setting (at most `cap` nutrients) under which the likeliest candidate grows a seed and as
    few others as possible do, so that a harvest also tells which rule it is."""
    best: dict[str, int] = {}
    best_count = len(candidates) + 1
    for values in itertools.product((0, 1, 2, 3), repeat=len(NUTRIENTS)):
        if sum(v > 0 for v in values) > cap:
            continue
        setting = dict(zip(NUTRIENTS, values, strict=True))
        if not candidates[0].holds(setting):
            continue
        count = sum(r.holds(setting) for r in candidates)
        if count < best_count:
            best, best_count = setting, count
    return best or _best_setting(candidates, cap)


def _best_setting(candidates: list[Rule], cap: int) -> dict[str, int]:
    """The field setting (levels 0-3 per nutrient, at most `cap` nutrients set) under which
    most candidates grow a seed."""
    best: dict[str, int] = {}
    best_count = -1
    for values in itertools.product((0, 1, 2, 3), repeat=len(NUTRIENTS)):
        if sum(v > 0 for v in values) > cap:
            continue
        setting = dict(zip(NUTRIENTS, values, strict=True))
        count = sum(r.holds(setting) for r in candidates)
        if count > best_count:
            best, best_count = setting, count
    return best


def solve(obs: ot.Obs) -> Generator[ot.Action | KnowledgeReport, ot.Obs, KnowledgeReport | None]:
    oracle = PlantOracle(obs)
    if "Soil Controller computer" in oracle.text:
        yield from oracle.run_easy()
    else:
        yield from oracle.run_station()
    return oracle.report
