"""The macro lab's episode records and config, shared by the protocol and its grader.

They live here (not in `protocol`) so that `grading` and `protocol` do not import each other. Also
here: the per-seed draw of the economy (`draw_structure`) and the simulation seeds. Every seed is a
different economy: its hidden behavioural constants are drawn, so its causal graph is measured per
economy. Experiments run with their own simulation seeds, and the held-out truth is simulated with
seeds the agent never gets, so running a held-out setting gives an estimate, not the answer.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from discoverylab.labs.macroecon.ground_truth import GroundTruthSettings
from discoverylab.labs.macroecon.params import MacroStructure
from discoverylab.labs.macroecon.parsing import FinalReport
from discoverylab.labs.macroecon.results import HeldOutSetting

KEY_EFFECTS: tuple[str, ...] = (
    "gdp_real", "unemployment", "inflation", "avg_price", "gov_debt", "household_cash_mean")
HELD_OUT_REPLICATES = 3
"""Hidden seeds averaged for each held-out setting's truth."""

#: Ranges of the hidden behavioural constants an episode draws (uniform; population sizes are kept).
STRUCTURE_RANGES: dict[str, tuple[float, float]] = {
    "wage": (6.0, 16.0),
    "forecast_smoothing": (0.2, 0.9),
    "markup_reversion": (0.05, 0.6),
    "idiosyncratic_shock": (0.02, 0.25),
    "aggregate_shock_rho": (0.3, 0.95),
    "aggregate_shock_sigma": (0.005, 0.06),
    "price_sensitivity": (0.5, 10.0),
    "unemployed_transfer_weight": (0.5, 4.0),
    "initial_unemployment": (0.02, 0.25),
}


class MacroLabConfig(BaseModel):
    """Everything that defines a macro-lab episode besides the seed (the lab's spec)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    budget: int = Field(default=10, ge=1, le=100)
    held_out: int = Field(default=5, ge=1, le=20)
    max_turns: int = Field(default=40, ge=2)
    structure: MacroStructure = MacroStructure()
    draw_structure: bool = True
    """Each seed draws the economy's hidden constants (`STRUCTURE_RANGES`) and causal switches
    (`draw_switches`) on top of `structure`; preset `paper` turns this off (the paper's one economy on
    every seed)."""
    complexity: float = Field(default=0.5, ge=0.0, le=1.0)
    """Chance that each optional mechanism of a drawn economy is switched on (0: only the constants
    are drawn)."""
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
    sim_seed: int | None = None
    """The simulation seed it ran with (None: the episode seed, as in logs written before seeds varied)."""


class EpisodeLog(BaseModel):
    """What the grader needs: a pure record of the episode (re-gradable offline)."""

    seed: int
    budget: int
    experiments: list[ExperimentRecord] = Field(default_factory=list)
    invalid_messages: int = 0
    report: FinalReport | None = None
    held_out: list[HeldOutSetting] = Field(default_factory=list)
    structure: MacroStructure | None = None
    """The episode's economy (None: the config's)."""


def protocol_seed_stream(seed: int, purpose: int) -> np.random.Generator:
    """Protocol-level streams, disjoint from the simulator's (`spawn_key` outside its range)."""
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(100 + purpose,)))


def draw_switches(rng: np.random.Generator, complexity: float = 1.0) -> dict[str, float | bool]:
    """The economy's causal switches: which links exist, their signs and strengths (`MacroStructure`).

    `complexity` in 0..1 is the chance that each optional mechanism (rate channels, deposit interest,
    tax rules, an active central bank, wage indexation) is switched on; the draws happen whatever it
    is, so one seed's economy changes only where a switch flips. Among them: tunables that do nothing
    (`c2` without a wealth effect, `markup` without markup targeting, `kappa` without demand pricing),
    links that flip sign (the rate channel, demand pricing, taxes and debt) and new links (a Taylor
    rule makes the policy rate respond to the economy)."""
    u = rng.random(12)
    strength = rng.uniform(size=12)
    on = u < complexity
    channel = int(rng.integers(3))  # spending's rate channel: none, saving motive, interest-income motive
    out: dict[str, float | bool] = {
        "rate_consumption": (0.0, round(0.5 + 2.5 * float(strength[0]), 3),
                             round(-0.5 - 2.5 * float(strength[0]), 3))[channel] if on[0] else 0.5,
        "rate_hiring": round(0.5 + 2.5 * float(strength[1]), 3) if on[1] else 0.0,
        "deposit_interest": round(0.3 + 0.7 * float(strength[2]), 3) if on[2] else 0.0,
        "transfer_cyclicality": round(6.0 * float(strength[3]), 3) if on[3] else 2.0,
        "taxes_reduce_debt": bool(on[4]),
        "tax_transfers": bool(on[5]),
        "taylor_inflation": round(1.0 + 4.0 * float(strength[6]), 3) if on[6] else 0.0,
        "taylor_unemployment": round(0.5 + 2.0 * float(strength[7]), 3) if on[6] and strength[8] < 0.6 else 0.0,
        "wage_indexation": round(0.2 + 0.6 * float(strength[8]), 3) if on[7] else 0.0,
        "wage_productivity": round(0.5 + 0.5 * float(strength[9]), 3) if on[8] else 0.0,
        "wealth_effect": not bool(on[9]),
        "pricing_to_demand": (-1.0 if strength[10] < 0.5 else 0.0) if on[10] else 1.0,
        "markup_targeting": not bool(on[11]),
    }
    return out


EPISODE_STREAMS: tuple[int, int] = (7, 8)
"""Protocol streams of an episode's draw (constants, switches); the public panel (`prior`) uses others."""


def draw_structure(seed: int, base: MacroStructure, complexity: float = 0.5,
                   streams: tuple[int, int] = EPISODE_STREAMS) -> MacroStructure:
    """The economy of episode `seed`: `base` with its behavioural constants and causal switches drawn
    (from the protocol `streams`: the episodes' by default)."""
    rng = protocol_seed_stream(seed, streams[0])
    drawn: dict[str, object] = {k: round(float(rng.uniform(lo, hi)), 3) for k, (lo, hi) in STRUCTURE_RANGES.items()}
    drawn.update(draw_switches(protocol_seed_stream(seed, streams[1]), complexity))
    return MacroStructure(**{**base.model_dump(), **drawn})


def experiment_seed(seed: int, experiment_id: int) -> int:
    """Simulation seed of one experiment (each experiment is a fresh draw of the shocks)."""
    return int(np.random.SeedSequence(int(seed), spawn_key=(300, int(experiment_id))).generate_state(1)[0])


def held_out_seeds(seed: int, replicates: int = HELD_OUT_REPLICATES) -> list[int]:
    """Hidden simulation seeds of the held-out truth (never used for experiments, never shown)."""
    return [int(s) for s in np.random.SeedSequence(int(seed), spawn_key=(400,)).generate_state(replicates)]


def episode_structure(log: EpisodeLog, config: MacroLabConfig) -> MacroStructure:
    """The economy a log was run on."""
    return log.structure if log.structure is not None else config.structure
