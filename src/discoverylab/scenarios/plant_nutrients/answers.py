"""Plant Nutrients answer sheet: the nutrient rule under which the seed grows.

Easy: which nutrient (at a high level). Normal: which nutrient at which level. Challenge: the
rule's kind and its conditions ("<nutrient> at <level>"; "none" as the second condition of a
one-nutrient "not" rule, whose first condition is the level the nutrient must NOT have); the
two conditions of a symmetric rule may be given in either order.
"""

from __future__ import annotations

import itertools
from typing import Any

from discoverylab.scenarios.base import Scenario
from discoverylab.scenarios.plant_nutrients.scenario import RULE_KINDS
from discoverylab.scenarios.plant_nutrients.things import LEVELS, NUTRIENTS
from discoverylab.scoring.answer_sheet import Choice, Field, Form, options_text

LEVEL_NAMES = ("low", "medium", "high")
NONE = "none"
CONDITIONS = (*(f"{n} at {v}" for n, v in itertools.product(sorted(NUTRIENTS), LEVEL_NAMES)), NONE)


def _nutrient() -> Field:
    return Field("nutrient", "Which soil nutrient decides whether the seed grows?", Choice(options_text(NUTRIENTS)),
                 gold_meaning="the rule's nutrient")  # fmt: skip


def form(sc: Scenario) -> Form:
    if sc.difficulty == "easy":
        return Form(sc.task_id, sc.difficulty, (_nutrient(),))
    if sc.difficulty == "normal":
        return Form(sc.task_id, sc.difficulty, (
            _nutrient(),
            Field("level", "At which level must that nutrient be present?", Choice(LEVEL_NAMES),
                  gold_meaning="the rule's level"),
        ))  # fmt: skip
    rules = "xor: exactly one condition holds; and: both; or: at least one; not: the nutrient is present at " \
            "another level than condition 1 (condition 2: none)"
    return Form(sc.task_id, sc.difficulty, (
        Field("rule", f"Which kind of rule makes the seed grow ({rules})?", Choice(options_text(RULE_KINDS)),
              gold_meaning="the rule's kind"),
        # A fixed condition is one of the (at most) two gold ones with probability 2/15; a fixed
        # "none" as the second is right for the "not" rules, one seed in four.
        Field("condition_1", "The rule's first condition, as '<nutrient> at <level>'.", Choice(CONDITIONS),
              chance=2 / 15, gold_meaning="a nutrient and level of the rule"),
        Field("condition_2", "The rule's second condition ('none' for a 'not' rule).", Choice(CONDITIONS),
              chance=1 / 4, gold_meaning="the other nutrient and level, or none"),
    ), unordered=(("condition_1", "condition_2"),))  # fmt: skip


def gold(sc: Scenario) -> dict[str, Any]:
    if sc.difficulty == "easy":
        return {"nutrient": sc.positive}  # type: ignore[attr-defined]
    rule = sc.rule  # type: ignore[attr-defined]
    if sc.difficulty == "normal":
        return {"nutrient": rule.n1, "level": LEVELS[rule.v1]}
    second = f"{rule.n2} at {LEVELS[rule.v2]}" if rule.n2 else NONE
    return {"rule": rule.kind, "condition_1": f"{rule.n1} at {LEVELS[rule.v1]}", "condition_2": second}


def from_report(form: Form, facts: dict[str, Any]) -> dict[str, Any]:
    if form.difficulty == "easy":
        return {"nutrient": facts.get("nutrient")}
    if form.difficulty == "normal":
        return {"nutrient": facts.get("nutrient"), "level": facts.get("level")}
    second = f"{facts['nutrient2']} at {facts['level2']}" if facts.get("nutrient2") else NONE
    return {"rule": facts.get("rule"), "condition_1": f"{facts.get('nutrient')} at {facts.get('level')}",
            "condition_2": second}  # fmt: skip
