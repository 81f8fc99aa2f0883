"""Scorecards: clamping, latching, JSON shape; knowledge grading through a real HTTP judge."""

from __future__ import annotations

from discoverylab.llm import LLMClient, knowledge_judge
from discoverylab.scoring.knowledge import grade_knowledge, missing_gold_facts
from discoverylab.scoring.scorecard import Scorecard
from llm_scripted_server import ScriptedLLMServer


def _card() -> Scorecard:
    card = Scorecard("DemoTask", "Find the outlier animal.")
    card.add("Use meter", "Measured the animals", 3)
    card.ask("Does it state that the vortisquid is the outlier?", "vortisquid proteomics values are outliers")
    return card


def test_items_clamp_and_completion_latches() -> None:
    card = _card()
    item = card.items[0]
    item.set(7)
    assert item.score == 3 and item.completed
    item.set(1)  # a completed item no longer changes
    assert item.score == 3
    card.finish(False)
    card.finish(True)
    assert card.completed and not card.success


def test_json_shape_matches_the_original_keys() -> None:
    data = _card().to_dict()
    assert set(data) >= {"taskName", "taskDescription", "score", "maxScore", "scoreNormalized", "completed",
                         "completedSuccessfully", "scoreCard", "criticalHypotheses", "criticalQuestions"}  # fmt: skip
    assert data["criticalQuestions"] == ["Does it state that the vortisquid is the outlier?"]
    assert data["knowledgeQuestions"][0]["goldFacts"] == ["vortisquid proteomics values are outliers"]
    assert set(data["scoreCard"][0]) == {"name", "description", "maxScore", "score", "completed", "associatedUUIDs",
                                         "associatedNotes"}  # fmt: skip


def test_knowledge_grade_with_a_judge_over_http(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text('{"explanation": "It names the vortisquid.", "evaluation": 1}')
    client = LLMClient(base_url=scripted_llm.base_url, model="judge", sleep=lambda _: None)
    grade = grade_knowledge(_card().to_dict(), "The vortisquid is the odd one out.", knowledge_judge(client))
    assert grade.score == 1.0
    assert grade.verdicts[0]["explanation"] == "It names the vortisquid."
    prompt = scripted_llm.requests[0]["messages"][1]["content"]
    assert "The vortisquid is the odd one out." in prompt and "vortisquid proteomics values are outliers" in prompt


def test_no_questions_scores_zero() -> None:
    card = Scorecard("T", "d")
    assert grade_knowledge(card.to_dict(), "anything", judge=None).score == 0.0  # type: ignore[arg-type]


def test_missing_gold_facts_flags_wrong_numbers_names_and_letters() -> None:
    gold = ["Use fuel B.", "About 9784 L of fuel B.", "The outlier lies about 0.5 from the centre."]
    right = "Use fuel B. About 9790 L of fuel B. The outlier lies about 0.47 from the centre."
    assert missing_gold_facts(gold, right) == []
    assert missing_gold_facts(gold, right.replace("fuel B", "fuel C")) == ["B", "B"]
    assert missing_gold_facts(gold, right.replace("9790", "8000")) == ["9784"]
    assert missing_gold_facts(gold, right.replace("outlier", "inlier")) == ["outlier"]
    assert missing_gold_facts(["'blob' means the number 2."], "'blob' means the number 3.") == ["2"]
