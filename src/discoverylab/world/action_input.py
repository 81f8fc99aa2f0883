"""Checking what an agent sent before it becomes an action: text or dict, size limits, bounded
echoes of bad input in error messages, integer arguments (a sibling of `actions.py`, which
executes what passes); and `whole_option`, the one check of the env's and the RL wrappers'
whole-number options (it lives here, at the bottom of the package, so every layer may import it)."""

from __future__ import annotations

import json
import operator
import reprlib
from collections.abc import Mapping
from typing import Any, Final

import numpy as np

MAX_ACTION_CHARS: Final = 100_000  # longer action text is refused before parsing (an action is < 1 KB)
MAX_ECHO_CHARS: Final = 200  # how much of the agent's own input an error message may quote
MAX_ERROR_CHARS: Final = 2_000  # cap on any failure message (the echo bound above keeps them far shorter)
MAX_ARRAY_ITEMS: Final = 64  # a numpy array argument longer than this is echoed by its shape, never listed
MAX_INT: Final = 2**63  # larger integers are never UUIDs, post IDs or options (and would not fit int64)
ACTION_KEYS: Final = frozenset({"action", "arg1", "arg2"})
_PLAIN_TYPES: Final = frozenset({str, int, float, bool, type(None)})  # values `_plain` leaves as they are
DIALOG_KEY: Final = "chosen_dialog_option_int"


class ActionError(ValueError):
    """Bad agent input; its message goes to the agent, the world does not change."""


_REPR = reprlib.Repr()
_REPR.maxlevel = 3
_REPR.maxstring = MAX_ECHO_CHARS
_REPR.maxother = MAX_ECHO_CHARS
_REPR.maxlong = 40


def brief(value: Any) -> str:
    """A bounded repr of agent input for error messages: safe for deep nesting, huge integers
    (whose str() raises beyond 4,300 digits) and megabyte strings."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= MAX_INT:
        return f"<integer of about {int(value.bit_length() * 0.30103) + 1} digits>"
    try:
        text = _REPR.repr(value)
    except (ValueError, RecursionError, TypeError):
        text = f"<{type(value).__name__}>"
    return text if len(text) <= MAX_ECHO_CHARS else text[: MAX_ECHO_CHARS - 3] + "..."


def whole_option(name: str, value: Any, low: int = 0, high: int | None = None) -> int:
    """A whole-number option (a count, a radius, a step limit) in low..high as a plain int, else a
    ValueError naming it. Any integer type counts (`operator.index`: numpy's, a torch scalar's),
    so a count read from a numpy config works; bools, floats and strings do not (a float was
    once truncated, a string failed mid-reset). Checked at construction, never per step."""
    number: int | None = None
    if not isinstance(value, (bool, np.bool_)):
        try:
            number = operator.index(value)
        except TypeError:
            pass
    if number is None or number < low or (high is not None and number > high):
        bound = f"from {low} to {high}" if high is not None else f"from {low}"
        raise ValueError(f"{name} must be a whole number {bound}, not {brief(value)}.")
    return number


def _key_list(packet: Mapping[Any, Any], allowed: frozenset[str]) -> str:
    """Sorted, bounded listing of the packet's keys outside `allowed` (keys of a Python dict need
    not be strings): the first 20 in the packet's order, never a set's, whose order of string
    keys changes with PYTHONHASHSEED (the same action read differently from run to run)."""
    extra = [k for k in packet if k not in allowed]
    shown = sorted(brief(k) for k in extra[:20])
    return "[" + ", ".join(shown) + (", ..." if len(extra) > 20 else "") + "]"


def parse_action(raw: Any) -> dict[str, Any]:
    """Turn whatever was sent into a dict, or raise ActionError saying what is wrong."""
    if type(raw) is dict:  # the usual case (RL and scripted agents): skip the checks below
        for value in raw.values():
            if type(value) not in _PLAIN_TYPES:
                return _plain(dict(raw))
        return raw  # nothing to convert: no copy (the executor only reads the packet)
    if isinstance(raw, (str, bytes, bytearray)):
        if len(raw) > MAX_ACTION_CHARS:
            raise ActionError(
                f"The action text is {len(raw):,} characters long (limit {MAX_ACTION_CHARS:,}). "
                'Send one short JSON object, e.g. {"action": "MOVE_DIRECTION", "arg1": "north"}.'
            )
        text = raw.decode("utf-8", "replace") if isinstance(raw, (bytes, bytearray)) else raw
        try:
            raw = json.loads(text)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, over-long integer literals
            raise ActionError(
                f'Could not parse the action as JSON ({exc.__class__.__name__}: {str(exc)[:80]}). '
                'Send e.g. {"action": "MOVE_DIRECTION", "arg1": "north"}.'
            ) from None
    if not isinstance(raw, Mapping):
        raise ActionError(
            f'An action must be a JSON object such as {{"action": "PICKUP", "arg1": 1234}}, not {type(raw).__name__}.'
        )
    return _plain(dict(raw))


def _plain(packet: dict[str, Any]) -> dict[str, Any]:
    """Numpy values (what a policy's `argmax` or a sampled array gives) as plain Python values, so a
    numpy integer is a UUID like any int and an array argument is a clear error, never an
    ambiguous-truth-value exception deep in the executor."""
    for key, value in packet.items():
        if isinstance(value, np.generic):
            packet[key] = value.item()
        elif isinstance(value, np.ndarray):
            if value.size <= MAX_ARRAY_ITEMS:
                packet[key] = value.tolist()
            else:
                packet[key] = f"<numpy array of shape {value.shape}>"
    return packet


def _as_int(value: Any) -> int | None:
    """An integer argument (ints, integral floats, digit strings), or None; never one beyond int64."""
    number: int | None = None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and len(value) <= 40:
        try:
            number = int(value.strip())
        except ValueError:
            return None
    elif hasattr(type(value), "__index__"):  # another integer type: a torch or jax integer scalar
        try:
            number = operator.index(value)
        except Exception:  # noqa: BLE001 - e.g. a tensor of several values: not an integer argument
            return None
    return number if number is not None and abs(number) < MAX_INT else None
