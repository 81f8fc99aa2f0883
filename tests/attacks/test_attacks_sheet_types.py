"""Answer sheets under JSON type confusion (session 21 red team).

A structured-output agent controls the JSON types of its sheet. Every value here either names
two answers at once (separators the hedge test does not try: "/", "|", ";", newlines, "±", "..")
or is malformed (NaN, Infinity, a huge integer, a number wrapped in a list or an object, a
boolean): on every field of every discovery form, each is invalid, graded wrong and never raises.
One sealed instance per task and difficulty supplies the gold.
"""

from __future__ import annotations

from typing import Any

import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.instances import make_instance
from discoverylab.scenarios.answer_forms import answer_form, answer_gold
from discoverylab.scenarios.registry import all_tasks
from discoverylab.scoring.answer_sheet import Choice, Field, Number, grade

KEY = b"discoverylab-red-team-sheet-types-key"
TASKS = [(t, d) for t, cls in sorted(all_tasks().items()) if cls.suite == "discovery" for d in cls.difficulties]
MALFORMED: list[Any] = [float("nan"), float("inf"), float("-inf"), "NaN", "Infinity", "-inf", "1e999", 10**400,
                        True, False, {"value": 1}, [], "", None]  # fmt: skip


def confused(f: Field, right: Any) -> list[Any]:
    """Values that hedge around `right` or are malformed, for field `f`."""
    kind = f.kind
    if isinstance(kind, Choice):
        wrong = next(o for o in kind.options if o != right)
        pairs = [f"{right}{sep}{wrong}" for sep in (" / ", "|", "; ", "\n", " & ", " and/or ")]
        return [*pairs, f"{wrong}\n{right}", [right], {"answer": right}, *MALFORMED]
    if isinstance(kind, Number):
        return [f"{right}±{abs(right)}", f"{right * 0.5}..{right * 1.5}", f"{right} / {right * 2}", [right],
                {"value": right}, [[right]], *MALFORMED]  # fmt: skip
    return [[[v] for v in right], [*right, *right], [{"v": v} for v in right], [float("nan")] * len(right),
            " ".join(map(str, right)), *MALFORMED]  # fmt: skip


@pytest.mark.parametrize(("task", "difficulty"), TASKS, ids=[f"{t}-{d}" for t, d in TASKS])
def test_attack_type_confused_answer_sheet_scores_zero(task: str, difficulty: str) -> None:
    env = DiscoveryWorldEnv(task, difficulty)
    env.reset(options={"instance": make_instance(task, difficulty, "test", 0, KEY)})
    form, gold = answer_form(env), answer_gold(env)
    env.close()
    assert grade(form, gold, gold).score == 1.0
    names = [f.name for f in form.fields]
    for f in form.fields:
        for value in confused(f, gold[f.name]):
            result = grade(form, {**gold, f.name: value}, gold)
            row = result.fields[names.index(f.name)]
            assert not row["correct"] and f.name in result.errors, (f.name, value, row)
