"""Parameters of the Macroeconomic Simulation Lab (spec §3.2).

Two tables: the agent-tunable `MacroParams` (the paper's Table 6 with the meanings resolved in
spec §5, R17-R20) and the hidden `MacroStructure` (population sizes and behavioural constants that
agents never see). Both are pydantic models so that range checks, error messages and hashing for
caches come from one place.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


@dataclass(frozen=True, slots=True)
class TunableSpec:
    """One row of the agent-facing parameter table."""

    key: str
    default: float
    low: float
    high: float
    meaning: str
    is_rate: bool = False


#: The tunables in the paper's order; `number_of_steps` is a run setting, not a model parameter.
TUNABLES: tuple[TunableSpec, ...] = (
    TunableSpec("r0", 0.02, 0.0, 0.5, "central-bank policy interest rate", True),
    TunableSpec("tau0", 0.20, 0.0, 0.6, "income-tax rate on wages", True),
    TunableSpec("g0", 0.25, 0.0, 0.6, "base government transfers as a share of last quarter's nominal GDP", True),
    TunableSpec("kappa", 0.10, 0.0, 1.0, "sensitivity of firm markups (prices) to demand pressure", True),
    TunableSpec("c1", 0.60, 0.0, 1.0, "household consumption propensity out of income and wealth", True),
    TunableSpec("c2", 0.40, 0.0, 1.0, "weight of prior cash holdings in household consumption", True),
    TunableSpec("phi", 1.0, 0.25, 4.0, "labour productivity (units of output per worker per quarter)"),
    TunableSpec("markup", 1.20, 1.0, 2.0, "firms' target gross markup over unit labour cost"),
    TunableSpec("initial_cash", 100.0, 0.0, 1000.0, "every household's starting cash"),
    TunableSpec("inventory_capacity", 150.0, 10.0, 1000.0, "maximum inventory a firm can store (units)"),
)
TUNABLE_KEYS: tuple[str, ...] = tuple(t.key for t in TUNABLES)
TUNABLE_BY_KEY: dict[str, TunableSpec] = {t.key: t for t in TUNABLES}
MIN_STEPS, MAX_STEPS, DEFAULT_STEPS = 10, 200, 100


class MacroParams(BaseModel):
    """Agent-tunable parameters; out-of-range values raise `pydantic.ValidationError`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    r0: float = Field(default=0.02, ge=0.0, le=0.5)
    tau0: float = Field(default=0.20, ge=0.0, le=0.6)
    g0: float = Field(default=0.25, ge=0.0, le=0.6)
    kappa: float = Field(default=0.10, ge=0.0, le=1.0)
    c1: float = Field(default=0.60, ge=0.0, le=1.0)
    c2: float = Field(default=0.40, ge=0.0, le=1.0)
    phi: float = Field(default=1.0, ge=0.25, le=4.0)
    markup: float = Field(default=1.20, ge=1.0, le=2.0)
    initial_cash: float = Field(default=100.0, ge=0.0, le=1000.0)
    inventory_capacity: float = Field(default=150.0, ge=10.0, le=1000.0)

    def with_changes(self, **changes: float) -> MacroParams:
        """A validated copy with some parameters replaced."""
        return MacroParams(**{**self.model_dump(), **changes})

    def changed_from_default(self) -> dict[str, float]:
        """The parameters that differ from the defaults (what an experiment varied)."""
        default = MacroParams()
        return {k: v for k, v in self.model_dump().items() if v != getattr(default, k)}


class MacroStructure(BaseModel):
    """Hidden structural constants (spec §3.2); part of the lab spec, never shown to agents."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_households: int = Field(default=1000, ge=10, le=1_000_000)
    n_firms: int = Field(default=20, ge=1, le=10_000)
    wage: float = Field(default=10.0, gt=0.0)
    forecast_smoothing: float = Field(default=0.5, ge=0.0, le=1.0)
    markup_reversion: float = Field(default=0.25, ge=0.0, le=1.0)
    markup_noise: float = Field(default=0.02, ge=0.0)
    markup_min: float = 0.10
    markup_max: float = 0.50
    idiosyncratic_shock: float = Field(default=0.10, ge=0.0)
    aggregate_shock_rho: float = Field(default=0.8, ge=0.0, lt=1.0)
    aggregate_shock_sigma: float = Field(default=0.03, ge=0.0)
    price_sensitivity: float = Field(default=5.0, ge=0.0)
    unemployed_transfer_weight: float = Field(default=2.0, gt=0.0)
    initial_unemployment: float = Field(default=0.10, ge=0.0, le=1.0)
    bank_equity: float = Field(default=1000.0, gt=0.0)
    # Causal switches (defaults = the paper's economy). A drawn economy switches links on and off,
    # flips their signs and sets their strengths, so no fixed graph fits every seed.
    rate_consumption: float = Field(default=0.5, ge=-3.0, le=3.0)
    """Spending scales by (1 - rate_consumption * rate): > 0 saving motive, < 0 interest-income motive,
    0 no rate channel."""
    rate_hiring: float = Field(default=0.0, ge=0.0, le=3.0)
    """Firms' output target scales by (1 - rate_hiring * rate): a borrowing-cost channel."""
    deposit_interest: float = Field(default=0.0, ge=0.0, le=1.0)
    """Share of the policy rate (per quarter, rate/4) paid on household cash, financed by new debt."""
    transfer_cyclicality: float = Field(default=2.0, ge=0.0, le=6.0)
    """Fiscal rule G = g0 (1 + transfer_cyclicality * u) NGDP."""
    taxes_reduce_debt: bool = False
    """Tax revenue pays down government debt (the paper: taxes are recorded only)."""
    tax_transfers: bool = False
    """Transfers are taxed like wages."""
    taylor_inflation: float = Field(default=0.0, ge=0.0, le=10.0)
    """Active central bank: rate = clip(r0 + taylor_inflation * inflation - taylor_unemployment *
    (u - 0.1), 0, 0.5); both 0: the rate is r0 (the paper)."""
    taylor_unemployment: float = Field(default=0.0, ge=0.0, le=5.0)
    wage_indexation: float = Field(default=0.0, ge=0.0, le=0.9)
    """The wage follows the price level: w_t = wage * (P_{t-1} / P_0) ** wage_indexation."""
    wage_productivity: float = Field(default=0.0, ge=0.0, le=1.0)
    """The wage rises with labour productivity: w = wage * phi ** wage_productivity."""
    wealth_effect: bool = True
    """Households spend c2 of their cash (False: a fixed 0.4, so c2 does nothing)."""
    pricing_to_demand: float = Field(default=1.0, ge=-1.0, le=1.0)
    """Sign and weight of kappa's demand-pressure pricing (0: prices ignore demand pressure)."""
    markup_targeting: bool = True
    """Firms steer towards the `markup` tunable (False: towards a fixed 20%, so `markup` does nothing)."""

    def config_hash(self) -> str:
        """Stable short hash, used to key ground-truth caches."""
        return stable_hash(self.model_dump())


def stable_hash(obj: Any) -> str:
    """A short sha256 of the key-sorted JSON of `obj`."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def long_run_unemployment(params: MacroParams, structure: MacroStructure | None = None) -> float:
    """The analytical stationary unemployment u* of spec §3.6.3 (valid while inventories do not bind).

    In a stationary state household spending equals income and output equals sales, so transfers
    G = w*·L·(mu* + tau); with the fiscal rule G = g(1 + c·u)·NGDP (c = 2 in the paper's economy) this
    pins u. Exact only for the paper's switches (no tax on transfers, no rate channels).
    """
    mu = min(max(params.markup - 1.0, 0.10), 0.50)
    cyc = structure.transfer_cyclicality if structure is not None else 2.0
    if params.g0 <= 0.0:
        return 1.0
    if cyc <= 0.0:
        return 0.0 if (mu + params.tau0) <= params.g0 * (1.0 + mu) else 1.0
    value = ((mu + params.tau0) / (params.g0 * (1.0 + mu)) - 1.0) / cyc
    return float(min(max(value, 0.0), 1.0))


def inventory_bound_unemployment(params: MacroParams, structure: MacroStructure) -> float:
    """Lower bound on u where inventories bind: per-firm sales cannot exceed I^max/2 (spec §3.6.3)."""
    capacity = structure.n_firms * params.inventory_capacity / (2.0 * params.phi * structure.n_households)
    return float(max(0.0, 1.0 - capacity))
