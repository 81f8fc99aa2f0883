"""The answer sheet in the UI: the task's typed form beside the knowledge report, graded
exactly (no LLM) when the game ends, stored as the agents' records store it (`answers`,
`answers_score`, `answers_grade`).

The forms live in `scenarios.answer_forms`; a build without it (or a task without a form) has
no answer sheet and the UI shows none. The form holds no answer (its choices are names the
player can see, in a fixed order); its grade names the gold, so it is shown only once the game
has ended, like the full scorecard.
"""

from __future__ import annotations

import importlib
import math
from types import ModuleType
from typing import Any

MAX_FIELDS = 40
MAX_TEXT = 200
MAX_LIST = 50


def _forms() -> ModuleType | None:
    try:
        return importlib.import_module("discoverylab.scenarios.answer_forms")
    except ImportError:
        return None


def public_form(env: Any) -> dict[str, Any] | None:
    """The task's form as JSON for the page (fields, questions, kinds, options), or None."""
    forms = _forms()
    if forms is None or env.scenario is None or not forms.has_answer_sheet(env.scenario_cls.task_id):
        return None
    form: dict[str, Any] = forms.answer_form(env).to_dict()
    return form


def check(answers: Any) -> dict[str, Any]:
    """The sheet as sent, bounded: a dict of at most 40 fields, each a short text, a number or
    a short list of numbers (anything else is a ValueError with the reason)."""
    if answers is None:
        return {}
    if not isinstance(answers, dict) or len(answers) > MAX_FIELDS:
        raise ValueError(f"answers must be an object of at most {MAX_FIELDS} fields")
    for key, value in answers.items():
        if not isinstance(key, str) or len(key) > 80:
            raise ValueError("answer field names are short strings")
        if isinstance(value, str) and len(value) > MAX_TEXT:
            raise ValueError(f"answer {key!r}: at most {MAX_TEXT} characters")
        if isinstance(value, list) and (len(value) > MAX_LIST or not all(isinstance(v, (int, float)) for v in value)):
            raise ValueError(f"answer {key!r}: a list of at most {MAX_LIST} numbers")
        if value is not None and not isinstance(value, (str, int, float, list)):
            raise ValueError(f"answer {key!r}: a text, a number or a list of numbers")
        if not all(math.isfinite(v) for v in (value if isinstance(value, list) else [value]) if isinstance(v, float)):
            raise ValueError(f"answer {key!r}: numbers must be finite (NaN and Infinity would make the log invalid JSON)")
    return dict(answers)


def grade(env: Any, answers: dict[str, Any]) -> dict[str, Any] | None:
    """`{answers, answers_score, answers_grade}` for the record, or None without a form. An
    empty sheet is graded too (it scores 0), so a game ended without one counts as the agents'
    unhanded sheets do."""
    forms = _forms()
    if public_form(env) is None or forms is None:
        return None
    result: dict[str, Any] = forms.grade_answers(env, answers, reveal=True).to_dict()
    return {"answers": answers, "answers_score": result.pop("score"), "answers_grade": result}
