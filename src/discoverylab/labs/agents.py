"""The agent side of the text protocols: the `LabAgent` interface, an agent registry and the episode loop.

An agent is anything with `reset(seed)` and `act(message) -> str` (structural typing, so an LLM
agent, a scripted baseline or a human at a terminal all fit). The agent's `seed` is its own
(`Instance.agent_seed`): for a sealed instance it is not the episode's seed, so an agent cannot
rebuild the lab it plays. Baseline agents that need the hidden
truth (the scripted oracle) receive the `Protocol` object when they are built and read
`protocol.ground_truth()` after `reset`; they never see more than the protocol exposes.

Agent factories are registered per lab: `register_agent("sequence", "oracle", factory)` with
`factory(protocol, **options) -> LabAgent`; `make_agent(protocol_name, kind, protocol)` finds the
factory for the protocol's lab (or a lab-independent one registered under lab `"*"`).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, runtime_checkable
from typing import Protocol as TypingProtocol

from discoverylab.instances import Instance, from_seed
from discoverylab.labs.protocol import BUILTIN_LABS, Protocol, Score, TranscriptEntry


@runtime_checkable
class LabAgent(TypingProtocol):
    """Text-in/text-out agent: `reset` once per episode, then one `act` per lab message."""

    def reset(self, seed: int) -> None:
        """Start a new episode; `seed` drives any randomness of the agent."""

    def act(self, message: str) -> str:
        """Answer one lab message."""
        ...


AgentFactory = Callable[..., LabAgent]
_AGENTS: dict[tuple[str, str], AgentFactory] = {}


class UnknownAgentError(KeyError):
    """No agent of that kind is registered for that lab."""


def register_agent(lab: str, kind: str, factory: AgentFactory, *, overwrite: bool = True) -> None:
    """Register `factory(protocol, **options) -> LabAgent` as agent `kind` for `lab` ("*" = any lab)."""
    if (lab, kind) in _AGENTS and not overwrite:
        raise ValueError(f"agent {kind!r} already registered for lab {lab!r}")
    _AGENTS[(lab, kind)] = factory


def agent_kinds(lab: str) -> list[str]:
    """Sorted agent kinds available for `lab` (lab-specific plus lab-independent ones)."""
    _load_lab_agents(lab)
    return sorted({k for (lb, k) in _AGENTS if lb in (lab, "*")})


def _load_lab_agents(lab: str) -> None:
    package = BUILTIN_LABS.get(lab, f"discoverylab.labs.{lab}")
    for module in (f"{package}.agents",):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name is None or not module.startswith(exc.name):
                raise


def make_agent(protocol_name: str, kind: str, protocol: Protocol, **options: Any) -> LabAgent:
    """Build agent `kind` for the protocol named `protocol_name` (e.g. `sequence/hidden-property`)."""
    lab = protocol_name.split("/", 1)[0]
    _load_lab_agents(lab)
    factory = _AGENTS.get((lab, kind)) or _AGENTS.get(("*", kind))
    if factory is None:
        raise UnknownAgentError(f"no agent {kind!r} for lab {lab!r}; known: {', '.join(agent_kinds(lab))}")
    return factory(protocol, **options)


@dataclass(slots=True)
class EpisodeResult:
    """Outcome of one episode: the grade, the transcript and wall time."""

    protocol: str
    seed: int | None  # None for a sealed instance
    score: Score
    transcript: list[TranscriptEntry]
    turns: int
    seconds: float
    info: dict[str, Any] = field(default_factory=dict)


def episode_instance(protocol: Protocol, seed: int | Instance) -> Instance:
    """`seed` as an instance of `protocol` (a raw public seed, or an `Instance` as given)."""
    return seed if isinstance(seed, Instance) else from_seed(protocol.name, "", int(seed))


def run_episode(protocol: Protocol, agent: LabAgent, seed: int | Instance) -> EpisodeResult:
    """Play one episode to the end (the protocol's `max_turns` bounds it) and grade it."""
    start = time.perf_counter()
    inst = episode_instance(protocol, seed)
    agent.reset(inst.agent_seed)
    message = protocol.reset(inst.seed)
    while not protocol.done:
        reply = protocol.step(agent.act(message))
        message = reply.text
    score = protocol.grade()
    return EpisodeResult(protocol=protocol.name, seed=inst.public().get("seed"), score=score, transcript=protocol.transcript,
                         turns=protocol.turn, seconds=time.perf_counter() - start)
