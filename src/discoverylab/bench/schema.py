"""What a results record says about how an episode ended and what it cost.

Statuses are part of the record schema (see docs/running.md), shared by the DiscoveryWorld
benchmark and Tiny Labs so that a failed server never reads as a model that scored 0:

* `ok`: the episode ran to its end and was graded.
* `error`: our code, the environment or the agent crashed (a bug to fix).
* `llm_error`: the LLM server or the network failed (unreachable, 5xx/429 after retries,
  a reply that is not a chat completion, a request deadline passed, or the circuit breaker
  stopped calling a dead server). Never a score.
* `agent_error`: the model answered but the agent could not act on it (e.g. replies that never
  matched the action schema).
* `timeout`: the episode passed its total deadline (`--episode-timeout`) and was stopped.
* `interrupted`: stopped by Ctrl-C or SIGTERM; shown in the summary, never written to
  results.jsonl, so the episode is redone on resume.

Only `ok` records are kept on resume; every other status is redone by the next run.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, Literal, cast, get_args

from pydantic import BaseModel

Status = Literal["ok", "error", "llm_error", "agent_error", "timeout", "interrupted"]
STATUSES: tuple[str, ...] = get_args(Status)
FAILED: frozenset[str] = frozenset(STATUSES) - {"ok"}
# Failures that measured the model (it answered, nothing it said could be acted on): they count in
# means as a score of 0, or a model could leave any episode it finds hard out of its average by
# answering garbage from the start. Infrastructure failures (llm_error, error, timeout) never do.
SCORED_AS_ZERO: frozenset[str] = frozenset({"agent_error"})
ENV_PRICE = "DISCOVERYLAB_LLM_PRICE"  # "PROMPT,COMPLETION" in USD per million tokens


def classify(exc: BaseException) -> Status:
    """The status an episode that raised `exc` ends with.

    An exception may name its status itself with an `episode_status` attribute (e.g. an agent's
    own error type); otherwise the LLM layer's typed errors decide.
    """
    named = getattr(exc, "episode_status", None)
    if isinstance(named, str) and named in FAILED:
        return cast(Status, named)
    errors = sys.modules.get("discoverylab.llm.errors")  # not loaded: no LLM was used, don't pay its import
    if errors is not None and isinstance(exc, errors.LLMBadOutput):
        return "agent_error"
    if errors is not None and isinstance(exc, errors.LLMError):
        return "llm_error"
    return "error"


def status_line(statuses: Iterable[str]) -> str:
    """'12 episodes: 9 ok, 2 llm_error, 1 timeout' (statuses in schema order)."""
    counts = Counter(statuses)
    total = sum(counts.values())
    parts = [f"{counts[s]} {s}" for s in STATUSES if counts.get(s)]
    parts += [f"{n} {s}" for s, n in sorted(counts.items()) if s not in STATUSES]
    return f"{total} episode{'s' if total != 1 else ''}: " + (", ".join(parts) if parts else "none")


def config_hash(config: Mapping[str, Any]) -> str:
    """Short stable hash of a run config: equal hashes mean the same settings."""
    text = json.dumps(dict(config), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


class UsageRecord(BaseModel):
    """LLM use of one episode: tokens, HTTP attempts and retries, cost when a price is known."""

    requests: int = 0
    attempts: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = None


def _price() -> tuple[float, float] | None:
    text = os.environ.get(ENV_PRICE, "").strip()
    if not text:
        return None
    try:
        prompt, completion = (float(part) for part in text.split(","))
    except ValueError:
        return None
    return prompt, completion


def _find_usage(agent: Any) -> Any:
    """The agent's `usage`, else the usage of an `LLMClient` it holds (never creates a client)."""
    attrs = getattr(agent, "__dict__", {})
    if attrs.get("usage") is not None:
        return attrs["usage"]
    if isinstance(getattr(type(agent), "usage", None), property):
        return agent.usage
    if "discoverylab.llm.client" in sys.modules:  # not loaded: the agent holds no client
        from discoverylab.llm.client import LLMClient

        for value in attrs.values():
            if isinstance(value, LLMClient):
                return value.usage
    return None


def usage_of(agent: Any, before: Any = None) -> UsageRecord | None:
    """The LLM usage an agent reports (`agent.usage` or a held `LLMClient`), minus `before`.

    Returns None for agents that use no LLM (random, oracle, heuristics).
    """
    found = _find_usage(agent)
    if found is None:
        return None
    fields = ("requests", "attempts", "retries", "prompt_tokens", "completion_tokens", "latency_s")
    now = {f: getattr(found, f, 0) or 0 for f in fields}
    if before is not None:
        now = {f: now[f] - (getattr(before, f, 0) or 0) for f in fields}
    record = UsageRecord(**{f: (round(v, 3) if f == "latency_s" else int(v)) for f, v in now.items()})
    record.total_tokens = record.prompt_tokens + record.completion_tokens
    price = _price()
    if price is not None:
        record.cost_usd = round((record.prompt_tokens * price[0] + record.completion_tokens * price[1]) / 1e6, 6)
    return record


def usage_snapshot(agent: Any) -> Any:
    """The agent's usage now, to subtract at the end of an episode (clients may be shared)."""
    return _find_usage(agent)


# Keys of an LLM agent's summary that the usage record holds (the record keeps one copy of each).
_USAGE_KEYS = ("requests", "prompt_tokens", "completion_tokens", "cost_usd")


def merge_usage(usage: UsageRecord | None, summary: Mapping[str, Any]) -> tuple[UsageRecord, dict[str, Any]]:
    """One usage record for an LLM agent's episode, and its `llm` block without the duplicates.

    Tokens and attempts come from the agent's client (every HTTP exchange, rejected replies
    included); the cost from the agent's price table (0 for the embedded model, the same price
    `--max-cost` uses), else from `$DISCOVERYLAB_LLM_PRICE`, else None (unknown price).
    """
    if usage is None:  # no client was ever made (the episode failed before the first request)
        usage = UsageRecord(requests=int(summary.get("requests") or 0), prompt_tokens=int(summary.get("prompt_tokens") or 0),
                            completion_tokens=int(summary.get("completion_tokens") or 0))  # fmt: skip
        usage.total_tokens = usage.prompt_tokens + usage.completion_tokens
    cost = summary.get("cost_usd")
    if cost is not None:
        usage = usage.model_copy(update={"cost_usd": round(float(cost), 9)})
    return usage, {k: v for k, v in summary.items() if k not in _USAGE_KEYS}
