"""The retry policy of `LLMClient`: which failures are worth another attempt and how long to wait.

A failed attempt is either final (the endpoint refused the request itself: `LLMRequestError`;
an exception that is no LLM failure at all: re-raised) or retryable (connection errors, timeouts,
408/409/429, 5xx, bodies that are not chat completions) until the attempts run out, when it
becomes `LLMUnavailable` or `LLMBadResponse`. Waits grow exponentially with "equal jitter" and
honour a server's Retry-After. The policy lives here so it reads in one place; the client keeps
the state (attempt count, deadline, the seeded jitter stream).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import openai

from discoverylab.llm.deadline import ReplyTooLarge
from discoverylab.llm.errors import (
    LLMBadResponse,
    LLMDeadlineExceeded,
    LLMError,
    LLMRequestError,
    LLMUnavailable,
)

RETRYABLE_STATUS = frozenset({408, 409, 429})


class MalformedResponse(ValueError):
    """The HTTP exchange worked but the body is not a chat completion."""


def classify_failure(exc: Exception, attempt: int, max_retries: int, base_url: str | None) -> float | None:
    """Raise the typed error if `exc` is final; otherwise return the server's Retry-After."""
    retry_after: float | None = None
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if status not in RETRYABLE_STATUS and status < 500:
            hint = " (check the API key)" if status in (401, 403) else ""
            raise LLMRequestError(
                f"the LLM endpoint {base_url} rejected the request with HTTP {status}{hint}: "
                f"{failure_summary(exc)}",
                status_code=status,
            ) from exc
        retry_after = _retry_after(exc.response.headers.get("retry-after"))
        kind: type[LLMError] = LLMUnavailable
    elif isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        kind = LLMBadResponse if isinstance(exc.__cause__, ReplyTooLarge) else LLMUnavailable
    elif isinstance(exc, MalformedResponse | openai.APIResponseValidationError | json.JSONDecodeError):
        kind = LLMBadResponse
    else:
        raise exc
    if attempt > max_retries:
        where = base_url or "api.openai.com"
        raise kind(f"LLM request to {where} failed after {attempt} attempts: {failure_summary(exc)}") from exc
    return retry_after


def backoff_delay(
    attempt: int, retry_after: float | None, backoff_base: float, backoff_max: float, jitter: Callable[[float], float]
) -> float:
    """Seconds to wait before attempt `attempt + 1`; `jitter(high)` draws uniformly from [0, high)."""
    ceiling = min(backoff_max, backoff_base * 2.0 ** (attempt - 1))
    extra = jitter(ceiling / 2.0) if ceiling > 0 else 0.0
    delay = ceiling / 2.0 + extra  # "equal jitter": never less than half the ceiling
    if retry_after is not None:
        delay = max(delay, min(retry_after, backoff_max))
    return delay


def deadline_error(base_url: str | None, request_timeout: float, elapsed: float, attempts: int,
                   exc: BaseException) -> LLMDeadlineExceeded:
    """The error of a call that ran out of time, saying how long it really took (never less)."""
    tries = f"{attempts} attempt{'s' if attempts != 1 else ''}" if attempts else "while looking up the model"
    return LLMDeadlineExceeded(
        f"no reply from the LLM endpoint {base_url or 'api.openai.com'} within the request deadline of "
        f"{request_timeout:g} s (--request-timeout; gave up after {elapsed:.1f} s, {tries}; "
        f"last: {failure_summary(exc)})"
    )


def failure_summary(exc: BaseException) -> str:
    """The exception's type and first 300 characters on one line, for messages and logs (a
    connection error says which: the reply was too large, the deadline passed, ...)."""
    if isinstance(exc, openai.APIConnectionError) and exc.__cause__ is not None:
        exc = exc.__cause__
    text = str(exc).strip().replace("\n", " ")
    name = type(exc).__name__
    return f"{name}: {text[:300]}" if text else name


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None  # an HTTP date: rare for LLM endpoints, fall back to our own backoff
    return seconds if seconds >= 0 else None
