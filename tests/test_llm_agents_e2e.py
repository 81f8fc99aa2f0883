"""LLM agents against the real embedded model (SmolLM2-135M): plumbing, not quality.

Episodes are one or two steps. One model call takes seconds on an idle 2-core machine and up to
~100 s under heavy load, so `make test` runs only a ReAct episode and one judged question; the
other agents' unit-test episodes and every agent's Easy-task episode (judged) are marked slow
(`pytest -m "slow and llm" tests/test_llm_agents_e2e.py`).
"""

from __future__ import annotations

import pytest

from discoverylab.agents.llm_common import LLMSettings
from discoverylab.bench.episode import run_episode
from discoverylab.bench.judging import judge_episode, make_judge
from discoverylab.llm import EmbeddedModelServer

pytestmark = pytest.mark.llm
AGENTS = ("react", "plan-execute", "hypothesizer")


def _check(record: object, steps: int) -> None:
    rec = record  # an EpisodeRecord
    assert rec.status == "ok" and rec.steps == steps  # type: ignore[attr-defined]
    llm, usage = rec.llm, rec.usage  # type: ignore[attr-defined]
    assert llm["base_url"] == "embedded" and usage.requests >= 1 and usage.prompt_tokens > 500
    assert usage.completion_tokens > 0 and usage.cost_usd == 0.0  # one record: the embedded model costs 0, not "unknown"
    assert llm["tokenizer"] in ("server", None)  # llama.cpp's /tokenize counts the budgets (None: nothing trimmed)
    assert isinstance(rec.knowledge, str)  # type: ignore[attr-defined]


@pytest.mark.parametrize("agent", [AGENTS[0], *(pytest.param(a, marks=pytest.mark.slow) for a in AGENTS[1:])])
def test_each_agent_plays_a_unit_test_and_the_judge_grades_its_report(embedded_llm: EmbeddedModelServer, agent: str) -> None:
    record, log = run_episode("PickAndPlaceTest", "normal", 0, agent, max_steps=1, llm=LLMSettings())
    _check(record, 1)
    assert log[1]["agent"]["kind"] == "act" and "action" in log[1]["agent"]
    card = {"taskDescription": "Put the flag in the box.", "knowledgeQuestions": [{"question": "Did the agent find the box?", "goldFacts": []}]}
    score, verdicts = judge_episode(card, record.knowledge, make_judge(LLMSettings()))
    assert score in (0.0, 1.0) and len(verdicts) == 1
    assert verdicts[0]["evaluation"] in (0, 1) and isinstance(verdicts[0]["explanation"], str)


@pytest.mark.slow
@pytest.mark.parametrize("agent", AGENTS)
def test_each_agent_plays_an_easy_task_with_judging(embedded_llm: EmbeddedModelServer, agent: str) -> None:
    record, _ = run_episode("ArchaeologyDating", "easy", 0, agent, max_steps=2, llm=LLMSettings(), judge=LLMSettings())
    _check(record, 2)
    assert record.knowledge_score is not None and len(record.knowledge_verdicts) >= 1
    assert record.answers_score is not None  # the answer sheet was asked for and graded
