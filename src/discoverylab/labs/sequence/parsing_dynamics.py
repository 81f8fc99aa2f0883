"""Strict parsing of Protocol B (unknown dynamics) messages: JSON experiments and the final report.

Like `parsing`, nothing here raises on bad agent input (spec §2.7): an unusable message becomes a
`ParseFailure` naming the problem; tolerable slips (unknown measurables, steps out of range, a
missing `type` that the fields make obvious) are fixed and reported in `warnings`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from discoverylab.labs.sequence.parsing import (
    ParseFailure,
    as_probability,
    extract_json_object,
    normalize_sequence,
)


# ---------------------------------------------------------------------- Protocol B messages
@dataclass(slots=True)
class ExperimentAction:
    """Run the dynamics from `sequence` for `steps` steps, measuring `measurables`."""

    sequence: str
    measurables: list[str]
    steps: int
    reasoning: str = ""
    warnings: list[str] = field(default_factory=list)
    kind: Literal["experiment"] = "experiment"

    def as_info(self) -> dict[str, Any]:
        return {"kind": self.kind, "sequence": self.sequence, "measurables": list(self.measurables),
                "steps": self.steps, "reasoning": self.reasoning, "warnings": list(self.warnings)}


SHORT_KEYS = {"gc_content": "gc", "palindrome_score": "pal"}
"""The paper's short report keys (spec §2.7: attractors as {gc, pal, type}); other measurables use their name."""
PAPER_AXES = ("gc_content", "palindrome_score")


def axis_key(name: str) -> str:
    """The key under which a report gives a coordinate along measurable `name`."""
    return SHORT_KEYS.get(name, name)


def keyed(coords: dict[str, float]) -> dict[str, float]:
    """Coordinates under their report keys (`gc`, `pal`, else the measurable's name)."""
    return {axis_key(k): v for k, v in coords.items()}


@dataclass(slots=True)
class AttractorClaim:
    """A reported attractor: its coordinates by measurable name (e.g. `gc_content`) and its type."""

    coords: dict[str, float]
    type: Literal["fixed", "2-cycle", "other"] = "other"


@dataclass(slots=True)
class StartPrediction:
    """Predicted fate of one held-out start: attractor number (1-based) and/or end-state coordinates."""

    attractor: int | None = None
    state: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class ReportAction:
    """The final report of Protocol B (free text plus optional structured fields)."""

    hypothesis: str
    evidence: str
    attractors: list[AttractorClaim]
    drivers: list[str]
    predictions: dict[str, StartPrediction]
    warnings: list[str] = field(default_factory=list)
    kind: Literal["report"] = "report"

    def as_info(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "hypothesis": self.hypothesis, "evidence": self.evidence,
            "attractors": [keyed(a.coords) | {"type": a.type} for a in self.attractors],
            "drivers": list(self.drivers),
            "predictions": {k: {"attractor": p.attractor} | keyed(p.state) for k, p in self.predictions.items()},
            "warnings": list(self.warnings),
        }


DynamicsAction = ExperimentAction | ReportAction

_EXPERIMENT_FORMAT = ('{"type": "experiment", "sequence": "<letters>", "measurables": [...], '
                      '"steps": <int>, "reasoning": "..."}')
_REPORT_FORMAT = ('{"type": "report", "hypothesis": "...", "evidence": "...", "attractors": '
                  '[{"gc": 0.5, "pal": 0.5, "type": "fixed|2-cycle|other"}], "drivers": [...], '
                  '"predictions": {...}}')
_GENERAL_REPORT_FORMAT = ('{"type": "report", "hypothesis": "...", "evidence": "...", "attractors": '
                          '[{"<measurable>": 0.5, "type": "fixed|2-cycle|other"}], "drivers": [...], '
                          '"predictions": {...}}')


def parse_dynamics_message(text: str, *, length: int, max_steps: int, measurables: list[str],
                           start_ids: list[str], list_axes: Sequence[str] = PAPER_AXES
                           ) -> DynamicsAction | ParseFailure:
    """Parse a Protocol B message (spec §2.7): the first JSON object, an experiment or a report.

    `list_axes` are the coordinates the lab's report format names (the paper's (gc, pal)); a report
    must then give all of them per attractor. With no named axes (labs whose report keys coordinates
    by measurable), any non-empty set of listed measurables is a valid coordinate set.
    """
    obj = extract_json_object(text)
    if obj is None:
        report_format = _REPORT_FORMAT if list(list_axes) == list(PAPER_AXES) else _GENERAL_REPORT_FORMAT
        return ParseFailure(f"Reply with JSON only. No JSON object found. Use {_EXPERIMENT_FORMAT} "
                            f"or {report_format}.")
    kind = obj.get("type")
    warnings: list[str] = []
    if not isinstance(kind, str) or kind.strip().lower() not in ("experiment", "report"):
        if kind is None and "sequence" in obj and "hypothesis" not in obj:
            kind = "experiment"
            warnings.append('`type` missing; treated as "experiment".')
        elif kind is None and "hypothesis" in obj and "sequence" not in obj:
            kind = "report"
            warnings.append('`type` missing; treated as "report".')
        else:
            return ParseFailure(f'`type` must be "experiment" or "report" (got {kind!r}).')
    if kind.strip().lower() == "experiment":
        return _parse_experiment(obj, length, max_steps, measurables, warnings)
    return _parse_report(obj, start_ids, warnings, measurables, tuple(list_axes))


def _parse_experiment(obj: dict[str, Any], length: int, max_steps: int, allowed: list[str],
                      warnings: list[str]) -> ExperimentAction | ParseFailure:
    seq = normalize_sequence(obj.get("sequence"), length)
    if seq is None:
        raw = obj.get("sequence")
        got = f"{len(raw.strip())} characters" if isinstance(raw, str) else f"{type(raw).__name__}"
        return ParseFailure(f"`sequence` must be exactly {length} letters from A, C, G, T (got {got}).")
    raw_meas = obj.get("measurables", [])
    if isinstance(raw_meas, str):
        raw_meas = [raw_meas]
    if not isinstance(raw_meas, list):
        return ParseFailure("`measurables` must be a list of names, e.g. " + json.dumps(allowed[:2]) + ".")
    chosen: list[str] = []
    for name in raw_meas:
        key = str(name).strip().lower()
        if key in allowed and key not in chosen:
            chosen.append(key)
        elif key not in allowed:
            warnings.append(f"unknown measurable {str(name)[:40]!r} dropped")
    if not chosen:
        chosen = list(allowed)
    steps_raw = obj.get("steps", obj.get("number_of_steps"))
    steps = _as_int(steps_raw)
    if steps is None:
        return ParseFailure(f"`steps` must be an integer from 1 to {max_steps} (got {steps_raw!r}).")
    if not 1 <= steps <= max_steps:
        warnings.append(f"steps {steps} clamped to 1..{max_steps}")
        steps = min(max_steps, max(1, steps))
    reasoning = obj.get("reasoning", "")
    return ExperimentAction(sequence=seq, measurables=chosen, steps=steps,
                            reasoning=reasoning if isinstance(reasoning, str) else str(reasoning),
                            warnings=warnings)


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        return int(value.strip())
    return None


_DRIVER_ALIASES = {
    "gc": "gc_content", "gc content": "gc_content", "gc_fraction": "gc_content",
    "pal": "palindrome_score", "palindrome": "palindrome_score", "palindromicity": "palindrome_score",
    "palindrome score": "palindrome_score", "entropy": "entropy_score", "entropy score": "entropy_score",
    "hamming": "hamming_distance", "hamming distance": "hamming_distance",
    "weighted": "weighted_count", "weighted count": "weighted_count", "alternation": "alternation_k",
    "energy": "interaction_energy", "motif": "motif_score",
}

_CYCLE_WORDS = {"2-cycle", "2cycle", "two-cycle", "two cycle", "2 cycle", "cycle", "oscillation",
                "period-2", "period 2", "limit cycle"}
_FIXED_WORDS = {"fixed", "fixed point", "fixed-point", "point", "stable"}
_NOT_COORDINATES = {"type", "attractor", "kind", "name", "id"}


def measurable_name(raw: Any) -> str:
    """A measurable's canonical name from a report key or alias (`gc` -> `gc_content`)."""
    key = str(raw).strip().lower()
    return _DRIVER_ALIASES.get(key, key)


def _parse_report(obj: dict[str, Any], start_ids: list[str], warnings: list[str], measurables: list[str],
                  list_axes: tuple[str, ...]) -> ReportAction:
    def text_field(key: str) -> str:
        value = obj.get(key, "")
        return value if isinstance(value, str) else json.dumps(value)

    drivers: list[str] = []
    raw_drv = obj.get("drivers", [])
    for name in raw_drv if isinstance(raw_drv, list) else [raw_drv]:
        key = measurable_name(name)
        if key and key not in drivers:
            drivers.append(key)
    reader = _CoordinateReader(measurables, list_axes, warnings)
    attractors: list[AttractorClaim] = []
    raw_att = obj.get("attractors", [])
    for item in raw_att if isinstance(raw_att, list) else []:
        claim = reader.attractor(item, drivers)
        if claim is None:
            warnings.append(f"attractor {str(item)[:60]} ignored: give {reader.example()}")
        else:
            attractors.append(claim)
    predictions: dict[str, StartPrediction] = {}
    raw_pred = obj.get("predictions", {})
    ids = {sid.lower(): sid for sid in start_ids}
    for key, value in (raw_pred.items() if isinstance(raw_pred, dict) else []):
        sid = ids.get(str(key).strip().lower())
        if sid is None:
            warnings.append(f"prediction key {str(key)[:30]!r} is not a listed start id")
            continue
        pred = reader.prediction(value)
        if pred is None:
            warnings.append(f"prediction for {sid} ignored: give {{\"attractor\": n}} and/or end-state coordinates")
        else:
            predictions[sid] = pred
    return ReportAction(hypothesis=text_field("hypothesis"), evidence=text_field("evidence"),
                        attractors=attractors, drivers=drivers, predictions=predictions, warnings=warnings)


@dataclass(slots=True)
class _CoordinateReader:
    """Reads coordinates keyed by measurable (aliases allowed) the way the lab's report format asks."""

    measurables: list[str]
    list_axes: tuple[str, ...]
    warnings: list[str]

    def example(self) -> str:
        keys = [axis_key(a) for a in self.list_axes] or ["<measurable>"]
        return "{" + ", ".join(f'"{k}": x' for k in keys) + ', "type": ...}'

    def coords(self, item: dict[str, Any]) -> dict[str, float]:
        out: dict[str, float] = {}
        for key, value in item.items():
            if str(key).strip().lower() in _NOT_COORDINATES:
                continue
            name = measurable_name(key)
            number = as_probability(value)
            if name not in self.measurables:
                self.warnings.append(f"coordinate {str(key)[:30]!r} is not a listed measurable; ignored")
            elif number is not None:
                out[name] = number
        return out

    def complete(self, coords: dict[str, float]) -> bool:
        """All named axes present (paper format), or at least one coordinate (measurable-keyed format)."""
        return all(a in coords for a in self.list_axes) and bool(coords)

    def attractor(self, item: Any, drivers: list[str]) -> AttractorClaim | None:
        word = "other"
        if isinstance(item, list | tuple):  # [x, y, type]: along the report's drivers or the named axes
            numbers = [v for v in item if as_probability(v) is not None and not isinstance(v, str)]
            words = [v for v in item if isinstance(v, str)]
            axes = drivers if len(drivers) == len(numbers) else list(self.list_axes)
            if not numbers or len(numbers) != len(axes):
                return None
            coords = {a: float(as_probability(v) or 0.0) for a, v in zip(axes, numbers, strict=True)}
            word = words[0] if words else "other"
        elif isinstance(item, dict):
            coords = self.coords(item)
            word = str(item.get("type", "other"))
        else:
            return None
        if not self.complete(coords):
            return None
        word = word.strip().lower()
        kind: Literal["fixed", "2-cycle", "other"] = (
            "2-cycle" if word in _CYCLE_WORDS else "fixed" if word in _FIXED_WORDS else "other")
        return AttractorClaim(coords=coords, type=kind)

    def prediction(self, value: Any) -> StartPrediction | None:
        if isinstance(value, int) and not isinstance(value, bool):
            return StartPrediction(attractor=value)
        if not isinstance(value, dict):
            return None
        attractor = _as_int(value.get("attractor"))
        state = self.coords(value)
        if attractor is None and not self.complete(state):
            return None
        return StartPrediction(attractor=attractor, state=state)
