"""Run one episode of an agent on a task and produce its record and log lines."""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, Field

from discoverylab.agents import make_agent
from discoverylab.env import DiscoveryWorldEnv


class EpisodeRecord(BaseModel):
    """One episode's result: the unit of the benchmark's JSONL results."""

    task: str
    difficulty: str
    seed: int
    agent: str
    status: str = "ok"  # ok | error
    steps: int = 0
    completed: bool = False
    success: bool = False
    procedure_score: float = Field(0.0, ge=0.0, le=1.0)
    scorecard: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0


def run_episode(
    task: str,
    difficulty: str,
    seed: int,
    agent_name: str,
    max_steps: int | None = None,
    keep_log: bool = True,
) -> tuple[EpisodeRecord, list[dict[str, Any]]]:
    """Play one episode. Returns the record and the log (one dict per step, then the end)."""
    start = time.perf_counter()
    env = DiscoveryWorldEnv(task, difficulty, max_steps=max_steps)
    agent = make_agent(agent_name, task, seed)
    _, info = env.reset(seed=seed)
    obs = info["observation"]
    agent.reset(obs)
    log: list[dict[str, Any]] = []
    if keep_log:
        log.append({"type": "start", "task": env.scenario_cls.task_id, "difficulty": env.difficulty, "seed": seed,
                    "agent": agent_name, "observation": obs})  # fmt: skip
    steps = 0
    terminated = truncated = False
    while not (terminated or truncated):
        action = agent.act(obs)
        _, reward, terminated, truncated, info = env.step(action)
        obs = info["observation"]
        steps += 1
        if keep_log:
            log.append({"type": "step", "step": steps, "action": action, "reward": reward, "observation": obs,
                        "terminated": terminated, "truncated": truncated})  # fmt: skip
    card = env.scorecard(reveal=True)  # the full card (gold included), even if the loop stopped early
    record = EpisodeRecord(
        task=env.scenario_cls.task_id,
        difficulty=env.difficulty,
        seed=seed,
        agent=agent_name,
        steps=steps,
        completed=card["completed"],
        success=card["completedSuccessfully"],
        procedure_score=card["scoreNormalized"],
        scorecard=card,
        error=getattr(agent, "error", None),
        seconds=round(time.perf_counter() - start, 3),
    )
    if keep_log:
        log.append({"type": "end", "scorecard": card, "record": record.model_dump(exclude={"seconds"})})
    return record, log
