"""Hypothesizer (paper App. C.3): act from a working memory of measurements and hypotheses,
then reflect on the result and update that memory, every step (two model calls per action).

The memory holds MEASUREMENTS (what was observed, at which step) and HYPOTHESES (statement,
status pending/confirmed/rejected, supporting evidence). Each action reply carries the action,
an explanation tying it to the running hypothesis and a short note for the next step; the
prompt shows the last three actions with their explanations and notes. When the memory passes 40
entries (the paper's summary limit) a third call asks the model to summarise the older
measurements into a few; should that fail, the newest entries are kept (hypotheses first).
With `vision=True` the rendered view goes along as a base64 PNG (for models that read images).
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
SUMMARY_ROLE = (
    "You condense a scientist's older measurements into a few short summary measurements. Keep every "
    "specific value, object name and UUID that could matter for the task; drop repetition."
)
MEMORY_LIMIT = 40
KEEP_RECENT = 10  # the newest measurements are never summarised
SUMMARY_ITEMS = 8
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

    def set_image(self, image: Any) -> None:
        """Called by the episode runner before `act` when `wants_image` is set."""
        self.image_url = png_base64(image)

    def reset(self, obs: dict[str, Any]) -> None:
        self.start(obs)
        self.task = task_text(obs)
        self.memory: list[dict[str, Any]] = []
        self.recent: list[dict[str, Any]] = []  # last actions with explanation and note
        self._pending: dict[str, Any] | None = None

    # ---- the act-then-reflect cycle --------------------------------------------------------
    def act(self, obs: dict[str, Any]) -> Any:
        if self._pending is not None:
            self._reflect(obs, self._pending)
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
            f"({last['explanation']})\nResult: {obs['lastActionMessage'][:1500]}\n\nReply with JSON: new measurements "
            "and new or updated hypotheses (empty lists when nothing was learned)."
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
        if len(self.memory) > MEMORY_LIMIT:
            self._summarise(last["step"])
        self._cap_memory()

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

    def _summarise(self, step: int) -> None:
        """Replace all but the newest measurements by the model's summary of them."""
        measurements = [m for m in self.memory if "measurement" in m]
        old = measurements[:-KEEP_RECENT]
        if len(old) < 2:
            return
        short = {"type": "string", "maxLength": self.text_chars}
        schema = {"type": "object", "properties": {"summary": {"type": "array", "items": short, "maxItems": SUMMARY_ITEMS}},
                  "required": ["summary"], "additionalProperties": False}  # fmt: skip
        listing = "\n".join(f"- step {m['step']}: {m['measurement']}" for m in old)
        user = f"Task: {self.task}\n\nOlder measurements:\n{listing}\n\nReply with JSON: at most {SUMMARY_ITEMS} summary measurements."
        note = StepNote(step=step, kind="summarise")
        data = self.ask([{"role": "system", "content": SUMMARY_ROLE}, {"role": "user", "content": user}], schema, "summary", note)
        self.notes.append(note)
        texts = [str(t).strip() for t in (data or {}).get("summary", []) if str(t).strip()]
        if not texts:
            return  # the hard cap below keeps the newest entries instead
        span = f"summary of steps {old[0]['step']}-{old[-1]['step']}"
        first = self.memory.index(old[0])
        dropped = {id(m) for m in old}
        rest = [m for m in self.memory if id(m) not in dropped]
        self.memory = rest[:first] + [{"measurement": t, "step": span} for t in texts] + rest[first:]

    def _cap_memory(self) -> None:
        if len(self.memory) <= MEMORY_LIMIT:
            return
        hypotheses = [m for m in self.memory if "hypothesis" in m][-MEMORY_LIMIT // 2:]
        measurements = [m for m in self.memory if "measurement" in m][-(MEMORY_LIMIT - len(hypotheses)):]
        keep = {id(m) for m in hypotheses + measurements}
        self.memory = [m for m in self.memory if id(m) in keep]

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
        if self.wants_image and self.image_url:
            content = [{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": self.image_url}}]
        return [{"role": "system", "content": f"{self.system_role}\n\n{self.instructions}"}, {"role": "user", "content": content}]

    def knowledge_report(self) -> str:
        return self._memory_text()
