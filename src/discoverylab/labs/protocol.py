"""The shared text protocol through which an agent talks to a Tiny Lab, and the protocol registry.

A protocol is one experimental task shown to an agent as a conversation (spec §1.1, §1.7):

    proto = make_protocol("sequence/hidden-property", rounds=5)
    message = proto.reset(seed=0)            # first lab message (system prompt + task)
    while True:
        reply = proto.step(agent.act(message))
        message = reply.text
        if reply.done:
            break
    score = proto.grade()                    # Score(score in 0..1, parts, labels, details)

Implementing a protocol (what the sequence and macro labs do): subclass `Protocol`, set the class
attribute `name`, implement `_on_reset(seed) -> str`, `_on_step(message) -> Reply`, `grade() -> Score`
and `ground_truth() -> dict`; then call `register_protocol(name, factory, summary=..., grader_version=...)`
at import time. The base class keeps the transcript, the turn counter and the done flag, so every protocol
records the same transcript shape and the gym adapters and runners need nothing protocol-specific.

Rules every protocol follows:
* `step` never raises because of what the agent wrote: bad input yields an error reply (its
  `info["error"]` says what was wrong). Calling `step` before `reset` or after the episode ended is a
  programming error and raises `ProtocolStateError`.
* Every episode ends after at most `max_turns` agent messages, whatever the agent writes.
* All randomness comes from the seed given to `reset`, so the same messages give the same
  transcript and the same grade (a saved transcript can be re-graded offline by replaying it).

Registry: names are `"<lab>/<task>"`, e.g. `sequence/hidden-property`, `sequence/unknown-dynamics`,
`macro/...`. `make_protocol` imports `<package>.protocols` (or, failing that, `<package>`) on first use,
where `<package>` is `BUILTIN_LABS[lab]` (e.g. `discoverylab.labs.macroecon` for `macro`) or
`discoverylab.labs.<lab>`; that module must register its protocols.
"""

from __future__ import annotations

import importlib
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

logger = logging.getLogger(__name__)


class ProtocolError(Exception):
    """Base class of the protocol layer's errors."""


class ProtocolStateError(ProtocolError):
    """`step`/`grade` called in the wrong episode state (before `reset`, after the end)."""


class UnknownProtocolError(ProtocolError, KeyError):
    """No protocol is registered under the requested name."""


class Reply(BaseModel):
    """What the lab answers to one agent message."""

    text: str
    done: bool = False
    info: dict[str, Any] = Field(default_factory=dict)


class Score(BaseModel):
    """A graded episode: `score` in 0..1 plus named parts (each in 0..1 unless documented)."""

    score: float = Field(ge=0.0, le=1.0)
    parts: dict[str, float] = Field(default_factory=dict)
    labels: dict[str, str] = Field(default_factory=dict)
    details: dict[str, Any] = Field(default_factory=dict)


class TranscriptEntry(BaseModel):
    """One message of an episode; `info` holds the parsed action (agent) or reply info (lab)."""

    turn: int
    role: Literal["lab", "agent"]
    text: str
    info: dict[str, Any] = Field(default_factory=dict)


class Protocol(ABC):
    """Base class of every text protocol; subclasses implement the `_on_*` hooks and `grade`."""

    name: ClassVar[str] = "abstract"
    max_turns: int = 64

    def __init__(self) -> None:
        self.seed: int | None = None
        self.turn = 0
        self.done = False
        self._transcript: list[TranscriptEntry] = []

    # ------------------------------------------------------------------ public API
    def reset(self, seed: int) -> str:
        """Start a new episode from `seed` and return the lab's first message."""
        self.seed = int(seed)
        self.turn = 0
        self.done = False
        self._transcript = []
        text = self._on_reset(self.seed)
        self._transcript.append(TranscriptEntry(turn=0, role="lab", text=text))  # no seed: transcripts of sealed runs are published
        return text

    def step(self, message: str) -> Reply:
        """Feed one agent message; returns the lab reply (never raises for bad agent input)."""
        if self.seed is None:
            raise ProtocolStateError(f"{self.name}: call reset(seed) before step()")
        if self.done:
            raise ProtocolStateError(f"{self.name}: the episode is over; call grade() or reset()")
        if not isinstance(message, str):
            message = str(message)
        self.turn += 1
        agent_entry = TranscriptEntry(turn=self.turn, role="agent", text=message)
        self._transcript.append(agent_entry)
        reply = self._on_step(message)
        if self.turn >= self.max_turns and not reply.done:
            reply = Reply(text=reply.text + "\nTurn limit reached; the episode is over.", done=True,
                          info={**reply.info, "turn_limit": True})
        agent_entry.info = dict(reply.info.get("action", {}))
        self.done = reply.done
        reply.info.setdefault("turn", self.turn)
        self._transcript.append(TranscriptEntry(turn=self.turn, role="lab", text=reply.text, info=reply.info))
        return reply

    @property
    def transcript(self) -> list[TranscriptEntry]:
        """All messages so far, lab's first message included (a copy)."""
        return list(self._transcript)

    @abstractmethod
    def grade(self) -> Score:
        """Grade the episode so far (normally called once `done` is true)."""

    @abstractmethod
    def ground_truth(self) -> dict[str, Any]:
        """Hidden truth of the current episode, for oracle agents, graders and judges only."""

    # ------------------------------------------------------------------ hooks
    @abstractmethod
    def _on_reset(self, seed: int) -> str:
        """Build the episode from `seed`; return the first lab message."""

    @abstractmethod
    def _on_step(self, message: str) -> Reply:
        """Handle one agent message. Put the parsed action in `info["action"]` (a dict)."""


# ---------------------------------------------------------------------- registry
@dataclass(frozen=True, slots=True)
class ProtocolEntry:
    """A registered protocol: how to build it and a one-line summary for listings."""

    name: str
    factory: Callable[..., Protocol]
    summary: str = ""
    presets: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Named configs (e.g. `paper`: the paper's fixed instance); `make_protocol(name, preset=...)`."""
    grader_version: int = 1
    """The grader's version (its module's `GRADER_VERSION`, bumped whenever the grade changes): records
    carry it, so grades of two versions are never mixed in one run directory."""

    @property
    def lab(self) -> str:
        return self.name.split("/", 1)[0]


_REGISTRY: dict[str, ProtocolEntry] = {}
_LOADED_LABS: set[str] = set()
BUILTIN_LABS: dict[str, str] = {
    "sequence": "discoverylab.labs.sequence",
    "macro": "discoverylab.labs.macroecon",
}


def register_protocol(name: str, factory: Callable[..., Protocol], *, summary: str = "",
                      overwrite: bool = False, presets: dict[str, dict[str, Any]] | None = None,
                      grader_version: int = 1) -> None:
    """Register `factory(**config) -> Protocol` under `"<lab>/<task>"`, with optional named presets and
    the version of its grader (bump it whenever the grade changes)."""
    if "/" not in name:
        raise ValueError(f"protocol name {name!r} must look like '<lab>/<task>'")
    if name in _REGISTRY and not overwrite and _REGISTRY[name].factory is not factory:
        raise ValueError(f"protocol {name!r} is already registered; pass overwrite=True to replace it")
    _REGISTRY[name] = ProtocolEntry(name=name, factory=factory, summary=summary, presets=dict(presets or {}),
                                    grader_version=int(grader_version))


def _load_lab(lab: str) -> None:
    """Import the module that registers `lab`'s protocols (once)."""
    if lab in _LOADED_LABS:
        return
    _LOADED_LABS.add(lab)
    package = BUILTIN_LABS.get(lab, f"discoverylab.labs.{lab}")
    for module in (f"{package}.protocols", package):
        try:
            importlib.import_module(module)
            return
        except ModuleNotFoundError as exc:
            if exc.name is None or not module.startswith(exc.name):
                raise
            logger.debug("no protocol module %s", module)


def _load_all() -> None:
    for lab in BUILTIN_LABS:
        _load_lab(lab)


def protocol_names(lab: str | None = None) -> list[str]:
    """Sorted registered names, optionally only those of one lab."""
    _load_all()
    if lab is not None:
        _load_lab(lab)
    return sorted(n for n in _REGISTRY if lab is None or _REGISTRY[n].lab == lab)


def protocol_entry(name: str) -> ProtocolEntry:
    """The registry entry for `name`; raises `UnknownProtocolError` with the known names."""
    if name not in _REGISTRY:
        _load_lab(name.split("/", 1)[0])
    if name not in _REGISTRY:
        known = ", ".join(protocol_names()) or "(none)"
        raise UnknownProtocolError(f"unknown protocol {name!r}; registered: {known}")
    return _REGISTRY[name]


def grader_version(name: str) -> int:
    """The grader version of a protocol, or of a record label built from a lab spec (`kind@spec`)."""
    return protocol_entry(name.split("@", 1)[0]).grader_version


def resolve_config(name: str, config: dict[str, Any]) -> dict[str, Any]:
    """`config` with its `preset` key (a registered preset name) expanded; explicit keys win."""
    config = dict(config)
    preset = config.pop("preset", None)
    if preset is None:
        return config
    entry = protocol_entry(name)
    if preset not in entry.presets:
        known = ", ".join(sorted(entry.presets)) or "(none)"
        raise ValueError(f"protocol {name!r} has no preset {preset!r}; presets: {known}")
    return {**entry.presets[preset], **config}


def make_protocol(name: str, **config: Any) -> Protocol:
    """Build a registered protocol; `config` goes to its factory (e.g. `rounds=6`).

    `preset="paper"` starts from a registered preset (the paper's fixed instance); other keys override it.
    """
    return protocol_entry(name).factory(**resolve_config(name, config))
