"""The generic annealing sampler (spec §1.3): hits, no duplicates, clamping, determinism, time guard."""

from __future__ import annotations

import numpy as np
import pytest

from discoverylab.labs.core.properties import FunctionProperty, Mix
from discoverylab.labs.core.sampler import AnnealingSampler
from discoverylab.labs.core.spaces import StringSpace

SPACE = StringSpace("ACGT", 20)
GC = FunctionProperty("gc", lambda x: ((x == 1) | (x == 2)).mean(axis=1), value_range=(0.0, 1.0))
RUNS = FunctionProperty("runs", lambda x: (x[:, 1:] == x[:, :-1]).mean(axis=1), value_range=(0.0, 1.0))
LOW = FunctionProperty("low", lambda x: 0.5 * (x == 0).mean(axis=1), value_range=(0.0, 0.5))


def sampler(**kw: object) -> AnnealingSampler:
    return AnnealingSampler(SPACE, {"gc": GC, "runs": RUNS, "low": LOW, "mix": Mix([GC, RUNS], [0.5, 0.5])},
                            **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("target", [0.0, 0.3, 0.7, 1.0])
def test_single_constraint_hits_with_distinct_objects(target: float) -> None:
    batch = sampler().sample({"runs": (target, 0.1)}, 10, np.random.default_rng(0))
    assert all(s.hit for s in batch.samples)
    assert all(abs(RUNS(SPACE.encode([s.obj])[0]) - target) <= 0.1 + 1e-9 for s in batch.samples)
    assert len(set(batch.objects)) == 10


def test_joint_constraints() -> None:
    batch = sampler().sample({"gc": (0.8, 0.05), "runs": (0.6, 0.05)}, 8, np.random.default_rng(1))
    assert batch.hit_rate == 1.0
    for s in batch.samples:
        assert abs(s.values["gc"] - 0.8) <= 0.05 + 1e-9 and abs(s.values["runs"] - 0.6) <= 0.05 + 1e-9


def test_infeasible_target_is_clamped_and_reported() -> None:
    batch = sampler().sample({"low": (0.9, 0.1)}, 5, np.random.default_rng(2))
    assert batch.clamped == {"low": 0.5} and batch.info["clamped"] is True
    assert batch.hit_rate == 1.0 and all(s.values["low"] >= 0.4 for s in batch.samples)


def test_float_targets_and_default_eps() -> None:
    batch = sampler(default_eps=0.05).sample({"gc": 0.5}, 4, np.random.default_rng(3))
    assert batch.targets == {"gc": (0.5, 0.05)} and batch.hit_rate == 1.0


def test_same_seed_same_samples() -> None:
    a = sampler().sample({"mix": (0.6, 0.05)}, 6, np.random.default_rng(9))
    b = sampler().sample({"mix": (0.6, 0.05)}, 6, np.random.default_rng(9))
    assert a.objects == b.objects


def test_small_feasible_set_repeats_instead_of_missing() -> None:
    tiny = StringSpace("AC", 2)
    both_c = FunctionProperty("cc", lambda x: (x == 1).mean(axis=1), value_range=(0.0, 1.0))
    batch = AnnealingSampler(tiny, {"cc": both_c}).sample({"cc": (1.0, 0.0)}, 3, np.random.default_rng(0))
    assert batch.objects == ["CC", "CC", "CC"] and batch.hit_rate == 1.0


def test_unknown_property_and_bad_requests_raise() -> None:
    with pytest.raises(KeyError, match="measurable"):
        sampler().sample({"nope": 0.5}, 1, np.random.default_rng(0))
    with pytest.raises(ValueError):
        sampler().sample({"gc": 0.5}, 0, np.random.default_rng(0))


def test_time_guard_returns_best_effort() -> None:
    # gc = 1 forces mix >= 0.5, so mix = 0 is impossible; with a tiny time budget the sampler still
    # returns n (missed) objects instead of searching for 10^6 iterations.
    s = sampler(time_limit=0.05, max_iters=10**6)
    batch = s.sample({"gc": (1.0, 0.0), "mix": (0.0, 0.0)}, 3, np.random.default_rng(0))
    assert len(batch.samples) == 3 and batch.hit_rate == 0.0 and batch.info.get("timed_out")
