"""LLMJudge against the scripted HTTP server: prompt content, scale enforcement, failure modes."""

from __future__ import annotations

import json

import pytest

from discoverylab.llm import LLMBadOutput, LLMClient, LLMJudge, Verdict, knowledge_judge
from discoverylab.llm.judge_prompt import parse_evidence
from llm_scripted_server import ScriptedLLMServer


def make_client(server: ScriptedLLMServer) -> LLMClient:
    return LLMClient(base_url=server.base_url, model="judge", sleep=lambda _: None)


def test_knowledge_judge_shows_evidence_and_parses_the_verdict(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text('{"explanation": "It names the mold.", "evaluation": 1}')
    judge = knowledge_judge(make_client(scripted_llm))
    verdict = judge.evaluate(
        "Has the agent found that the blue mold makes food unsafe?",
        {"Task description": "Find out why colonists get sick.", "Agent's knowledge": {"notes": ["blue mold"]}},
    )
    assert verdict == Verdict(
        question="Has the agent found that the blue mold makes food unsafe?",
        evaluation=1,
        explanation="It names the mold.",
        raw_text='{"explanation": "It names the mold.", "evaluation": 1}',
    )
    sent = scripted_llm.requests[0]
    evidence = parse_evidence(sent["messages"][1]["content"])
    assert evidence["Task description"] == "Find out why colonists get sick."
    assert json.loads(evidence["Agent's knowledge"]) == {"notes": ["blue mold"]}  # a JSON report, as one string
    assert evidence["Question"] == "Has the agent found that the blue mold makes food unsafe?"
    assert sent["temperature"] == 0.0
    schema = sent["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["evaluation"]["enum"] == [0, 1]


def test_score_outside_the_scale_is_rejected(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text('{"explanation": "great", "evaluation": 7}', '{"explanation": "good", "evaluation": 4}')
    judge = LLMJudge(make_client(scripted_llm), scale=range(6))
    verdict = judge.evaluate("Rate the use of evidence.", {"Report": "..."})
    assert verdict.evaluation == 4
    assert len(scripted_llm.requests) == 2
    assert "from 0 (worst) to 5 (best)" in scripted_llm.requests[0]["messages"][1]["content"]


def test_invalid_verdicts_raise_unless_fail_closed(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text(*["{}"] * 3)
    with pytest.raises(LLMBadOutput):
        LLMJudge(make_client(scripted_llm)).evaluate("q?", {"Evidence": "e"})

    scripted_llm.push_text(*["{}"] * 3)
    verdict = LLMJudge(make_client(scripted_llm), fail_closed=True).evaluate("q?", {"Evidence": "e"})
    assert (verdict.evaluation, verdict.valid) == (0, False)


def test_normalised_score_maps_the_scale_to_unit_interval(scripted_llm: ScriptedLLMServer) -> None:
    judge = LLMJudge(make_client(scripted_llm), scale=(0, 1, 2, 3, 4, 5))
    verdicts = [Verdict("a", 5, ""), Verdict("b", 0, ""), Verdict("c", 2, "")]
    assert judge.normalised(verdicts) == pytest.approx((1.0 + 0.0 + 0.4) / 3)
    assert judge.normalised([]) == 0.0


def test_scale_needs_two_distinct_scores(scripted_llm: ScriptedLLMServer) -> None:
    with pytest.raises(ValueError):
        LLMJudge(make_client(scripted_llm), scale=(1, 1))
