"""JSON-schema checks for model replies.

Constrained decoding (llama.cpp grammars, hosted "structured outputs") guarantees the *shape* of a
reply but not every keyword: llama.cpp ignores numeric `minimum`/`maximum`, and a hosted model may
silently drop unsupported keywords. So every structured reply is validated here before an agent or
a grader acts on it. This is a deliberately small validator for the subset of JSON Schema that
agents and judges use (no network refs, no format checks), so we need no extra dependency.
`check_reply` and `with_schema_instructions` are the two ends `LLMClient` uses: spelling a schema
out in the prompt for endpoints that cannot constrain decoding, and checking what came back.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

_TYPE_CHECKS: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    # JSON has one number type: 3.0 is a valid integer, booleans are not numbers.
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and math.isfinite(v) and v.is_integer()),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate(instance: Any, schema: Mapping[str, Any]) -> list[str]:
    """Return human-readable violations of `schema` by `instance` (empty when valid).

    Supported keywords: type, enum, const, properties, required, additionalProperties, items,
    minItems, maxItems, uniqueItems, minimum, maximum, exclusiveMinimum, exclusiveMaximum,
    minLength, maxLength, pattern, anyOf, oneOf, allOf and local `$ref` into `$defs`/`definitions`.
    """
    errors: list[str] = []
    _check(instance, schema, schema, "$", errors)
    return errors


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    if not isinstance(ref, str) or not ref.startswith("#/"):
        raise ValueError(f"only local '#/...' $ref is supported, got {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return _resolve(node, root)


def _check(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any], path: str, errors: list[str]) -> None:
    schema = _resolve(schema, root)
    expected = schema.get("type")
    if expected is not None:
        names = [expected] if isinstance(expected, str) else list(expected)
        if not any(_TYPE_CHECKS[name](value) for name in names):
            errors.append(f"{path}: expected {' or '.join(names)}, got {_describe(value)}")
            return
    if "enum" in schema and not any(_json_equal(value, option) for option in schema["enum"]):
        errors.append(f"{path}: {_short(value)} is not one of {_short(schema['enum'])}")
    if "const" in schema and not _json_equal(value, schema["const"]):
        errors.append(f"{path}: must equal {_short(schema['const'])}")
    if _TYPE_CHECKS["number"](value):
        _check_number(value, schema, path, errors)
    elif isinstance(value, str):
        _check_string(value, schema, path, errors)
    elif isinstance(value, list):
        _check_array(value, schema, root, path, errors)
    elif isinstance(value, dict):
        _check_object(value, schema, root, path, errors)
    _check_combinators(value, schema, root, path, errors)


def _check_number(value: float, schema: Mapping[str, Any], path: str, errors: list[str]) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        errors.append(f"{path}: {value} is not a finite number")
        return
    if "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{path}: {value} is below the minimum {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        errors.append(f"{path}: {value} is above the maximum {schema['maximum']}")
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        errors.append(f"{path}: {value} must be greater than {schema['exclusiveMinimum']}")
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        errors.append(f"{path}: {value} must be less than {schema['exclusiveMaximum']}")


def _check_string(value: str, schema: Mapping[str, Any], path: str, errors: list[str]) -> None:
    if "minLength" in schema and len(value) < schema["minLength"]:
        errors.append(f"{path}: string shorter than {schema['minLength']} characters")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        errors.append(f"{path}: string longer than {schema['maxLength']} characters")
    if "pattern" in schema and re.search(schema["pattern"], value) is None:
        errors.append(f"{path}: {_short(value)} does not match pattern {schema['pattern']!r}")


def _check_array(
    value: list[Any], schema: Mapping[str, Any], root: Mapping[str, Any], path: str, errors: list[str]
) -> None:
    if "minItems" in schema and len(value) < schema["minItems"]:
        errors.append(f"{path}: fewer than {schema['minItems']} items")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        errors.append(f"{path}: more than {schema['maxItems']} items")
    if schema.get("uniqueItems"):
        seen = [json.dumps(item, sort_keys=True) for item in value]
        if len(set(seen)) != len(seen):
            errors.append(f"{path}: items are not unique")
    items = schema.get("items")
    if isinstance(items, Mapping):
        for index, item in enumerate(value):
            _check(item, items, root, f"{path}[{index}]", errors)


def _check_object(
    value: dict[str, Any], schema: Mapping[str, Any], root: Mapping[str, Any], path: str, errors: list[str]
) -> None:
    properties: Mapping[str, Any] = schema.get("properties", {})
    for key in schema.get("required", []):
        if key not in value:
            errors.append(f"{path}: missing required key {key!r}")
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in properties:
            _check(item, properties[key], root, f"{path}.{key}", errors)
        elif extra is False:
            errors.append(f"{path}: unexpected key {key!r}")
        elif isinstance(extra, Mapping):
            _check(item, extra, root, f"{path}.{key}", errors)


def _check_combinators(
    value: Any, schema: Mapping[str, Any], root: Mapping[str, Any], path: str, errors: list[str]
) -> None:
    for sub in schema.get("allOf", []):
        _check(value, sub, root, path, errors)
    for keyword, want_exactly_one in (("anyOf", False), ("oneOf", True)):
        options = schema.get(keyword)
        if not options:
            continue
        matches = 0
        for sub in options:
            sub_errors: list[str] = []
            _check(value, sub, root, path, sub_errors)
            matches += not sub_errors
        if matches == 0 or (want_exactly_one and matches > 1):
            errors.append(f"{path}: matches {matches} of the {keyword} alternatives")


def clamp_numbers(instance: Any, schema: Mapping[str, Any]) -> Any:
    """Copy of `instance` with numbers pulled inside their schema's minimum/maximum.

    For callers that prefer a bounded guess over a rejected reply (e.g. a probability of 1.3 from
    a small model becomes 1.0). Exclusive bounds are not clamped: there is no nearest valid value.
    """
    return _clamp(instance, schema, schema)


def _clamp(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> Any:
    schema = _resolve(schema, root)
    for keyword in ("anyOf", "oneOf"):
        # Use the first alternative that the clamped value satisfies (e.g. the right action shape).
        for option in schema.get(keyword, []):
            candidate = _clamp(value, option, root)
            errors: list[str] = []
            _check(candidate, option, root, "$", errors)
            if not errors:
                return candidate
    if _TYPE_CHECKS["number"](value) and not (isinstance(value, float) and math.isnan(value)):
        if "minimum" in schema and value < schema["minimum"]:
            value = schema["minimum"]
        if "maximum" in schema and value > schema["maximum"]:
            value = schema["maximum"]
        return value
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [_clamp(item, schema["items"], root) for item in value]
    if isinstance(value, dict):
        properties: Mapping[str, Any] = schema.get("properties", {})
        return {key: _clamp(item, properties[key], root) if key in properties else item for key, item in value.items()}
    return value


def _json_equal(left: Any, right: Any) -> bool:
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    return bool(left == right)


def _describe(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number" if isinstance(value, int | float) else type(value).__name__)


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_json_reply(text: str) -> Any:
    """Parse a model reply as JSON, tolerating code fences and chatter around one object.

    Constrained servers return bare JSON; unconstrained fallbacks (prompt-only JSON) often wrap it
    in ```json fences or add a sentence. Raises `ValueError` when no JSON value can be found.
    """
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[\[{]", stripped):
        try:
            value, _ = decoder.raw_decode(stripped, match.start())
        except json.JSONDecodeError:
            continue
        return value
    raise ValueError(f"no JSON value found in the reply: {_short(text)}")


def check_reply(text: str, schema: Mapping[str, Any], clamp: bool) -> tuple[dict[str, Any] | None, list[str]]:
    """A reply parsed as a JSON object (clamped if asked) and its violations of `schema`."""
    try:
        data = parse_json_reply(text)
    except ValueError as exc:
        return None, [str(exc)]
    if not isinstance(data, dict):
        return None, ["the reply must be a JSON object"]
    if clamp:
        data = clamp_numbers(data, schema)
    return data, validate(data, schema)


def with_schema_instructions(conversation: list[dict[str, Any]], schema: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The conversation with `schema` spelled out in its system message (endpoints that cannot constrain)."""
    note = (
        "Reply with only one JSON object (no prose, no code fence) that matches this JSON Schema:\n"
        + json.dumps(schema, indent=1)
    )
    if conversation and conversation[0].get("role") == "system":
        first = dict(conversation[0])
        first["content"] = f"{first.get('content', '')}\n\n{note}"
        return [first, *conversation[1:]]
    return [{"role": "system", "content": note}, *conversation]
