"""Instances: which world an episode plays, named by (task, difficulty, split, index).

Public splits map an index to a public seed (anyone can rebuild those worlds: they are for
reproducing the paper, training and development). The `test` split derives each seed from a
secret key the evaluator holds (HMAC-SHA256 of task, difficulty and index), so nothing an agent
can read names or lets it derive the seed; records carry the index and a commitment instead, and
the key holder can later audit (`verify`) and replay any instance.

This module imports nothing from the package: the env, the runner, Tiny Labs, the UI and every
integration take their instances from here, so there is one definition of a split.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KEY_ENV = "DISCOVERYLAB_EVAL_KEY"
SEALED_SPLIT = "test"
SEED_SPLIT = "seed"  # a raw public seed given directly (`--seeds` without `--split`)
SEALED_GRADED = "by the evaluator only: a sealed test instance's grade never reaches the client"

# Public splits: name -> (first seed, number of instances). Sealed seeds are >= 2**32, so they
# can never coincide with a public seed (all < 2**31).
PUBLIC_SPLITS: dict[str, tuple[int, int]] = {
    "paper": (0, 5),  # the paper's seeds 0-4, to reproduce published numbers
    "dev": (5, 995),  # seeds 5-999
    "train": (1000, 2**31 - 1000),  # seeds 1000 and up
}
SPLITS = (*PUBLIC_SPLITS, SEALED_SPLIT)
MIN_KEY_BYTES = 16
_COMMIT_TAG = b"discoverylab-instance-v1"


class InstanceError(ValueError):
    """A bad split, index or key: a usage error with a message meant for the person at the CLI."""


@dataclass(frozen=True)
class Instance:
    """One playable instance. `seed` is excluded from repr and equality so that printing or
    comparing a sealed instance never shows it; only the env that builds the world reads it."""

    task: str
    difficulty: str
    split: str
    index: int
    seed: int = field(repr=False, compare=False)

    @property
    def sealed(self) -> bool:
        return self.split == SEALED_SPLIT

    @property
    def commitment(self) -> str:
        """SHA-256 over the instance's name and seed: published with results, it binds the
        evaluator to the seed it used without revealing it (a 63-bit seed is not brute-forced)."""
        text = f"{self.task}/{self.difficulty}/{self.split}/{self.index}/{self.seed}".encode()
        return hashlib.sha256(_COMMIT_TAG + b"/" + text).hexdigest()

    @property
    def label(self) -> str:
        """A short name for file names and tables: `test#12`, `paper#3`, or `s42` for raw seeds."""
        return f"s{self.seed}" if self.split == SEED_SPLIT else f"{self.split}#{self.index}"

    @property
    def agent_seed(self) -> int:
        """A seed for the agent's own randomness (random moves, the LLM's sampling seed): the
        public seed, or for a sealed instance 31 bits of the commitment, which reveal nothing."""
        return int(self.commitment[:8], 16) >> 1 if self.sealed else self.seed

    def public(self) -> dict[str, Any]:
        """What an agent, a log or a record may carry: the seed only when the split is public."""
        out: dict[str, Any] = {"split": self.split, "index": self.index, "commitment": self.commitment}
        if not self.sealed:
            out["seed"] = self.seed
        return out


def from_seed(task: str, difficulty: str, seed: int) -> Instance:
    """A raw public seed (what `reset(seed=k)` and `--seeds` without a split have always meant)."""
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0 or seed >= 2**32:
        raise InstanceError(f"A public seed is a whole number in 0..{2**32 - 1}, not {seed!r}.")
    return Instance(task, difficulty, SEED_SPLIT, seed, seed)


def make_instance(task: str, difficulty: str, split: str, index: int, key: bytes | str | None = None) -> Instance:
    """The instance `index` of `split`. The test split needs the evaluator's key: bytes as
    `load_key` returns them, or the key file's text (a published key is text)."""
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise InstanceError(f"An instance index is a whole number >= 0, not {index!r}.")
    if split in PUBLIC_SPLITS:
        first, count = PUBLIC_SPLITS[split]
        if index >= count:
            raise InstanceError(f"The {split} split has indices 0..{count - 1} (seeds {first}..{first + count - 1}); "
                                f"{index} is out of range.")
        return Instance(task, difficulty, split, index, first + index)
    if split == SEALED_SPLIT:
        if key is None:
            raise InstanceError("The test split is sealed: it needs the evaluator's key "
                                f"(set {KEY_ENV} or pass --eval-key-file FILE).")
        return Instance(task, difficulty, split, index, sealed_seed(key, task, difficulty, index))
    raise InstanceError(f"Unknown split {split!r}; choose one of {', '.join(SPLITS)}.")


def sealed_seed(key: bytes | str, task: str, difficulty: str, index: int) -> int:
    """The keyed seed of a test instance: 63 bits of HMAC-SHA256, lifted to >= 2**32."""
    if isinstance(key, str):  # the same bytes `load_key` reads from a file holding this text
        key = key.strip().encode()
    if len(key) < MIN_KEY_BYTES:
        raise InstanceError(f"The evaluation key is too short ({len(key)} bytes); use at least {MIN_KEY_BYTES}.")
    digest = hmac.new(key, f"{task}/{difficulty}/{index}".encode(), hashlib.sha256).digest()
    value = int.from_bytes(digest[:8], "big") >> 1  # 63 bits
    return value | (1 << 32) if value < (1 << 32) else value


def load_key(path: str | os.PathLike[str] | None = None) -> bytes | None:
    """The evaluator's key from `path`, else from $DISCOVERYLAB_EVAL_KEY, else None.

    The file's content (stripped of surrounding whitespace) is the key, as bytes."""
    if path is not None:
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise InstanceError(f"Cannot read the evaluation key file {path}: {exc.strerror or exc}.") from None
        key = raw.strip()
        source = f"the key file {path}"
    else:
        text = os.environ.get(KEY_ENV)
        if not text:
            return None
        key = text.strip().encode()
        source = f"${KEY_ENV}"
    if len(key) < MIN_KEY_BYTES:
        raise InstanceError(f"The evaluation key in {source} is too short ({len(key)} bytes); "
                            f"use at least {MIN_KEY_BYTES} (e.g. `openssl rand -hex 32`).")
    return key


def key_id(key: bytes) -> str:
    """A fingerprint of the key (a hash, no use for deriving seeds): stored with a run's config so
    that a resume with another key, whose `test#3` is another world, is refused."""
    return hashlib.sha256(b"discoverylab-key-id/" + key).hexdigest()[:16]


def new_key() -> str:
    """A fresh random key (hex), for an evaluator setting up a test set."""
    return os.urandom(32).hex()


def verify(public: dict[str, Any], task: str, difficulty: str, key: bytes | str) -> bool:
    """Does a record's public instance part match what `key` derives? (The key holder's audit.)"""
    try:
        inst = make_instance(task, difficulty, str(public["split"]), int(public["index"]), key)
    except (KeyError, TypeError, ValueError):
        return False
    return hmac.compare_digest(inst.commitment, str(public.get("commitment", "")))
