"""The text the macro lab shows its agent (our wording of the paper's prompt, spec §3.5)."""

from __future__ import annotations

import json

from discoverylab.labs.macroecon.observation import INDICATOR_MEANINGS, INDICATORS
from discoverylab.labs.macroecon.params import DEFAULT_STEPS, MAX_STEPS, MIN_STEPS, TUNABLES
from discoverylab.labs.macroecon.parsing import STATISTICS
from discoverylab.labs.macroecon.results import HELD_OUT_STEPS, HELD_OUT_WINDOW, HeldOutSetting

EXPERIMENT_EXAMPLE = {
    "type": "experiment",
    "hypothesis": "Lower g0 reduces debt growth and raises unemployment",
    "design": "g0 0.25 -> 0.10, others default; 100 quarters; falsified if unemployment does not rise",
    "update_from_previous": "",
    "params": {"g0": 0.10},
    "number_of_steps": 100,
}
REPORT_EXAMPLE = {
    "type": "report",
    "causal_graph": {"edges": [
        {"cause": "g0", "effect": "unemployment", "sign": "-", "horizon": "long", "confidence": 0.8},
        {"cause": "r0", "effect": "unemployment", "sign": "0", "horizon": "long", "confidence": 0.6}]},
    "claims": [
        {"experiment_id": 2, "indicator": "gov_debt", "statistic": "max", "value": 35000},
        {"experiment_id": 2, "baseline_id": 1, "kind": "difference", "indicator": "unemployment",
         "statistic": "mean", "value": 0.12}],
    "predictions": [{"setting_id": "h1", "unemployment_mean_q50_100": 0.31, "gov_debt_final": 200000}],
    "narrative": "...",
}


def held_out_text(settings: list[HeldOutSetting]) -> str:
    """The held-out settings to predict, one per line."""
    first, last = HELD_OUT_WINDOW
    lines = [f"Held-out settings to predict ({HELD_OUT_STEPS}-quarter runs, other parameters at defaults): "
             f"for each give unemployment_mean_q50_100 (mean unemployment over quarters {first}-{last}) "
             "and gov_debt_final (government debt at the last quarter)."]
    lines += [f"  {s.setting_id}: {json.dumps(s.params)}" for s in settings]
    return "\n".join(lines)


def first_message(budget: int, n_held_out: int) -> str:
    """The system prompt and task statement sent at reset."""
    tunables = "\n".join(f"- `{t.key}` (default {t.default:g}, range [{t.low:g}, {t.high:g}]): {t.meaning}"
                         for t in TUNABLES)
    indicators = "\n".join(f"- `{name}`: {INDICATOR_MEANINGS[name]}" for name in INDICATORS)
    return f"""You are an economist studying an unknown macroeconomic simulation.

## Environment
You may run up to {budget} experiments. One experiment sets some parameters (the others stay at
their defaults) and a run length `number_of_steps` in {MIN_STEPS}..{MAX_STEPS} quarters (default
{DEFAULT_STEPS}). Every experiment is a fresh draw of the economy's random shocks, so compare runs
with care. The lab returns summary statistics ({", ".join(STATISTICS)}; argmax
and argmin are quarter numbers) of 16 indicators and a thinned trajectory; add
"full_trajectory": true to get every quarter of every indicator.

## Tunable parameters
{tunables}

## Indicators
{indicators}

## Workflow
- Hypothesis: state a causal claim.
- Design: choose parameter changes and a run length that could falsify it.
- Run: send one JSON experiment.
- Observe & update: say whether the result supports or contradicts the hypothesis (refer to the numbers).
- Iterate until your causal graph is stable, then send the final report (you may stop early).

## Messages
Send exactly one JSON object per message. Experiment:
{json.dumps(EXPERIMENT_EXAMPLE)}
Final report (edges: cause is a parameter or an indicator, effect an indicator, sign "+", "-" or
"0", horizon "short" = quarters 1-20 or "long" = quarters 101-200 of a 200-quarter run; claims quote
statistics of your own experiments, optionally as a difference or elasticity against a baseline
experiment; predictions for the held-out settings):
{json.dumps(REPORT_EXAMPLE)}

## Held-out settings
When your experiments close (the budget is used up, or you send a report before then), the lab lists
{n_held_out} held-out parameter settings and asks for your final report with predictions for them.
Experiments cannot be run after that; the first report sent while experiments are open only closes them.
"""
