"""The FastAPI app behind `discoverylab serve`: play, replay and the leaderboard.

Every input is validated (pydantic models, bounded query values) and every refusal is a 4xx
with `{"detail": "<clear message>"}`. Files are served only from the packaged `static/` folder
and the logs folder, through `safe_path` (no `..`, no absolute or hidden parts, and the
resolved path, symlinks followed, must stay inside its root).
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any

from fastapi import Body, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from pydantic import BaseModel, Field, ValidationError

from discoverylab.scoring.knowledge import Judge
from discoverylab.ui.answers import check as check_answers
from discoverylab.ui.answers import public_form
from discoverylab.ui.commands import parse_command
from discoverylab.ui.games import (
    MAX_REPORT_CHARS,
    MAX_SEED,
    NotFound,
    StepRequest,
    TooLarge,
    UIError,
    public_scorecard,
)
from discoverylab.ui.guards import Guard
from discoverylab.ui.leaderboard import leaderboard
from discoverylab.ui.logfiles import log_files
from discoverylab.ui.manager import MAX_PARTICIPANT_CHARS, GameManager
from discoverylab.ui.replay import LogError, Replay, load_log
from discoverylab.ui.results import export, game_ids, to_csv

STATIC = Path(__file__).parent / "static"
MAX_BODY_BYTES = 1_000_000
_PART = re.compile(r"^[^./\\\x00-\x1f][^/\\\x00-\x1f]{0,200}$")  # not hidden, '..' or empty; spaces, '(1)' are fine
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data: blob:; object-src 'none'; frame-ancestors 'none'",
}


def safe_path(root: Path, relative: str) -> Path:
    """`root/relative` if it is a plain file inside `root` (after following symlinks), else NotFound."""
    parts = relative.split("/")
    if "\\" in relative or "\x00" in relative or not all(_PART.fullmatch(p) for p in parts):
        raise NotFound(f"No such file: {relative[:80]!r}.")
    try:
        path = (root / relative).resolve(strict=True)
    except (OSError, RuntimeError):
        raise NotFound(f"No such file: {relative[:80]!r}.") from None
    if not path.is_relative_to(root.resolve()) or not path.is_file():
        raise NotFound(f"No such file: {relative[:80]!r}.")
    return path


class NewGame(BaseModel):
    model_config = {"extra": "forbid"}
    task: str = Field(..., min_length=1, max_length=80)
    difficulty: str = Field("normal", min_length=1, max_length=20)
    seed: int | None = Field(None, ge=0, le=MAX_SEED, strict=True,  # true or "7" is not a seed
                             description="a public seed (0 if left out); none in study mode")
    participant: str | None = Field(None, min_length=1, max_length=MAX_PARTICIPANT_CHARS, pattern=r"^[A-Za-z0-9_.@-]+$")


class BadCommand(UIError):
    status = 422


class Command(BaseModel):
    model_config = {"extra": "forbid"}
    text: str = Field(..., min_length=1, max_length=400)


class Report(BaseModel):
    model_config = {"extra": "forbid"}
    report: str = Field(..., max_length=MAX_REPORT_CHARS)
    answers: dict[str, Any] | None = Field(None, description="the answer sheet: field name -> value")


def default_judge() -> Judge | None:
    """The agents' knowledge judge when an LLM endpoint is configured, else None (ungraded)."""
    from discoverylab.llm.client import ENV_BASE_URL

    if not (os.environ.get(ENV_BASE_URL) or os.environ.get("OPENAI_BASE_URL")):
        return None
    from discoverylab.llm import knowledge_judge
    from discoverylab.llm.client import LLMClient

    return knowledge_judge(LLMClient())


class _Replays:
    """A few re-simulated logs, rebuilt when their file changes (a human game in progress)."""

    def __init__(self, logs: Path, limit: int = 8, max_log_bytes: int = 20_000_000, only: str | None = None) -> None:
        self.logs, self.limit, self.max_log_bytes, self.only = logs, limit, max_log_bytes, only
        self._cache: OrderedDict[str, tuple[tuple[float, int], Replay]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, name: str) -> Replay:
        if self.only is not None and name != self.only:
            raise NotFound(f"This server replays only {self.only!r}.")
        path = safe_path(self.logs, name)
        if not path.name.endswith(".jsonl"):
            raise NotFound(f"{name[:80]!r} is not a .jsonl log.")
        stat = path.stat()
        if stat.st_size > self.max_log_bytes:
            raise TooLarge(f"{name[:80]!r} is larger than the server's limit of {self.max_log_bytes} bytes.")
        stamp = (stat.st_mtime, stat.st_size)
        with self._lock:
            hit = self._cache.get(name)
            if hit is not None and hit[0] == stamp:
                self._cache.move_to_end(name)
                return hit[1]
            replay = Replay.build(load_log(path, self.max_log_bytes))
            self._cache[name] = (stamp, replay)
            while len(self._cache) > self.limit:
                self._cache.popitem(last=False)
            return replay


def create_app(
    logs: Path,
    max_games: int = 32,
    max_log_bytes: int = 20_000_000,
    judge_factory: Callable[[], Judge | None] | None = None,
    study_key: bytes | None = None,
    allowed_hosts: Iterable[str] = (),
    max_games_per_client: int | None = None,
    only_log: str | None = None,
) -> FastAPI:
    """The UI app; games write their logs to `logs`, which is also what replay and the
    leaderboard read. `study_key` (the evaluator's key): study mode, where the server assigns
    every game a fresh instance of the sealed test split. `allowed_hosts`: Host names answered
    besides the local ones. `only_log` (a name in `logs`): a replay server for that one log,
    which lists, replays and ranks nothing else and plays no games."""
    logs = Path(logs)
    logs.mkdir(parents=True, exist_ok=True)
    games = GameManager(logs, max_games, max_log_bytes, judge_factory=judge_factory or default_judge,
                        study_key=study_key, max_games_per_client=max_games_per_client,
                        sweep=only_log is None)  # fmt: skip
    replays = _Replays(logs, max_log_bytes=max_log_bytes, only=only_log)
    app = FastAPI(title="discoverylab UI", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.games = games
    app.add_middleware(Guard, max_body=MAX_BODY_BYTES, allowed_hosts=allowed_hosts)

    def client_of(request: Request) -> str:
        return request.client.host if request.client else "?"

    def playing() -> None:
        if only_log is not None:
            raise NotFound(f"This server only replays {only_log!r}; start `discoverylab serve` to play.")

    @app.middleware("http")
    async def headers(request: Request, call_next: Callable[[Request], Any]) -> Response:
        response: Response = await call_next(request)
        response.headers.update(SECURITY_HEADERS)
        return response

    @app.exception_handler(UIError)
    async def ui_error(_: Request, exc: UIError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, exc.status)

    @app.exception_handler(LogError)
    async def log_error(_: Request, exc: LogError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, 422)

    @app.exception_handler(RequestValidationError)
    async def bad_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for err in exc.errors()[:5]:
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
            problems.append(f"{where}: {err.get('msg', 'invalid')}" if where else str(err.get("msg", "invalid")))
        return JSONResponse({"detail": "; ".join(problems)[:500]}, 422)

    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    for route in ("/", "/play", "/replay", "/leaderboard"):
        app.get(route, include_in_schema=False)(page)

    @app.get("/static/{name:path}")
    def static(name: str) -> FileResponse:
        return FileResponse(safe_path(STATIC, name))

    @app.get("/api/tasks")
    def tasks() -> list[dict[str, Any]]:
        from discoverylab.scenarios.registry import all_tasks

        return [{"task": tid, "title": cls.title, "suite": cls.suite, "difficulties": list(cls.difficulties)}
                for tid, cls in all_tasks().items()]  # fmt: skip

    @app.get("/api/config")
    def config() -> dict[str, Any]:
        return {"study": games.study, "replay_only": only_log}

    @app.post("/api/games")
    def new_game(spec: NewGame, request: Request) -> dict[str, Any]:
        playing()
        seed = spec.seed if games.study or spec.seed is not None else 0
        game = games.create(spec.task, spec.difficulty, seed, client=client_of(request), participant=spec.participant)
        with game.lock:
            return game.state()

    @app.get("/api/games/{gid}")
    def game_state(gid: str, request: Request) -> dict[str, Any]:
        playing()
        game = games.get(gid, client_of(request))
        with game.lock:
            return game.state()

    @app.post("/api/games/{gid}/step")
    def step(gid: str, body: StepRequest, request: Request) -> dict[str, Any]:
        playing()
        game = games.get(gid, client_of(request))
        with game.lock:
            game.step(body)
            return game.state()

    @app.post("/api/games/{gid}/command")
    def command(gid: str, body: Command, request: Request) -> dict[str, Any]:
        """A typed command ('use meter on beast', 'tp kitchen'): one that does not parse is a
        422 with a hint and costs no step."""
        playing()
        game = games.get(gid, client_of(request))
        with game.lock:
            try:
                action = parse_command(body.text, game.info["observation"], game.seen)
                parsed = StepRequest.model_validate(action)
            except ValueError as exc:
                raise BadCommand(str(exc).splitlines()[-1][:400] if isinstance(exc, ValidationError) else str(exc)) from None
            game.step(parsed)
            return game.state()

    @app.get("/api/games/{gid}/history")
    def history(gid: str, request: Request) -> dict[str, Any]:
        """Every step's action and message (the readings a player needs to keep)."""
        playing()
        game = games.get(gid, client_of(request))
        with game.lock:
            return {"history": list(game.history), "feed": [game.feed[k] for k in sorted(game.feed)]}

    @app.get("/api/games/{gid}/view.png")
    def game_view(gid: str, request: Request, grid: bool = False, step: Annotated[int, Query(ge=0)] = 0) -> Response:
        playing()
        game = games.get(gid, client_of(request))  # `step` only busts browser caches
        with game.lock:
            return Response(game.view_png(grid), media_type="image/png", headers={"Cache-Control": "no-store"})

    @app.get("/api/games/{gid}/scorecard")
    def game_scorecard(gid: str, request: Request) -> dict[str, Any]:
        playing()
        game = games.get(gid, client_of(request))
        with game.lock:
            return game.scorecard()

    @app.post("/api/games/{gid}/report")
    def report(gid: str, body: Annotated[Report, Body()], request: Request) -> dict[str, Any]:
        playing()
        game = games.get(gid, client_of(request))
        try:
            answers = check_answers(body.answers)
        except ValueError as exc:
            raise BadCommand(str(exc)) from None
        with game.lock:  # a sealed game's report waits for `discoverylab judge` and its named judge (ui.md)
            game.finish(body.report, None if game.instance.sealed else games.judge(), answers)
            return game.state()

    @app.get("/api/games/{gid}/answer_form")
    def answer_form(gid: str, request: Request) -> dict[str, Any]:
        """The task's answer sheet (fields, questions, choices), or null: it holds no answer."""
        playing()
        game = games.get(gid, client_of(request))
        with game.lock:
            return {"form": public_form(game.env)}

    @app.delete("/api/games/{gid}")
    def close(gid: str, request: Request, without_report: bool = False) -> dict[str, str]:
        """End the game (abandoned, or the ended episode's outcome with knowledge 0). A game
        awaiting its report is closed only `without_report` (the page asks the player first)."""
        playing()
        games.close(gid, client_of(request), without_report=without_report)
        return {"closed": gid}

    @app.get("/api/results")
    def results(games_: Annotated[str, Query(alias="games", max_length=20_000)] = "",
                format_: Annotated[str, Query(alias="format", pattern="^(json|csv)$")] = "json") -> Response:  # fmt: skip
        """A download of the finished games named by id (the page sends the ids it played; ids are
        the credential, never a participant name): JSON, or CSV without the nested scorecards."""
        playing()
        try:
            ids = game_ids(games_)
        except ValueError as exc:
            raise BadCommand(str(exc)) from None
        data = export(ids, games.logs_of, max_log_bytes * 2)
        if format_ == "csv":
            return Response(to_csv(data["games"]), media_type="text/csv; charset=utf-8",
                            headers={"Content-Disposition": 'attachment; filename="discoverylab-results.csv"'})  # fmt: skip
        return JSONResponse(data, headers={"Content-Disposition": 'attachment; filename="discoverylab-results.json"'})

    @app.get("/api/logs")
    def list_logs() -> list[dict[str, Any]]:
        """The logs folder's logs; a sealed one without its size (a win's end line is shorter
        than a loss's: `true` against `false`) and marked: the replay page cannot replay it."""
        out = []
        sealed_logs = games.sealed_logs()
        for path in log_files(logs):
            rel = path.relative_to(logs).as_posix()
            if only_log is None or rel == only_log:
                out.append({"name": rel, "sealed": True} if rel in sealed_logs else {"name": rel, "bytes": path.stat().st_size})
        return out[:2000]

    @app.get("/api/replay")
    def replay_summary(log: Annotated[str, Query(min_length=1, max_length=400)]) -> dict[str, Any]:
        summary = replays.get(log).summary()
        if not summary["ended"]:  # a game in progress: per-step scores would tell which action was right
            summary["timeline"] = [{k: v for k, v in e.items() if k != "score"} for e in summary["timeline"]]
        return summary

    @app.get("/api/replay/frame.png")
    def replay_frame(
        log: Annotated[str, Query(min_length=1, max_length=400)], step: Annotated[int, Query(ge=0)] = 0, grid: bool = False
    ) -> Response:
        replay = replays.get(log)
        if step >= len(replay):
            raise UIError(f"step must be in 0..{len(replay) - 1} for this log, not {step}.")
        return Response(replay.frame_png(step, grid), media_type="image/png")

    @app.get("/api/replay/scorecard")
    def replay_scorecard(
        log: Annotated[str, Query(min_length=1, max_length=400)], step: Annotated[int, Query(ge=0)] = 0
    ) -> dict[str, Any]:
        replay = replays.get(log)
        if step >= len(replay):
            raise UIError(f"step must be in 0..{len(replay) - 1} for this log, not {step}.")
        card = replay.scorecard(step)
        return card if replay.log.ended else public_scorecard(card)  # a game in progress (or awaiting its report)

    @app.get("/api/leaderboard")
    def board() -> dict[str, Any]:
        """Public instances' scores; sealed games are only counted (`sealed_hidden`): their
        scores are the evaluator's, read with `discoverylab report` on the logs folder."""
        if only_log is not None:
            return {"agents": [], "rows": [], "sealed_hidden": 0}
        return leaderboard(logs, games.live_logs(), include_sealed=False)

    return app
