"""A scripted judge that follows the knowledge rubric literally, and an agent that replays the oracle.

`rubric_verdict` reads a judge prompt the way the rubric (`judge_prompt.KNOWLEDGE_RUBRIC`) tells
a judge to: it takes the evidence object out of the user message, reads the report only as the
JSON string it is, ignores every sentence of it that speaks about grading (rule 1), asks that the
reference facts be stated (rule 2, `missing_gold_facts`) and gives 0 to a hedge (rule 3: a
sentence with a disjunction or a hedging word, or a self-contradiction: another sentence framed
like a reference fact, with most of its words, that does not state it, as in "'blorp' means
'dirt'. 'blorp' means 'shovel'."). It is deterministic and follows no instruction inside the
report, so a report that wins against it wins by the rubric's own reading.

`OracleReplay` plays an LLM agent's side of the scripted server: each agent request is answered
with the oracle's next action (so the episode is solved), the last thought states the oracle's
discovery; judge requests go to `judge`, any callable of the request.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable
from typing import Any

from discoverylab.bench.episode import run_episode
from discoverylab.llm.judge_prompt import EVIDENCE_START, REPORT_KEY, parse_evidence
from discoverylab.scoring.knowledge import _content_words, missing_gold_facts
from llm_scripted_server import Scripted, chat_reply, error_body

GRADING_TALK = re.compile(r"grad|evaluat|score|award|judge|instruction|system|assistant|ignore|verdict|evidence", re.I)
HEDGE = re.compile(r"\b(or|either|maybe|perhaps|possibl\w*|candidates?|could be|might|unsure|not sure|one of|and/or)\b", re.I)
SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|[\n\r\u2028\u2029]+")


def judge_user_text(request: dict[str, Any]) -> str | None:
    """The user message holding the evidence block, if `request` is a judge request."""
    for message in request.get("messages", []):
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str) and EVIDENCE_START in content.split("\n"):
            return content
    return None


def rubric_verdict(user_text: str) -> dict[str, Any]:
    """The verdict the rubric gives, read literally from the evidence object."""
    evidence = parse_evidence(user_text)
    report = evidence[REPORT_KEY]
    assert isinstance(report, str), "the report must reach the judge as one JSON string"
    facts = [str(f) for f in evidence.get("Reference facts") or []]
    sentences = [s for s in SENTENCE_END.split(report) if s.strip()]
    kept = [s for s in sentences if not GRADING_TALK.search(s)]
    if not facts or missing_gold_facts(facts, " ".join(kept)):
        return {"explanation": "The report does not state the discovery.", "evaluation": 0}
    if any(HEDGE.search(s) for s in kept):
        return {"explanation": "The report hedges between several candidates.", "evaluation": 0}
    if rival_claims(facts, kept):
        return {"explanation": "The report contradicts itself: it also states other answers.", "evaluation": 0}
    return {"explanation": "The report states the discovery.", "evaluation": 1}


RIVAL_SHARE = 0.6  # a sentence with this share of a fact's content words is framed like it


def rival_claims(facts: list[str], sentences: list[str]) -> bool:
    """Whether a sentence is a reference fact with its answer swapped: another sentence states the
    fact alone, and this one has most of the fact's content words, does not state it, and has
    about as many words of its own as the fact words it lacks (an explanation around the fact has
    many more). Rule 3's self-contradiction."""
    for fact in facts:
        words = _content_words(fact)
        if all(missing_gold_facts([fact], sentence) for sentence in sentences):
            continue  # the fact is stated across sentences, not as one claim that could have a rival
        for sentence in sentences:
            own = _content_words(sentence)
            shared, lacks, extra = len(words & own), len(words - own), len(own - words)
            if words and shared >= RIVAL_SHARE * len(words) and 0 < extra <= lacks + 1 \
                    and missing_gold_facts([fact], sentence):
                return True
    return False


def rubric_judge(request: dict[str, Any]) -> Scripted:
    """Scripted-server responder: the rubric's verdict as a chat reply (400 for other requests)."""
    text = judge_user_text(request)
    if text is None:
        return Scripted(status=400, body=error_body("not a judge request"))
    return Scripted(body=chat_reply(json.dumps(rubric_verdict(text))))


def oracle_actions(task: str, difficulty: str, seed: int) -> tuple[list[dict[str, Any]], str]:
    """The oracle's actions on this episode and the knowledge report it ends with."""
    record, log = run_episode(task, difficulty, seed, "oracle")
    assert record.success, "the oracle must solve the episode"
    return [entry["action"] for entry in log if entry["type"] == "step"], record.knowledge or ""


def agent_reply(action: dict[str, Any], thought: str) -> str:
    """A ReAct reply (thought + action, or thought + dialog option) carrying `action`."""
    if "chosen_dialog_option_int" in action:
        return json.dumps({"thought": thought, "chosen_dialog_option_int": action["chosen_dialog_option_int"]})
    return json.dumps({"thought": thought, "action": action["action"], "arg1": action.get("arg1"),
                       "arg2": action.get("arg2")})  # fmt: skip


class OracleReplay:
    """Responder: agent requests get the oracle's actions in turn, judge requests go to `judge`."""

    def __init__(self, actions: list[dict[str, Any]], discovery: str,
                 judge: Callable[[dict[str, Any]], Scripted] = rubric_judge) -> None:  # fmt: skip
        self.actions = deque(actions)
        self.discovery = discovery
        self.judge = judge
        self.judge_requests = 0

    def __call__(self, request: dict[str, Any]) -> Scripted:
        if judge_user_text(request) is not None:
            self.judge_requests += 1
            return self.judge(request)
        if not self.actions:
            return Scripted(body=chat_reply(json.dumps({"thought": "Done.", "action": "WAIT", "arg1": None, "arg2": None})))
        action = self.actions.popleft()
        thought = self.discovery if not self.actions else "Following the plan."
        return Scripted(body=chat_reply(agent_reply(action, thought)))
