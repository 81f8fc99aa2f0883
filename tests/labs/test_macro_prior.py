"""Edge credit above the best public graph (`macroecon/prior.py`): copying one earns nothing."""

from __future__ import annotations

from typing import Any

import pytest

from discoverylab.labs.agents import make_agent, run_episode
from discoverylab.labs.macroecon import prior
from discoverylab.labs.macroecon.episode import KEY_EFFECTS, draw_structure
from discoverylab.labs.macroecon.grading import _verdicts, grade_episode, signed_edge_f1
from discoverylab.labs.macroecon.ground_truth import GroundTruthSettings, effect_graph, measure_effect_graph
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
    assert goal["edge_f1_raw"] == pytest.approx(goal["published_f1"]) and goal["published_f1"] > 0.2
    assert goal["prior_f1"] >= goal["published_f1"]
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


# ---------------------------------------------------------------------- the public panel
ATTACK = {"structure": {"n_households": 100}}
"""The attack tests' setting: its panel is package data."""


def _with_edges(proto: MacroCausalDiscovery, stated: dict[tuple[str, str, str], str]) -> Any:
    edges = [EdgeStatement(cause=c, effect=f, horizon=h, sign=sign) for (c, f, h), sign in stated.items()]  # type: ignore[arg-type]
    report = (proto.log.report or FinalReport()).model_copy(update={"edges": edges})
    return grade_episode(proto.log.model_copy(update={"report": report}), proto.config)


def test_copying_the_nearest_public_graph_earns_no_edge_credit() -> None:
    """Seed 0's economy is closer to one of the panel's graphs (F1 0.78) than to the published one
    (0.65): copying that graph earned corrected F1 0.37 above the published graph alone; now the
    chance level is the best public graph, so it earns 0, and the truth still earns 1."""
    proto = make_protocol(NAME, **ATTACK)
    assert isinstance(proto, MacroCausalDiscovery)
    oracle = run_episode(proto, make_agent(NAME, "oracle", proto), 0)
    truth = effect_graph(proto.log.structure or proto.config.structure)
    candidates = prior.public_candidates(MacroStructure(n_households=100), GroundTruthSettings(), 0.5)
    f1 = {name: signed_edge_f1(_verdicts(stated, truth), truth, KEY_EFFECTS)[0] for name, stated in candidates.items()}
    nearest = max(f1, key=lambda name: f1[name])
    assert f1[nearest] > f1["published"] + 0.05  # the case the published graph alone let through
    goal = _with_edges(proto, candidates[nearest]).details["goal_progress"]
    assert goal["edge_f1_raw"] == pytest.approx(f1[nearest]) == pytest.approx(goal["prior_f1"])
    assert goal["prior_source"] == nearest and goal["panel_consulted"] and goal["edge_f1"] == 0.0
    assert oracle.score.details["goal_progress"]["edge_f1"] == 1.0


def test_the_panel_is_consulted_only_where_it_can_change_the_credit() -> None:
    """A graph no better than the published one scores 0 and a perfect one 1 whatever the panel
    says: their grades measure no panel graph (the panel is 24 graphs where it is not package data)."""
    proto, oracle = _oracle(0)
    assert oracle.score.details["goal_progress"]["panel_consulted"] is False
    assert oracle.score.details["goal_progress"]["prior_source"] == "published"


def test_the_panel_economies_are_drawn_apart_from_every_episode() -> None:
    """The panel draws from streams no episode uses, so no seed's economy is in it (its own graph
    would be the chance level) and each panel economy is a drawn one, not the published."""
    base = MacroStructure(n_households=100)
    panel = prior.panel_structures(base, 0.5)
    assert len(panel) == prior.PANEL_SIZE and len(set(panel)) == len(panel)
    assert all(p != draw_structure(i, base) and p != base for i, p in enumerate(panel))
    assert all(prior.published_structure(p) == base for p in panel)


def test_the_packaged_panels_are_package_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default config's and the 100-household setting's panels are read, not measured."""
    def refuse(*_args: Any, **_kw: Any) -> Any:
        raise AssertionError("measured a panel graph instead of reading the package data")

    monkeypatch.setattr(prior, "effect_graph", refuse)
    for base in prior.PACKAGED_BASES:
        signs = prior.panel_signs(base, GroundTruthSettings(), 0.5)
        assert len(signs) == prior.PANEL_SIZE and all(len(g) == len(prior.EDGE_ORDER) for g in signs)
        assert all(set(g) <= set("+-0?") for g in signs)
    assert prior.packaged_panel(MacroStructure(n_households=100), GroundTruthSettings(), 0.4) is None
    assert prior.packaged_panel(MacroStructure(n_households=200), GroundTruthSettings(), 0.5) is None


def test_the_majority_is_edge_wise() -> None:
    assert prior.majority_signs(["+-0", "+0?", "-0?"]) == "+0?"
    assert prior.signs_statements("+" + "0" * (len(prior.EDGE_ORDER) - 2) + "-") == {
        prior.EDGE_ORDER[0]: "+", prior.EDGE_ORDER[-1]: "-"}


@pytest.mark.slow
def test_the_packaged_panels_match_the_simulator() -> None:
    """`benchmarks/macro_prior.py` regenerates the data when this fails (24 graphs per base: minutes)."""
    for base in prior.PACKAGED_BASES:
        stored = prior.packaged_panel(base, GroundTruthSettings(), 0.5)
        measured = [prior.graph_signs(measure_effect_graph(s, GroundTruthSettings()))
                    for s in prior.panel_structures(base, 0.5)]
        assert stored == measured


def test_measuring_a_panel_without_package_data_shows_progress_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A config without a packaged panel measures 24 graphs (minutes) before its first grade: on
    a terminal a progress bar says so, rather than a silent wait (measuring stubbed here: the
    bar, not the simulator, is under test)."""
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    measured: list[MacroStructure] = []
    stored = prior._stored_graph()
    assert stored is not None

    def measure(structure: MacroStructure, settings: Any, cache_dir: Any = None) -> Any:
        measured.append(structure)
        return stored

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(prior, "effect_graph", measure)
    base = MacroStructure(n_households=37)  # no packaged panel for this size
    assert prior.packaged_panel(base, GroundTruthSettings(), 0.5) is None
    signs = prior.panel_signs(base, GroundTruthSettings(), 0.5)
    assert len(signs) == len(measured) == prior.PANEL_SIZE
    shown = terminal.getvalue()
    assert "measuring the public panel's graphs" in shown and f"0/{prior.PANEL_SIZE}" in shown  # its total, from the start
