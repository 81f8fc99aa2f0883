"""Edge credit above the published economy's graph (`macroecon/prior.py`): copying it earns nothing."""

from __future__ import annotations

from typing import Any

import pytest

from discoverylab.labs.agents import make_agent, run_episode
from discoverylab.labs.macroecon import prior
from discoverylab.labs.macroecon.episode import draw_structure
from discoverylab.labs.macroecon.grading import grade_episode
from discoverylab.labs.macroecon.ground_truth import GroundTruthSettings, measure_effect_graph
from discoverylab.labs.macroecon.params import MacroStructure
from discoverylab.labs.macroecon.parsing import EdgeStatement, FinalReport
from discoverylab.labs.macroecon.protocol import MacroCausalDiscovery
from discoverylab.labs.protocol import make_protocol

SMALL = {"structure": {"n_households": 200, "n_firms": 4},
         "ground_truth": {"replicates": 2, "steps": 100, "long_window": (51, 100)}}
NAME = "macro/causal-discovery"


def _oracle(seed: int, **options: Any) -> tuple[MacroCausalDiscovery, Any]:
    proto = make_protocol(NAME, **{**SMALL, **options})
    assert isinstance(proto, MacroCausalDiscovery)
    return proto, run_episode(proto, make_agent(NAME, "oracle", proto), seed)


@pytest.mark.parametrize(("f1", "prior_f1", "expected"), [
    (0.63, 0.63, 0.0), (1.0, 0.63, 1.0), (0.5, 0.63, 0.0), (0.815, 0.63, 0.5), (0.4, None, 0.4), (0.7, 1.0, 0.7)])
def test_chance_correction(f1: float, prior_f1: float | None, expected: float) -> None:
    assert prior.chance_corrected(f1, prior_f1) == pytest.approx(expected)


PINNED = draw_structure(7, MacroStructure(n_households=200, n_firms=4)).model_dump()


@pytest.mark.parametrize(("seed", "options"), [
    (0, {}), (1, {}), (0, {"structure": PINNED, "draw_structure": False})])  # per-seed draws; a generated lab's pinned draw
def test_the_copied_published_graph_earns_no_edge_credit(seed: int, options: dict[str, Any]) -> None:
    proto, oracle = _oracle(seed, **options)
    base = prior.published_structure(proto.log.structure or proto.config.structure)
    assert base == MacroStructure(n_households=200, n_firms=4)
    published = prior.published_graph(base, proto.config.ground_truth)
    copied = [EdgeStatement.model_validate(s) for s in prior.published_statements(published)]
    report = (proto.log.report or FinalReport()).model_copy(update={"edges": copied})
    score = grade_episode(proto.log.model_copy(update={"report": report}), proto.config)
    goal = score.details["goal_progress"]
    assert goal["edge_f1_raw"] == pytest.approx(goal["prior_f1"]) and goal["prior_f1"] > 0.2
    assert score.parts["hypothesis"] == 0.0 and goal["edge_f1"] == 0.0
    assert oracle.score.parts["hypothesis"] == pytest.approx(1.0)  # the true graph still gets full credit


def test_the_published_economy_keeps_the_raw_f1() -> None:
    """With `draw_structure` false the published graph is the answer: nothing to correct against."""
    _, oracle = _oracle(0, draw_structure=False)
    goal = oracle.score.details["goal_progress"]
    assert goal["prior_f1"] is None and goal["edge_f1"] == goal["edge_f1_raw"] == pytest.approx(1.0)


def test_the_default_published_graph_is_package_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default config's published graph is read, not measured per grade or per process."""
    def refuse(*_args: Any, **_kw: Any) -> Any:
        raise AssertionError("measured the published graph instead of reading the package data")

    monkeypatch.setattr(prior, "effect_graph", refuse)
    graph = prior.published_graph(MacroStructure(), GroundTruthSettings())
    assert graph.structure_hash == MacroStructure().config_hash() and graph.settings == GroundTruthSettings()
    assert prior.packaged_graph(MacroStructure(n_households=100), GroundTruthSettings()) is None


@pytest.mark.slow
def test_the_package_data_matches_the_simulator() -> None:
    """`benchmarks/macro_prior.py` regenerates the data when this fails."""
    stored = prior.packaged_graph(MacroStructure(), GroundTruthSettings())
    measured = measure_effect_graph(MacroStructure(), GroundTruthSettings())
    assert stored is not None
    assert [(e.cause, e.effect, e.horizon, e.sign) for e in stored.edges] == \
        [(e.cause, e.effect, e.horizon, e.sign) for e in measured.edges]
    assert [e.delta for e in stored.edges] == pytest.approx([e.delta for e in measured.edges])
