"""Lazy-agent attacks on Plant Nutrients (issue 21): each plays through `env.step` and must not
beat chance.

The issue's row: "no meter: plant fixed settings that cover the rule prior" won 51% of Challenge
seeds (Normal: 17.5%, chance). Here the attacker studies the training instances' rules (as a
player who has read every public answer could), picks the three field settings that would have
grown plants on most of them, and plays exactly those on the evaluation seeds, never touching the
meter. Chance is what three fields of random settings (two random nutrients at random levels
each) win on the same evaluation seeds.
"""

from __future__ import annotations

import itertools
from functools import cache
from typing import Any

import numpy as np
import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.instances import make_instance
from discoverylab.scenarios.plant_nutrients.things import LEVELS, NUTRIENTS, Rule
from discoverylab.world.objects import WorldObject
from env_driver import EnvDriver

Setting = dict[str, int]
TASK = "PlantNutrients"
# Every setting a field can take in Challenge: at most two nutrients, at levels 1-3.
SETTINGS: list[Setting] = [{}] + [
    {n: v for n, v in zip(names, levels, strict=True)}
    for k in (1, 2)
    for names in itertools.combinations(NUTRIENTS, k)
    for levels in itertools.product((1, 2, 3), repeat=k)
]


@cache
def rule_of(difficulty: str, seed: int) -> Rule:
    env = DiscoveryWorldEnv(TASK, difficulty)
    env.reset(seed=seed)
    rule = env.scenario.rule  # type: ignore[union-attr]
    env.close()
    return rule  # type: ignore[no-any-return]


def training_rules(difficulty: str, count: int) -> list[Rule]:
    return [rule_of(difficulty, make_instance(TASK, difficulty, "train", i).seed) for i in range(count)]


def best_fixed_fields(rules: list[Rule], fields: int = 3) -> list[Setting]:
    """Greedy cover: each field the setting that grows plants under most rules not yet covered."""
    left, chosen = list(rules), []
    for _ in range(fields):
        best = max(SETTINGS, key=lambda s: sum(r.holds(s) for r in left))
        chosen.append(best)
        left = [r for r in left if not r.holds(best)]
    return chosen


def chance(rules: list[Rule], draws: int = 4000) -> float:
    """Win rate of three fields of random two-nutrient settings (seeded: deterministic)."""
    rng = np.random.default_rng(21)
    pairs = [s for s in SETTINGS if len(s) == 2]
    wins = 0
    for _ in range(draws):
        fields = [pairs[int(i)] for i in rng.integers(0, len(pairs), size=3)]
        rule = rules[int(rng.integers(0, len(rules)))]
        wins += any(rule.holds(f) for f in fields)
    return wins / draws


class Gardener(EnvDriver):
    """The attacker's hands: controller menus by option text, planting by agent actions."""

    def __init__(self, difficulty: str, seed: int) -> None:
        super().__init__(TASK, difficulty, seed, reveal=True)

    def choose_if(self, text: str) -> None:
        options = self.obs["dialog_box"].get("dialogOptions", {})
        numbers = [int(k) for k, v in options.items() if v == text]
        assert numbers, (text, options)
        self.send({"chosen_dialog_option_int": numbers[0]})

    def imprint(self, field: int, setting: Setting) -> None:
        controller = self.scenario.controllers[field]
        self.go_to(controller)
        self.do("TALK", controller)
        for n, v in setting.items():
            self.choose_if(f"Set {n.capitalize()} Level (Current: Unset)")
            self.choose_if(f"{n.capitalize()} level: {LEVELS[v]}")
            self.choose_if("Back to main menu")
        self.choose_if("Imprint current selections on this field (Note: can't be changed)")

    def plant_two(self, field: int) -> None:
        self.do("TELEPORT_TO_LOCATION", f"Experimental Field #{field + 1}")
        for move in ("north", None):
            soil = self._here("soil")
            self.do("USE", self._held("shovel"), soil)
            self.do("PUT", self._held("seed"), soil)
            self.do("PUT", self._held("dirt"), soil)
            if move:
                self.do("MOVE_DIRECTION", move)

    def _here(self, kind: str) -> WorldObject:
        x, y = self.player.x, self.player.y
        return next(o for o in self.world.top_level_at(x, y) if o.type == kind)

    def _held(self, kind: str) -> WorldObject:
        return next(o for o in self.player.inventory() if o.type == kind)

    @property
    def success(self) -> bool:
        return bool(self.scenario.scorecard.completed and self.scenario.scorecard.success)


def play_fixed_fields(difficulty: str, seed: int, fields: list[Setting]) -> bool:
    g = Gardener(difficulty, seed)
    g.take(g.scenario.shovel)
    g.take(g.scenario.jar)
    for k, setting in enumerate(fields):
        g.imprint(k, setting)
        g.plant_two(k)
    for _ in range(15):
        if g.terminated:
            break
        g.do("WAIT")
    assert g.scenario.used.score == 0  # the meter was never used
    return g.success


def _attack(evaluate: int, train: int) -> tuple[int, float, list[Setting]]:
    fields = best_fixed_fields(training_rules("challenge", train))
    wins = sum(play_fixed_fields("challenge", seed, fields) for seed in range(evaluate))
    return wins, chance([rule_of("challenge", s) for s in range(evaluate)]), fields


def _margin(p: float, n: int) -> float:
    return 2 * float(np.sqrt(p * (1 - p) / n)) + 0.05


def test_attack_plant_challenge_fixed_fields_from_training_seeds() -> None:
    """Issue 21's 51%: the best three fixed fields (chosen on 200 training rules) on 20 seeds."""
    wins, base, fields = _attack(evaluate=20, train=200)
    assert wins / 20 <= base + _margin(base, 20), (wins, base, fields)


@pytest.mark.slow
def test_attack_plant_challenge_fixed_fields_seeds_0_to_49() -> None:
    wins, base, fields = _attack(evaluate=50, train=400)
    assert wins / 50 <= base + _margin(base, 50), (wins, base, fields)


def test_the_fixed_field_attack_would_have_won_under_the_original_rules() -> None:
    """The attack can fail: under the original rules (or / xor on one nutrient alone, a
    one-nutrient not) the same greedy cover grows plants on about half of the rules."""

    def original(rule: Rule, levels: Any) -> bool:
        a = levels.get(rule.n1, 0) == rule.v1
        b = bool(rule.n2) and levels.get(rule.n2, 0) == rule.v2
        level = levels.get(rule.n1, 0)
        return {"and": a and b, "or": a or b, "xor": a != b, "not": level not in (0, rule.v1)}[rule.kind]

    rng = np.random.default_rng(7)
    kinds = ("and", "or", "xor", "not")
    rules = []
    for i in range(400):
        n1, n2 = rng.choice(NUTRIENTS, size=2, replace=False)
        rules.append(Rule(kinds[i % 4], str(n1), int(rng.integers(1, 4)), str(n2), int(rng.integers(1, 4))))
    left = list(rules)
    for _ in range(3):
        best = max(SETTINGS, key=lambda s: sum(original(r, s) for r in left))
        left = [r for r in left if not original(r, best)]
    old_rate = 1 - len(left) / len(rules)
    new_fields = best_fixed_fields(rules)
    new_rate = sum(any(r.holds(f) for f in new_fields) for r in rules) / len(rules)
    assert old_rate > 0.4 and new_rate < 0.2, (old_rate, new_rate)
