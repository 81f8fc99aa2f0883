"""Gymnasium spaces of the DiscoveryWorld env: text observations that travel through the
async vector env's shared memory, and a text action space that holds dict actions too.

Gymnasium's shared memory stores a `Text` as one int32 per possible character and decodes it
character by character: with room for long observations that is megabytes per step, and it
and gymnasium decodes the memory once, at construction, so every later observation was the
padding. `ObservationText` stores a length and ASCII bytes, and reading the memory gives a
live view that decodes the current texts when copied (`AsyncVectorEnv` deep-copies its
observations by default): `shared_memory=True` (the default) works and reads only what was
written.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import string
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any, overload

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


def _numpy_value(value: Any) -> Any:
    """`json.dumps`'s fallback in `ActionText.contains`: numpy scalars and small arrays as the env
    reads them (`action_input._plain`), so a policy's `np.int64` UUID is in the space as it is
    accepted by `step`; anything else is not JSON."""
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.size <= 64):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON")


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
                text = json.dumps(dict(x), separators=(",", ":"), ensure_ascii=True, default=_numpy_value)
            except (TypeError, ValueError, RecursionError):  # RecursionError: values nested thousands deep
                return False
            return super().contains(text)
        return super().contains(x)

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        return ARGLESS_ACTIONS[int(self.np_random.integers(len(ARGLESS_ACTIONS)))]


@shm.create_shared_memory.register(ObservationText)
def _create(space: ObservationText, n: int = 1, ctx: ModuleType = mp) -> tuple[Any, Any]:
    return ctx.Array("q", n), ctx.Array("B", n * space.max_length)  # type: ignore[attr-defined]


class SharedTexts(Sequence[str]):
    """The texts in shared memory, decoded on access; a copy is a plain tuple (a snapshot)."""

    def __init__(self, lengths: np.ndarray, data: np.ndarray, size: int) -> None:
        self._lengths, self._data, self._size = lengths, data, size

    def __len__(self) -> int:
        return len(self._lengths)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[str, ...]: ...
    def __getitem__(self, i: int | slice) -> str | tuple[str, ...]:
        if isinstance(i, slice):
            return self.snapshot()[i]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        i %= len(self)
        start = i * self._size
        return self._data[start : start + int(self._lengths[i])].tobytes().decode("ascii")

    def snapshot(self) -> tuple[str, ...]:
        return tuple(self[i] for i in range(len(self)))

    def __copy__(self) -> tuple[str, ...]:
        return self.snapshot()

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return self.snapshot()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (tuple, list, SharedTexts)) and self.snapshot() == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SharedTexts({self.snapshot()!r})"


@shm.read_from_shared_memory.register(ObservationText)
def _read(space: ObservationText, shared_memory: tuple[Any, Any], n: int = 1) -> SharedTexts:
    lengths = np.frombuffer(shared_memory[0].get_obj(), dtype=np.int64)
    data = np.frombuffer(shared_memory[1].get_obj(), dtype=np.uint8)
    return SharedTexts(lengths[:n], data, space.max_length)


@shm.write_to_shared_memory.register(ObservationText)
def _write(space: ObservationText, index: int, values: str, shared_memory: tuple[Any, Any]) -> None:
    raw = values.encode("ascii")
    if len(raw) > space.max_length:
        raise ValueError(f"Observation of {len(raw)} characters exceeds the space's {space.max_length}.")
    size = space.max_length
    np.frombuffer(shared_memory[0].get_obj(), dtype=np.int64)[index] = len(raw)
    data = np.frombuffer(shared_memory[1].get_obj(), dtype=np.uint8)
    data[index * size : index * size + len(raw)] = np.frombuffer(raw, dtype=np.uint8)
