"""What a chat call returns and what a client has spent: plain frozen records, shared by the
client, the agents, the judges and the run records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Completion:
    """One chat reply with what it cost."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    model: str
    finish_reason: str | None = None
    attempts: int = 1

    @property
    def tokens_per_second(self) -> float:
        """Generation speed including prompt processing and HTTP overhead (a lower bound)."""
        return self.completion_tokens / self.latency_s if self.latency_s > 0 else 0.0


@dataclass(frozen=True, slots=True)
class StructuredCompletion:
    """A validated JSON reply plus the raw completion that produced it (for transcripts)."""

    data: dict[str, Any]
    completion: Completion
    rejected: tuple[str, ...] = ()  # raw texts of earlier replies that failed validation


@dataclass(frozen=True, slots=True)
class Usage:
    """Cumulative accounting of one client (a snapshot; the client keeps counting)."""

    requests: int = 0  # successful HTTP exchanges
    attempts: int = 0  # HTTP attempts including retried ones
    retries: int = 0
    bad_outputs: int = 0  # replies rejected by schema validation
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens
