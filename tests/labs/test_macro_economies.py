"""Economies that differ (issue #22): each seed's economy switches causal links on and off, flips
signs and sets strengths, so no fixed graph (the default's or another seed's) fits every seed."""

from __future__ import annotations

import numpy as np
import pytest

from discoverylab.labs.macroecon.episode import draw_structure, draw_switches, protocol_seed_stream
from discoverylab.labs.macroecon.model import simulate
from discoverylab.labs.macroecon.observation import INDICATOR_INDEX
from discoverylab.labs.macroecon.params import MacroParams, MacroStructure

SMALL = MacroStructure(n_households=200, n_firms=4)
SWITCHES = ("rate_consumption", "rate_hiring", "deposit_interest", "transfer_cyclicality", "taxes_reduce_debt",
            "tax_transfers", "taylor_inflation", "taylor_unemployment", "wage_indexation", "wage_productivity",
            "wealth_effect", "pricing_to_demand", "markup_targeting")


def _long_mean(structure: MacroStructure, indicator: str, steps: int = 120, **params: float) -> float:
    run = simulate(MacroParams(**params), steps, 5, structure)
    return float(run.indicators[steps // 2 :, INDICATOR_INDEX[indicator]].mean())


def test_seeds_draw_different_causal_switches() -> None:
    configs = [tuple(draw_structure(s, SMALL).model_dump()[k] for k in SWITCHES) for s in range(20)]
    assert len(set(configs)) == 20
    for i, key in enumerate(SWITCHES):  # every switch takes more than one value over 20 seeds
        assert len({c[i] for c in configs}) > 1, key


def test_complexity_zero_keeps_the_papers_links() -> None:
    paper = MacroStructure().model_dump()
    drawn = draw_switches(protocol_seed_stream(3, 8), complexity=0.0)
    assert all(drawn[k] == paper[k] for k in drawn if k != "taylor_unemployment")
    assert drawn["taylor_unemployment"] == 0.0


@pytest.mark.parametrize(("switch", "tunable"), [("markup_targeting", "markup"), ("wealth_effect", "c2")])
def test_a_switched_off_link_makes_its_tunable_inert(switch: str, tunable: str) -> None:
    off = SMALL.model_copy(update={switch: False})
    low, high = {tunable: 1.1 if tunable == "markup" else 0.1}, {tunable: 1.8 if tunable == "markup" else 0.9}
    a, b = simulate(MacroParams(**low), 60, 1, off), simulate(MacroParams(**high), 60, 1, off)
    assert np.array_equal(a.indicators, b.indicators)
    a, b = simulate(MacroParams(**low), 60, 1, SMALL), simulate(MacroParams(**high), 60, 1, SMALL)
    assert not np.array_equal(a.indicators, b.indicators)


def test_a_fiscal_rule_changes_what_taxes_do_to_debt() -> None:
    """Paper: taxes are recorded only, so tau0 lowers debt only through a smaller economy; when taxes
    pay debt down the effect is several times stronger."""
    def effect(structure: MacroStructure) -> float:
        return _long_mean(structure, "gov_debt", tau0=0.5) - _long_mean(structure, "gov_debt", tau0=0.1)

    assert effect(SMALL.model_copy(update={"taxes_reduce_debt": True})) < 3 * effect(SMALL) < 0


def test_the_rate_channel_on_spending_can_flip_sign() -> None:
    def effect(channel: float) -> float:
        structure = SMALL.model_copy(update={"rate_consumption": channel})
        return _long_mean(structure, "consumption", r0=0.4) - _long_mean(structure, "consumption", r0=0.0)

    assert effect(2.0) < 0 < effect(-2.0)


def test_an_active_central_bank_moves_the_policy_rate() -> None:
    taylor = SMALL.model_copy(update={"taylor_unemployment": 2.0})
    assert _long_mean(SMALL, "policy_rate", g0=0.1) == pytest.approx(0.02)
    assert _long_mean(taylor, "policy_rate", g0=0.1) != pytest.approx(_long_mean(taylor, "policy_rate", g0=0.4))
