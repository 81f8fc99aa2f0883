"""Archaeology answer sheet: the artifacts' ages (Easy/Normal), the oldest dig site, and (Challenge)
which radioisotope channel dates artifacts."""

from __future__ import annotations

from typing import Any

from discoverylab.scenarios.base import Scenario
from discoverylab.scoring.answer_sheet import Choice, Field, Form, Numbers, Tolerance

AGE_GRID = tuple(range(150_000, 1_000_001, 25_000))
"""The radiocarbon ages an unknown artifact may have (Easy, Normal; `scenario.unknown_ages`)."""
OLDEST_FROM = 12
"""The oldest of the three is drawn uniformly from `AGE_GRID[OLDEST_FROM:]` (450,000 years and up), the
other two below it: each oldest age is as likely as any other (1/23), and at least twelve ages lie below."""

AGES_FIELD = Field(
    "artifact_ages_years",
    "The ages of the three (unknown) artifacts in years, from the youngest to the oldest.",
    # The most likely sorted triple: the lowest oldest age (1/23) with two of the twelve below it.
    Numbers(3, Tolerance(rel=0.01), span=(150_000.0, 1_000_000.0), unit="years"),
    chance=1 / ((len(AGE_GRID) - OLDEST_FROM) * OLDEST_FROM * (OLDEST_FROM - 1) // 2),
    gold_meaning="the radiocarbon ages, ascending",
)


def _site(number: int) -> str:
    return f"Dig Site {number}"


def form(sc: Scenario) -> Form:
    if sc.difficulty == "easy":
        return Form(sc.task_id, sc.difficulty, (AGES_FIELD,))
    sites = tuple(_site(s.number) for s in sc.sites if not s.known)  # type: ignore[attr-defined]
    oldest = Field("oldest_site", "Which dig site holds the oldest (unknown) artifact?", Choice(sites),
                   gold_meaning="the site whose buried artifact is oldest")  # fmt: skip
    if sc.difficulty == "normal":
        return Form(sc.task_id, sc.difficulty, (oldest, AGES_FIELD))
    # Chance 1/3, not 1/4: the unknown artifacts' readings alone tell the noise channel from the three
    # that read like dating channels (two of them with the ages shifted); only the known artifacts
    # tell which of the three dates (tests/attacks/test_attacks_archaeology.py).
    channel = Field("dating_channel", "Which radioisotope meter channel dates artifacts (the one that falls with "
                    "age)?", Choice((1, 2, 3, 4)), chance=1 / 3,
                    gold_meaning="the real channel (the others read wrong ages or noise)")  # fmt: skip
    return Form(sc.task_id, sc.difficulty, (channel, oldest))


def gold(sc: Scenario) -> dict[str, Any]:
    if sc.difficulty == "easy":
        ages = [a.props["radiocarbon_age"] for a in sc.artifacts]  # type: ignore[attr-defined]
        return {"artifact_ages_years": sorted(float(a) for a in ages)}
    oldest = _site(sc.target_site.number)  # type: ignore[attr-defined]
    if sc.difficulty == "normal":
        ages = [a.props["radiocarbon_age"] for a in sc.unknown]  # type: ignore[attr-defined]
        return {"oldest_site": oldest, "artifact_ages_years": sorted(float(a) for a in ages)}
    return {"dating_channel": sc.channel, "oldest_site": oldest}  # type: ignore[attr-defined]


def from_report(form: Form, facts: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "oldest_age" in facts:
        out["artifact_ages_years"] = sorted([*facts.get("other_ages", []), facts["oldest_age"]])
    if facts.get("oldest_site") is not None:
        out["oldest_site"] = _site(int(facts["oldest_site"]))
    if "dating_channel" in facts:
        out["dating_channel"] = int(facts["dating_channel"])
    return {k: v for k, v in out.items() if k in {f.name for f in form.fields}}
