"""Inspect AI tasks: `inspect eval discoverylab/<task> --model ...` (registered through the
`inspect_ai` entry point in pyproject.toml; needs the `inspect` extra).

    inspect eval discoverylab/archaeology_dating -T difficulty=easy -T split=dev -T indices=0-4 --model openai/gpt-4o
    inspect eval discoverylab/discoverylab -T suite=unit --model ...      # a whole suite
    inspect eval discoverylab/tiny_lab -T protocol=sequence/hidden-property --model ...

One sample per (task, difficulty, instance). The solver is Inspect's ReAct agent loop (`react`)
with one `act` tool (an action and its arguments; Tiny Labs: a `say` tool) played on the episode
core (`EpisodeSession`); when the episode ends the model submits its knowledge report, then fills
the task's answer sheet. Scorers: `episode_scorer` (success, completion, the answer sheet's exact
grade, and the procedure score for reporting) and `knowledge_judge` (the knowledge judge as a
model-graded scorer: our rubric prompt, asked of Inspect's `grader` model role or `judge_model`).
The sealed test split works where the evaluator's key is set ($DISCOVERYLAB_EVAL_KEY); samples
and logs carry the instance's index and commitment, never its seed.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from inspect_ai import Task, task
from inspect_ai.agent import AgentState, AgentSubmit, react
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, get_model, model_roles
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolDef

from discoverylab.instances import KEY_ENV, SEALED_SPLIT
from discoverylab.integrations import common

STORE_KEY = "discoverylab"
KEY_META = "discoverylab_key_id"  # eval metadata: `discoverylab_key_id:<fingerprint>` of a sealed task's key
TURNS_AFTER_END = 3  # turns a model gets to submit its report once the episode has ended
SEALED_NO_GRADER = ("not judged: a sealed instance's gold goes only to a grader the evaluator names "
                    "(--model-role grader=... or -T judge_model=...), never by default to the evaluated model")


def _dataset(items: list[dict[str, Any]]) -> MemoryDataset:
    samples = [Sample(input=f"{r['task']} ({r['difficulty']}), {r['split']} instance {r['index']}",
                      id=f"{r['task']}/{r['difficulty']}/{r['split']}#{r['index']}", metadata=r) for r in items]  # fmt: skip
    return MemoryDataset(samples, name="discoverylab")


def _act_tool(session: Any) -> ToolDef:
    async def act(action: str = "", arg1: str | int | None = None, arg2: str | int | None = None,
                  chosen_dialog_option_int: int | None = None) -> str:  # fmt: skip
        return common.act(session, action, arg1, arg2, chosen_dialog_option_int)

    return ToolDef(act, name="act", description="Take one action in the world; returns the next observation.",
                   parameters={"action": "the action's name, e.g. MOVE_DIRECTION", "arg1": "its first argument (or null)",
                               "arg2": "its second argument (or null)",
                               "chosen_dialog_option_int": "in a dialog: the option's number (then leave action empty)"})  # fmt: skip


def _say_tool(session: Any) -> ToolDef:
    async def say(message: str) -> str:
        return common.say(session, message)

    return ToolDef(say, name="say", description="Send one message to the lab; returns its reply.",
                   parameters={"message": "your message to the lab"})  # fmt: skip


@solver
def discovery_agent(max_steps: int | None = None, max_messages: int = 400) -> Solver:
    """Play the sample's episode with Inspect's ReAct loop, then fill the answer sheet."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        session, first = common.start(state.metadata, max_steps)
        try:
            lab = session.kind == "lab"
            tool = _say_tool(session) if lab else _act_tool(session)
            agent = react(prompt=common.LAB_PROMPT if lab else common.TOOL_PROMPT, tools=[tool], truncation="auto",
                          submit=AgentSubmit(name="submit", description="Hand in your knowledge report (once the episode ended)."),
                          on_continue=_budget(max_messages, session))  # fmt: skip
            result: AgentState = await agent(AgentState(messages=[ChatMessageUser(content=first)]))
            state.messages = list(result.messages)
            report = result.output.completion if result.output else ""
            answers = None
            prompt = common.sheet_prompt(session)
            if prompt is not None:
                reply = await get_model().generate([ChatMessageSystem(content=common.TOOL_PROMPT),
                                                    ChatMessageUser(content=f"Your knowledge report:\n{report}\n\n{prompt}")],
                                                   config=GenerateConfig(max_tokens=800))  # fmt: skip
                answers = common.parse_answers(reply.completion)
            state.store.set(STORE_KEY, common.results(session, report, answers))
            state.output.completion = report
        finally:
            session.close()
        return state

    return solve


def _budget(max_messages: int, session: Any) -> Any:
    after_end = 0

    async def keep_going(agent_state: AgentState) -> bool:
        """Stop the loop once the conversation holds `max_messages`, or `TURNS_AFTER_END` turns after
        the episode ended without a submit: later turns are paid for and can change nothing."""
        nonlocal after_end
        after_end += session.done
        return len(agent_state.messages) < max_messages and after_end <= TURNS_AFTER_END

    return keep_going


@scorer(metrics={"success": [mean()], "completed": [mean()], "reward": [mean()], "answers": [mean()], "procedure": [mean()]})
def episode_scorer() -> Any:
    """Success, completion, the env's reward (a DiscoveryWorld success, a Tiny Lab's grade) and the
    answer sheet's exact grade (0 when the task has none handed in); the procedure score is for
    reporting (it rewards answer-specific choices)."""

    async def score(state: TaskState, target: Target) -> Score:
        res = state.store.get(STORE_KEY) or {}
        answers = res.get("answers_score")
        return Score(value={"success": float(res.get("success", False)), "completed": float(res.get("completed", False)),
                            "reward": float(res.get("reward", 0.0)), "answers": float(answers or 0.0), "procedure": float(res.get("procedure", 0.0))},
                     answer=(res.get("knowledge") or "")[:2000],
                     metadata={"steps": res.get("steps"), "instance": res.get("instance"),
                               "answers_grade": res.get("answers_grade"), "has_answer_sheet": answers is not None})  # fmt: skip

    return score


class _BridgeJudge:
    """Our knowledge judge's prompt and verdict parsing, asked of an Inspect model: `grade_knowledge`
    runs in a worker thread and each question is generated on the event loop."""

    def __init__(self, model: Any, loop: asyncio.AbstractEventLoop) -> None:
        from discoverylab.llm.judge import LLMJudge
        from discoverylab.llm.judge_prompt import KNOWLEDGE_RUBRIC

        class _PromptOnly:
            json_mode = "prompt"

        self.judge = LLMJudge(_PromptOnly(), role=KNOWLEDGE_RUBRIC)  # type: ignore[arg-type]
        self.model, self.loop = model, loop

    def evaluate(self, question: str, evidence: Any) -> Any:
        from discoverylab.llm.judge import Verdict, parse_verdict

        messages = [ChatMessageSystem(content=m["content"]) if m["role"] == "system" else ChatMessageUser(content=m["content"])
                    for m in self.judge.messages(question, evidence)]  # fmt: skip
        messages[-1] = ChatMessageUser(content=str(messages[-1].content) + '\nReply with JSON: {"explanation": ..., "evaluation": 0 or 1}.')
        future = asyncio.run_coroutine_threadsafe(self.model.generate(messages, config=GenerateConfig(temperature=0.0)), self.loop)
        text = future.result().completion
        value, explanation, error = parse_verdict(text)
        if value is None:
            return Verdict(question, 0, "", valid=False, raw_text=text[:500], error=error or "no verdict")
        return Verdict(question, value, explanation, raw_text=text[:500])


@scorer(metrics=[mean()])
def knowledge_judge(judge_model: str | None = None) -> Any:
    """The knowledge judge (paper App. D) as a model-graded scorer: each critical question of the
    task asked of the grader model with our rubric; the score is the fraction answered yes
    (unjudged when a verdict could not be had: then the value is 0 and the metadata says so). A
    sealed sample is judged only by a named grader: its gold never goes to the evaluated model."""

    async def score(state: TaskState, target: Target) -> Score:
        from discoverylab.bench.judging import judge_episode

        res = state.store.get(STORE_KEY) or {}
        named = bool(judge_model) or "grader" in model_roles()
        if not named and (res.get("instance") or {}).get("split") == SEALED_SPLIT:
            # The judge's prompts hold the instance's gold: never sent to the evaluated model unasked.
            return Score(value=0.0, metadata={"verdicts": [], "judged": False, "reason": SEALED_NO_GRADER})
        model = get_model(judge_model) if judge_model else get_model(role="grader", default=get_model())
        judge = _BridgeJudge(model, asyncio.get_running_loop())
        value, verdicts = await asyncio.to_thread(judge_episode, res.get("scorecard") or {}, res.get("knowledge"), judge)
        return Score(value=float(value or 0.0), metadata={"verdicts": verdicts, "judged": value is not None})

    return score


def key_ids(metadata: dict[str, Any] | None) -> list[str]:
    """The key fingerprints a log's (or a retry's) eval metadata names, sorted."""
    return sorted(k.removeprefix(KEY_META + ":") for k in (metadata or {}) if k.startswith(KEY_META + ":"))


class _SameKey:
    """Inspect's early-stopping hook used as a guard, as it is the one task hook that sees the
    eval's metadata before any sample runs. A sealed task names its key's fingerprint in a
    metadata *key* (`discoverylab_key_id:<fingerprint>`); `eval-retry` carries the first run's
    metadata into the retry, merged with the rebuilt task's, so a retry under another key holds
    two fingerprints and is refused here, before it plays another test set's `test#N` into the
    log beside the first one's. It stops no sample otherwise."""

    def __init__(self, fingerprint: str) -> None:
        self.fingerprint = fingerprint

    async def start_task(self, task: Any, samples: list[Sample], epochs: int) -> str:
        others = [k for k in key_ids(task.metadata) if k != self.fingerprint]
        if others:
            raise ValueError(f"This evaluation's test instances were drawn under the key {', '.join(others)}, but "
                             f"${KEY_ENV} is now the key {self.fingerprint}: its test#N are other instances, and "
                             "the log would mix two test sets. Retry with the key the evaluation started with "
                             "(fingerprints, not keys, are shown).")  # fmt: skip
        return "discoverylab-same-key"

    async def schedule_sample(self, id: str | int, epoch: int) -> None:
        return None

    async def complete_sample(self, id: str | int, epoch: int, scores: dict[str, Any]) -> None:
        return None

    async def complete_task(self) -> dict[str, Any]:
        return {}


def _task(items: list[dict[str, Any]], max_steps: int | None, judge: bool, judge_model: str | None) -> Task:
    scorers = [episode_scorer()] + ([knowledge_judge(judge_model)] if judge else [])
    fingerprint = next((r["key_id"] for r in items if r.get("key_id")), None)
    if fingerprint is None:
        return Task(dataset=_dataset(items), solver=discovery_agent(max_steps), scorer=scorers)
    # The version names the test set too: `eval_set` pairs a task with its earlier log by task
    # args and version, so another key's task is another task there (never resumed into that log).
    return Task(dataset=_dataset(items), solver=discovery_agent(max_steps), scorer=scorers,
                metadata={f"{KEY_META}:{fingerprint}": "the sealed test instances' key (its fingerprint)"},
                early_stopping=_SameKey(fingerprint), version=f"test-set-{fingerprint}")  # fmt: skip


@task
def discoverylab(suite: str = "discovery", task: str | None = None, difficulty: str | None = None, split: str = "dev",
                 indices: str = "0", max_steps: int | None = None, judge: bool = True, judge_model: str | None = None) -> Task:  # fmt: skip
    """Any DiscoveryWorld suite or task: one sample per (task, difficulty, instance index of `split`)."""
    return _task(common.rows(task, suite, difficulty, split, indices), max_steps, judge, judge_model)


@task
def tiny_lab(protocol: str = "sequence/hidden-property", split: str = "dev", indices: str = "0") -> Task:
    """A Tiny Labs protocol: one sample per instance index of `split` (scored by the protocol's grade as success)."""
    from discoverylab.labs.protocol import protocol_names

    if protocol not in protocol_names():  # else a typo fell through to the DiscoveryWorld task names
        raise ValueError(f"Unknown Tiny Labs protocol {protocol!r}; protocols: {', '.join(protocol_names())}.")
    return _task(common.rows(protocol, split=split, indices=indices), None, False, None)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _register_per_task() -> None:
    """`discoverylab/<snake_case task id>` for every DiscoveryWorld task (e.g. archaeology_dating)."""
    from discoverylab.scenarios.registry import all_tasks

    for cls in all_tasks().values():
        tid = cls.task_id
        # Unit tests default to Normal (the original's level; they gained Easy and Challenge later).
        default = "normal" if cls.suite == "unit" else "easy" if "easy" in cls.difficulties else cls.difficulties[0]

        def make(split: str = "dev", indices: str = "0", difficulty: str = default, max_steps: int | None = None,
                 judge: bool = True, judge_model: str | None = None, _tid: str = tid) -> Task:  # fmt: skip
            return _task(common.rows(_tid, difficulty=difficulty, split=split, indices=indices), max_steps, judge, judge_model)

        make.__name__ = _snake(tid)
        make.__doc__ = f"DiscoveryWorld {tid}: one sample per instance index of `split`."
        globals()[make.__name__] = task(make)


_register_per_task()
