"""One seed per episode, split into named, independent ``numpy.random.Generator`` streams (spec §1.1).

A stream is derived from (seed, name) alone, so adding a new stream never changes what the others
draw, and an agent's queries (sampler stream) never change what the grader draws (grader stream).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

import numpy as np

DEFAULT_STREAMS: tuple[str, ...] = ("lab", "sampler", "dynamics", "grader")


def stream(seed: int, name: str) -> np.random.Generator:
    """The generator for stream ``name`` of episode ``seed``."""
    if seed < 0:
        raise ValueError(f"seeds must be >= 0, got {seed}")
    return np.random.default_rng(np.random.SeedSequence(entropy=seed, spawn_key=(zlib.crc32(name.encode()),)))


class SeedStreams:
    """Named generators of one episode: ``streams.sampler``, ``streams["grader"]``, ..."""

    def __init__(self, seed: int, names: Iterable[str] = DEFAULT_STREAMS) -> None:
        self.seed = seed
        self._streams = {name: stream(seed, name) for name in names}

    def __getitem__(self, name: str) -> np.random.Generator:
        if name not in self._streams:
            self._streams[name] = stream(self.seed, name)
        return self._streams[name]

    def __getattr__(self, name: str) -> np.random.Generator:
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]
