"""Human games behind the browser UI: one env per game, logged like `discoverylab run`.

Each game writes `<logs>/<task>-<difficulty>-s<seed>-human-<id>.jsonl`: a `start` line, one
`step` line per action (appended, flushed and fsync'd before the step is answered, so a crashed
or abandoned game loses nothing already played) and, when the player hands in the knowledge
report, an `end` line with the scorecard, the record and the (possibly ungraded) knowledge.
Game ids are random and unguessable: a game is driven only by whoever created it.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, model_validator

from discoverylab.bench.records import dumps
from discoverylab.env import VIEW_TILES, DiscoveryWorldEnv
from discoverylab.render.renderer import view_png
from discoverylab.scoring.knowledge import Judge, grade_knowledge
from discoverylab.world.action_specs import ACTION_SPECS

HUMAN_AGENT = "human"
MAX_SEED = 2**31 - 1
MAX_REPORT_CHARS = 20_000


def public_scorecard(card: Mapping[str, Any]) -> dict[str, Any]:
    """The scorecard a player may see mid-game: procedural items and totals only. The knowledge
    questions, hypotheses and per-item notes name the discovery, so they stay hidden until the
    report is handed in."""
    hidden = ("criticalQuestions", "criticalHypotheses", "knowledgeQuestions")
    out = {k: v for k, v in card.items() if k not in hidden}
    out["scoreCard"] = [{k: v for k, v in item.items() if k not in ("associatedNotes", "associatedUUIDs")}
                        for item in card.get("scoreCard", [])]  # fmt: skip
    return out


class UIError(Exception):
    """A request the UI refuses; `status` is the HTTP status the server answers with."""

    status = 400


class NotFound(UIError):
    status = 404


class Conflict(UIError):
    status = 409


class TooLarge(UIError):
    status = 413


class TooMany(UIError):
    status = 429


class StepRequest(BaseModel):
    """One action from the browser: a named action with up to two arguments, or a dialog choice."""

    model_config = {"extra": "forbid"}

    action: str | None = Field(None, max_length=40)
    arg1: int | str | None = None
    arg2: int | str | None = None
    chosen_dialog_option_int: int | None = Field(None, ge=0, le=999)

    @model_validator(mode="after")
    def _check(self) -> StepRequest:
        if (self.action is None) == (self.chosen_dialog_option_int is None):
            raise ValueError("Send either 'action' (with its args) or 'chosen_dialog_option_int'.")
        if self.action is not None and self.action not in ACTION_SPECS:
            raise ValueError(f"Unknown action {self.action!r}; valid: {', '.join(ACTION_SPECS)}.")
        for arg in (self.arg1, self.arg2):
            if isinstance(arg, str) and len(arg) > 200:
                raise ValueError("Action arguments are at most 200 characters.")
            if isinstance(arg, int) and not -(2**31) <= arg < 2**31:
                raise ValueError("Integer arguments must fit in 32 bits.")
        return self

    def to_action(self) -> dict[str, Any]:
        if self.chosen_dialog_option_int is not None:
            return {"chosen_dialog_option_int": self.chosen_dialog_option_int}
        action: dict[str, Any] = {"action": self.action}
        for key in ("arg1", "arg2"):
            if getattr(self, key) is not None:
                action[key] = getattr(self, key)
        return action


@dataclass
class Game:
    """One human's game: the env, its log file and what has been handed in."""

    id: str
    env: DiscoveryWorldEnv
    seed: int
    log_path: Path
    max_log_bytes: int
    info: dict[str, Any]
    steps: int = 0
    terminated: bool = False
    truncated: bool = False
    knowledge: dict[str, Any] | None = None
    scorecard_views: int = 0  # peeks at the scorecard before the report, stored with the report
    last_used: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def finished(self) -> bool:
        """The report is in: no more actions."""
        return self.knowledge is not None

    def _append(self, line: Mapping[str, Any]) -> None:
        with self.log_path.open("a", encoding="utf-8") as fh:
            fh.write(dumps(line) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def step(self, request: StepRequest) -> None:
        if self.finished:
            raise Conflict("This game is over (its knowledge report was handed in); start a new game.")
        if self.terminated or self.truncated:
            raise Conflict("The episode has ended; hand in your knowledge report or start a new game.")
        if self.log_path.stat().st_size >= self.max_log_bytes:
            raise TooLarge(f"This game's log reached the server's limit of {self.max_log_bytes} bytes; start a new game.")
        action = request.to_action()
        _, reward, terminated, truncated, info = self.env.step(action)
        self.steps += 1
        self.terminated, self.truncated, self.info = bool(terminated), bool(truncated), info
        self._append({"type": "step", "step": self.steps, "action": action, "reward": reward,
                      "observation": info["observation"], "terminated": terminated, "truncated": truncated})  # fmt: skip

    def finish(self, report: str, judge: Judge | None) -> dict[str, Any]:
        """Hand in the knowledge report: graded by `judge` if there is one, else stored ungraded."""
        if self.finished:
            raise Conflict("The knowledge report of this game was already handed in.")
        card = self.env.scorecard(reveal=True)
        knowledge: dict[str, Any] = {"report": report, "graded": False, "score": None, "verdicts": [],
                                     "scorecard_views": self.scorecard_views}  # fmt: skip
        if judge is not None:
            try:
                grade = grade_knowledge(card, report, judge)
                knowledge.update(graded=grade.judged, score=grade.score, verdicts=grade.verdicts)
            except Exception as exc:  # a flaky judge must not lose the player's report
                knowledge["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        record = {"task": self.env.scenario_cls.task_id, "difficulty": self.env.difficulty, "seed": self.seed,
                  "agent": HUMAN_AGENT, "status": "ok", "steps": self.steps, "completed": card["completed"],
                  "success": card["completedSuccessfully"], "procedure_score": card["scoreNormalized"],
                  "scorecard": card, "error": None}  # fmt: skip
        self._append({"type": "end", "scorecard": card, "record": record, "knowledge": knowledge})
        self.knowledge = knowledge
        return knowledge

    def scorecard(self) -> dict[str, Any]:
        """The full scorecard once the report is in; before that the public part (and counted)."""
        card: dict[str, Any] = self.env.scorecard(reveal=True)
        if self.finished:
            return card
        self.scorecard_views += 1
        return public_scorecard(card)

    def view_png(self, grid: bool) -> bytes:
        scenario = self.env.scenario
        assert scenario is not None
        return view_png(scenario.world, scenario.player, grid=grid)

    def state(self) -> dict[str, Any]:
        """What the page shows: the observation, the game's status and where known objects are."""
        obs = self.info["observation"]
        return {
            "id": self.id,
            "task": self.env.scenario_cls.task_id,
            "difficulty": self.env.difficulty,
            "seed": self.seed,
            "step": self.steps,
            "max_steps": self.env._limit,
            "terminated": self.terminated,
            "truncated": self.truncated,
            "finished": self.finished,
            "success": self.info.get("success", True),
            "knowledge": self.knowledge,
            "log": self.log_path.name,
            "observation": obs,
            "positions": self._positions(obs),
        }

    def _positions(self, obs: Mapping[str, Any]) -> dict[str, list[int]]:
        """View-tile coordinates of the objects the observation names (for clicking the view)."""
        scenario = self.env.scenario
        assert scenario is not None
        uuids: set[int] = {o["uuid"] for o in obs.get("accessibleEnvironmentObjects", [])}
        for objs in (obs.get("nearbyObjects", {}).get("objects") or {}).values():
            uuids.update(o["uuid"] for o in objs)
        ax, ay = scenario.player.location()
        ox, oy = ax - VIEW_TILES[0] // 2, ay - VIEW_TILES[1] // 2
        out: dict[str, list[int]] = {}
        for uuid in sorted(uuids):
            obj = scenario.world.objects.get(uuid)
            if obj is not None:
                x, y = obj.location()
                out[str(uuid)] = [x - ox, y - oy]
        return out


class GameManager:
    """All live games of a server, with the limits that keep one server healthy."""

    def __init__(
        self,
        logs: Path,
        max_games: int = 32,
        max_log_bytes: int = 20_000_000,
        idle_seconds: float = 3600.0,
        judge_factory: Callable[[], Judge | None] | None = None,
    ) -> None:
        self.logs = logs
        self.max_games = max_games
        self.max_log_bytes = max_log_bytes
        self.idle_seconds = idle_seconds
        self.judge_factory = judge_factory or (lambda: None)
        self._games: dict[str, Game] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._games)

    def create(self, task: str, difficulty: str, seed: int) -> Game:
        if not 0 <= seed <= MAX_SEED:
            raise UIError(f"seed must be an integer in 0..{MAX_SEED}, not {seed}.")
        try:
            env = DiscoveryWorldEnv(task, difficulty)
        except ValueError as exc:
            raise UIError(str(exc)) from None
        with self._lock:  # a reset takes ~10-40 ms: holding the lock keeps the limit exact
            self._evict_idle()
            if len(self._games) >= self.max_games:
                raise TooMany(f"This server already runs {self.max_games} games (its limit); try again later.")
            game_id = secrets.token_urlsafe(12)
            _, info = env.reset(seed=seed)
            name = f"{env.scenario_cls.task_id}-{env.difficulty}-s{seed}-{HUMAN_AGENT}-{secrets.token_hex(4)}.jsonl"
            self.logs.mkdir(parents=True, exist_ok=True)
            game = Game(game_id, env, seed, self.logs / name, self.max_log_bytes, info)
            game._append({"type": "start", "task": env.scenario_cls.task_id, "difficulty": env.difficulty,
                          "seed": seed, "agent": HUMAN_AGENT, "observation": info["observation"]})  # fmt: skip
            self._games[game_id] = game
        return game

    def get(self, game_id: str) -> Game:
        game = self._games.get(game_id)
        if game is None:
            raise NotFound(f"No game with id {game_id[:40]!r} (unknown or expired); start a new game.")
        game.last_used = time.monotonic()
        return game

    def close(self, game_id: str) -> None:
        with self._lock:
            if self._games.pop(game_id, None) is None:
                raise NotFound(f"No game with id {game_id[:40]!r}.")

    def judge(self) -> Judge | None:
        return self.judge_factory()

    def _evict_idle(self) -> None:
        now = time.monotonic()
        for gid, game in list(self._games.items()):
            if now - game.last_used > self.idle_seconds:
                del self._games[gid]
