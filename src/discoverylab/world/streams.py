"""Random streams of a world that do not keep their seed (`opaque_rng`): a sealed test
instance's seed must not be readable from the world an agent plays in."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from numpy.random.bit_generator import ISpawnableSeedSequence


class _SpentWords(ISpawnableSeedSequence):
    """The four words a `PCG64` draws from its seed sequence at construction, handed over once
    and then forgotten: the generator keeps this as its `seed_seq`, which holds nothing.
    It stands in for the blank `SeedSequence(0)` such generators kept before: `entropy` 0,
    and `spawn` spawns from one (as `Generator.spawn` on a world stream always did)."""

    __slots__ = ("_words", "_blank")
    entropy = 0

    def __init__(self, words: np.ndarray) -> None:
        self._words: np.ndarray | None = words
        self._blank: np.random.SeedSequence | None = None

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> np.ndarray:
        words, self._words = self._words, None
        if words is None or n_words != len(words) or np.dtype(dtype) != words.dtype:
            raise ValueError("An opaque stream's seed words are spent (or were asked for in another shape).")
        return words

    def spawn(self, n_children: int) -> list[np.random.SeedSequence]:  # type: ignore[override]
        if self._blank is None:
            self._blank = np.random.SeedSequence(0)
        return self._blank.spawn(n_children)


def opaque_rng(seq: np.random.SeedSequence) -> np.random.Generator:
    """A generator on `seq`'s stream that does not keep `seq` (whose entropy is the seed): the
    same state as `Generator(PCG64(seq))`, in a third of the time of copying one's state into
    a blank generator (six streams per reset)."""
    return np.random.Generator(np.random.PCG64(cast(Any, _SpentWords(seq.generate_state(4, np.uint64)))))
