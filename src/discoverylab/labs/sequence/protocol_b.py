"""Protocol B, exploring unknown dynamics (spec §2.7; paper §6.2). Registered as `sequence/unknown-dynamics`.

Description: a hidden directed-evolution process acts on sequences of length 30; the agent must find
its attractors, its driving properties and its rule in at most 6 experiments.
Actions (JSON): `{"type": "experiment", "sequence", "measurables", "steps", "reasoning"}` or
`{"type": "report", "hypothesis", "evidence", "attractors", "drivers", "predictions"}`. After the
experiments (or an early report) a mandatory report turn lists 20 held-out starts to predict.
Observation: JSON `lab_results` with the trajectory and the chosen measurables per step (3 decimals).
Scoring: `grade_dynamics` (attractor F1, cycle structure, driver Jaccard, basin accuracy, end-state
skill; coverage as a process metric; optional judge for the paper's Table 5 items).
Difficulty knobs: hint (`none` | `examples` | `structure` | `distractor`), measurables, attractors,
basin width sigma, mutations per step, exploration noise, rounds, steps.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from discoverylab.labs.core.seeding import SeedStreams, stream
from discoverylab.labs.protocol import Protocol, Reply, Score, register_protocol
from discoverylab.labs.sequence.evolution import DirectedEvolution
from discoverylab.labs.sequence.grading_dynamics import (
    DynamicsTruth,
    HeldOutStart,
    build_starts,
    estimate_truth,
    grade_dynamics,
)
from discoverylab.labs.sequence.judge import JudgeClient
from discoverylab.labs.sequence.parsing import ParseFailure
from discoverylab.labs.sequence.parsing_dynamics import ExperimentAction, ReportAction, parse_dynamics_message
from discoverylab.labs.sequence.properties import PropertyParams, compute_all, decode

MEASURABLE_TEXT = {
    "gc_content": "fraction of G/C bases",
    "palindrome_score": "fraction of positions where the sequence equals its reverse complement "
                        "(A<->T, C<->G, then reversed)",
    "hamming_distance": "fraction of positions that differ from a hidden reference sequence",
    "entropy_score": "diversity of 2-mers (normalised Shannon entropy)",
}
HINTS = {
    "examples": "Examples of sequences with palindrome_score = 1.0: AAAAAAATTTTTTT, GGGGGGGCCCCCCC, AGAGAGTACTCTCT.",
    "structure": "The system roughly tends toward two different convergence points; design queries that span the "
                 "(gc_content, palindrome_score) space to locate them and the rules of the evolution.",
}
_TRUTH_CACHE: dict[str, DynamicsTruth] = {}


class UnknownDynamicsConfig(BaseModel):
    """Knobs of Protocol B; defaults follow the paper (N=30, 6 rounds, <= 20 steps, 4 measurables)."""

    model_config = ConfigDict(extra="forbid")

    length: int = Field(30, ge=4, le=200)
    rounds: int = Field(6, ge=1, le=50)
    max_steps: int = Field(20, ge=1, le=200)
    measurables: tuple[str, ...] = ("gc_content", "palindrome_score", "hamming_distance", "entropy_score")
    hint: Literal["none", "examples", "structure", "distractor"] = "none"
    drivers: tuple[str, ...] = ("gc_content", "palindrome_score")
    attractors: tuple[tuple[float, float], ...] = ((0.8, 0.8), (0.4, 0.2))
    kernel: Literal["gaussian", "nearest", "inverse_square", "sigmoid"] = "gaussian"
    sigma: float = Field(0.1, gt=0.0)
    mutations: int = Field(1, ge=1)
    p_explore: float = Field(0.0, ge=0.0, le=1.0)
    invalid_consumes_round: bool = True
    n_heldout: int = Field(20, ge=2, le=100)
    end_steps: int = Field(20, ge=1, le=200)
    final_retries: int = Field(1, ge=0, le=5)


class UnknownDynamicsProtocol(Protocol):
    """Protocol B; see the module docstring."""

    name = "sequence/unknown-dynamics"

    def __init__(self, judge: JudgeClient | None = None, **config: Any) -> None:
        super().__init__()
        self.config = UnknownDynamicsConfig(**config)
        if set(self.config.drivers) - {"gc_content", "palindrome_score"} or len(self.config.drivers) != 2:
            raise ValueError("Protocol B reports attractors as (gc, pal): drivers must be gc_content and palindrome_score")
        self.judge = judge
        self.max_turns = self.config.rounds + 2 + self.config.final_retries

    def _on_reset(self, seed: int) -> str:
        cfg = self.config
        self.streams = SeedStreams(seed, ("lab", "dynamics", "grader"))
        reference = decode(self.streams["lab"].integers(0, 4, size=(1, cfg.length), dtype=np.uint8))[0]
        self.params = PropertyParams(reference=reference)
        self.evolution = DirectedEvolution(cfg.drivers, cfg.attractors, kernel=cfg.kernel, sigma=cfg.sigma,
                                           mutations=cfg.mutations, p_explore=cfg.p_explore, params=self.params)
        self.order = [str(m) for m in self.streams["lab"].permutation(list(cfg.measurables))]
        self.rounds_used = 0
        self.phase: Literal["experiments", "report"] = "experiments"
        self.report_attempts = 0
        self.draft: ReportAction | None = None
        self.report: ReportAction | None = None
        self.visited: list[tuple[float, float]] = []
        self._starts: list[HeldOutStart] | None = None
        return self._intro()

    def _intro(self) -> str:
        cfg = self.config
        listed = "\n".join(f"- {m}: {MEASURABLE_TEXT.get(m, m)}" for m in self.order)
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
            '{"type": "report", "hypothesis": "...", "evidence": "...", "attractors": [{"gc": x, "pal": y, '
            '"type": "fixed" | "2-cycle" | "other"}], "drivers": [...], "predictions": {...}}',
        ]
        if cfg.hint in ("examples", "structure"):
            lines.append(HINTS[cfg.hint])
        if cfg.hint == "distractor":
            lines.append(HINTS["structure"])
        return "\n".join(lines)

    # ------------------------------------------------------------------ truth (cached per dynamics)
    @property
    def truth(self) -> DynamicsTruth:
        key = self.config.model_dump_json(include={"length", "drivers", "attractors", "kernel", "sigma",
                                                   "mutations", "p_explore"})
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
                                      measurables=list(self.order), start_ids=ids)

    def _on_step(self, message: str) -> Reply:
        action = self._parse(message)
        if self.phase == "report":
            return self._report_step(action)
        cfg = self.config
        info: dict[str, Any] = {"action": action.as_info()}
        if isinstance(action, ReportAction):
            self.draft = action
            return self._enter_report("Report received.", info)
        if isinstance(action, ParseFailure):
            info["error"] = action.message
            if cfg.invalid_consumes_round:
                self.rounds_used += 1
            payload: dict[str, Any] = {"type": "error", "round": self.rounds_used, "error": action.message,
                                       "experiments_left": cfg.rounds - self.rounds_used}
        else:
            self.rounds_used += 1
            payload = self._run(action)
        info["round"] = self.rounds_used
        if self.rounds_used >= cfg.rounds:
            return self._enter_report(json.dumps(payload), info)
        if self.rounds_used == cfg.rounds - 1:
            payload["note"] = ("This is the final round. If you run an experiment now, you will still be asked "
                               "for a report afterwards.")
        return Reply(text=json.dumps(payload), info=info)

    def _run(self, action: ExperimentAction) -> dict[str, Any]:
        path = self.evolution.evolve(action.sequence, action.steps, self.streams["dynamics"])
        values = compute_all(path, names=sorted(set(action.measurables) | {"gc_content", "palindrome_score"}),
                             params=self.params)
        self.visited.extend(zip(values["gc_content"].tolist(), values["palindrome_score"].tolist(), strict=True))
        payload: dict[str, Any] = {
            "type": "lab_results", "round": self.rounds_used, "trajectory": path,
            "measurements": {m: [round(float(v), 3) for v in values[m]] for m in action.measurables},
        }
        if action.warnings:
            payload["warnings"] = action.warnings
        return payload

    def _enter_report(self, prefix: str, info: dict[str, Any]) -> Reply:
        self.phase = "report"
        starts = {s.sid: s.sequence for s in self.starts}
        request = {
            "type": "report_request",
            "message": ("Experiments are over. Send your final report as JSON (type \"report\"). In `predictions`, "
                        "for each held-out start id give the attractor it converges to (1-based index into your "
                        f"`attractors` list) and its (gc, pal) after {self.config.end_steps} steps, e.g. "
                        '{"S1": {"attractor": 1, "gc": 0.5, "pal": 0.5}}.'),
            "heldout_starts": starts,
        }
        return Reply(text=prefix + "\n" + json.dumps(request), info=info)

    def _report_step(self, action: ExperimentAction | ReportAction | ParseFailure) -> Reply:
        self.report_attempts += 1
        info: dict[str, Any] = {"action": action.as_info()}
        if isinstance(action, ReportAction):
            self.report = _merge(self.draft, action)
            notes = (" Notes: " + "; ".join(action.warnings)) if action.warnings else ""
            return Reply(text="Report recorded." + notes, done=True, info=info)
        error = ("Experiments are closed; send your report." if isinstance(action, ExperimentAction)
                 else action.message)
        info["error"] = error
        if self.report_attempts <= self.config.final_retries:
            return Reply(text=json.dumps({"type": "error", "error": error + " Please send the report again."}),
                         info=info)
        self.report = self.draft
        return Reply(text="No valid report; the episode is over.", done=True, info=info)

    # ------------------------------------------------------------------ grading and truth
    def ground_truth(self) -> dict[str, Any]:
        truth = self.truth
        return {"drivers": list(truth.drivers), "attractors": [list(c) for c in truth.centroids],
                "declared_attractors": [list(a) for a in self.config.attractors], "cycle_type": truth.cycle_type,
                "rule": "greedy forced single substitution towards a gaussian-weighted mix of the attractors "
                        "in (gc_content, palindrome_score) space",
                "heldout": [{"sid": s.sid, "basin": s.basin, "end_state": list(s.end_state)} for s in self.starts]}

    def grade(self) -> Score:
        truth = self.ground_truth()
        truth.pop("heldout", None)
        return grade_dynamics(self.report, self.truth, self.starts, self.visited, rounds_used=self.rounds_used,
                              judge=self.judge, judge_truth=truth)


def _merge(draft: ReportAction | None, final: ReportAction) -> ReportAction:
    """Fields missing from the final report are taken from an earlier (early) report."""
    if draft is None:
        return final
    return ReportAction(hypothesis=final.hypothesis or draft.hypothesis, evidence=final.evidence or draft.evidence,
                        attractors=final.attractors or draft.attractors, drivers=final.drivers or draft.drivers,
                        predictions=final.predictions or draft.predictions, warnings=final.warnings)


register_protocol(UnknownDynamicsProtocol.name, UnknownDynamicsProtocol,
                  summary="Find the attractors and rule of a hidden sequence dynamics (paper §6.2)")
