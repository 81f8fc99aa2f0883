"""Hypothesizer (paper App. C.3): act from a working memory of measurements and hypotheses,
then reflect on the result and update that memory, every step (two model calls per action).

The memory holds MEASUREMENTS (what was observed, at which step) and HYPOTHESES (statement,
status pending/confirmed/rejected, supporting evidence). Each action reply carries the action,
an explanation tying it to the running hypothesis and a short note for the next step; the
prompt shows the last three actions with their explanations and notes. The reflection sees the
whole observation the action produced. Every 10 actions a third call consolidates the WHOLE memory
into at most 40 entries and 2,000 tokens (the paper's caps, counted with the model's tokenizer;
600 tokens for the embedded 4k-context model), and sooner when the memory passes twice its token
cap (ours: it is in every prompt); if the reply is unusable or still over a cap, the
newest entries are kept (hypotheses first) until it fits. With `vision=True` the rendered views of
the previous and the current step go along as base64 PNGs, as the original sent them.
The knowledge report is the memory itself, as in the paper.
"""

from __future__ import annotations

import base64
import io
import json
from typing import Any

from discoverylab.agents.llm_common import (
    LLMAgentBase,
    StepNote,
    action_schema,
    dumps_action,
    task_text,
    to_action,
)
from discoverylab.world.lm_observation import lm_observation

HYPOTHESIZER_ROLE = (
    "You are a scientist agent in DiscoveryWorld. You keep a working memory of MEASUREMENTS (specific "
    "observations of objects) and HYPOTHESES (with status pending, confirmed or rejected and the evidence). "
    "Choose actions that test your running hypothesis and make progress on the task."
)
REFLECT_ROLE = (
    "You update a scientist's working memory after an action. Add the new measurements the result shows "
    "(specific values, object names and UUIDs) and add or update hypotheses with their status and evidence."
)
CONSOLIDATE_ROLE = (
    "You consolidate a scientist's working memory of measurements and hypotheses into a smaller, more "
    "useful one in the same format: merge repeated or equivalent entries, drop irrelevant ones, keep every "
    "specific value, object name and UUID that could matter for the task. Hypotheses keep a status and "
    "brief supporting evidence. Respect the size limits you are given."
)
CONSOLIDATE_EVERY = 10  # actions between consolidations (paper App. C.3)
MEMORY_LIMIT = 40  # entries after a consolidation
MEMORY_TOKENS = 2000  # tokens of the memory (JSON) after a consolidation
EMBEDDED_MEMORY_TOKENS = 600  # the embedded model has a 4k context
EARLY_FACTOR = 2  # consolidate before the 10th action once the memory passes this many times its token cap
STATUS = ("pending", "confirmed", "rejected")


def png_base64(image: Any) -> str:
    """An RGB array as a `data:` URL holding a PNG (what the original's `vision` field carries)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


class HypothesizerAgent(LLMAgentBase):
    name = "hypothesizer"
    system_role = HYPOTHESIZER_ROLE

    def __init__(self, *args: Any, vision: bool | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.wants_image = self.settings.vision if vision is None else vision
        self.image_url: str | None = None
        self.previous_image_url: str | None = None
        self.memory_tokens = EMBEDDED_MEMORY_TOKENS if self._local else MEMORY_TOKENS

    def set_image(self, image: Any) -> None:
        """Called by the episode runner before `act` when `wants_image` is set: this step's view
        (the one before becomes the previous view)."""
        self.previous_image_url, self.image_url = self.image_url, png_base64(image)

    def reset(self, obs: dict[str, Any]) -> None:
        self.start(obs)
        self.task = task_text(obs)
        self.memory: list[dict[str, Any]] = []
        self.recent: list[dict[str, Any]] = []  # last actions with explanation and note
        self._pending: dict[str, Any] | None = None
        self.image_url = self.previous_image_url = None
        self.consolidations: list[dict[str, Any]] = []  # entries and tokens before and after each

    # ---- the act-then-reflect cycle --------------------------------------------------------
    def act(self, obs: dict[str, Any]) -> Any:
        if self._pending is not None:
            self._reflect(obs, self._pending)
            self._after_reflection(self._pending["step"])
            self._pending = None
        note = StepNote(step=self.step, kind="act")
        extra = {"explanation": {"type": "string", "maxLength": self.text_chars},
                 "memory_note": {"type": "string", "maxLength": self.text_chars}}  # fmt: skip
        schema = action_schema(obs, self.text_chars, extra)
        data = self.ask(self._act_messages(obs), schema, "action", note)
        if data is None:
            action: Any = note.raw
        else:
            note.thought = str(data.get("explanation", "")) + (f" ({data['thought']})" if data.get("thought") else "")
            action = to_action(data)
            note.extra["memory_note"] = str(data.get("memory_note", ""))
        note.action = action
        self.notes.append(note)
        entry = {"step": self.step, "action": dumps_action(action), "explanation": note.thought, "note": note.extra.get("memory_note", "")}
        self.recent = [*self.recent, entry][-3:]
        self._pending = entry
        self.step += 1
        return action

    def observe_final(self, obs: dict[str, Any]) -> None:
        """At the episode's end: reflect on the last action too (the original reflects within each
        step, so its memory holds the last result), unless the cost ceiling stopped the episode."""
        if self._pending is not None and not (self.stop_reason or "").startswith("max_cost"):
            self._reflect(obs, self._pending)
            self._after_reflection(self._pending["step"])
        self._pending = None

    def _reflect(self, obs: dict[str, Any], last: dict[str, Any]) -> None:
        short = {"type": "string", "maxLength": self.text_chars}
        schema = {
            "type": "object",
            "properties": {
                "measurements": {"type": "array", "items": short, "maxItems": 3},
                "hypotheses": {"type": "array", "maxItems": 3, "items": {
                    "type": "object",
                    "properties": {"hypothesis": short, "status": {"type": "string", "enum": list(STATUS)}, "evidence": short},
                    "required": ["hypothesis", "status", "evidence"], "additionalProperties": False}},
            },
            "required": ["measurements", "hypotheses"],
            "additionalProperties": False,
        }  # fmt: skip
        user = (
            f"Task: {self.task}\n\nWorking memory:\n{self._memory_text()}\n\nAction taken: {last['action']} "
            f"({last['explanation']})\nResult: {obs['lastActionMessage'][:1500]}\n\nObservation after the action:\n"
            f"{lm_observation(obs)}\n\nReply with JSON: new measurements and new or updated hypotheses (empty lists "
            "when nothing was learned)."
        )
        note = StepNote(step=last["step"], kind="reflect")
        data = self.ask([{"role": "system", "content": REFLECT_ROLE}, {"role": "user", "content": user}], schema, "memory", note)
        self.notes.append(note)
        if data is None:
            return
        for text in data.get("measurements", []):
            if str(text).strip():
                self.memory.append({"measurement": str(text), "step": last["step"]})
        for item in data.get("hypotheses", []):
            self._update_hypothesis(item, last["step"])

    def _after_reflection(self, step: int) -> None:
        """Consolidate every 10 actions, or sooner once the memory passes twice its token cap (it
        is in every prompt: ten long reflections could outgrow a small model's context)."""
        if (step + 1) % CONSOLIDATE_EVERY == 0 or self.count_tokens(self._memory_text()) > EARLY_FACTOR * self.memory_tokens:
            self._consolidate(step)

    def _update_hypothesis(self, item: dict[str, Any], step: int) -> None:
        text = str(item.get("hypothesis", "")).strip()
        if not text:
            return
        entry = {"hypothesis": text, "status": item.get("status", "pending"), "supporting evidence": str(item.get("evidence", "")), "step": step}
        for i, old in enumerate(self.memory):
            if old.get("hypothesis", "").lower() == text.lower():
                self.memory[i] = entry
                return
        self.memory.append(entry)

    def memory_size(self) -> tuple[int, int]:
        """(entries, tokens) of the memory, tokens counted on its JSON with the model's tokenizer."""
        return len(self.memory), self.count_tokens(self._memory_text())

    def _consolidate(self, step: int) -> None:
        """Every 10 actions: the model rewrites the whole memory within the caps (paper App. C.3)."""
        entries, tokens = self.memory_size()
        short = {"type": "string", "maxLength": self.text_chars}
        item = {"type": "object", "properties": {
            "kind": {"type": "string", "enum": ["measurement", "hypothesis"]}, "text": short,
            "status": {"type": "string", "enum": list(STATUS)}, "evidence": short,
            "step": {"type": "string", "maxLength": 24}},
            "required": ["kind", "text", "status", "evidence", "step"], "additionalProperties": False}
        schema = {"type": "object", "properties": {"memory": {"type": "array", "items": item, "maxItems": MEMORY_LIMIT}},
                  "required": ["memory"], "additionalProperties": False}  # fmt: skip
        limits = (f"Limits: at most {MEMORY_LIMIT} entries and {self.memory_tokens} tokens. The memory now has "
                  f"{entries} entries and {tokens} tokens" + (" (over a limit: shrink it)." if entries > MEMORY_LIMIT
                  or tokens > self.memory_tokens else "."))  # fmt: skip
        user = (f"Task: {self.task}\n\n{limits}\n\nWorking memory:\n{self._memory_text()}\n\n{limits}\n\nReply with "
                "JSON: the consolidated memory. Each entry: kind, text, status and evidence (used for hypotheses; "
                "measurements: status pending, evidence empty) and the step or steps it comes from.")
        note = StepNote(step=step, kind="consolidate")
        data = self.ask([{"role": "system", "content": CONSOLIDATE_ROLE}, {"role": "user", "content": user}], schema, "consolidated_memory", note)
        self.notes.append(note)
        new = [self._entry(e) for e in (data or {}).get("memory", []) if isinstance(e, dict) and str(e.get("text", "")).strip()]
        if new:
            self.memory = new
        self._cap_memory()
        after = self.memory_size()
        self.consolidations.append({"step": step, "entries_before": entries, "tokens_before": tokens,
                                    "entries_after": after[0], "tokens_after": after[1], "used_reply": bool(new)})
        note.extra["consolidation"] = self.consolidations[-1]

    @staticmethod
    def _entry(item: dict[str, Any]) -> dict[str, Any]:
        text, step = str(item["text"]).strip(), str(item.get("step", "")).strip()
        step_value: Any = int(step) if step.isdigit() else step
        if item.get("kind") == "hypothesis":
            status = item.get("status") if item.get("status") in STATUS else "pending"
            return {"hypothesis": text, "status": status, "supporting evidence": str(item.get("evidence", "")), "step": step_value}
        return {"measurement": text, "step": step_value}

    def _cap_memory(self) -> None:
        """Within the caps: drop the oldest measurements, then the oldest hypotheses, until it fits."""
        while self.memory and (len(self.memory) > MEMORY_LIMIT or self.count_tokens(self._memory_text()) > self.memory_tokens):
            kinds = ["measurement" in m for m in self.memory]
            self.memory.pop(kinds.index(True) if any(kinds) else 0)

    # ---- prompts -----------------------------------------------------------------------
    def _memory_text(self) -> str:
        return json.dumps(self.memory, ensure_ascii=False, indent=None) if self.memory else "(empty)"

    def _act_messages(self, obs: dict[str, Any]) -> list[dict[str, Any]]:
        recent = "\n".join(f"step {r['step']}: {r['action']} - {r['explanation']} (note: {r['note']})" for r in self.recent)
        text = "\n\n".join([
            f"Task: {self.task}",
            f"Working memory:\n{self._memory_text()}",
            f"Last actions:\n{recent or '(none)'}",
            "Current observation:\n" + lm_observation(obs),
            "Reply with JSON: a brief thought, the action and its arguments (null when unused), an explanation of how "
            "it tests your running hypothesis or advances the task, and a short note for your next step.",
        ])  # fmt: skip
        content: Any = text
        if self.wants_image and self.image_url:  # the original's order: previous view, the prompt, the current view
            previous: list[dict[str, Any]] = [] if self.previous_image_url is None else [
                {"type": "text", "text": "The rendered view one step earlier:"},
                {"type": "image_url", "image_url": {"url": self.previous_image_url}}]  # fmt: skip
            content = [*previous, {"type": "text", "text": text + "\n\nThe rendered view now:"},
                       {"type": "image_url", "image_url": {"url": self.image_url}}]  # fmt: skip
        return [{"role": "system", "content": f"{self.system_role}\n\n{self.instructions}"}, {"role": "user", "content": content}]

    def knowledge_report(self) -> str:
        return self._memory_text()
