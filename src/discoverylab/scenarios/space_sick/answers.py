"""Space Sick answer sheet. Easy: which instrument detects the pathogen, and its name. Normal:
which mushroom colours carry the mold. Challenge: how many of the twelve mushrooms the colony
starts with (five on the cafeteria tables, seven in the farm field) are poisonous: the detector
(the glowing rock) is the same every seed, so the sheet asks what only using it tells."""

from __future__ import annotations

import math
from typing import Any

from discoverylab.scenarios.base import Scenario
from discoverylab.scenarios.space_sick.colony import MOLD_OPTIONS
from discoverylab.scenarios.space_sick.things import PATHOGENS, SIMPLE_INSTRUMENTS
from discoverylab.scoring.answer_sheet import Choice, Field, Form, options_text

START_MUSHROOMS = 12
# Each starting mushroom is poisonous with probability 1/2: the best fixed count (6) is right
# with probability C(12, 6) / 2^12.
COUNT_CHANCE = math.comb(START_MUSHROOMS, START_MUSHROOMS // 2) / 2**START_MUSHROOMS


def _mold_text(colours: tuple[str, ...] | list[str]) -> str:
    return " and ".join(colours)


def form(sc: Scenario) -> Form:
    if sc.difficulty == "easy":
        return Form(sc.task_id, sc.difficulty, (
            Field("detecting_instrument", "Which instrument detects the pathogen?",
                  Choice(options_text(SIMPLE_INSTRUMENTS)), gold_meaning="the one instrument that detects it"),
            Field("pathogen", "Which pathogen contaminates the mushroom?", Choice(options_text(PATHOGENS)),
                  gold_meaning="the pathogen's name"),
        ))  # fmt: skip
    if sc.difficulty == "normal":
        return Form(sc.task_id, sc.difficulty, (
            Field("moldy_colours", "Which mushroom colour(s) carry the mold that makes colonists ill?",
                  Choice(options_text(_mold_text(o) for o in MOLD_OPTIONS)), gold_meaning="the moldy colours"),
        ))  # fmt: skip
    return Form(sc.task_id, sc.difficulty, (
        Field("poisonous_at_start", f"How many of the {START_MUSHROOMS} mushrooms the colony starts with (on the "
              "cafeteria tables and in the farm field) are poisonous?", Choice(tuple(range(START_MUSHROOMS + 1))),
              chance=COUNT_CHANCE, gold_meaning="poisonous mushrooms at step 0"),
    ))  # fmt: skip


def _poisonous_at_start(sc: Scenario) -> int:
    """Counted on a fresh build of the same instance (the episode may have eaten some)."""
    fresh = type(sc)(sc.world.fresh(), sc.difficulty)
    try:
        return sum(1 for o in fresh.world.objects.values() if "mushroom" in o.type and getattr(o, "poisonous", False))
    finally:
        fresh.world.dispose()


def gold(sc: Scenario) -> dict[str, Any]:
    if sc.difficulty == "easy":
        return {"detecting_instrument": sc.instrument_name, "pathogen": sc.pathogen}  # type: ignore[attr-defined]
    if sc.difficulty == "normal":
        return {"moldy_colours": _mold_text(sc.moldy)}  # type: ignore[attr-defined]
    return {"poisonous_at_start": _poisonous_at_start(sc)}


def from_report(form: Form, facts: dict[str, Any]) -> dict[str, Any]:
    if form.difficulty == "easy":
        return {"detecting_instrument": facts.get("instrument"), "pathogen": facts.get("pathogen")}
    if form.difficulty == "normal":
        seen = set(facts.get("moldy_colours", []))
        match = next((o for o in MOLD_OPTIONS if set(o) == seen), None)
        return {"moldy_colours": _mold_text(match)} if match else {}
    return {"poisonous_at_start": facts.get("poisonous_at_start")}
