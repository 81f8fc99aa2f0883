"""Macroeconomic Simulation Lab (spec §3): an agent-based economy as a black-box causal-discovery lab.

Importing the package registers the protocol `macro/causal-discovery` and its baseline agents
(`oracle`, `random`, `heuristic`) with the shared Tiny Labs registries.
"""

from __future__ import annotations

from discoverylab.labs.macroecon import agents as agents
from discoverylab.labs.macroecon import protocol as protocol
from discoverylab.labs.macroecon.model import MacroEconomy, MacroRun, simulate
from discoverylab.labs.macroecon.params import MacroParams, MacroStructure
from discoverylab.labs.macroecon.protocol import MacroCausalDiscovery, MacroLabConfig

__all__ = ["MacroCausalDiscovery", "MacroEconomy", "MacroLabConfig", "MacroParams", "MacroRun",
           "MacroStructure", "agents", "protocol", "simulate"]
