"""An LLM scientist for any Tiny Labs protocol, speaking through JSON-schema constrained replies.

Each turn the agent shows the model the lab's messages and asks for a JSON object matching the
*action format* of the current protocol phase (e.g. `SAMPLE v` or a batch of sequences in Protocol
A; an experiment or a report in the JSON protocols), then renders that object into the exact
message text the protocol parses. Constrained decoding makes even a 135M model produce well-formed
actions, so the loop, parsing, transcripts and grading can be tested offline; a strong hosted model
uses the same path. Protocols without a registered format get a generic one (free `message` text).

The agent never crashes an episode because of the model: an unusable reply is sent as-is (cut to
`LOGGED_TEXT_CHARS`, or as an empty message) and the protocol answers with its error text, as it
would for any agent. Only a missing or failing endpoint (`LLMUnavailable`, `LLMRequestError`)
stops the run. An episode in which not one reply could be acted on ends `agent_error`
(`episode_failure`): it never measured the model, so it must not read as a score of 0.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any

from discoverylab.labs.agents import register_agent
from discoverylab.labs.llm_formats import (
    DEFAULT_LIMITS,
    FORMATS,
    UNCAPPED_FIELDS,
    ActionFormat,
    FormatLimits,
    generic_format,
    register_action_format,
)
from discoverylab.labs.protocol import Protocol
from discoverylab.llm import LLMBadOutput, LLMClient, LLMRequestError, default_client

__all__ = ["ActionFormat", "AgentTurn", "FormatLimits", "LLMLabAgent", "generic_format", "register_action_format"]

logger = logging.getLogger(__name__)

DEFAULT_SYSTEM_PROMPT = (
    "You are a careful experimental scientist working in a simulated lab. Read the lab's messages, "
    "plan informative experiments, and state conclusions that follow from the evidence. Keep your "
    "reasoning short. Always answer with the JSON object requested."
)
HYPOTHESIS_UPDATE_PROMPT = (
    "Every round, before you act, use your reasoning to restate your current hypothesis about the lab, say "
    "how the latest result changed it (confirmed, refuted or refined), and choose the action that best "
    "tests what is still uncertain."
)
"""The per-round hypothesis update (after the paper's protocol): the model revises its hypothesis each turn."""
LOGGED_TEXT_CHARS = 4000  # longest raw model text kept per turn (transcripts), or sent on when unusable


@dataclass(slots=True)
class AgentTurn:
    """What happened in one `act` call (kept for transcripts and debugging)."""

    turn: int
    format: str
    message: str
    data: dict[str, Any] | None = None
    raw_text: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    rejected: int = 0
    error: str = ""

    def as_record(self) -> dict[str, Any]:
        return {
            "turn": self.turn, "format": self.format, "message": self.message[:LOGGED_TEXT_CHARS],
            "data": self.data, "raw_text": self.raw_text[:LOGGED_TEXT_CHARS], "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens, "latency_s": round(self.latency_s, 4),
            "rejected": self.rejected, "error": self.error[:LOGGED_TEXT_CHARS],
        }


class LLMLabAgent:
    """`LabAgent` backed by an OpenAI-compatible model (hosted, or the embedded offline one).

    Args:
        protocol: the protocol being played; lets the agent pick the right action format and
            read public episode facts (phase, held-out ids). Optional: without it the generic
            format is used unless `protocol_name` names a registered one.
        client: the LLM client; defaults to `discoverylab.llm.default_client()` on first use.
        protocol_name: registry name when `protocol` is not given.
        system_prompt: role description for the model.
        temperature, max_tokens: generation settings per turn.
        history_turns: how many previous exchanges to show besides the lab's first message.
        max_message_chars: longest excerpt of one lab message shown to the model (long JSON
            results are cut in the middle). The defaults fit a 32k-token context.
        bad_output_retries: extra attempts when the reply violates the schema.
        max_text_chars: cap on every free-text field of the action formats (programs excepted).
            Small models fill whatever length they are allowed with filler; lower it for them.
        limits: what the action formats let the model say (edges, claims, factors per experiment,
            predictor programs); `llm_formats.SMALL_MODEL_LIMITS` suits a 135M model.
        hypothesis_updates: add the per-round hypothesis-update instruction to every turn.

    Every option can be set from the CLI: `lab run --agent llm --agent-options '{"history_turns": 2}'`.
    """

    def __init__(
        self,
        protocol: Protocol | None = None,
        client: LLMClient | None = None,
        *,
        protocol_name: str | None = None,
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        temperature: float = 0.0,
        max_tokens: int = 2000,
        history_turns: int = 8,
        max_message_chars: int = 12000,
        bad_output_retries: int = 1,
        max_text_chars: int | None = 400,
        limits: FormatLimits | dict[str, Any] = DEFAULT_LIMITS,
        hypothesis_updates: bool = True,
    ) -> None:
        self.protocol = protocol
        self.protocol_name = protocol_name or (protocol.name if protocol is not None else None)
        self._client = client
        self.system_prompt = system_prompt
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.history_turns = history_turns
        self.max_message_chars = max_message_chars
        self.bad_output_retries = bad_output_retries
        self.max_text_chars = max_text_chars
        self.limits = limits if isinstance(limits, FormatLimits) else FormatLimits(**limits)
        self.hypothesis_updates = hypothesis_updates
        self.seed = 0
        self.turns: list[AgentTurn] = []
        self._exchanges: list[tuple[str, str]] = []
        self._first_message: str | None = None

    @property
    def client(self) -> LLMClient:
        if self._client is None:
            self._client = default_client()
        return self._client

    def reset(self, seed: int) -> None:
        self.seed = int(seed)
        self.turns = []
        self._exchanges = []
        self._first_message = None

    def act(self, message: str) -> str:
        """Answer one lab message with a rendered, schema-checked action."""
        if self._first_message is None:
            self._first_message = message
        action_format = self._format_for(message)
        record = AgentTurn(turn=len(self.turns) + 1, format=action_format.name, message="")
        try:
            result = self._ask(self._messages(message, action_format), action_format, record.turn)
        except LLMBadOutput as exc:
            record.error = str(exc)[:LOGGED_TEXT_CHARS]
            record.raw_text = exc.text[:LOGGED_TEXT_CHARS]
            record.rejected = self.bad_output_retries + 1
            record.message = exc.text.strip()[:LOGGED_TEXT_CHARS]  # let the protocol explain what is wrong
            logger.info("turn %d: no valid %s action (%s)", record.turn, action_format.name, exc)
        else:
            record.data = result.data
            record.raw_text = result.completion.text[:LOGGED_TEXT_CHARS]
            record.prompt_tokens = result.completion.prompt_tokens
            record.completion_tokens = result.completion.completion_tokens
            record.latency_s = result.completion.latency_s
            record.rejected = len(result.rejected)
            try:
                record.message = action_format.render(result.data)
            except (KeyError, TypeError, ValueError, IndexError) as exc:
                record.error = f"could not render the action: {exc}"
                record.message = result.completion.text[:LOGGED_TEXT_CHARS]
        self.turns.append(record)
        self._exchanges.append((message, record.message))
        return record.message

    def episode_failure(self) -> tuple[str, str] | None:
        """("agent_error", why) when the model answered every turn but no reply could be acted on.

        One usable turn makes the episode count: a model cannot drop a failing episode from the
        means by answering garbage once it is going badly."""
        if not self.turns or any(turn.data is not None and not turn.error for turn in self.turns):
            return None
        return "agent_error", (
            f"none of the model's {len(self.turns)} replies matched the action format, so the lab never got "
            f"an action chosen by the model (last problem: {self.turns[-1].error[:300]})")

    def turn_records(self) -> list[dict[str, Any]]:
        """JSON-ready records of every turn of the current episode."""
        return [turn.as_record() for turn in self.turns]

    # ------------------------------------------------------------------ internals

    def _format_for(self, message: str) -> ActionFormat:
        chooser = FORMATS.get(self.protocol_name or "")
        action_format = generic_format(self.protocol, message)
        if chooser is not None:
            try:
                action_format = chooser(self.protocol, message, limits=self.limits)
            except Exception as exc:  # a format bug must not end the episode: degrade to free text
                logger.warning("action format for %s failed (%s); using the generic format", self.protocol_name, exc)
        if self.max_text_chars is None:
            return action_format
        return replace(action_format, schema=_cap_strings(action_format.schema, self.max_text_chars))

    def _ask(self, messages: list[dict[str, str]], action_format: ActionFormat, turn: int) -> Any:
        options: dict[str, Any] = {
            "clamp": True,
            "bad_output_retries": self.bad_output_retries,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed * 1000 + turn,
        }
        try:
            return self.client.complete_structured(messages, action_format.schema, action_format.name, **options)
        except LLMRequestError as exc:
            if exc.status_code != 400:
                raise
            # Most often the prompt outgrew the context window: retry with the current message only.
            logger.info("turn %d: request rejected (%s); retrying with a compact prompt", turn, exc)
            compact = [messages[0], {"role": "user", "content": _excerpt(messages[-1]["content"], 1500)}]
            return self.client.complete_structured(compact, action_format.schema, action_format.name, **options)

    def _messages(self, message: str, action_format: ActionFormat) -> list[dict[str, str]]:
        system = self.system_prompt
        if self.hypothesis_updates:
            system += "\n\n" + HYPOTHESIS_UPDATE_PROMPT
        if action_format.instructions:
            system += "\n\n" + action_format.instructions
        messages = [{"role": "system", "content": system}]
        history = self._exchanges[-self.history_turns:] if self.history_turns > 0 else []
        first = self._first_message
        if first is not None and first != message and (not history or history[0][0] != first):
            messages.append({"role": "user", "content": _excerpt(first, self.max_message_chars)})
            messages.append({"role": "assistant", "content": "(earlier turns omitted)"})
        for lab_text, agent_text in history:
            messages.append({"role": "user", "content": _excerpt(lab_text, self.max_message_chars)})
            messages.append({"role": "assistant", "content": agent_text or "(empty)"})
        messages.append({"role": "user", "content": _excerpt(message, self.max_message_chars)})
        return messages


def _cap_strings(schema: Any, cap: int) -> Any:
    """Copy of `schema` whose free-text strings (no pattern, enum or const) are at most `cap` long."""
    if isinstance(schema, list):
        return [_cap_strings(item, cap) for item in schema]
    if not isinstance(schema, dict):
        return schema
    capped = {key: value if key in UNCAPPED_FIELDS else _cap_strings(value, cap) for key, value in schema.items()}
    if capped.get("type") == "string" and not {"pattern", "enum", "const"} & capped.keys():
        capped["maxLength"] = min(int(capped.get("maxLength", cap)), cap)
    return capped


def _excerpt(text: str, limit: int) -> str:
    """Keep the head and the tail of a long message (instructions first, latest results last)."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}\n[... {len(text) - limit} characters omitted ...]\n{text[-tail:]}"


def _make_llm_agent(protocol: Protocol, **options: Any) -> LLMLabAgent:
    return LLMLabAgent(protocol, **options)


register_agent("*", "llm", _make_llm_agent)
