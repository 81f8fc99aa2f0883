"""verify() on the built-in labs, on generated labs and on deliberately broken ones (spec §1.6)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from discoverylab.labs.core.generator import (
    COMPLEXITY,
    generate_specs,
    generate_suite,
    read_suite,
    write_suite,
)
from discoverylab.labs.core.lab import LAB_KINDS, build_lab
from discoverylab.labs.core.spec import LabSpec, kind_spec
from discoverylab.labs.core.verify import PROTOCOL_CHECKS, QUICK, register_protocol_check, verify
from discoverylab.labs.sequence.lab import PRESETS, SequenceLab, preset


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_builtin_labs_pass(name: str) -> None:
    report = verify(preset(name))
    assert report.passed, report.to_dict()
    names = {c.name: c.passed for c in report.checks}
    assert names["i_unit_interval"] and names["ii_feasible_ranges"] and names["iii_sampler_hits"]
    if preset(name).dynamics is not None:
        assert names["v_dynamics"] is True
    assert names["vi_protocol"] is True  # the sequence protocols register their oracle/random check


def test_blended_attractors_fail_check_v() -> None:
    spec = preset("default")
    # A very wide kernel blends both attractors into one target half-way: no cycle sits at either.
    spec.dynamics = kind_spec("directed_evolution", drivers=["gc_content", "palindrome_score"],
                              attractors=[[0.8, 0.8], [0.4, 0.2]], basin={"kind": "gaussian", "sigma": 5.0})
    report = verify(spec, budget=QUICK, protocol_check=False)
    assert not report.passed and [c.name for c in report.failures] == ["v_dynamics"]


def test_broken_spec_fails_at_build() -> None:
    report = verify(LabSpec(properties={"x": kind_spec("mix", of=["missing"])}), budget=QUICK,
                    protocol_check=False)
    assert not report.passed and report.failures[0].name == "build"


def test_property_leaving_the_unit_interval_is_caught() -> None:
    class LeakyLab(SequenceLab):
        def __init__(self, spec: LabSpec, seed: int | None = None) -> None:
            super().__init__(spec, seed)
            gc = self.properties["gc_content"]
            gc.batch = lambda x: 2.0 * ((x == 1) | (x == 2)).mean(axis=1)  # type: ignore[method-assign]

    LAB_KINDS.register("leaky", LeakyLab)
    spec = preset("hidden_property").model_copy(update={"lab": "leaky"})
    report = verify(spec, budget=QUICK, protocol_check=False)
    assert {c.name for c in report.failures} >= {"i_unit_interval", "ii_feasible_ranges"}


def test_protocol_check_hook_separates_oracle_and_random() -> None:
    spec = preset("hidden_property")
    spec.protocol = kind_spec("test/fake-protocol")
    register_protocol_check("test/fake-protocol", lambda s: (1.0, 0.2), overwrite=True)
    assert verify(spec, budget=QUICK).passed
    register_protocol_check("test/fake-protocol", lambda s: (1.0, 0.95), overwrite=True)  # cannot separate
    report = verify(spec, budget=QUICK)
    assert [c.name for c in report.failures] == ["vi_protocol"]
    assert "test/fake-protocol" in PROTOCOL_CHECKS


def test_generated_labs_verify_and_round_trip(tmp_path: Path) -> None:
    suite = generate_suite(5, "medium", seed=3)
    specs = [spec for spec, _ in suite]
    assert len({s.name for s in specs}) == 5
    assert all({c.name: c.passed for c in report.checks}["vi_protocol"] is True for _, report in suite)
    for spec in specs:
        lab = build_lab(spec)
        assert lab.measure_batch(lab.space.random_batch(np.random.default_rng(0), 3))
    for name in ("suite.jsonl", "suite.json", "suite.yaml"):  # each suffix reads back (.json once wrote JSONL)
        write_suite(tmp_path / name, specs)
        assert read_suite(tmp_path / name) == specs
    assert generate_specs(2, "medium", seed=3) == specs[:2]  # deterministic


DYNAMICS_ONLY = replace(COMPLEXITY["medium"], name="medium-dynamics", p_dynamics=1.0)
PAPER_DRIVERS = {"gc_content", "palindrome_score"}


def test_generated_dynamics_labs_with_other_drivers_pass_verify_with_the_protocol_check() -> None:
    suite = generate_suite(4, DYNAMICS_ONLY, seed=5, max_attempts=12)
    other = [(spec, report) for spec, report in suite
             if spec.dynamics is not None and set(spec.dynamics.fields["drivers"]) != PAPER_DRIVERS]
    assert len(other) >= 2
    for spec, report in other:
        check = {c.name: c for c in report.checks}["vi_protocol"]
        assert check.passed is True, (spec.name, check.detail)
        assert check.data["oracle"] >= 0.99 and check.data["random"] <= QUICK.random_max


@pytest.mark.slow
@pytest.mark.parametrize("complexity", sorted(COMPLEXITY))
def test_fifty_generated_labs_per_complexity(complexity: str) -> None:
    suite = generate_suite(50, complexity, seed=11, max_attempts=200)
    assert len(suite) == 50 and all(report.passed for _, report in suite)
    assert any(spec.dynamics is not None for spec, _ in suite)


def test_verify_rejects_broken_labs_with_a_reason() -> None:
    """A constant hidden property, dynamics the protocol would replace, and fields it would drop."""
    from discoverylab.labs.core.spec import ObjectsSpec

    constant = LabSpec(name="constant", objects=ObjectsSpec(length=10),
                       properties={"g": kind_spec("gc"), "h": kind_spec("threshold", of=["g"], t=0.99)},
                       protocol=kind_spec("sequence/hidden-property", hidden="h"))
    report = verify(constant, budget=QUICK)
    assert not report.passed and any("one value" in c.detail for c in report.failures)
    # ... and verify does not then spend the sampler's budget on learning a constant (it took ~20 s)
    assert {c.name: c.passed for c in report.checks}["viii_learnable"] is None

    base = preset("default")
    assert base.dynamics is not None
    majority = base.model_copy(update={"dynamics": kind_spec("majority_update")})
    report = verify(majority, budget=QUICK)
    assert not report.passed and any("not 'majority_update'" in c.detail for c in report.failures)

    dropped = base.model_copy(update={"dynamics": kind_spec(**base.dynamics.model_dump(), beta=3.0)})
    report = verify(dropped, budget=QUICK)
    assert not report.passed and any("'beta'" in c.detail for c in report.failures)


def test_degenerate_values_and_empty_sampler_check() -> None:
    from discoverylab.labs.core.verify import degenerate

    rng = np.random.default_rng(0)
    assert degenerate(np.zeros(100)) is not None
    assert degenerate(np.r_[np.zeros(96), rng.random(4)]) is not None  # one value on 96%
    assert degenerate(rng.random(100)) is None


# ---------------------------------------------------------------------- learnability (issue #22)
def test_hash_noise_lab_is_rejected_as_unlearnable() -> None:
    """A deterministic hash of the sequence: the oracle 'knows' it, no experiment can learn it."""
    from hash_noise_lab import hash_noise_spec

    report = verify(hash_noise_spec("hash_noise"), budget=QUICK)
    failed = {c.name for c in report.failures}
    assert not report.passed and "viii_learnable" in failed and "ix_cross_process" not in failed


def test_salted_hash_lab_differs_between_processes() -> None:
    from hash_noise_lab import hash_noise_spec

    report = verify(hash_noise_spec("salted_hash_noise"), budget=QUICK)
    assert {"viii_learnable", "ix_cross_process"} <= {c.name for c in report.failures}


def test_learnable_presets_pass_learnability_and_cross_process() -> None:
    report = verify(preset("masked_alternation"), budget=QUICK, protocol_check=False)
    checks = {c.name: c.passed for c in report.checks}
    assert checks["viii_learnable"] is True and checks["ix_cross_process"] is True


def test_cli_verify_rejects_the_hash_noise_lab(tmp_path: Path) -> None:
    from hash_noise_lab import hash_noise_spec
    from typer.testing import CliRunner

    from discoverylab.labs.cli import lab_app

    path = tmp_path / "noise.json"
    path.write_text(hash_noise_spec().model_dump_json(), encoding="utf-8")
    result = CliRunner().invoke(lab_app, ["verify", str(path), "--quick", "--import", "hash_noise_lab"])
    assert result.exit_code == 1 and "viii_learnable" in result.output and "FAIL" in result.output
    good = tmp_path / "good.json"
    good.write_text(preset("hidden_property").model_dump_json(), encoding="utf-8")
    assert CliRunner().invoke(lab_app, ["verify", str(good), "--quick"]).exit_code == 0
