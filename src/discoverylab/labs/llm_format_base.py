"""What every LLM action format is made of: the `ActionFormat` record, its limits, schema parts.

A format per protocol phase (`llm_formats` for the sequence lab, `llm_formats_macro` for the
macro lab) builds its JSON schema from these parts. Each part bounds what a small model can emit
(strings by pattern, integers by enum) because llama.cpp grammars ignore numeric bounds; numbers
are clamped into the lab's ranges when a reply is rendered. Kept apart so both format modules
share them without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


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


def reasoning_field(max_chars: int = 300) -> dict[str, Any]:
    """A bounded scratch-pad field; it comes first so the model reasons before it acts."""
    return {"type": "string", "maxLength": max_chars}


def object_schema(properties: dict[str, Any]) -> dict[str, Any]:
    """A closed object whose every property is required (grammars then emit all of them)."""
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def unit_number() -> dict[str, Any]:
    """A number in [0,1] as a short decimal string.

    llama.cpp grammars ignore numeric bounds and let a small model emit `1000000...` until the
    token budget runs out; a string pattern bounds both the value and its length.
    """
    return {"type": "string", "pattern": r"^(0|1|0\.[0-9]{1,3}|1\.0{1,3})$"}


def bounded_decimal(max_int_digits: int = 4) -> dict[str, Any]:
    """A non-negative decimal of bounded length (clamped into the lab's range when rendered)."""
    return {"type": "string", "pattern": rf"^[0-9]{{1,{max_int_digits}}}(\.[0-9]{{1,3}})?$"}


def clamped(value: Any, low: float, high: float) -> float:
    """`value` as a float pulled into [low, high] (schemas bound lengths, not values)."""
    return min(max(float(value), low), high)


def small_int(low: int, high: int) -> dict[str, Any]:
    """A bounded integer as an enum (grammars enforce enums, not minimum/maximum)."""
    return {"type": "integer", "enum": list(range(low, high + 1))}
