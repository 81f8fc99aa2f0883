"""What the LLM agents share: settings, the client, action schemas, accounting and knowledge.

Each agent asks the model for a JSON object constrained by a schema that follows the context
(outside a dialog: a thought plus an action name from the list and two argument slots; inside
one: a thought plus one of the offered option numbers). A reply that still does not parse is
sent to the environment as raw text, which answers with a parse error like any invalid action:
the model's mistakes become failed steps, never crashes. Only an unreachable or refusing
endpoint (`LLMUnavailable`, `LLMRequestError`) ends the episode, as an error. An episode in
which not one reply matched the schema never measured the model, so it ends `agent_error`
(`episode_failure`); one usable reply is enough for a scored episode, so a model cannot drop a
failing episode from the means by answering garbage once it is going badly.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from discoverylab.agents.pricing import cost_usd, load_prices, price_of
from discoverylab.agents.tokens import TokenCounter, estimate_tokens
from discoverylab.llm import ENV_BASE_URL, LLMBadOutput, LLMClient, StructuredCompletion
from discoverylab.world.action_specs import ACTION_SPECS
from discoverylab.world.lm_observation import lm_instructions

logger = logging.getLogger(__name__)

LOGGED_TEXT_CHARS = 2000  # longest model text kept per field of an episode log (a reply may be megabytes)


@dataclass(frozen=True, slots=True)
class LLMSettings:
    """How an LLM agent reaches its model (picklable: it travels to benchmark worker processes).

    `base_url=None` means `$DISCOVERYLAB_LLM_BASE_URL` if set, else the embedded offline model.
    `max_cost` is the per-episode ceiling in USD (None: no ceiling); `history_tokens` the budget
    of the trimmed trajectory in the prompt (None: 2,500, or 400 for the embedded 4k-context model).
    """

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    temperature: float = 0.0
    max_tokens: int | None = None
    max_cost: float | None = None
    prices_file: str | None = None
    history_tokens: int | None = None
    max_text_chars: int | None = None
    seed: int = 0
    json_mode: str = "json_schema"  # "json_object" or "prompt" for servers without schema-constrained decoding
    vision: bool = False  # Hypothesizer: also send the rendered views (previous and current step, base64 PNGs)
    end_action: bool = False  # ReAct: offer an END action that ends the episode (off in the paper presets)

    @property
    def embedded(self) -> bool:
        return self.base_url is None and not os.environ.get(ENV_BASE_URL)

    def client(self) -> LLMClient:
        """A client for these settings (the process-wide embedded server when no URL is set)."""
        options: dict[str, Any] = {"temperature": self.temperature, "seed": self.seed, "json_mode": self.json_mode}
        if self.embedded:
            from discoverylab.llm.local_server import shared_server

            return shared_server().client(**options)
        return LLMClient(base_url=self.base_url, model=self.model, api_key=self.api_key, **options)

    def describe(self) -> dict[str, Any]:
        return {"model": self.model, "base_url": self.base_url or ("embedded" if self.embedded else os.environ.get(ENV_BASE_URL))}


# What each kind of model call (a StepNote's `kind`) asks for, as `agent_error` names it.
REPLY_KINDS = {"act": "action", "reflect": "memory", "consolidate": "consolidated memory", "plan": "plan",
               "answers": "answer sheet"}  # fmt: skip


@dataclass(slots=True)
class StepNote:
    """What the agent thought and sent at one step (goes into the episode log)."""

    step: int
    kind: str
    thought: str = ""
    action: Any = None
    raw: str = ""
    error: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out = {"step": self.step, "kind": self.kind, "thought": self.thought[:LOGGED_TEXT_CHARS], "action": self.action,
               "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}  # fmt: skip
        if self.error:
            out.update(error=self.error[:LOGGED_TEXT_CHARS], raw=self.raw[:LOGGED_TEXT_CHARS])
        out.update(self.extra)
        return out


def action_schema(obs: dict[str, Any], thought_chars: int, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The reply schema for this observation: dialog choices in a dialog, else an action."""
    props: dict[str, Any] = dict(extra or {})
    props["thought"] = {"type": "string", "maxLength": thought_chars}
    dialog = obs.get("dialog_box", {})
    options = dialog.get("dialogOptions") or {}
    if dialog.get("is_in_dialog") and options:
        props["chosen_dialog_option_int"] = {"type": "integer", "enum": sorted(int(k) for k in options)}
    else:
        names = [a["name"] for a in obs.get("availableActions", [])] or [s.name for s in ACTION_SPECS.values() if s.advertised]
        arg = {"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 60}, {"type": "null"}]}
        props.update({"action": {"type": "string", "enum": names}, "arg1": arg, "arg2": arg})
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def to_action(data: dict[str, Any]) -> dict[str, Any]:
    """The environment action inside a reply (other keys, such as the thought, stay out)."""
    if "chosen_dialog_option_int" in data:
        return {"chosen_dialog_option_int": data["chosen_dialog_option_int"]}
    action = {"action": data.get("action")}
    for key in ("arg1", "arg2"):
        if data.get(key) not in (None, ""):
            action[key] = data[key]
    return action


def task_text(obs: dict[str, Any]) -> str:
    return "\n".join(t["description"] for t in obs.get("taskProgress", []))


def trim_in_chunks(entries: list[str], budget_tokens: int, start: int,
                   count: Callable[[str], int] = estimate_tokens) -> tuple[list[str], int]:
    """The history to show, trimmed from the oldest end to the token budget ('[TRIMMED HISTORY]'
    marks a cut), and the new `start`. The cut moves in jumps: when the entries from `start` on
    overflow the budget, the oldest are dropped until the rest fits half of it (or only the newest
    is left, if that alone fits the budget). Between jumps every prompt's history begins with the
    same text, so servers that cache prompt prefixes (llama.cpp, vLLM, hosted prompt caching) only
    process what is new. `count` is the model's token count (`tokens.TokenCounter.count`)."""
    costs = [count(entry) + 1 for entry in entries]  # +1: the newline that joins them
    if sum(costs[start:]) > budget_tokens:
        used, cut = 0, len(entries)
        for i in range(len(entries) - 1, start - 1, -1):
            if used + costs[i] > budget_tokens // 2:
                break
            used += costs[i]
            cut = i
        if cut == len(entries) and entries and costs[-1] <= budget_tokens:
            cut = len(entries) - 1  # the newest entry alone is over half the budget: keep it
        start = cut
    return (["[TRIMMED HISTORY]"] if start > 0 else []) + entries[start:], start


class LLMAgentBase:
    """Client, accounting, cost ceiling and knowledge shared by the LLM agents."""

    name = "llm"
    system_role = "You are a scientist exploring a simulated world to make a discovery."
    stop_reason: str | None  # why the episode stopped early: the cost ceiling, or the agent ended it

    def __init__(self, settings: LLMSettings | None = None, client: LLMClient | None = None) -> None:
        self.settings = settings or LLMSettings()
        self._client = client
        embedded = client is None and self.settings.embedded
        self.history_tokens = self.settings.history_tokens or (400 if embedded else 2500)
        self.max_tokens = self.settings.max_tokens or (300 if embedded else 800)
        self.text_chars = self.settings.max_text_chars or (160 if embedded else 1000)
        self._price: tuple[float, float] | None = None
        self._local = embedded
        self._tokens: TokenCounter | None = None
        self.reset_accounting()

    # ---- lifecycle ------------------------------------------------------------------
    @property
    def client(self) -> LLMClient:
        if self._client is None:
            self._client = self.settings.client()
        return self._client

    @property
    def tokens(self) -> TokenCounter:
        """The model's token counter for prompt budgets (tiktoken, the server's /tokenize, or an estimate)."""
        if self._tokens is None:
            client = self.client
            self._tokens = TokenCounter(self.settings.model or client.known_model, client.base_url, self.settings.api_key)
        return self._tokens

    def count_tokens(self, text: str) -> int:
        return self.tokens.count(text)

    def end_episode(self, why: str) -> None:
        """The agent ends the episode itself (ReAct's END, Plan+Execute's "Done!"): its `act`
        then returns None and the runner stops without another step."""
        self.stop_reason = f"ended by the agent: {why[:200]}"

    def reset_accounting(self) -> None:
        self.notes: list[StepNote] = []
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.requests = 0
        self.invalid_replies = 0
        self.stop_reason: str | None = None
        self.error: str | None = None
        self.step = 0
        self.instructions = ""

    def start(self, obs: dict[str, Any]) -> None:
        self.reset_accounting()
        self.task_description = task_text(obs)
        self.instructions = lm_instructions("teleportLocations" in obs, obs.get("teleportLocations"))

    # ---- asking the model --------------------------------------------------------------
    def ask(self, messages: list[dict[str, Any]], schema: dict[str, Any], name: str, note: StepNote) -> dict[str, Any] | None:
        """One structured call; returns the data, or None with the note marked invalid.

        Tokens are counted from the client's usage, so rejected attempts (re-asked after a reply
        that broke the schema) are paid for too."""
        client = self.client
        before = client.usage
        data: dict[str, Any] | None = None
        try:
            result: StructuredCompletion = client.complete_structured(
                messages, schema, name, clamp=True, bad_output_retries=1, max_tokens=self.max_tokens,
                seed=self.settings.seed * 100_003 + self.requests,
            )  # fmt: skip
            data = result.data
        except LLMBadOutput as exc:
            self.invalid_replies += 1
            note.error, note.raw = str(exc)[:500], exc.text[:LOGGED_TEXT_CHARS]
        finally:
            after = client.usage
            prompt, completion = after.prompt_tokens - before.prompt_tokens, after.completion_tokens - before.completion_tokens
            self.requests += 1
            self.prompt_tokens += prompt
            self.completion_tokens += completion
            note.prompt_tokens += prompt
            note.completion_tokens += completion
            self._check_cost()
        return data

    def _check_cost(self) -> None:
        if self.settings.max_cost is None:
            return
        cost = self.cost_usd()
        if cost is not None and cost >= self.settings.max_cost:
            self.stop_reason = f"max_cost: ${cost:.4f} >= ${self.settings.max_cost:.4f}"

    def price(self) -> tuple[float, float] | None:
        if self._price is None:
            model = self.settings.model or (self.client.model if not self._local else "embedded")
            self._price = price_of(model, load_prices(self.settings.prices_file), local=self._local)
        return self._price

    def cost_usd(self) -> float | None:
        return cost_usd(self.prompt_tokens, self.completion_tokens, self.price())

    # ---- what goes into the record -----------------------------------------------------
    def episode_failure(self) -> tuple[str, str] | None:
        """("agent_error", why) when the model answered but not one reply could be acted on; `why`
        names the kinds of reply that were off their schema (the Hypothesizer's memory replies, the
        Plan+Execute planner's: before, every reply was called an action reply) and the last one's
        problem."""
        if not self.requests or self.invalid_replies < self.requests:
            return None
        kinds = Counter(REPLY_KINDS.get(n.kind, n.kind) for n in self.notes if n.error)
        if set(kinds) <= {"action"}:
            what = "the action schema"
        else:
            what = "its schemas (" + ", ".join(f"{n} {kind}" for kind, n in kinds.items()) + ")"
        last = next((n for n in reversed(self.notes) if n.error), None)
        if last is None:
            problem = "last problem: unknown"
        else:
            kind = REPLY_KINDS.get(last.kind, last.kind)
            problem = f"last problem, in {'an' if kind[0] in 'aeiou' else 'a'} {kind} reply: {last.error[:300]}"
        return "agent_error", (f"none of the model's {self.requests} replies matched {what}, so the agent never "
                               f"acted on the model's choice ({problem})")  # fmt: skip

    @property
    def last_note(self) -> dict[str, Any] | None:
        return self.notes[-1].as_dict() if self.notes else None

    def knowledge_report(self) -> str:
        """What the agent has written down, for the knowledge judge (overridden per agent)."""
        return "\n".join(f"step {n.step}: {n.thought}" for n in self.notes if n.thought)

    def answer_sheet(self, form: Any) -> dict[str, Any]:
        """The final prompt: the task, the agent's own notes (its knowledge report, newest part
        kept to the history budget) and the answer sheet; the reply is constrained to the form's
        JSON schema. An unusable reply hands in an empty sheet (every field scores 0), and so does
        an agent past its cost ceiling (no call is made)."""
        if self.stop_reason:
            return {}
        notes = self.knowledge_report()
        cost = estimate_tokens(notes)  # conservative: the kept tail fits the history budget
        if cost > self.history_tokens:
            notes = "[TRIMMED]\n" + notes[-int(len(notes) * self.history_tokens / cost):]
        user = (f"Task: {getattr(self, 'task_description', '')}\n\nYour notes from the episode:\n{notes or '(none)'}"
                f"\n\nThe episode is over. Fill in the answer sheet from what you found out.\n{form.text()}\n\n"
                "Reply with a JSON object holding exactly these fields.")  # fmt: skip
        note = StepNote(step=self.step, kind="answers")
        data = self.ask([{"role": "system", "content": self.system_role}, {"role": "user", "content": user}],
                        form.json_schema(), "answer_sheet", note)  # fmt: skip
        note.extra["answers"] = data
        self.notes.append(note)
        return dict(data or {})

    def summary(self) -> dict[str, Any]:
        """Tokens, cost and model for the episode record."""
        cost = self.cost_usd()
        return {
            **self.settings.describe(),
            "model": self.settings.model or (self._client.known_model if self._client is not None else None),
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "invalid_replies": self.invalid_replies,
            "cost_usd": None if cost is None else round(cost, 9),
            "stop_reason": self.stop_reason,
            "tokenizer": self._tokens.kind if self._tokens is not None else None,
        }


def dumps_action(action: Any) -> str:
    try:
        return json.dumps(action, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(action)[:200]
