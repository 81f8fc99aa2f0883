"""The live games of one UI server: limits that cannot lock anyone out, and resume from logs.

A live game is only a cache of its log: the env is deterministic, so a game whose log is
known can be rebuilt by re-playing its actions. Hence:

- No lock-out: when the server holds `max_games` games, starting one unloads the game idle the
  longest (idle at least `grace_seconds`); a client (an IP address) holding
  `max_games_per_client` games unloads its own oldest first, so one client cannot hold every
  slot. An unloaded game is not ended: its page picks it up again.
- Resume: the page keeps the game id (in localStorage); after a closed tab, an unloaded game or
  a server restart, `get` finds the log whose start line holds `resume_token(id)` and re-plays
  it. The log keeps only a hash of the id, so reading a log never lets anyone drive the game.
- Study indices: each sealed index is claimed with an O_EXCL file in `<logs>/.claims` before its
  game starts, so two servers on one folder never hand out the same index, even in one instant.
- Retention: a game closed or unloaded before its first action leaves no log (`Game.abandon`);
  logs of games started but never played (start line only) are removed once idle
  `idle_seconds` (swept at start and every `idle_seconds / 6`).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from discoverylab.bench.records import repair_torn_tail
from discoverylab.env import DiscoveryWorldEnv
from discoverylab.instances import SEALED_SPLIT, Instance, InstanceError, from_seed, make_instance
from discoverylab.scoring.knowledge import Judge
from discoverylab.ui.games import (
    HUMAN_AGENT,
    MAX_SEED,
    Conflict,
    Game,
    LogWriteFailed,
    NotFound,
    TooMany,
    UIError,
    _world_key,
    resume_token,
)
from discoverylab.ui.logfiles import first_line, folder_stamp, log_files, young
from discoverylab.ui.sealed import is_sealed

MAX_PARTICIPANT_CHARS = 64
CLAIMS = ".claims"  # study indices handed out (hidden: no reader of the logs folder lists it)
MAX_CLAIM_TRIES = 100_000


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
        max_games_per_client: int | None = None,
        grace_seconds: float = 60.0,
        sweep: bool = True,
    ) -> None:
        self.logs = logs
        self.max_games = max_games
        self.per_client = max(1, max_games_per_client or max(1, max_games // 4))
        self.max_log_bytes = max_log_bytes
        self.idle_seconds = idle_seconds
        self.grace_seconds = grace_seconds
        self.judge_factory = judge_factory or (lambda: None)
        self.study_key = study_key
        self._games: dict[str, Game] = {}
        self._lock = threading.RLock()
        self._played: dict[tuple[str, str, str, int], str] = {}  # instance -> first log
        self._worlds: dict[tuple[str, str, str, int], list[str]] = {}  # instance -> every log
        self._tokens: dict[str, str] = {}  # resume token -> log name
        self._sealed_logs: set[str] = set()  # logs of sealed test instances (any agent's)
        self._known: set[str] = set()  # logs whose start line is in the indexes above
        self._stamp: tuple[tuple[str, int], ...] = ()  # the folders' mtimes at the last listing
        self._pending = False  # the last listing saw a log without a readable start line
        self._swept = time.monotonic()
        if sweep:  # not for `discoverylab replay LOG`, which only reads its log's folder
            self.sweep_unplayed()

    @property
    def study(self) -> bool:
        return self.study_key is not None

    def __len__(self) -> int:
        return len(self._games)

    def live_logs(self) -> frozenset[str]:
        """Log names of the games loaded now (the leaderboard waits for their report)."""
        with self._lock:
            return frozenset(g.log_path.relative_to(self.logs).as_posix() for g in self._games.values() if not g.finished)

    # ---- creating -----------------------------------------------------------------------
    def create(self, task: str, difficulty: str, seed: int | None = None, client: str = "?",
               participant: str | None = None, max_steps: int | None = None) -> Game:  # fmt: skip
        """A new game on public seed `seed`, or (study mode, where `seed` must be None) on the
        next unplayed sealed instance."""
        if self.study and seed is not None:
            raise UIError("This server runs a study: it assigns each game's instance, so seeds cannot be chosen.")
        if not self.study and (seed is None or not 0 <= seed <= MAX_SEED):
            raise UIError(f"seed must be an integer in 0..{MAX_SEED}, not {seed}.")
        if participant is not None and (not participant.strip() or len(participant) > MAX_PARTICIPANT_CHARS):
            raise UIError(f"A participant id is 1..{MAX_PARTICIPANT_CHARS} characters.")
        try:
            env = DiscoveryWorldEnv(task, difficulty, max_steps=max_steps)
        except ValueError as exc:
            raise UIError(str(exc)) from None
        task, difficulty = env.scenario_cls.task_id, env.difficulty
        with self._lock:  # a reset takes ~10-40 ms: holding the lock keeps the limits exact
            self._make_room(client)
            played = self._played_instances()
            if self.study:
                index = 1 + max((k[3] for k in played if k[:3] == (task, difficulty, SEALED_SPLIT)), default=-1)
                instance = self._sealed(task, difficulty, self._claim(task, difficulty, index))
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
            game = Game(game_id, env, instance, self.logs / name, self.max_log_bytes, info, client=client,
                        participant=participant, replay_of=replay_of, peers=self._peers(where))  # fmt: skip
            start = {"type": "start", "task": task, "difficulty": difficulty, "seed": game.seed,
                     "instance": instance.public(), "agent": HUMAN_AGENT, "participant": participant,
                     "replay_of": replay_of, "resume": resume_token(game_id), "started_unix": game.started,
                     "max_steps": env._limit,
                     "observation": info["observation"]}  # fmt: skip
            if game.seed is None:
                del start["seed"]
            game._append(start)
            self._note(name, start)
            self._games[game_id] = game
        return game

    def _claim(self, task: str, difficulty: str, first: int) -> int:
        """The first index from `first` on whose claim file (`<logs>/.claims/`) this server
        creates. O_EXCL makes the claim atomic: of two servers on one folder that pick the same
        next index in the same instant (before either's log is written), one gets it, the other
        the next. A claim is never released: an index once handed out is not handed out again."""
        folder = self.logs / CLAIMS
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for index in range(first, first + MAX_CLAIM_TRIES):
                try:
                    os.close(os.open(folder / f"{task}-{difficulty}-test{index}", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
                except FileExistsError:
                    continue
                return index
        except OSError as exc:
            raise LogWriteFailed(f"The server could not claim a test instance in {folder} ({exc.strerror or exc}); "
                                 "tell the organiser.") from None
        raise LogWriteFailed(f"{MAX_CLAIM_TRIES} test instances from #{first} on are claimed in {folder} without logs; "
                             "tell the organiser.")

    def _sealed(self, task: str, difficulty: str, index: int) -> Instance:
        try:
            return make_instance(task, difficulty, SEALED_SPLIT, index, self.study_key)
        except InstanceError as exc:
            raise UIError(str(exc)) from None

    def _make_room(self, client: str) -> None:
        """Unload games so one more fits: the client's own oldest past its cap, then the game
        idle the longest past the grace period; 429 only when every game is in active use."""
        now = time.monotonic()
        self._drop_idle(now)
        mine = sorted((g for g in self._games.values() if g.client == client), key=lambda g: g.last_used)
        while len(mine) >= self.per_client:
            self._unload(mine.pop(0))
        if len(self._games) >= self.max_games:
            oldest = min(self._games.values(), key=lambda g: g.last_used)
            if now - oldest.last_used < self.grace_seconds:
                raise TooMany(f"This server's {self.max_games} game slots are all in active use; try again in a minute.")
            self._unload(oldest)

    def _drop_idle(self, now: float) -> None:
        for game in list(self._games.values()):
            if now - game.last_used > self.idle_seconds:
                self._unload(game)
        if now - self._swept > self.idle_seconds / 6:
            self._swept = now
            self.sweep_unplayed()

    def _unload(self, game: Game) -> None:
        """Free the game's slot. A played game is not ended (its page resumes it from its log);
        one never played is closed, leaving no log (New game pressed without closing)."""
        self._games.pop(game.id, None)
        if game.steps == 0 and not game.finished:
            with game.lock:
                game.abandon()
            self._forget(game)

    # ---- finding and resuming -----------------------------------------------------------
    def get(self, game_id: str, client: str = "?") -> Game:
        """The live game, or the game rebuilt from its log (closed tab, unloaded, restarted)."""
        with self._lock:
            game = self._games.get(game_id)
            if game is not None and game.broken:  # its last write failed: rebuild it from its log
                del self._games[game_id]
                game = None
            if game is None:
                game = self._resume(game_id, client)
            game.last_used = time.monotonic()
            return game

    def sealed_logs(self) -> frozenset[str]:
        """Names (relative to the logs folder) of the logs of sealed test instances, any agent's."""
        with self._lock:
            self._refresh()
            return frozenset(self._sealed_logs)

    def logs_of(self, game_ids: list[str]) -> dict[str, Path | None]:
        """The log of each game id (live or not; None for an unknown id): what an export reads."""
        with self._lock:
            tokens = self._refresh()[1]
            names = {gid: tokens.get(resume_token(gid)) if len(gid) <= 64 else None for gid in game_ids}
        return {gid: None if name is None else self.logs / name for gid, name in names.items()}

    def _resume(self, game_id: str, client: str) -> Game:
        name = self._refresh()[1].get(resume_token(game_id)) if len(game_id) <= 64 else None
        if name is None:
            raise NotFound(f"No game with id {game_id[:40]!r} (unknown, or closed before its first action); start a new game.")
        path = self.logs / name
        with contextlib.suppress(OSError):  # a crash mid-line: the next step must start a fresh line
            repair_torn_tail(path)
        entries = _read_entries(path, self.max_log_bytes)
        start = entries[0] if entries else {}
        if start.get("resume") != resume_token(game_id):
            raise NotFound(f"No game with id {game_id[:40]!r}; start a new game.")
        task, difficulty = str(start.get("task")), str(start.get("difficulty"))
        key = _world_key(start)
        if key is None:
            raise NotFound(f"The log of game {game_id[:40]!r} names no instance; start a new game.")
        if key[2] == SEALED_SPLIT:  # 409, not 404: the page keeps the game for the right server
            if not self.study:
                raise Conflict("That game is on a sealed instance; resume it on the study server.")
            instance = self._sealed(task, difficulty, key[3])
            if instance.public().get("commitment") != (start.get("instance") or {}).get("commitment"):
                raise Conflict("That game was started with another evaluation key: this server would rebuild "
                               "another world. Restart the study server with the key it was started with.")
        else:
            instance = from_seed(task, difficulty, key[3])
        limit = start.get("max_steps")
        try:
            env = DiscoveryWorldEnv(task, difficulty, max_steps=limit if isinstance(limit, int) and limit > 0 else None)
        except ValueError as exc:
            raise NotFound(str(exc)) from None
        _, info = env.reset(options={"instance": instance})
        game = Game(game_id, env, instance, path, self.max_log_bytes, info, client=client,
                    participant=start.get("participant"), replay_of=start.get("replay_of"),
                    started=float(start.get("started_unix") or time.time()), peers=self._peers(key))  # fmt: skip
        for entry in entries[1:]:
            kind = entry.get("type")
            if kind == "step" and not game.over:
                _, _, terminated, truncated, info = env.step(entry["action"])
                game.apply(info, terminated, truncated, entry["action"])
            elif kind == "scorecard_view" and isinstance(entry.get("step"), int):
                game.views_at.add(entry["step"])
            elif kind == "end":
                record: dict[str, Any] = entry["record"] if isinstance(entry.get("record"), dict) else {}
                game.gold_seen = record.get("gold_seen") if isinstance(record.get("gold_seen"), str) else game.gold_seen
                if not isinstance(entry.get("knowledge"), dict) or entry["knowledge"].get("pending"):
                    continue
                game.knowledge = entry["knowledge"]
                game.sheet = {k: record[k] for k in ("answers", "answers_score", "answers_grade") if k in record} or None
        self._make_room(client)
        self._games[game_id] = game
        return game

    def _played_instances(self) -> dict[tuple[str, str, str, int], str]:
        """(task, difficulty, "seed", seed) or (task, difficulty, "test", index) -> the first log
        on that world in the logs folder, any agent's (the replay page shows a finished log's
        gold); `_worlds` holds every log of each world. Up to date with the folder (`_refresh`)."""
        return self._refresh()[0]

    def _refresh(self) -> tuple[dict[tuple[str, str, str, int], str], dict[str, str]]:
        """The indexes (worlds, resume tokens), brought up to date with the logs folder: other
        servers and runners write there too, so each new game or resume lists it again (a walk;
        only a log new since the last look has its first line read) and forgets logs gone from it.
        A young file without a start line yet is read again next time. While no folder's
        mtime has changed (and none changed within the last 2 s, for coarse clocks), the listing
        is skipped: an unknown game id costs a few directory stats, not a walk."""
        stamp = folder_stamp(self.logs)
        newest = max((m for _, m in stamp), default=0) / 1e9
        if stamp == self._stamp and not self._pending and time.time() - newest > 2.0:
            return self._played, self._tokens
        self._stamp, self._pending = stamp, False
        found = {path.relative_to(self.logs).as_posix(): path for path in log_files(self.logs)}
        for name in self._known - found.keys():
            self._forget_log(name)
        for name in sorted(found.keys() - self._known):
            start = first_line(found[name])
            if start is not None:
                self._note(name, start)
            elif young(found[name]):  # its start line may be on its way
                self._pending = True
            else:  # not a log: never read again
                self._known.add(name)
        return self._played, self._tokens

    def _note(self, name: str, start: dict[str, Any]) -> None:
        """Index one log by its start line: its world (replay marking, study indices) and resume token."""
        self._known.add(name)
        if start.get("type") == "start" and is_sealed(start):
            self._sealed_logs.add(name)
        key = _world_key(start) if start.get("type") == "start" else None
        if key is not None:
            self._played.setdefault(key, name)
            self._worlds.setdefault(key, []).append(name)
        if isinstance(start.get("resume"), str):
            self._tokens[start["resume"]] = name

    def _peers(self, world: tuple[str, str, str, int]) -> Callable[[], list[tuple[str, Path]]]:
        """The logs of every game on `world` (a game checks them when it ends: `gold_seen`).
        Read without the manager's lock (a game ends holding its own lock, and `close` takes
        the two the other way round): `create` and `_resume` have built the index."""

        def peers() -> list[tuple[str, Path]]:
            return [(name, self.logs / name) for name in list(self._worlds.get(world, ()))]

        return peers

    # ---- ending -------------------------------------------------------------------------
    def close(self, game_id: str, client: str = "?", without_report: bool = True) -> None:
        """Free the game's slot and end it: a game without its report is recorded as abandoned
        (failed); one closed before its first action leaves no log. A game whose episode has
        ended awaits only its report: unless `without_report`, closing it is refused (409), so a
        report being written is never dropped by a request that did not mean to."""
        with self._lock:
            game = self.get(game_id, client)
            if not without_report and game.over and not game.finished:
                raise Conflict("This game's episode has ended and its knowledge report is not handed in yet: hand it "
                               "in, or close the game without it (DELETE with ?without_report=true; the outcome is "
                               "kept, with knowledge 0).")
            self._games.pop(game_id, None)
            with game.lock:
                kept = game.abandon()
            if not kept:
                self._forget(game)

    def _forget(self, game: Game) -> None:
        self._forget_log(game.log_path.relative_to(self.logs).as_posix())

    def _forget_log(self, name: str) -> None:
        """A log is gone (never played): no game is a replay of it, nothing resumes it."""
        for key, names in list(self._worlds.items()):
            if name in names:
                names.remove(name)
                if self._played.get(key) == name:
                    if names:
                        self._played[key] = names[0]
                    else:
                        del self._played[key]
        for token, value in list(self._tokens.items()):
            if value == name:
                del self._tokens[token]
        self._known.discard(name)
        self._sealed_logs.discard(name)

    def sweep_unplayed(self) -> int:
        """Remove logs of human games started but never played (start line only) and idle for
        `idle_seconds`; returns how many. They hold nothing but the start observation."""
        removed = 0
        cutoff = time.time() - self.idle_seconds
        with self._lock:
            loaded = {g.log_path for g in self._games.values()}  # a page still shows it
        for path in log_files(self.logs):
            try:
                if path in loaded or path.is_symlink() or path.stat().st_mtime > cutoff or path.stat().st_size > 4_000_000:
                    continue
                lines = path.read_bytes().splitlines()
            except OSError:
                continue
            if len(lines) == 1:
                start = first_line(path)
                if start is not None and start.get("type") == "start" and start.get("agent") == HUMAN_AGENT:
                    path.unlink(missing_ok=True)
                    removed += 1
                    with self._lock:  # no game is a replay of a removed log
                        self._forget_log(path.relative_to(self.logs).as_posix())
        return removed

    def judge(self) -> Judge | None:
        return self.judge_factory()


def _read_entries(path: Path, max_bytes: int) -> list[dict[str, Any]]:
    """The log's JSON lines (a torn last line is dropped)."""
    try:
        if path.stat().st_size > max_bytes * 2:
            raise NotFound(f"{path.name} is too large to resume.")
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        raise NotFound(f"The log {path.name} is gone; start a new game.") from None
    out: list[dict[str, Any]] = []
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out
