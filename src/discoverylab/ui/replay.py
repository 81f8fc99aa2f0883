"""Replay any run log (agent, oracle or human) by re-simulating its actions.

A log holds observations, not pictures or world states; the env is deterministic, so replaying
the logged actions from the logged task/difficulty/seed rebuilds every state. Each replayed
observation is checked against the logged one: `diverged_at` names the first step where they
differ (a log from another version of the simulator), instead of silently showing wrong frames.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.render.renderer import view_array, view_png
from discoverylab.ui.commands import candidates


class LogError(ValueError):
    """The file is not a readable run log."""


@dataclass
class RunLog:
    """A parsed run log: the start line, the step lines and the end line if there is one."""

    task: str
    difficulty: str
    seed: int
    agent: str
    steps: list[dict[str, Any]]
    end: dict[str, Any] | None = None

    @property
    def ended(self) -> bool:
        """An `end` line that is not a human's pending one: until the report (and answer sheet)
        is in, the game is still being played, so its replay must not show the gold."""
        knowledge = (self.end or {}).get("knowledge")
        return self.end is not None and not (isinstance(knowledge, dict) and knowledge.get("pending"))


def parse_log(text: str, name: str = "log") -> RunLog:
    """Parse JSONL text in the `discoverylab run` format (a torn last line is ignored)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    entries: list[dict[str, Any]] = []
    for i, line in enumerate(lines):
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            if i == len(lines) - 1 and entries:  # killed mid-write: keep what was played
                break
            raise LogError(f"{name}: line {i + 1} is not JSON.") from None
        if not isinstance(entry, dict):
            raise LogError(f"{name}: line {i + 1} is not a JSON object.")
        entries.append(entry)
    if not entries or entries[0].get("type") != "start":
        raise LogError(f"{name}: a run log starts with a 'start' line (task, difficulty, seed, agent).")
    start = entries[0]
    sealed = start.get("split") == "test" or (isinstance(start.get("instance"), dict)
                                             and start["instance"].get("split") == "test")
    if start.get("seed") is None and sealed:
        raise LogError(f"{name}: a sealed test episode (no seed in its log); the key holder replays it with "
                       "`discoverylab bench --split test --eval-key-file KEY`.")
    try:
        task, difficulty, seed = str(start["task"]), str(start["difficulty"]), int(start["seed"])
    except (KeyError, TypeError, ValueError, OverflowError):
        raise LogError(f"{name}: the start line needs task, difficulty and an integer seed.") from None
    if not 0 <= seed < 2**32:  # the env refuses it at reset: a clear 422, not a 500 from deep inside
        raise LogError(f"{name}: the start line's seed must be in 0..{2**32 - 1}, not {seed}.")
    steps = [e for e in entries[1:] if e.get("type") == "step" and "action" in e]
    end = next((e for e in reversed(entries[1:]) if e.get("type") == "end"), None)  # a report follows a pending end
    return RunLog(task, difficulty, seed, str(start.get("agent", "?")), steps, end)


def load_log(path: Path, max_bytes: int = 50_000_000) -> RunLog:
    if path.stat().st_size > max_bytes:
        raise LogError(f"{path.name} is larger than the limit of {max_bytes} bytes.")
    return parse_log(path.read_text(encoding="utf-8", errors="replace"), path.name)


def _label(action: Any, seen: dict[int, str]) -> str:
    """'USE spectrometer [3525] on sample [17068]', from the names the observations gave."""
    if not isinstance(action, dict):
        return str(action)
    if "chosen_dialog_option_int" in action:
        return f"choose dialog option {action['chosen_dialog_option_int']}"
    parts = [str(action.get("action"))]
    for key in ("arg1", "arg2"):
        value = action.get(key)
        if value is not None:
            name = seen.get(value) if isinstance(value, int) and not isinstance(value, bool) else None
            parts.append(f"{name} [{value}]" if name else str(value))
    return " ".join(parts)


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=str))


@dataclass
class Replay:
    """A log's timeline (action, message, score per step) and its frames, rendered on demand."""

    log: RunLog
    timeline: list[dict[str, Any]] = field(default_factory=list)
    diverged_at: int | None = None
    _cursor: DiscoveryWorldEnv | None = None
    _cursor_step: int = -1
    _frames: OrderedDict[tuple[int, bool], bytes] = field(default_factory=OrderedDict)
    _lock: Any = field(default_factory=threading.RLock)  # the cursor is shared by requests

    @classmethod
    def build(cls, log: RunLog) -> Replay:
        replay = cls(log)
        seen: dict[int, str] = {}
        for step, info in replay._simulate():
            obs, card = info["observation"], info["scorecard"]
            entry = log.steps[step - 1] if step else None
            label = _label(entry["action"], seen) if entry else "(start)"
            seen.update((uuid, name) for uuid, name, _ in candidates(obs))
            if entry is not None and replay.diverged_at is None and _plain(obs) != _plain(entry.get("observation")):
                replay.diverged_at = step
            replay.timeline.append({
                "step": step,
                "action": entry["action"] if entry else None,
                "label": label,
                "message": obs.get("lastActionMessage", ""),
                "score": card["scoreNormalized"],
                "completed": card["completed"],
                "success": card["completedSuccessfully"],
            })  # fmt: skip
        return replay

    def _env(self) -> DiscoveryWorldEnv:
        try:
            return DiscoveryWorldEnv(self.log.task, self.log.difficulty, max_steps=10**9)
        except ValueError as exc:
            raise LogError(str(exc)) from None

    def _simulate(self) -> Iterator[tuple[int, dict[str, Any]]]:
        env = self._env()
        _, info = env.reset(seed=self.log.seed)
        yield 0, {**info, "scorecard": env.scorecard(reveal=True)}  # a replay shows the whole card
        for i, entry in enumerate(self.log.steps, start=1):
            _, _, _, _, info = env.step(entry["action"])
            yield i, {**info, "scorecard": env.scorecard(reveal=True)}

    def __len__(self) -> int:
        """Frames: the start plus one per step."""
        return len(self.log.steps) + 1

    def scorecard(self, step: int) -> dict[str, Any]:
        with self._lock:
            env = self._seek(step)
            assert env.scenario is not None
            return env.scenario.scorecard.to_dict()

    def _seek(self, step: int) -> DiscoveryWorldEnv:
        """The env after `step` actions: advances the cursor, or replays from the start to go back."""
        if not 0 <= step < len(self):
            raise IndexError(f"step must be in 0..{len(self) - 1}, not {step}.")
        if self._cursor is None or step < self._cursor_step:
            self._cursor = self._env()
            self._cursor.reset(seed=self.log.seed)
            self._cursor_step = 0
        while self._cursor_step < step:
            self._cursor.step(self.log.steps[self._cursor_step]["action"])
            self._cursor_step += 1
        return self._cursor

    def frame_png(self, step: int, grid: bool = False) -> bytes:
        key = (step, grid)
        with self._lock:
            if key not in self._frames:
                env = self._seek(step)
                assert env.scenario is not None
                self._frames[key] = view_png(env.scenario.world, env.scenario.player, grid=grid)
                while len(self._frames) > 256:
                    self._frames.popitem(last=False)
            self._frames.move_to_end(key)
            return self._frames[key]

    def frames(self, grid: bool = False) -> Iterator[np.ndarray]:
        """Every frame as an RGB array, in order (one pass: for videos)."""
        env = self._env()
        env.reset(seed=self.log.seed)
        for i in range(len(self)):
            if i:
                env.step(self.log.steps[i - 1]["action"])
            assert env.scenario is not None
            yield view_array(env.scenario.world, env.scenario.player, grid=grid)

    def summary(self) -> dict[str, Any]:
        end = self.log.end or {}
        knowledge = end.get("knowledge")
        record: dict[str, Any] = end["record"] if isinstance(end.get("record"), dict) else {}
        if not isinstance(knowledge, dict) and isinstance(record.get("knowledge"), str):  # an agent's run log
            score = record.get("knowledge_score")
            knowledge = {"report": record["knowledge"], "graded": isinstance(score, (int, float)), "score": score}
        return {"task": self.log.task, "difficulty": self.log.difficulty, "seed": self.log.seed,
                "agent": self.log.agent, "frames": len(self), "ended": self.log.ended,
                "diverged_at": self.diverged_at, "knowledge": knowledge, "timeline": self.timeline}  # fmt: skip
