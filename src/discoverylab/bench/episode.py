"""Run one episode of an agent on a task and produce its record and log lines."""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from discoverylab.agents import make_agent
from discoverylab.agents.llm_common import LLMSettings
from discoverylab.bench.live import LiveReporter
from discoverylab.bench.schema import Status, UsageRecord, classify, merge_usage, usage_of, usage_snapshot
from discoverylab.env import DiscoveryWorldEnv
from discoverylab.instances import SEED_SPLIT, Instance, from_seed


class EpisodeRecord(BaseModel):
    """One episode's result: the unit of the benchmark's JSONL results."""

    task: str
    difficulty: str
    seed: int | None = None  # the public seed; None for a sealed (test) instance
    agent: str
    split: str = "seed"  # "seed" (a raw seed, and every record written before splits), paper, dev, train, test
    index: int | None = None  # the instance index within the split (the seed itself for "seed")
    commitment: str | None = None  # binds a sealed record to its seed (`instances.verify`, `discoverylab audit`)
    status: Status = "ok"  # see discoverylab.bench.schema and docs/running.md
    steps: int = 0
    completed: bool = False
    success: bool = False
    procedure_score: float = Field(0.0, ge=0.0, le=1.0)
    scorecard: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0  # wall time of the episode
    usage: UsageRecord | None = None  # THE usage record: LLM tokens, attempts, retries, cost (None: no LLM used)
    config: dict[str, Any] = Field(default_factory=dict)  # the run's exact settings
    config_hash: str = ""
    # LLM agents only: model, endpoint, price, invalid replies, tokenizer and why the episode stopped
    # early (if it did; tokens and cost are in `usage`);
    # the knowledge report they end with and its judged score (paper App. D; None: not judged).
    llm: dict[str, Any] | None = None
    knowledge: str | None = None  # the agent's knowledge report as text (oracles: their report's text)
    knowledge_report: dict[str, Any] | None = None  # oracles: {"text", "facts"}, what they found out
    knowledge_score: float | None = Field(default=None, ge=0.0, le=1.0)
    knowledge_verdicts: list[dict[str, Any]] = Field(default_factory=list)
    # "judged", or "unjudged" when the judge failed (the episode's result stands; `discoverylab
    # judge` re-grades it); None: not judged (no judge, or the task asks no critical question).
    knowledge_status: str | None = None
    knowledge_error: str | None = None
    # The answer sheet (discovery tasks): what the agent filled in at the end, its exact grade
    # (None: no sheet for the task, a failed episode, or the agent's sheet call failed) and the
    # per-field verdicts with validation errors. Absent in older records.
    answers: dict[str, Any] | None = None
    answers_score: float | None = Field(default=None, ge=0.0, le=1.0)
    answers_grade: dict[str, Any] | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return episode_key(self.task, self.difficulty, self.agent, self.split, self.index, self.seed)


def episode_key(task: str, difficulty: str, agent: str, split: str | None, index: int | None,
                seed: int | None) -> tuple[str, str, str, str]:  # fmt: skip
    """An episode's key (task, difficulty, instance label, agent) from a record's or a knowledge
    row's fields: a sealed record has no seed, so the label (`test#3`) identifies it; records
    written before splits existed are raw seeds (`s42`), so their runs still resume."""
    label = f"s{seed}" if split in (None, SEED_SPLIT) else f"{split}#{index}"
    return (task, difficulty, label, agent)


def run_episode(
    task: str,
    difficulty: str,
    seed: int | Instance,
    agent_name: str,
    max_steps: int | None = None,
    keep_log: bool = True,
    config: dict[str, Any] | None = None,
    llm: LLMSettings | None = None,
    judge: LLMSettings | None = None,
    time_limit: float | None = None,
    on_played: Callable[[EpisodeRecord, list[dict[str, Any]]], None] | None = None,
) -> tuple[EpisodeRecord, list[dict[str, Any]]]:
    """Play one episode. Returns the record and the log (one dict per step, then the end).

    Failures of the agent once the episode started (its LLM server down, its replies unusable)
    end the episode with the matching status (`schema.classify`) instead of raising. `llm`
    configures the LLM agents' model; `judge`, when given, grades their knowledge report against
    the task's critical questions at the end (results in the record); with `time_limit` (the
    episode's --episode-timeout) the judge gets only the time left, so it can never cost the
    finished episode its record. `seed` is a raw public seed or an `Instance`; the record and
    log carry the instance's public part only (a sealed instance's seed never reaches them, nor
    the agent, whose own seed is `agent_seed`). `on_played(record, log)` is called before the
    judge with the record as it stands should the judging be cut short (knowledge `unjudged`):
    the runner keeps it on a Ctrl-C, so a played episode is never played again.
    """
    from discoverylab.bench.schema import config_hash

    start = time.perf_counter()
    env = DiscoveryWorldEnv(task, difficulty, max_steps=max_steps)
    assert env.scenario_cls is not None
    inst = seed if isinstance(seed, Instance) else from_seed(env.scenario_cls.task_id, env.difficulty, seed)
    public = inst.public()
    agent = make_agent(agent_name, task, inst.agent_seed, llm)
    before = usage_snapshot(agent)
    run_config = dict(config or {})
    _, info = env.reset(options={"instance": inst})
    obs = info["observation"]
    assert env.scenario is not None
    if hasattr(agent, "step_budget"):  # Plan+Execute gives a plan step at most a fifth of the episode
        agent.step_budget = max_steps or env.scenario.default_step_limit()
    agent.reset(obs)
    log: list[dict[str, Any]] = []
    if keep_log:
        log.append({"type": "start", "task": env.scenario_cls.task_id, "difficulty": env.difficulty, **public,
                    "agent": agent_name, "observation": obs})  # fmt: skip
    steps = 0
    live = LiveReporter.from_env(f"{task} {difficulty} {seed} {agent_name}")
    terminated = truncated = False
    status: Status = "ok"
    error = None
    try:
        while not (terminated or truncated):
            if getattr(agent, "wants_image", False):  # the grid view, as the original's Hypothesizer saw it
                agent.set_image(env.image(grid=True))  # type: ignore[attr-defined]
            action = agent.act(obs)
            if action is None and getattr(agent, "stop_reason", None):  # the agent ended the episode itself
                break
            _, reward, terminated, truncated, info = env.step(action)
            obs = info["observation"]
            steps += 1
            if keep_log:
                log.append({"type": "step", "step": steps, "action": action, "reward": reward, "observation": obs,
                            "terminated": terminated, "truncated": truncated})  # fmt: skip
                if getattr(agent, "last_note", None) is not None:
                    log[-1]["agent"] = agent.last_note  # type: ignore[attr-defined]
            if live is not None:
                live.update(steps, agent)
            if getattr(agent, "stop_reason", None):  # e.g. the cost ceiling was reached
                break
        observe_final = getattr(agent, "observe_final", None)  # the Hypothesizer reflects on its last action
        if callable(observe_final):
            observe_final(obs)
    except Exception as exc:  # noqa: BLE001 - classified: a dead server is not a model scoring 0
        status = classify(exc)
        error = f"{type(exc).__name__}: {exc}"
        if keep_log:
            log.append({"type": "error", "status": status, "error": error,
                        "traceback": traceback.format_exc(limit=8)})
    failure = getattr(agent, "episode_failure", None)  # LLM agents: no reply could be acted on
    if status == "ok" and callable(failure) and (found := failure()) is not None:
        status, error = found
        if keep_log:
            log.append({"type": "error", "status": status, "error": error})
    card = env.scorecard(reveal=True)  # the full card (gold included), even if the loop stopped early
    conclude = getattr(agent, "conclude", None)  # the oracle: its knowledge report, once the episode ended
    report = conclude(obs) if callable(conclude) and status == "ok" else None
    answers, sheet = fill_answer_sheet(env, agent) if status == "ok" else (None, None)
    record = EpisodeRecord(
        task=env.scenario_cls.task_id,
        difficulty=env.difficulty,
        **public,
        agent=agent_name,
        status=status,
        steps=steps,
        completed=card["completed"] if status == "ok" else False,
        success=card["completedSuccessfully"] if status == "ok" else False,
        procedure_score=card["scoreNormalized"] if status == "ok" else 0.0,
        scorecard=card,
        error=error or getattr(agent, "error", None),
        knowledge_report=report.to_dict() if report is not None else None,
        knowledge=report.text if report is not None else None,
        answers=answers,
        answers_score=sheet.get("score") if sheet is not None else None,
        answers_grade={k: v for k, v in sheet.items() if k != "score"} if sheet is not None else None,
        seconds=round(time.perf_counter() - start, 3),
        usage=usage_of(agent, before),
        config=run_config,
        config_hash=config_hash(run_config),
    )
    if callable(getattr(agent, "summary", None)):  # the LLM agents
        record.knowledge = agent.knowledge_report()  # type: ignore[attr-defined]
        record.usage, record.llm = merge_usage(record.usage, agent.summary())  # type: ignore[attr-defined]
    if live is not None:
        live.update(steps, agent, final=True)
    if keep_log:
        log.append({"type": "end", "scorecard": card,
                    "record": record.model_dump(mode="json", exclude={"seconds", "usage"})})
    if judge is not None and status == "ok" and record.llm is not None:  # after the record: never fails it
        from discoverylab.bench.judging import asks_questions, judge_within, stopped_while_judging

        if on_played is not None and asks_questions(card):
            on_played(stopped_while_judging(record), log)
        left = None if time_limit is None else time_limit - (time.perf_counter() - start)
        entry = judge_within(record, judge, left)
        if keep_log and entry is not None:
            log.append(entry)
    return record, log


def fill_answer_sheet(env: DiscoveryWorldEnv, agent: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """After the episode: hand the agent the task's answer sheet (`agent.answer_sheet(form)`;
    without that method the sheet stays empty) and grade it. Returns (answers, grade dict with
    "score", "fields", "errors"), or (None, None) for tasks without a sheet. A sheet call that
    raises (an LLM server gone) is recorded as ungraded (score None), not as a 0."""
    from discoverylab.scenarios.answer_forms import answer_form, grade_answers, has_answer_sheet

    if not has_answer_sheet(env.scenario_cls.task_id):
        return None, None
    form = answer_form(env)
    fill = getattr(agent, "answer_sheet", None)
    answers: Any = {}
    if callable(fill):
        try:
            answers = fill(form)
        except Exception as exc:  # noqa: BLE001 - the episode stays ok; only the sheet is ungraded
            return None, {"score": None, "fields": [], "errors": {"(agent)": f"{type(exc).__name__}: {exc}"}}
    graded = grade_answers(env, answers, reveal=True).to_dict()
    kept = answers if isinstance(answers, dict) else {"(not a dict)": repr(answers)[:200]}
    return json.loads(json.dumps(kept, default=repr)), graded  # (JSON-safe, whatever the agent returned)
