"""Proteomics answer sheet: which species is the outlier (choice among the instance's species)."""

from __future__ import annotations

from typing import Any

from discoverylab.scenarios.base import Scenario
from discoverylab.scoring.answer_sheet import Choice, Field, Form, options_text


def form(sc: Scenario) -> Form:
    species = options_text(sp.name for sp in sc.species)  # type: ignore[attr-defined]
    return Form(sc.task_id, sc.difficulty, (
        Field("outlier_species", "Which animal species has protein values that are outliers from the cluster "
              "of the other species?", Choice(species), gold_meaning="the migrated species"),
    ))  # fmt: skip


def gold(sc: Scenario) -> dict[str, Any]:
    return {"outlier_species": sc.answer.name}  # type: ignore[attr-defined]


def from_report(form: Form, facts: dict[str, Any]) -> dict[str, Any]:
    return {"outlier_species": facts.get("outlier")}
