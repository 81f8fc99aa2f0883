"""Rocket Science answer sheet: the measured planet and the orbital speed (and, in Challenge, the
working fuel and how many litres of it the rocket needs)."""

from __future__ import annotations

from typing import Any

from discoverylab.scenarios.base import Scenario
from discoverylab.scoring.answer_sheet import Choice, Field, Form, Number, Tolerance

# Tolerances: the readings determine the answers to ~1e-4 (an oracle's error is under 5e-5 for
# the radius, gravity and speed, 2e-3 for the litres), the scorecard wants the speed within 2 m/s.
# Chances: the broad priors (radius 400..10,000 km, stated in Easy; mass 1e23..1e25 kg; height
# 100..10,000 km) put at most ~0.5% of seeds in any 0.2% band (a 0.5% band for the litres: ~1%),
# measured out of sample by tests/test_answer_sheet.py.
SPEED = Field("orbit_speed_m_s", "The orbital speed (m/s) for a circular orbit at the requested height.",
              Number(Tolerance(rel=0.001), span=(50.0, 24_000.0), unit="m/s"), chance=0.005,
              gold_meaning="sqrt(G M / (R + h))")  # fmt: skip


def form(sc: Scenario) -> Form:
    if sc.difficulty == "easy":
        return Form(sc.task_id, sc.difficulty, (SPEED,))
    fields: tuple[Field, ...] = (
        Field("planet_radius_km", "The planet's radius in km.",
              Number(Tolerance(rel=0.002), span=(400.0, 10_000.0), unit="km"), chance=0.005,
              gold_meaning="the radius R"),
        Field("surface_gravity_m_s2", "The gravitational acceleration at the planet's surface (m/s^2).",
              Number(Tolerance(rel=0.002), span=(0.05, 100.0), unit="m/s^2"), chance=0.005,
              gold_meaning="g = G M / R^2"),
        Field(SPEED.name, SPEED.question, SPEED.kind, chance=0.005, gold_meaning=SPEED.gold_meaning),
    )  # fmt: skip
    if sc.difficulty == "challenge":
        fields += (
            Field("fuel", "Which fuel (A, B or C) can put the rocket in orbit?", Choice(("A", "B", "C")),
                  gold_meaning="the fuel with enough thrust that fits the tank"),
            Field("fuel_litres", "How many litres of that fuel does the rocket need?",
                  Number(Tolerance(rel=0.005), span=(0.0, 10_000.0), unit="L"), chance=0.01,
                  gold_meaning="the amount for the orbital speed (rocket equation)"),
        )  # fmt: skip
    return Form(sc.task_id, sc.difficulty, fields)


def gold(sc: Scenario) -> dict[str, Any]:
    out: dict[str, Any] = {"orbit_speed_m_s": float(sc.speed)}  # type: ignore[attr-defined]
    if sc.difficulty != "easy":
        out |= {"planet_radius_km": float(sc.radius), "surface_gravity_m_s2": float(sc.gravity)}  # type: ignore[attr-defined]
    if sc.difficulty == "challenge":
        out |= {"fuel": sc.answer, "fuel_litres": float(sc.litres)}  # type: ignore[attr-defined]
    return out


def from_report(form: Form, facts: dict[str, Any]) -> dict[str, Any]:
    keys = {"orbit_speed_m_s": "orbit_speed", "planet_radius_km": "radius_km", "surface_gravity_m_s2": "gravity",
            "fuel": "fuel", "fuel_litres": "litres"}  # fmt: skip
    return {f.name: facts.get(keys[f.name]) for f in form.fields}
