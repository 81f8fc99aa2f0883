"""One OpenAI-compatible chat client for every agent and judge in discoverylab.

Hosted models and the embedded offline model (`local_server.py`) speak the same protocol, so agents
take an `LLMClient` and never care which is behind it. The client adds what the `openai` package
leaves to callers: seeded retries with backoff, schema validation of structured replies (small
models do not honour every schema keyword), cumulative token accounting and typed errors. The
retry policy (which failures to retry, how long to wait) is in `retry.py`, reply checks in `schema.py`.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

import numpy as np
import openai

from discoverylab.llm.deadline import DEFAULT_MAX_REPLY_BYTES, DeadlineTransport, make_http_client
from discoverylab.llm.errors import (
    LLMBadOutput,
    LLMBadResponse,
    LLMDeadlineExceeded,
    LLMError,
    LLMUnavailable,
)
from discoverylab.llm.replies import Completion, StructuredCompletion, Usage
from discoverylab.llm.retry import (
    MalformedResponse,
    backoff_delay,
    classify_failure,
    deadline_error,
    failure_summary,
)
from discoverylab.llm.schema import check_reply, with_schema_instructions

logger = logging.getLogger(__name__)
__all__ = ["Completion", "LLMClient", "StructuredCompletion", "Usage"]  # the reply types live in `replies`

Message = Mapping[str, Any]
JsonMode = Literal["json_schema", "json_object", "prompt"]

ENV_BASE_URL = "DISCOVERYLAB_LLM_BASE_URL"
ENV_MODEL = "DISCOVERYLAB_LLM_MODEL"
ENV_API_KEY = "DISCOVERYLAB_LLM_API_KEY"
ENV_REQUEST_TIMEOUT = "DISCOVERYLAB_LLM_REQUEST_TIMEOUT"
ENV_MAX_REPLY_BYTES = "DISCOVERYLAB_LLM_MAX_REPLY_BYTES"
DEFAULT_REQUEST_TIMEOUT = 300.0
# Local servers (llama.cpp, vLLM, ...) accept any key, but the openai package insists on one.
PLACEHOLDER_API_KEY = "not-needed"


class LLMClient:
    """Chat client for any OpenAI-compatible endpoint.

    Args:
        base_url: endpoint root ending in `/v1`; defaults to `$DISCOVERYLAB_LLM_BASE_URL`, then
            `$OPENAI_BASE_URL`, then the openai package's default (api.openai.com).
        model: model name; defaults to `$DISCOVERYLAB_LLM_MODEL`, else the first model the
            endpoint lists (right for single-model local servers).
        api_key: defaults to `$DISCOVERYLAB_LLM_API_KEY`, then `$OPENAI_API_KEY`; a placeholder is
            used for an explicit base URL without a key (local servers ignore it).
        timeout: seconds for one HTTP attempt (each socket operation within it).
        request_timeout: total seconds for one `complete` call: the model lookup (when no model
            is named), every attempt's connect, headers and body, and every backoff wait;
            defaults to `$DISCOVERYLAB_LLM_REQUEST_TIMEOUT`, else 300 s. Held by the clock
            (see `deadline.py`), not by per-socket timeouts.
        max_reply_bytes: largest reply body accepted (a larger one is a failed attempt,
            `LLMBadResponse`); defaults to `$DISCOVERYLAB_LLM_MAX_REPLY_BYTES`, else 8 MiB.
        max_retries: extra attempts after connection errors, timeouts, 408/409/429, 5xx and
            replies that are not chat completions.
        backoff_base, backoff_max: exponential backoff in seconds (base * 2**k, capped), with
            jitter so that parallel workers never retry in lockstep.
        seed: seed of the jitter stream, for reproducible schedules; None (the default) draws
            fresh entropy so each worker process waits differently. Never the global RNG.
        temperature, max_tokens: defaults for every request (overridable per call).
        json_mode: how `complete_json` asks for JSON: `json_schema` (constrained decoding),
            `json_object`, or `prompt` (schema in the prompt only) for endpoints without it.
        sleep: how to wait between retries (tests pass a recorder).
    """

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 120.0,
        request_timeout: float | None = None,
        max_retries: int = 4,
        backoff_base: float = 0.5,
        backoff_max: float = 16.0,
        seed: int | None = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
        json_mode: JsonMode = "json_schema",
        sleep: Callable[[float], None] = time.sleep,
        max_reply_bytes: int | None = None,
    ) -> None:
        self.base_url = base_url or os.environ.get(ENV_BASE_URL) or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get(ENV_API_KEY) or os.environ.get("OPENAI_API_KEY")
        if not key:
            if self.base_url is None:
                raise LLMError(
                    f"no LLM endpoint configured: set {ENV_BASE_URL} (any OpenAI-compatible server) "
                    f"or {ENV_API_KEY}/OPENAI_API_KEY for api.openai.com, or use "
                    "discoverylab.llm.default_client() for the embedded offline model"
                )
            key = PLACEHOLDER_API_KEY
        if request_timeout is None:
            request_timeout = _env_seconds(ENV_REQUEST_TIMEOUT, DEFAULT_REQUEST_TIMEOUT)
        if max_reply_bytes is None:
            max_reply_bytes = int(_env_seconds(ENV_MAX_REPLY_BYTES, DEFAULT_MAX_REPLY_BYTES, unit="bytes"))
        if max_retries < 0 or timeout <= 0 or backoff_base < 0 or request_timeout <= 0 or max_reply_bytes <= 0:
            raise ValueError("max_retries must be >= 0, timeout, request_timeout and max_reply_bytes > 0 "
                             "and backoff_base >= 0")
        self.request_timeout = request_timeout
        self._model = model or os.environ.get(ENV_MODEL) or None
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.json_mode: JsonMode = json_mode
        self._sleep = sleep
        self._rng = np.random.default_rng(np.random.SeedSequence(seed))
        self._lock = threading.Lock()
        self._usage = Usage()
        self._transport = DeadlineTransport(max_reply_bytes)
        # Retries are ours (jittered, typed, counted), so the openai package must not retry too.
        self._openai = openai.OpenAI(base_url=self.base_url, api_key=key, timeout=timeout, max_retries=0,
                                     http_client=make_http_client(self._transport, timeout))

    # ------------------------------------------------------------------ public API

    @property
    def model(self) -> str:
        """The model name sent with each request (resolved from the endpoint on first use,
        within one `request_timeout`)."""
        return self._resolve_model(time.monotonic() + self.request_timeout, time.monotonic())

    @property
    def known_model(self) -> str | None:
        """The model name if already known; never asks the endpoint (for summaries after a failure)."""
        return self._model

    def _resolve_model(self, deadline: float, started: float) -> str:
        """The model, asking the endpoint's `/models` list within `deadline` if none was named."""
        if self._model is not None:
            return self._model
        self._transport.set_deadline(deadline)
        try:
            models = self._openai.models.list(timeout=max(0.001, min(self.timeout, deadline - time.monotonic()))).data
        except openai.OpenAIError as exc:
            if time.monotonic() >= deadline:
                raise self._deadline_error(started, 0, exc) from exc
            raise LLMUnavailable(
                f"could not list models at {self.base_url} to pick one ({failure_summary(exc)}); "
                f"pass model= or set {ENV_MODEL}"
            ) from exc
        except (AttributeError, TypeError, ValueError, KeyError) as exc:  # a page that is no model list
            raise LLMBadResponse(
                f"{self.base_url}/models did not answer with a model list (an HTML page?); "
                f"check the URL (it ends in /v1), or pass model= or set {ENV_MODEL}"
            ) from exc
        finally:
            self._transport.set_deadline(None)
        if not models:
            raise LLMError(f"the endpoint {self.base_url} lists no models; pass model= or set {ENV_MODEL}")
        name = getattr(models[0], "id", None)
        if not isinstance(name, str) or not name:
            raise LLMBadResponse(f"{self.base_url}/models lists a model without an id; pass model= or set {ENV_MODEL}")
        self._model = name
        return self._model

    def _deadline_error(self, started: float, attempts: int, exc: BaseException) -> LLMDeadlineExceeded:
        return deadline_error(self.base_url, self.request_timeout, time.monotonic() - started, attempts, exc)

    @property
    def usage(self) -> Usage:
        """Snapshot of the cumulative usage of this client."""
        with self._lock:
            return self._usage

    def describe(self) -> dict[str, Any]:
        """Settings worth recording in a run's metadata (never the API key)."""
        return {
            "base_url": self.base_url,
            "model": self._model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "json_mode": self.json_mode,
        }

    def complete(self, messages: Sequence[Message], **opts: Any) -> Completion:
        """Send a chat request and return the reply text with token counts and latency.

        Extra keyword arguments go to the chat-completions call (`temperature`, `max_tokens`,
        `seed`, `stop`, `response_format`, ...).

        Raises:
            LLMUnavailable: the endpoint stayed unreachable or overloaded after all retries.
            LLMRequestError: the endpoint rejected the request (bad model name, bad key, ...).
            LLMBadResponse: the endpoint kept answering with bodies that are not chat completions.
            LLMDeadlineExceeded: no usable reply within `request_timeout` (a kind of LLMUnavailable).
        """
        started = time.monotonic()
        deadline = started + self.request_timeout
        request: dict[str, Any] = {
            "model": self._resolve_model(deadline, started),
            "messages": [dict(m) for m in messages],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        request.update(opts)
        attempt = 0
        while True:
            attempt += 1
            start = time.perf_counter()
            remaining = max(0.001, deadline - time.monotonic())
            self._transport.set_deadline(deadline)
            try:
                response = self._openai.chat.completions.create(**request, timeout=min(self.timeout, remaining))
                completion = self._to_completion(response, time.perf_counter() - start, attempt)
            except Exception as exc:  # classified below; anything not ours is re-raised
                self._count(attempts=1)
                try:
                    retry_after = classify_failure(exc, attempt, self.max_retries, self.base_url)
                except LLMUnavailable:
                    if time.monotonic() >= deadline:  # out of time, whatever the last failure was
                        raise self._deadline_error(started, attempt, exc) from exc
                    raise
                delay = backoff_delay(attempt, retry_after, self.backoff_base, self.backoff_max, self._jitter)
                if time.monotonic() + delay >= deadline:
                    raise self._deadline_error(started, attempt, exc) from exc
                logger.warning(
                    "LLM request attempt %d failed (%s); retrying in %.2f s", attempt, failure_summary(exc), delay
                )
                self._count(retries=1)
                self._sleep(delay)
                continue
            finally:
                self._transport.set_deadline(None)
            self._count(
                attempts=1,
                requests=1,
                prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens,
                latency_s=completion.latency_s,
            )
            return completion

    def complete_json(
        self, messages: Sequence[Message], schema: Mapping[str, Any], name: str = "response", **opts: Any
    ) -> dict[str, Any]:
        """Ask for a JSON object matching `schema` and return it validated.

        See `complete_structured` for the options; this returns only the data.
        """
        return self.complete_structured(messages, schema, name, **opts).data

    def complete_structured(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any],
        name: str = "response",
        *,
        clamp: bool = False,
        strict: bool = False,
        bad_output_retries: int = 2,
        **opts: Any,
    ) -> StructuredCompletion:
        """Ask for a JSON object matching `schema`; validate it; on failure tell the model why.

        Args:
            messages: the conversation so far.
            schema: a JSON Schema whose top level is an object.
            name: schema name reported to the endpoint (letters, digits, `_`, `-`).
            clamp: pull out-of-range numbers inside minimum/maximum instead of rejecting them.
            strict: request OpenAI "strict" structured outputs (needs a strict-compatible schema).
            bad_output_retries: how many times to re-ask, quoting the problems, before giving up.
            **opts: passed to `complete`.

        Raises:
            LLMBadOutput: still invalid after the retries (`.problems` lists why, `.text` the reply).
        """
        conversation = [dict(m) for m in messages]
        if self.json_mode == "json_schema":
            opts["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": dict(schema), "strict": strict},
            }
        else:
            conversation = with_schema_instructions(conversation, schema)
            if self.json_mode == "json_object":
                opts["response_format"] = {"type": "json_object"}
        rejected: list[str] = []
        while True:
            completion = self.complete(conversation, **opts)
            data, problems = check_reply(completion.text, schema, clamp)
            if not problems and data is not None:
                return StructuredCompletion(data, completion, tuple(rejected))
            self._count(bad_outputs=1)
            rejected.append(completion.text)
            if len(rejected) > bad_output_retries:
                raise LLMBadOutput(
                    f"the model's reply did not match the '{name}' schema after {len(rejected)} tries: "
                    + "; ".join(problems[:5]),
                    text=completion.text,
                    problems=problems,
                )
            logger.info("rejected a '%s' reply (%s); asking again", name, "; ".join(problems[:3]))
            conversation = [
                *conversation,
                {"role": "assistant", "content": completion.text},
                {
                    "role": "user",
                    "content": "That reply was invalid: "
                    + "; ".join(problems[:5])
                    + ". Reply again with only a JSON object that fixes these problems.",
                },
            ]

    def close(self) -> None:
        """Release the HTTP connection pool."""
        self._openai.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ internals

    def _to_completion(self, response: Any, latency: float, attempt: int) -> Completion:
        choices = getattr(response, "choices", None)
        if not choices or getattr(choices[0], "message", None) is None:
            raise MalformedResponse(f"response has no choices: {str(response)[:200]}")
        message = choices[0].message
        usage = getattr(response, "usage", None)
        return Completion(
            text=message.content or "",
            prompt_tokens=_token_count(getattr(usage, "prompt_tokens", 0)),
            completion_tokens=_token_count(getattr(usage, "completion_tokens", 0)),
            latency_s=latency,
            model=str(getattr(response, "model", None) or self.model),
            finish_reason=choices[0].finish_reason,
            attempts=attempt,
        )

    def _jitter(self, high: float) -> float:
        with self._lock:  # one seeded stream shared by the client's threads
            return float(self._rng.uniform(0.0, high))

    def _count(self, **increments: float) -> None:
        with self._lock:
            current = self._usage
            self._usage = replace(
                current, **{key: getattr(current, key) + value for key, value in increments.items()}
            )


def _token_count(value: Any) -> int:
    """A reply's token count, or 0 when the server sent none we can use (null, NaN, a word, a
    negative number): the accounting is the server's, and a bad count must not sink a usable reply
    (before, `int(NaN)` raised and the episode ended `error`)."""
    try:
        count = int(float(value or 0))
    except (TypeError, ValueError, OverflowError):
        return 0
    return max(count, 0)


def _env_seconds(name: str, default: float, unit: str = "seconds") -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"${name} must be a number of {unit}, got {text!r}") from None
    if not value > 0:  # NaN too: no deadline or cap compares with it
        raise ValueError(f"${name} must be > 0, got {text!r}")
    return value
