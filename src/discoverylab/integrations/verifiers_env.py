"""A verifiers environment over DiscoveryWorld and Tiny Labs (needs the `verifiers` extra, 0.4+).

    from discoverylab.integrations.verifiers_env import load_environment
    env = load_environment(suite="discovery", difficulty="easy", split="train", indices="0-99")

or, with verifiers' own CLI: `--env.taskset.id discoverylab.integrations.verifiers_env` (this module
exports exactly one Taskset and one Env via `__all__`, as verifiers' plugin loader requires).

The pattern is verifiers' own TextArena taskset: the engine plays the user. Dataset rows are (task,
difficulty, instance) with no prompt: the episode opens the conversation with its first observation
(it opens with the instructions), so each row's world is built once, by its episode (a prompt would
take a build of its own when the rows are listed). Each assistant reply is parsed as a ReAct JSON action (`{"thought", "action", "arg1",
"arg2"}` or `{"chosen_dialog_option_int"}`; Tiny Labs: the reply itself) and stepped; the next user
turn is only the new observation (what ReAct's trimmed history keeps per step: the conversation
itself is the harness's, which trims it by its token limits). When the episode ends, the model gets
the answer sheet and its reply is graded. Rewards (`@vf.reward` methods of the task, scored by
verifiers): `success` (weight 1; a Tiny Lab pays `grade`, its protocol grade in 0..1, instead) and
`answers` (the answer sheet's exact grade, weight 1; discovery tasks only). The procedure score is
recorded in the trace's info for analysis, never as a reward: it pays answer-specific choices and
so reveals the answer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf

from discoverylab.integrations import common
from discoverylab.scenarios.answer_forms import has_answer_sheet
from discoverylab.server.session import LAB_DIFFICULTY

PLUGIN_ID = "discoverylab-verifiers"  # the top-level module discoverylab_verifiers re-exports this one
SYSTEM_PROMPT = (
    "You are a scientist agent in DiscoveryWorld, a grid world (or a small laboratory). Each turn, think briefly, "
    "then reply with ONE JSON object: your thought and one action, e.g. "
    '{"thought": "...", "action": "MOVE_DIRECTION", "arg1": "north", "arg2": null}; in a dialog '
    '{"thought": "...", "chosen_dialog_option_int": 2}. In a laboratory, reply with your message to the lab. '
    "Record findings in your thoughts: they are your notes."
)


def parse_reply(text: str) -> dict[str, Any] | str:
    """A ReAct reply as an env action (the raw text when it is no JSON object: the env answers with its error)."""
    from discoverylab.agents.llm_common import to_action

    data = common.parse_answers(text)
    if "action" in data or "chosen_dialog_option_int" in data:
        return to_action(data)
    return text


def play_reply(session: Any, reply: str) -> str:
    """One assistant reply stepped: the next user turn (the new observation)."""
    if session.kind == "lab":
        return common.say(session, reply)
    action = parse_reply(reply)
    if isinstance(action, str):
        return f"Your reply was not a JSON action object. {common.act(session, action='')}"
    if "chosen_dialog_option_int" in action:
        return common.act(session, chosen_dialog_option_int=action["chosen_dialog_option_int"])
    return common.act(session, action.get("action"), action.get("arg1"), action.get("arg2"))


class DiscoveryLabConfig(vf.TasksetConfig):
    suite: str = "discovery"
    task_name: str | None = None
    """One task (DiscoveryWorld task id or Tiny Labs protocol) instead of a suite."""
    difficulty: str | None = None
    split: str = "train"
    indices: str = "0-9"
    max_steps: int | None = None


class DiscoveryLabData(vf.TaskData):
    info: dict
    """The row: task, difficulty, split and instance index (never a sealed seed)."""


INFO_KEY = "discoverylab"  # the trace's info entry: the episode's end, which the rewards read
END_KEYS = ("task", "difficulty", "instance", "steps", "completed", "success", "reward", "answers_score", "procedure")


def _end(trace: vf.Trace, row: dict[str, Any]) -> dict[str, Any]:
    """The episode's end as `DiscoveryLabEnv.run` recorded it on the trace (before the trace is
    scored). A trace without one (no agent ran: `vf-validate`'s untouched-task check; or the run
    stopped before the episode was graded) scores as a played episode that achieved nothing:
    success 0, a lab's grade 0, an answer sheet not handed in 0 (an error, before, which made
    every task of `vf-validate` an error)."""
    end = trace.info.get(INFO_KEY)
    if isinstance(end, dict):
        return end
    lab = row.get("difficulty") == LAB_DIFFICULTY
    return {"kind": "lab" if lab else "dw", "success": False, "reward": 0.0,
            "answers_score": None if lab or not has_answer_sheet(str(row.get("task"))) else 0.0}


class DiscoveryLabTask(vf.Task[DiscoveryLabData, vf.State, vf.TaskConfig]):
    """Rewards are `@vf.reward` methods, scored by verifiers when the interaction closes, so a run
    can re-weight them (`--env.taskset.task.rewards.answers.weight 0`) and plugged rewards or judges
    can read the episode's end in `trace.info["discoverylab"]` (steps, success, procedure, ...).
    `validate` (verifiers' gold check, `vf-validate`) plays the row's instance with our oracle."""

    @vf.reward(weight=1.0)
    async def success(self, trace: vf.Trace) -> dict[str, float]:
        """DiscoveryWorld: 1.0 when the task was completed successfully (a lab pays `grade` instead)."""
        end = _end(trace, self.data.info)
        return {} if end["kind"] == "lab" else {"success": float(end["success"])}

    @vf.reward(weight=1.0)
    async def grade(self, trace: vf.Trace) -> dict[str, float]:
        """A Tiny Lab's protocol grade in 0..1, the env's reward for a lab."""
        end = _end(trace, self.data.info)
        return {"grade": float(end["reward"])} if end["kind"] == "lab" else {}

    @vf.reward(weight=1.0)
    async def answers(self, trace: vf.Trace) -> dict[str, float]:
        """The answer sheet's exact grade (discovery tasks: those with a sheet)."""
        score = _end(trace, self.data.info)["answers_score"]
        return {} if score is None else {"answers": float(score)}

    async def validate(self, runtime: Any) -> bool | None:
        """verifiers' gold check: our observation-only oracle plays the row's instance through
        the runner's episode path; valid when it completes the task successfully and grades its
        answer sheet, where the task has one, perfectly. None (no model-free check) for a Tiny
        Lab, whose grading may need the LLM judge."""
        if self.data.info.get("difficulty") == LAB_DIFFICULTY:
            return None
        return await asyncio.to_thread(oracle_solves, dict(self.data.info))


def oracle_solves(row: dict[str, Any]) -> bool:
    """Whether the oracle solves the row's DiscoveryWorld instance (a sealed row under the key it
    was drawn under: `common.check_key`)."""
    from discoverylab.bench.episode import run_episode
    from discoverylab.instances import load_key, make_instance

    key = load_key()
    common.check_key(row, key)
    inst = make_instance(row["task"], row["difficulty"], row["split"], int(row["index"]), key)
    record, _ = run_episode(row["task"], row["difficulty"], inst, "oracle", max_steps=row.get("max_steps"), keep_log=False)
    return record.status == "ok" and record.success and record.answers_score in (None, 1.0)


class DiscoveryLabEnvConfig(vf.EnvConfig):
    player: vf.AgentConfig = vf.AgentConfig()


class DiscoveryLabEnv(vf.Env[DiscoveryLabEnvConfig]):
    async def run(self, task: Any, agents: Any) -> None:
        # The episode's work (building the world, a step, grading a lab's programs: seconds for one
        # that loops) runs in a thread: on the event loop it would stall every concurrent rollout and
        # verifiers' interception server, which carries their model requests.
        row = dict(task.data.info)
        session, first = await asyncio.to_thread(common.start, row, row.get("max_steps"))
        report_parts: list[str] = []
        try:
            async with agents.player.interaction(task) as interaction:
                segment = await interaction.turn(first)  # the user (the engine) opens with the first observation
                while not segment.terminated and not session.done:
                    reply = str(segment.last_reply or "")
                    report_parts.append(str(common.parse_answers(reply).get("thought", "")))
                    observation = await asyncio.to_thread(play_reply, session, reply)
                    if session.done:
                        break
                    segment = await interaction.turn(observation)
                answers = None
                prompt = common.sheet_prompt(session)
                if prompt is not None and not segment.terminated:
                    segment = await interaction.turn(prompt)
                    answers = common.parse_answers(str(segment.last_reply or ""))
                res = await asyncio.to_thread(common.results, session, "\n".join(p for p in report_parts if p), answers)
                # recorded before the interaction closes: closing scores the trace (the rewards above,
                # plugged rewards and judges), and they read the episode's end here
                interaction.trace.info[INFO_KEY] = {"kind": session.kind, **{k: res[k] for k in END_KEYS}}
        finally:
            await asyncio.to_thread(session.close)


class DiscoveryLabTaskset(vf.Taskset[DiscoveryLabTask, DiscoveryLabConfig]):
    def load(self) -> Iterator[DiscoveryLabTask]:
        cfg = self.config
        # `rows` checks each row's instance; no world is built here (the episode builds its own)
        for row in common.rows(cfg.task_name, cfg.suite, cfg.difficulty, cfg.split, cfg.indices):
            row["max_steps"] = cfg.max_steps
            yield DiscoveryLabTask(DiscoveryLabData(name=f"{row['task']}/{row['difficulty']}/{row['split']}#{row['index']}",
                                                    system_prompt=SYSTEM_PROMPT, info=row),
                                   cfg.task)  # fmt: skip


def load_environment(**options: Any) -> vf.Env:
    """The environment (options: suite, task_name, difficulty, split, indices, max_steps, and any
    verifiers EnvConfig field such as `player`)."""
    if isinstance(options.get("task"), str):  # verifiers' `task` is its per-task config (rewards, judges)
        raise ValueError(f"task={options['task']!r}: name a DiscoveryWorld task or Tiny Labs protocol with task_name=...; "
                         "`task` is verifiers' per-task config (e.g. task={'rewards': {...}}).")
    taskset_keys = set(DiscoveryLabConfig.model_fields) - {"id"}
    taskset = {k: options.pop(k) for k in list(options) if k in taskset_keys}
    config = DiscoveryLabEnvConfig(taskset=DiscoveryLabConfig(id=PLUGIN_ID, **taskset), **options)
    return vf.load_environment(config)


def replies_json(action: dict[str, Any], thought: str = "") -> str:
    """A ReAct reply carrying `action` (what `parse_reply` reads back)."""
    return json.dumps({"thought": thought, **action})


__all__ = ["DiscoveryLabConfig", "DiscoveryLabEnv", "DiscoveryLabTaskset", "load_environment"]
