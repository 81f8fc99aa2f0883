"""Attack: a client of a sealed env server hands in its sheet and reads the answer off the verdicts.

`hand_in` of a sealed test instance used to answer with the per-field grade, gold stripped: on a
field of two or three options a "wrong" (or the score) names or narrows the answer, and every
server with the evaluator's key plays the same test#N, so the next run of that instance (the next
submission's, or a restarted server's) fills it in. A sealed Tiny Lab's end did worse: its
scorecard was the whole grade, the truth in its details. The client is the agent, not the
evaluator: it now gets a receipt (the sheet came, which fields, the form's own errors) and a
sealed lab's end says only that it ended; the full grade goes to the evaluator's `--out` records.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from discoverylab.server.client import EnvServerClient
from discoverylab.server.session import EpisodeSession, ResetRequest
from env_server_kit import running_env_server

KEY = b"v" * 32
TASK, DIFFICULTY, FIELD = "Proteomics", "easy", "outlier_species"
LAB = "sequence/hidden-property"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def narrowed(reply: dict[str, Any], options: list[str], tried: str) -> set[str]:
    """What the attacker learns: the options still possible once the reply is read (a field's
    verdict, else the score, which for a one-field sheet is that verdict)."""
    verdicts = [f.get("correct") for f in reply.get("fields") or [] if isinstance(f, dict) and f.get("name") == FIELD]
    right = verdicts[0] if verdicts and isinstance(verdicts[0], bool) else None
    if right is None and isinstance(reply.get("score"), int | float):
        right = reply["score"] == 1.0
    if right is None:
        return set(options)
    return {tried} if right else set(options) - {tried}


def _play_to_the_end(env: EnvServerClient, **instance: Any) -> list[str]:
    result = env.reset(TASK, DIFFICULTY, max_steps=1, **instance)
    while not result.done:
        result = env.step({"action": "WAIT"})
    sheet = env.answer_sheet()
    assert sheet is not None
    (field,) = [f for f in sheet["fields"] if f["name"] == FIELD]
    return list(field["schema"]["enum"])


def test_attack_sealed_hand_in_verdicts_narrow_the_answer_is_refused(tmp_path):
    out = tmp_path / "served"
    with running_env_server(key=KEY, out=out) as (url, _):
        with EnvServerClient(url) as env:
            options = _play_to_the_end(env, split="test", index=6)
            tried = options[0]
            reply = env.hand_in({FIELD: tried, "no_such_field": 1})
            after = env.state()
        with EnvServerClient(url) as env:  # an open instance keeps today's reply: the attack works there
            public_options = _play_to_the_end(env, split="dev", index=6)
            public = env.hand_in({FIELD: public_options[0]})
    assert narrowed(reply, options, tried) == set(options), reply  # nothing learned
    assert reply["received"] is True and reply["recorded"] is True and reply["fields_submitted"] == [FIELD]
    assert list(reply["errors"]) == ["no_such_field"]  # the form's own check, not the gold's
    assert not {"score", "fields", "correct", "gold"} & set(reply) and "correct" not in json.dumps(reply)
    assert "answers" not in json.dumps(after) and "correct" not in json.dumps(after)
    assert len(narrowed(public, public_options, public_options[0])) < len(public_options)
    # the evaluator's records keep the full grade
    sealed_row = [r for r in _lines(out / "results.jsonl") if r["split"] == "test"][-1]
    (graded,) = sealed_row["answers_grade"]["fields"]
    assert graded["name"] == FIELD and "gold" in graded and graded["correct"] is (graded["gold"] == tried)
    assert sealed_row["answers_score"] == float(graded["correct"]) and sealed_row["answers"][FIELD] == tried


def test_attack_sealed_lab_end_shows_no_grade_but_the_records_keep_it(tmp_path):
    out = tmp_path / "served"
    with running_env_server(key=KEY, out=out) as (url, _):
        with EnvServerClient(url) as env:
            result = env.reset(LAB, "", split="test", index=2)
            rewards = []
            while not result.done:
                result = env.step("nonsense the protocol answers with its own error")
                rewards.append(result.reward)
            state = env.state()
        with EnvServerClient(url) as env:  # a public lab still pays and shows its grade
            public = env.reset(LAB, "", split="dev", index=2)
            while not public.done:
                public = env.step("nonsense the protocol answers with its own error")
    for card in (result.scorecard, state["scorecard"]):
        assert card is not None and card["completed"] is True
        assert not {"score", "parts", "labels", "details", "completedSuccessfully"} & set(card), card
    assert rewards == [0.0] * len(rewards) and state["reward_total"] == 0.0
    assert public.scorecard is not None and "details" in public.scorecard and "score" in public.scorecard
    (row,) = [r for r in _lines(out / "labs" / "results.jsonl") if r["split"] == "test"]
    assert row["index"] == 2 and isinstance(row["score"], float) and row["labels"]


def test_harness_scoring_a_sealed_sheet_still_gets_its_grade():
    """Inspect and verifiers score in the evaluator's process: `common.results` reads the session's
    grade (verdicts and score, never the gold), not the client's receipt."""
    from discoverylab.integrations import common

    session = EpisodeSession(KEY)
    session.reset(ResetRequest(task=TASK, difficulty=DIFFICULTY, split="test", index=7, max_steps=1))
    session.step({"action": "WAIT"})
    out = common.results(session, "", {FIELD: "echojelly"})
    assert out["answers_score"] in (0.0, 1.0) and out["answers_grade"]["fields"][0]["correct"] is (out["answers_score"] == 1.0)
    assert "gold" not in out["answers_grade"]["fields"][0]
    session.close()
