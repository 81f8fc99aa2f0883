"""Generating new labs at tunable complexity (the paper's "(semi-)automated generation of sandboxes").

``generate_specs(n, complexity, seed)`` draws candidate ``LabSpec``s with the lab's registered
spec sampler, runs ``verify`` on each and keeps the first ``n`` that pass. ``complexity`` is a
named preset (``easy``, ``medium``, ``hard``) or a ``Complexity`` with every knob explicit, so a
scaling study is a loop over presets. ``write_suite``/``read_suite`` store suites as a YAML list
(``.yaml``) or JSONL; ``read_suite`` also reads a single spec file.
"""

from __future__ import annotations

import importlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from discoverylab.bench.records import atomic_file, read_jsonl, write_jsonl
from discoverylab.labs.core.errors import InvalidSpec, LabError
from discoverylab.labs.core.registry import Registry
from discoverylab.labs.core.spec import LabSpec
from discoverylab.labs.core.verify import QUICK, VerificationReport, VerifyBudget, verify

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Complexity:
    """Knobs of generated labs (spec §1.5); tuples are the choices a generator draws from."""

    name: str
    lengths: tuple[int, ...]
    p_dynamics: float
    """Share of dynamics labs (Protocol B) among generated labs; the rest are hidden-property labs."""
    p_composite: float
    """Probability that a hidden property is composed (mix, product, threshold, monotone map)."""
    composition_depth: int
    n_attractors: tuple[int, ...]
    sigmas: tuple[float, ...]
    distractors: tuple[int, ...]
    """Extra measurables listed in dynamics labs that do not drive the process."""
    hints: tuple[str, ...]
    rounds: tuple[int, ...]
    noise: tuple[float, ...]
    """Measurement noise sigma the protocol adds (clipped to [0, 1])."""
    alternation_ks: tuple[int, ...] = (1, 2)
    entropy_ks: tuple[int, ...] = (2,)
    population_sizes: tuple[int, ...] = (12,)
    """Population sizes P of generated population labs (smaller: noisier observations)."""
    population_ops: str = "medium"
    """Operator menus of population labs (`sequence.population`: easy, medium, hard)."""
    population_targets: tuple[int, ...] = (1,)
    """How many measurables a population lab asks the agent to predict."""


COMPLEXITY: dict[str, Complexity] = {
    "easy": Complexity("easy", lengths=(10,), p_dynamics=0.3, p_composite=0.0, composition_depth=0,
                       n_attractors=(2,), sigmas=(0.1,), distractors=(0,), hints=("structure", "examples"),
                       rounds=(6,), noise=(0.0,), alternation_ks=(1,), population_sizes=(16,),
                       population_ops="easy"),
    "medium": Complexity("medium", lengths=(10, 15, 20), p_dynamics=0.4, p_composite=0.3, composition_depth=1,
                         n_attractors=(2,), sigmas=(0.08, 0.1, 0.15), distractors=(1, 2), hints=("none", "examples"),
                         rounds=(5, 6), noise=(0.0, 0.01), alternation_ks=(1, 2),
                         population_sizes=(12, 16), population_ops="medium"),
    "hard": Complexity("hard", lengths=(15, 20, 30), p_dynamics=0.5, p_composite=0.6, composition_depth=2,
                       n_attractors=(2, 3), sigmas=(0.06, 0.1, 0.2), distractors=(2, 3), hints=("none",),
                       rounds=(4, 5), noise=(0.0, 0.02, 0.05), alternation_ks=(1, 2, 3), entropy_ks=(1, 2, 3),
                       population_sizes=(8, 12), population_ops="hard", population_targets=(1, 2)),
}

SpecSampler = Callable[[Complexity, np.random.Generator, int], LabSpec]
"""``fn(complexity, rng, index) -> candidate spec`` for one lab kind."""
SPEC_SAMPLERS: Registry[SpecSampler] = Registry("spec sampler")
SPEC_SAMPLER_MODULES = {"sequence": "discoverylab.labs.sequence.generate",
                        "population": "discoverylab.labs.sequence.generate",
                        "macro": "discoverylab.labs.macroecon.protocols"}
"""Module registering each generated family's spec sampler (`population`: sequence labs whose hidden
rule is a branching process, `sequence.population`)."""


class GenerationError(LabError):
    """Too few candidate specs passed verification."""


def _complexity(complexity: str | Complexity) -> Complexity:
    if isinstance(complexity, Complexity):
        return complexity
    if complexity not in COMPLEXITY:
        raise KeyError(f"unknown complexity {complexity!r}; presets: {', '.join(COMPLEXITY)}")
    return COMPLEXITY[complexity]


def generate_suite(n: int, complexity: str | Complexity = "medium", seed: int = 0, *, lab: str = "sequence",
                   budget: VerifyBudget = QUICK, max_attempts: int | None = None,
                   protocol_check: bool = True) -> list[tuple[LabSpec, VerificationReport]]:
    """``n`` verified specs with their reports; raises ``GenerationError`` if attempts run out."""
    knobs = _complexity(complexity)
    if lab not in SPEC_SAMPLERS:  # an unknown `lab` loads every family, so its error lists them all
        for module in [SPEC_SAMPLER_MODULES[lab]] if lab in SPEC_SAMPLER_MODULES else SPEC_SAMPLER_MODULES.values():
            importlib.import_module(module)
    sampler = SPEC_SAMPLERS.get(lab)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x6E4]))
    kept: list[tuple[LabSpec, VerificationReport]] = []
    attempts = max_attempts if max_attempts is not None else 4 * n + 10
    for index in range(attempts):
        if len(kept) >= n:
            break
        spec = sampler(knobs, rng, index)
        report = verify(spec, seed=spec.seed, budget=budget, protocol_check=protocol_check)
        if report.passed:
            kept.append((spec, report))
        else:
            logger.info("generated lab %s rejected: %s", spec.name, [c.detail for c in report.failures])
    if len(kept) < n:
        raise GenerationError(f"only {len(kept)} of {n} generated labs passed verification in {attempts} attempts; "
                              "raise max_attempts or use an easier complexity")
    return kept


def generate_specs(n: int, complexity: str | Complexity = "medium", seed: int = 0, *, lab: str = "sequence",
                   budget: VerifyBudget = QUICK, protocol_check: bool = True) -> list[LabSpec]:
    """``n`` generated specs that each passed ``verify``."""
    return [spec for spec, _ in generate_suite(n, complexity, seed, lab=lab, budget=budget,
                                               protocol_check=protocol_check)]


def write_suite(path: str | Path, specs: Sequence[LabSpec]) -> None:
    """Write specs: a YAML list for `.yaml`/`.yml`, a JSON list for `.json` (what `read_suite` reads
    there: JSONL would not parse once it has two lines), else JSONL (one spec per line, atomic)."""
    path = Path(path)
    if path.suffix in (".yaml", ".yml", ".json"):
        data = [spec.model_dump(mode="json", exclude_none=True) for spec in specs]
        text = json.dumps(data, indent=1) if path.suffix == ".json" else yaml.safe_dump(data, sort_keys=False)
        with atomic_file(path) as fh:  # a failed write leaves neither a partial suite nor a temp file
            fh.write(text)
        return
    write_jsonl(path, specs)


def read_suite(path: str | Path) -> list[LabSpec]:
    """Read a suite written by `write_suite`, or a single spec file (YAML/JSON) as a suite of one."""
    path = Path(path)
    if path.suffix in (".yaml", ".yml", ".json"):
        text = path.read_text(encoding="utf-8")
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise InvalidSpec(f"{path}: not YAML/JSON: {exc}") from exc
        items = data if isinstance(data, list) else [data]
        out = []
        for i, item in enumerate(items):
            try:
                out.append(LabSpec.model_validate(item))
            except ValueError as exc:
                raise InvalidSpec(f"{path}: spec {i + 1} is invalid: {exc}") from exc
        return out
    return [LabSpec.model_validate(record) for record in read_jsonl(path)]
