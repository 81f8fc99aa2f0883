"""Framework pieces: seeding streams, registries, LabSpec I/O, property combinators, schedules, trajectories."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discoverylab.labs.core.errors import InvalidSpec, UnknownKind
from discoverylab.labs.core.lab import build_lab, build_properties
from discoverylab.labs.core.operators import (
    Alternate,
    Conditional,
    Dynamics,
    FunctionOperator,
    Sequential,
    Stochastic,
)
from discoverylab.labs.core.properties import (
    Compose,
    FunctionProperty,
    Mix,
    Product,
    PropertySpace,
    Threshold,
)
from discoverylab.labs.core.registry import Registry
from discoverylab.labs.core.seeding import SeedStreams, stream
from discoverylab.labs.core.spaces import StringSpace
from discoverylab.labs.core.spec import LabSpec, kind_spec
from discoverylab.labs.core.trajectory import detect_cycle, estimate_attractors, kmeans

SPACE = StringSpace("ACGT", 12)
GC = FunctionProperty("gc", lambda x: ((x == 1) | (x == 2)).mean(axis=1), value_range=(0.0, 1.0), value_quantum=1 / 12)
A_FRAC = FunctionProperty("a", lambda x: (x == 0).mean(axis=1), value_range=(0.0, 1.0))

YAML_SPEC = """
lab: sequence
objects: {alphabet: ACGT, length: 30}
properties:
  gc_content: {kind: gc}
  palindrome_score: {kind: palindromicity}
  hamming_distance: {kind: hamming, reference_seed: 17}
  entropy_score: {kind: kmer_entropy, k: 2}
dynamics:
  kind: directed_evolution
  drivers: [gc_content, palindrome_score]
  attractors: [[0.8, 0.8], [0.4, 0.2]]
  basin: {kind: gaussian, sigma: 0.1}
  mutations_per_step: 1
protocol: {kind: sequence/unknown-dynamics, rounds: 6, max_steps: 20, measurables: all, hint: none}
seed: 0
"""


def test_streams_are_independent_of_each_other_and_reproducible() -> None:
    a, b = SeedStreams(5), SeedStreams(5, names=("grader",))
    assert a.grader.integers(1 << 30) == b.grader.integers(1 << 30)  # adding streams changes nothing
    assert stream(5, "sampler").integers(1 << 30) != stream(5, "grader").integers(1 << 30)
    assert stream(5, "lab").integers(1 << 30) != stream(6, "lab").integers(1 << 30)
    with pytest.raises(ValueError):
        stream(-1, "lab")


def test_registry_rejects_clashes_and_lists_known_kinds() -> None:
    reg: Registry[int] = Registry("thing")
    reg.register("a", 1)
    with pytest.raises(ValueError):
        reg.register("a", 2)
    reg.register("a", 2, overwrite=True)
    assert reg.get("a") == 2 and reg.kinds() == ["a"]
    with pytest.raises(UnknownKind, match="known: a"):
        reg.get("b")


def test_spec_yaml_json_round_trip(tmp_path: Path) -> None:
    spec = LabSpec.from_text(YAML_SPEC)
    assert spec.properties["entropy_score"].fields == {"k": 2}
    for suffix in (".json", ".yaml"):
        path = tmp_path / f"lab{suffix}"
        spec.to_file(path)
        assert LabSpec.from_file(path) == spec
    assert spec.config_hash() == LabSpec.from_text(json.dumps(spec.model_dump()), "json").config_hash()
    with pytest.raises(InvalidSpec):
        LabSpec.from_text("lab: sequence\nproperties: {x: {kind: gc}}\nunknown_field: 1\n")


def test_spec_builds_a_lab_with_the_spec_reference() -> None:
    lab = build_lab(LabSpec.from_text(YAML_SPEC))
    ref = lab.reference  # type: ignore[attr-defined]
    assert lab.measure([ref], ["hamming_distance"])["hamming_distance"] == [0.0]  # type: ignore[attr-defined]
    with pytest.raises(UnknownKind):
        build_lab(LabSpec(properties={"x": kind_spec("no_such_kind")}))


def test_composites_resolve_by_name_and_reject_cycles() -> None:
    base = {"g": GC, "a": A_FRAC}
    entries = {"m": kind_spec("mix", of=["g", "t"], weights=[0.5, 0.5]), "t": kind_spec("threshold", of="a", t=0.5),
               "g": kind_spec("base"), "a": kind_spec("base")}
    built = build_properties(entries, lambda name, entry: base[name])
    x = SPACE.encode(["AAAAAAAGGGGG"])
    assert built["m"].batch(x)[0] == pytest.approx(0.5 * 5 / 12 + 0.5 * 1.0)
    with pytest.raises(InvalidSpec, match="cycle"):
        build_properties({"p": kind_spec("compose", of="q"), "q": kind_spec("compose", of="p")}, lambda n, e: GC)
    with pytest.raises(InvalidSpec, match="undefined"):
        build_properties({"p": kind_spec("product", of=["zz"])}, lambda n, e: GC)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.text("ACGT", min_size=12, max_size=12), min_size=1, max_size=20),
       st.floats(0, 1), st.floats(0, 1))
def test_combinators_keep_the_unit_interval(seqs: list[str], w: float, t: float) -> None:
    x = SPACE.encode(seqs)
    for prop in (Mix([GC, A_FRAC], [w, 1 - w]), Product([GC, A_FRAC]), Threshold(GC, t),
                 Compose(GC, "sqrt"), Compose(A_FRAC, "invert")):
        v = prop.batch(x)
        assert ((v >= 0) & (v <= 1)).all() and not np.signbit(v).any()


def test_combinator_ranges() -> None:
    assert Threshold(GC, 0.5).feasible_range(SPACE) == (0.0, 1.0)
    assert Compose(GC, "invert").feasible_range(SPACE) == (0.0, 1.0)
    lo, hi = Product([GC, A_FRAC]).feasible_range(SPACE)  # max of g*a with g + a <= 1 is 1/4
    assert lo == 0.0 and hi == pytest.approx(0.25, abs=0.02)
    with pytest.raises(ValueError):
        Mix([GC, A_FRAC], [0.7, 0.7])


def test_property_space_metrics() -> None:
    space = PropertySpace([GC, A_FRAC], metric="manhattan")
    emb = space.embed(SPACE.encode(["AAAAAAGGGGGG"]))
    assert emb.tolist() == [[0.5, 0.5]]
    assert space.distance(emb, np.zeros(2))[0] == pytest.approx(1.0)


def _inc(obj: int, rng: np.random.Generator) -> int:
    return obj + 1


def _dbl(obj: int, rng: np.random.Generator) -> int:
    return obj * 2


def test_schedules() -> None:
    inc, dbl = FunctionOperator(_inc, name="inc"), FunctionOperator(_dbl, name="dbl")
    rng = np.random.default_rng(0)
    assert Dynamics(Sequential([inc, dbl])).run(1, 2, rng) == [1, 4, 10]
    assert Dynamics(Alternate([inc, dbl])).run(1, 3, rng) == [1, 2, 4, 5]
    cond = Conditional(lambda v: v["x"] < 5, inc, dbl, measure=lambda o: {"x": float(o)})
    assert Dynamics(cond).run(3, 3, rng) == [3, 4, 5, 10]
    stoch = Dynamics(Stochastic([(1.0, dbl), (0.0, inc)]))
    assert stoch.run(1, 2, rng) == [1, 2, 4]
    traj = Dynamics(inc).trajectory(0, 2, rng, measure=lambda objs: {"v": [o / 10 for o in objs]})
    assert traj.values == {"v": [0.0, 0.1, 0.2]} and len(traj) == 3


def test_detect_cycle() -> None:
    assert detect_cycle([5, 1, 2, 1, 2, 1, 2]).period == 2  # type: ignore[union-attr]
    assert detect_cycle([5, 1, 2, 1, 2, 1, 2]).start == 1  # type: ignore[union-attr]
    assert detect_cycle([1, 2, 3, 3, 3]).period == 1  # type: ignore[union-attr]
    assert detect_cycle([1, 2, 3, 4]) is None
    vectors = [np.array([0.1, 0.2]), np.array([0.5, 0.5]), np.array([0.1, 0.2]), np.array([0.5, 0.5])]
    assert detect_cycle(vectors, key=lambda v: tuple(np.round(v, 3))).period == 2  # type: ignore[union-attr]


def test_kmeans_recovers_separated_clusters() -> None:
    rng = np.random.default_rng(1)
    pts = np.vstack([rng.normal((0.2, 0.2), 0.02, (50, 2)), rng.normal((0.8, 0.7), 0.02, (50, 2))])
    centres, labels = kmeans(pts, 2, rng)
    assert np.allclose(centres, [[0.2, 0.2], [0.8, 0.7]], atol=0.02)
    assert (labels[:50] == 0).all() and (labels[50:] == 1).all()


def test_estimate_attractors_on_a_toy_dynamics() -> None:
    # Halving towards 0 or 1 from either side of 0.5: two fixed points in the limit of rounding.
    step = FunctionOperator(lambda x, rng: round(x + (1 - x) / 2, 3) if x >= 0.5 else round(x / 2, 3), name="h")
    starts = list(np.linspace(0, 1, 21))
    est = estimate_attractors(Dynamics(step), starts, 40, 2, np.random.default_rng(0),
                              lambda objs: np.asarray(objs, dtype=float)[:, None])
    assert est.converged_fraction == 1.0
    assert np.allclose(est.centroids.ravel(), [0.0, 1.0], atol=0.01)
