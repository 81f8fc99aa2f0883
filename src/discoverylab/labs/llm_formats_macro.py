"""LLM action formats of the macro lab (`macro/causal-discovery`): experiments, then the report.

The experiment format lets the model change a bounded number of tunables and state what the
previous result showed; the report format writes edges, claims and predictions as patterned
one-line strings (cheap in tokens for a small model) and renders them into the lab's JSON report.
`llm_formats` registers `macro_format` for the protocol; the macro lab's modules are imported only
when a format is built, so importing the formats does not load the economy model.
"""

from __future__ import annotations

import json
import re
from typing import Any

from discoverylab.labs.llm_format_base import (
    DEFAULT_LIMITS,
    ActionFormat,
    FormatLimits,
    bounded_decimal,
    clamped,
    object_schema,
)
from discoverylab.labs.protocol import Protocol

UPDATE_CHANGES = ("rose", "fell", "did not change")
UPDATE_VERDICTS = ("supports", "contradicts", "neither supports nor contradicts")


def _macro_experiment_ids(protocol: Protocol | None, message: str) -> list[int]:
    """Ids of the experiments run so far (from the protocol's log, else from the lab's replies)."""
    log = getattr(protocol, "log", None)
    experiments = getattr(log, "experiments", None)
    if experiments is not None:
        return [int(e.experiment_id) for e in experiments]
    return sorted({int(m) for m in re.findall(r'"experiment_id":\s*(\d+)', message)})


def macro_format(protocol: Protocol | None, message: str, limits: FormatLimits = DEFAULT_LIMITS) -> ActionFormat:
    """Experiments (up to `limits.macro_max_factors` changed tunables) while budget remains, then the report.

    After the first experiment the model also states what the previous result showed (indicator,
    direction, verdict on its hypothesis); the format turns that into `update_from_previous`.
    """
    from discoverylab.labs.macroecon.observation import INDICATORS
    from discoverylab.labs.macroecon.params import MAX_STEPS, MIN_STEPS, TUNABLES

    budget_left = getattr(protocol, "budget_left", 1)
    done = _macro_experiment_ids(protocol, message)
    if budget_left <= 0 or "final report now" in message:
        return _macro_report(protocol, [t.key for t in TUNABLES], list(INDICATORS), done, limits)
    update = object_schema({"indicator": {"type": "string", "enum": list(INDICATORS)},
                      "change": {"type": "string", "enum": list(UPDATE_CHANGES)},
                      "verdict": {"type": "string", "enum": list(UPDATE_VERDICTS)}})
    steps = {"type": "integer", "enum": sorted({MIN_STEPS, 20, 50, 100, 150, MAX_STEPS})}
    head: dict[str, Any] = {"update": update} if done else {}
    head |= {"hypothesis": {"type": "string", "maxLength": 200}, "design": {"type": "string", "maxLength": 200}}
    changes = [object_schema({"parameter": {"const": t.key}, "value": bounded_decimal(len(str(int(t.high))))}) for t in TUNABLES]
    if limits.macro_max_factors <= 1:
        schema: dict[str, Any] = {"anyOf": [object_schema(head | change["properties"] | {"number_of_steps": steps})
                                            for change in changes]}
    else:
        schema = object_schema(head | {"changes": {"type": "array", "items": {"anyOf": changes}, "minItems": 0,
                                             "maxItems": limits.macro_max_factors},
                                 "number_of_steps": steps})

    ranges = {t.key: (t.low, t.high) for t in TUNABLES}
    previous = done[-1] if done else 0

    def render(data: dict[str, Any]) -> str:
        picked = data.get("changes", [data] if "parameter" in data else [])
        params = {c["parameter"]: clamped(c["value"], *ranges[c["parameter"]]) for c in picked}
        note = data.get("update")
        update_text = (f"In experiment {previous}, {note['indicator']} {note['change']}; this {note['verdict']} "
                       "the previous hypothesis." if isinstance(note, dict) else "")
        return json.dumps({"type": "experiment", "hypothesis": data["hypothesis"], "design": data["design"],
                           "update_from_previous": update_text, "params": params,
                           "number_of_steps": int(data["number_of_steps"])})

    first = "" if not done else (
        f"First say what experiment {previous} showed: one indicator, whether it rose or fell, and whether "
        "that supports your previous hypothesis. Then ")
    what = ("the one parameter you change, its new value" if limits.macro_max_factors <= 1 else
            f"the parameters you change (up to {limits.macro_max_factors}; none for the default baseline) and "
            "their new values")
    return ActionFormat(
        name="experiment",
        schema=schema,
        render=render,
        instructions=(
            first + ("run" if done else "Run") + " one experiment: state a causal hypothesis naming the parameter "
            f"and the indicator, the design that could falsify it, {what} and the run length in quarters."
        ),
    )


def _alternatives(names: list[str]) -> str:
    return "(" + "|".join(re.escape(n) for n in names) + ")"


def _macro_report(protocol: Protocol | None, tunables: list[str], indicators: list[str],
                  experiment_ids: list[int], limits: FormatLimits) -> ActionFormat:
    """The report with edges, claims and predictions as one-line strings (`g0 -> unemployment (-, long)`).

    As JSON objects an edge costs a small model 30 tokens and a prediction 36, so eight edges and
    five predictions overflow its reply; as patterned strings they cost 13 and 14 (SmolLM2
    tokenizer), and the pattern still fixes every choice.
    """
    from discoverylab.labs.macroecon.parsing import STATISTICS

    log = getattr(protocol, "log", None)
    setting_ids = [str(s.setting_id) for s in getattr(log, "held_out", [])]
    edge_re = rf"^{_alternatives(tunables + indicators)} -> {_alternatives(indicators)} \((\+|-|0), (short|long)\)$"
    prediction_re = r"^(0|1|0\.[0-9]{1,3}|1\.0{1,3}), ([0-9]{1,7}(\.[0-9]{1,3})?)$"
    fields: dict[str, Any] = {
        "edges": {"type": "array", "items": {"type": "string", "pattern": edge_re},
                  "minItems": 1, "maxItems": limits.macro_max_edges},
    }
    claim_re = ""
    if experiment_ids:
        ids = _alternatives([str(i) for i in experiment_ids])
        claim_re = (rf"^exp {ids} {_alternatives(indicators)} {_alternatives(list(STATISTICS))} = "
                    rf"(-?[0-9]{{1,9}}(\.[0-9]{{1,6}})?)( vs exp {ids})?$")
        fields["claims"] = {"type": "array", "items": {"type": "string", "pattern": claim_re},
                            "minItems": 0, "maxItems": limits.macro_max_claims}
    fields |= {
        "predictions": {"type": "array", "items": {"type": "string", "pattern": prediction_re},
                        "minItems": len(setting_ids), "maxItems": len(setting_ids)},
        "narrative": {"type": "string", "maxLength": 300},
    }
    schema = object_schema(fields)

    def render(data: dict[str, Any]) -> str:
        edges = [{"cause": m[1], "effect": m[2], "sign": m[3], "horizon": m[4]}
                 for m in (re.match(edge_re, e) for e in data["edges"]) if m]
        claims = [_macro_claim(m) for m in (re.match(claim_re, c) for c in data.get("claims", [])) if m]
        predictions = [{"setting_id": sid, "unemployment_mean_q50_100": float(m[1]), "gov_debt_final": float(m[2])}
                       for sid, m in zip(setting_ids, (re.match(prediction_re, p) for p in data["predictions"]),
                                         strict=False) if m]
        return json.dumps({"type": "report", "causal_graph": {"edges": edges}, "claims": claims,
                           "predictions": predictions, "narrative": data["narrative"]})

    claims_text = (f", up to {limits.macro_max_claims} claims quoting a statistic of one of your experiments as "
                   "`exp 2 unemployment mean = 0.08` (add ` vs exp 1` for the difference to experiment 1)"
                   ) if experiment_ids else ""
    return ActionFormat(
        name="report",
        schema=schema,
        render=render,
        instructions=(
            f"Write the final report: up to {limits.macro_max_edges} causal edges written `cause -> effect (sign, horizon)`, "
            f"e.g. `g0 -> unemployment (-, long)`{claims_text}, predictions for the {len(setting_ids)} held-out "
            "settings in the listed order, each `unemployment_mean_q50_100, gov_debt_final` (e.g. `0.08, 12000`), "
            "and a short narrative."
        ),
    )


def _macro_claim(match: re.Match[str]) -> dict[str, Any]:
    """A claim of the macro report from its one-line form: a level, or a difference to another experiment."""
    experiment, indicator, stat, value = int(match[1]), match[2], match[3], float(match[4])
    claim: dict[str, Any] = {"experiment_id": experiment, "indicator": indicator, "statistic": stat, "value": value}
    baseline = int(match[7]) if match[7] else 0
    if baseline and baseline != experiment:
        claim |= {"kind": "difference", "baseline_id": baseline}
    return claim
