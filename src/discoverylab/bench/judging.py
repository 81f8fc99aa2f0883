"""Knowledge grading of episode records (paper App. D): one 0/1 verdict per critical question.

`judge_episode` grades one scorecard + knowledge report; `judge_run` re-grades every record of
a saved run folder offline (the judge may be a different model from the agent) and writes the
verdicts to `<run>/knowledge.jsonl`, leaving `results.jsonl` untouched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from discoverylab.agents.llm_common import LLMSettings
from discoverylab.bench import records
from discoverylab.llm import LLMClient, knowledge_judge
from discoverylab.scoring.knowledge import grade_knowledge

KNOWLEDGE_FILE = "knowledge.jsonl"


def make_judge(settings: LLMSettings | None = None, client: LLMClient | None = None) -> Any:
    """A fail-closed yes/no judge (an unusable verdict scores 0 and is marked invalid)."""
    settings = settings or LLMSettings()
    short = client is None and settings.embedded  # the embedded 135M model: keep verdicts short
    client = client or settings.client()
    return knowledge_judge(client, fail_closed=True, max_explanation_chars=300 if short else 600,
                           max_tokens=settings.max_tokens or 400)  # fmt: skip


def judge_episode(scorecard: dict[str, Any], knowledge: str | None, judge: Any) -> tuple[float | None, list[dict[str, Any]]]:
    """(score, verdicts) for one episode; (None, []) when the task asks no critical questions."""
    if not (scorecard.get("knowledgeQuestions") or scorecard.get("criticalQuestions")):
        return None, []
    grade = grade_knowledge(scorecard, knowledge or "(the agent wrote down no knowledge)", judge)
    verdicts = [{"criticalQuestion": v["question"], "evaluation": v["evaluation"], "explanation": v["explanation"]}
                for v in grade.verdicts]  # fmt: skip
    return grade.score, verdicts


def judge_run(run_dir: str | Path, judge: Any, judge_name: str = "") -> list[dict[str, Any]]:
    """Re-grade every record of `run_dir/results.jsonl`; returns and writes one row per episode."""
    run_dir = Path(run_dir)
    results = run_dir / "results.jsonl"
    if not results.is_file():
        raise FileNotFoundError(f"no results.jsonl in {run_dir}: pass a folder written by `discoverylab bench --out`")
    rows = []
    for rec in records.read_jsonl(results):
        score, verdicts = judge_episode(rec.get("scorecard") or {}, rec.get("knowledge"), judge)
        rows.append({
            "task": rec.get("task"), "difficulty": rec.get("difficulty"), "seed": rec.get("seed"),
            "split": rec.get("split", "seed"), "index": rec.get("index"), "agent": rec.get("agent"), "judge": judge_name, "has_knowledge": bool(rec.get("knowledge")),
            "knowledge_score": score, "knowledge_verdicts": verdicts,
        })  # fmt: skip
    records.write_jsonl(run_dir / KNOWLEDGE_FILE, rows)
    return rows
