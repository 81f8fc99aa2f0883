"""The symbolic observation's notes (`rl/notes.py`, `notes=True`): every note is what a reader of
the text observation and of its own actions would write down, and the notes carry what the
unit tests need (the feed poster's request, the instrument reading against the task's rules,
who was talked to, where the agent has been)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.rl import make_rl_env
from discoverylab.rl.demos import oracle_demonstrations
from discoverylab.rl.features import feature_size, features, make_sb3_env
from discoverylab.rl.notes import LINES, MAP, NOTE_LINE, NOTE_SLOT, VISITS, reading_value, task_notes
from discoverylab.rl.view import mentioned
from discoverylab.scenarios.registry import all_tasks

_WORD = re.compile(r"[a-z]{3,}")
_POST = re.compile(r"Posted by (.+?) on Step \d+:\n(.*?)\n", re.S)


class TextReader:
    """The notes, written from the text observation (`info["observation"]`) and the agent's own
    action records, nothing else: an independent reader to compare the encoder's notes with."""

    def __init__(self, radius: int, slots: int, dialog: int, size: int) -> None:
        self.r, self.k, self.d, self.size = radius, slots, dialog, size
        self.visited: dict[tuple[int, int], int] = {}
        self.seen: set[tuple[int, int]] = set()
        self.talked: set[int] = set()
        self.reading = ""
        self.instructions = ""

    def read(self, records: list[Any], info: dict[str, Any]) -> None:
        """One step: the agent's own new action records (what it did, as the world logged it:
        a USE that starts a conversation is a TALK) and the text observation."""
        ob = info["observation"]
        task = " ".join(t["description"] for t in ob["taskProgress"])
        quoted = {q.strip().lower() for q in re.findall(r"`([^`]+)`", task)}
        for record in records:
            if not record.success:
                continue
            if record.action == "TALK":
                self.talked.add(record.arg1_uuid)
            elif record.action == "USE":
                self.reading = record.message
            elif record.action == "DISCOVERY_FEED_GET_UPDATES":
                for author, content in _POST.findall(record.message):
                    if author.strip().lower() in quoted and content not in self.instructions:
                        self.instructions += content + "\n"
        where = ob["agentLocation"]
        x, y = where["x"], where["y"]
        self.visited[(x, y)] = min(VISITS, self.visited.get((x, y), 0) + 1)
        self.seen.update((x + dx, y + dy) for dx in range(-self.r, self.r + 1) for dy in range(-self.r, self.r + 1))

    def notes(self, info: dict[str, Any], slot_names: list[tuple[str, int]], task: str) -> dict[str, np.ndarray]:
        ob = info["observation"]
        lines, own, numbers, hot, _ = task_notes(task)
        message = ob["lastActionMessage"]
        slots = np.zeros((self.k, NOTE_SLOT), np.uint8)
        for i, (name, uuid) in enumerate(slot_names):
            line = next((j + 1 for j, text in enumerate(lines) if mentioned(name, text)), 0)
            slots[i] = (line, mentioned(name, message), bool(self.instructions) and mentioned(name, self.instructions),
                        uuid in self.talked)  # fmt: skip
        task_words = set(_WORD.findall(task.lower()))
        dialog = np.zeros((self.d, 1), np.uint8)
        box = ob.get("dialog_box") or {}
        for i, text in enumerate(list((box.get("dialogOptions") or {}).values())[: self.d]):
            words = _WORD.findall(str(text).lower())
            dialog[i, 0] = round(255 * sum(w in task_words for w in words) / len(words)) if words else 0
        out = np.zeros((LINES, NOTE_LINE), np.uint8)
        value = reading_value(self.reading, lines[0] if lines else "") if self.reading else None
        said = set(_WORD.findall(self.reading.lower()))
        for j, nums in enumerate(numbers):
            below = 0 if value is None else min(3, sum(n <= value for n in nums))
            out[j] = (bool(nums), below, bool(self.reading) and bool(own[j] & said))
        w = 2 * self.r + 1
        x, y = ob["agentLocation"]["x"], ob["agentLocation"]["y"]
        visited = np.zeros((w, w), np.uint8)
        for (vx, vy), count in self.visited.items():
            if abs(vx - x) <= self.r and abs(vy - y) <= self.r:
                visited[vy - y + self.r, vx - x + self.r] = count
        size, block = self.size, -(-self.size // MAP)
        blocks = np.zeros((MAP, MAP), np.int64)
        for sx, sy in self.seen:
            if 0 <= sx < size and 0 <= sy < size:
                blocks[sy // block, sx // block] += 1
        return {"note_slots": slots, "note_dialog": dialog, "note_lines": out, "note_task": np.frombuffer(hot, np.uint8),
                "note_visited": visited, "note_map": (blocks * 255 // (block * block)).astype(np.uint8)}  # fmt: skip


def _tasks() -> list[str]:
    return sorted(all_tasks())


@pytest.mark.parametrize("task", _tasks())
def test_notes_are_what_a_reader_of_the_text_writes_down(task: str) -> None:
    """Random masked rollouts (talks, uses, feed reads included): each step's notes equal the
    text-only reader's, so the notes show nothing the text and the agent's own actions do not."""
    env = make_rl_env(task, info="full", notes=True, max_steps=60)
    base: Any = env.unwrapped
    rng = np.random.default_rng(3)
    for seed in range(2):
        obs, info = env.reset(seed=seed)
        reader = TextReader(base.symbolic.radius, base.symbolic.num_slots, base.symbolic.num_dialog, base.world.size)
        history = base.scenario.player.history
        reader.read(list(history), info)
        for _ in range(60):
            task_text = base.scenario.scorecard.task_description
            names = [(o.name, o.uuid) for o, *_ in base.symbolic.slot_data]
            want = reader.notes(info, names, task_text)
            for key, value in want.items():
                assert np.array_equal(obs[key], value), f"{task} seed {seed} step {info['step']}: {key} {obs[key]} != {value}"
            mask = info["action_mask"]
            weights = mask * np.where(np.arange(mask.size) < 15, 1.0, 4.0)  # object actions more often
            index = int(rng.choice(mask.size, p=weights / weights.sum()))
            done = len(history)
            obs, _, term, trunc, info = env.step(index)
            reader.read(history[done:], info)
            if term or trunc:
                break


def test_notes_carry_the_feed_posters_request() -> None:
    """Discovery Feed: after the feed is read, the slots flagged "named in an instruction" are
    exactly the named poster's object and container among those in view."""
    demos = oracle_demonstrations("DiscoveryFeedTest", seeds=range(1000, 1004), notes=True)
    assert len(demos["episodes"]) >= 3
    flagged = 0
    for seed in demos["episodes"]:
        rows = np.flatnonzero(demos["episode"] == seed)
        before = demos["obs/note_slots"][rows[0]]
        assert not before[:, 2].any(), "an instruction noted before the feed was read"
        flagged += int(demos["obs/note_slots"][rows[-1]][:, 2].sum())
    assert flagged >= len(demos["episodes"])  # the object (held at the end) and usually the container


def test_notes_compare_the_reading_with_the_task_numbers() -> None:
    """Instrument Measurement, the oracle's episodes replayed: after the measurement each task
    line's count is how many of its numbers the reading (parsed the oracle's way) reaches."""
    from discoverylab.scenarios.unit.instrument_measurement import READINGS

    demos = oracle_demonstrations("InstrumentMeasurementTest", seeds=range(1000, 1012), notes=True)
    env = make_rl_env("InstrumentMeasurementTest", notes=True)
    numeric = 0
    for seed in demos["episodes"]:
        rows = np.flatnonzero(demos["episode"] == seed)
        obs, _ = env.reset(seed=int(seed))
        for index in demos["action"][rows]:
            obs, *_ = env.step(int(index))
        scenario: Any = env.unwrapped.scenario
        task = scenario.scorecard.task_description
        words = re.search(r"measure the (.+?) of the `", task)[1]  # type: ignore[index]
        if words not in READINGS:
            continue  # the microscope's surface rules: words, not numbers
        use = [r.message for r in scenario.player.history if r.action == "USE" and r.success]
        value = float(re.search(READINGS[words], use[-1])[1])  # type: ignore[index]
        numeric += 1
        for j, nums in enumerate(task_notes(task)[2]):
            assert obs["note_lines"][j][0] == bool(nums)
            assert obs["note_lines"][j][1] == min(3, sum(n <= value for n in nums)), (seed, j, value, nums)
    assert numeric >= 3


def test_notes_remember_who_was_talked_to_and_where_the_agent_walked() -> None:
    """Moving Agents: a character talked to stays flagged; the visited plane marks the tiles
    the agent stood on, centred on the agent."""
    demos = oracle_demonstrations("MovingAgentsTest", seeds=range(1000, 1003), notes=True)
    assert demos["obs/note_slots"][:, :, 3].any(), "no character noted as talked to"
    visited = demos["obs/note_visited"]
    assert (visited[:, 3, 3] >= 1).all(), "the agent's own tile is not counted"
    rows = np.flatnonzero(demos["episode"] == demos["episodes"][0])
    assert visited[rows[-1]].sum() >= 2


def test_notes_feature_layout_and_errors() -> None:
    env = make_sb3_env("DialogTest", notes=True, history=True)
    obs, _ = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape
    symbolic = make_rl_env("DialogTest", notes=True)
    raw, _ = symbolic.reset(seed=0)
    assert features({k: v[None] for k, v in raw.items()}).shape[1] == feature_size(symbolic.observation_space)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="symbolic"):
        DiscoveryWorldEnv("DialogTest", observation="text", notes=True)


def test_notes_in_the_batched_env_equal_serial_envs() -> None:
    from discoverylab.rl.vector import BatchedVectorEnv

    envs = BatchedVectorEnv("DiscoveryFeedTest", num_envs=3, workers=2, max_steps=30, notes=True)
    serial = [make_rl_env("DiscoveryFeedTest", max_steps=30, notes=True) for _ in range(3)]
    try:
        obs, info = envs.reset(seed=5)
        singles = [env.reset(seed=5 + i) for i, env in enumerate(serial)]
        rng = np.random.default_rng(0)
        for _ in range(25):  # within the 30-step episodes (the batched env autoresets on the next step)
            for i, (o, _) in enumerate(singles):
                for key in ("note_slots", "note_lines", "note_visited", "note_task"):
                    assert np.array_equal(obs[key][i], o[key])
            masks = info["action_mask"]
            actions = (rng.random(masks.shape) * masks).argmax(axis=1)
            obs, _, _, _, info = envs.step(actions)
            singles = [tuple(env.step(int(a))[::4]) for env, a in zip(serial, actions, strict=True)]
    finally:
        envs.close()


def test_attack_read_the_pot_or_the_request_from_the_notes_before_the_discovery() -> None:
    """A lazy agent reads the notes instead of doing the step that discovers the fact: before the
    first successful USE, Instrument Measurement's line notes carry no comparison and no word
    match (only "this line has numbers", which the task text shows), so the pot is not in them;
    before DISCOVERY_FEED_GET_UPDATES, Discovery Feed flags no slot as requested. Checked on
    random masked rollouts, where such steps come late or never."""
    rng = np.random.default_rng(11)
    for task, verb in (("InstrumentMeasurementTest", "USE"), ("DiscoveryFeedTest", "DISCOVERY_FEED_GET_UPDATES")):
        env = make_rl_env(task, notes=True, max_steps=40, levels="train")
        before = 0
        for _ in range(6):
            obs, info = env.reset()
            history = env.unwrapped.scenario.player.history  # type: ignore[attr-defined]
            while not any(r.action == verb and r.success for r in history):
                before += 1
                if verb == "USE":
                    assert not obs["note_lines"][:, 1:].any(), "the reading's notes before any measurement"
                else:
                    assert not obs["note_slots"][:, 2].any(), "a requested object before the feed was read"
                mask = info["action_mask"]
                obs, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
                if term or trunc:
                    break
        assert before >= 40


def test_notes_rows_kept_across_slot_lists_follow_a_rename() -> None:
    """`Notes.encode` reuses a slot list's rows for another list holding the same objects (the
    encoder keeps one list per place and facing); a renamed object is not the same: its row
    follows the new name (the task line naming it), and the message's column follows the message."""
    from types import SimpleNamespace

    from discoverylab.rl.notes import Notes

    notes = Notes(radius=1, slots=3, dialog=2)
    agent = SimpleNamespace(world=SimpleNamespace(size=8), history=[], x=2, y=2)
    task = "Find the red key.\nBring the blue key to the door."
    key = SimpleNamespace(name="red key", uuid=7)
    notes.update(agent, task, "")  # type: ignore[arg-type]
    first = notes.encode(agent, task, [(key, False, True, 0, 0)], [])  # type: ignore[arg-type]
    assert first["note_slots"][:4] == bytes((1, 0, 0, 0))
    again = notes.encode(agent, task, [(key, False, False, 1, 0)], [])  # type: ignore[arg-type]
    assert again["note_slots"] is first["note_slots"]  # same object, same name: the same rows
    key.name = "blue key"
    renamed = notes.encode(agent, task, [(key, False, True, 0, 0)], [])  # type: ignore[arg-type]
    assert renamed["note_slots"][:4] == bytes((2, 0, 0, 0))
    notes.update(agent, task, "You see the blue key.")  # type: ignore[arg-type]
    said = notes.encode(agent, task, [(key, False, True, 0, 0)], [])  # type: ignore[arg-type]
    assert said["note_slots"][:4] == bytes((2, 1, 0, 0))
    notes.update(agent, task, "You see the blue keys.")  # type: ignore[arg-type]  (a substring, not the whole word)
    assert notes.encode(agent, task, [(key, False, True, 0, 0)], [])["note_slots"][:4] == bytes((2, 0, 0, 0))  # type: ignore[arg-type]
