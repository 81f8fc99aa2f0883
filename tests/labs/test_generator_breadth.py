"""Generator breadth (issue #22): regime switching as a composition operator, verified generated labs."""

from __future__ import annotations

from pathlib import Path

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


# ---------------------------------------------------------------------- macro labs
def test_macro_specs_pin_one_economy_at_the_presets_complexity() -> None:
    from discoverylab.labs.core.generator import COMPLEXITY
    from discoverylab.labs.macroecon.protocols import MECHANISMS, macro_config, sample_macro_spec

    rng = np.random.default_rng(0)
    specs = [sample_macro_spec(COMPLEXITY["hard"], rng, i) for i in range(4)]
    configs = [macro_config(s) for s in specs]
    assert all(not c.draw_structure for c in configs)  # every seed of a generated lab is the same economy
    assert len({c.structure.config_hash() for c in configs}) == 4
    assert all(s.protocol is not None and s.protocol.fields["complexity"] == MECHANISMS["hard"] for s in specs)
    bad = LabSpec(lab="macro", name="bad", properties={}, protocol=kind_spec("macro/causal-discovery", colour="red"))
    with pytest.raises(ValueError, match="unknown macro spec fields"):
        macro_config(bad)


@pytest.mark.slow
def test_lab_generate_macro_writes_labs_that_pass_verify(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from discoverylab.labs.cli import lab_app
    from discoverylab.labs.core.generator import read_suite

    out = tmp_path / "macro.yaml"
    result = CliRunner().invoke(lab_app, ["generate", "--lab", "macro", "--n", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    (spec,) = read_suite(out)
    report = verify(spec)
    data = next(c.data for c in report.checks if c.name == "vi_protocol")
    assert report.passed and data["oracle"] >= 0.95 and data["random"] <= 0.15
