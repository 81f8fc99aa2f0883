"""The agent-based economy of the Macroeconomic Simulation Lab (spec §3.1, §3.3).

Households and firms are numpy arrays (one entry per agent), so a quarter costs a few dozen
vectorised operations whatever the population: thousands of households are cheap. The bank,
government and central bank are a handful of scalars.

Every random draw comes from named streams split off the episode seed, and every quarter draws the
same number of variates whatever the parameters. Two runs with the same seed therefore share their
shocks (common random numbers): differences between experiments are caused by the parameters alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from discoverylab.labs.macroecon.observation import INDICATOR_INDEX, N_INDICATORS, observation_window
from discoverylab.labs.macroecon.params import MacroParams, MacroStructure

_EPS = 1e-12
STREAM_NAMES: tuple[str, ...] = ("init", "labour", "markup", "shocks")


def make_streams(seed: int) -> dict[str, np.random.Generator]:
    """One generator per concern, split from the episode seed (`SeedSequence.spawn`)."""
    children = np.random.SeedSequence(int(seed)).spawn(len(STREAM_NAMES))
    return {name: np.random.default_rng(child) for name, child in zip(STREAM_NAMES, children, strict=True)}


@dataclass(slots=True)
class MacroState:
    """Everything carried from one quarter to the next (spec §3.3, "state carried from t-1")."""

    quarter: int
    cash: np.ndarray  # household cash m_i >= 0
    employer: np.ndarray  # firm index per household, -1 when unemployed
    inventory: np.ndarray  # I_j in [0, I^max]
    markup: np.ndarray  # net markup mu_j in [0.10, 0.50]
    price: np.ndarray  # p_j
    sales: np.ndarray  # units sold last quarter, S_{j,t-1}
    output: np.ndarray  # units produced last quarter, Y_{j,t-1}
    firm_cash: np.ndarray  # retained profits (negative = borrowing from the bank)
    debt: float
    unemployment: float
    ngdp: float
    avg_price: float
    aggregate_shock: float


@dataclass(slots=True)
class QuarterFlows:
    """Aggregate flows of one quarter, kept for conservation checks."""

    wages: float
    taxes: float
    transfers: float
    spending: float
    planned: float


class MacroEconomy:
    """A running economy: `step()` advances one quarter and appends a row of 16 indicators.

    Args:
        params: the agent-tunable parameters.
        seed: the episode seed (all draws derive from it).
        structure: hidden structural constants.
    """

    def __init__(self, params: MacroParams, seed: int, structure: MacroStructure | None = None) -> None:
        self.params = params
        self.structure = structure or MacroStructure()
        self.seed = int(seed)
        wp = self.structure.wage_productivity
        self._base_wage = self.structure.wage * params.phi ** wp if wp else self.structure.wage
        self._rng = make_streams(self.seed)
        self.state = self._initial_state()
        self._p0 = self.state.avg_price
        self._last_inflation = 0.0
        self.flows: list[QuarterFlows] = []
        self._rows: list[np.ndarray] = [self._indicator_row_initial()]

    # ------------------------------------------------------------------ set-up
    def _initial_state(self) -> MacroState:
        """Spec §3.3 "Initialisation": u_0 unemployment, forecast-consistent inventories (R24)."""
        s, p = self.structure, self.params
        n_h, n_f = s.n_households, s.n_firms
        employer = np.full(n_h, -1, dtype=np.int64)
        n_employed = int(round((1.0 - s.initial_unemployment) * n_h))
        chosen = self._rng["init"].permutation(n_h)[:n_employed]
        employer[chosen] = np.arange(n_employed) % n_f
        workforce = np.bincount(employer[employer >= 0], minlength=n_f).astype(np.float64)
        output = p.phi * workforce
        capacity = p.inventory_capacity
        inventory = np.clip(0.5 * capacity - output, 0.0, capacity)
        mu_star = self.mu_star
        markup = np.full(n_f, mu_star)
        price = np.full(n_f, self._base_wage / p.phi * (1.0 + mu_star))
        return MacroState(
            quarter=0, cash=np.full(n_h, p.initial_cash, dtype=np.float64), employer=employer,
            inventory=inventory, markup=markup, price=price, sales=output.copy(), output=output,
            firm_cash=np.zeros(n_f), debt=0.0, unemployment=1.0 - n_employed / n_h,
            ngdp=float(price @ output), avg_price=float(price.mean()), aggregate_shock=0.0,
        )

    @property
    def mu_star(self) -> float:
        """Target net markup mu* = markup - 1, clipped to the markup band (R19)."""
        s = self.structure
        target = self.params.markup - 1.0 if s.markup_targeting else 0.2
        return min(max(target, s.markup_min), s.markup_max)

    def policy_rate(self, unemployment: float, inflation: float) -> float:
        """r0, or an active central bank's rule around it (the economy's hidden switches)."""
        s, r0 = self.structure, self.params.r0
        if not (s.taylor_inflation or s.taylor_unemployment):
            return r0
        rule = r0 + s.taylor_inflation * inflation - s.taylor_unemployment * (unemployment - 0.1)
        return min(max(rule, 0.0), 0.5)

    def credit_tightness(self, unemployment: float) -> float:
        """Bank credit conditions: computed and reported, influence nothing (R16)."""
        return min(max(0.5 + 2.0 * (unemployment - 0.05), 0.0), 1.0)

    def _indicator_row_initial(self) -> np.ndarray:
        st, p = self.state, self.params
        row = np.zeros(N_INDICATORS)
        row[INDICATOR_INDEX["gdp_real"]] = st.output.sum()
        row[INDICATOR_INDEX["gdp_nominal"]] = st.ngdp
        row[INDICATOR_INDEX["unemployment"]] = st.unemployment
        row[INDICATOR_INDEX["avg_price"]] = st.avg_price
        row[INDICATOR_INDEX["avg_markup"]] = st.markup.mean()
        row[INDICATOR_INDEX["inventory"]] = st.inventory.sum()
        row[INDICATOR_INDEX["household_cash_mean"]] = st.cash.mean()
        row[INDICATOR_INDEX["policy_rate"]] = p.r0
        row[INDICATOR_INDEX["credit_tightness"]] = self.credit_tightness(st.unemployment)
        return row

    # ------------------------------------------------------------------ dynamics
    def set_policy(self, **levers: float) -> None:
        """Change policy levers (e.g. `r0`, `tau0`, `g0`) from the next quarter on."""
        self.params = self.params.with_changes(**levers)

    def step(self) -> np.ndarray:
        """Advance one quarter through the four phases of spec §3.3; return its 16 indicators."""
        s, p, st = self.structure, self.params, self.state
        rng = self._rng
        n_h, n_f = s.n_households, s.n_firms
        capacity = p.inventory_capacity
        # Fixed-size draws every quarter, whatever happens below (common random numbers).
        layoff_keys = rng["labour"].random(n_h)
        hire_keys = rng["labour"].random(n_h)
        firm_order = rng["labour"].permutation(n_f)
        markup_noise = rng["markup"].standard_normal(n_f)
        shock_draws = rng["shocks"].standard_normal(n_h + 1)

        # Phase 1: policy. G is money: it scales with last quarter's nominal GDP (R25).
        rate = self.policy_rate(st.unemployment, self._last_inflation)
        transfers = p.g0 * (1.0 + s.transfer_cyclicality * st.unemployment) * st.ngdp
        wage_level = self._base_wage * (st.avg_price / self._p0) ** s.wage_indexation if s.wage_indexation \
            else self._base_wage

        # Phase 2: firms forecast, hire or fire, produce and set prices.
        alpha = s.forecast_smoothing
        forecast = np.maximum(0.0, alpha * st.sales + (1.0 - alpha) * (0.5 * capacity - st.inventory))
        if s.rate_hiring:
            forecast = forecast * max(0.0, 1.0 - s.rate_hiring * rate)
        target = np.ceil(forecast / p.phi - 1e-9).astype(np.int64)
        employer = st.employer
        workforce = self._adjust_workforce(employer, target, layoff_keys, hire_keys, firm_order)
        output = p.phi * workforce
        pressure = np.minimum(np.maximum((st.sales - st.output) / np.maximum(st.output, 1.0), -1.0), 1.0)
        mu_star = self.mu_star
        markup = st.markup + s.markup_reversion * (mu_star - st.markup) + s.pricing_to_demand * p.kappa * pressure
        markup = np.minimum(np.maximum(markup + s.markup_noise * markup_noise, s.markup_min), s.markup_max)
        price = wage_level / p.phi * (1.0 + markup)

        # Phase 3: households earn, receive transfers, pay taxes and spend.
        employed = employer >= 0
        n_employed = int(employed.sum())
        wage = employed * wage_level
        omega_u = s.unemployed_transfer_weight
        weight = np.where(employed, 1.0, omega_u)
        transfer = weight * (transfers / (n_employed + omega_u * (n_h - n_employed)))
        disposable = wage * (1.0 - p.tau0) + transfer * (1.0 - p.tau0 if s.tax_transfers else 1.0)
        interest = s.deposit_interest * rate / 4.0 * st.cash
        disposable = disposable + interest
        shock = s.aggregate_shock_rho * st.aggregate_shock + s.aggregate_shock_sigma * shock_draws[0]
        sigma = s.idiosyncratic_shock
        eps = np.exp(shock + sigma * shock_draws[1:] - 0.5 * sigma * sigma)
        resources = st.cash + disposable
        appetite = max(0.0, 1.0 - s.rate_consumption * rate)
        planned = np.minimum(np.maximum(p.c1 * appetite * (disposable + (p.c2 if s.wealth_effect else 0.4) * st.cash) * eps, 0.0),
                             resources)
        total_planned = float(planned.sum())
        sold = self._allocate(price, total_planned, st.inventory + output)
        spending = float(price @ sold)
        spent_share = min(spending / total_planned, 1.0) if total_planned > _EPS else 1.0
        cash = np.maximum(resources - planned * spent_share, 0.0)
        inventory = np.minimum(capacity, st.inventory + output - sold)
        profit = price * sold - wage_level * workforce

        # Phase 4: government and bank. Taxes are recorded but do not reduce debt (paper) unless the
        # economy's fiscal rule says so; deposit interest is new debt.
        wage_bill = wage_level * n_employed
        tax_revenue = p.tau0 * (wage_bill + (transfers if s.tax_transfers else 0.0))
        debt = st.debt + transfers + float(interest.sum()) - (tax_revenue if s.taxes_reduce_debt else 0.0)
        unemployment = 1.0 - n_employed / n_h
        ngdp = float(price @ output)
        avg_price = float(price.sum()) / n_f
        inflation = (avg_price - st.avg_price) / st.avg_price
        self._last_inflation = inflation

        self.state = MacroState(
            quarter=st.quarter + 1, cash=cash, employer=employer, inventory=inventory, markup=markup,
            price=price, sales=sold, output=output, firm_cash=st.firm_cash + profit, debt=debt,
            unemployment=unemployment, ngdp=ngdp, avg_price=avg_price, aggregate_shock=shock,
        )
        self.flows.append(QuarterFlows(wages=wage_bill, taxes=tax_revenue, transfers=transfers,
                                       spending=total_planned * spent_share,
                                       planned=total_planned))
        row = np.empty(N_INDICATORS)
        row[:] = (output.sum(), ngdp, unemployment, inflation, avg_price, markup.mean(), spending,
                  inventory.sum(), 1.0 - spent_share, profit.sum(), cash.sum() / n_h, transfers, tax_revenue,
                  debt, rate, self.credit_tightness(unemployment))
        self._rows.append(row)
        return row

    def _adjust_workforce(self, employer: np.ndarray, target: np.ndarray, layoff_keys: np.ndarray,
                          hire_keys: np.ndarray, firm_order: np.ndarray) -> np.ndarray:
        """Lay off random surplus workers, then hire random unemployed in random firm order (in place)."""
        n_f = target.shape[0]
        workforce = np.bincount(employer[employer >= 0], minlength=n_f)
        excess = np.maximum(workforce - target, 0)
        if excess.any():
            idx = np.flatnonzero(employer >= 0)
            idx = idx[excess[employer[idx]] > 0]
            idx = idx[np.lexsort((layoff_keys[idx], employer[idx]))]
            firms = employer[idx]
            rank = np.arange(idx.size) - np.searchsorted(firms, firms, side="left")
            employer[idx[rank < excess[firms]]] = -1
            workforce = workforce - excess
        need = np.maximum(target - workforce, 0)
        if need.any():
            pool = np.flatnonzero(employer < 0)
            pool = pool[np.argsort(hire_keys[pool], kind="stable")]
            need_in_order = need[firm_order]
            cumulative = np.cumsum(need_in_order)
            got = np.clip(np.minimum(cumulative, pool.size) - (cumulative - need_in_order), 0, None)
            employer[pool[: int(got.sum())]] = np.repeat(firm_order, got)
            workforce = workforce.copy()
            workforce[firm_order] += got
        return workforce.astype(np.float64)

    def _allocate(self, price: np.ndarray, budget: float, stock: np.ndarray) -> np.ndarray:
        """Units sold per firm: softmax shares on relative price, one reallocation of unmet money."""
        logits = -self.structure.price_sensitivity * price / price.mean()
        share = np.exp(logits - logits.max())
        share /= share.sum()
        sold = np.minimum(share * budget / price, stock)
        unmet = budget - float(price @ sold)
        if unmet > _EPS * max(budget, 1.0):
            left = stock - sold
            open_firms = left > _EPS
            if open_firms.any():
                weights = np.where(open_firms, share, 0.0)
                weights /= weights.sum()
                sold = sold + np.minimum(unmet * weights / price, left)
        return sold

    # ------------------------------------------------------------------ views
    @property
    def quarter(self) -> int:
        return self.state.quarter

    @property
    def indicators(self) -> np.ndarray:
        """Indicator history, shape (quarters + 1, 16); row 0 is the initial state."""
        return np.vstack(self._rows)

    def observation(self) -> np.ndarray:
        """The 64-number observation of spec §3.4 for the current quarter."""
        return observation_window(self._rows)

    def bank_state(self) -> dict[str, float]:
        """Commercial-bank placeholders (R16): loans, equity, capital ratio, credit tightness."""
        loans = float(np.maximum(0.0, -self.state.firm_cash).sum())
        equity = self.structure.bank_equity
        return {"loans": loans, "equity": equity, "capital_ratio": equity / max(loans, 1.0),
                "credit_tightness": self.credit_tightness(self.state.unemployment)}


@dataclass(frozen=True, slots=True)
class MacroRun:
    """A finished simulation: parameters, seed and the indicator history (row 0 = initial state)."""

    params: MacroParams
    seed: int
    steps: int
    indicators: np.ndarray
    flows: list[QuarterFlows] = field(default_factory=list)

    def series(self, name: str) -> np.ndarray:
        """Quarters 1..steps of one indicator."""
        return self.indicators[1:, INDICATOR_INDEX[name]]

    def window_mean(self, name: str, first: int, last: int) -> float:
        """Mean of an indicator over quarters first..last (1-based, inclusive)."""
        values = self.indicators[first : last + 1, INDICATOR_INDEX[name]]
        return float(values.mean()) if values.size else math.nan


def simulate(params: MacroParams, steps: int, seed: int, structure: MacroStructure | None = None,
             *, keep_flows: bool = False) -> MacroRun:
    """Run `steps` quarters from the initial state and return the indicator history."""
    economy = MacroEconomy(params, seed, structure)
    for _ in range(int(steps)):
        economy.step()
    return MacroRun(params=params, seed=int(seed), steps=int(steps), indicators=economy.indicators,
                    flows=economy.flows if keep_flows else [])
