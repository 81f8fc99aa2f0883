"""Which answer sheet each discovery task asks, its gold, and how an oracle fills it.

Each theme keeps its form in its own `answers.py` (form(scenario), gold(scenario),
from_report(form, facts)); this module finds it by task id, so scenario files stay untouched.
The form is public (any time after reset: it lists only what an agent can see or what every seed
offers); the gold is for evaluators once the episode has ended, like the scorecard's gold.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from discoverylab.scenarios.base import Scenario
from discoverylab.scoring.answer_sheet import Form, SheetGrade, grade

ANSWER_MODULES = {
    "Proteomics": "discoverylab.scenarios.proteomics.answers",
    "ArchaeologyDating": "discoverylab.scenarios.archaeology.answers",
    "LostInTranslation": "discoverylab.scenarios.lost_in_translation.answers",
    "ReactorLab": "discoverylab.scenarios.reactor_lab.answers",
    "CombinatorialChemistry": "discoverylab.scenarios.combinatorial_chemistry.answers",
    "PlantNutrients": "discoverylab.scenarios.plant_nutrients.answers",
    "RocketScience": "discoverylab.scenarios.rocket_science.answers",
    "SpaceSick": "discoverylab.scenarios.space_sick.answers",
}


class NoAnswerSheet(LookupError):
    """The task has no answer sheet (unit tests and the tutorial)."""


def _module(task_id: str) -> ModuleType:
    if task_id not in ANSWER_MODULES:
        raise NoAnswerSheet(f"task {task_id!r} has no answer sheet (tasks with one: {', '.join(ANSWER_MODULES)})")
    return importlib.import_module(ANSWER_MODULES[task_id])


def _env(target: Any) -> Any:
    """The env itself under any Gymnasium wrappers (they do not forward attributes)."""
    return getattr(target, "unwrapped", target)


def _scenario(target: Any) -> Scenario:
    """A scenario, or an env holding one (`DiscoveryWorldEnv` after reset, wrapped or not)."""
    scenario = target if isinstance(target, Scenario) else getattr(_env(target), "scenario", None)
    if not isinstance(scenario, Scenario):
        raise RuntimeError("answer sheets need a built scenario: call env.reset() first")
    return scenario


def has_answer_sheet(task_id: str) -> bool:
    return task_id in ANSWER_MODULES


def answer_form(target: Any) -> Form:
    """The public form of a scenario (or of an env after reset)."""
    scenario = _scenario(target)
    form: Form = _module(scenario.task_id).form(scenario)
    return form


def answer_gold(target: Any) -> dict[str, Any]:
    """The gold values (evaluators only: they are the answer)."""
    scenario = _scenario(target)
    gold: dict[str, Any] = _module(scenario.task_id).gold(scenario)
    return gold


def grade_answers(target: Any, answers: Any, reveal: bool = False) -> SheetGrade:
    """Grade a filled sheet against the scenario's gold. For an env, only once its episode has
    ended unless `reveal` (evaluators), the same rule as `env.scorecard(reveal=...)`."""
    if not reveal and not isinstance(target, Scenario) and not getattr(_env(target), "_ended", False):
        raise RuntimeError("the answer sheet is graded after the episode ends (or pass reveal=True)")
    return grade(answer_form(target), answers, answer_gold(target))


def oracle_answers(task_id: str, form: Form, facts: dict[str, Any] | None) -> dict[str, Any]:
    """An oracle's sheet, filled from the facts of its knowledge report (what it found out)."""
    if not facts:
        return {}
    answers: dict[str, Any] = _module(task_id).from_report(form, facts)
    return answers
