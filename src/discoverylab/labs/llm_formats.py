"""Action formats for `LLMLabAgent`: per protocol phase, a JSON schema and how to render it.

Each format reads only what the protocol already tells the agent (sequence length, batch size,
measurables, held-out ids, the current phase); it never touches hidden truth. Schemas bound every
string and array so a small model's reply stays short, and numbers are clamped into the ranges
the lab accepts. If a protocol changes its public attributes, the agent falls back to its generic
free-text format rather than failing.

This module holds the registry, the generic format and the sequence lab's formats; the macro
lab's are in `llm_formats_macro`, the population lab's in `llm_formats_population` and the parts
they build on in `llm_format_base` (re-exported here, where the agent and callers import them from).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from discoverylab.labs.llm_format_base import (
    DEFAULT_LIMITS,
    SMALL_MODEL_LIMITS,
    UNCAPPED_FIELDS,
    ActionFormat,
    FormatLimits,
    clamped,
    object_schema,
    reasoning_field,
    small_int,
    unit_number,
)
from discoverylab.labs.llm_formats_macro import macro_format
from discoverylab.labs.llm_formats_population import population_format
from discoverylab.labs.protocol import Protocol
from discoverylab.labs.sequence.sandbox_policy import PROGRAM_RULES

__all__ = [
    "DEFAULT_LIMITS",
    "FORMATS",
    "SMALL_MODEL_LIMITS",
    "UNCAPPED_FIELDS",
    "ActionFormat",
    "FormatChooser",
    "FormatLimits",
    "generic_format",
    "hidden_property_format",
    "macro_format",
    "population_format",
    "reasoning_field",
    "register_action_format",
    "unknown_dynamics_format",
]

FormatChooser = Callable[..., ActionFormat]
"""`chooser(protocol, lab_message, limits=FormatLimits()) -> ActionFormat`."""
FORMATS: dict[str, FormatChooser] = {}


def register_action_format(protocol_name: str, chooser: FormatChooser) -> None:
    """Register `chooser(protocol, lab_message, limits=...) -> ActionFormat` for a protocol name."""
    FORMATS[protocol_name] = chooser


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
    sample = object_schema({"reasoning": reasoning_field(200), "action": {"const": "SAMPLE"}, "value": unit_number()})
    query = object_schema({
        "reasoning": reasoning_field(200),
        "action": {"const": "SEQUENCES"},
        "sequences": {"type": "array", "items": letters, "minItems": batch, "maxItems": batch},
    })
    options = [sample, query]
    if config is not None and getattr(config, "allow_random", False):
        options.append(object_schema({"reasoning": reasoning_field(200), "action": {"const": "RANDOM"}}))

    def render(data: dict[str, Any]) -> str:
        if data["action"] == "SAMPLE":
            return f"SAMPLE {clamped(data['value'], 0.0, 1.0):.3f}"
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
    hypothesis = object_schema(fields)
    schema = object_schema({
        "hypotheses": {"type": "array", "items": hypothesis, "minItems": 1, "maxItems": 3},
        "predictions": {"type": "array", "items": unit_number(),
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
    schema = object_schema({
        "reasoning": reasoning_field(200),
        "sequence": {"type": "string", "pattern": f"^[ACGT]{{{length}}}$"},
        "measurables": {"type": "array", "items": {"type": "string", "enum": measurables},
                        "minItems": 1, "maxItems": len(measurables)},
        "steps": small_int(1, max_steps) if max_steps <= 50 else {"type": "integer", "enum": [1, 5, 10, 20, 50]},
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
    attractor = object_schema({k: unit_number() for k in keys}
                        | {"type": {"type": "string", "enum": ["fixed", "2-cycle", "other"]}})
    schema = object_schema({
        "hypothesis": {"type": "string", "maxLength": 300},
        "evidence": {"type": "string", "maxLength": 300},
        "attractors": {"type": "array", "items": attractor, "minItems": 1, "maxItems": 3},
        "drivers": {"type": "array", "items": {"type": "string", "enum": measurables},
                    "minItems": 1, "maxItems": len(measurables)},
        "basins": {"type": "array", "items": small_int(1, 3),
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


register_action_format("sequence/hidden-property", hidden_property_format)
register_action_format("sequence/unknown-dynamics", unknown_dynamics_format)
register_action_format("macro/causal-discovery", macro_format)
register_action_format("sequence/population-dynamics", population_format)
