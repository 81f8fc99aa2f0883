"""Macro lab simulator: conservation, determinism, the u* law and the non-edges (spec §7)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discoverylab.labs.macroecon.model import MacroEconomy, simulate
from discoverylab.labs.macroecon.observation import INDICATOR_INDEX, INDICATORS
from discoverylab.labs.macroecon.params import (
    TUNABLES,
    MacroParams,
    MacroStructure,
    inventory_bound_unemployment,
    long_run_unemployment,
)

SMALL = MacroStructure(n_households=200, n_firms=4)


def _col(run_indicators: np.ndarray, name: str) -> np.ndarray:
    return run_indicators[:, INDICATOR_INDEX[name]]


def _check_conservation(economy: MacroEconomy, quarters: int) -> None:
    previous_cash = economy.state.cash.sum()
    previous_debt = economy.state.debt
    for _ in range(quarters):
        economy.step()
        flow = economy.flows[-1]
        cash = economy.state.cash
        assert (cash >= 0.0).all()
        expected = flow.wages - flow.taxes + flow.transfers - flow.spending
        assert cash.sum() - previous_cash == pytest.approx(expected, rel=1e-9, abs=1e-6)
        # Taxes never reduce debt: the debt grows by exactly the transfers.
        assert economy.state.debt - previous_debt == pytest.approx(flow.transfers, rel=1e-12)
        assert (economy.state.inventory >= -1e-9).all()
        assert (economy.state.inventory <= economy.params.inventory_capacity + 1e-9).all()
        previous_cash, previous_debt = cash.sum(), economy.state.debt


def test_money_identity_and_nonnegative_cash_default() -> None:
    _check_conservation(MacroEconomy(MacroParams(), seed=3), 120)


_tunable_values = st.fixed_dictionaries(
    {t.key: st.floats(t.low, t.high, allow_nan=False) for t in TUNABLES})


@settings(max_examples=15, deadline=None)
@given(values=_tunable_values, seed=st.integers(0, 2**31 - 1))
def test_money_identity_holds_for_any_parameters(values: dict[str, float], seed: int) -> None:
    _check_conservation(MacroEconomy(MacroParams(**values), seed=seed, structure=SMALL), 40)


def test_indicators_match_the_flows() -> None:
    economy = MacroEconomy(MacroParams(), seed=1, structure=SMALL)
    for _ in range(30):
        row = economy.step()
        flow = economy.flows[-1]
        assert row[INDICATOR_INDEX["tax_revenue"]] == pytest.approx(flow.taxes)
        assert row[INDICATOR_INDEX["gov_transfers"]] == pytest.approx(flow.transfers)
        assert row[INDICATOR_INDEX["consumption"]] == pytest.approx(flow.spending, rel=1e-9)
        employed = (economy.state.employer >= 0).sum()
        assert row[INDICATOR_INDEX["unemployment"]] == pytest.approx(1 - employed / SMALL.n_households)
        assert 0.0 <= row[INDICATOR_INDEX["unmet_demand_share"]] <= 1.0


def test_initial_state_is_the_forecast_steady_state() -> None:
    economy = MacroEconomy(MacroParams(), seed=0)
    st0 = economy.state
    assert st0.unemployment == pytest.approx(0.10)
    workforce = np.bincount(st0.employer[st0.employer >= 0], minlength=20)
    assert workforce.max() - workforce.min() <= 1  # round-robin
    np.testing.assert_allclose(st0.inventory, np.clip(75.0 - st0.output, 0, 150))
    np.testing.assert_allclose(st0.price, 10.0 * 1.2)


def test_same_seed_same_run_and_seed_matters() -> None:
    a = simulate(MacroParams(g0=0.3), 60, seed=11, structure=SMALL)
    b = simulate(MacroParams(g0=0.3), 60, seed=11, structure=SMALL)
    c = simulate(MacroParams(g0=0.3), 60, seed=12, structure=SMALL)
    np.testing.assert_array_equal(a.indicators, b.indicators)
    assert not np.array_equal(a.indicators, c.indicators)


def test_shorter_run_is_a_prefix_of_a_longer_one() -> None:
    short = simulate(MacroParams(), 50, seed=5, structure=SMALL)
    long = simulate(MacroParams(), 120, seed=5, structure=SMALL)
    np.testing.assert_array_equal(short.indicators, long.indicators[:51])


@pytest.mark.parametrize(("g0", "tau0"), [(0.25, 0.20), (0.15, 0.10), (0.30, 0.30), (0.35, 0.30)])
def test_long_run_unemployment_law(g0: float, tau0: float) -> None:
    params = MacroParams(g0=g0, tau0=tau0)
    assert inventory_bound_unemployment(params, MacroStructure()) < long_run_unemployment(params)
    means = [simulate(params, 200, seed).window_mean("unemployment", 101, 200) for seed in range(4)]
    assert float(np.mean(means)) == pytest.approx(long_run_unemployment(params), abs=0.02)


def test_law_breaks_where_inventories_bind() -> None:
    # u* would be 1/6 but per-firm sales cannot exceed I^max/2: u >= 1 - 20*30/(2*1000) = 0.7.
    params = MacroParams(inventory_capacity=30.0)
    bound = inventory_bound_unemployment(params, MacroStructure())
    assert bound > long_run_unemployment(params) + 0.3
    u = simulate(params, 200, seed=0).window_mean("unemployment", 101, 200)
    assert u >= bound - 0.02


def test_policy_rate_does_not_move_prices_or_long_run_unemployment() -> None:
    seeds = range(4)
    low = [simulate(MacroParams(r0=0.0), 200, s) for s in seeds]
    high = [simulate(MacroParams(r0=0.2), 200, s) for s in seeds]
    # Prices are set before households spend: the first quarter's prices are untouched by r0.
    for a, b in zip(low, high, strict=True):
        assert a.indicators[1, INDICATOR_INDEX["avg_price"]] == b.indicators[1, INDICATOR_INDEX["avg_price"]]
    for name, tolerance in (("avg_price", 0.02), ("unemployment", 0.01)):
        diffs = [b.window_mean(name, 101, 200) - a.window_mean(name, 101, 200)
                 for a, b in zip(low, high, strict=True)]
        assert abs(float(np.mean(diffs))) < tolerance
    # ...while it does change household cash (the channel it acts through).
    cash = [b.window_mean("household_cash_mean", 101, 200) - a.window_mean("household_cash_mean", 101, 200)
            for a, b in zip(low, high, strict=True)]
    assert min(cash) > 1.0


def test_credit_tightness_and_bank_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    reference = simulate(MacroParams(), 80, seed=2, structure=SMALL).indicators
    monkeypatch.setattr(MacroEconomy, "credit_tightness", lambda self, u: 0.123)
    altered = simulate(MacroParams(), 80, seed=2, structure=SMALL.model_copy(update={"bank_equity": 5.0}))
    others = [k for k, name in enumerate(INDICATORS) if name != "credit_tightness"]
    np.testing.assert_array_equal(reference[:, others], altered.indicators[:, others])


def test_tax_revenue_does_not_reduce_debt() -> None:
    run = simulate(MacroParams(tau0=0.5), 60, seed=4, structure=SMALL)
    debt, transfers = _col(run.indicators, "gov_debt"), _col(run.indicators, "gov_transfers")
    np.testing.assert_allclose(np.diff(debt), transfers[1:])
    assert _col(run.indicators, "tax_revenue")[1:].sum() > 0


def test_bank_state_is_reported() -> None:
    economy = MacroEconomy(MacroParams(), seed=0, structure=SMALL)
    for _ in range(10):
        economy.step()
    bank = economy.bank_state()
    assert bank["loans"] >= 0 and bank["capital_ratio"] > 0
    assert 0.0 <= bank["credit_tightness"] <= 1.0


def test_scales_to_many_households() -> None:
    big = MacroStructure(n_households=20_000, n_firms=400)
    run = simulate(MacroParams(), 12, seed=0, structure=big)
    assert np.isfinite(run.indicators).all()
    assert run.indicators[-1, INDICATOR_INDEX["gdp_real"]] > 0
