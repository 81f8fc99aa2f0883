"""The macro lab's experiment protocol: `macro/causal-discovery` (spec §3.5).

Description: the agent studies the economy as a black box. Each JSON experiment sets some of the
10 tunables and a run length; the lab answers with summary statistics and a trajectory. Errors
(unknown keys, out-of-range values, malformed JSON) get an error reply and do not use the budget,
but they count against the Workflow score. The episode ends with the agent's final report (causal
graph, claims, predictions for 5 held-out settings) or at the turn limit.

Scoring: the five-criterion rubric of spec §3.7 (`grading.grade_episode`); the score counts the process
criteria only in proportion to the measured discovery (`headline.py`; the paper's Net stays in the labels).
Difficulty knobs: budget, population size (`structure`), ground-truth measurement settings.
Registered ids: `macro/causal-discovery`.
"""

from __future__ import annotations

import json
import logging
from typing import Any, ClassVar

from discoverylab.labs.macroecon.episode import (
    KEY_EFFECTS,
    EpisodeLog,
    ExperimentRecord,
    MacroLabConfig,
    draw_structure,
    episode_structure,
    experiment_seed,
    held_out_seeds,
    protocol_seed_stream,
)
from discoverylab.labs.macroecon.ground_truth import EffectGraph, effect_graph
from discoverylab.labs.macroecon.headline import GRADER_VERSION
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
    held_out_settings,
    held_out_truth,
    round_sig,
    run_summary,
    run_trajectory,
)
from discoverylab.labs.protocol import Protocol, Reply, Score, register_protocol

logger = logging.getLogger(__name__)

__all__ = ["KEY_EFFECTS", "EpisodeLog", "ExperimentRecord", "MacroCausalDiscovery", "MacroLabConfig",
           "make_macro_protocol", "protocol_seed_stream"]

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
        self.structure: MacroStructure = self.config.structure
        self.experiments_closed = False

    @property
    def budget_left(self) -> int:
        """Experiments the agent may still run (0 once experiments are closed)."""
        if self.experiments_closed:
            return 0
        return self.config.budget - len(self.log.experiments)

    def _on_reset(self, seed: int) -> str:
        settings = held_out_settings(protocol_seed_stream(seed, 0), self.config.held_out)
        self.structure = (draw_structure(seed, self.config.structure, self.config.complexity) if self.config.draw_structure
                          else self.config.structure)
        self.log = EpisodeLog(seed=seed, budget=self.config.budget, held_out=settings,
                              structure=self.structure if self.config.draw_structure else None)
        self.runs = {}
        self.experiments_closed = False
        return first_message(self.config.budget, len(settings))

    def _on_step(self, message: str) -> Reply:
        parsed = parse_agent_message(message)
        if isinstance(parsed, ParseFailure):
            return self._error(parsed.error, {"kind": "error", "error": parsed.error})
        if isinstance(parsed, FinalReport) and not self.experiments_closed:
            # The held-out settings stay hidden until experiments close, so they can never be run.
            self.experiments_closed = True
            text = ("Experiments are now closed; your report was not recorded. Send your final report now.\n"
                    + held_out_text(self.log.held_out))
            return Reply(text=text, info={"action": {"kind": "close_experiments"}})
        if isinstance(parsed, FinalReport):
            self.log.report = parsed
            text = _reply({"type": "episode_end", "message": "Final report received. Thank you.",
                           "experiments_used": len(self.log.experiments), "budget": self.config.budget})
            return Reply(text=text, done=True, info={"action": parsed.model_dump()})
        if self.budget_left <= 0:
            error = (f"the experiment budget ({self.config.budget}) is used up"
                     if len(self.log.experiments) >= self.config.budget else "experiments are closed")
            error += '; send your final report ({"type": "report", ...})'
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
        seed = experiment_seed(self.seed if self.seed is not None else 0, experiment_id)
        run = simulate(params, request.number_of_steps, seed, self.structure)
        self.runs[experiment_id] = run
        self.log.experiments.append(ExperimentRecord(
            experiment_id=experiment_id, turn=self.turn, params=params.model_dump(), sim_seed=seed,
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
            self.experiments_closed = True
            text += ("\nThe experiment budget is used up. Send your final report now.\n"
                     + held_out_text(self.log.held_out))
        return Reply(text=text, info={"action": request.model_dump(), "experiment_id": experiment_id})

    # ------------------------------------------------------------------ truth and grading
    def effect_graph(self) -> EffectGraph:
        """The measured reference graph for this lab's structure (cached)."""
        return effect_graph(episode_structure(self.log, self.config), self.config.ground_truth,
                            self.config.cache_dir)

    def problem_signature(self) -> str:
        """Hash of this episode's economy (its hidden constants)."""
        return self.structure.config_hash()

    def ground_truth(self) -> dict[str, Any]:
        """Hidden truth for oracles and judges: measured graph, held-out answers, analytical law."""
        seed = self.seed if self.seed is not None else 0
        truth, default = held_out_truth(self.log.held_out, held_out_seeds(seed), self.structure)
        default_params = MacroParams()
        return {
            "effect_graph": self.effect_graph().model_dump(mode="json"),
            "held_out": [s.model_dump() for s in self.log.held_out],
            "held_out_truth": truth,
            "default_targets": default,
            "u_star_default": long_run_unemployment(default_params),
            "u_inventory_bound_default": inventory_bound_unemployment(default_params, self.structure),
            "structure": self.structure.model_dump(),
            "key_effects": list(self.config.key_effects),
        }

    def grade(self) -> Score:
        """The five-criterion rubric of spec §3.7 (auto parts, plus the judge if one was given)."""
        from discoverylab.labs.macroecon.grading import grade_episode

        return grade_episode(self.log, self.config, runs=self.runs, judge=self.judge)


def make_macro_protocol(judge: Any = None, **options: Any) -> MacroCausalDiscovery:
    """Registry factory: keyword options are `MacroLabConfig` fields (nested ones as dicts)."""
    return MacroCausalDiscovery(MacroLabConfig(**options), judge=judge)


PRESETS: dict[str, dict[str, Any]] = {"paper": {"draw_structure": False}}
"""Named configs; `paper` is the one economy of the paper (the same causal graph on every seed)."""

register_protocol(MacroCausalDiscovery.name, make_macro_protocol, presets=PRESETS, grader_version=GRADER_VERSION,
                  summary="Tiny Macroecon Lab: discover the causal graph of an agent-based economy "
                          "with a budget of JSON experiments", overwrite=True)
