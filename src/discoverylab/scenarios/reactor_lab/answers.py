"""Reactor Lab answer sheet: which property sets a crystal's resonance frequency, and the
coefficients of the law (Easy m in f = m*x; Normal [m, b] in f = m*x + b; Challenge [a, b, c]
in f = a*x^2 + b*x + c).

Easy asks the coefficient only: its locked room holds nothing but the critical instrument, so
the instrument on show names the property (copying the property of the public instance whose
first observation looks most alike was right on 0.85 of sealed instances against a stated
chance of 0.2; `tests/attacks/test_attacks_combined.py`)."""

from __future__ import annotations

from typing import Any

from discoverylab.scenarios.base import Scenario
from discoverylab.scenarios.reactor_lab.scenario import DIMENSIONS, KEY_BY_SEED
from discoverylab.scoring.answer_sheet import Choice, Field, Form, Numbers, Tolerance, options_text

LAWS = {"easy": "m in frequency = m * x", "normal": "[m, b] in frequency = m * x + b",
        "challenge": "[a, b, c] in frequency = a * x^2 + b * x + c"}  # fmt: skip
# Coefficients: (count, prior span, tolerance per coefficient, best blind answer's chance). Slopes
# and curvatures are whole numbers (exact); offsets keep some room (the oracle's fits, radiation
# included since the shielded lab, miss by at most 0 in Normal and 0.4 in Challenge on seeds 0-99):
# Normal's b (one of 20) within 2.5 (5 of 20); Challenge's b (one of 20) within 1.5 (3 of 20) and c
# (20..849) within 10 (about 20 of 830), a (one of 10) exact: 1/10 * 3/20 * 20/830, rounded up.
EXACT = Tolerance(abs=0.5)
COEFFICIENTS = {
    "easy": (1, (50.0, 80.0), (EXACT,), 1 / 30),
    "normal": (2, (90.0, 110.0), (EXACT, Tolerance(abs=2.5)), 1 / 20 * 5 / 20),
    "challenge": (3, (10.0, 850.0), (EXACT, Tolerance(abs=1.5), Tolerance(abs=10.0)), 1 / 1000),
}


def form(sc: Scenario) -> Form:
    words = options_text(DIMENSIONS[key].words for key in KEY_BY_SEED[sc.difficulty])
    count, span, tolerance, chance = COEFFICIENTS[sc.difficulty]
    key = Field("key_property", "Which measurable property of a crystal determines its resonance frequency?",
                Choice(words), gold_meaning="the property the frequency is a function of")
    reading = "the reading of the lab's instrument" if sc.difficulty == "easy" else "that property's reading"
    law = Field("coefficients", f"The coefficients {LAWS[sc.difficulty]}, where x is {reading}.",
                Numbers(count, tolerance, span), chance=chance, gold_meaning="the law's coefficients")
    return Form(sc.task_id, sc.difficulty, (law,) if sc.difficulty == "easy" else (key, law))


def gold(sc: Scenario) -> dict[str, Any]:
    coefficients = [float(c) for c in sc.coefficients]  # type: ignore[attr-defined]
    if sc.difficulty == "easy":
        return {"coefficients": coefficients[:1]}  # (slope, 0): no offset in Easy; its property is on show
    return {"key_property": sc.dimension.words, "coefficients": coefficients}  # type: ignore[attr-defined]


def from_report(form: Form, facts: dict[str, Any]) -> dict[str, Any]:
    """The oracle's property and fitted coefficients (an Easy fit may add an offset of ~0: the
    form asks the slope only)."""
    count = COEFFICIENTS[form.difficulty][0]
    answers = {"key_property": facts.get("property"), "coefficients": list(facts.get("coefficients", []))[:count]}
    return {f.name: answers[f.name] for f in form.fields}
