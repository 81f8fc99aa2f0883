"""Combinatorial Chemistry answer sheet: the rust remover (Easy: which substance; Normal and
Challenge: the parts of each substance, compared as proportions, so 2:2:2 equals 1:1:1)."""

from __future__ import annotations

from typing import Any

from discoverylab.scenarios.base import Scenario
from discoverylab.scenarios.combinatorial_chemistry.scenario import EASY_REMEDIES
from discoverylab.scenarios.combinatorial_chemistry.things import SUBSTANCE_NAMES
from discoverylab.scoring.answer_sheet import Choice, Field, Form, Numbers, Tolerance

# Best blind answers. Easy: each block of five seeds holds Substance C twice (2/5). Normal: 2 or 3
# of 3 substances, 3 or 4 parts: 1:1:1 comes up with probability 1/2 * 1/2. Challenge: the same
# over 4 substances: 1:1:1 on one given triple, 1/4 * 1/4.
CHANCE = {"easy": EASY_REMEDIES.count("Substance C") / len(EASY_REMEDIES), "normal": 1 / 4, "challenge": 1 / 16}


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
