"""Generated macro labs (`lab generate --lab macro`): a spec pins one drawn economy.

A macro `LabSpec` (lab `macro`) names the protocol `macro/causal-discovery` with the economy's
`economy_seed`, the mechanism `complexity` (the chance each optional causal switch is on, see
`episode.draw_switches`), the population and the budget. The generator draws them from the
complexity presets; `verify` checks the protocol (oracle full marks, random low) through the check
registered here. The lab has no sequence-style properties, so verify's property checks do not apply.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from discoverylab.labs.agents import make_agent, run_episode
from discoverylab.labs.core.generator import SPEC_SAMPLERS, Complexity
from discoverylab.labs.core.lab import LAB_KINDS, Lab
from discoverylab.labs.core.seeding import SeedStreams
from discoverylab.labs.core.spec import LabSpec, kind_spec
from discoverylab.labs.core.verify import register_protocol_check
from discoverylab.labs.macroecon import agents as _agents  # noqa: F401 - registers the macro agents
from discoverylab.labs.macroecon.episode import MacroLabConfig, draw_structure
from discoverylab.labs.macroecon.params import MacroStructure
from discoverylab.labs.macroecon.protocol import MacroCausalDiscovery
from discoverylab.labs.protocol import Protocol

LAB = "macro"
NAME = MacroCausalDiscovery.name
MECHANISMS: dict[str, float] = {"easy": 0.2, "medium": 0.5, "hard": 0.9}
"""Chance that each optional causal mechanism is on, per complexity preset."""
BUDGETS: dict[str, int] = {"easy": 10, "medium": 10, "hard": 8}
SPEC_FIELDS = ("economy_seed", "complexity", "n_households", "n_firms", "budget", "held_out", "cache_dir")


class MacroLab(Lab):
    """The macro lab as a `Lab`: no object space or sequence properties (its science is the
    protocol's economy), so verify's property checks are skipped."""

    def __init__(self, spec: LabSpec, seed: int | None = None) -> None:
        self.spec = spec
        self.space = None  # type: ignore[assignment]
        self.properties = {}
        self.operators = {}
        self.dynamics = None
        self.sampler = SimpleNamespace(time_limit=None)  # type: ignore[assignment]
        self.streams = SeedStreams(spec.seed if seed is None else seed)

    def random_objects(self, n: int, rng: np.random.Generator | None = None) -> list[Any]:
        return []


LAB_KINDS.register(LAB, MacroLab, overwrite=True)


def macro_config(spec: LabSpec) -> MacroLabConfig:
    """The protocol config a macro spec describes: its one economy, drawn from `economy_seed`."""
    if spec.protocol is None or spec.protocol.kind != NAME:
        raise ValueError(f"lab spec {spec.name!r} has no {NAME} protocol")
    fields = dict(spec.protocol.fields)
    unknown = sorted(set(fields) - set(SPEC_FIELDS))
    if unknown:
        raise ValueError(f"unknown macro spec fields {unknown}; known: {', '.join(SPEC_FIELDS)}")
    base = MacroStructure(n_households=int(fields.get("n_households", 200)), n_firms=int(fields.get("n_firms", 20)))
    structure = draw_structure(int(fields.get("economy_seed", 0)), base, float(fields.get("complexity", 0.5)))
    options: dict[str, Any] = {"structure": structure, "draw_structure": False}
    for key in ("budget", "held_out", "cache_dir"):
        if key in fields:
            options[key] = fields[key]
    return MacroLabConfig(**options)


def protocol_from_spec(spec: LabSpec) -> Protocol:
    return MacroCausalDiscovery(macro_config(spec))


def check_protocol(spec: LabSpec) -> tuple[float, float]:
    """(oracle score, random score) on one episode seeded by the spec."""
    scores = []
    for kind in ("oracle", "random"):
        proto = protocol_from_spec(spec)
        scores.append(run_episode(proto, make_agent(NAME, kind, proto), seed=spec.seed).score.score)
    return scores[0], scores[1]


def sample_macro_spec(knobs: Complexity, rng: np.random.Generator, index: int) -> LabSpec:
    """One candidate macro lab: a fresh economy at the preset's mechanism complexity."""
    name = knobs.name if knobs.name in MECHANISMS else "medium"
    return LabSpec(
        name=f"gen-{knobs.name}-{index:04d}-macro", lab=LAB, difficulty=knobs.name, properties={},
        protocol=kind_spec(NAME, economy_seed=int(rng.integers(2**31)), complexity=MECHANISMS[name],
                           n_households=200, budget=BUDGETS[name]),
        seed=int(rng.integers(2**31)))


register_protocol_check(NAME, check_protocol, overwrite=True)
SPEC_SAMPLERS.register("macro", sample_macro_spec, overwrite=True)
