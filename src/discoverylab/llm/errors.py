"""Typed failures of the LLM layer, so agents and graders can react to each kind differently.

An agent loop usually treats `LLMBadOutput` as "the model fumbled this turn" (log it, send a
reminder, carry on) but `LLMUnavailable` as "stop the run: no model to talk to".
"""

from __future__ import annotations

from collections.abc import Sequence


class LLMError(Exception):
    """Base class of every error raised by `discoverylab.llm`."""


class LLMUnavailable(LLMError):
    """The endpoint could not be reached or kept failing (connection, timeout, 429, 5xx)."""


class LLMBadResponse(LLMUnavailable):
    """The endpoint answered with something that is not a chat completion (invalid JSON, an HTML
    page, no choices): a server fault, never the model's answer."""


class LLMDeadlineExceeded(LLMUnavailable):
    """No usable reply within the request's total deadline (all attempts and waits included)."""


class LLMRequestError(LLMError):
    """The endpoint refused the request itself (4xx other than 408/409/429); retrying won't help."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class LLMBadOutput(LLMError):
    """The model answered, but not with what was asked for (unparsable or schema-violating)."""

    def __init__(self, message: str, text: str = "", problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.text = text
        self.problems = list(problems)


class EmbeddedServerError(LLMUnavailable):
    """The offline model server could not be started (missing package or model file, bad start)."""
