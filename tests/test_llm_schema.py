"""The small JSON-schema validator, clamping and tolerant reply parsing."""

from __future__ import annotations

from typing import Any

import pytest

from discoverylab.llm import clamp_numbers, parse_json_reply, validate

ACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["query", "answer"]},
        "sequence": {"type": "string", "pattern": "^[ACGT]{1,30}$"},
        "values": {"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 1}, "maxItems": 3},
        "rank": {"type": "integer", "exclusiveMinimum": 0},
        "note": {"type": ["string", "null"], "maxLength": 5},
    },
    "required": ["action"],
    "additionalProperties": False,
}

CASES: list[tuple[Any, bool, str]] = [
    ({"action": "query"}, True, ""),
    ({"action": "query", "sequence": "ACGT", "values": [0, 0.5, 1], "rank": 2, "note": None}, True, ""),
    ({"action": "answer", "rank": 3.0}, True, ""),  # 3.0 is an integer in JSON
    ({}, False, "missing required key 'action'"),
    ({"action": "guess"}, False, "not one of"),
    ({"action": "query", "extra": 1}, False, "unexpected key 'extra'"),
    ({"action": "query", "sequence": "ACGU"}, False, "does not match pattern"),
    ({"action": "query", "values": [0.2, 1.5]}, False, "$.values[1]: 1.5 is above the maximum 1"),
    ({"action": "query", "values": [-0.1]}, False, "below the minimum"),
    ({"action": "query", "values": [0, 0, 0, 0]}, False, "more than 3 items"),
    ({"action": "query", "rank": 0}, False, "must be greater than 0"),
    ({"action": "query", "rank": 1.5}, False, "expected integer"),
    ({"action": "query", "rank": True}, False, "expected integer"),
    ({"action": "query", "note": "too long"}, False, "longer than 5"),
    ({"action": "query", "values": "0.5"}, False, "expected array"),
    (["query"], False, "expected object"),
]


@pytest.mark.parametrize(("instance", "valid", "message"), CASES)
def test_validate_table(instance: Any, valid: bool, message: str) -> None:
    errors = validate(instance, ACTION_SCHEMA)
    assert (not errors) == valid, errors
    if message:
        assert any(message in error for error in errors), errors


def test_refs_and_combinators() -> None:
    schema = {
        "$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}},
        "type": "object",
        "properties": {
            "where": {"$ref": "#/$defs/point"},
            "either": {"anyOf": [{"type": "integer"}, {"type": "string", "minLength": 2}]},
            "one": {"oneOf": [{"type": "number"}, {"type": "integer"}]},
        },
    }
    assert validate({"where": {"x": 1}, "either": "ab", "one": 0.5}, schema) == []
    assert validate({"where": {}}, schema) == ["$.where: missing required key 'x'"]
    assert validate({"either": "a"}, schema) == ["$.either: matches 0 of the anyOf alternatives"]
    # 2 is both a number and an integer, so oneOf fails.
    assert validate({"one": 2}, schema) == ["$.one: matches 2 of the oneOf alternatives"]


def test_booleans_are_not_numbers_and_enums_keep_types() -> None:
    assert validate(True, {"type": "number"}) != []
    assert validate(1, {"enum": [True]}) != []
    assert validate(True, {"enum": [1]}) != []
    assert validate(1, {"enum": [1.0]}) == []


def test_clamp_numbers_pulls_values_inside_bounds_only_where_declared() -> None:
    instance = {"action": "query", "values": [-1, 0.5, 2], "rank": -4, "other": 99}
    clamped = clamp_numbers(instance, ACTION_SCHEMA)
    assert clamped == {"action": "query", "values": [0, 0.5, 1], "rank": -4, "other": 99}
    assert instance["values"] == [-1, 0.5, 2]  # the input is not modified


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('  \n{"a": [1, 2]}\n', {"a": [1, 2]}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('Here you go: {"a": {"b": "}"}} -- done', {"a": {"b": "}"}}),
        ('noise { not json } then {"ok": true}', {"ok": True}),
    ],
)
def test_parse_json_reply_tolerates_wrapping(text: str, expected: Any) -> None:
    assert parse_json_reply(text) == expected


@pytest.mark.parametrize("text", ["", "no json here", '{"a": '])
def test_parse_json_reply_rejects_text_without_json(text: str) -> None:
    with pytest.raises(ValueError, match="no JSON value"):
        parse_json_reply(text)


def test_clamp_picks_the_matching_alternative_of_any_of() -> None:
    schema = {
        "anyOf": [
            {"type": "object", "properties": {"kind": {"const": "a"}, "x": {"type": "number", "maximum": 1}},
             "required": ["kind", "x"]},
            {"type": "object", "properties": {"kind": {"const": "b"}, "x": {"type": "number", "minimum": 5}},
             "required": ["kind", "x"]},
        ]
    }
    assert clamp_numbers({"kind": "a", "x": 3}, schema) == {"kind": "a", "x": 1}
    assert clamp_numbers({"kind": "b", "x": 3}, schema) == {"kind": "b", "x": 5}
    assert clamp_numbers({"kind": "c", "x": 3}, schema) == {"kind": "c", "x": 3}
