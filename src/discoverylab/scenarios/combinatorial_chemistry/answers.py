"""Combinatorial Chemistry answer sheet: the rust remover (Easy: which substance; Normal and
Challenge: the parts of each substance, compared as proportions, so 2:2:2 equals 1:1:1)."""

from __future__ import annotations

from typing import Any

from discoverylab.scenarios.base import Scenario
from discoverylab.scenarios.combinatorial_chemistry.scenario import EASY_REMEDIES
from discoverylab.scenarios.combinatorial_chemistry.things import SUBSTANCE_NAMES
from discoverylab.scoring.answer_sheet import Choice, Field, Form, Numbers, Tolerance

# Best blind answers (issue 21). Easy: one of four substances, drawn uniformly: 1/4. Normal and
# Challenge: the remedy is uniform over 250 / 862 distinct reduced recipes, and no two of them
# point the same way; compared as proportions within 0.01, one answer halfway between two close
# recipes matches both, and none matches more (checked over the whole space): 2/250 and 2/862.
CHANCE = {"easy": 1 / len(EASY_REMEDIES), "normal": 2 / 250, "challenge": 2 / 862}


def _names(difficulty: str) -> tuple[str, ...]:
    return tuple(SUBSTANCE_NAMES[: 3 if difficulty == "normal" else 4])


def form(sc: Scenario) -> Form:
    names = _names(sc.difficulty)
    if sc.difficulty == "easy":
        return Form(sc.task_id, sc.difficulty, (
            Field("rust_remover", "Which single substance removes the rust from the key?", Choice(names),
                  chance=CHANCE["easy"], gold_meaning="the remedy substance"),
        ))  # fmt: skip
    listed = ", ".join(names)
    return Form(sc.task_id, sc.difficulty, (
        Field("proportions", f"The parts of each substance in the rust remover, in the order {listed} (0 for a "
              "substance it does not contain; only the proportions count).",
              Numbers(len(names), Tolerance(abs=0.01), span=(0.0, 3.0), scale_free=True),
              chance=CHANCE[sc.difficulty], gold_meaning="the remedy's parts per substance"),
    ))  # fmt: skip


def gold(sc: Scenario) -> dict[str, Any]:
    remedy: dict[str, int] = sc.remedy  # type: ignore[attr-defined]
    if sc.difficulty == "easy":
        (name,) = remedy
        return {"rust_remover": name}
    return {"proportions": [float(remedy.get(name, 0)) for name in _names(sc.difficulty)]}


def from_report(form: Form, facts: dict[str, Any]) -> dict[str, Any]:
    remedy = dict(facts.get("remedy", {}))
    if form.fields[0].name == "rust_remover":
        return {"rust_remover": next(iter(remedy), None)} if len(remedy) == 1 else {}
    return {"proportions": [remedy.get(name, 0) for name in _names(form.difficulty)]}
