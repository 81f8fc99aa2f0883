"""Knowledge score: did the agent figure out the discovery? (paper's third metric)

Each critical question of a scorecard is put to an LLM judge together with the task text and
what the agent says it knows (free text or JSON); the score is the fraction judged true. It
runs after the episode on a saved scorecard, so any run can be re-graded offline.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class Judge(Protocol):
    """What the knowledge scorer needs from a judge (e.g. `discoverylab.llm.knowledge_judge`)."""

    def evaluate(self, question: str, evidence: Mapping[str, Any]) -> Any: ...


@dataclass(slots=True)
class KnowledgeGrade:
    score: float
    verdicts: list[dict[str, Any]] = field(default_factory=list)


def grade_knowledge(scorecard: Mapping[str, Any], agent_knowledge: Any, judge: Judge) -> KnowledgeGrade:
    """Ask `judge` every knowledge question of `scorecard` (a `Scorecard.to_dict()`).

    Gold facts, when a question has them, are shown to the judge as the reference answer.
    A scorecard without questions scores 0, as in the original.
    """
    questions = scorecard.get("knowledgeQuestions") or [
        {"question": q, "goldFacts": []} for q in scorecard.get("criticalQuestions", [])
    ]
    verdicts = []
    for item in questions:
        evidence: dict[str, Any] = {
            "Task description": scorecard.get("taskDescription", ""),
            "Agent's knowledge": agent_knowledge,
        }
        if item.get("goldFacts"):
            evidence["Reference facts"] = list(item["goldFacts"])
        verdict = judge.evaluate(item["question"], evidence)
        verdicts.append({
            "question": item["question"],
            "evaluation": int(getattr(verdict, "evaluation", 0)),
            "explanation": str(getattr(verdict, "explanation", "")),
        })  # fmt: skip
    score = sum(v["evaluation"] for v in verdicts) / len(verdicts) if verdicts else 0.0
    return KnowledgeGrade(score, verdicts)
