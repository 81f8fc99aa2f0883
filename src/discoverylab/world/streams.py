"""Random streams of a world that do not keep their seed (`opaque_rng`): a sealed test
instance's seed must not be readable from the world an agent plays in."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from mypy_extensions import mypyc_attr
from numpy.random.bit_generator import ISpawnableSeedSequence


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
class _SpentWords(ISpawnableSeedSequence):
    """The four words a `PCG64` draws from its seed sequence at construction, handed over once
    and then forgotten: the generator keeps this as its `seed_seq`, which holds nothing.
    Its `entropy` is 0; `spawn` spawns from a sequence keyed by the words (hashed from the seed,
    not the seed), so a world stream's children belong to its instance. (Session 8's blank
    `SeedSequence(0)` gave every instance the same children: Proteomics' clusters were the same
    in every instance, and remembering one outlier's values named the answer.)"""

    __slots__ = ("_words", "_children")
    entropy = 0

    def __init__(self, words: np.ndarray) -> None:
        self._words: np.ndarray | None = words
        self._children: np.random.SeedSequence | np.ndarray = words.copy()

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> np.ndarray:
        words, self._words = self._words, None
        if words is None or n_words != len(words) or np.dtype(dtype) != words.dtype:
            raise ValueError("An opaque stream's seed words are spent (or were asked for in another shape).")
        return words

    def spawn(self, n_children: int) -> list[np.random.SeedSequence]:  # type: ignore[override]
        if isinstance(self._children, np.ndarray):  # made on first use: most streams never spawn
            self._children = np.random.SeedSequence([int(w) for w in self._children])
        return self._children.spawn(n_children)


def opaque_rng(seq: np.random.SeedSequence) -> np.random.Generator:
    """A generator on `seq`'s stream that does not keep `seq` (whose entropy is the seed): the
    same state as `Generator(PCG64(seq))`, in a third of the time of copying one's state into
    a blank generator (six streams per reset)."""
    return np.random.Generator(np.random.PCG64(cast(Any, _SpentWords(seq.generate_state(4, np.uint64)))))

