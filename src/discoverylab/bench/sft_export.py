"""Expert trajectories for supervised fine-tuning: the oracle's episodes as chat conversations.

One JSONL line per episode, in the `messages` format that TRL's SFTTrainer, Axolotl, LLaMA-Factory
and torchtune read:

    {"messages": [{"role": "system", "content": ...}, {"role": "user", "content": ...},
                  {"role": "assistant", "content": "{\"thought\": ..., \"action\": ..., ...}"}, ...],
     "metadata": {"schema": "discoverylab-sft-v1", "task", "difficulty", "instance", "agent",
                  "steps", "success", "answers"}}

The system message is the ReAct agent's (role and instructions, sent once); each user message is
the observation in the compact text form (the first one starts with the task); each assistant
message is a ReAct reply: a short rationale and the action, exactly what `to_action` parses. The
last assistant message before the end carries the oracle's knowledge report as its thought, and
for discovery tasks a final user/assistant pair hands in the answer sheet (the form as text, the
oracle's answers as JSON). Only public splits export: the sealed test split never becomes
training data.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from discoverylab.agents.llm_common import to_action
from discoverylab.agents.react import REACT_ROLE
from discoverylab.bench.episode import run_episode
from discoverylab.instances import SEALED_SPLIT, Instance, InstanceError, from_seed, make_instance
from discoverylab.world.lm_observation import lm_instructions, lm_observation

SCHEMA = "discoverylab-sft-v1"
CHARS_PER_TOKEN = 4  # the token estimate of docs/integrations.md (no tokenizer per model)
ROLES = ("system", "user", "assistant")
REPLY_HINT = "Reply with a JSON object: your thought, then the action and its arguments (null when unused)."


def _names(obs: Any, out: dict[int, str]) -> dict[int, str]:
    """uuid -> name of every object the observation shows (for the rationales)."""
    if isinstance(obs, dict):
        if isinstance(obs.get("uuid"), int) and isinstance(obs.get("name"), str):
            out.setdefault(obs["uuid"], obs["name"])
        for value in obs.values():
            _names(value, out)
    elif isinstance(obs, list):
        for value in obs:
            _names(value, out)
    return out


def rationale(action: dict[str, Any], obs: dict[str, Any]) -> str:
    """A short, truthful rationale: what the action does, with the objects it names."""
    if "chosen_dialog_option_int" in action:
        options = (obs.get("dialog_box") or {}).get("dialogOptions") or {}
        said = options.get(str(action["chosen_dialog_option_int"]), "")
        return f"I answer in the dialog: {said}".strip() if said else "I choose a dialog option."
    names = _names(obs, {})
    args = [names.get(a, str(a)) if isinstance(a, int) else str(a) for a in (action.get("arg1"), action.get("arg2")) if a is not None]
    verb = str(action.get("action", "")).replace("_", " ").lower()
    return f"Next: {verb}" + (f" ({', '.join(args)})." if args else ".")


def reply(action: dict[str, Any], thought: str) -> str:
    """The assistant message: the ReAct reply carrying `action` (what `to_action` parses back)."""
    if "chosen_dialog_option_int" in action:
        return json.dumps({"thought": thought, "chosen_dialog_option_int": action["chosen_dialog_option_int"]})
    return json.dumps({"thought": thought, "action": action.get("action"), "arg1": action.get("arg1"),
                       "arg2": action.get("arg2")})  # fmt: skip


def episode_conversation(inst: Instance, agent: str = "oracle", max_steps: int | None = None) -> dict[str, Any]:
    """One episode of `agent` on `inst` as an SFT example (messages and metadata)."""
    if inst.sealed:
        raise InstanceError("The sealed test split is never exported as training data.")
    record, log = run_episode(inst.task, inst.difficulty, inst, agent, max_steps=max_steps)
    start = log[0]["observation"]
    steps = [entry for entry in log if entry["type"] == "step"]
    system = f"{REACT_ROLE}\n\n{lm_instructions('teleportLocations' in start, start.get('teleportLocations'))}"
    task = "\n".join(t["description"] for t in start.get("taskProgress", []))
    messages = [{"role": "system", "content": system},
                {"role": "user", "content": f"Task: {task}\n\nCurrent observation:\n{lm_observation(start)}\n\n{REPLY_HINT}"}]
    obs = start
    for i, entry in enumerate(steps):
        action = entry["action"] if isinstance(entry["action"], dict) else to_action(json.loads(entry["action"]))
        last = i == len(steps) - 1
        thought = record.knowledge if last and record.knowledge else rationale(action, obs)
        messages.append({"role": "assistant", "content": reply(action, thought)})
        obs = entry["observation"]
        if not last:
            messages.append({"role": "user", "content": f"Current observation:\n{lm_observation(obs)}\n\n{REPLY_HINT}"})
    if record.answers is not None:
        from discoverylab.env import DiscoveryWorldEnv
        from discoverylab.scenarios.answer_forms import answer_form

        env = DiscoveryWorldEnv(inst.task, inst.difficulty)
        env.reset(options={"instance": inst})
        messages.append({"role": "user", "content": "The episode is over. Fill in the answer sheet from what you "
                         f"found out.\n{answer_form(env).text()}"})  # fmt: skip
        messages.append({"role": "assistant", "content": json.dumps(record.answers)})
    return {"messages": messages, "metadata": {
        "schema": SCHEMA, "task": record.task, "difficulty": record.difficulty, "instance": inst.public(),
        "agent": agent, "steps": record.steps, "success": record.success, "answers_score": record.answers_score}}


def windows(example: dict[str, Any], max_turns: int) -> list[dict[str, Any]]:
    """Cut a long conversation into examples of at most `max_turns` assistant turns each, for
    training contexts shorter than the episode. Each window keeps the system message and opens
    with the task and the observation the model saw before its first turn there; the answer-sheet
    exchange stays with the last window. `metadata.window` is (k, n); `replay` needs whole episodes."""
    if max_turns < 1:
        raise ValueError("max_turns must be at least 1")
    system, first, *rest = example["messages"]
    task = first["content"].split("\n\nCurrent observation:\n", 1)[0]
    pairs = [rest[i:i + 2] for i in range(0, len(rest), 2)]  # (assistant, the next user message or none)
    sheet: list[dict[str, str]] = []
    if example["metadata"].get("answers_score") is not None and len(pairs) >= 2:
        sheet = pairs[-2][1:] + pairs[-1]  # the sheet's user prompt rode on the last action's pair
        pairs = pairs[:-2] + [pairs[-2][:1]]
    out, prompt = [], first["content"]
    chunks = [pairs[i:i + max_turns] for i in range(0, len(pairs), max_turns)]
    for k, chunk in enumerate(chunks):
        messages = [system, {"role": "user", "content": prompt}]
        for pair in chunk:
            messages.append(pair[0])
            if len(pair) > 1:
                messages.append(pair[1])
        if k < len(chunks) - 1:
            prompt = f"{task}\n\n{messages.pop()['content']}"  # the next window opens with it
        else:
            messages += sheet
        out.append({"messages": messages, "metadata": {**example["metadata"], "window": [k + 1, len(chunks)]}})
    return out


def instances(tasks: Iterable[tuple[str, str]], split: str | None, indices: Iterable[int]) -> Iterator[Instance]:
    """The instances to export: `indices` of `split`, or raw public seeds when `split` is None."""
    wanted = list(indices)
    for task, difficulty in tasks:
        for n in wanted:
            if split == SEALED_SPLIT:
                raise InstanceError("The sealed test split is never exported as training data; use train or dev.")
            yield from_seed(task, difficulty, n) if split is None else make_instance(task, difficulty, split, n)


def validate_line(line: str) -> list[str]:
    """Problems of one exported line against the schema (empty: valid)."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        return [f"not JSON: {exc}"]
    problems = []
    messages = data.get("messages") if isinstance(data, dict) else None
    if not isinstance(messages, list) or len(messages) < 3:
        return ["messages: a list of at least system, user, assistant"]
    if messages[0].get("role") != "system":
        problems.append("the first message is the system prompt")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or set(m) != {"role", "content"} or m.get("role") not in ROLES or not isinstance(m.get("content"), str):
            problems.append(f"messages[{i}]: {{role: system|user|assistant, content: str}}")
        elif i > 0 and m["role"] == messages[i - 1].get("role"):
            problems.append(f"messages[{i}]: roles alternate (user, assistant)")
    if messages[-1].get("role") != "assistant":
        problems.append("the last message is the assistant's")
    meta = data.get("metadata")
    if not isinstance(meta, dict) or meta.get("schema") != SCHEMA or not {"task", "difficulty", "instance", "success"} <= set(meta):
        problems.append(f"metadata: schema {SCHEMA!r} with task, difficulty, instance, success")
    return problems


def tokens(example: dict[str, Any]) -> int:
    """The example's token estimate (characters / 4)."""
    return sum(len(m["content"]) for m in example["messages"]) // CHARS_PER_TOKEN


def replay(example: dict[str, Any]) -> tuple[bool, int]:
    """Play an exported example's actions again on its (public) instance: (success, steps).

    The assistant messages are parsed as any ReAct reply is (`to_action`); the answer-sheet reply
    after the episode's end is not an action and is not played."""
    from discoverylab.env import DiscoveryWorldEnv

    meta = example["metadata"]
    env = DiscoveryWorldEnv(meta["task"], meta["difficulty"])
    env.reset(seed=int(meta["instance"]["seed"]))
    steps, done = 0, False
    for message in example["messages"]:
        if message["role"] != "assistant" or done:
            continue
        _, _, terminated, truncated, _ = env.step(to_action(json.loads(message["content"])))
        steps, done = steps + 1, terminated or truncated
    return bool(env.scorecard(reveal=True)["completedSuccessfully"]), steps
