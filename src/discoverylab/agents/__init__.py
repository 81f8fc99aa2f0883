"""Agents that play DiscoveryWorld tasks: random, oracle (scripted solvers), LLM baselines."""

from discoverylab.agents.base import Agent
from discoverylab.agents.oracle import OracleAgent
from discoverylab.agents.random_agent import RandomAgent

__all__ = ["Agent", "OracleAgent", "RandomAgent", "make_agent"]


def make_agent(name: str, task: str, seed: int = 0) -> Agent:
    """Build an agent by name ("random" or "oracle")."""
    if name == "random":
        return RandomAgent(seed)
    if name == "oracle":
        return OracleAgent(task)
    raise ValueError(f"Unknown agent {name!r}. Valid agents: random, oracle.")
