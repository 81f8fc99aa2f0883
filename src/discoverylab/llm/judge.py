"""A small LLM judge: one question about an agent's work, answered with a score and a reason.

Used wherever a grader cannot compute the answer: DiscoveryWorld's knowledge questions ("has the
agent found that ...?"), Tiny Labs key-fact checks and 0-5 rubric items. The judge reads named
evidence sections (task, agent report, reference facts, ...) and must return JSON
`{"explanation": str, "evaluation": int}`; the explanation comes first so the model reasons before
it commits to a score. Only the evidence the caller passes is shown: hidden ground truth reaches
the judge only if a rubric deliberately includes it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from discoverylab.llm.client import LLMClient
from discoverylab.llm.errors import LLMBadOutput

logger = logging.getLogger(__name__)

BINARY_SCALE: tuple[int, ...] = (0, 1)

DEFAULT_ROLE = (
    "You are a careful grader. You read evidence about what an AI agent did or concluded, then "
    "answer one question about it. Judge only from the evidence shown; if the evidence does not "
    "clearly support a positive answer, give the lowest score."
)

KNOWLEDGE_ROLE = (
    "You are grading an agent that played a game about scientific discovery. You will see the "
    "task it was given and what it has written down as its knowledge. Decide whether that "
    "knowledge shows the agent made the specific discovery named in the question: the agent must "
    "state it (in any wording), not merely have collected data from which it would follow. "
    "Answer 1 if it does, 0 if it does not or if its statement is wrong."
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The judge's answer to one question."""

    question: str
    evaluation: int
    explanation: str
    valid: bool = True  # False when the judge's output was unusable and the lowest score was given
    raw_text: str = ""


class LLMJudge:
    """Asks an LLM to score evidence against a question on a small integer scale.

    Args:
        client: any `LLMClient` (hosted or the embedded offline model).
        role: the system prompt describing what is being judged.
        scale: allowed scores, e.g. (0, 1) for yes/no or (0, 1, 2, 3, 4, 5) for a rubric item.
        scale_help: one sentence saying what the scores mean (defaults to yes/no wording).
        max_explanation_chars: cap on the explanation, which also bounds generation time.
        fail_closed: give the lowest score (with `valid=False`) instead of raising
            `LLMBadOutput` when the model cannot produce a valid verdict.
        max_tokens: generation budget per verdict.
    """

    def __init__(
        self,
        client: LLMClient,
        *,
        role: str = DEFAULT_ROLE,
        scale: Sequence[int] = BINARY_SCALE,
        scale_help: str | None = None,
        max_explanation_chars: int = 600,
        fail_closed: bool = False,
        max_tokens: int = 400,
    ) -> None:
        if len(scale) < 2 or len(set(scale)) != len(scale):
            raise ValueError(f"a judge scale needs at least two distinct scores, got {scale!r}")
        self.client = client
        self.role = role
        self.scale = tuple(sorted(int(s) for s in scale))
        if scale_help is None:
            scale_help = (
                "Use 1 for yes (true) and 0 for no (false)."
                if self.scale == BINARY_SCALE
                else f"Use an integer score from {self.scale[0]} (worst) to {self.scale[-1]} (best)."
            )
        self.scale_help = scale_help
        self.max_explanation_chars = max_explanation_chars
        self.fail_closed = fail_closed
        self.max_tokens = max_tokens

    @property
    def schema(self) -> dict[str, Any]:
        """The JSON Schema every verdict must satisfy."""
        return {
            "type": "object",
            "properties": {
                "explanation": {"type": "string", "maxLength": self.max_explanation_chars},
                "evaluation": {"type": "integer", "enum": list(self.scale)},
            },
            "required": ["explanation", "evaluation"],
            "additionalProperties": False,
        }

    def messages(self, question: str, evidence: Mapping[str, Any]) -> list[dict[str, str]]:
        """The chat messages for one question (exposed so prompts can be logged and reviewed)."""
        blocks = [f"{title}:\n```\n{_render(content)}\n```" for title, content in evidence.items()]
        user = "\n\n".join(
            [
                *blocks,
                f"Question:\n```\n{question}\n```",
                f"{self.scale_help} Reply with a JSON object: first `explanation` (a short reason "
                "that cites the evidence), then `evaluation` (the score).",
            ]
        )
        return [{"role": "system", "content": self.role}, {"role": "user", "content": user}]

    def evaluate(self, question: str, evidence: Mapping[str, Any]) -> Verdict:
        """Judge one question against the evidence sections (title -> text or JSON-able value)."""
        try:
            result = self.client.complete_structured(
                self.messages(question, evidence),
                self.schema,
                name="verdict",
                temperature=0.0,
                max_tokens=self.max_tokens,
            )
        except LLMBadOutput as exc:
            if not self.fail_closed:
                raise
            logger.warning("judge gave no valid verdict for %r: %s", question, exc)
            return Verdict(question, self.scale[0], f"invalid judge output: {exc}", valid=False, raw_text=exc.text)
        return Verdict(
            question=question,
            evaluation=int(result.data["evaluation"]),
            explanation=str(result.data["explanation"]),
            raw_text=result.completion.text,
        )

    def evaluate_all(self, questions: Iterable[str], evidence: Mapping[str, Any]) -> list[Verdict]:
        """Judge several questions against the same evidence, one call each."""
        return [self.evaluate(question, evidence) for question in questions]

    def normalised(self, verdicts: Sequence[Verdict]) -> float:
        """Mean score mapped to 0..1 (0 when there are no verdicts, as DiscoveryWorld does)."""
        if not verdicts:
            return 0.0
        low, high = self.scale[0], self.scale[-1]
        return sum((v.evaluation - low) / (high - low) for v in verdicts) / len(verdicts)


def knowledge_judge(client: LLMClient, **kwargs: Any) -> LLMJudge:
    """A yes/no judge for DiscoveryWorld-style critical questions about an agent's knowledge.

    Call `evaluate(question, {"Task description": ..., "Agent's knowledge": ...})`.
    """
    return LLMJudge(client, role=KNOWLEDGE_ROLE, scale=BINARY_SCALE, **kwargs)


def _render(content: Any) -> str:
    if isinstance(content, str):
        return content
    return json.dumps(content, indent=2, ensure_ascii=False, sort_keys=True, default=str)
