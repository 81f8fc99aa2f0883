"""Human games behind the browser UI: one env per game, logged like `discoverylab run`.

Each game writes `<logs>/<task>-<difficulty>-<instance>-human-<id>.jsonl` (instance `s<seed>`
for a public seed, `test<index>` for a sealed one): a `start` line, one `step` line per action
(appended, flushed and fsync'd before the step is answered, so a crashed game loses nothing
already played) and an `end` line with the scorecard, the record and the knowledge when the game
ends: the player hands in the knowledge report (failed unless the task was completed), or closes
or leaves it (abandoned: failed, knowledge 0). Every started game is thus recorded; closing
frees the server's slot and never erases the record.

Side channels (issue #20): until the game has ended the scorecard is task progress only (as the
env's `info` shows it), never procedural items or gold. A game on an instance the logs folder
already holds a log of (any agent's: the replay page shows a finished log's gold) is marked
`replay_of` that log, and the leaderboard lists it apart (a player who ended a game early to read
its gold cannot replay it as a fresh 1.0). In study
mode the server assigns each game a fresh instance of the sealed test split; players choose none.
Game ids are random and unguessable: a game is driven only by whoever created it.
"""

from __future__ import annotations

import json
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
from discoverylab.instances import SEALED_SPLIT, Instance, InstanceError, from_seed, make_instance
from discoverylab.render.renderer import view_png
from discoverylab.scoring.knowledge import Judge, grade_knowledge
from discoverylab.world.action_specs import ACTION_SPECS

HUMAN_AGENT = "human"
MAX_SEED = 2**31 - 1
MAX_REPORT_CHARS = 20_000


PROGRESS_KEYS = ("taskName", "taskDescription", "completed", "completedSuccessfully")


def public_scorecard(card: Mapping[str, Any]) -> dict[str, Any]:
    """The scorecard a player may see before the game has ended: task progress only, as the
    env's `info` shows it. Procedural items name the key instrument or the picked object, their
    scores tell which action was right, and the gold names the answer: all wait for the end."""
    return {k: card[k] for k in PROGRESS_KEYS if k in card}


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
    instance: Instance
    log_path: Path
    max_log_bytes: int
    info: dict[str, Any]
    steps: int = 0
    terminated: bool = False
    truncated: bool = False
    knowledge: dict[str, Any] | None = None
    scorecard_views: int = 0  # peeks at the scorecard before the report, stored with the report
    replay_of: str | None = None  # the log of an earlier human game on this instance
    last_used: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def finished(self) -> bool:
        """The game has ended (report handed in, or abandoned): no more actions."""
        return self.knowledge is not None

    @property
    def seed(self) -> int | None:
        """The seed of a public instance; None for a sealed one (never shown or logged)."""
        return None if self.instance.sealed else self.instance.seed

    def _append(self, line: Mapping[str, Any]) -> None:
        with self.log_path.open("a", encoding="utf-8") as fh:
            fh.write(dumps(line) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def step(self, request: StepRequest) -> None:
        if self.finished:
            raise Conflict("This game is over (its knowledge report was handed in, or it was closed); start a new game.")
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
        """Hand in the knowledge report: it ends the game (failed unless the task was completed);
        graded by `judge` if there is one, else stored ungraded."""
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
        self._end(card, "ok", knowledge)
        return knowledge

    def abandon(self) -> None:
        """End a game left without a report (closed by the player, or idle too long): recorded
        as failed, with no knowledge (0)."""
        if self.finished:
            return
        knowledge = {"report": "", "graded": False, "score": 0.0, "verdicts": [], "abandoned": True,
                     "scorecard_views": self.scorecard_views}  # fmt: skip
        self._end(self.env.scorecard(reveal=True), "abandoned", knowledge)

    def _end(self, card: dict[str, Any], status: str, knowledge: dict[str, Any]) -> None:
        record = {"task": self.env.scenario_cls.task_id, "difficulty": self.env.difficulty, "seed": self.seed,
                  "instance": self.instance.public(), "agent": HUMAN_AGENT, "status": status, "steps": self.steps,
                  "completed": card["completed"], "success": card["completedSuccessfully"] and status == "ok",
                  "procedure_score": card["scoreNormalized"], "replay_of": self.replay_of,
                  "scorecard": card, "error": None}  # fmt: skip
        self._append({"type": "end", "scorecard": card, "record": record, "knowledge": knowledge})
        self.knowledge = knowledge

    def scorecard(self) -> dict[str, Any]:
        """The full scorecard once the game has ended; before that task progress only (counted)."""
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
            "instance": self.instance.public(),
            "replay_of": self.replay_of,
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
    """All live games of a server, with the limits that keep one server healthy.

    `study_key`: study mode; every game gets the next unplayed instance of the sealed test
    split for its task and difficulty (the key derives its seed; players choose none)."""

    def __init__(
        self,
        logs: Path,
        max_games: int = 32,
        max_log_bytes: int = 20_000_000,
        idle_seconds: float = 3600.0,
        judge_factory: Callable[[], Judge | None] | None = None,
        study_key: bytes | None = None,
    ) -> None:
        self.logs = logs
        self.max_games = max_games
        self.max_log_bytes = max_log_bytes
        self.idle_seconds = idle_seconds
        self.judge_factory = judge_factory or (lambda: None)
        self.study_key = study_key
        self._games: dict[str, Game] = {}
        self._lock = threading.Lock()
        self._played: dict[tuple[str, str, str, int], str] | None = None  # instance -> first human log

    @property
    def study(self) -> bool:
        return self.study_key is not None

    def __len__(self) -> int:
        return len(self._games)

    def live_logs(self) -> frozenset[str]:
        """Log names of the games in progress (the leaderboard waits for their end)."""
        with self._lock:
            return frozenset(g.log_path.name for g in self._games.values() if not g.finished)

    def create(self, task: str, difficulty: str, seed: int | None = None) -> Game:
        """A new game on public seed `seed`, or (study mode, where `seed` must be None) on the
        next unplayed sealed instance."""
        if self.study and seed is not None:
            raise UIError("This server runs a study: it assigns each game's instance, so seeds cannot be chosen.")
        if not self.study and (seed is None or not 0 <= seed <= MAX_SEED):
            raise UIError(f"seed must be an integer in 0..{MAX_SEED}, not {seed}.")
        try:
            env = DiscoveryWorldEnv(task, difficulty)
        except ValueError as exc:
            raise UIError(str(exc)) from None
        task, difficulty = env.scenario_cls.task_id, env.difficulty
        with self._lock:  # a reset takes ~10-40 ms: holding the lock keeps the limit exact
            self._evict_idle()
            if len(self._games) >= self.max_games:
                raise TooMany(f"This server already runs {self.max_games} games (its limit); try again later.")
            played = self._played_instances()
            if self.study:
                index = 1 + max((k[3] for k in played if k[:3] == (task, difficulty, SEALED_SPLIT)), default=-1)
                try:
                    instance = make_instance(task, difficulty, SEALED_SPLIT, index, self.study_key)
                except InstanceError as exc:
                    raise UIError(str(exc)) from None
            else:
                assert seed is not None
                instance = from_seed(task, difficulty, seed)
            where = (task, difficulty, SEALED_SPLIT, instance.index) if instance.sealed else (task, difficulty, "seed", instance.seed)
            replay_of = played.get(where)
            game_id = secrets.token_urlsafe(12)
            _, info = env.reset(options={"instance": instance})
            label = instance.label.replace("#", "")
            name = f"{task}-{difficulty}-{label}-{HUMAN_AGENT}-{secrets.token_hex(4)}.jsonl"
            self.logs.mkdir(parents=True, exist_ok=True)
            game = Game(game_id, env, instance, self.logs / name, self.max_log_bytes, info, replay_of=replay_of)
            start = {"type": "start", "task": task, "difficulty": difficulty, "seed": game.seed,
                     "instance": instance.public(), "agent": HUMAN_AGENT, "replay_of": replay_of,
                     "observation": info["observation"]}  # fmt: skip
            if game.seed is None:
                del start["seed"]
            game._append(start)
            played.setdefault(where, name)
            self._games[game_id] = game
        return game

    def _played_instances(self) -> dict[tuple[str, str, str, int], str]:
        """(task, difficulty, "seed", seed) or (task, difficulty, "test", index) -> the first log
        on that world in the logs folder, any agent's (the replay page shows a finished log's
        gold), read once from the start lines in name order, then kept up to date by `create`."""
        if self._played is None:
            self._played = {}
            root = self.logs.resolve()
            for path in sorted(self.logs.rglob("*.jsonl")):
                if path.name == "results.jsonl" or not path.resolve().is_relative_to(root):
                    continue
                start = _start_line(path)
                key = _world_key(start) if start is not None and start.get("type") == "start" else None
                if key is not None:
                    self._played.setdefault(key, path.relative_to(self.logs).as_posix())
        return self._played

    def get(self, game_id: str) -> Game:
        game = self._games.get(game_id)
        if game is None:
            raise NotFound(f"No game with id {game_id[:40]!r} (unknown or expired); start a new game.")
        game.last_used = time.monotonic()
        return game

    def close(self, game_id: str) -> None:
        """Free the game's slot; a game without its report is recorded as abandoned (failed)."""
        with self._lock:
            game = self._games.pop(game_id, None)
        if game is None:
            raise NotFound(f"No game with id {game_id[:40]!r}.")
        with game.lock:
            game.abandon()

    def judge(self) -> Judge | None:
        return self.judge_factory()

    def _evict_idle(self) -> None:
        now = time.monotonic()
        for gid, game in list(self._games.items()):
            if now - game.last_used > self.idle_seconds:
                del self._games[gid]
                with game.lock:
                    game.abandon()


def _world_key(start: Mapping[str, Any]) -> tuple[str, str, str, int] | None:
    """Which world a log's start line names: a public seed, or a sealed test index."""
    task, difficulty, seed, inst = start.get("task"), start.get("difficulty"), start.get("seed"), start.get("instance")
    if not isinstance(task, str) or not isinstance(difficulty, str):
        return None
    if isinstance(seed, int) and not isinstance(seed, bool):
        return (task, difficulty, "seed", seed)
    if isinstance(inst, dict) and inst.get("split") == SEALED_SPLIT and isinstance(inst.get("index"), int):
        return (task, difficulty, SEALED_SPLIT, int(inst["index"]))
    return None


def _start_line(path: Path) -> dict[str, Any] | None:
    """A log's first line as a dict, or None when it is not readable JSON."""
    try:
        with path.open("rb") as fh:
            line = fh.readline(4_000_000)
        entry = json.loads(line)
    except (OSError, ValueError):
        return None
    return entry if isinstance(entry, dict) else None
