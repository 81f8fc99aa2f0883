"""Knowledge score: did the agent figure out the discovery? (paper's third metric)

Each critical question of a scorecard is put to an LLM judge together with the task text and
what the agent says it knows (free text or JSON); the score is the fraction judged true, or
None (unjudged) when the judge could not answer every question. It runs after the episode on a
saved scorecard, so any run can be re-graded offline.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class Judge(Protocol):
    """What the knowledge scorer needs from a judge (e.g. `discoverylab.llm.knowledge_judge`)."""

    def evaluate(self, question: str, evidence: Mapping[str, Any]) -> Any: ...


@dataclass(slots=True)
class KnowledgeGrade:
    """The score (None when any verdict is invalid: the knowledge is unjudged, not wrong) and
    one verdict per question with its validity (`valid`, `retries`, `error`)."""

    score: float | None
    verdicts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def judged(self) -> bool:
        return self.score is not None


def grade_knowledge(scorecard: Mapping[str, Any], agent_knowledge: Any, judge: Judge) -> KnowledgeGrade:
    """Ask `judge` every knowledge question of `scorecard` (a `Scorecard.to_dict()`).

    Gold facts, when a question has them, are shown to the judge as the reference answer.
    A scorecard without questions scores 0, as in the original. A verdict the judge could not
    give (`valid` False) leaves the whole grade unjudged (score None) rather than 0, so a judge
    failure never reads as the agent's mistake; after an endpoint failure (`fatal`) the
    remaining questions are not asked, as they would fail the same way.
    """
    questions = scorecard.get("knowledgeQuestions") or [
        {"question": q, "goldFacts": []} for q in scorecard.get("criticalQuestions", [])
    ]
    verdicts: list[dict[str, Any]] = []
    fatal = ""
    for item in questions:
        if fatal:
            verdicts.append({"question": item["question"], "evaluation": None, "explanation": "", "valid": False,
                             "retries": 0, "error": f"not asked: the judge failed on an earlier question ({fatal})"})  # fmt: skip
            continue
        evidence: dict[str, Any] = {
            "Task description": scorecard.get("taskDescription", ""),
            "Agent's knowledge": agent_knowledge,
        }
        if item.get("goldFacts"):
            evidence["Reference facts"] = list(item["goldFacts"])
        verdict = judge.evaluate(item["question"], evidence)
        valid = bool(getattr(verdict, "valid", True))
        verdicts.append({
            "question": item["question"],
            "evaluation": int(getattr(verdict, "evaluation", 0)) if valid else None,
            "explanation": str(getattr(verdict, "explanation", "")),
            "valid": valid,
            "retries": int(getattr(verdict, "retries", 0)),
            "error": str(getattr(verdict, "error", "")) or None,
        })  # fmt: skip
        if getattr(verdict, "fatal", False):
            fatal = str(getattr(verdict, "error", "")) or "endpoint failure"
    if not all(v["valid"] for v in verdicts):
        return KnowledgeGrade(None, verdicts)
    score = sum(v["evaluation"] for v in verdicts) / len(verdicts) if verdicts else 0.0
    return KnowledgeGrade(score, verdicts)


# ---- a mechanical check of a report against gold facts (for oracles, not a judge) ------------
_STOP = frozenset(
    "about also been does from have into its more much only so such than that the their them then there "
    "these they this those very what when where which while will with would".split()
)
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _content_words(text: str) -> set[str]:
    """Words of 4+ letters (lower-cased) and lone capital letters (fuel A, Substance B)."""
    long = {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 4 and w not in _STOP}
    return long | set(re.findall(r"\b[A-Z]\b", text))


def _numbers(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in _NUMBER.findall(text)]


def missing_gold_facts(gold_facts: list[str], report_text: str) -> list[str]:
    """What of the gold facts a report does not state: their content words (4+ letters, and lone
    capital letters) that the report lacks, and their numbers with no close number in the report
    (within 0.11 below 1.5, else 6%: an oracle reports what it measured, e.g. a quadratic's terms
    fitted to noisy readings, while the gold states what the generator drew)."""
    words, numbers = _content_words(report_text), _numbers(report_text)
    missing: list[str] = []
    for fact in gold_facts:
        missing += sorted(_content_words(fact) - words)
        for gold in _numbers(fact):
            tolerance = 0.11 if abs(gold) < 1.5 else 0.06 * abs(gold)
            if not any(abs(gold - value) <= tolerance for value in numbers):
                missing.append(f"{gold:g}")
    return missing
