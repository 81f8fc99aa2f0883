"""Strict parsing of Protocol B (unknown dynamics) messages: JSON experiments and the final report.

Like `parsing`, nothing here raises on bad agent input (spec §2.7): an unusable message becomes a
`ParseFailure` naming the problem; tolerable slips (unknown measurables, steps out of range, a
missing `type` that the fields make obvious) are fixed and reported in `warnings`.
"""

from __future__ import annotations

import json
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


@dataclass(slots=True)
class AttractorClaim:
    """A reported attractor in (gc_content, palindrome_score) space."""

    gc: float
    pal: float
    type: Literal["fixed", "2-cycle", "other"] = "other"


@dataclass(slots=True)
class StartPrediction:
    """Predicted fate of one held-out start: attractor number (1-based) and/or end state."""

    attractor: int | None = None
    gc: float | None = None
    pal: float | None = None


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
            "attractors": [{"gc": a.gc, "pal": a.pal, "type": a.type} for a in self.attractors],
            "drivers": list(self.drivers),
            "predictions": {k: {"attractor": p.attractor, "gc": p.gc, "pal": p.pal}
                            for k, p in self.predictions.items()},
            "warnings": list(self.warnings),
        }


DynamicsAction = ExperimentAction | ReportAction

_EXPERIMENT_FORMAT = ('{"type": "experiment", "sequence": "<letters>", "measurables": [...], '
                      '"steps": <int>, "reasoning": "..."}')
_REPORT_FORMAT = ('{"type": "report", "hypothesis": "...", "evidence": "...", "attractors": '
                  '[{"gc": 0.5, "pal": 0.5, "type": "fixed|2-cycle|other"}], "drivers": [...], '
                  '"predictions": {...}}')


def parse_dynamics_message(text: str, *, length: int, max_steps: int, measurables: list[str],
                           start_ids: list[str]) -> DynamicsAction | ParseFailure:
    """Parse a Protocol B message (spec §2.7): the first JSON object, an experiment or a report."""
    obj = extract_json_object(text)
    if obj is None:
        return ParseFailure(f"Reply with JSON only. No JSON object found. Use {_EXPERIMENT_FORMAT} "
                            f"or {_REPORT_FORMAT}.")
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
    return _parse_report(obj, start_ids, warnings)


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
}

_CYCLE_WORDS = {"2-cycle", "2cycle", "two-cycle", "two cycle", "2 cycle", "cycle", "oscillation",
                "period-2", "period 2", "limit cycle"}
_FIXED_WORDS = {"fixed", "fixed point", "fixed-point", "point", "stable"}


def _parse_report(obj: dict[str, Any], start_ids: list[str], warnings: list[str]) -> ReportAction:
    def text_field(key: str) -> str:
        value = obj.get(key, "")
        return value if isinstance(value, str) else json.dumps(value)

    attractors: list[AttractorClaim] = []
    raw_att = obj.get("attractors", [])
    for item in raw_att if isinstance(raw_att, list) else []:
        claim = _parse_attractor(item)
        if claim is None:
            warnings.append(f"attractor {str(item)[:60]} ignored: give {{\"gc\": x, \"pal\": y, \"type\": ...}}")
        else:
            attractors.append(claim)
    drivers: list[str] = []
    raw_drv = obj.get("drivers", [])
    for name in raw_drv if isinstance(raw_drv, list) else [raw_drv]:
        key = str(name).strip().lower()
        key = _DRIVER_ALIASES.get(key, key)
        if key and key not in drivers:
            drivers.append(key)
    predictions: dict[str, StartPrediction] = {}
    raw_pred = obj.get("predictions", {})
    ids = {sid.lower(): sid for sid in start_ids}
    for key, value in (raw_pred.items() if isinstance(raw_pred, dict) else []):
        sid = ids.get(str(key).strip().lower())
        if sid is None:
            warnings.append(f"prediction key {str(key)[:30]!r} is not a listed start id")
            continue
        pred = _parse_start_prediction(value)
        if pred is None:
            warnings.append(f"prediction for {sid} ignored: give {{\"attractor\": n, \"gc\": x, \"pal\": y}}")
        else:
            predictions[sid] = pred
    return ReportAction(hypothesis=text_field("hypothesis"), evidence=text_field("evidence"),
                        attractors=attractors, drivers=drivers, predictions=predictions, warnings=warnings)


def _parse_attractor(item: Any) -> AttractorClaim | None:
    if isinstance(item, list | tuple) and len(item) >= 2:
        item = {"gc": item[0], "pal": item[1], "type": item[2] if len(item) > 2 else "other"}
    if not isinstance(item, dict):
        return None
    gc = as_probability(item.get("gc", item.get("gc_content")))
    pal = as_probability(item.get("pal", item.get("palindrome_score")))
    if gc is None or pal is None:
        return None
    word = str(item.get("type", "other")).strip().lower()
    kind: Literal["fixed", "2-cycle", "other"] = (
        "2-cycle" if word in _CYCLE_WORDS else "fixed" if word in _FIXED_WORDS else "other")
    return AttractorClaim(gc=gc, pal=pal, type=kind)


def _parse_start_prediction(value: Any) -> StartPrediction | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return StartPrediction(attractor=value)
    if not isinstance(value, dict):
        return None
    attractor = _as_int(value.get("attractor"))
    gc = as_probability(value.get("gc", value.get("gc_content")))
    pal = as_probability(value.get("pal", value.get("palindrome_score")))
    if attractor is None and (gc is None or pal is None):
        return None
    return StartPrediction(attractor=attractor, gc=gc, pal=pal)
