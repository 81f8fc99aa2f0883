"""The macro lab's observation: 16 indicators over the last 4 quarters = 64 numbers (spec §3.4).

Layout: `obs[4*k + q]` is indicator k at quarter t-3+q (q = 0 oldest ... 3 newest), float32.
Before quarter 3 the missing quarters repeat the initial state. Agents see raw values; the
normalised form (every entry in [0, 1]) exists for learners and for the framework's property
contract.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Indicator names in observation order (index k = 0..15).
INDICATORS: tuple[str, ...] = (
    "gdp_real", "gdp_nominal", "unemployment", "inflation", "avg_price", "avg_markup", "consumption",
    "inventory", "unmet_demand_share", "firm_profit", "household_cash_mean", "gov_transfers",
    "tax_revenue", "gov_debt", "policy_rate", "credit_tightness",
)
INDICATOR_INDEX: dict[str, int] = {name: k for k, name in enumerate(INDICATORS)}
N_INDICATORS = len(INDICATORS)
WINDOW = 4
OBS_SIZE = N_INDICATORS * WINDOW

#: Indicators that are shares or rates: a 0.005 absolute tolerance applies to claims about them.
RATE_INDICATORS: frozenset[str] = frozenset(
    {"unemployment", "inflation", "avg_markup", "unmet_demand_share", "policy_rate", "credit_tightness"})

INDICATOR_MEANINGS: dict[str, str] = {
    "gdp_real": "real output, total units produced this quarter",
    "gdp_nominal": "nominal output, units times prices",
    "unemployment": "share of households without a job",
    "inflation": "quarterly change of the average price",
    "avg_price": "unweighted mean of firm prices",
    "avg_markup": "mean net markup of firms",
    "consumption": "realised nominal household spending",
    "inventory": "total firm inventories (units)",
    "unmet_demand_share": "share of planned spending that found no goods",
    "firm_profit": "total firm profit (sales minus wages)",
    "household_cash_mean": "mean household cash",
    "gov_transfers": "government transfers paid this quarter",
    "tax_revenue": "income-tax revenue this quarter",
    "gov_debt": "outstanding government debt",
    "policy_rate": "central-bank policy rate",
    "credit_tightness": "bank credit conditions index",
}

#: Typical magnitudes of level indicators (default run, 1,000 households), for x/(x + scale).
#: Per-household levels are scaled by the population so the normalisation is size-free.
DEFAULT_LEVEL_SCALES: dict[str, float] = {
    "gdp_real": 0.85, "gdp_nominal": 10.0, "avg_price": 12.0, "consumption": 10.0, "inventory": 0.6,
    "firm_profit": 1.5, "household_cash_mean": 20.0, "gov_transfers": 2.5, "tax_revenue": 1.7,
    "gov_debt": 250.0,
}
_PER_HOUSEHOLD = frozenset({"gdp_real", "gdp_nominal", "consumption", "inventory", "firm_profit",
                            "gov_transfers", "tax_revenue", "gov_debt"})


def observation_window(rows: Sequence[np.ndarray]) -> np.ndarray:
    """Build the 64-vector from the indicator rows seen so far (row 0 = initial state)."""
    if not rows:
        raise ValueError("observation_window needs at least the initial indicator row")
    last = [rows[max(len(rows) - WINDOW + q, 0)] for q in range(WINDOW)]
    window = np.stack(last, axis=1)  # (16, 4): indicator-major, oldest quarter first
    return window.reshape(OBS_SIZE).astype(np.float32)


def normalise_observation(obs: np.ndarray, n_households: int = 1000) -> np.ndarray:
    """Map a raw 64-vector into [0, 1]: rates clipped, levels squashed as x/(|x| + scale).

    Inflation is centred (0.5 + inflation) so that deflation stays visible; profit, which can be
    negative, is squashed symmetrically around 0.5. Both are small deviations from spec §3.4,
    which clips every rate to [0, 1].
    """
    out = np.empty(OBS_SIZE, dtype=np.float64)
    raw = np.asarray(obs, dtype=np.float64).reshape(N_INDICATORS, WINDOW)
    for k, name in enumerate(INDICATORS):
        x = raw[k]
        if name == "inflation":
            y = 0.5 + x
        elif name in RATE_INDICATORS:
            y = x
        else:
            scale = DEFAULT_LEVEL_SCALES[name] * (n_households if name in _PER_HOUSEHOLD else 1.0)
            y = 0.5 + 0.5 * x / (np.abs(x) + scale) if name == "firm_profit" else x / (np.abs(x) + scale)
        out[k * WINDOW : (k + 1) * WINDOW] = np.clip(y, 0.0, 1.0)
    return out.astype(np.float32)
