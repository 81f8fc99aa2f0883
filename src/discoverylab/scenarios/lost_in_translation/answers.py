"""Lost in Translation answer sheet: what the alien words ask for (object; item, colour, count).

Fields are semantic (which object, colour, number), so they survive changes to the alien
vocabulary; the choice lists are every item, colour or count the village can ask for, and in
Easy the five objects on the store's tables (sorted): the first observation shows them and the
word always names one, so a list of all fifteen kinds overstated how hard a guess is (guessing
among the five on show expected 1/5 against a stated chance of 1/15;
`tests/attacks/test_attacks_combined.py`).
"""

from __future__ import annotations

from typing import Any

from discoverylab.scenarios.base import Scenario
from discoverylab.scenarios.lost_in_translation.scenario import CHALLENGE_ITEMS, NORMAL_ITEMS
from discoverylab.scenarios.village_things import COLORS
from discoverylab.scoring.answer_sheet import Choice, Field, Form, options_text


def form(sc: Scenario) -> Form:
    if sc.difficulty == "easy":
        offered = options_text(obj.name for obj in sc.offered)  # type: ignore[attr-defined]
        return Form(sc.task_id, sc.difficulty, (
            Field("requested_object", "Which object does the person ask you for with their alien word?",
                  Choice(offered), gold_meaning="the object the alien word names"),
        ))  # fmt: skip
    items = NORMAL_ITEMS if sc.difficulty == "normal" else CHALLENGE_ITEMS
    item = Field("requested_item", "Which item does the elder ask you to bring?", Choice(options_text(items)),
                 gold_meaning="the item word of the elder's request")  # fmt: skip
    if sc.difficulty == "normal":
        return Form(sc.task_id, sc.difficulty, (item,))
    return Form(sc.task_id, sc.difficulty, (
        item,
        Field("requested_colour", "Which colour must the items be?", Choice(options_text(COLORS)),
              gold_meaning="the colour word of the request"),
        Field("requested_count", "How many of them does the elder ask for?", Choice((1, 2, 3, 4, 5)),
              gold_meaning="the number word of the request"),
    ))  # fmt: skip


def gold(sc: Scenario) -> dict[str, Any]:
    if sc.difficulty == "easy":
        return {"requested_object": sc.target.name}  # type: ignore[attr-defined]
    out: dict[str, Any] = {"requested_item": sc.item}  # type: ignore[attr-defined]
    if sc.difficulty == "challenge":
        out |= {"requested_colour": sc.color, "requested_count": sc.count}  # type: ignore[attr-defined]
    return out


def _fits(form: Form, name: str, value: Any) -> bool:
    try:
        form.field(name).kind.parse(value)
    except (KeyError, ValueError):
        return False
    return True


def _item(form: Form, meaning: str) -> str | None:
    """The item option a meaning names ("wood stick" is the stick: the oracle reports the name
    of what it caught)."""
    kind = form.field("requested_item").kind
    assert isinstance(kind, Choice)
    said = meaning.casefold().split()
    return next((str(o) for o in kind.options if str(o) in said), None)


def from_report(form: Form, facts: dict[str, Any]) -> dict[str, Any]:
    """Easy: the meaning of the word. Village: the oracle's word -> meaning facts, in the order of
    the elder's sentence (a number, then a colour, then the item)."""
    if "meaning" in facts:
        return {"requested_object": facts["meaning"]}
    out: dict[str, Any] = {}
    for value in facts.values():
        if isinstance(value, int) and not isinstance(value, bool) and _fits(form, "requested_count", value):
            out["requested_count"] = value
        elif _fits(form, "requested_colour", value):
            out["requested_colour"] = value
        elif isinstance(value, str) and (item := _item(form, value)) is not None:
            out["requested_item"] = item
    if "requested_count" not in out and any(f.name == "requested_count" for f in form.fields):
        out["requested_count"] = 1  # no number word: one
    return out
