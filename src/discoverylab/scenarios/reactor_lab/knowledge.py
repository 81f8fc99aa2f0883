"""Reactor Lab's knowledge questions and critical hypotheses, declared from a built lab."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from discoverylab.scenarios.reactor_lab.scenario import ReactorLab


def declare_knowledge(lab: ReactorLab) -> None:
    """The knowledge questions (the property, except in Easy, and the law with its coefficients) and
    the critical hypotheses."""
    card, dim = lab.scorecard, lab.dimension
    reading, inst = dim.reading, f"{dim.reading} reading"
    if lab.difficulty != "easy":  # Easy's room holds the critical instrument alone: it names the property
        card.ask(
            f"Does it clearly state that the resonance frequency of the crystals is dependent upon the {reading} "
            "reading?",
            f"The resonance frequency of a quantum crystal depends on its {dim.words}, as read by the {reading}.",
        )
    if lab.difficulty == "challenge":
        a, b, c = lab.coefficients
        card.ask(
            f"Does it clearly state that the relationship is quadratic, with the crystal resonance frequency = "
            f"{a} * ({inst})^2 + {b} * ({inst}) + {c} (i.e. `y = a*x^2 + b*x + c`, with `a` = {a}, `b` = {b}, "
            f"`c` = {c})?",
            f"frequency = {a} * x^2 + {b} * x + {c}, where x is the {inst}",
        )
        formula = f"{a} * x^2 + {b} * x + {c}"
    elif lab.difficulty == "easy":
        m, _ = lab.coefficients
        card.ask(
            f"Does it clearly state that the relationship is linear, with the crystal resonance frequency = "
            f"({m} * {inst}) (i.e. a slope of {m}, and no offset)?",
            f"frequency = {m} * x, where x is the {inst} (slope {m}, no offset)",
        )
        formula = f"{m} * x"
    else:
        m, b = lab.coefficients
        card.ask(
            f"Does it clearly state that the relationship is linear, with the crystal resonance frequency = "
            f"({m} * {inst}) + {b} (i.e. a slope of {m} and an offset of {b})?",
            f"frequency = {m} * x + {b}, where x is the {inst} (slope {m}, offset {b})",
        )
        formula = f"{m} * x + {b}"
    card.critical_hypotheses = [
        f"The resonance frequency of a quantum crystal is a function of the {inst}: frequency = {formula}."
    ]
    for crystal in lab.crystals:
        value = lab.key_values[crystal.uuid]
        card.critical_hypotheses.append(
            f"A critical measurement for {crystal.name} is: {dim.words} of {value:.2f}."
        )
        card.critical_hypotheses.append(
            f"The resonance frequency of {crystal.name} is {crystal.resonance_freq} Hz."
        )
