"""Agents that play DiscoveryWorld tasks: random, oracle (scripted solvers), LLM baselines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from discoverylab.agents.base import Agent
from discoverylab.agents.oracle import OracleAgent
from discoverylab.agents.random_agent import RandomAgent

if TYPE_CHECKING:
    from discoverylab.agents.llm_common import LLMSettings

__all__ = ["AGENT_NAMES", "LLM_AGENTS", "Agent", "OracleAgent", "RandomAgent", "make_agent"]

LLM_AGENTS = ("react", "plan-execute", "hypothesizer")
AGENT_NAMES = ("random", "oracle", *LLM_AGENTS)


def make_agent(name: str, task: str, seed: int = 0, llm: LLMSettings | None = None) -> Agent:
    """Build an agent by name; the LLM agents take their model settings from `llm`."""
    if name == "random":
        return RandomAgent(seed)
    if name == "oracle":
        return OracleAgent(task)
    if name in LLM_AGENTS:
        from dataclasses import replace

        from discoverylab.agents.hypothesizer import HypothesizerAgent
        from discoverylab.agents.llm_common import LLMSettings
        from discoverylab.agents.plan_execute import PlanExecuteAgent
        from discoverylab.agents.react import ReActAgent

        settings = replace(llm or LLMSettings(), seed=seed)
        cls = {"react": ReActAgent, "plan-execute": PlanExecuteAgent, "hypothesizer": HypothesizerAgent}[name]
        return cls(settings)
    raise ValueError(f"Unknown agent {name!r}. Valid agents: {', '.join(AGENT_NAMES)}.")
