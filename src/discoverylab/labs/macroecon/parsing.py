"""Strict parsing of the agent's JSON messages for the macro protocol (spec §3.5).

`parse_agent_message(text)` never raises: it returns an `ExperimentRequest`, a `FinalReport` or a
`ParseFailure` whose `error` tells the agent exactly what to fix. Messages may wrap the JSON in
prose or a ```json fence, but must contain exactly one JSON object.
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

from pydantic import BaseModel, Field

from discoverylab.labs.macroecon.observation import INDICATORS
from discoverylab.labs.macroecon.params import (
    DEFAULT_STEPS,
    MAX_STEPS,
    MIN_STEPS,
    TUNABLE_BY_KEY,
    TUNABLE_KEYS,
)

EXPERIMENT_TEXT_KEYS: tuple[str, ...] = ("hypothesis", "design", "update_from_previous")
EXPERIMENT_RESERVED: frozenset[str] = frozenset(
    {"type", "params", "number_of_steps", "full_trajectory", "last_observation", *EXPERIMENT_TEXT_KEYS})
REPORT_KEYS: frozenset[str] = frozenset({"type", "causal_graph", "claims", "predictions", "narrative"})
STATISTICS: tuple[str, ...] = ("mean", "std", "min", "max", "first", "last", "argmax", "argmin")
PREDICTION_TARGETS: tuple[str, ...] = ("unemployment_mean_q50_100", "gov_debt_final")
_SIGNS: dict[str, Literal["+", "-", "0"]] = {
    "+": "+", "positive": "+", "pos": "+", "up": "+", "increase": "+",
    "-": "-", "\u2212": "-", "negative": "-", "neg": "-", "down": "-", "decrease": "-",
    "0": "0", "none": "0", "zero": "0", "no effect": "0",
}
MAX_LISTED_ERRORS = 8


class ExperimentRequest(BaseModel):
    """One experiment the agent asks for; `params` holds only the keys it set."""

    kind: Literal["experiment"] = "experiment"
    form: Literal["full", "bare"]
    hypothesis: str = ""
    design: str = ""
    update_from_previous: str = ""
    params: dict[str, float] = Field(default_factory=dict)
    number_of_steps: int = DEFAULT_STEPS
    full_trajectory: bool = False
    last_observation: bool = False


class EdgeStatement(BaseModel):
    """One edge of the agent's causal graph."""

    cause: str
    effect: str
    sign: Literal["+", "-", "0"]
    horizon: Literal["short", "long"] = "long"
    confidence: float | None = None


class Claim(BaseModel):
    """A quantitative claim about the agent's own experiments, re-computed by the grader."""

    experiment_id: int
    indicator: str
    statistic: str
    value: float
    kind: Literal["level", "difference", "elasticity"] = "level"
    baseline_id: int | None = None
    from_quarter: int | None = None
    to_quarter: int | None = None


class Prediction(BaseModel):
    """Predicted outcomes of one held-out setting."""

    setting_id: str
    unemployment_mean_q50_100: float | None = None
    gov_debt_final: float | None = None


class FinalReport(BaseModel):
    """The agent's final report: causal graph, claims, predictions and narrative."""

    kind: Literal["report"] = "report"
    edges: list[EdgeStatement] = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list)
    predictions: list[Prediction] = Field(default_factory=list)
    narrative: str = ""


class ParseFailure(BaseModel):
    """An invalid message; `error` is shown to the agent verbatim."""

    kind: Literal["error"] = "error"
    error: str


ParsedMessage = ExperimentRequest | FinalReport | ParseFailure


def extract_json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object embedded in `text` (prose and code fences are skipped)."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    pos = text.find("{")
    while pos != -1:
        try:
            obj, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            pos = text.find("{", pos + 1)
            continue
        except RecursionError:  # nested deeper than the interpreter's limit: no usable object, not a crash
            break
        if isinstance(obj, dict):
            found.append(obj)
        pos = text.find("{", end)
    return found


def _number(value: Any) -> float | None:
    """A finite real number, or None (booleans and strings are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _fail(errors: list[str]) -> ParseFailure:
    shown = errors[:MAX_LISTED_ERRORS]
    more = f" (and {len(errors) - len(shown)} more)" if len(errors) > len(shown) else ""
    return ParseFailure(error="; ".join(shown) + more)


def parse_agent_message(text: str) -> ParsedMessage:
    """Parse one agent message into an experiment, a final report or a failure with a clear reason."""
    objects = extract_json_objects(text)
    if not objects:
        return ParseFailure(error="no JSON object found: send one JSON object, e.g. "
                                  '{"type": "experiment", "params": {"g0": 0.1}, "number_of_steps": 100}')
    if len(objects) > 1:
        return ParseFailure(error=f"found {len(objects)} JSON objects; send exactly one per message")
    obj = objects[0]
    kind = obj.get("type")
    if kind is None:
        kind = "report" if ("causal_graph" in obj or "predictions" in obj) else "experiment"
    if kind == "experiment":
        return parse_experiment(obj)
    if kind == "report":
        return parse_report(obj)
    return ParseFailure(error=f"unknown message type {kind!r}; use \"experiment\" or \"report\"")


def parse_experiment(obj: dict[str, Any]) -> ExperimentRequest | ParseFailure:
    """Validate an experiment request (full form, or the paper's bare `{"g0": 0.1, ...}` form)."""
    errors: list[str] = []
    raw_params: dict[str, Any] = {}
    nested = obj.get("params", {})
    if not isinstance(nested, dict):
        errors.append('"params" must be an object mapping parameter names to numbers')
        nested = {}
    raw_params.update(nested)
    bare = {k: v for k, v in obj.items() if k not in EXPERIMENT_RESERVED}
    for key, value in bare.items():
        if key in raw_params and raw_params[key] != value:
            errors.append(f"parameter {key!r} is given twice with different values")
        raw_params[key] = value
    params: dict[str, float] = {}
    for key, value in raw_params.items():
        spec = TUNABLE_BY_KEY.get(key)
        if spec is None:
            hint = " (set the run length with number_of_steps at the top level)" if key == "number_of_steps" else ""
            errors.append(f"unknown parameter {key!r}{hint}; tunable parameters are: {', '.join(TUNABLE_KEYS)}")
            continue
        number = _number(value)
        if number is None:
            errors.append(f"parameter {key!r} must be a finite number, got {value!r}")
        elif not spec.low <= number <= spec.high:
            errors.append(f"parameter {key!r}={number:g} is out of range [{spec.low:g}, {spec.high:g}]")
        else:
            params[key] = number
    steps_raw = obj.get("number_of_steps", DEFAULT_STEPS)
    steps_num = _number(steps_raw)
    steps = DEFAULT_STEPS
    if steps_num is None or steps_num != int(steps_num):
        errors.append(f"number_of_steps must be an integer in {MIN_STEPS}..{MAX_STEPS}, got {steps_raw!r}")
    elif not MIN_STEPS <= steps_num <= MAX_STEPS:
        errors.append(f"number_of_steps={int(steps_num)} is out of range {MIN_STEPS}..{MAX_STEPS}")
    else:
        steps = int(steps_num)
    texts: dict[str, str] = {}
    for key in EXPERIMENT_TEXT_KEYS:
        value = obj.get(key, "")
        if value is None:
            value = ""
        if not isinstance(value, str):
            errors.append(f"{key!r} must be a string")
            value = ""
        texts[key] = value.strip()
    flags: dict[str, bool] = {}
    for key in ("full_trajectory", "last_observation"):
        value = obj.get(key, False)
        if not isinstance(value, bool):
            errors.append(f"{key!r} must be true or false")
            value = False
        flags[key] = value
    if errors:
        return _fail(errors)
    form: Literal["full", "bare"] = "full" if ("params" in obj or "type" in obj) else "bare"
    return ExperimentRequest(form=form, params=params, number_of_steps=steps, hypothesis=texts["hypothesis"],
                             design=texts["design"], update_from_previous=texts["update_from_previous"],
                             full_trajectory=flags["full_trajectory"], last_observation=flags["last_observation"])


def _parse_edge(i: int, raw: Any, errors: list[str]) -> EdgeStatement | None:
    where = f"edge {i + 1}"
    if not isinstance(raw, dict):
        errors.append(f"{where} must be an object with cause, effect and sign")
        return None
    cause, effect = raw.get("cause"), raw.get("effect")
    ok = True
    if cause not in TUNABLE_BY_KEY and cause not in INDICATORS:
        errors.append(f"{where}: cause {cause!r} is neither a tunable parameter nor an indicator")
        ok = False
    if effect not in INDICATORS:
        errors.append(f"{where}: effect {effect!r} is not an indicator; indicators are: {', '.join(INDICATORS)}")
        ok = False
    sign_raw = raw.get("sign")
    sign = _SIGNS.get(str(sign_raw).strip().lower()) if isinstance(sign_raw, str | int) else None
    if sign is None:
        errors.append(f"{where}: sign must be \"+\", \"-\" or \"0\", got {sign_raw!r}")
        ok = False
    horizon = raw.get("horizon", "long")
    if horizon not in ("short", "long"):
        errors.append(f"{where}: horizon must be \"short\" or \"long\", got {horizon!r}")
        ok = False
    confidence = raw.get("confidence")
    if confidence is not None and (_number(confidence) is None or not 0.0 <= float(confidence) <= 1.0):
        errors.append(f"{where}: confidence must be a number in [0, 1]")
        ok = False
    if not ok:
        return None
    return EdgeStatement(cause=str(cause), effect=str(effect), sign=sign or "0", horizon=horizon,
                         confidence=None if confidence is None else float(confidence))


def _parse_claim(i: int, raw: Any, errors: list[str]) -> Claim | None:
    where = f"claim {i + 1}"
    if not isinstance(raw, dict):
        errors.append(f"{where} must be an object")
        return None
    try:
        claim = Claim.model_validate(raw)
    except ValueError as exc:
        first = str(exc).splitlines()
        errors.append(f"{where}: needs experiment_id (int), indicator, statistic and value (number): "
                      f"{' '.join(first[1:3]).strip()}")
        return None
    if claim.indicator not in INDICATORS:
        errors.append(f"{where}: unknown indicator {claim.indicator!r}")
        return None
    if claim.statistic not in STATISTICS:
        errors.append(f"{where}: statistic must be one of {', '.join(STATISTICS)}")
        return None
    if claim.kind != "level" and claim.baseline_id is None:
        errors.append(f"{where}: a {claim.kind} claim needs baseline_id (the control experiment)")
        return None
    return claim


def _parse_prediction(i: int, raw: Any, errors: list[str]) -> Prediction | None:
    where = f"prediction {i + 1}"
    if not isinstance(raw, dict) or not isinstance(raw.get("setting_id"), str):
        errors.append(f"{where} must be an object with a setting_id (e.g. \"h1\")")
        return None
    values: dict[str, float | None] = {}
    for key in PREDICTION_TARGETS:
        value = raw.get(key)
        if value is not None and _number(value) is None:
            errors.append(f"{where}: {key} must be a number")
            return None
        values[key] = None if value is None else float(value)
    return Prediction(setting_id=raw["setting_id"], **values)


def _as_list(obj: dict[str, Any], key: str, errors: list[str]) -> list[Any]:
    value = obj.get(key, [])
    if value is None:
        return []
    if not isinstance(value, list):
        errors.append(f'"{key}" must be a list')
        return []
    return value


def parse_report(obj: dict[str, Any]) -> FinalReport | ParseFailure:
    """Validate the final report; every problem is listed so the agent can fix them in one go."""
    errors: list[str] = []
    unknown = sorted(set(obj) - REPORT_KEYS)
    if unknown:
        errors.append(f"unknown report keys {unknown}; allowed: {sorted(REPORT_KEYS)}")
    graph = obj.get("causal_graph", {})
    raw_edges: Any = graph.get("edges", []) if isinstance(graph, dict) else graph
    if not isinstance(raw_edges, list):
        errors.append('"causal_graph" must be {"edges": [...]}')
        raw_edges = []
    edges = [e for i, r in enumerate(raw_edges) if (e := _parse_edge(i, r, errors)) is not None]
    claims = [c for i, r in enumerate(_as_list(obj, "claims", errors))
              if (c := _parse_claim(i, r, errors)) is not None]
    predictions = [p for i, r in enumerate(_as_list(obj, "predictions", errors))
                   if (p := _parse_prediction(i, r, errors)) is not None]
    narrative = obj.get("narrative", "")
    if not isinstance(narrative, str):
        errors.append('"narrative" must be a string')
        narrative = ""
    if errors:
        return _fail(errors)
    return FinalReport(edges=edges, claims=claims, predictions=predictions, narrative=narrative)
