"""Notes: what a text agent reads and remembers, as fixed-shape tensors (opt-in, `notes=True`).

The symbolic observation shows one step's view; a memoryless policy cannot follow a feed post
it read ten steps ago, sort an object by the number an instrument printed, tell "pot A" from
"pot B" (same kind), know which place the task names when the place names no object, or
remember where it has been. A person reading the text does all of that. `Notes` keeps those
readings per episode, from the same texts the agent is shown (the task description, the
messages of its own actions, dialog options) and from its own moves, never from an object's
hidden properties; `tests/test_rl_notes.py` recomputes every note from the episode's texts.

Keys added to the symbolic `Dict` (K slots, D dialog options, W window, L = `LINES`):

- `note_slots` (K, 4): the first task line (1..L) that names the slot's object (0: none);
  named in the last action's message; named in a remembered instruction (a DiscoveryFeed post
  by a poster the task names, read with DISCOVERY_FEED_GET_UPDATES); talked to this episode.
- `note_dialog` (D, 1): the share of the option's words (3+ letters) that the task uses, 0..255.
- `note_lines` (L, 3): per task line: it has numbers; how many of them are at most the last
  instrument reading's number (capped at 3); it shares a word with the last reading that no
  other task line has.
- `note_task` (TASK_WORDS,): multi-hot of the words of the task's first line and of its quoted
  terms (CRC32 buckets): which place, which property, which object the task asks about.
- `note_visited` (W, W): on how many steps of the episode the agent stood on that tile (capped
  at `VISITS`; north up, the agent at the centre): a greedy policy that walks in a circle sees
  the counts grow, so its observations do not repeat (until the cap).
- `note_map` (MAP, MAP): the world in MAP x MAP blocks (north up, not centred): the share of
  each block's tiles that have been in the agent's view this episode, 0..255; with the
  agent's place (`agent`) that is where to look next.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from gymnasium import spaces

from discoverylab.rl.view import mentioned
from discoverylab.world.agent import Agent
from discoverylab.world.feed import read_posts
from discoverylab.world.unpickle import FastState

LINES = 8
NOTE_SLOT = 4
NOTE_LINE = 3
TASK_WORDS = 128
MAP = 8
VISITS = 9
_Rows = tuple[object, int, int, bytes, list[tuple[int, str, str]], list[tuple[Any, Any]]]
_WORD = re.compile(r"[a-z]{3,}")
_TOKEN = re.compile(r"[a-z0-9]+")
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)")
_QUOTED = re.compile(r"`([^`]+)`")


@lru_cache(maxsize=256)
def task_notes(task: str) -> tuple[tuple[str, ...], tuple[frozenset[str], ...], tuple[tuple[float, ...], ...], bytes, frozenset[str]]:
    """(lines, each line's words no other line has, each line's numbers, the buckets of the
    words of the first line and of the quoted terms, the quoted terms) of a task description."""
    lines = tuple(line.strip() for line in task.splitlines() if line.strip())[:LINES]
    words = [set(_WORD.findall(line.lower())) for line in lines]
    own = tuple(frozenset(w - set().union(*(o for j, o in enumerate(words) if j != i))) for i, w in enumerate(words))
    numbers = tuple(tuple(float(n) for n in _NUMBER.findall(line)) for line in lines)
    hot = bytearray(TASK_WORDS)
    quoted = frozenset(q.strip().lower() for q in _QUOTED.findall(task))
    for term in (*quoted, lines[0].lower() if lines else ""):
        for word in _TOKEN.findall(term):
            hot[zlib.crc32(word.encode()) % TASK_WORDS] = 1
    return lines, own, numbers, bytes(hot), quoted


def reading_value(message: str, task_line: str) -> float | None:
    """The number an instrument's message reports: of its lines with a number, the one sharing
    most words with the task's statement (a spectrum lists every channel; the task names one),
    its last number."""
    task_tokens = set(_TOKEN.findall(task_line.lower()))
    best: tuple[int, float] | None = None
    for line in message.splitlines():
        numbers = _NUMBER.findall(line)
        if not numbers:
            continue
        overlap = len(task_tokens & set(_TOKEN.findall(line.lower())))
        if best is None or overlap > best[0]:
            best = (overlap, float(numbers[-1]))
    return None if best is None else best[1]


class Notes(FastState):
    """One agent's notes over an episode; `encode` returns the `note_*` arrays' bytes."""

    def __init__(self, radius: int, slots: int, dialog: int) -> None:
        self.radius, self.num_slots, self.num_dialog = radius, slots, dialog
        w = 2 * radius + 1
        self.spaces = {
            "note_slots": spaces.Box(0, 255, (slots, NOTE_SLOT), np.uint8),
            "note_dialog": spaces.Box(0, 255, (dialog, 1), np.uint8),
            "note_lines": spaces.Box(0, 255, (LINES, NOTE_LINE), np.uint8),
            "note_task": spaces.Box(0, 1, (TASK_WORDS,), np.uint8),
            "note_visited": spaces.Box(0, VISITS, (w, w), np.uint8),
            "note_map": spaces.Box(0, 255, (MAP, MAP), np.uint8),
        }
        self.agent: Agent | None = None
        self._start(None)

    def _start(self, agent: Agent | None) -> None:
        self.agent = agent
        self.read = 0  # records of the agent's history read so far
        self.talked: set[int] = set()
        self.instructions = ""
        self.reading = ""
        self.message = ""
        size = agent.world.size if agent is not None else 1
        self.visited = np.zeros((size + 2 * self.radius, size + 2 * self.radius), np.uint8)
        self.size = size
        self.block = -(-size // MAP)  # tiles per block side
        self.seen = np.zeros((self.block * MAP, self.block * MAP), np.uint8)
        # Caches (the notes change rarely; a step costs a few dict lookups): per object name, its
        # task line and whether the message / the instructions name it; the lines' bytes per
        # reading; the map's bytes per place.
        self._task = ""
        self._line: dict[str, int] = {}
        self._said: dict[str, bool] = {}
        self._told: dict[str, bool] = {}
        self._lines = b""
        self._map = b""
        self._place: tuple[int, int] | None = None
        self._rows: _Rows | None = None  # (slots, told, talked, rows with "said" 0, (slot, name, lowercase) per named slot, (object, name) per slot)
        self._said_rows: tuple[bytes, int, bytes] | None = None  # (`_rows`'s rows then, the message's version, rows)
        self._versions = [0, 0]  # the message's and the instructions' changes

    def update(self, agent: Agent, task: str, message: str) -> None:
        """Read the agent's new action records and the message the observation shows (a new
        agent or world starts a new episode)."""
        if agent is not self.agent or len(agent.history) < self.read:
            self._start(agent)
        if task != self._task:
            self._task, self._lines, self._rows = task, b"", None
            self._line.clear()
            self._told.clear()
        if message != self.message:
            self.message = message
            self._said.clear()
            self._versions[0] += 1
        history = agent.history
        if len(history) > self.read:
            quoted = task_notes(task)[4]
            for record in history[self.read :]:
                if not record.success:
                    continue
                if record.action == "TALK" and record.arg1_uuid is not None:
                    self.talked.add(record.arg1_uuid)
                elif record.action == "USE":
                    self.reading, self._lines = record.message, b""
                elif record.action == "DISCOVERY_FEED_GET_UPDATES":
                    for author, content in read_posts(record.message):
                        if author.strip().lower() in quoted and content not in self.instructions:
                            self.instructions += content + "\n"
                            self._told.clear()
                            self._versions[1] += 1
            self.read = len(history)
        place = (agent.x, agent.y)
        x, y = place
        r = self.radius
        if 0 <= x < self.size and 0 <= y < self.size and self.visited[y + r, x + r] < VISITS:
            self.visited[y + r, x + r] += 1  # every observation counts: standing still too
        if place != self._place:
            self._place = place
            if 0 <= x < self.size and 0 <= y < self.size:
                view = self.seen[max(0, y - r) : min(y + r + 1, self.size), max(0, x - r) : min(x + r + 1, self.size)]
                if not view.all():  # new tiles in view: the map changes
                    view[:] = 1
                    self._map = b""

    def _slot_row(self, o: object, lines: tuple[str, ...]) -> bytes:
        """A slot's notes with "named in the last message" left 0 (`_said_column` sets it)."""
        name = getattr(o, "name", "")
        line = self._line.get(name)
        if line is None:
            line = self._line[name] = next((j + 1 for j, text in enumerate(lines) if mentioned(name, text)), 0)
        told = self._told.get(name)
        if told is None:
            told = self._told[name] = bool(self.instructions) and mentioned(name, self.instructions)
        return bytes((line, 0, told, getattr(o, "uuid", None) in self.talked))

    def _said_column(self, kept: _Rows) -> bytes:
        """`kept`'s rows with "named in the last message" set. The message changes with almost
        every action while the slots' other notes stay: a name that is not even a substring of
        the message (most) is not named in it, and skips the whole-word match."""
        rows = kept[3]
        text = self.message.lower()
        hits = [slot for slot, name, low in kept[4] if low in text and self._said_of(name)]
        if hits:
            out = bytearray(rows)
            for slot in hits:
                out[slot * NOTE_SLOT + 1] = 1
            rows = bytes(out)
        return rows

    def _said_of(self, name: str) -> bool:
        said = self._said.get(name)
        if said is None:
            said = self._said[name] = mentioned(name, self.message)
        return said

    def _line_notes(self, lines: tuple[str, ...], own: tuple[frozenset[str], ...], numbers: tuple[tuple[float, ...], ...]) -> bytes:
        out = bytearray(LINES * NOTE_LINE)
        value = reading_value(self.reading, lines[0] if lines else "") if self.reading else None
        said = set(_WORD.findall(self.reading.lower()))
        for j, nums in enumerate(numbers):
            below = 0 if value is None else min(3, sum(n <= value for n in nums))
            out[j * NOTE_LINE : (j + 1) * NOTE_LINE] = bytes((bool(nums), below, bool(own[j] & said)))
        return bytes(out)

    def encode(self, agent: Agent, task: str, slots: Sequence[Sequence[Any]], options: list[str]) -> dict[str, bytes]:
        """The notes after `update`, for the slots (tuples, the object first; the encoder's
        `slot_data`) and the dialog options shown."""
        lines, own, numbers, hot, _ = task_notes(task)
        said, told = self._versions
        # The rows follow the slots' objects and names (not their reach or place): they repeat
        # over the encoder's slot lists (one per place and facing) until a note changes.
        kept = self._rows
        shown = slots[: self.num_slots]
        objects = None
        if kept is not None and kept[0] is not slots and kept[1:3] == (told, len(self.talked)):
            objects = [(slot[0], getattr(slot[0], "name", "")) for slot in shown]
            if objects == kept[5]:  # the same objects under the same names (compared by identity, then name)
                kept = self._rows = (slots, *kept[1:])
        if kept is None or kept[0] is not slots or kept[1] != told or kept[2] != len(self.talked):
            rows = b"".join([self._slot_row(slot[0], lines) for slot in shown])
            rows += bytes(self.num_slots * NOTE_SLOT - len(rows))
            if objects is None:
                objects = [(slot[0], getattr(slot[0], "name", "")) for slot in shown]
            names = [(i, name, name.strip().lower()) for i, (_, name) in enumerate(objects) if isinstance(name, str) and name]
            kept = self._rows = (slots, told, len(self.talked), rows, names, objects)
        said_rows = self._said_rows
        if said_rows is None or said_rows[0] is not kept[3] or said_rows[1] != said:
            said_rows = self._said_rows = (kept[3], said, self._said_column(kept))
        rows = said_rows[2]
        dialog = bytearray(self.num_dialog)
        if options:
            task_words = set(_WORD.findall(task.lower()))
            for i, text in enumerate(options[: self.num_dialog]):
                words = _WORD.findall(text.lower())
                dialog[i] = round(255 * sum(w in task_words for w in words) / len(words)) if words else 0
        if not self._lines:
            self._lines = self._line_notes(lines, own, numbers)
        if not self._map:
            b = self.block
            seen = self.seen.reshape(MAP, b, MAP, b).sum(axis=(1, 3), dtype=np.int64) * 255 // (b * b)
            self._map = seen.astype(np.uint8).tobytes()
        w = 2 * self.radius + 1
        visited = self.visited[agent.y : agent.y + w, agent.x : agent.x + w].tobytes()
        return {"note_slots": rows, "note_dialog": bytes(dialog), "note_lines": self._lines, "note_task": hot,
                "note_visited": visited, "note_map": self._map}  # fmt: skip
