"""Action formats for `LLMLabAgent`: per protocol phase, a JSON schema and how to render it.

Each format reads only what the protocol already tells the agent (sequence length, batch size,
measurables, held-out ids, the current phase); it never touches hidden truth. Schemas bound every
string and array so a small model's reply stays short, and numbers are clamped into the ranges
the lab accepts. If a protocol changes its public attributes, the agent falls back to its generic
free-text format rather than failing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from discoverylab.labs.protocol import Protocol
from discoverylab.labs.sequence.sandbox_policy import PROGRAM_RULES


@dataclass(frozen=True, slots=True)
class ActionFormat:
    """What the model must return this turn and how it becomes the protocol's message text."""

    name: str
    schema: dict[str, Any]
    render: Callable[[dict[str, Any]], str]
    instructions: str = ""


@dataclass(frozen=True, slots=True)
class FormatLimits:
    """How much an action format lets the model say. The defaults are fair for a 32k-context model;
    `SMALL_MODEL_LIMITS` keeps a 135M model's replies short."""

    macro_max_edges: int = 60
    """Edges per macro report (the key-effect graph has ~100 parameter edges over two horizons)."""
    macro_max_claims: int = 8
    macro_max_factors: int = 3
    """Tunables one macro experiment may change (1: one-factor designs only)."""
    allow_python: bool = True
    """Hidden-property hypotheses may carry a `python` predictor `def f(s)` (graded in the sandbox)."""
    python_max_chars: int = 1500


DEFAULT_LIMITS = FormatLimits()
SMALL_MODEL_LIMITS = FormatLimits(macro_max_edges=8, macro_max_claims=2, macro_max_factors=1, allow_python=False)
UNCAPPED_FIELDS = ("python",)
"""Free-text fields the agent's text cap leaves alone (programs have their own cap)."""

FormatChooser = Callable[..., ActionFormat]
"""`chooser(protocol, lab_message, limits=FormatLimits()) -> ActionFormat`."""
FORMATS: dict[str, FormatChooser] = {}


def register_action_format(protocol_name: str, chooser: FormatChooser) -> None:
    """Register `chooser(protocol, lab_message, limits=...) -> ActionFormat` for a protocol name."""
    FORMATS[protocol_name] = chooser


def reasoning_field(max_chars: int = 300) -> dict[str, Any]:
    """A bounded scratch-pad field; it comes first so the model reasons before it acts."""
    return {"type": "string", "maxLength": max_chars}


def generic_format(protocol: Protocol | None = None, message: str = "") -> ActionFormat:
    """Fallback for protocols without a registered format: the model writes the message itself."""
    schema = {
        "type": "object",
        "properties": {"reasoning": reasoning_field(), "message": {"type": "string", "maxLength": 2000}},
        "required": ["reasoning", "message"],
        "additionalProperties": False,
    }
    return ActionFormat(
        name="message",
        schema=schema,
        render=lambda data: str(data.get("message", "")),
        instructions="Put the exact text to send to the lab in `message`, following the lab's instructions.",
    )


_NUMBERED_SEQUENCE = re.compile(r"^\s*\d+\.\s*([ACGT]+)\s*$", re.MULTILINE)


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _unit_number() -> dict[str, Any]:
    """A number in [0,1] as a short decimal string.

    llama.cpp grammars ignore numeric bounds and let a small model emit `1000000...` until the
    token budget runs out; a string pattern bounds both the value and its length.
    """
    return {"type": "string", "pattern": r"^(0|1|0\.[0-9]{1,3}|1\.0{1,3})$"}


def _decimal(max_int_digits: int = 4) -> dict[str, Any]:
    """A non-negative decimal of bounded length (clamped into the lab's range when rendered)."""
    return {"type": "string", "pattern": rf"^[0-9]{{1,{max_int_digits}}}(\.[0-9]{{1,3}})?$"}


def _clamped(value: Any, low: float, high: float) -> float:
    return min(max(float(value), low), high)


def _small_int(low: int, high: int) -> dict[str, Any]:
    """A bounded integer as an enum (grammars enforce enums, not minimum/maximum)."""
    return {"type": "integer", "enum": list(range(low, high + 1))}


# ---------------------------------------------------------------------- sequence/hidden-property
def hidden_property_format(protocol: Protocol | None, message: str,
                           limits: FormatLimits = DEFAULT_LIMITS) -> ActionFormat:
    """Rounds: `SAMPLE v` or a batch of sequences; final: ranked hypotheses plus predictions."""
    config = getattr(protocol, "config", None)
    length = int(config.length) if config is not None else 10
    batch = int(config.batch) if config is not None else 10
    if getattr(protocol, "phase", "rounds") == "final" or '"hypotheses"' in message:
        return _hidden_property_final(protocol, message, limits)
    letters = {"type": "string", "pattern": f"^[ACGT]{{{length}}}$"}
    sample = _object({"reasoning": reasoning_field(200), "action": {"const": "SAMPLE"}, "value": _unit_number()})
    query = _object({
        "reasoning": reasoning_field(200),
        "action": {"const": "SEQUENCES"},
        "sequences": {"type": "array", "items": letters, "minItems": batch, "maxItems": batch},
    })
    options = [sample, query]
    if config is not None and getattr(config, "allow_random", False):
        options.append(_object({"reasoning": reasoning_field(200), "action": {"const": "RANDOM"}}))

    def render(data: dict[str, Any]) -> str:
        if data["action"] == "SAMPLE":
            return f"SAMPLE {_clamped(data['value'], 0.0, 1.0):.3f}"
        if data["action"] == "RANDOM":
            return "RANDOM"
        return "\n".join(data["sequences"])

    return ActionFormat(
        name="round",
        schema={"anyOf": options},
        render=render,
        instructions=(
            f"Choose `SAMPLE` with a target `value` in [0,1], or `SEQUENCES` with exactly {batch} "
            f"sequences of {length} letters from A, C, G, T that test your current idea about f."
        ),
    )


def _hidden_property_final(protocol: Protocol | None, message: str, limits: FormatLimits) -> ActionFormat:
    listed = getattr(protocol, "prediction_sequences", None) or _NUMBERED_SEQUENCE.findall(message)
    sequences = [str(s) for s in listed]
    fields: dict[str, Any] = {"description": {"type": "string", "maxLength": 200}}
    if limits.allow_python:
        fields["python"] = {"type": "string", "maxLength": limits.python_max_chars}
    hypothesis = _object(fields)
    schema = _object({
        "hypotheses": {"type": "array", "items": hypothesis, "minItems": 1, "maxItems": 3},
        "predictions": {"type": "array", "items": _unit_number(),
                        "minItems": len(sequences), "maxItems": len(sequences)},
    })

    def render(data: dict[str, Any]) -> str:
        hypotheses = [{"rank": i, "description": h["description"]}
                      | ({"python": h["python"]} if str(h.get("python", "")).strip() else {})
                      for i, h in enumerate(data["hypotheses"], 1)]
        predictions = {seq: float(v) for seq, v in zip(sequences, data["predictions"], strict=False)}
        return json.dumps({"hypotheses": hypotheses, "predictions": predictions})

    return ActionFormat(
        name="final_answer",
        schema=schema,
        render=render,
        instructions=(
            "Give up to 3 ranked hypotheses for f (best first, each a precise definition"
            + (f", with `python`: a function `def f(s):` computing it ({PROGRAM_RULES}), or an empty string"
               if limits.allow_python
               else "") + "), then your "
            f"predicted f value for each of the {len(sequences)} listed sequences, in the listed order."
        ),
    )


# ---------------------------------------------------------------------- sequence/unknown-dynamics
def unknown_dynamics_format(protocol: Protocol | None, message: str,
                            limits: FormatLimits = DEFAULT_LIMITS) -> ActionFormat:
    """Experiments (start sequence, measurables, steps) until the lab asks for the report."""
    config = getattr(protocol, "config", None)
    length = int(config.length) if config is not None else 30
    max_steps = int(config.max_steps) if config is not None else 20
    listed = getattr(protocol, "order", None)  # the episode's measurables (drawn per seed by default)
    measurables = [str(m) for m in listed] if listed else ["gc_content"]
    if getattr(protocol, "phase", "") == "report" or "report_request" in message:
        return _dynamics_report(protocol, message, measurables)
    schema = _object({
        "reasoning": reasoning_field(200),
        "sequence": {"type": "string", "pattern": f"^[ACGT]{{{length}}}$"},
        "measurables": {"type": "array", "items": {"type": "string", "enum": measurables},
                        "minItems": 1, "maxItems": len(measurables)},
        "steps": _small_int(1, max_steps) if max_steps <= 50 else {"type": "integer", "enum": [1, 5, 10, 20, 50]},
    })

    def render(data: dict[str, Any]) -> str:
        return json.dumps({"type": "experiment", "sequence": data["sequence"], "measurables": data["measurables"],
                           "steps": int(data["steps"]), "reasoning": data["reasoning"]})

    return ActionFormat(
        name="experiment",
        schema=schema,
        render=render,
        instructions=(
            f"Design one experiment: a start sequence of {length} letters (A, C, G, T), the measurables to "
            f"record, and a number of steps from 1 to {max_steps}. Vary start points to find where they end up."
        ),
    )


def _dynamics_report(protocol: Protocol | None, message: str, measurables: list[str]) -> ActionFormat:
    starts = getattr(protocol, "starts", None)
    ids = [str(s.sid) for s in starts] if starts else _heldout_ids(message)
    # Reports key coordinates by measurable name (a lab that names axes sets `report_axes`).
    named = getattr(protocol, "report_axes", ())
    keys = [{"gc_content": "gc", "palindrome_score": "pal"}.get(a, a) for a in named] or measurables
    attractor = _object({k: _unit_number() for k in keys}
                        | {"type": {"type": "string", "enum": ["fixed", "2-cycle", "other"]}})
    schema = _object({
        "hypothesis": {"type": "string", "maxLength": 300},
        "evidence": {"type": "string", "maxLength": 300},
        "attractors": {"type": "array", "items": attractor, "minItems": 1, "maxItems": 3},
        "drivers": {"type": "array", "items": {"type": "string", "enum": measurables},
                    "minItems": 1, "maxItems": len(measurables)},
        "basins": {"type": "array", "items": _small_int(1, 3),
                   "minItems": len(ids), "maxItems": len(ids)},
    })

    def render(data: dict[str, Any]) -> str:
        predictions = {sid: {"attractor": int(k)} for sid, k in zip(ids, data["basins"], strict=False)}
        attractors = [{k: float(a[k]) for k in keys} | {"type": a["type"]} for a in data["attractors"]]
        return json.dumps({"type": "report", "hypothesis": data["hypothesis"], "evidence": data["evidence"],
                           "attractors": attractors, "drivers": data["drivers"], "predictions": predictions})

    return ActionFormat(
        name="report",
        schema=schema,
        render=render,
        instructions=(
            f"Write the final report: the rule you inferred, the evidence, the attractors in ({', '.join(keys)}) space, "
            f"the measurables that drive the process, and for each of the {len(ids)} held-out starts "
            "(in the listed order) the number of the attractor it converges to."
        ),
    )


def _heldout_ids(message: str) -> list[str]:
    start = message.find("{")
    try:
        payload = json.loads(message[start:]) if start >= 0 else {}
    except json.JSONDecodeError:
        return []
    starts = payload.get("heldout_starts", {}) if isinstance(payload, dict) else {}
    return [str(k) for k in starts]


# ---------------------------------------------------------------------- macro/causal-discovery
UPDATE_CHANGES = ("rose", "fell", "did not change")
UPDATE_VERDICTS = ("supports", "contradicts", "neither supports nor contradicts")


def _macro_experiment_ids(protocol: Protocol | None, message: str) -> list[int]:
    """Ids of the experiments run so far (from the protocol's log, else from the lab's replies)."""
    log = getattr(protocol, "log", None)
    experiments = getattr(log, "experiments", None)
    if experiments is not None:
        return [int(e.experiment_id) for e in experiments]
    return sorted({int(m) for m in re.findall(r'"experiment_id":\s*(\d+)', message)})


def macro_format(protocol: Protocol | None, message: str, limits: FormatLimits = DEFAULT_LIMITS) -> ActionFormat:
    """Experiments (up to `limits.macro_max_factors` changed tunables) while budget remains, then the report.

    After the first experiment the model also states what the previous result showed (indicator,
    direction, verdict on its hypothesis); the format turns that into `update_from_previous`.
    """
    from discoverylab.labs.macroecon.observation import INDICATORS
    from discoverylab.labs.macroecon.params import MAX_STEPS, MIN_STEPS, TUNABLES

    budget_left = getattr(protocol, "budget_left", 1)
    done = _macro_experiment_ids(protocol, message)
    if budget_left <= 0 or "final report now" in message:
        return _macro_report(protocol, [t.key for t in TUNABLES], list(INDICATORS), done, limits)
    update = _object({"indicator": {"type": "string", "enum": list(INDICATORS)},
                      "change": {"type": "string", "enum": list(UPDATE_CHANGES)},
                      "verdict": {"type": "string", "enum": list(UPDATE_VERDICTS)}})
    steps = {"type": "integer", "enum": sorted({MIN_STEPS, 20, 50, 100, 150, MAX_STEPS})}
    head: dict[str, Any] = {"update": update} if done else {}
    head |= {"hypothesis": {"type": "string", "maxLength": 200}, "design": {"type": "string", "maxLength": 200}}
    changes = [_object({"parameter": {"const": t.key}, "value": _decimal(len(str(int(t.high))))}) for t in TUNABLES]
    if limits.macro_max_factors <= 1:
        schema: dict[str, Any] = {"anyOf": [_object(head | change["properties"] | {"number_of_steps": steps})
                                            for change in changes]}
    else:
        schema = _object(head | {"changes": {"type": "array", "items": {"anyOf": changes}, "minItems": 0,
                                             "maxItems": limits.macro_max_factors},
                                 "number_of_steps": steps})

    ranges = {t.key: (t.low, t.high) for t in TUNABLES}
    previous = done[-1] if done else 0

    def render(data: dict[str, Any]) -> str:
        picked = data.get("changes", [data] if "parameter" in data else [])
        params = {c["parameter"]: _clamped(c["value"], *ranges[c["parameter"]]) for c in picked}
        note = data.get("update")
        update_text = (f"In experiment {previous}, {note['indicator']} {note['change']}; this {note['verdict']} "
                       "the previous hypothesis." if isinstance(note, dict) else "")
        return json.dumps({"type": "experiment", "hypothesis": data["hypothesis"], "design": data["design"],
                           "update_from_previous": update_text, "params": params,
                           "number_of_steps": int(data["number_of_steps"])})

    first = "" if not done else (
        f"First say what experiment {previous} showed: one indicator, whether it rose or fell, and whether "
        "that supports your previous hypothesis. Then ")
    what = ("the one parameter you change, its new value" if limits.macro_max_factors <= 1 else
            f"the parameters you change (up to {limits.macro_max_factors}; none for the default baseline) and "
            "their new values")
    return ActionFormat(
        name="experiment",
        schema=schema,
        render=render,
        instructions=(
            first + ("run" if done else "Run") + " one experiment: state a causal hypothesis naming the parameter "
            f"and the indicator, the design that could falsify it, {what} and the run length in quarters."
        ),
    )


def _alternatives(names: list[str]) -> str:
    return "(" + "|".join(re.escape(n) for n in names) + ")"


def _macro_report(protocol: Protocol | None, tunables: list[str], indicators: list[str],
                  experiment_ids: list[int], limits: FormatLimits) -> ActionFormat:
    """The report with edges, claims and predictions as one-line strings (`g0 -> unemployment (-, long)`).

    As JSON objects an edge costs a small model 30 tokens and a prediction 36, so eight edges and
    five predictions overflow its reply; as patterned strings they cost 13 and 14 (SmolLM2
    tokenizer), and the pattern still fixes every choice.
    """
    from discoverylab.labs.macroecon.parsing import STATISTICS

    log = getattr(protocol, "log", None)
    setting_ids = [str(s.setting_id) for s in getattr(log, "held_out", [])]
    edge_re = rf"^{_alternatives(tunables + indicators)} -> {_alternatives(indicators)} \((\+|-|0), (short|long)\)$"
    prediction_re = r"^(0|1|0\.[0-9]{1,3}|1\.0{1,3}), ([0-9]{1,7}(\.[0-9]{1,3})?)$"
    fields: dict[str, Any] = {
        "edges": {"type": "array", "items": {"type": "string", "pattern": edge_re},
                  "minItems": 1, "maxItems": limits.macro_max_edges},
    }
    claim_re = ""
    if experiment_ids:
        ids = _alternatives([str(i) for i in experiment_ids])
        claim_re = (rf"^exp {ids} {_alternatives(indicators)} {_alternatives(list(STATISTICS))} = "
                    rf"(-?[0-9]{{1,9}}(\.[0-9]{{1,6}})?)( vs exp {ids})?$")
        fields["claims"] = {"type": "array", "items": {"type": "string", "pattern": claim_re},
                            "minItems": 0, "maxItems": limits.macro_max_claims}
    fields |= {
        "predictions": {"type": "array", "items": {"type": "string", "pattern": prediction_re},
                        "minItems": len(setting_ids), "maxItems": len(setting_ids)},
        "narrative": {"type": "string", "maxLength": 300},
    }
    schema = _object(fields)

    def render(data: dict[str, Any]) -> str:
        edges = [{"cause": m[1], "effect": m[2], "sign": m[3], "horizon": m[4]}
                 for m in (re.match(edge_re, e) for e in data["edges"]) if m]
        claims = [_macro_claim(m) for m in (re.match(claim_re, c) for c in data.get("claims", [])) if m]
        predictions = [{"setting_id": sid, "unemployment_mean_q50_100": float(m[1]), "gov_debt_final": float(m[2])}
                       for sid, m in zip(setting_ids, (re.match(prediction_re, p) for p in data["predictions"]),
                                         strict=False) if m]
        return json.dumps({"type": "report", "causal_graph": {"edges": edges}, "claims": claims,
                           "predictions": predictions, "narrative": data["narrative"]})

    claims_text = (f", up to {limits.macro_max_claims} claims quoting a statistic of one of your experiments as "
                   "`exp 2 unemployment mean = 0.08` (add ` vs exp 1` for the difference to experiment 1)"
                   ) if experiment_ids else ""
    return ActionFormat(
        name="report",
        schema=schema,
        render=render,
        instructions=(
            f"Write the final report: up to {limits.macro_max_edges} causal edges written `cause -> effect (sign, horizon)`, "
            f"e.g. `g0 -> unemployment (-, long)`{claims_text}, predictions for the {len(setting_ids)} held-out "
            "settings in the listed order, each `unemployment_mean_q50_100, gov_debt_final` (e.g. `0.08, 12000`), "
            "and a short narrative."
        ),
    )


def _macro_claim(match: re.Match[str]) -> dict[str, Any]:
    """A claim of the macro report from its one-line form: a level, or a difference to another experiment."""
    experiment, indicator, stat, value = int(match[1]), match[2], match[3], float(match[4])
    claim: dict[str, Any] = {"experiment_id": experiment, "indicator": indicator, "statistic": stat, "value": value}
    baseline = int(match[7]) if match[7] else 0
    if baseline and baseline != experiment:
        claim |= {"kind": "difference", "baseline_id": baseline}
    return claim


register_action_format("sequence/hidden-property", hidden_property_format)
register_action_format("sequence/unknown-dynamics", unknown_dynamics_format)
register_action_format("macro/causal-discovery", macro_format)
