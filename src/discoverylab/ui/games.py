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
its gold cannot replay it as a fresh 1.0); a game open while another game of its instance ended
is marked `gold_seen` that log when it ends, and listed the same way. In study
mode the server assigns each game a fresh instance of the sealed test split; players choose none,
and its page never shows the game's outcome, scores or gold: it ends with a receipt (`ui.sealed`).
Game ids are random and unguessable: a game is driven only by whoever created it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, model_validator

from discoverylab.bench.records import dumps
from discoverylab.env import VIEW_TILES, DiscoveryWorldEnv
from discoverylab.instances import SEALED_SPLIT, Instance
from discoverylab.render.renderer import view_png
from discoverylab.scoring.knowledge import Judge, grade_knowledge
from discoverylab.ui import sealed
from discoverylab.ui.answers import grade as sheet_grade
from discoverylab.ui.commands import candidates
from discoverylab.ui.logfiles import last_entry
from discoverylab.world.action_specs import ACTION_SPECS

HUMAN_AGENT = "human"
MAX_SEED = 2**31 - 1
MAX_REPORT_CHARS = 20_000


GROUND = re.compile(r"^(grass|path|floor|wall|sand|soil|water|road|fence|sand path)$")  # dirt is carried (dug up, a Pick and Place target): listed
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


class LogWriteFailed(UIError):
    status = 503


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


def utc_now() -> str:
    """Wall-clock time for human logs (the study's time column); agents' logs carry none."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def resume_token(game_id: str) -> str:
    """What the log keeps of the game id: enough to find the log again, not to drive the game."""
    return hashlib.sha256(game_id.encode()).hexdigest()[:32]


@dataclass
class Game:
    """One human's game: the env, its log file and what has been handed in."""

    id: str
    env: DiscoveryWorldEnv
    instance: Instance
    log_path: Path
    max_log_bytes: int
    info: dict[str, Any]
    client: str = "?"
    participant: str | None = None
    started: float = field(default_factory=time.time)  # wall clock, seconds (session time)
    steps: int = 0
    terminated: bool = False
    truncated: bool = False
    action_success: bool = True  # the last action's result (not the task's)
    knowledge: dict[str, Any] | None = None
    views_at: set[int] = field(default_factory=set)  # steps at which the player looked at the scorecard
    replay_of: str | None = None  # the log of an earlier game on this instance
    gold_seen: str | None = None  # the log of a game of this instance that ended (gold shown) while this one was open
    peers: Callable[[], list[tuple[str, Path]]] = field(default=lambda: [])  # (name, path) of this instance's logs
    seen: dict[int, str] = field(default_factory=dict)  # every object the observations named (not ground)
    feed: dict[int, dict[str, Any]] = field(default_factory=dict)  # every DiscoveryFeed post shown so far
    history: list[dict[str, Any]] = field(default_factory=list)  # step, action, message: the readings
    sheet: dict[str, Any] | None = None  # the graded answer sheet, once the game has ended
    last_used: float = field(default_factory=time.monotonic)
    broken: bool = False  # a log line failed to write: the manager rebuilds the game from its log
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.note(None)

    def note(self, action: Mapping[str, Any] | None) -> None:
        """Remember what the latest observation showed: objects (to name them later, out of
        range too), feed posts (the feed box shows only recent ones) and the message."""
        obs = self.info["observation"]
        for uuid, name, _ in candidates(obs):
            if not GROUND.match(name):
                self.seen[uuid] = name
        feed = obs.get("discoveryFeed") or {}
        for post in [*(feed.get("posts") or []), *(feed.get("scientific_articles") or [])]:
            if isinstance(post, dict) and isinstance(post.get("postID"), int):
                self.feed.setdefault(post["postID"], post)
        message = str(obs.get("lastActionMessage", ""))
        extended = str(obs.get("extended_action_message") or "")
        if extended and extended != message:
            message += "\n" + extended
        self.history.append({"step": self.steps, "action": action, "label": self.label(action), "message": message,
                             "success": self.action_success})  # fmt: skip

    def label(self, action: Mapping[str, Any] | None) -> str:
        """An action as a person reads it: 'USE spectrometer [3525] on sample [17068]'."""
        if action is None:
            return "(start)"
        if "chosen_dialog_option_int" in action:
            return f"choose dialog option {action['chosen_dialog_option_int']}"
        parts = [str(action.get("action"))]
        for key in ("arg1", "arg2"):
            value = action.get(key)
            if value is None:
                continue
            name = self.seen.get(value) if isinstance(value, int) and not isinstance(value, bool) else None
            parts.append(f"{name} [{value}]" if name else str(value))
        return " ".join(parts)

    @property
    def finished(self) -> bool:
        """The game has ended (report handed in, or closed): no more actions or reports."""
        return self.knowledge is not None

    @property
    def over(self) -> bool:
        """The episode has ended (task done or failed, or the step limit): only the report is left."""
        return self.terminated or self.truncated or self.finished

    @property
    def scorecard_views(self) -> int:
        """At how many steps the player looked at the (progress-only) scorecard: refreshes at
        the same step count once."""
        return len(self.views_at)

    @property
    def seed(self) -> int | None:
        """The seed of a public instance; None for a sealed one (never shown or logged)."""
        return None if self.instance.sealed else self.instance.seed

    def outcome(self) -> str | None:
        """'success' or 'failure' once the episode has ended (the task's result, never the last
        action's), else None. Read from the full card, for the log: a sealed game's page shows
        "ended" instead (`sealed.state`), whatever the env's agent-facing card hides."""
        if not self.over:
            return None
        return "success" if self.env.scorecard(reveal=True)["completedSuccessfully"] else "failure"

    def elapsed(self) -> float:
        return round(max(0.0, time.time() - self.started), 3)

    def _append(self, line: Mapping[str, Any]) -> None:
        """Append one line durably. If that fails (disk full, folder gone) the torn line is cut
        off and the game is marked broken: what was played since the log's last line is not
        kept, so the next request gets the game as its log has it, never one the log lacks."""
        size = self.log_path.stat().st_size if self.log_path.exists() else 0
        try:
            with self.log_path.open("a", encoding="utf-8") as fh:
                fh.write(dumps({**line, "time": utc_now(), "elapsed_s": self.elapsed()}) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            self.broken = True
            with contextlib.suppress(OSError):
                os.truncate(self.log_path, size)
            raise LogWriteFailed(f"The server could not write this game's log ({exc.strerror or exc}); "
                                 "that action was not taken. Try again, or tell the organiser.") from None

    def step(self, request: StepRequest) -> None:
        if self.finished:
            raise Conflict("This game is over (its knowledge report was handed in, or it was closed); start a new game.")
        if self.terminated or self.truncated:
            raise Conflict("The episode has ended; hand in your knowledge report or start a new game.")
        if self.log_path.stat().st_size >= self.max_log_bytes:
            raise TooLarge(f"This game's log reached the server's limit of {self.max_log_bytes / 1e6:g} MB (--max-log-mb): "
                           f"no more moves. Your {self.steps} steps are kept: hand in your knowledge report (k) to end the game.")
        action = request.to_action()
        _, reward, terminated, truncated, info = self.env.step(action)
        self.apply(info, terminated, truncated, action)
        self._append({"type": "step", "step": self.steps, "action": action, "reward": reward,
                      "observation": info["observation"], "terminated": terminated, "truncated": truncated})  # fmt: skip
        if self.over:  # the outcome is on record even if no report ever comes
            self._end("ok", {"report": None, "graded": False, "score": None, "verdicts": [], "pending": True,
                             "scorecard_views": self.scorecard_views}, final=False)  # fmt: skip

    def apply(self, info: dict[str, Any], terminated: bool, truncated: bool, action: Mapping[str, Any]) -> None:
        """Take one step's result (played now, or re-played from the log on resume)."""
        self.steps += 1
        self.terminated, self.truncated, self.info = bool(terminated), bool(truncated), info
        self.action_success = bool(info.get("success", True))
        self.note(action)

    def finish(self, report: str, judge: Judge | None, answers: dict[str, Any] | None = None) -> dict[str, Any]:
        """Hand in the knowledge report (and the answer sheet, if the task has one): it ends the
        game (failed unless the task was completed); the report is graded by `judge` if there is
        one, else stored ungraded; the sheet is graded exactly."""
        if self.finished:
            raise Conflict("The knowledge report of this game was already handed in.")
        self.sheet = sheet_grade(self.env, answers or {})
        card = self.env.scorecard(reveal=True)
        knowledge: dict[str, Any] = {"report": report, "graded": False, "score": None, "verdicts": [],
                                     "scorecard_views": self.scorecard_views}  # fmt: skip
        if judge is not None:
            try:
                grade = grade_knowledge(card, report, judge)
                knowledge.update(graded=grade.judged, score=grade.score, verdicts=grade.verdicts)
            except Exception as exc:  # a flaky judge must not lose the player's report
                knowledge["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        self._end("ok", knowledge)
        return knowledge

    def abandon(self) -> bool:
        """End a game closed without a report: failed (unless the episode already ended) with
        knowledge 0. A game closed before its first action was never played: its log is
        removed (it showed nothing but the start). Returns whether the log was kept."""
        if self.finished:
            return True
        if self.steps == 0:
            self.log_path.unlink(missing_ok=True)
            return False
        status = "ok" if self.over else "abandoned"
        self.sheet = sheet_grade(self.env, {})  # no sheet handed in: 0, as for agents
        self._end(status, {"report": "", "graded": False, "score": 0.0, "verdicts": [], "no_report": True,
                           "abandoned": status == "abandoned", "scorecard_views": self.scorecard_views})  # fmt: skip
        return True

    def _check_gold_seen(self) -> None:
        """Mark the game if another game of its instance has ended (its page and the replay page
        show that game's gold) while this one was open: started first, it is no replay, yet its
        player could have read the answer in the other tab (issue #20)."""
        if self.replay_of is not None or self.gold_seen is not None:
            return
        for name, path in self.peers():
            if path == self.log_path:
                continue
            end = last_entry(path, "end", self.max_log_bytes * 2)
            knowledge = (end or {}).get("knowledge")
            if end is not None and not (isinstance(knowledge, dict) and knowledge.get("pending")):
                self.gold_seen = name
                return

    def _end(self, status: str, knowledge: dict[str, Any], final: bool = True) -> None:
        self._check_gold_seen()
        card = self.env.scorecard(reveal=True)
        record = {"task": self.env.scenario_cls.task_id, "difficulty": self.env.difficulty, "seed": self.seed,
                  "instance": self.instance.public(), "agent": HUMAN_AGENT, "participant": self.participant,
                  "status": status, "steps": self.steps, "completed": card["completed"],
                  "success": bool(card["completedSuccessfully"]) and status == "ok",
                  "procedure_score": card["scoreNormalized"], "replay_of": self.replay_of, "gold_seen": self.gold_seen,
                  "session_seconds": self.elapsed(), "scorecard": card, "error": None,
                  **(self.sheet or {})}  # fmt: skip
        self._append({"type": "end", "scorecard": card, "record": record, "knowledge": knowledge})
        if final:
            self.knowledge = knowledge

    def scorecard(self) -> dict[str, Any]:
        """The full scorecard once the game has ended; before that task progress only (one view
        per step is recorded, in the log too, so a resumed game keeps its count). A sealed
        game's, ever: task progress without its success (`ui.sealed`)."""
        card: dict[str, Any] = self.env.scorecard(reveal=True)
        if self.finished and not self.instance.sealed:
            return card
        if not self.finished and self.steps not in self.views_at:
            self.views_at.add(self.steps)
            self._append({"type": "scorecard_view", "step": self.steps})
        return sealed.progress(card) if self.instance.sealed else public_scorecard(card)  # sealed: never its success

    def view_png(self, grid: bool) -> bytes:
        scenario = self.env.scenario
        assert scenario is not None
        return view_png(scenario.world, scenario.player, grid=grid)

    def state(self) -> dict[str, Any]:
        """What the page shows: the observation, the game's status and where known objects are
        (a sealed game's without its outcome or grades: `sealed.state`)."""
        obs = self.info["observation"]
        outcome = self.outcome()
        out: dict[str, Any] = {
            "id": self.id,
            "task": self.env.scenario_cls.task_id,
            "difficulty": self.env.difficulty,
            "seed": self.seed,
            "instance": self.instance.public(),
            "participant": self.participant,
            "replay_of": self.replay_of,
            "gold_seen": self.gold_seen,
            "step": self.steps,
            "max_steps": self.env._limit,
            "terminated": self.terminated,
            "truncated": self.truncated,
            "finished": self.finished,
            "outcome": outcome,
            "success": None if outcome is None else outcome == "success",
            "action_success": self.action_success,
            "knowledge": self.knowledge,
            "answers": self.sheet if self.finished else None,
            "elapsed_s": self.elapsed(),
            "log": self.log_path.name,
            "entry": self.history[-1],
            "seen": {str(k): v for k, v in sorted(self.seen.items())},
            "feed": [self.feed[k] for k in sorted(self.feed)],
            "observation": obs,
            "positions": self._positions(obs),
        }
        return sealed.state(out, self.sheet) if self.instance.sealed else out

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
