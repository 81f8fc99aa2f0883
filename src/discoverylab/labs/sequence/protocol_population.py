"""The population protocol: discover a hidden branching process (issue #22 part 4). Registered as
`sequence/population-dynamics`.

Description: a hidden `PopulationDynamics` (each generation: parents drawn at random are merged by a
composition operator, then every child is changed by an evolution operator) acts on populations of
P sequences. The agent designs starting populations, runs them for up to G generations, and must then
predict, for held-out starting populations it has not seen, the population mean of the target
measurables after K generations.
Actions (JSON): `{"type": "experiment", "population", "generations", "measurables", "reasoning"}` or
`{"type": "report", "hypothesis", "evidence", "predictions"}`. After the experiments (or an early
report) a mandatory report turn lists the held-out populations (with their generation-0 means); they
are never shown before and cannot be run (experiments are closed by then).
Observation: JSON `lab_results` with the per-generation population mean and std of the chosen
measurables (3 decimals, plus measurement noise if configured) and the final population.
Scoring: `grade_population` (predictive skill over the better of the best constant and "nothing
changes", both in hindsight: constants, the midpoint and the identity earn 0).
Difficulty knobs: level (operator menus), population size, horizon K, generations per experiment,
rounds, number of targets, measurement noise, operator noise (drawn at level hard).
Without `compose` in its config each seed draws its own process; a lab spec pins one.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from discoverylab.labs.core.seeding import SeedStreams
from discoverylab.labs.core.spec import KindSpec
from discoverylab.labs.protocol import Reply, Score, register_protocol
from discoverylab.labs.sequence.grading_population import (
    GRADER_VERSION,
    MIN_BASELINE,
    HeldOutPopulation,
    grade_population,
    target_skill,
)
from discoverylab.labs.sequence.measurables import build_measurables, describe
from discoverylab.labs.sequence.parsing import ParseFailure
from discoverylab.labs.sequence.parsing_population import (
    PopulationExperiment,
    PopulationReport,
    parse_population_message,
)
from discoverylab.labs.sequence.population import (
    MEASURABLES,
    PopulationProblem,
    build_process,
    draw_problem,
    expected_means,
    population_means,
    population_stds,
    random_design,
    summarise,
)
from discoverylab.labs.sequence.population_batch import batch_supported, expected_means_batch
from discoverylab.labs.sequence.problems import signature
from discoverylab.labs.sequence.rounds import RoundsThenReport

__all__ = ["PopulationConfig", "PopulationProtocol"]

MAX_DRAWS = 8
MIN_SPREAD = 0.03
"""A drawn process is kept when, for every target, every hindsight baseline (constant, no change, grid
hedge) errs by >= 0.03 on the held-out populations: the process moves populations, not all to one
value, and not the way a cheap guess says."""
DEFAULT_HORIZON = 4
_TRUTH_CACHE: dict[str, list[dict[str, float]]] = {}


class PopulationConfig(BaseModel):
    """Knobs of the population protocol."""

    model_config = ConfigDict(extra="forbid")

    length: int = Field(16, ge=4, le=200)
    size: int = Field(12, ge=2, le=64)
    """Population size P (every experiment's starting population has exactly P members)."""
    generations: int | None = Field(None, ge=1, le=100)
    """Horizon K of the held-out predictions (None: drawn with the process, or 4 with a given one)."""
    max_generations: int = Field(16, ge=1, le=200)
    rounds: int = Field(6, ge=1, le=50)
    level: Literal["easy", "medium", "hard"] = "medium"
    """Operator menus of drawn processes (ignored when `compose` is given)."""
    n_targets: int = Field(1, ge=1, le=2)
    compose: dict[str, Any] | None = None
    evolve: dict[str, Any] | None = None
    targets: tuple[str, ...] | None = None
    measurables: tuple[str, ...] = MEASURABLES
    properties: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Spec entries (`{"kind": ..., **fields}`) of measurables with parameters (e.g. alternation k)."""
    noise: float = Field(0.0, ge=0.0, le=0.2)
    """Gaussian noise added to reported means and stds (clipped to [0, 1])."""
    n_heldout: int = Field(8, ge=3, le=40)
    replicates: int = Field(256, ge=1, le=4096)
    """Independent runs averaged for each held-out truth (the expectation, not one realisation)."""
    final_retries: int = Field(1, ge=0, le=5)
    invalid_consumes_round: bool = True

    @model_validator(mode="after")
    def _consistent(self) -> PopulationConfig:
        if (self.compose is None) != (self.targets is None):
            raise ValueError("compose and targets go together: give both, or neither (each seed draws them)")
        if self.evolve is not None and self.compose is None:
            raise ValueError("evolve needs compose (and targets)")
        unknown = [m for m in self.measurables if m not in MEASURABLES]
        if unknown or not self.measurables:
            raise ValueError(f"measurables must be among {list(MEASURABLES)} (got {unknown or 'none'})")
        if self.targets is not None and (not self.targets or set(self.targets) - set(self.measurables)):
            raise ValueError(f"targets {list(self.targets)} must be listed measurables {list(self.measurables)}")
        if self.generations is not None and self.max_generations < self.generations:
            raise ValueError(f"max_generations ({self.max_generations}) must be >= generations ({self.generations})")
        return self


class PopulationProtocol(RoundsThenReport):
    """See the module docstring."""

    name = "sequence/population-dynamics"
    experiment_type, report_type = PopulationExperiment, PopulationReport
    final_round_note = "This is the final round; after it you will be asked for the report."
    closed_error = "Experiments are closed (held-out populations cannot be run); send your report."

    def __init__(self, **config: Any) -> None:
        super().__init__()
        self.config = PopulationConfig(**config)
        self.max_turns = self.config.rounds + 2 + self.config.final_retries

    def _on_reset(self, seed: int) -> str:
        cfg = self.config
        self.streams = SeedStreams(seed, ("lab", "problem", "dynamics", "noise", "grader"))
        self.props = build_measurables(cfg.measurables, cfg.properties, "A" * cfg.length)
        if cfg.compose is None:
            for _ in range(MAX_DRAWS):  # keep a draw whose targets the process really moves
                self._build(draw_problem(cfg.level, self.streams["problem"], cfg.n_targets))
                if self.degenerate() is None:
                    break
        else:
            assert cfg.targets is not None
            evolve = KindSpec.model_validate(cfg.evolve) if cfg.evolve else None
            self._build(PopulationProblem(KindSpec.model_validate(cfg.compose), evolve, cfg.targets,
                                          cfg.generations or DEFAULT_HORIZON))
        self.order = [str(m) for m in self.streams["lab"].permutation(list(cfg.measurables))]
        self.rounds_used = 0
        self.phase: Literal["experiments", "report"] = "experiments"
        self.report_attempts = 0
        self.draft: PopulationReport | None = None
        self.report: PopulationReport | None = None
        self.starts_seen: list[dict[str, float]] = []
        return self._intro()

    def _build(self, problem: PopulationProblem) -> None:
        if self.config.generations is not None:
            problem = replace(problem, generations=self.config.generations)
        problem = replace(problem, generations=min(problem.generations, self.config.max_generations))
        self.problem = problem
        self.process = build_process(problem.compose, problem.evolve, self.config.length)
        self._heldout: list[HeldOutPopulation] | None = None

    def _intro(self) -> str:
        cfg = self.config
        listed = "\n".join(f"- {m}: {describe(self.props[m])}" for m in self.order)
        targets = ", ".join(self.problem.targets)
        return "\n".join([
            f"You are an experimental scientist studying an unknown branching process acting on populations of "
            f"{cfg.size} DNA-like sequences of length {cfg.length} over {{A,G,C,T}}. Each generation, every member "
            "of the next population is made from parents drawn from the current one, and may then change. One "
            f"experiment = (1) a starting population of exactly {cfg.size} sequences, (2) a subset of the "
            f"MEASURABLES below, (3) generations in 1..{cfg.max_generations}. The lab returns, for every generation, "
            "the population mean and standard deviation of each chosen measurable, and the final population.",
            f"MEASURABLES (random order):\n{listed}",
            f"Goal: find out how the process moves populations, then predict, for held-out starting populations "
            f"you will be shown after the experiments, the population mean of {targets} after {self.problem.generations} "
            f"generations. You may run at most {cfg.rounds} experiments; use as few as you need. Reply with JSON "
            "only:",
            '{"type": "experiment", "population": ["...", ...], "generations": g, "measurables": [...], '
            '"reasoning": "..."} or',
            '{"type": "report", "hypothesis": "...", "evidence": "...", "predictions": {"P1": {"<target>": x}, ...}}',
        ])

    def problem_signature(self) -> str:
        """Hash of this episode's hidden process (operators with parameters, targets)."""
        p = self.problem
        return signature({"compose": p.compose.model_dump(), "evolve": p.evolve.model_dump() if p.evolve else None,
                          "targets": p.targets, "generations": p.generations})

    # ------------------------------------------------------------------ held-out populations and truth
    @property
    def heldout(self) -> list[HeldOutPopulation]:
        """Held-out populations (grader stream) and their expected target means after K generations."""
        if self._heldout is None:
            cfg = self.config
            rng = self.streams["grader"]
            pops = [random_design(rng, cfg.size, cfg.length) for _ in range(cfg.n_heldout)]
            key = json.dumps([self.problem_signature(), cfg.model_dump(mode="json"), pops])
            if key not in _TRUTH_CACHE:
                digest = int(hashlib.sha256(key.encode()).hexdigest()[:16], 16)  # truth depends on content only
                truth_rng = np.random.default_rng(np.random.SeedSequence([digest, 0x7207]))
                expect = expected_means_batch if batch_supported(self.process) else expected_means
                _TRUTH_CACHE[key] = [expect(self.process, pop, self.problem.generations, self.props, cfg.replicates,
                                            truth_rng) for pop in pops]
            self._heldout = [HeldOutPopulation(f"P{i + 1}", tuple(pop), population_means(pop, self.props), truth,
                                               population_stds(pop, self.props))
                             for i, (pop, truth) in enumerate(zip(pops, _TRUTH_CACHE[key], strict=True))]
        return self._heldout

    def degenerate(self) -> str | None:
        """Why this process leaves nothing to discover on the held-out populations, or None."""
        for name in self.problem.targets:
            h = self.heldout
            # the redraw rule keeps the original baselines (no creep), so every seed keeps its problem
            base = target_skill([None] * len(h), [x.truth[name] for x in h], [x.start[name] for x in h])
            low = base["baseline"]
            if low < max(MIN_SPREAD, MIN_BASELINE):
                which = min(("constant", "identity", "hedge"), key=lambda k: base[f"baseline_{k}"])
                return (f"target {name}: the cheap '{which}' guess errs by only {low:.4f} on the held-out populations "
                        f"(needs >= {MIN_SPREAD})")
        return None

    # ------------------------------------------------------------------ messages
    def _parse(self, message: str) -> PopulationExperiment | PopulationReport | ParseFailure:
        cfg = self.config
        ids = [h.pid for h in self.heldout] if self.phase == "report" else []
        return parse_population_message(message, length=cfg.length, size=cfg.size,
                                        max_generations=cfg.max_generations, measurables=list(self.order),
                                        targets=list(self.problem.targets), population_ids=ids)

    def _run(self, action: PopulationExperiment) -> dict[str, Any]:
        runs = self.process.run(action.population, action.generations, self.streams["dynamics"])
        self.starts_seen.append(population_means(action.population, self.props))
        summary = summarise(runs, {m: self.props[m] for m in action.measurables})
        noise = self.config.noise
        shown: dict[str, dict[str, list[float]]] = {}
        for m, stats in summary.items():
            shown[m] = {}
            for stat, values in stats.items():
                v = np.asarray(values)
                if noise > 0:
                    v = np.clip(v + self.streams["noise"].normal(0.0, noise, v.shape), 0.0, 1.0)
                shown[m][stat] = [round(float(x), 3) for x in v]
        payload: dict[str, Any] = {"type": "lab_results", "round": self.rounds_used,
                                   "generations": action.generations, "measurements": shown,
                                   "final_population": list(runs[-1])}
        if action.warnings:
            payload["warnings"] = action.warnings
        return payload

    def _accept_report(self, action: PopulationReport) -> PopulationReport | None:
        return action if not (self.draft and not action.predictions) else self.draft

    def _enter_report(self, prefix: str, info: dict[str, Any]) -> Reply:
        self.phase = "report"
        request = {
            "type": "report_request",
            "message": ("Experiments are over (no more can be run). Send your final report as JSON (type \"report\"). "
                        f"In `predictions`, for each held-out population id give the population mean of each target "
                        f"({', '.join(self.problem.targets)}) after {self.problem.generations} generations, e.g. "
                        '{"P1": {"' + self.problem.targets[0] + '": 0.5}}.'),
            "generations": self.problem.generations, "targets": list(self.problem.targets),
            "heldout_populations": {h.pid: {"population": list(h.population),
                                            "generation_0": {m: round(h.start[m], 3) for m in self.order},
                                            "generation_0_std": {m: round(h.start_std[m], 3) for m in self.order}}
                                    for h in self.heldout},
        }
        return Reply(text=prefix + "\n" + json.dumps(request), info=info)

    # ------------------------------------------------------------------ grading and truth
    def ground_truth(self) -> dict[str, Any]:
        p = self.problem
        return {"compose": p.compose.model_dump(), "evolve": p.evolve.model_dump() if p.evolve else None,
                "targets": list(p.targets), "generations": self.problem.generations,
                "heldout": [{"pid": h.pid, "truth": dict(h.truth)} for h in self.heldout]}

    def grade(self) -> Score:
        targets = self.problem.targets
        seen = [s[t] for s in self.starts_seen for t in targets[:1]]
        spread = float(max(seen) - min(seen)) if seen else 0.0
        return grade_population(self.report, self.heldout, targets, rounds_used=self.rounds_used,
                                start_spread=spread, generations=self.problem.generations)


register_protocol(PopulationProtocol.name, PopulationProtocol, overwrite=True, grader_version=GRADER_VERSION,
                  summary="Predict how a hidden branching process moves populations of sequences (issue #22)")
