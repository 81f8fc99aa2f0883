"""Scorecard = completion + procedural items + knowledge questions (spec section 9).

Scenarios declare items up front and update them from small checkers each tick. Completion
latches: once decided, neither the outcome nor the episode's end can change again
(docs/differences.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from operator import attrgetter
from typing import Any

_ITEM_SCORE = attrgetter("score")  # (C-level getters: the sums below run every step)
_ITEM_MAX = attrgetter("max_score")


@dataclass(slots=True)
class ScorecardItem:
    name: str
    description: str
    max_score: int
    score: int = 0
    completed: bool = False
    associated_uuids: list[int] = field(default_factory=list)
    notes: str = ""
    # The list `add_distinct` last stored (scorers call it every tick, mostly with nothing new).
    _distinct: list[int] | None = field(default=None, init=False, repr=False, compare=False)

    def set(self, score: int, completed: bool | None = None, note: str = "") -> None:
        """Update the score, clamped to [0, max] (an over-count can never crash a tick)."""
        if self.completed:
            return
        self.score = max(0, min(int(score), self.max_score))
        self.completed = self.score >= self.max_score if completed is None else completed
        if note:
            self.notes = note

    def add_distinct(self, uuids: Iterable[int]) -> None:
        """Count distinct objects ever seen meeting the item's condition (doors opened, keys
        collected...): they accumulate in `associated_uuids` and the score is their number."""
        if self.completed:
            return
        stored = self.associated_uuids
        if stored is self._distinct and self.score == len(stored) < self.max_score:
            # Still the sorted list stored last, scored as then: unless a uuid is new, the
            # update below would store an equal list, score and completion. (A loop, not a
            # comprehension: scorers call this every tick, mostly with nothing new or nothing.)
            fresh: list[int] = []
            for uuid in uuids:
                if uuid not in stored:
                    fresh.append(uuid)
            if not fresh:
                return
            uuids = fresh
        known = set(stored)
        known.update(uuids)
        self.associated_uuids = self._distinct = sorted(known)
        self.set(len(known))

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "maxScore": self.max_score,
            "score": self.score,
            "completed": self.completed,
            "associatedUUIDs": list(self.associated_uuids),
            "associatedNotes": self.notes,
        }


@dataclass(slots=True)
class KnowledgeQuestion:
    """A critical question about the discovery, with the gold facts a judge checks it against."""

    question: str
    gold_facts: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"question": self.question, "goldFacts": list(self.gold_facts)}


@dataclass(slots=True)
class Scorecard:
    task_name: str
    task_description: str
    items: list[ScorecardItem] = field(default_factory=list)
    critical_hypotheses: list[str] = field(default_factory=list)
    knowledge: list[KnowledgeQuestion] = field(default_factory=list)
    completed: bool = False
    success: bool = False

    def add(self, name: str, description: str, max_score: int) -> ScorecardItem:
        item = ScorecardItem(name, description, max_score)
        self.items.append(item)
        return item

    def ask(self, question: str, *gold_facts: str) -> KnowledgeQuestion:
        """Declare a knowledge question (graded after the episode by an LLM judge)."""
        item = KnowledgeQuestion(question, list(gold_facts))
        self.knowledge.append(item)
        return item

    def all_completed(self) -> bool:
        """Whether every item is completed (a loop, not all() over a generator: scorers ask
        every tick)."""
        for item in self.items:
            if not item.completed:
                return False
        return True

    @property
    def critical_questions(self) -> list[str]:
        return [q.question for q in self.knowledge]

    @property
    def score(self) -> int:
        return sum(map(_ITEM_SCORE, self.items))

    @property
    def max_score(self) -> int:
        return sum(map(_ITEM_MAX, self.items))

    @property
    def normalized(self) -> float:
        return self.score / self.max_score if self.max_score else 0.0

    def finish(self, success: bool) -> None:
        """Decide the task. Latching: the first decision stands."""
        if not self.completed:
            self.completed = True
            self.success = success

    def progress(self, sealed: bool = False) -> dict[str, Any]:
        """What the agent may see: the task text and whether it is decided (no score). `sealed`
        (a sealed test instance): whether it was decided *successfully* is the evaluator's, so
        `completedSuccessfully` is None (undisclosed) throughout, a win and a loss alike."""
        return {
            "taskName": self.task_name,
            "description": self.task_description,
            "completed": self.completed,
            "completedSuccessfully": None if sealed else self.success,
        }

    def to_dict(self, exclude: tuple[str, ...] = ()) -> dict[str, Any]:
        """JSON close to the original's `getTaskScorecard()` entry, without the `exclude` keys
        (not even computed: `info` asks for the visible part every step)."""
        return {key: part(self) for key, part in _card_parts(exclude)}


@cache
def _card_parts(exclude: tuple[str, ...]) -> tuple[tuple[str, Callable[[Scorecard], Any]], ...]:
    """The scorecard's JSON keys in order, each with how to compute it, less `exclude` (chosen
    once per distinct `exclude`, not per call; plain fields are read by C-level getters)."""
    return tuple((key, part) for key, part in _CARD_PARTS if key not in exclude)


_CARD_PARTS: tuple[tuple[str, Callable[[Scorecard], Any]], ...] = (
    ("taskName", attrgetter("task_name")),
    ("taskDescription", attrgetter("task_description")),
    ("score", attrgetter("score")),
    ("maxScore", attrgetter("max_score")),
    ("scoreNormalized", attrgetter("normalized")),
    ("completed", attrgetter("completed")),
    ("completedSuccessfully", attrgetter("success")),
    ("scoreCard", lambda c: [item.to_dict() for item in c.items]),
    ("criticalHypotheses", lambda c: list(c.critical_hypotheses)),
    ("criticalQuestions", attrgetter("critical_questions")),
    ("knowledgeQuestions", lambda c: [q.to_dict() for q in c.knowledge]),
)
