"""The agent interface used by the CLI and the benchmark runner."""

from __future__ import annotations

from typing import Any, Protocol


class Agent(Protocol):
    """Sees the structured observation, returns an action (dict or JSON text).

    Optional: `answer_sheet(form) -> dict` fills the task's answer sheet once the episode ended
    (`discoverylab.scoring.answer_sheet`); an agent without it hands in an empty sheet (score 0).
    """

    name: str

    def reset(self, obs: dict[str, Any]) -> None: ...

    def act(self, obs: dict[str, Any]) -> Any: ...
