"""Unlearnable sequence properties for verify's tests (issue #22): deterministic hash noise, and the
same with Python's salted `hash()`, which also differs between processes. Importing this module
registers the spec kinds `hash_noise` and `salted_hash_noise`."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from discoverylab.labs.core.properties import Property
from discoverylab.labs.core.spaces import ObjectSpace
from discoverylab.labs.core.spec import LabSpec, kind_spec
from discoverylab.labs.sequence.kinds import PROPERTY_KINDS
from discoverylab.labs.sequence.properties import PropertyParams


class HashNoise(Property):
    """f(s) = a hash of s, scaled to [0, 1]: a fixed function no experiment can learn."""

    def __init__(self, name: str, salted: bool) -> None:
        self.name, self.salted, self.description = name, salted, "hash noise"

    def batch(self, batch: np.ndarray) -> np.ndarray:
        def one(row: np.ndarray) -> float:
            data = row.tobytes()
            if self.salted:
                return (hash(data) % 1000) / 999.0
            return int.from_bytes(hashlib.sha256(data).digest()[:4], "big") / 2**32

        return np.array([one(r) for r in batch], dtype=np.float64)

    def feasible_range(self, space: ObjectSpace) -> tuple[float, float]:
        return 0.0, 1.0


def _factory(salted: bool) -> Any:
    def make(name: str, fields: Mapping[str, Any], base: PropertyParams) -> Property:
        return HashNoise(name, salted)

    return make


PROPERTY_KINDS.register("hash_noise", _factory(False), overwrite=True)
PROPERTY_KINDS.register("salted_hash_noise", _factory(True), overwrite=True)


def hash_noise_spec(kind: str = "hash_noise") -> LabSpec:
    return LabSpec(lab="sequence", name=f"{kind}_lab", properties={"gc_content": kind_spec("gc"),
                                                                     "noise": kind_spec(kind)},
                   protocol=kind_spec("sequence/hidden-property", hidden="noise", rounds=5, batch=10))
