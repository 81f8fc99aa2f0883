"""Action formats of the population lab (`sequence/population-dynamics`) for `LLMLabAgent`.

Without them a model had to write the protocol's JSON itself (the generic free-text format): a
small model rarely produced a population of exactly P sequences of the right length, so most
episodes ended with no experiment run. The schemas here make every experiment well formed (P
strings of L letters, generations and measurables by enum) and the report one bounded number per
held-out population and target, in the order the lab listed them.

Like the other formats they read only what the lab has told the agent: the intro's population
size, length, measurables, targets and horizon, and the held-out ids of the report request.
"""

from __future__ import annotations

import json
from typing import Any

from discoverylab.labs.llm_format_base import (
    DEFAULT_LIMITS,
    ActionFormat,
    FormatLimits,
    clamped,
    object_schema,
    reasoning_field,
    small_int,
    unit_number,
)
from discoverylab.labs.protocol import Protocol
from discoverylab.labs.sequence.agents_dynamics import _payloads


def population_format(protocol: Protocol | None, message: str, limits: FormatLimits = DEFAULT_LIMITS) -> ActionFormat:
    """Experiments (a starting population, generations, measurables) until the report request."""
    config = getattr(protocol, "config", None)
    size = int(config.size) if config is not None else 12
    length = int(config.length) if config is not None else 16
    max_generations = int(config.max_generations) if config is not None else 16
    listed = getattr(protocol, "order", None)  # the measurables, in the order the intro lists them
    measurables = [str(m) for m in listed] if listed else ["gc_content"]
    if getattr(protocol, "phase", "") == "report" or "report_request" in message:
        return _report(protocol, message)
    generations = (small_int(1, max_generations) if max_generations <= 50
                   else {"type": "integer", "enum": sorted({1, 2, 4, 8, 16, 32, max_generations})})
    schema = object_schema({
        "reasoning": reasoning_field(200),
        "population": {"type": "array", "items": {"type": "string", "pattern": f"^[ACGT]{{{length}}}$"},
                       "minItems": size, "maxItems": size},
        "generations": generations,
        "measurables": {"type": "array", "items": {"type": "string", "enum": measurables},
                        "minItems": 1, "maxItems": len(measurables)},
    })

    def render(data: dict[str, Any]) -> str:
        return json.dumps({"type": "experiment", "population": data["population"],
                           "generations": int(data["generations"]), "measurables": data["measurables"],
                           "reasoning": data["reasoning"]})

    return ActionFormat(
        name="experiment",
        schema=schema,
        render=render,
        instructions=(
            f"Design one experiment: a starting population of exactly {size} sequences of {length} letters "
            f"(A, C, G, T), the measurables to record, and a number of generations from 1 to {max_generations}. "
            "Vary how the population starts (all alike, mixed, extreme) to see how the process moves it."
        ),
    )


def _report(protocol: Protocol | None, message: str) -> ActionFormat:
    problem = getattr(protocol, "problem", None)
    targets = [str(t) for t in problem.targets] if problem is not None else _listed(message, "targets")
    targets = targets or ["gc_content"]
    ids = _listed(message, "heldout_populations")
    if not ids and getattr(protocol, "phase", "") == "report":  # a retry's message is the lab's error
        ids = [str(h.pid) for h in getattr(protocol, "heldout", [])]
    horizon = getattr(problem, "generations", None)
    schema = object_schema({
        "hypothesis": {"type": "string", "maxLength": 300},
        "evidence": {"type": "string", "maxLength": 300},
        "predictions": {"type": "array", "items": object_schema({t: unit_number() for t in targets}),
                        "minItems": len(ids), "maxItems": len(ids)},
    })

    def render(data: dict[str, Any]) -> str:
        predictions = {pid: {t: clamped(row[t], 0.0, 1.0) for t in targets}
                       for pid, row in zip(ids, data["predictions"], strict=False)}
        return json.dumps({"type": "report", "hypothesis": data["hypothesis"], "evidence": data["evidence"],
                           "predictions": predictions})

    after = f" after {horizon} generations" if horizon else ""
    return ActionFormat(
        name="report",
        schema=schema,
        render=render,
        instructions=(
            f"Write the final report: the rule you inferred, the evidence, and for each of the {len(ids)} held-out "
            f"populations (in the listed order: {', '.join(ids)}) the population mean of {', '.join(targets)}{after}."
        ),
    )


def _listed(message: str, key: str) -> list[str]:
    """The keys (a dict) or items (a list) of `key` in the last JSON line of a lab message that has
    it, or [] (the report request follows the last round's text on its own line)."""
    for payload in reversed(_payloads(message)):
        value = payload.get(key)
        if isinstance(value, dict | list):
            return [str(k) for k in value]
    return []
