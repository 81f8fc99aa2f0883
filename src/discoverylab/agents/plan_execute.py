"""Plan+Execute (paper App. C.2): plan one step, execute it with ReAct, re-plan from the result.

Iterative decomposition: the planner sees the task and the plan so far (each step with its
outcome) and writes only the next step. The executor is the ReAct agent with the plan in its
prompt; each of its replies also says whether the current plan step is still in progress,
completed or failed. After a fifth of the step budget on one plan step, the prompt suggests
declaring it failed (as in the paper), and at that limit the step is closed as failed. The
knowledge report is the plan with its outcomes followed by the executor's thoughts.
"""

from __future__ import annotations

from typing import Any

from discoverylab.agents.llm_common import StepNote, action_schema, dumps_action, task_text
from discoverylab.agents.react import ReActAgent

PLANNER_ROLE = (
    "You plan a scientist agent's work in DiscoveryWorld, one step at a time. Given the task and the "
    "steps done so far with their results, write the single next step: short, concrete, checkable."
)
STATUSES = ("in progress", "completed", "failed")


class PlanExecuteAgent(ReActAgent):
    name = "plan-execute"

    def __init__(self, *args: Any, step_budget: int = 100, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.step_budget = step_budget  # the episode's step limit; a plan step may use a fifth of it

    def reset(self, obs: dict[str, Any]) -> None:
        super().reset(obs)
        self.plan: list[dict[str, Any]] = []  # {"step": text, "status": ..., "result": ..., "actions": n}

    def act(self, obs: dict[str, Any]) -> Any:
        self.observe_result(obs)
        if not self.plan or self.plan[-1]["status"] != "in progress":
            self._plan_next(obs)
        current = self.plan[-1]
        limit = max(2, self.step_budget // 5)
        self.context_lines = [self._plan_text(), f"Current plan step: {current['step']}"]
        if current["actions"] >= limit // 2:
            self.context_lines.append(
                "Hint: this plan step has used much of its budget; if it looks infeasible, set step_status to failed."
            )
        note = StepNote(step=self.step, kind="act")
        data = self.ask(self.messages(obs), self.schema(obs), "action", note)
        action = self.finish_step(data, note)
        self.trajectory.append(f"Thought: {note.thought}\nAction: {dumps_action(action)}")
        self._awaiting_result = True
        current["actions"] += 1
        status = str((data or {}).get("step_status", "in progress"))
        if status in STATUSES[1:]:
            current.update(status=status, result=note.thought)
        elif current["actions"] >= limit:
            current.update(status="failed", result=f"gave up after {current['actions']} actions")
        note.extra["plan_step"] = current["step"]
        return action

    def schema(self, obs: dict[str, Any]) -> dict[str, Any]:
        schema = action_schema(obs, self.text_chars)
        schema["properties"]["step_status"] = {"type": "string", "enum": list(STATUSES)}
        schema["required"] = list(schema["properties"])
        return schema

    def _plan_text(self) -> str:
        if not self.plan:
            return "Plan so far: (none)"
        lines = [f"Step {i + 1}: {p['step']}" + (f"\n  -- {p['status']}: {p['result']}" if p["status"] != "in progress" else "")
                 for i, p in enumerate(self.plan)]  # fmt: skip
        return "Plan so far:\n" + "\n".join(lines)

    def _plan_next(self, obs: dict[str, Any]) -> None:
        schema = {
            "type": "object",
            "properties": {"thought": {"type": "string", "maxLength": self.text_chars},
                           "next_step": {"type": "string", "maxLength": self.text_chars}},  # fmt: skip
            "required": ["thought", "next_step"],
            "additionalProperties": False,
        }
        user = f"Task: {task_text(obs)}\n\n{self._plan_text()}\n\nWhat is the next step? Reply with JSON."
        note = StepNote(step=self.step, kind="plan")
        data = self.ask([{"role": "system", "content": PLANNER_ROLE}, {"role": "user", "content": user}], schema, "plan", note)
        step = str((data or {}).get("next_step") or "Explore the surroundings and gather information about the task.")
        note.thought = str((data or {}).get("thought", ""))
        note.extra["next_step"] = step
        self.notes.append(note)
        self.plan.append({"step": step, "status": "in progress", "result": "", "actions": 0})

    def knowledge_report(self) -> str:
        thoughts = "\n".join(f"step {n.step}: {n.thought}" for n in self.notes if n.kind == "act" and n.thought)
        return f"{self._plan_text()}\n\nThoughts:\n{thoughts}"
