"""Plan+Execute (paper App. C.2): plan one step, execute it with a fresh ReAct, re-plan from the result.

Iterative decomposition: the planner sees the task and the plan so far (each step with its
outcome) and writes only the next step, or "Done!" when the task is done or no progress is
possible, which ends the episode (as the original's plan-and-execute closes its run there). Each
plan step is executed by a fresh ReAct executor: its trajectory starts empty, so it sees only its
own step's (thought, action, observation)s, trimmed to the same token budget, plus the earlier plan
steps with their results. The executor ends its step with SUBMIT ("Task completed!" or "Task
failed!" as `arg1`, the thought saying what was achieved or why not), which takes no environment
step. Once a plan step has used more than a fifth of the episode's step budget, its prompt
suggests submitting a failure (the paper's hint; the original never closes a step itself).
The knowledge report is the executor's thoughts, as for ReAct (the paper grades the execution steps).
"""

from __future__ import annotations

import re
from typing import Any

from discoverylab.agents.llm_common import StepNote, dumps_action, task_text
from discoverylab.agents.react import ReActAgent

PLANNER_ROLE = (
    "You plan a scientist agent's work in DiscoveryWorld, one step at a time. Given the task and the "
    "steps done so far with their results, write the single next step: short, concrete, checkable, "
    "self-contained (name the objects; no references such as 'the previous item'). When the task is "
    "done, or no further progress is possible, write exactly: Done!"
)
SUBMIT = "SUBMIT"
SUBMIT_HINT = (
    f"When this plan step is achieved, reply with the action {SUBMIT} and arg1 \"Task completed!\"; if it "
    f"cannot be achieved, {SUBMIT} with arg1 \"Task failed!\". Your thought then says in detail what was "
    "achieved or why it failed: it is the step's result for the planner. SUBMIT takes no game time."
)
FAILURE_HINT = "**This plan step has used more than a fifth of the step budget. Consider SUBMIT with \"Task failed!\".**"
DONE = "Done!"
MAX_PLANS_PER_ACTION = 3  # plan steps that may close without an action before the executor must act


def is_done(step: str) -> bool:
    """The planner's end marker: 'Done!', also as 'Step 4: Done!' or 'Done.'."""
    text = re.sub(r"^\s*step\s*\d+\s*:\s*", "", step, flags=re.IGNORECASE).strip()
    return text.rstrip(" .!").lower() == "done" or text.endswith(DONE)


class PlanExecuteAgent(ReActAgent):
    name = "plan-execute"
    offers_end = False  # the planner's "Done!" ends the episode; the executor's SUBMIT ends a plan step

    def __init__(self, *args: Any, step_budget: int = 100, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.step_budget = step_budget  # the episode's step limit; the hint comes after a fifth of it

    def reset(self, obs: dict[str, Any]) -> None:
        super().reset(obs)
        self.plan: list[dict[str, Any]] = []  # {"step": text, "status": ..., "result": ..., "actions": n}
        self.executors = 0  # executors started (one per plan step)

    def act(self, obs: dict[str, Any]) -> Any:
        self.observe_result(obs)
        for rounds in range(MAX_PLANS_PER_ACTION + 1):
            if not self.plan or self.plan[-1]["status"] != "in progress":
                if not self._plan_next(obs):
                    return None  # "Done!": the episode ends here
            current = self.plan[-1]
            may_submit = rounds < MAX_PLANS_PER_ACTION
            note = StepNote(step=self.step, kind="act", extra={"plan_step": current["step"]})
            data = self.ask(self._executor_messages(obs, current, may_submit), self._schema(obs, may_submit), "action", note)
            action = self.finish_step(data, note)
            if isinstance(action, dict) and action.get("action") == SUBMIT:
                outcome = str(action.get("arg1") or "")
                status = "failed" if "fail" in outcome.lower() else "completed"
                current.update(status=status, result=f"{outcome} {note.thought}".strip())
                note.action = {"action": SUBMIT, "arg1": outcome}
                self.step -= 1  # SUBMIT is no game step
                continue  # no game step: plan the next one now
            self.trajectory.append(f"Thought: {note.thought}\nAction: {dumps_action(action)}")
            self._awaiting_result = True
            current["actions"] += 1
            return action
        raise AssertionError("unreachable: the last round offers no SUBMIT")  # pragma: no cover

    # ---- the executor ----------------------------------------------------------------------
    def _schema(self, obs: dict[str, Any], may_submit: bool) -> dict[str, Any]:
        schema = self.schema(obs)
        if may_submit and "action" in schema["properties"]:
            schema["properties"]["action"]["enum"].append(SUBMIT)
        return schema

    def _executor_messages(self, obs: dict[str, Any], current: dict[str, Any], may_submit: bool) -> list[dict[str, Any]]:
        self.context_lines = [f"Your current plan step: **{current['step']}**", self._plan_text(done_only=True)]
        if may_submit:
            self.context_lines.append(SUBMIT_HINT)
        if current["actions"] > self.step_budget / 5:
            self.context_lines.append(FAILURE_HINT)
        return self.messages(obs)

    def _start_executor(self) -> None:
        """A fresh ReAct for the new plan step: its own, empty trajectory."""
        self.trajectory = []
        self._history_start = 0
        self._awaiting_result = False
        self.executors += 1

    # ---- the planner ----------------------------------------------------------------------
    def _plan_text(self, done_only: bool = False) -> str:
        steps = [p for p in self.plan if p["status"] != "in progress"] if done_only else self.plan
        if not steps:
            return "Previous plan steps: (none)"
        lines = [f"Step {i + 1}: {p['step']}" + (f"\n  -- {p['result']}" if p["status"] != "in progress" else "")
                 for i, p in enumerate(steps)]  # fmt: skip
        return "Previous plan steps and their results:\n" + "\n".join(lines)

    def _plan_next(self, obs: dict[str, Any]) -> bool:
        """Ask for the next plan step; False when the planner says "Done!" (the episode ends)."""
        schema = {
            "type": "object",
            "properties": {"thought": {"type": "string", "maxLength": self.text_chars},
                           "next_step": {"type": "string", "maxLength": self.text_chars}},  # fmt: skip
            "required": ["thought", "next_step"],
            "additionalProperties": False,
        }
        user = f"Task: {task_text(obs)}\n\n{self._plan_text()}\n\nWhat is the next step (or {DONE})? Reply with JSON."
        note = StepNote(step=self.step, kind="plan")
        data = self.ask([{"role": "system", "content": PLANNER_ROLE}, {"role": "user", "content": user}], schema, "plan", note)
        step = str((data or {}).get("next_step") or "Explore the surroundings and gather information about the task.")
        note.thought = str((data or {}).get("thought", ""))
        note.extra["next_step"] = step
        self.notes.append(note)
        if is_done(step):
            self.end_episode(f"the planner wrote {DONE}")
            return False
        self.plan.append({"step": step, "status": "in progress", "result": "", "actions": 0})
        self._start_executor()
        return True

    def knowledge_report(self) -> str:
        return "\n".join(f"step {n.step}: {n.thought}" for n in self.notes if n.kind == "act" and n.thought)
