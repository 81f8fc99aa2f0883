"""ReAct (paper App. C.1): a thought and an action per step, given the trimmed trajectory.

The prompt holds the instructions (action format, actions, teleport locations: sent once, in
the system message), the task, the trajectory of (thought, action, observation) trimmed from
the oldest end to a token budget ('[TRIMMED HISTORY]' marks the cut, as in the paper) and the
current observation in the compact text form. The history is cut in jumps (down to half the
budget whenever it overflows), so consecutive prompts share their beginning and servers that cache
prompt prefixes reuse it. The history budget is in the model's tokens (`LLMAgentBase.tokens`). With `end_action=True`
(`--end-action`; off in the paper presets) the action list also offers END, which ends the
episode without another step, as the original's SUBMIT did. The knowledge report is the
concatenation of the thoughts, which is what the paper grades for this agent.
"""

from __future__ import annotations

from typing import Any

from discoverylab.agents.llm_common import (
    LLMAgentBase,
    StepNote,
    action_schema,
    dumps_action,
    task_text,
    to_action,
    trim_in_chunks,
)
from discoverylab.world.lm_observation import lm_observation

END_ACTION = "END"
END_HINT = (f"When you are sure the task is done, or that you cannot make progress, reply with the action "
            f"{END_ACTION} (no arguments) and a thought saying what you found: the episode ends there.")
REACT_ROLE = (
    "You are a scientist agent in DiscoveryWorld, a grid world. Each step, think briefly about what "
    "you have learned and what to do next, then choose exactly one action. Record findings (measurements, "
    "conclusions) in your thoughts: they are your notes."
)


class ReActAgent(LLMAgentBase):
    name = "react"
    system_role = REACT_ROLE
    offers_end = True  # with `end_action` set

    @property
    def end_enabled(self) -> bool:
        return self.offers_end and self.settings.end_action

    def reset(self, obs: dict[str, Any]) -> None:
        self.start(obs)
        self.task = task_text(obs)
        self.trajectory: list[str] = []
        self.context_lines: list[str] = []  # extra prompt lines (Plan+Execute puts the plan here)
        self._awaiting_result = False
        self._history_start = 0  # first trajectory entry shown (moves in jumps: see trim_in_chunks)

    def act(self, obs: dict[str, Any]) -> Any:
        self.observe_result(obs)
        note = StepNote(step=self.step, kind="act")
        data = self.ask(self.messages(obs), self.schema(obs), "action", note)
        action = self.finish_step(data, note)
        if self.end_enabled and isinstance(action, dict) and action.get("action") == END_ACTION:
            self.end_episode(note.thought or "END")
            return None
        self.trajectory.append(f"Thought: {note.thought}\nAction: {dumps_action(action)}")
        self._awaiting_result = True
        return action

    # ---- pieces reused by Plan+Execute -------------------------------------------------
    def schema(self, obs: dict[str, Any]) -> dict[str, Any]:
        schema = action_schema(obs, self.text_chars)
        if self.end_enabled and "action" in schema["properties"]:
            schema["properties"]["action"]["enum"].append(END_ACTION)
        return schema

    def observe_result(self, obs: dict[str, Any]) -> None:
        if self.trajectory and self._awaiting_result:
            self.trajectory[-1] += f"\nObservation: {obs['lastActionMessage'][:600]}"
            self._awaiting_result = False

    def finish_step(self, data: dict[str, Any] | None, note: StepNote) -> Any:
        """Turn the reply into the env action (raw text when it did not parse), log the note."""
        if data is None:
            action: Any = note.raw  # the env answers with its parse error: an invalid action, not a crash
        else:
            note.thought = str(data.get("thought", ""))
            action = to_action(data)
        note.action = action
        self.notes.append(note)
        self.step += 1
        return action

    def messages(self, obs: dict[str, Any]) -> list[dict[str, Any]]:
        system = f"{self.system_role}\n\n{self.instructions}"
        history, self._history_start = trim_in_chunks(self.trajectory, self.history_tokens, self._history_start,
                                                      self.count_tokens)
        parts = [f"Task: {self.task}", *self.context_lines]
        if self.end_enabled:
            parts.append(END_HINT)
        if history:
            parts.append("History of thoughts, actions and observations:\n" + "\n".join(history))
        parts.append("Current observation:\n" + lm_observation(obs))
        parts.append("Reply with a JSON object: your thought, then the action and its arguments (null when unused).")
        return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]
