"""Answer sheets: a small typed form per discovery task, filled once at the end, graded exactly.

The knowledge score asks an LLM judge whether a free-text report states the discovery; an answer
sheet asks the same thing as typed fields that a program grades with no LLM. Every field takes
exactly one value, so hedging ("A or B", a list where one value is wanted, a band of numbers) is
impossible by type: such an answer is invalid and scores 0 for that field.

Field kinds:
- `Choice`: one option from a closed list given in the form (names the agent can see, sorted or
  in a fixed order, never in creation order). Strings match case- and space-insensitively.
- `Number`: one number; correct iff |answer - gold| < max(abs, rel * |gold|) (exclusive bounds;
  with both 0 only exact equality counts). A numeric string ("12.5") is accepted.
- `Numbers`: a list of exactly `length` numbers, each within the tolerance of its gold element;
  `scale_free` lists (proportions) are compared after dividing each by its sum.

A field's `chance` is the expected score of the best blind answer: the probability that the
prior's most likely gold value is the seed's gold (1/len(options) for a balanced choice). A
form's chance is the mean of its fields' (expectation is linear, so no fixed or random answer
sheet can expect more); `tests/test_answer_sheet.py` checks fixed and random sheets against it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import permutations
from typing import Any


class AnswerSheetError(ValueError):
    """A form that cannot be built (no fields, duplicate names, an empty choice list...)."""


@dataclass(frozen=True, slots=True)
class Tolerance:
    """How close a number must be: strictly within max(abs, rel * |gold|) of the gold."""

    rel: float = 0.0
    abs: float = 0.0

    def accepts(self, value: float, gold: float) -> bool:
        bound = max(self.abs, self.rel * abs(gold))
        return value == gold if bound == 0 else abs(value - gold) < bound

    def describe(self) -> str:
        parts = [f"{self.rel * 100:g}%" if self.rel else "", f"{self.abs:g}" if self.abs else ""]
        text = " or ".join(p for p in parts if p)
        return f"within {text} (exclusive)" if text else "exact"


@dataclass(frozen=True, slots=True)
class Choice:
    """One option from a closed list."""

    options: tuple[str | int, ...]

    kind = "choice"

    def type_text(self) -> str:
        return "one of: " + ", ".join(str(o) for o in self.options)

    def schema(self) -> dict[str, Any]:
        return {"enum": list(self.options)}

    def parse(self, value: Any) -> str | int:
        if isinstance(value, list | tuple | set | dict):
            raise ValueError("give exactly one option, not a list")
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise ValueError(f"expected one of the options, got {type(value).__name__}")
        key = _norm(value)
        for option in self.options:
            if _norm(option) == key:
                return option
        raise ValueError(f"{value!r} is not one of the options")

    def matches(self, value: Any, gold: Any) -> bool:
        return bool(value == gold)


@dataclass(frozen=True, slots=True)
class Number:
    """One number. `span` is the prior's range (what a blind guesser would draw from)."""

    tolerance: Tolerance
    span: tuple[float, float]
    unit: str = ""

    kind = "number"

    def type_text(self) -> str:
        unit = f" ({self.unit})" if self.unit else ""
        return f"one number{unit}"

    def schema(self) -> dict[str, Any]:
        return {"type": "number"}

    def parse(self, value: Any) -> float:
        return _number(value)

    def matches(self, value: Any, gold: Any) -> bool:
        return self.tolerance.accepts(float(value), float(gold))


@dataclass(frozen=True, slots=True)
class Numbers:
    """A list of exactly `length` numbers (e.g. coefficients, or proportions when `scale_free`);
    `tolerance` is one for every element or one per element."""

    length: int
    tolerance: Tolerance | tuple[Tolerance, ...]
    span: tuple[float, float]
    scale_free: bool = False
    unit: str = ""

    kind = "numbers"

    def type_text(self) -> str:
        unit = f" ({self.unit})" if self.unit else ""
        return f"a list of exactly {self.length} numbers{unit}"

    def schema(self) -> dict[str, Any]:
        return {"type": "array", "items": {"type": "number"}, "minItems": self.length, "maxItems": self.length}

    def parse(self, value: Any) -> list[float]:
        if not isinstance(value, list | tuple):
            raise ValueError(f"expected a list of {self.length} numbers")
        if len(value) != self.length:
            raise ValueError(f"expected exactly {self.length} numbers, got {len(value)}")
        numbers = [_number(v) for v in value]
        if self.scale_free and (any(v < 0 for v in numbers) or sum(numbers) <= 0):
            raise ValueError("proportions must be non-negative and not all zero")
        return numbers

    def matches(self, value: Any, gold: Any) -> bool:
        mine, want = [float(v) for v in value], [float(g) for g in gold]
        if self.scale_free:
            mine, want = [v / sum(mine) for v in mine], [g / sum(want) for g in want]
        return all(t.accepts(v, g) for t, v, g in zip(self.tolerances, mine, want, strict=True))

    @property
    def tolerances(self) -> tuple[Tolerance, ...]:
        tol = self.tolerance
        return tol if isinstance(tol, tuple) else (tol,) * self.length


Kind = Choice | Number | Numbers


@dataclass(frozen=True, slots=True)
class Field:
    """One question of a form. `chance`: the best blind answer's expected score (see module doc);
    a balanced choice defaults to 1/len(options), numbers must state theirs."""

    name: str
    question: str
    kind: Kind
    chance: float | None = None
    gold_meaning: str = ""  # for the docs: what the gold is, in the scenario's terms

    @property
    def chance_score(self) -> float:
        if self.chance is not None:
            return self.chance
        if isinstance(self.kind, Choice):
            return 1.0 / len(self.kind.options)
        raise AnswerSheetError(f"field {self.name!r}: a numeric field must state its chance")


@dataclass(frozen=True, slots=True)
class Form:
    """An ordered set of fields. `unordered`: groups of fields whose gold values may be given in
    any order among themselves (e.g. the two conditions of a symmetric rule)."""

    task: str
    difficulty: str
    fields: tuple[Field, ...]
    unordered: tuple[tuple[str, ...], ...] = ()

    def __post_init__(self) -> None:
        names = [f.name for f in self.fields]
        if not names or len(set(names)) != len(names):
            raise AnswerSheetError(f"a form needs distinct field names, got {names}")
        for f in self.fields:
            options = f.kind.options if isinstance(f.kind, Choice) else ("-",)
            if not options or len(set(map(_norm, options))) != len(options):
                raise AnswerSheetError(f"field {f.name!r}: options must be distinct and non-empty")
        for group in self.unordered:
            if not set(group) <= set(names):
                raise AnswerSheetError(f"unordered group {group} names unknown fields")

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    @property
    def chance(self) -> float:
        return sum(f.chance_score for f in self.fields) / len(self.fields)

    def json_schema(self) -> dict[str, Any]:
        """A JSON schema for structured output: every field required, nothing else allowed."""
        props = {f.name: {**f.kind.schema(), "description": f.question} for f in self.fields}
        return {"type": "object", "properties": props, "required": [f.name for f in self.fields],
                "additionalProperties": False}  # fmt: skip

    def text(self) -> str:
        """The form as plain text, for prompts and the UI."""
        lines = ["Answer sheet: one value per field (a list or 'A or B' where one value is asked scores 0)."]
        lines += [f"- {f.name} ({f.kind.type_text()}): {f.question}" for f in self.fields]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON for a UI: each field's name, question, kind, its JSON schema (the options of a
        choice are its `enum`) and chance."""
        return {"task": self.task, "difficulty": self.difficulty, "chance": self.chance, "fields": [
            {"name": f.name, "question": f.question, "kind": f.kind.kind, "type": f.kind.type_text(),
             "schema": f.kind.schema(), "chance": f.chance_score} for f in self.fields]}  # fmt: skip


@dataclass(slots=True)
class Validation:
    """Parsed values of the valid fields and an error per invalid, missing or unknown field."""

    values: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class SheetGrade:
    score: float
    fields: list[dict[str, Any]]
    errors: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {"score": self.score, "fields": list(self.fields), "errors": dict(self.errors)}


def validate(form: Form, answers: Any) -> Validation:
    """Check `answers` (a mapping of field name -> value) against the form; never raises."""
    out = Validation()
    if not isinstance(answers, Mapping):
        out.errors["(sheet)"] = f"answers must be a JSON object of field -> value, got {type(answers).__name__}"
        answers = {}
    known = {f.name for f in form.fields}
    for key in answers:
        if key not in known:
            out.errors[str(key)] = f"unknown field (valid: {', '.join(sorted(known))})"
    for f in form.fields:
        if f.name not in answers or answers[f.name] is None:
            out.errors[f.name] = "missing"
            continue
        try:
            out.values[f.name] = f.kind.parse(answers[f.name])
        except ValueError as exc:
            out.errors[f.name] = str(exc)
    return out


def grade(form: Form, answers: Any, gold: Mapping[str, Any]) -> SheetGrade:
    """Grade each field exactly (invalid or missing: incorrect); the score is the fraction right."""
    checked = validate(form, answers)
    missing = [f.name for f in form.fields if f.name not in gold]
    if missing:
        raise AnswerSheetError(f"gold lacks fields {missing}")
    want = {f.name: gold[f.name] for f in form.fields}
    for group in form.unordered:  # give the group's gold in the order that matches best
        best = max(permutations(want[n] for n in group),
                   key=lambda golds: sum(_right(form.field(n), checked, g) for n, g in zip(group, golds, strict=True)))
        want.update(zip(group, best, strict=True))
    rows = [{"name": f.name, "answer": checked.values.get(f.name), "gold": want[f.name],
             "correct": _right(f, checked, want[f.name])} for f in form.fields]  # fmt: skip
    score = sum(1 for r in rows if r["correct"]) / len(rows)
    return SheetGrade(score, rows, checked.errors)


def _right(f: Field, checked: Validation, gold: Any) -> bool:
    return f.name in checked.values and f.kind.matches(checked.values[f.name], gold)


def _norm(value: Any) -> str:
    return " ".join(str(value).split()).casefold()


def _number(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError("expected a number, got a boolean")
    if isinstance(value, str):
        try:
            value = float(value.strip().replace(",", ""))
        except ValueError:
            raise ValueError(f"{value!r} is not one number") from None
    if not isinstance(value, int | float):
        raise ValueError(f"expected one number, got {type(value).__name__}")
    try:
        number = float(value)
    except OverflowError:  # an integer beyond a float's range
        raise ValueError("the number is out of range") from None
    if not math.isfinite(number):
        raise ValueError("the number must be finite")
    return number


def random_answers(form: Form, rng: Any) -> dict[str, Any]:
    """A uniformly random valid sheet (the chance baseline): an option, or numbers in the span."""
    out: dict[str, Any] = {}
    for f in form.fields:
        kind = f.kind
        if isinstance(kind, Choice):
            out[f.name] = kind.options[int(rng.integers(0, len(kind.options)))]
        elif isinstance(kind, Number):
            out[f.name] = float(rng.uniform(*kind.span))
        else:
            out[f.name] = [float(rng.uniform(*kind.span)) for _ in range(kind.length)]
    return out


def options_text(values: Iterable[Any]) -> tuple[str, ...]:
    """Sorted, distinct option strings (choice lists never follow creation order)."""
    return tuple(sorted({str(v) for v in values}))
