"""Object spaces (spec §1.1): what a lab's objects are, how to draw them and how to move locally.

The framework is array-first: a *batch* of objects is a numpy array whose first axis indexes
objects, so properties, samplers and dynamics can work on many objects per numpy call. A space
converts between agent-facing objects (e.g. strings) and batches.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from discoverylab.labs.core.errors import InvalidObject


class ObjectSpace(ABC):
    """A set S of objects with random draws, local moves and a metric."""

    @abstractmethod
    def random_batch(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` independent uniform draws, as a batch."""

    @abstractmethod
    def mutate_batch(self, batch: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One random local move applied to every object of the batch (returns a new array)."""

    @abstractmethod
    def encode(self, objs: Sequence[Any]) -> np.ndarray:
        """Objects to a batch; raises ``InvalidObject`` for a non-member."""

    @abstractmethod
    def decode(self, batch: np.ndarray) -> list[Any]:
        """A batch back to objects."""

    @abstractmethod
    def distance(self, a: Any, b: Any) -> float:
        """Metric between two objects."""

    @abstractmethod
    def neighbors(self, obj: Any) -> Iterator[Any]:
        """Every object one local move away."""

    def random(self, rng: np.random.Generator) -> Any:
        """One uniform draw."""
        return self.decode(self.random_batch(rng, 1))[0]

    def validate(self, obj: Any) -> Any:
        """Return ``obj`` if it belongs to the space, else raise ``InvalidObject``."""
        self.encode([obj])
        return obj

    def signature(self) -> tuple[Any, ...]:
        """Hashable description, used to cache per-space facts such as estimated ranges."""
        return (type(self).__name__,)


class StringSpace(ObjectSpace):
    """Fixed-length strings over an alphabet; local move = one substitution; metric = Hamming.

    Batches hold letter codes (index into ``alphabet``) as ``uint8`` arrays of shape ``(n, length)``.
    """

    def __init__(self, alphabet: str, length: int) -> None:
        if len(set(alphabet)) != len(alphabet) or len(alphabet) < 2:
            raise InvalidObject(f"alphabet {alphabet!r} needs at least 2 distinct letters")
        if length < 1:
            raise InvalidObject(f"length must be >= 1, got {length}")
        self.alphabet = alphabet
        self.length = length
        self._lut = np.full(256, 255, dtype=np.uint8)
        for code, char in enumerate(alphabet):
            self._lut[ord(char)] = code
        self._chars = np.frombuffer(alphabet.encode("ascii"), dtype=np.uint8)

    def random_batch(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.integers(0, len(self.alphabet), size=(n, self.length), dtype=np.uint8)

    def mutate_batch(self, batch: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        out = batch.copy()
        q = len(self.alphabet)
        # One draw gives the position and a shift 1..q-1; adding the shift modulo q changes the
        # letter, uniformly among the other q-1.
        draw = rng.integers(0, self.length * (q - 1), size=batch.shape[0])
        rows, pos = np.arange(batch.shape[0]), draw // (q - 1)
        out[rows, pos] = (out[rows, pos] + draw % (q - 1) + 1) % q
        return out

    def encode(self, objs: Sequence[Any]) -> np.ndarray:
        if isinstance(objs, str):
            objs = [objs]
        for obj in objs:
            if not isinstance(obj, str) or len(obj) != self.length:
                raise InvalidObject(f"expected a string of exactly {self.length} letters from {self.alphabet}, got {obj!r}")
        if not objs:
            return np.zeros((0, self.length), dtype=np.uint8)
        try:
            raw = np.frombuffer("".join(objs).encode("ascii"), dtype=np.uint8)
        except UnicodeEncodeError as exc:
            raise InvalidObject(f"objects may only use the letters {self.alphabet}") from exc
        codes = self._lut[raw].reshape(len(objs), self.length)
        if (codes == 255).any():
            bad = objs[int(np.flatnonzero((codes == 255).any(axis=1))[0])]
            raise InvalidObject(f"{bad!r} uses letters outside {self.alphabet}")
        return codes

    def decode(self, batch: np.ndarray) -> list[Any]:
        return [row.tobytes().decode("ascii") for row in self._chars[np.atleast_2d(batch)]]

    def distance(self, a: Any, b: Any) -> float:
        return float(sum(x != y for x, y in zip(a, b, strict=True)))

    def neighbors(self, obj: Any) -> Iterator[Any]:
        for i, current in enumerate(obj):
            for letter in self.alphabet:
                if letter != current:
                    yield obj[:i] + letter + obj[i + 1 :]

    def signature(self) -> tuple[Any, ...]:
        return ("StringSpace", self.alphabet, self.length)
