"""Random streams of a world that do not keep their seed (`opaque_rng`): a sealed test
instance's seed must not be readable from the world an agent plays in."""

from __future__ import annotations

from types import FunctionType
from typing import Any, Final, cast

import numpy as np
from mypy_extensions import mypyc_attr
from numpy.random.bit_generator import ISpawnableSeedSequence

from discoverylab.world.unpickle import FastState

_TWO_TO_MINUS_53 = 1.0 / 9007199254740992.0


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



# `np.random.SeedSequence`'s hash constants (numpy/random/bit_generator.pyx), for `seed_words`.
_MASK32: Final = 0xFFFFFFFF
_INIT_A: Final = 0x43B0D7E5
_MULT_A: Final = 0x931E8875
_INIT_B: Final = 0x8B51F9DD
_MULT_B: Final = 0x58F38DED
_MIX_L: Final = 0xCA01F9DD
_MIX_R: Final = 0x4973F715
_POOL: Final = 4


def _mul32(a: int, b: int) -> int:
    """`(a * b) mod 2**32` for 32-bit `a`, `b`, from products of 16-bit halves: compiled, mypyc
    multiplies in C only factors below 2**30 (a 32-bit factor took its long-int path, ~1,400
    instructions a call)."""
    a_low, b_low = a & 0xFFFF, b & 0xFFFF
    return (a_low * b_low + ((((a >> 16) * b_low + a_low * (b >> 16)) & 0xFFFF) << 16)) & _MASK32


def _uint32_words(n: int) -> list[int]:
    """`_int_to_uint32_array(n)`: a non-negative int's 32-bit words, lowest first ([0] for 0)."""
    if n < 0:
        raise ValueError("expected non-negative integer")
    words = [0] if n == 0 else []
    while n > 0:
        words.append(n & _MASK32)
        n >>= 32
    return words


def _mix_into(mixer: list[int], i_dst: int, word: int, hash_a: int) -> int:
    """`mix(mixer[i_dst], hashmix(word))` into `mixer[i_dst]`; the hash constant after it."""
    value = _mul32(word ^ hash_a, hash_a := _mul32(hash_a, _MULT_A))
    mixed = (_mul32(_MIX_L, mixer[i_dst]) - _mul32(_MIX_R, value ^ (value >> 16))) & _MASK32
    mixer[i_dst] = mixed ^ (mixed >> 16)
    return hash_a


def seed_words(entropy: int | list[int], spawn_key: tuple[int, ...] = ()) -> np.ndarray:
    """`SeedSequence(entropy, spawn_key=spawn_key).generate_state(4, np.uint64)` for int entropy
    (or a list of ints) and int keys, worked out here: the same 32-bit hashing and mixing of a
    pool of 4 words, without the sequence's numpy calls (its construction and `generate_state`
    cost ~75k instructions per stream, two streams per reset). `tests/test_speed_paths.py`
    compares it with numpy over many seeds and keys."""
    run: list[int] = []
    for value in [entropy] if isinstance(entropy, int) else entropy:
        run += _uint32_words(value)
    keys: list[int] = []
    for key in spawn_key:
        keys += _uint32_words(key)
    if keys and len(run) < _POOL:
        run += [0] * (_POOL - len(run))
    words = run + keys
    mixer = [0] * _POOL
    hash_a = _INIT_A
    for i in range(_POOL):  # `mix_entropy`, its `hashmix` and `mix` inline
        value = _mul32((words[i] if i < len(words) else 0) ^ hash_a, hash_a := _mul32(hash_a, _MULT_A))
        mixer[i] = value ^ (value >> 16)
    for i_src in range(_POOL):
        for i_dst in range(_POOL):
            if i_src != i_dst:
                hash_a = _mix_into(mixer, i_dst, mixer[i_src], hash_a)
    for i_src in range(_POOL, len(words)):
        for i_dst in range(_POOL):
            hash_a = _mix_into(mixer, i_dst, words[i_src], hash_a)
    state: list[int] = []
    hash_b = _INIT_B
    for i in range(2 * _POOL):  # `generate_state(4, np.uint64)`: 8 words, each pair low word first
        value = _mul32(mixer[i % _POOL] ^ hash_b, hash_b := _mul32(hash_b, _MULT_B))
        state.append(value ^ (value >> 16))
    return np.array([state[i] | (state[i + 1] << 32) for i in range(0, 2 * _POOL, 2)], dtype=np.uint64)


def seeded_rng(entropy: int | list[int], spawn_key: tuple[int, ...] = ()) -> np.random.Generator:
    """`opaque_rng(np.random.SeedSequence(entropy, spawn_key=spawn_key))`; compiled, without the
    sequence (`seed_words`: ~10k instructions instead of ~75k). Interpreted, `seed_words` costs
    four times the sequence: the pure engine keeps it."""
    if not COMPILED:
        return opaque_rng(np.random.SeedSequence(entropy, spawn_key=spawn_key))
    return np.random.Generator(np.random.PCG64(cast(Any, _SpentWords(seed_words(entropy, spawn_key)))))


COMPILED: Final = not isinstance(_mul32, FunctionType)
"""Whether this module runs compiled (`discoverylab.native`): `seeded_rng` then hashes the words itself."""


_BLOCK = 64  # raw words drawn at a time for the NPC stream (`NpcDraws`)
_LOW = 0xFFFFFFFF


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
class NpcDraws(FastState):
    """The NPC stream (`World.rng_npc`, a PCG64 generator) read by the characters through a
    block of raw 64-bit words drawn ahead (`random_raw(64)`), each read as the generator's own
    call would read it: `quarter` as `integers(0, 4)` (the top two bits of `next_uint32`, which
    keeps a word's upper half for the next call: `has_half`/`half` are that state), `unit` as
    `random()`. One numpy call per 64 words instead of one per draw (a draw through ctypes or
    `random_raw()` cost ~2.5-3.4k instructions compiled; ten animals wander in Proteomics).
    Every other reader takes the generator from `World.rng_npc`, which first gives back the
    words not yet read (`settled`): it sees the stream exactly where the draws left it. The
    block is state like any other: it travels with pickles and copies of the world."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.words: list[int] = []  # the block drawn ahead; `used` of them read
        self.used = 0
        self.has_half = False  # `next_uint32`'s kept upper half (`has_uint32`, `uinteger`)
        self.half = 0
        self.adopt = False  # the generator was handed out: read its kept half before the next block

    def word(self) -> int:
        """The stream's next raw word (`random_raw()`)."""
        used = self.used
        words = self.words
        if used >= len(words):
            words = self._fill()
            used = 0
        self.used = used + 1
        return words[used]

    def _fill(self) -> list[int]:
        if self.adopt:  # (a fresh generator keeps no half: nothing to read)
            self._adopt()
        words = self.words = self.rng.bit_generator.random_raw(_BLOCK).tolist()
        self.used = 0
        return words

    def _adopt(self) -> None:
        """Take over the kept half of a generator that was handed out (`settled`)."""
        state = self.rng.bit_generator.state
        self.has_half, self.half, self.adopt = bool(state["has_uint32"]), int(state["uinteger"]), False

    def quarter(self) -> int:
        """`int(rng.integers(0, 4))`: Lemire's method on a range of 4 keeps the top two bits of
        one `next_uint32` and never rejects."""
        if self.adopt:
            self._adopt()
        if self.has_half:
            self.has_half = False
            return self.half >> 30
        word = self.word()
        self.half = word >> 32
        self.has_half = True
        return (word & _LOW) >> 30

    def unit(self) -> float:
        """`rng.random()`: the top 53 bits of one word times 2**-53."""
        return (self.word() >> 11) * _TWO_TO_MINUS_53

    def settled(self) -> np.random.Generator:
        """The generator where the draws left the stream: the words not read given back
        (`advance` backwards, mod 2**128) and `next_uint32`'s kept half put in its state."""
        if not self.adopt:  # (else nothing was drawn since it was last handed out)
            bits: Any = self.rng.bit_generator  # (a PCG64: `advance` is its own)
            unused = len(self.words) - self.used
            if unused:
                bits.advance(-unused)
            state = dict(bits.state)
            state["has_uint32"], state["uinteger"] = int(self.has_half), self.half
            bits.state = state
            self.words, self.used = [], 0
        self.adopt = True
        return self.rng
