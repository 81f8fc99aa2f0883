"""Automatic verification of a lab (spec §1.6): every built-in or generated lab must pass before use.

Checks: (i) properties in [0, 1] on random objects; (ii) feasible ranges consistent with samples;
(iii) the sampler hits feasible targets on >= 95% of requests; (iv) operators return valid objects
and are deterministic for a fixed rng; (v) dynamics with declared attractors converge (a cycle is
reached from >= 90% of starts) and every declared attractor has a cycle centroid nearby; (vi) the
protocol's scripted oracle gets full marks and a random agent a low score, through a hook that the
protocol code registers with ``register_protocol_check(kind, fn)``; (vii) the properties an agent
must discover (the protocol's hidden property, the dynamics' drivers) are not (nearly) constant;
(viii) the hidden property is learnable from the protocol's budget of queries by a panel of generic
learners; (ix) a fresh process computes byte-identical property values (`learnability`).
A sampler check with no feasible request at all fails (nothing was checked). A spec field the
protocol cannot honour fails check vi with the protocol's reason.
"""

from __future__ import annotations

import importlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from discoverylab.labs.core.errors import InvalidSpec
from discoverylab.labs.core.lab import Lab, build_lab
from discoverylab.labs.core.learnability import MIN_SKILL, cross_process_digests, learnability
from discoverylab.labs.core.registry import Registry
from discoverylab.labs.core.sampler import BAND_TOL
from discoverylab.labs.core.spec import LabSpec
from discoverylab.labs.core.trajectory import estimate_attractors

logger = logging.getLogger(__name__)

ProtocolCheck = Callable[[LabSpec], tuple[float, float]]
"""``fn(spec) -> (oracle_score, random_score)``, both in [0, 1]."""
PROTOCOL_CHECKS: Registry[ProtocolCheck] = Registry("protocol check")


def register_protocol_check(kind: str, fn: ProtocolCheck, *, overwrite: bool = False) -> None:
    """Register check (vi) for protocol ``kind`` (e.g. ``"sequence/hidden-property"``)."""
    PROTOCOL_CHECKS.register(kind, fn, overwrite=overwrite)


@dataclass(slots=True)
class CheckResult:
    """One check: ``passed`` is None when the check does not apply (skipped)."""

    name: str
    passed: bool | None
    detail: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class VerificationReport:
    """All checks of one spec; a lab is usable when no check failed."""

    spec_name: str
    checks: list[CheckResult]
    seconds: float

    @property
    def passed(self) -> bool:
        return all(c.passed is not False for c in self.checks)

    @property
    def failures(self) -> list[CheckResult]:
        return [c for c in self.checks if c.passed is False]

    def to_dict(self) -> dict[str, Any]:
        return {"spec": self.spec_name, "passed": self.passed, "seconds": round(self.seconds, 3),
                "checks": [{"name": c.name, "passed": c.passed, "detail": c.detail} for c in self.checks]}


@dataclass(frozen=True, slots=True)
class VerifyBudget:
    """How hard ``verify`` looks; ``quick`` is for bulk generation and tests."""

    n_random: int = 1000
    targets: tuple[float, ...] = tuple(np.round(np.linspace(0, 1, 11), 2))
    per_request: int = 10
    eps: float = 0.1
    operator_trials: int = 5
    dynamics_starts: int = 60
    dynamics_steps: int = 40
    min_hit_rate: float = 0.95
    min_converged: float = 0.90
    attractor_tol: float = 0.1
    oracle_min: float = 0.99
    random_max: float = 0.6
    sampler_time_limit: float | None = 2.0
    min_learnable_skill: float = MIN_SKILL
    cross_process: bool = True


QUICK = VerifyBudget(n_random=500, targets=(0.0, 0.2, 0.4, 0.6, 0.8, 1.0), dynamics_starts=30,
                     sampler_time_limit=0.5)


SKIPPED_NAMES = {"_check_unit_interval": "i_unit_interval", "_check_ranges": "ii_feasible_ranges",
                 "_check_sampler": "iii_sampler_hits", "_check_operators": "iv_operators",
                 "_check_dynamics": "v_dynamics"}


def verify(spec: LabSpec, *, seed: int = 0, budget: VerifyBudget | None = None,
           protocol_check: bool = True) -> VerificationReport:
    """Build the lab of ``spec`` and run checks i-vi; never raises for a failing lab."""
    budget = budget or VerifyBudget()
    start = time.perf_counter()
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x7E51]))
    checks: list[CheckResult] = []
    try:
        lab = build_lab(spec, seed)
    except Exception as exc:  # a broken spec is a failed check, reported, not a crash
        checks.append(CheckResult("build", False, f"{type(exc).__name__}: {exc}"))
        return VerificationReport(spec.name, checks, time.perf_counter() - start)
    lab.sampler.time_limit = budget.sampler_time_limit
    for check in (_check_unit_interval, _check_ranges, _check_sampler, _check_operators, _check_dynamics):
        if not lab.properties:  # e.g. the macro lab: its science is in the protocol (check vi)
            checks.append(CheckResult(SKIPPED_NAMES[check.__name__], None, "no properties"))
            continue
        try:
            checks.append(check(lab, rng, budget))
        except Exception as exc:
            logger.exception("verification check %s crashed", check.__name__)
            checks.append(CheckResult(check.__name__.removeprefix("_check_"), False, f"crashed: {exc!r}"))
    try:
        checks.append(_check_informative(spec, lab, rng, budget) if lab.properties else
                      CheckResult("vii_informative", None, "no properties"))
    except Exception as exc:
        logger.exception("verification check informative crashed")
        checks.append(CheckResult("vii_informative", False, f"crashed: {exc!r}"))
    checks.append(_check_protocol(spec, budget) if protocol_check else
                  CheckResult("vi_protocol", None, "not requested"))
    informative = next(c for c in checks if c.name == "vii_informative")
    hidden = spec.protocol.fields.get("hidden") if spec.protocol is not None else None
    for extra in (_check_learnable, _check_cross_process):
        if extra is _check_learnable and hidden in (informative.data or {}).get("degenerate", {}):
            # A (nearly) constant hidden property already fails vii. Measuring viii would only spend
            # the sampler's whole budget on targets no object reaches (~20 s for a threshold at 0.99).
            checks.append(CheckResult("viii_learnable", None, f"not measured: the hidden property {hidden!r} "
                                      "is degenerate (vii_informative)"))
            continue
        try:
            checks.append(extra(spec, lab, rng, budget))
        except Exception as exc:
            logger.exception("verification check %s crashed", extra.__name__)
            checks.append(CheckResult(extra.__name__.removeprefix("_check_"), False, f"crashed: {exc!r}"))
    return VerificationReport(spec.name, checks, time.perf_counter() - start)


def _check_unit_interval(lab: Lab, rng: np.random.Generator, budget: VerifyBudget) -> CheckResult:
    batch = lab.space.random_batch(rng, budget.n_random)
    bad = {}
    for name, prop in lab.properties.items():
        v = prop.batch(batch)
        if v.shape != (budget.n_random,) or np.isnan(v).any() or (v < 0).any() or (v > 1).any():
            bad[name] = f"min {np.nanmin(v):.3g} max {np.nanmax(v):.3g}"
    return CheckResult("i_unit_interval", not bad, "all properties in [0, 1]" if not bad else f"out of range: {bad}")


def _check_ranges(lab: Lab, rng: np.random.Generator, budget: VerifyBudget) -> CheckResult:
    batch = lab.space.random_batch(rng, budget.n_random)
    bad, ranges = {}, {}
    for name, prop in lab.properties.items():
        lo, hi = prop.feasible_range(lab.space)
        ranges[name] = (lo, hi)
        v = prop.batch(batch)
        if not lo <= hi or v.min() < lo - 1e-9 or v.max() > hi + 1e-9:
            bad[name] = f"range ({lo:.3g}, {hi:.3g}) but samples span ({v.min():.3g}, {v.max():.3g})"
    return CheckResult("ii_feasible_ranges", not bad, "ranges contain all samples" if not bad else str(bad),
                       {"ranges": ranges})


def _feasible(target: float, lo: float, hi: float, quantum: float | None, eps: float) -> bool:
    """A target is feasible if it lies in the range and (on a grid) some level is within eps."""
    if not lo - BAND_TOL <= target <= hi + BAND_TOL:
        return False
    if quantum is None:
        return True
    nearest = lo + round((target - lo) / quantum) * quantum
    return abs(nearest - target) <= eps + BAND_TOL


def _check_sampler(lab: Lab, rng: np.random.Generator, budget: VerifyBudget) -> CheckResult:
    requests, hits, misses = 0, 0, []
    for name, prop in lab.properties.items():
        lo, hi = prop.feasible_range(lab.space)
        q = prop.quantum(lab.space)
        for target in budget.targets:
            if not _feasible(target, lo, hi, q, budget.eps):
                continue
            batch = lab.sampler.sample({name: (target, budget.eps)}, budget.per_request, rng)
            requests += 1
            if all(s.hit for s in batch.samples):
                hits += 1
            else:
                misses.append(f"{name}@{target}")
    if requests == 0:  # no feasible target at all: nothing was checked, so nothing passed
        return CheckResult("iii_sampler_hits", False, "0/0 requests: no property has a feasible target "
                           "(constant or nearly constant properties?)", {"hit_rate": 0.0})
    rate = hits / requests
    return CheckResult("iii_sampler_hits", rate >= budget.min_hit_rate,
                       f"{hits}/{requests} feasible requests fully hit" + (f"; missed {misses}" if misses else ""),
                       {"hit_rate": rate})


MAX_MODAL_SHARE = 0.95
"""A property whose most common value covers this share of random objects is (nearly) constant."""
MIN_SPREAD = 0.1
"""... and so is one whose values on random objects span (1st to 99th percentile) less than this."""


def degenerate(values: np.ndarray) -> str | None:
    """Why a property's values on random objects make it (nearly) constant, or None if they do not."""
    if len(values) == 0:
        return "no values"
    _, counts = np.unique(np.round(values, 9), return_counts=True)
    share = counts.max() / len(values)
    if share >= MAX_MODAL_SHARE:
        return f"takes one value on {share:.0%} of random objects"
    spread = float(np.quantile(values, 0.99) - np.quantile(values, 0.01))
    if spread < MIN_SPREAD:
        return f"values on random objects span only {spread:.3f}"
    return None


def _check_informative(spec: LabSpec, lab: Lab, rng: np.random.Generator, budget: VerifyBudget) -> CheckResult:
    """The properties an agent must discover (the hidden one, the drivers) must not be (nearly) constant."""
    names: list[str] = []
    if spec.protocol is not None and isinstance(spec.protocol.fields.get("hidden"), str):
        names.append(spec.protocol.fields["hidden"])
    if spec.dynamics is not None:
        names += [str(d) for d in spec.dynamics.fields.get("drivers", [])]
    names = [n for n in dict.fromkeys(names) if n in lab.properties]
    if not names:
        return CheckResult("vii_informative", None, "no hidden property or drivers named")
    batch = lab.space.random_batch(rng, budget.n_random)
    bad = {n: why for n in names if (why := degenerate(lab.properties[n].batch(batch))) is not None}
    return CheckResult("vii_informative", not bad, f"{names} vary" if not bad else f"degenerate: {bad}",
                       {"degenerate": bad})


def _check_operators(lab: Lab, rng: np.random.Generator, budget: VerifyBudget) -> CheckResult:
    problems = []
    for name, op in lab.operators.items():
        for _ in range(budget.operator_trials):
            args = lab.random_objects(op.arity, rng)
            seed = int(rng.integers(2**31))
            a = op(*args, rng=np.random.default_rng(seed))
            b = op(*args, rng=np.random.default_rng(seed))
            if a != b:
                problems.append(f"{name} is not deterministic for a fixed rng")
                break
            try:
                lab.space.validate(a) if op.closed else None
            except ValueError as exc:
                problems.append(f"{name} returned an invalid object: {exc}")
                break
    return CheckResult("iv_operators", not problems, "; ".join(problems) or f"{len(lab.operators)} operators ok")


def _check_dynamics(lab: Lab, rng: np.random.Generator, budget: VerifyBudget) -> CheckResult:
    dyn = lab.dynamics
    if dyn is None or dyn.attractors is None:
        return CheckResult("v_dynamics", None, "no declared attractors")
    k = len(dyn.attractors)
    starts = lab.random_objects(budget.dynamics_starts, rng)
    starts += lab.basin_starts(max(1, budget.dynamics_starts // k), rng)
    est = estimate_attractors(dyn, starts, budget.dynamics_steps, k, rng, lab.embed)
    # Each declared attractor needs the centroid of the cycles nearest to it to lie close by.
    d = np.linalg.norm(est.end_points[:, None, :] - dyn.attractors[None, :, :], axis=2)
    nearest = d.argmin(axis=1)
    gaps = []
    for j, point in enumerate(dyn.attractors):
        mine = est.end_points[nearest == j]
        gaps.append(float(np.linalg.norm(mine.mean(axis=0) - point)) if len(mine) else float("inf"))
    ok = est.converged_fraction >= budget.min_converged and max(gaps) <= budget.attractor_tol
    detail = (f"{est.converged_fraction:.0%} of {len(starts)} starts reached a cycle; distance of cycle "
              f"centroids to declared attractors {np.round(gaps, 3).tolist()}")
    return CheckResult("v_dynamics", ok, detail, {"centroids": est.centroids.tolist(), "gaps": gaps,
                                                  "converged": est.converged_fraction})


def _check_learnable(spec: LabSpec, lab: Lab, rng: np.random.Generator, budget: VerifyBudget) -> CheckResult:
    """viii: the hidden property is learnable from the protocol's budget (`learnability`)."""
    fields = spec.protocol.fields if spec.protocol is not None else {}
    hidden = fields.get("hidden")
    if not isinstance(hidden, str) or hidden not in lab.properties or lab.space.random_batch(rng, 1).ndim != 2:
        return CheckResult("viii_learnable", None, "no hidden property over strings")
    n_train = int(fields.get("rounds", 5)) * int(fields.get("batch", 10))
    result = learnability(lab, hidden, n_train, rng)
    ok = result["best_skill"] >= budget.min_learnable_skill
    skills = {k: round(v, 3) for k, v in result["skills"].items()}
    return CheckResult("viii_learnable", ok, f"best learner {result['best']} reaches skill "
                       f"{result['best_skill']:.3f} from {n_train} queries (needs >= {budget.min_learnable_skill}); "
                       f"{skills}", result)


def _check_cross_process(spec: LabSpec, lab: Lab, rng: np.random.Generator, budget: VerifyBudget) -> CheckResult:
    """ix: a fresh process (another hash seed) computes byte-identical property values."""
    if not budget.cross_process or not lab.properties:
        return CheckResult("ix_cross_process", None, "not requested" if lab.properties else "no properties")
    modules = sorted({type(lab).__module__, *(type(p).__module__ for p in lab.properties.values())})
    here, there = cross_process_digests(spec.model_dump_json(), 0, modules)
    differ = sorted(name for name in here if here[name] != there.get(name))
    return CheckResult("ix_cross_process", not differ,
                       "identical values in a fresh process" if not differ else
                       f"values differ between processes: {differ}", {"differ": differ})


PROTOCOL_MODULES = {"sequence": "discoverylab.labs.sequence.protocols",
                    "macro": "discoverylab.labs.macroecon.protocols"}
"""Module that registers a lab's protocol checks; imported on first need."""


def _load_protocol_checks(lab: str) -> None:
    module = PROTOCOL_MODULES.get(lab)
    if module is None:
        return
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:  # a real import error inside the module must surface
            raise


def _check_protocol(spec: LabSpec, budget: VerifyBudget) -> CheckResult:
    if spec.protocol is None:
        return CheckResult("vi_protocol", None, "no protocol")
    if spec.protocol.kind not in PROTOCOL_CHECKS:
        _load_protocol_checks(spec.lab)
    if spec.protocol.kind not in PROTOCOL_CHECKS:
        return CheckResult("vi_protocol", None, f"no protocol check registered for {spec.protocol.kind!r}")
    try:
        oracle, random = PROTOCOL_CHECKS.get(spec.protocol.kind)(spec)
    except InvalidSpec as exc:  # a field the protocol cannot honour: refused with its reason
        return CheckResult("vi_protocol", False, f"refused: {exc}")
    except Exception as exc:
        logger.exception("protocol check crashed")
        return CheckResult("vi_protocol", False, f"protocol check crashed: {exc!r}")
    ok = oracle >= budget.oracle_min and random <= budget.random_max
    return CheckResult("vi_protocol", ok, f"oracle {oracle:.3f} (needs >= {budget.oracle_min}), "
                       f"random {random:.3f} (needs <= {budget.random_max})", {"oracle": oracle, "random": random})
