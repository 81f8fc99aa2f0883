"""Strict, documented parsing of the agents' messages for the sequence-lab protocols.

Nothing here raises on bad agent input: every parser returns a parsed action or a `ParseFailure`
whose `message` tells the agent exactly what was wrong and how to fix it (spec §2.6, §2.7).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal

ALPHABET = "ACGT"

_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*$")
_SAMPLE = re.compile(r"^\s*SAMPLE\s+([-+]?(?:[0-9]*\.)?[0-9]+)\s*$", re.IGNORECASE)
_SAMPLE_WORD = re.compile(r"^\s*SAMPLE\b", re.IGNORECASE)
_RANDOM = re.compile(r"^\s*RANDOM\s*$", re.IGNORECASE)
# List numbering ("1.", "2)", "(3)", "#4:"), bullets and "Sequence 5:" prefixes in front of a sequence.
_PREFIX = re.compile(r"^\s*(?:[-*•>]+\s*)?(?:(?:seq(?:uence)?\s*)?#?\(?\d+[.):]?\)?\s*[-:.)]?\s+)?", re.IGNORECASE)
_LETTERS = re.compile(r"^[A-Za-z]+$")


@dataclass(slots=True)
class ParseFailure:
    """The message could not be used; `message` is the error reply shown to the agent."""

    message: str
    kind: Literal["invalid"] = "invalid"
    partial: list[str] = field(default_factory=list)

    def as_info(self) -> dict[str, Any]:
        return {"kind": self.kind, "error": self.message, "valid_sequences": list(self.partial)}


@dataclass(slots=True)
class SampleAction:
    """`SAMPLE v`: ask for sequences whose hidden value is about `value` (0 <= v <= 1; others are refused)."""

    value: float
    requested: float
    kind: Literal["sample"] = "sample"

    def as_info(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value, "requested": self.requested}


@dataclass(slots=True)
class QueryAction:
    """A batch of sequences to evaluate (exactly the batch size)."""

    sequences: list[str]
    kind: Literal["query"] = "query"

    def as_info(self) -> dict[str, Any]:
        return {"kind": self.kind, "sequences": list(self.sequences)}


@dataclass(slots=True)
class RandomAction:
    """`RANDOM`: a batch of uniformly random sequences with their values."""

    kind: Literal["random"] = "random"

    def as_info(self) -> dict[str, Any]:
        return {"kind": self.kind}


RoundAction = SampleAction | QueryAction | RandomAction


def strip_fences(text: str) -> str:
    """Drop Markdown code-fence lines (```json … ```), keeping what is inside."""
    return "\n".join(line for line in text.splitlines() if not _FENCE.match(line))


def clean_sequence_line(line: str) -> str:
    """Remove list numbering, bullets, quotes and separators around a candidate sequence; uppercase."""
    line = line.strip().strip("`'\",;")
    line = _PREFIX.sub("", line, count=1)
    return line.strip().strip("`'\",;").upper()


def parse_round(text: str, *, length: int, batch: int, allow_random: bool) -> RoundAction | ParseFailure:
    """Parse one Protocol A round message into SAMPLE / a query batch / RANDOM, or explain the failure."""
    lines = strip_fences(text).splitlines()
    samples = [m for m in (_SAMPLE.match(line) for line in lines) if m]
    if samples:
        requested = float(samples[-1].group(1))
        if not 0.0 <= requested <= 1.0:
            return ParseFailure(f"SAMPLE value {samples[-1].group(1)} is out of range; use 0 <= v <= 1, "
                                "e.g. `SAMPLE 0.5`.")
        return SampleAction(value=requested, requested=requested)
    if any(_SAMPLE_WORD.match(line) for line in lines):
        return ParseFailure("SAMPLE needs one number between 0 and 1 on the same line, e.g. `SAMPLE 0.5`.")
    if any(_RANDOM.match(line) for line in lines):
        if allow_random:
            return RandomAction()
        return ParseFailure("RANDOM is not enabled in this lab; reply `SAMPLE v` or send "
                            f"exactly {batch} sequences, one per line.")
    valid: list[str] = []
    problems: list[str] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        candidate = clean_sequence_line(raw)
        if len(candidate) == length and set(candidate) <= set(ALPHABET):
            valid.append(candidate)
        elif _LETTERS.match(candidate) and len(problems) < 5:
            problems.append(_describe_bad_sequence(number, candidate, length))
    if len(valid) >= batch:
        return QueryAction(sequences=valid[:batch])
    detail = (" Problems: " + "; ".join(problems) + ".") if problems else ""
    if not valid and not problems:
        head = "I could not find a request in your message."
    else:
        head = f"Found {len(valid)} valid sequence(s) but exactly {batch} are needed."
    return ParseFailure(
        f"{head}{detail} Reply either `SAMPLE v` with 0 <= v <= 1, or exactly {batch} sequences of "
        f"{length} letters from A, C, G, T, one per line.",
        partial=valid,
    )


def _describe_bad_sequence(line_number: int, candidate: str, length: int) -> str:
    shown = candidate if len(candidate) <= 40 else candidate[:37] + "..."
    bad = sorted(set(candidate) - set(ALPHABET))
    if bad:
        return f"line {line_number} '{shown}' contains letters other than A, C, G, T ({', '.join(bad)})"
    return f"line {line_number} '{shown}' has {len(candidate)} letters instead of {length}"


def extract_json_object(text: str) -> dict[str, Any] | None:
    """Return the first JSON object in `text` (code fences and surrounding prose allowed), else None."""
    body = strip_fences(text)
    decoder = json.JSONDecoder()
    start = body.find("{")
    while start != -1:
        try:
            obj, _ = decoder.raw_decode(body, start)
        except json.JSONDecodeError:
            start = body.find("{", start + 1)
            continue
        except RecursionError:  # nested deeper than the interpreter's limit: no usable answer, not a crash
            return None
        if isinstance(obj, dict):
            return obj
        start = body.find("{", start + 1)
    return None


def as_probability(value: Any) -> float | None:
    """A finite number in [0,1] (numeric strings accepted), clamped; None if not a number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return min(1.0, max(0.0, float(value)))


def normalize_sequence(value: Any, length: int) -> str | None:
    """Uppercased sequence if it is exactly `length` letters from ACGT, else None."""
    if not isinstance(value, str):
        return None
    seq = value.strip().upper()
    if len(seq) != length or not set(seq) <= set(ALPHABET):
        return None
    return seq


# ---------------------------------------------------------------------- Protocol A final answer
@dataclass(slots=True)
class Hypothesis:
    """One ranked hypothesis of a final answer; `python` is the optional predictor program."""

    rank: int
    description: str
    python: str | None = None


@dataclass(slots=True)
class FinalAnswer:
    """A Protocol A final answer; `structured` is False when it was recovered from free text."""

    hypotheses: list[Hypothesis]
    predictions: dict[str, float]
    structured: bool
    warnings: list[str] = field(default_factory=list)
    kind: Literal["final"] = "final"

    def as_info(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "structured": self.structured,
            "hypotheses": [{"rank": h.rank, "description": h.description, "python": h.python}
                           for h in self.hypotheses],
            "predictions": dict(self.predictions),
            "warnings": list(self.warnings),
        }


MAX_HYPOTHESES = 3
MAX_PROGRAM_CHARS = 20_000


def parse_final_answer(text: str, *, length: int, held_out: list[str]) -> FinalAnswer | ParseFailure:
    """Parse the final hypothesis message (spec §2.6); free text without JSON is a failure that carries
    the text as an unstructured fallback hypothesis in `partial`."""
    obj = extract_json_object(text)
    if obj is None:
        return ParseFailure(
            "I could not find a JSON object in your answer. Reply with one JSON object of the form "
            '{"hypotheses": [{"rank": 1, "description": "...", "python": "def f(s): ..."}], '
            '"predictions": {"<sequence>": <value>, ...}}.',
            partial=[text.strip()[:4000]] if text.strip() else [],
        )
    warnings: list[str] = []
    hypotheses = _parse_hypotheses(obj, warnings)
    predictions = _parse_predictions(obj.get("predictions"), length, held_out, warnings)
    if not hypotheses and not predictions:
        return ParseFailure(
            "Your JSON has neither usable `hypotheses` nor `predictions`. " + " ".join(warnings),
            partial=[text.strip()[:4000]],
        )
    return FinalAnswer(hypotheses=hypotheses, predictions=predictions, structured=True, warnings=warnings)


def _parse_hypotheses(obj: dict[str, Any], warnings: list[str]) -> list[Hypothesis]:
    raw = obj.get("hypotheses")
    if raw is None and isinstance(obj.get("hypothesis"), str | dict):
        raw = [obj["hypothesis"]]
    if raw is None:
        warnings.append("`hypotheses` is missing.")
        return []
    if not isinstance(raw, list):
        warnings.append("`hypotheses` must be a list.")
        return []
    out: list[Hypothesis] = []
    for position, item in enumerate(raw, start=1):
        if isinstance(item, str):
            item = {"description": item}
        if not isinstance(item, dict):
            warnings.append(f"hypothesis {position} is not an object; ignored.")
            continue
        description = item.get("description", "")
        python = item.get("python")
        if not isinstance(description, str):
            description = str(description)
        if python is not None and (not isinstance(python, str) or not python.strip()):
            warnings.append(f"hypothesis {position}: `python` must be a non-empty string; ignored.")
            python = None
        if python is not None and len(python) > MAX_PROGRAM_CHARS:
            warnings.append(f"hypothesis {position}: program longer than {MAX_PROGRAM_CHARS} characters; ignored.")
            python = None
        rank = item.get("rank", position)
        if not isinstance(rank, int) or isinstance(rank, bool):
            rank = position
        if not description.strip() and python is None:
            warnings.append(f"hypothesis {position} is empty; ignored.")
            continue
        out.append(Hypothesis(rank=rank, description=description.strip(), python=python))
    out.sort(key=lambda h: h.rank)
    if len(out) > MAX_HYPOTHESES:
        warnings.append(f"only the first {MAX_HYPOTHESES} ranked hypotheses are graded.")
        out = out[:MAX_HYPOTHESES]
    return out


def _parse_predictions(raw: Any, length: int, held_out: list[str], warnings: list[str]) -> dict[str, float]:
    """Map held-out sequence -> predicted value; keys may be the sequences or their 1-based numbers."""
    if raw is None:
        return {}
    if isinstance(raw, list):
        if len(raw) != len(held_out):
            warnings.append(f"`predictions` as a list must have {len(held_out)} values in the listed order.")
            return {}
        raw = {seq: value for seq, value in zip(held_out, raw, strict=True)}
    if not isinstance(raw, dict):
        warnings.append("`predictions` must be an object {sequence: value}.")
        return {}
    wanted = set(held_out)
    out: dict[str, float] = {}
    unknown = 0
    for key, value in raw.items():
        seq = normalize_sequence(key, length)
        if seq is None and isinstance(key, str) and key.strip().isdigit():
            index = int(key.strip())
            seq = held_out[index - 1] if 1 <= index <= len(held_out) else None
        if seq is None or seq not in wanted:
            unknown += 1
            continue
        number = as_probability(value)
        if number is None:
            warnings.append(f"prediction for {seq} is not a number in [0,1]; ignored.")
            continue
        out[seq] = number
    if unknown:
        warnings.append(f"{unknown} prediction key(s) are not among the listed held-out sequences; ignored.")
    missing = len(wanted - set(out))
    if missing:
        warnings.append(f"{missing} held-out sequence(s) have no prediction (graded as wrong).")
    return out
