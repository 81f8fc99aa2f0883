"""The macro lab's experiment protocol: `macro/causal-discovery` (spec §3.5).

Description: the agent studies the economy as a black box. Each JSON experiment sets some of the
10 tunables and a run length; the lab answers with summary statistics and a trajectory. Errors
(unknown keys, out-of-range values, malformed JSON) get an error reply and do not use the budget,
but they count against the Workflow score. The episode ends with the agent's final report (causal
graph, claims, predictions for 5 held-out settings) or at the turn limit.

Scoring: the five-criterion rubric of spec §3.7 (`grading.grade_episode`); score = Net / 5.
Difficulty knobs: budget, population size (`structure`), ground-truth measurement settings.
Registered ids: `macro/causal-discovery`.
"""

from __future__ import annotations

import json
import logging
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from discoverylab.labs.macroecon.ground_truth import EffectGraph, GroundTruthSettings, effect_graph
from discoverylab.labs.macroecon.model import MacroRun, simulate
from discoverylab.labs.macroecon.observation import observation_window
from discoverylab.labs.macroecon.params import (
    MacroParams,
    MacroStructure,
    inventory_bound_unemployment,
    long_run_unemployment,
)
from discoverylab.labs.macroecon.parsing import (
    ExperimentRequest,
    FinalReport,
    ParseFailure,
    parse_agent_message,
)
from discoverylab.labs.macroecon.prompt import first_message, held_out_text
from discoverylab.labs.macroecon.results import (
    HeldOutSetting,
    held_out_settings,
    held_out_truth,
    round_sig,
    run_summary,
    run_trajectory,
)
from discoverylab.labs.protocol import Protocol, Reply, Score, register_protocol

logger = logging.getLogger(__name__)

KEY_EFFECTS: tuple[str, ...] = (
    "gdp_real", "unemployment", "inflation", "avg_price", "gov_debt", "household_cash_mean")


class MacroLabConfig(BaseModel):
    """Everything that defines a macro-lab episode besides the seed (the lab's spec)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    budget: int = Field(default=10, ge=1, le=100)
    held_out: int = Field(default=5, ge=1, le=20)
    max_turns: int = Field(default=40, ge=2)
    structure: MacroStructure = MacroStructure()
    ground_truth: GroundTruthSettings = GroundTruthSettings()
    key_effects: tuple[str, ...] = KEY_EFFECTS
    cache_dir: str | None = None


class ExperimentRecord(BaseModel):
    """One experiment that ran: the complete parameter set and what the agent said about it."""

    experiment_id: int
    turn: int
    params: dict[str, float]
    number_of_steps: int
    form: str
    hypothesis: str = ""
    design: str = ""
    update_from_previous: str = ""


class EpisodeLog(BaseModel):
    """What the grader needs: a pure record of the episode (re-gradable offline)."""

    seed: int
    budget: int
    experiments: list[ExperimentRecord] = Field(default_factory=list)
    invalid_messages: int = 0
    report: FinalReport | None = None
    held_out: list[HeldOutSetting] = Field(default_factory=list)


def protocol_seed_stream(seed: int, purpose: int) -> np.random.Generator:
    """Protocol-level streams, disjoint from the simulator's (`spawn_key` outside its range)."""
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(100 + purpose,)))


def _reply(payload: dict[str, Any]) -> str:
    return json.dumps(payload, separators=(",", ":"))


class MacroCausalDiscovery(Protocol):
    """Causal discovery in the Tiny Macroecon Lab (see the module docstring)."""

    name: ClassVar[str] = "macro/causal-discovery"

    def __init__(self, config: MacroLabConfig | None = None, judge: Any = None) -> None:
        super().__init__()
        self.config = config or MacroLabConfig()
        self.max_turns = self.config.max_turns
        self.judge = judge
        self.log = EpisodeLog(seed=0, budget=self.config.budget)
        self.runs: dict[int, MacroRun] = {}

    @property
    def budget_left(self) -> int:
        return self.config.budget - len(self.log.experiments)

    def _on_reset(self, seed: int) -> str:
        settings = held_out_settings(protocol_seed_stream(seed, 0), self.config.held_out)
        self.log = EpisodeLog(seed=seed, budget=self.config.budget, held_out=settings)
        self.runs = {}
        return first_message(self.config.budget, settings)

    def _on_step(self, message: str) -> Reply:
        parsed = parse_agent_message(message)
        if isinstance(parsed, ParseFailure):
            return self._error(parsed.error, {"kind": "error", "error": parsed.error})
        if isinstance(parsed, FinalReport):
            self.log.report = parsed
            text = _reply({"type": "episode_end", "message": "Final report received. Thank you.",
                           "experiments_used": len(self.log.experiments), "budget": self.config.budget})
            return Reply(text=text, done=True, info={"action": parsed.model_dump()})
        if self.budget_left <= 0:
            error = (f"the experiment budget ({self.config.budget}) is used up; send your final report "
                     '({"type": "report", ...})')
            return self._error(error, parsed.model_dump())
        return self._run_experiment(parsed)

    def _error(self, error: str, action: dict[str, Any]) -> Reply:
        self.log.invalid_messages += 1
        text = _reply({"type": "error", "error": error, "budget_remaining": self.budget_left,
                       "note": "nothing was run; errors do not use the budget"})
        return Reply(text=text, info={"action": action, "error": error})

    def _run_experiment(self, request: ExperimentRequest) -> Reply:
        params = MacroParams(**request.params)
        experiment_id = len(self.log.experiments) + 1
        seed = self.seed if self.seed is not None else 0
        run = simulate(params, request.number_of_steps, seed, self.config.structure)
        self.runs[experiment_id] = run
        self.log.experiments.append(ExperimentRecord(
            experiment_id=experiment_id, turn=self.turn, params=params.model_dump(),
            number_of_steps=request.number_of_steps, form=request.form, hypothesis=request.hypothesis,
            design=request.design, update_from_previous=request.update_from_previous))
        payload: dict[str, Any] = {
            "type": "lab_results", "experiment_id": experiment_id, "params_used": params.model_dump(),
            "number_of_steps": request.number_of_steps, "summary": run_summary(run),
            "trajectory": run_trajectory(run, request.full_trajectory),
            "budget_remaining": self.budget_left,
        }
        if request.last_observation:
            window = observation_window(list(run.indicators))
            payload["last_observation"] = [round_sig(float(x)) for x in window]
        text = _reply(payload)
        if self.budget_left <= 0:
            text += ("\nThe experiment budget is used up. Send your final report now.\n"
                     + held_out_text(self.log.held_out))
        return Reply(text=text, info={"action": request.model_dump(), "experiment_id": experiment_id})

    # ------------------------------------------------------------------ truth and grading
    def effect_graph(self) -> EffectGraph:
        """The measured reference graph for this lab's structure (cached)."""
        return effect_graph(self.config.structure, self.config.ground_truth, self.config.cache_dir)

    def ground_truth(self) -> dict[str, Any]:
        """Hidden truth for oracles and judges: measured graph, held-out answers, analytical law."""
        seed = self.seed if self.seed is not None else 0
        truth, default = held_out_truth(self.log.held_out, seed, self.config.structure)
        default_params = MacroParams()
        return {
            "effect_graph": self.effect_graph().model_dump(mode="json"),
            "held_out": [s.model_dump() for s in self.log.held_out],
            "held_out_truth": truth,
            "default_targets": default,
            "u_star_default": long_run_unemployment(default_params),
            "u_inventory_bound_default": inventory_bound_unemployment(default_params, self.config.structure),
            "key_effects": list(self.config.key_effects),
        }

    def grade(self) -> Score:
        """The five-criterion rubric of spec §3.7 (auto parts, plus the judge if one was given)."""
        from discoverylab.labs.macroecon.grading import grade_episode

        return grade_episode(self.log, self.config, runs=self.runs, judge=self.judge)


def make_macro_protocol(judge: Any = None, **options: Any) -> MacroCausalDiscovery:
    """Registry factory: keyword options are `MacroLabConfig` fields (nested ones as dicts)."""
    return MacroCausalDiscovery(MacroLabConfig(**options), judge=judge)


register_protocol(MacroCausalDiscovery.name, make_macro_protocol,
                  summary="Tiny Macroecon Lab: discover the causal graph of an agent-based economy "
                          "with a budget of JSON experiments", overwrite=True)
