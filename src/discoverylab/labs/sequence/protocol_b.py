"""Protocol B, exploring unknown dynamics (spec §2.7; paper §6.2). Registered as `sequence/unknown-dynamics`.

Description: a hidden directed-evolution process acts on sequences of length 30; the agent must find
its attractors, its driving properties and its rule in at most 6 experiments.
Actions (JSON): `{"type": "experiment", "sequence", "measurables", "steps", "reasoning"}` or
`{"type": "report", "hypothesis", "evidence", "attractors", "drivers", "predictions"}`. After the
experiments (or an early report) a mandatory report turn lists 20 held-out starts to predict.
Observation: JSON `lab_results` with the trajectory and the chosen measurables per step (3 decimals).
Scoring: `grade_dynamics` (attractor F1, cycle structure, driver Jaccard, basin accuracy, end-state
skill; coverage as a process metric; optional judge for the paper's Table 5 items).
Difficulty knobs: hint (`none` | `examples` | `structure` | `distractor`), measurables, drivers,
attractors, basin width sigma, mutations per step, exploration noise, rounds, steps.
Drivers: any listed measurables (`properties` gives their spec entries, e.g. a `weighted_count` with
hidden weights). With the paper's drivers (gc_content, palindrome_score) the report format is the
paper's `{"gc", "pal", "type"}`; otherwise the prompt asks for coordinates keyed by measurable name,
so it does not give the drivers away.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from discoverylab.labs.core.seeding import SeedStreams, stream
from discoverylab.labs.protocol import Reply, Score, register_protocol
from discoverylab.labs.sequence.evolution import DirectedEvolution
from discoverylab.labs.sequence.generate import DRIVER_CHOICES
from discoverylab.labs.sequence.grading_dynamics import (
    GRADER_VERSION,
    DynamicsTruth,
    HeldOutStart,
    build_starts,
    estimate_truth,
    grade_dynamics,
)
from discoverylab.labs.sequence.judge import JudgeClient
from discoverylab.labs.sequence.kinds import SequenceProperty
from discoverylab.labs.sequence.measurables import (
    MEASURABLE_TEXT,
    build_measurables,
    describe,
    entry_specs,
    uses_episode_reference,
)
from discoverylab.labs.sequence.parsing import ParseFailure
from discoverylab.labs.sequence.parsing_dynamics import (
    PAPER_AXES,
    ExperimentAction,
    ReportAction,
    axis_key,
    parse_dynamics_message,
)
from discoverylab.labs.sequence.problems import draw_dynamics_problem, signature
from discoverylab.labs.sequence.properties import decode, encode
from discoverylab.labs.sequence.rounds import RoundsThenReport

__all__ = ["MEASURABLE_TEXT", "UnknownDynamicsConfig", "UnknownDynamicsProtocol"]

PAPER_MEASURABLES = ("gc_content", "palindrome_score", "hamming_distance", "entropy_score")
HINTS = {
    "examples": "Examples of sequences with palindrome_score = 1.0: AAAAAAATTTTTTT, GGGGGGGCCCCCCC, AGAGAGTACTCTCT.",
    "structure": "The system roughly tends toward two different convergence points; design queries that span the "
                 "(gc_content, palindrome_score) space to locate them and the rules of the evolution.",
}
_TRUTH_CACHE: dict[str, DynamicsTruth] = {}
MAX_DRAWS = 8
MIN_CONVERGED, ATTRACTOR_TOL = 0.9, 0.1
"""A drawn dynamics is kept when >= 90% of runs reach a cycle and each centroid is within 0.1 of its
declared attractor (the thresholds of `core.verify`)."""


class UnknownDynamicsConfig(BaseModel):
    """Knobs of Protocol B; defaults follow the paper (N=30, 6 rounds, <= 20 steps, 4 measurables)."""

    model_config = ConfigDict(extra="forbid")

    length: int = Field(30, ge=4, le=200)
    rounds: int = Field(6, ge=1, le=50)
    max_steps: int = Field(20, ge=1, le=200)
    measurables: tuple[str, ...] | None = None
    """Listed measurables; None: the drawn problem's (drivers + distractors) or, with fixed drivers,
    the paper's four."""
    hint: Literal["none", "examples", "structure", "distractor"] = "none"
    drivers: tuple[str, ...] | None = None
    """None (default): each seed draws drivers, distractors and attractors (`problems`). Preset
    `paper`: (gc_content, palindrome_score) with attractors (0.8, 0.8) and (0.4, 0.2)."""
    attractors: tuple[tuple[float, ...], ...] | None = None
    kernel: Literal["gaussian", "nearest", "inverse_square", "sigmoid"] = "gaussian"
    sigma: float = Field(0.1, gt=0.0)
    mutations: int = Field(1, ge=1)
    p_explore: float = Field(0.0, ge=0.0, le=1.0)
    stuck_patience: int | None = Field(None, ge=1)
    invalid_consumes_round: bool = True
    n_heldout: int = Field(20, ge=2, le=100)
    end_steps: int = Field(20, ge=1, le=200)
    final_retries: int = Field(1, ge=0, le=5)
    properties: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Spec entries (`{"kind": ..., **fields}`) of measurables and drivers; other names are canonical."""

    @model_validator(mode="after")
    def _drivers_are_measurable(self) -> UnknownDynamicsConfig:
        if self.drivers is None:
            if self.attractors is not None:
                raise ValueError("attractors need drivers: give both, or neither (each seed draws them)")
            return self
        if self.attractors is None:
            raise ValueError("drivers need attractors: give both, or neither (each seed draws them)")
        if self.measurables is None:
            self.measurables = PAPER_MEASURABLES
        if not self.drivers or len(set(self.drivers)) != len(self.drivers):
            raise ValueError(f"drivers must be distinct property names (got {list(self.drivers)})")
        hidden = [d for d in self.drivers if d not in self.measurables]
        if hidden:
            raise ValueError(f"drivers {hidden} must also be listed in measurables {list(self.measurables)}")
        if any(len(a) != len(self.drivers) for a in self.attractors) or not self.attractors:
            raise ValueError(f"each attractor needs one coordinate per driver {list(self.drivers)}")
        entry_specs(self.measurables, self.properties)  # every name must resolve to a property
        return self

    @property
    def drawn(self) -> bool:
        """Does each seed draw its own problem?"""
        return self.drivers is None


class UnknownDynamicsProtocol(RoundsThenReport):
    """Protocol B; see the module docstring."""

    name = "sequence/unknown-dynamics"
    experiment_type, report_type = ExperimentAction, ReportAction
    final_round_note = ("This is the final round. If you run an experiment now, you will still be asked "
                        "for a report afterwards.")
    closed_error = "Experiments are closed; send your report."

    def __init__(self, judge: JudgeClient | None = None, **config: Any) -> None:
        super().__init__()
        self.config = UnknownDynamicsConfig(**config)
        self.report_axes: tuple[str, ...] = ()
        """Coordinates the report format names: none; reports key coordinates by the measurables the
        agent names as drivers, so the format does not give the drivers away."""
        self.judge = judge
        self.max_turns = self.config.rounds + 2 + self.config.final_retries

    def _on_reset(self, seed: int) -> str:
        cfg = self.config
        self.streams = SeedStreams(seed, ("lab", "dynamics", "grader"))
        self.reference = decode(self.streams["lab"].integers(0, 4, size=(1, cfg.length), dtype=np.uint8))[0]
        if cfg.drivers is None or cfg.attractors is None:
            for _ in range(MAX_DRAWS):  # verified draws only: every declared attractor is realised
                problem = draw_dynamics_problem(self.streams["problem"])
                self._build(problem.drivers, problem.attractors, problem.measurables,
                            {**problem.properties, **cfg.properties})
                if self._verified():
                    break
        else:
            self._build(cfg.drivers, cfg.attractors, cfg.measurables or PAPER_MEASURABLES, dict(cfg.properties))
        self.order = [str(m) for m in self.streams["lab"].permutation(list(self.measurable_names))]
        self.rounds_used = 0
        self.phase: Literal["experiments", "report"] = "experiments"
        self.report_attempts = 0
        self.draft: ReportAction | None = None
        self.report: ReportAction | None = None
        self.visited: list[tuple[float, ...]] = []
        self._starts: list[HeldOutStart] | None = None
        return self._intro()

    def _build(self, drivers: tuple[str, ...], attractors: tuple[tuple[float, ...], ...],
               measurables: tuple[str, ...], entries: dict[str, dict[str, Any]]) -> None:
        cfg = self.config
        self.drivers, self.attractors, self.entries = drivers, attractors, entries
        self.measurable_names = measurables
        if cfg.measurables is not None:
            self.measurable_names = tuple(dict.fromkeys([*cfg.measurables, *self.drivers]))
        self.properties = build_measurables([*self.measurable_names, *self.drivers], self.entries, self.reference)
        props = [self.properties[d] for d in self.drivers]
        self.evolution = DirectedEvolution(self.drivers, self.attractors, kernel=cfg.kernel, sigma=cfg.sigma,
                                           mutations=cfg.mutations, p_explore=cfg.p_explore,
                                           stuck_patience=cfg.stuck_patience,
                                           driver_fn=lambda x: np.stack([p.batch(x) for p in props], axis=1))

    def _verified(self) -> bool:
        """The drawn dynamics converge and realise every declared attractor (verify's check v)."""
        truth = self.truth
        gaps = np.linalg.norm(np.asarray(truth.centroids) - np.asarray(self.attractors), axis=1)
        return truth.converged >= MIN_CONVERGED and float(gaps.max()) <= ATTRACTOR_TOL

    def _intro(self) -> str:
        cfg = self.config
        listed = "\n".join(f"- {m}: {self._describe(m)}" for m in self.order)
        attractor = '{"<measurable>": x, ..., "type": "fixed" | "2-cycle" | "other"}'
        keys = ("\nIn the report, give each attractor's coordinates keyed by the names of the measurables you "
                "list as drivers.")
        lines = [
            f"You are an experimental scientist studying an unknown dynamical process acting on DNA-like sequences "
            f"of length {cfg.length} over {{A,G,C,T}}. One experiment = (1) an initial sequence of {cfg.length} "
            f"letters, (2) a subset of the MEASURABLES below, (3) number_of_steps in 1..{cfg.max_steps}. The lab "
            "returns the sequence at every step and the chosen measurables at every step.",
            f"MEASURABLES (random order):\n{listed}",
            "Goal: explain (i) the long-term behaviour/attractors, (ii) the rule or objective the process follows, "
            f"(iii) the evidence. You may run at most {cfg.rounds} experiments; use as few as you need. Reply with "
            "JSON only:",
            '{"type": "experiment", "sequence": "...", "measurables": [...], "steps": k, "reasoning": "..."} or',
            '{"type": "report", "hypothesis": "...", "evidence": "...", "attractors": [' + attractor + '], '
            '"drivers": [...], "predictions": {...}}' + keys,
        ]
        if cfg.hint in ("examples", "structure", "distractor"):
            lines.append(self._hint(cfg.hint))
        return "\n".join(lines)

    def _distractor_axes(self) -> tuple[str, ...]:
        """A misleading space for `hint: distractor`: non-driver measurables where there are any."""
        others = [m for m in self.order if m not in self.drivers]
        axes = (others + [m for m in self.order if m in self.drivers])[: len(self.drivers)]
        return tuple(axes)

    def problem_signature(self) -> str:
        """Hash of this episode's hidden dynamics (drivers, their parameters, attractors)."""
        return signature({"drivers": self.drivers, "attractors": self.attractors, "measurables": sorted(self.order),
                          "entries": {k: v.model_dump() for k, v in entry_specs(self.order, self.entries).items()}})

    def _describe(self, name: str) -> str:
        return describe(self.properties[name])

    def _hint(self, kind: str) -> str:
        cfg = self.config
        if kind in ("structure", "distractor"):
            space = self.drivers if kind == "structure" else self._distractor_axes()
            if kind == "structure" and set(space) == set(PAPER_AXES) and len(self.attractors) == 2:
                return HINTS["structure"]
            n = len(self.attractors) if kind == "structure" else len(self.attractors) % 3 + 2
            count = {2: "two", 3: "three", 4: "four"}.get(n, str(n))
            return (f"The system roughly tends toward {count} different convergence points; design queries that "
                    f"span the ({', '.join(space)}) space to locate them and the rules of the evolution.")
        pal = self.properties.get("palindrome_score")
        if isinstance(pal, SequenceProperty) and pal.key == "palindrome_score" and "palindrome_score" in self.order:
            return HINTS["examples"]
        n = cfg.length
        seqs = ["A" * n, ("AC" * n)[:n], "G" * (n // 2) + "C" * (n - n // 2)]
        values = {m: self.properties[m].batch(encode(seqs)) for m in self.order}
        shown = "; ".join(f"{s}: " + ", ".join(f"{m} = {values[m][i]:.3f}" for m in self.order)
                          for i, s in enumerate(seqs))
        return "Examples of measurements: " + shown + "."

    # ------------------------------------------------------------------ truth (cached per dynamics)
    @property
    def truth(self) -> DynamicsTruth:
        cfg = self.config
        key = cfg.model_dump_json(include={"length", "kernel", "sigma", "mutations", "p_explore", "stuck_patience"})
        key += repr((self.drivers, self.attractors))
        key += repr(sorted((k, v.model_dump_json()) for k, v in entry_specs(self.drivers, self.entries).items()))
        if uses_episode_reference(self.drivers, self.entries):
            key += self.reference
        if key not in _TRUTH_CACHE:
            _TRUTH_CACHE[key] = estimate_truth(self.evolution, self.config.length, stream(0, "dynamics-truth"))
        return _TRUTH_CACHE[key]

    @property
    def starts(self) -> list[HeldOutStart]:
        if self._starts is None:
            self._starts = build_starts(self.evolution, self.truth, self.config.length, self.streams["grader"],
                                        n=self.config.n_heldout, end_steps=self.config.end_steps)
        return self._starts

    # ------------------------------------------------------------------ messages
    def _parse(self, message: str) -> ExperimentAction | ReportAction | ParseFailure:
        ids = [s.sid for s in self.starts] if self.phase == "report" else []
        return parse_dynamics_message(message, length=self.config.length, max_steps=self.config.max_steps,
                                      measurables=list(self.order), start_ids=ids, list_axes=self.report_axes)

    def _run(self, action: ExperimentAction) -> dict[str, Any]:
        path = self.evolution.evolve(action.sequence, action.steps, self.streams["dynamics"])
        codes = encode(path)
        values = {m: self.properties[m].batch(codes) for m in action.measurables}
        self.visited.extend(tuple(float(v) for v in row) for row in self.evolution.measure(codes))
        payload: dict[str, Any] = {
            "type": "lab_results", "round": self.rounds_used, "trajectory": path,
            "measurements": {m: [round(float(v), 3) for v in values[m]] for m in action.measurables},
        }
        if action.warnings:
            payload["warnings"] = action.warnings
        return payload

    def _accept_report(self, action: ReportAction) -> ReportAction:
        return _merge(self.draft, action)

    def _enter_report(self, prefix: str, info: dict[str, Any]) -> Reply:
        self.phase = "report"
        starts = {s.sid: s.sequence for s in self.starts}
        steps = self.config.end_steps
        fate = (f"its coordinates after {steps} steps, keyed like your attractors, e.g. "
                '{"S1": {"attractor": 1, "<measurable>": 0.5}}.')
        request = {
            "type": "report_request",
            "message": ("Experiments are over. Send your final report as JSON (type \"report\"). In `predictions`, "
                        "for each held-out start id give the attractor it converges to (1-based index into your "
                        "`attractors` list) and " + fate),
            "heldout_starts": starts,
        }
        return Reply(text=prefix + "\n" + json.dumps(request), info=info)

    # ------------------------------------------------------------------ grading and truth
    def ground_truth(self) -> dict[str, Any]:
        truth, cfg = self.truth, self.config
        moves = "single substitution" if cfg.mutations == 1 else f"{cfg.mutations} substitutions per step"
        return {"drivers": list(truth.drivers), "report_keys": [axis_key(d) for d in truth.drivers],
                "attractors": [list(c) for c in truth.centroids],
                "declared_attractors": [list(a) for a in self.attractors], "cycle_type": truth.cycle_type,
                "rule": f"greedy forced {moves} towards a {cfg.kernel}-weighted mix of the attractors "
                        f"in ({', '.join(truth.drivers)}) space",
                "heldout": [{"sid": s.sid, "basin": s.basin, "end_state": list(s.end_state)} for s in self.starts]}

    def grade(self) -> Score:
        truth = self.ground_truth()
        truth.pop("heldout", None)
        candidates = [m for m in self.order if m in DRIVER_CHOICES]  # never entropy or Hamming distance
        return grade_dynamics(self.report, self.truth, self.starts, self.visited, rounds_used=self.rounds_used,
                              judge=self.judge, judge_truth=truth, candidates=candidates)


def _merge(draft: ReportAction | None, final: ReportAction) -> ReportAction:
    """Fields missing from the final report are taken from an earlier (early) report."""
    if draft is None:
        return final
    return ReportAction(hypothesis=final.hypothesis or draft.hypothesis, evidence=final.evidence or draft.evidence,
                        attractors=final.attractors or draft.attractors, drivers=final.drivers or draft.drivers,
                        predictions=final.predictions or draft.predictions, warnings=final.warnings)


PRESETS: dict[str, dict[str, Any]] = {
    "paper": {"drivers": PAPER_AXES, "attractors": ((0.8, 0.8), (0.4, 0.2)), "measurables": PAPER_MEASURABLES},
}
"""Named configs; `paper` is the paper's lab (the same dynamics on every seed)."""

register_protocol(UnknownDynamicsProtocol.name, UnknownDynamicsProtocol, presets=PRESETS, overwrite=True,
                  grader_version=GRADER_VERSION,
                  summary="Find the attractors and rule of a hidden sequence dynamics (paper §6.2)")
