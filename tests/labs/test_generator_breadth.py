"""Generator breadth (issue #22): regime switching as a composition operator, verified generated labs."""

from __future__ import annotations

import numpy as np
import pytest

from discoverylab.labs.core.generator import generate_suite
from discoverylab.labs.core.lab import build_lab
from discoverylab.labs.core.spec import LabSpec, ObjectsSpec, kind_spec
from discoverylab.labs.core.verify import QUICK, verify


def switch_spec() -> LabSpec:
    return LabSpec(lab="sequence", name="switch", objects=ObjectsSpec(length=10),
                   properties={"g": kind_spec("gc"), "a": kind_spec("alternation", k=1),
                               "p": kind_spec("palindromicity"),
                               "hidden": kind_spec("switch", of=["p", "g", "a"], t=0.5)},
                   protocol=kind_spec("sequence/hidden-property", hidden="hidden", rounds=5, batch=10))


def test_switch_takes_one_regime_where_the_guard_is_high_and_the_other_below() -> None:
    spec = switch_spec()
    spec.properties["hidden"] = kind_spec("switch", of=["p", "g", "a"], t=0.2)
    lab = build_lab(spec, 0)
    x = lab.space.random_batch(np.random.default_rng(1), 300)
    props = lab.properties
    guard = props["p"].batch(x) >= 0.2
    values = props["hidden"].batch(x)
    assert guard.any() and (~guard).any()
    assert np.array_equal(values[guard], props["g"].batch(x)[guard])
    assert np.array_equal(values[~guard], props["a"].batch(x)[~guard])


def test_switch_needs_three_parts() -> None:
    spec = switch_spec()
    spec.properties["hidden"] = kind_spec("switch", of=["g", "a"], t=0.5)
    report = verify(spec, budget=QUICK, protocol_check=False)
    assert report.failures[0].name == "build" and "3 parts" in report.failures[0].detail


def test_a_regime_switching_lab_passes_verify() -> None:
    report = verify(switch_spec(), budget=QUICK)
    assert report.passed, report.to_dict()


@pytest.mark.slow
def test_generator_draws_verified_regime_switching_labs() -> None:
    kept = generate_suite(6, "hard", 3)
    kinds = [spec.properties["hidden"].kind for spec, _ in kept if "hidden" in spec.properties]
    assert "switch" in kinds and all(report.passed for _, report in kept)
