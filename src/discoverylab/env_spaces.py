"""Gymnasium spaces of the DiscoveryWorld env: text observations that travel through the
async vector env's shared memory, and a text action space that holds dict actions too.

Gymnasium's shared memory stores a `Text` as one int32 per possible character and decodes it
character by character: with room for long observations that is megabytes per step, and it
turned every observation into the full-length padding. `ObservationText` stores a length and
ASCII bytes instead, so `AsyncVectorEnv` works with `shared_memory=True` (its default) and
reads only what was written.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import string
from collections.abc import Mapping
from types import ModuleType
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import shared_memory as shm

# Always-parseable actions that need no object argument: what `ActionText.sample()` draws from.
ARGLESS_ACTIONS: tuple[str, ...] = tuple(
    json.dumps(a, separators=(",", ":"))
    for a in (
        *({"action": "MOVE_DIRECTION", "arg1": d} for d in ("north", "east", "south", "west")),
        *({"action": "ROTATE_DIRECTION", "arg1": d} for d in ("north", "east", "south", "west")),
        {"action": "MOVE_FORWARD"},
        {"action": "MOVE_BACKWARD"},
        {"action": "WAIT"},
    )
)


class ObservationText(spaces.Text):
    """Printable-ASCII JSON text of up to `max_length` characters (shared-memory friendly)."""

    def __init__(self, max_length: int, seed: int | np.random.Generator | None = None) -> None:
        super().__init__(max_length=max_length, charset=string.printable, seed=seed)


class ActionText(spaces.Text):
    """An action: JSON text (up to `max_length` printable characters) or a dict such as
    `{"action": "PICKUP", "arg1": 1234}`. `sample()` draws a random argument-less action
    (movement, rotation, wait), which always parses; for object actions and masks use
    `discoverylab.rl.DiscreteActions`."""

    def __init__(self, max_length: int = 512, seed: int | np.random.Generator | None = None) -> None:
        super().__init__(max_length=max_length, charset=string.printable, seed=seed)

    def contains(self, x: Any) -> bool:
        if isinstance(x, Mapping):
            try:
                text = json.dumps(dict(x), separators=(",", ":"), ensure_ascii=True)
            except (TypeError, ValueError):
                return False
            return super().contains(text)
        return super().contains(x)

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        return ARGLESS_ACTIONS[int(self.np_random.integers(len(ARGLESS_ACTIONS)))]


@shm.create_shared_memory.register(ObservationText)
def _create(space: ObservationText, n: int = 1, ctx: ModuleType = mp) -> tuple[Any, Any]:
    return ctx.Array("q", n), ctx.Array("B", n * space.max_length)  # type: ignore[attr-defined]


@shm.read_from_shared_memory.register(ObservationText)
def _read(space: ObservationText, shared_memory: tuple[Any, Any], n: int = 1) -> tuple[str, ...]:
    lengths = np.frombuffer(shared_memory[0].get_obj(), dtype=np.int64)
    data = np.frombuffer(shared_memory[1].get_obj(), dtype=np.uint8)
    size = space.max_length
    return tuple(data[i * size : i * size + int(lengths[i])].tobytes().decode("ascii") for i in range(n))


@shm.write_to_shared_memory.register(ObservationText)
def _write(space: ObservationText, index: int, values: str, shared_memory: tuple[Any, Any]) -> None:
    raw = values.encode("ascii")
    if len(raw) > space.max_length:
        raise ValueError(f"Observation of {len(raw)} characters exceeds the space's {space.max_length}.")
    size = space.max_length
    np.frombuffer(shared_memory[0].get_obj(), dtype=np.int64)[index] = len(raw)
    data = np.frombuffer(shared_memory[1].get_obj(), dtype=np.uint8)
    data[index * size : index * size + len(raw)] = np.frombuffer(raw, dtype=np.uint8)
