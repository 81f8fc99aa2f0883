"""What the harness adapters share: the tool-calling prompt, the act tool's mapping to an env
action, the dataset rows (task, difficulty, instance) and the episode's end-of-episode results.

Rewards and scores come from the episode's end: success (completed successfully) and the answer
sheet's exact grade. The procedure score is reported for analysis only: it pays answer-specific
choices (the right object, the right setting), so it is never a reward.
"""

from __future__ import annotations

import json
from typing import Any

from discoverylab.agents.react import REACT_ROLE
from discoverylab.bench.runner import parse_seeds, suite_tasks
from discoverylab.server.session import EpisodeSession, ResetRequest, SessionError

TOOL_PROMPT = (
    f"{REACT_ROLE}\n\nYou act through the `act` tool: one call = one action (its arguments are the action's "
    "name, arg1 and arg2 as the instructions describe; in a dialog pass chosen_dialog_option_int instead). "
    "The tool answers with the next observation. When the episode has ended, call `submit` with your "
    "knowledge report: what you discovered, stated plainly."
)
LAB_PROMPT = (
    "You are a scientist running experiments in a small laboratory. Talk to the lab with the `say` tool: "
    "one call = one message, and the tool answers with the lab's reply. When the episode has ended, call "
    "`submit` with a short summary of what you found."
)
ENDED = "The episode has ended. Call submit with your knowledge report."
SHEET_PROMPT = "The episode is over. Fill in the answer sheet from what you found out. Reply with the JSON object only.\n"


def rows(task: str | None = None, suite: str = "discovery", difficulty: str | None = None, split: str = "dev",
         indices: str = "0") -> list[dict[str, Any]]:  # fmt: skip
    """Dataset rows: one per (task, difficulty, instance index of `split`). Every row's instance is
    checked here, when the harness builds its task: a sealed split without the key, or an index
    out of a split's range, is refused before any sample starts (not in each sample's solver)."""
    from discoverylab.labs.protocol import protocol_names

    if task is not None and task in protocol_names():
        from discoverylab.server.session import LAB_DIFFICULTY

        if difficulty not in (None, LAB_DIFFICULTY):  # refused, as env-serve refuses it, not played without it
            raise ValueError(f"{task} is a Tiny Labs protocol: it has no difficulty levels (difficulty={difficulty!r}).")
        return _checked([{"task": task, "difficulty": LAB_DIFFICULTY, "split": split, "index": i} for i in parse_seeds(indices)])
    pairs = suite_tasks(suite if task is None else "all", difficulty)
    if task is not None:
        from discoverylab.scenarios.registry import get_task

        try:
            task_id = get_task(task).task_id
        except ValueError as exc:  # name the labs too: `task` may be a DiscoveryWorld task or a protocol
            raise ValueError(f"{exc} Tiny Labs protocols: {', '.join(protocol_names())}.") from None
        pairs = [(t, d) for t, d in pairs if t == task_id]
    if not pairs:
        raise ValueError(f"No tasks for task={task!r} suite={suite!r} difficulty={difficulty!r}.")
    return _checked([{"task": t, "difficulty": d, "split": split, "index": i} for t, d in pairs for i in parse_seeds(indices)])


def _checked(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows, once each names an instance the episodes can build (`make_instance` raises a
    `ValueError` naming the split's range, or the key's length). The key is read from where the
    episodes will read it: the harness has no --eval-key-file."""
    from discoverylab.instances import KEY_ENV, SEALED_SPLIT, key_id, load_key, make_instance

    sealed = any(r["split"] == SEALED_SPLIT for r in items)
    key = load_key() if sealed else None
    if sealed and key is None:
        raise ValueError(f"The test split is sealed: set ${KEY_ENV} to the evaluator's key in the environment "
                         "where the harness runs the episodes.")
    for r in items:
        make_instance(r["task"], r["difficulty"], r["split"], r["index"], key)
        if key is not None and r["split"] == SEALED_SPLIT:
            r["key_id"] = key_id(key)  # which test set the row was drawn from (a fingerprint, never the key)
    return items


def check_key(row: dict[str, Any], key: bytes | None) -> None:
    """Refuse to play a sealed row under another key than the one it was drawn under: its
    `test#N` would be another world, recorded beside the first test set's as if one."""
    from discoverylab.instances import KEY_ENV, key_id

    drawn = row.get("key_id")
    here = None if key is None else key_id(key)
    if drawn is not None and drawn != here:
        raise ValueError(f"This sample was drawn from the test set of the key {drawn}, but ${KEY_ENV} here is "
                         f"{'unset' if here is None else f'the key {here}'}: its test#{row['index']} would be another "
                         "instance. Set the key the evaluation started with (fingerprints, not keys, are shown).")


def start(row: dict[str, Any], max_steps: int | None = None, key: bytes | None = None) -> tuple[EpisodeSession, str]:
    """A session on the row's instance and its first observation (text; it opens with the instructions).
    A sealed row is played only under the key it was drawn under (`check_key`)."""
    from discoverylab.instances import load_key

    key = key if key is not None else load_key()  # where EpisodeSession reads it
    check_key(row, key)
    session = EpisodeSession(key)
    first = session.reset(ResetRequest(task=row["task"], difficulty=row["difficulty"], split=row["split"],
                                       index=int(row["index"]), max_steps=max_steps))  # fmt: skip
    return session, first.observation


def act(session: EpisodeSession, action: str | None = None, arg1: Any = None, arg2: Any = None,
        chosen_dialog_option_int: int | None = None) -> str:  # fmt: skip
    """One act-tool call played: the next observation as text (errors as text the model can read)."""
    if session.done:
        return ENDED
    if chosen_dialog_option_int is not None:
        packet: dict[str, Any] = {"chosen_dialog_option_int": chosen_dialog_option_int}
    else:
        packet = {"action": action or ""}
        for name, value in (("arg1", arg1), ("arg2", arg2)):
            if value not in (None, ""):
                packet[name] = int(value) if isinstance(value, str) and value.strip().lstrip("-").isdigit() else value
    try:
        result = session.step(packet)
    except SessionError as exc:
        return f"Error: {exc}"
    return result.observation + (f"\n\n{ENDED}" if result.done else "")


def say(session: EpisodeSession, message: str) -> str:
    """One say-tool call to a Tiny Lab: the lab's reply (a refused message as an error text, as in `act`)."""
    if session.done:
        return ENDED
    try:
        result = session.step(message)
    except SessionError as exc:
        return f"Error: {exc}"
    return result.observation + (f"\n\n{ENDED}" if result.done else "")


def sheet_prompt(session: EpisodeSession) -> str | None:
    sheet = session.answer_sheet()
    return None if sheet is None else SHEET_PROMPT + sheet["text"]


def parse_answers(text: str) -> dict[str, Any]:
    """The JSON object in a reply (an unusable reply hands in an empty sheet: every field 0)."""
    start_at, end_at = text.find("{"), text.rfind("}")
    try:
        data = json.loads(text[start_at:end_at + 1]) if 0 <= start_at < end_at else {}
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def results(session: EpisodeSession, report: str | None, answers: dict[str, Any] | None) -> dict[str, Any]:
    """The episode's end: success, completion, the env's reward over the episode (`reward`: 1.0
    for a DiscoveryWorld success, a Tiny Lab's grade in 0..1, as env-serve and the Gym envs pay
    it; "success" of a lab is a perfect grade), the answer sheet's grade, the (reporting-only)
    procedure score (DiscoveryWorld only; 0 for a lab), the report and the scorecard (gold
    included: the episode is over)."""
    session.finish()
    card = session.final_card()
    if session.answer_sheet() is not None:
        session.hand_in(answers or {})  # a sealed instance's reply is a receipt: the harness (the evaluator) scores
    grade = session.handed_in
    if grade is not None and session.sealed:  # its verdicts and score, never the gold itself (as in the eval log before)
        grade = {**grade, "fields": [{k: v for k, v in f.items() if k != "gold"} for f in grade["fields"]]}
    success = bool(card.get("completedSuccessfully"))
    lab = session.kind == "lab"
    reward = float(card.get("score", 0.0) or 0.0) if lab else float(success)
    procedure = 0.0 if lab else float(card.get("scoreNormalized", card.get("score", 0.0)) or 0.0)
    return {"task": session.task, "difficulty": session.difficulty, "instance": session.instance.public() if session.instance else None,
            "steps": session.steps, "completed": bool(card.get("completed")), "success": success, "reward": reward,
            "procedure": procedure,
            "answers_score": None if grade is None else grade["score"], "answers_grade": grade,
            "knowledge": report or "", "scorecard": card}  # fmt: skip
