"""Operators that used to exist only in Python are usable from lab specs (and bad entries are refused)."""

from __future__ import annotations

import numpy as np
import pytest

from discoverylab.labs.core.errors import InvalidSpec
from discoverylab.labs.core.spec import LabSpec
from discoverylab.labs.sequence.lab import SequenceLab

BASE = {"lab": "sequence", "objects": {"length": 12}, "properties": {"gc_content": {"kind": "gc"}}}


def _lab(**extra: object) -> SequenceLab:
    return SequenceLab(LabSpec.model_validate(BASE | extra), seed=0)


def test_named_operators_and_schedule_dynamics() -> None:
    lab = _lab(operators={"drift": {"kind": "gc_biased_mutation", "mutations": 3, "bias": 1.0},
                          "pull": {"kind": "palindrome_pull"}},
               dynamics={"kind": "schedule", "mode": "alternate", "ops": ["drift", "pull"]})
    path = lab.evolve("A" * 12, 6)
    assert len(path) == 7 and all(len(s) == 12 for s in path)
    gc = lab.measure(path, ["gc_content"])["gc_content"]
    assert gc[-1] > gc[0]  # a GC bias of 1.0 only writes G or C


def test_majority_update_dynamics_takes_its_fields() -> None:
    lab = _lab(dynamics={"kind": "majority_update", "radius": 2})
    assert lab.evolve("ACGTACGTACGT", 3)[0] == "ACGTACGTACGT"


def test_population_dynamics_merges_then_evolves() -> None:
    lab = _lab(operators={"merge": {"kind": "consensus_merge", "mode": "any"},
                          "sandwich": {"kind": "palindrome_sandwich"}, "drift": {"kind": "gc_biased_mutation"}},
               dynamics={"kind": "population", "compose": "merge", "evolve": "drift"})
    pops = lab.run_population(["A" * 12, "C" * 12, "G" * 12, "T" * 12], 3, np.random.default_rng(0))
    assert len(pops) == 4 and all(len(p) == 4 for p in pops)
    assert lab.operators["sandwich"]("ACG", "TTT", rng=np.random.default_rng(0)) is not None


@pytest.mark.parametrize("extra, message", [
    ({"operators": {"x": {"kind": "gc_biased_mutation", "strength": 2}}}, "no field"),
    ({"operators": {"x": {"kind": "teleport"}}}, "unknown kind"),
    ({"dynamics": {"kind": "schedule", "ops": ["missing"]}}, "unknown operators"),
    ({"dynamics": {"kind": "population", "compose": "x"}, "operators": {"x": {"kind": "palindrome_pull"}}},
     "arity-2"),
    ({"dynamics": {"kind": "warp"}}, "unknown dynamics kind"),
])
def test_bad_operator_entries_are_refused(extra: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidSpec, match=message):
        _lab(**extra)
