"""A scripted OpenAI-compatible server that answers the prompts an original-style agent sends.

The original's HypothesizerAgent asks three kinds of question: the next action (its prompt holds
the observation as JSON after "Environment Observation (as JSON):"), new scientific knowledge,
and every 10 steps a consolidated knowledge base. `PromptAnsweringServer` answers each from the
prompt itself with a small, deterministic policy (fetch the task's backticked objects, put the
first into or give it to the second; with none named and a person to ask or follow, talk to
someone in view; answer dialogs with their first option; otherwise walk), so a long run needs no
queue of canned replies. Used by tests/test_compat_original.py and, outside
the project, to run the original's own agents through `python -m discoverylab.compat`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from llm_scripted_server import Scripted, ScriptedLLMServer, chat_reply

OBSERVATION_MARKER = "Environment Observation (as JSON):\n```json\n"
KNOWLEDGE_MARKER = "write down any measurements or hypotheses"
CONSOLIDATE_MARKER = "consolidated knowledge base"
DIRECTIONS = ("north", "east", "south", "west")


def prompt_text(request: dict[str, Any]) -> str:
    """The text parts of every message (image parts are skipped)."""
    parts: list[str] = []
    for message in request.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return "\n".join(parts)


def observation_in(prompt: str) -> dict[str, Any] | None:
    """The `ui` part of the observation JSON the prompt carries, if any."""
    start = prompt.find(OBSERVATION_MARKER)
    if start < 0:
        return None
    start += len(OBSERVATION_MARKER)
    try:
        data = json.loads(prompt[start:prompt.find("```", start)])
    except ValueError:
        return None
    ui = data.get("ui") if isinstance(data, dict) else None
    return ui if isinstance(ui, dict) else None


def _find(objects: list[dict[str, Any]], word: str) -> int | None:
    for obj in objects:
        if obj.get("name") == word or word in str(obj.get("name", "")).split():
            return int(obj["uuid"])
    return None


def choose_action(ui: dict[str, Any], step: int) -> dict[str, Any]:
    """A deterministic, task-reading policy over one observation (no hidden information)."""
    dialog = ui.get("dialog_box") or {}
    if dialog.get("is_in_dialog") and dialog.get("dialogOptions"):
        return {"chosen_dialog_option_int": min(int(k) for k in dialog["dialogOptions"])}
    task = " ".join(t.get("description", "") for t in ui.get("taskProgress", []))
    targets = re.findall(r"`([^`]+)`", task) + re.findall(r"\bgive (\w+)", task)
    inventory, reach = ui.get("inventoryObjects", []), ui.get("accessibleEnvironmentObjects", [])
    seen = [o for group in ui.get("nearbyObjects", {}).get("objects", {}).values() for o in group]
    if targets:
        held = _find(inventory, targets[0])
        if held is None:
            if (uuid := _find(reach, targets[0])) is not None:
                return {"action": "PICKUP", "arg1": uuid}
            if (uuid := _find(seen, targets[0])) is not None:
                return {"action": "TELEPORT_TO_OBJECT", "arg1": uuid}
        elif len(targets) > 1:
            if (uuid := _find(reach, targets[1])) is not None:
                return {"action": "PUT", "arg1": held, "arg2": uuid}
            if (uuid := _find(seen, targets[1])) is not None:
                return {"action": "TELEPORT_TO_OBJECT", "arg1": uuid}
    elif re.search(r"\b(person|people|talk|ask|instructions)\b", task):  # e.g. the dialog test's "follow the instructions"
        people = [int(u) for key in ui.get("nearbyAgents", {}).get("list_of_agents", {}) for u in re.findall(r"uuid (\d+)", key)]
        for uuid in people:
            if any(o["uuid"] == uuid for o in reach):
                return {"action": "TALK", "arg1": uuid}
        if people and any(o["uuid"] == people[0] for o in seen):
            return {"action": "TELEPORT_TO_OBJECT", "arg1": people[0]}
    moves = ui.get("agentLocation", {}).get("directions_you_can_move") or list(DIRECTIONS)
    return {"action": "MOVE_DIRECTION", "arg1": moves[step % len(moves)]}


def answer(prompt: str, step: int) -> str:
    """The reply text for one prompt, as a model would write it (prose, then a JSON block)."""
    if CONSOLIDATE_MARKER in prompt:
        body: dict[str, Any] = {"scientific_knowledge": [{"step": step, "measurement": "consolidated notes"}]}
    elif KNOWLEDGE_MARKER in prompt:
        body = {"scientific_knowledge": [{"hypothesis": f"note {step}", "status": "pending"}]}
    else:
        ui = observation_in(prompt)
        action = choose_action(ui, step) if ui is not None else {"action": "WAIT"}
        body = {**action, "explanation": "scripted", "memory": f"step {step}", "running_hypotheses": []}
    return "Thinking it over.\n```json\n" + json.dumps(body) + "\n```\n"


class PromptAnsweringServer(ScriptedLLMServer):
    """`ScriptedLLMServer` that answers from the prompt when nothing is queued."""

    def _next(self, request: dict[str, Any], headers: dict[str, str]) -> Scripted:
        with self._lock:
            self.requests.append(request)
            self.headers.append(headers)
            if self.script:
                return self.script.popleft()
            step = len(self.requests)
        return Scripted(body=chat_reply(answer(prompt_text(request), step)))
