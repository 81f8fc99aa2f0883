"""The UUID pool of a world: 1..65535 in an order drawn per episode from its own stream, so a
uuid tells nothing about when (or as what) an object was created (the original numbered
objects in creation order).

The order is the first occurrences of uniform draws from 1..65535, taken in blocks of `BLOCK`
draws (a generator's draws depend on how many are asked for at once, so the block is fixed);
once `TAIL` values are left, they follow in an order drawn by one permutation (no coupon
collecting for the last ones). Sampling without replacement is as unpredictable as a full
permutation, which cost ~1 ms per reset for the ~1,000-2,000 UUIDs an episode uses; the first
block costs ~0.1 ms (session 10; it changed every UUID of every seed)."""

from __future__ import annotations

import numpy as np
from mypy_extensions import mypyc_attr

UUID_LIMIT = 65535
BLOCK = 2048
TAIL = 4096
CHUNK = 256  # the fewest drawn values `extend` turns into Python ints at a time


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
class UuidPool:
    """The drawn part of one world's order (`drawn`, a list `World` indexes directly); `extend`
    draws more when a world needs them. A block's values become Python ints (`drawn`) only as
    they are needed, `CHUNK` or more at a time (`_pending` holds the rest, in order): a
    unit-test reset uses ~1,200 of its first block's ~2,020, and each int cost ~170
    instructions to make."""

    __slots__ = ("_rng", "_seen", "_pending", "drawn")

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng: np.random.Generator | None = rng
        self._seen: np.ndarray | None = None  # from the second block on: the values already drawn
        self._pending: np.ndarray | None = None  # the last block's values not yet in `drawn`
        self.drawn: list[int] = []

    def extend(self, needed: int) -> None:
        """Draw until `drawn` holds `needed` UUIDs (or all of them); `drawn` grows in place."""
        drawn, rng = self.drawn, self._rng
        if rng is None:
            raise ValueError("This UUID pool was closed: its world was disposed.")
        while len(drawn) < min(needed, UUID_LIMIT):
            pending = self._pending
            if pending is not None:  # the drawn block first: a new one only once it is used up
                count = max(needed - len(drawn), CHUNK)
                drawn += pending[:count].tolist()
                self._pending = pending[count:] if count < len(pending) else None
                continue
            if UUID_LIMIT - len(drawn) <= TAIL:
                seen = self._seen_values()
                rest = np.flatnonzero(~seen[1:]) + 1
                drawn += rng.permutation(rest).tolist()
                seen[rest] = True
                break
            draws = rng.integers(1, UUID_LIMIT + 1, BLOCK, dtype=np.uint16)
            order = np.argsort(draws, kind="stable")  # equal values in draw order: the first leads
            ranked = draws[order]
            first = np.empty(BLOCK, dtype=bool)
            first[0] = True
            np.not_equal(ranked[1:], ranked[:-1], out=first[1:])
            kept = np.zeros(BLOCK, dtype=bool)  # each value's first draw, read in draw order: no
            kept[order[first]] = True  # sort of their positions (~0.1M instructions per reset)
            fresh = draws[kept]
            if drawn:  # values an earlier block drew are not new
                seen = self._seen_values()
                fresh = fresh[~seen[fresh]]
                seen[fresh] = True
            self._pending = fresh if len(fresh) else None

    def _seen_values(self) -> np.ndarray:
        seen = self._seen
        if seen is None:
            seen = self._seen = np.zeros(UUID_LIMIT + 1, dtype=bool)
            seen[np.array(self.drawn, dtype=np.int64)] = True
        return seen

    def close(self) -> None:
        """Forget the stream and the drawn values (a disposed world hands out no more)."""
        self._rng, self._seen, self._pending = None, None, None
        self.drawn.clear()
