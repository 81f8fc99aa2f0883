"""Strict parsing of the population protocol's messages: JSON experiments and the final report.

Like `parsing_dynamics`, nothing here raises on bad agent input: an unusable message becomes a
`ParseFailure` naming the problem; tolerable slips (unknown measurables, generations out of range)
are fixed and reported in `warnings`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from discoverylab.labs.sequence.parsing import (
    ParseFailure,
    as_probability,
    extract_json_object,
    normalize_sequence,
)

EXPERIMENT_FORMAT = ('{"type": "experiment", "population": ["<letters>", ...], "generations": <int>, '
                     '"measurables": [...], "reasoning": "..."}')
REPORT_FORMAT = ('{"type": "report", "hypothesis": "...", "evidence": "...", '
                 '"predictions": {"P1": {"<target>": 0.5, ...}, ...}}')


@dataclass(slots=True)
class PopulationExperiment:
    """Run the hidden process from `population` for `generations`, reporting `measurables`."""

    population: list[str]
    generations: int
    measurables: list[str]
    reasoning: str = ""
    warnings: list[str] = field(default_factory=list)
    kind: Literal["experiment"] = "experiment"

    def as_info(self) -> dict[str, Any]:
        return {"kind": self.kind, "population": list(self.population), "generations": self.generations,
                "measurables": list(self.measurables), "reasoning": self.reasoning, "warnings": list(self.warnings)}


@dataclass(slots=True)
class PopulationReport:
    """Free-text hypothesis plus, per held-out population id, the predicted target means."""

    hypothesis: str
    evidence: str
    predictions: dict[str, dict[str, float]]
    warnings: list[str] = field(default_factory=list)
    kind: Literal["report"] = "report"

    def as_info(self) -> dict[str, Any]:
        return {"kind": self.kind, "hypothesis": self.hypothesis, "evidence": self.evidence,
                "predictions": {k: dict(v) for k, v in self.predictions.items()}, "warnings": list(self.warnings)}


PopulationAction = PopulationExperiment | PopulationReport


def parse_population_message(text: str, *, length: int, size: int, max_generations: int, measurables: list[str],
                             targets: list[str], population_ids: list[str]) -> PopulationAction | ParseFailure:
    """The first JSON object of `text` as an experiment or a report (`population_ids`: the held-out
    populations a report may predict; empty before the report phase)."""
    obj = extract_json_object(text)
    if obj is None:
        return ParseFailure(f"Reply with JSON only. No JSON object found. Use {EXPERIMENT_FORMAT} or {REPORT_FORMAT}.")
    kind = obj.get("type")
    if kind is None:
        kind = "experiment" if "population" in obj else "report" if "predictions" in obj else None
    if kind == "experiment":
        return _experiment(obj, length, size, max_generations, measurables)
    if kind == "report":
        return _report(obj, targets, population_ids)
    return ParseFailure(f"`type` must be \"experiment\" or \"report\" (got {kind!r}). Use {EXPERIMENT_FORMAT} "
                        f"or {REPORT_FORMAT}.")


def _experiment(obj: dict[str, Any], length: int, size: int, max_generations: int,
                measurables: list[str]) -> PopulationExperiment | ParseFailure:
    raw = obj.get("population")
    if not isinstance(raw, list) or len(raw) != size:
        got = len(raw) if isinstance(raw, list) else type(raw).__name__
        return ParseFailure(f"`population` must be a list of exactly {size} sequences (got {got}).")
    population = []
    for i, item in enumerate(raw):
        seq = normalize_sequence(item, length)
        if seq is None:
            return ParseFailure(f"population member {i + 1} must be exactly {length} letters from ACGT "
                                f"(got {str(item)[:40]!r}).")
        population.append(seq)
    warnings: list[str] = []
    generations = obj.get("generations")
    if isinstance(generations, bool) or not isinstance(generations, int | float) or not math.isfinite(generations):
        return ParseFailure(f"`generations` must be an integer in 1..{max_generations}.")
    gens = int(generations)
    if not 1 <= gens <= max_generations:
        warnings.append(f"generations {gens} clipped to 1..{max_generations}")
        gens = min(max(gens, 1), max_generations)
    asked = obj.get("measurables", measurables)
    asked = [asked] if isinstance(asked, str) else asked if isinstance(asked, list) else []
    chosen = [m for m in asked if isinstance(m, str) and m in measurables]
    unknown = [str(m) for m in asked if not (isinstance(m, str) and m in measurables)]
    if unknown:
        warnings.append(f"unknown measurables ignored: {unknown[:5]}")
    if not chosen:
        chosen = list(measurables)
        warnings.append("no listed measurable chosen: all are reported")
    reasoning = obj.get("reasoning", "")
    return PopulationExperiment(population, gens, list(dict.fromkeys(chosen)),
                                reasoning if isinstance(reasoning, str) else "", warnings)


def _report(obj: dict[str, Any], targets: list[str], population_ids: list[str]) -> PopulationReport:
    warnings: list[str] = []
    raw = obj.get("predictions", {})
    predictions: dict[str, dict[str, float]] = {}
    if not isinstance(raw, dict):
        warnings.append("`predictions` must be an object keyed by held-out population id; ignored")
        raw = {}
    for pid, value in raw.items():
        if pid not in population_ids:
            warnings.append(f"prediction for unknown population {str(pid)[:20]!r} ignored")
            continue
        if isinstance(value, int | float) and len(targets) == 1:
            value = {targets[0]: value}
        if not isinstance(value, dict):
            warnings.append(f"prediction for {pid} must be an object keyed by target measurable; ignored")
            continue
        row = {}
        for name in targets:
            number = as_probability(value.get(name))
            if number is not None:
                row[name] = number
        if row:
            predictions[str(pid)] = row
    missing = [p for p in population_ids if p not in predictions]
    if population_ids and missing:
        warnings.append(f"no prediction for {len(missing)} held-out population(s)")
    hypothesis, evidence = (obj.get(k, "") for k in ("hypothesis", "evidence"))
    return PopulationReport(str(hypothesis), str(evidence), predictions, warnings)
