"""`discoverylab env-serve`: many clients' episodes in one process, over HTTP and OpenEnv's WebSocket.

HTTP (our client, `discoverylab.server.client`): `POST /sessions` makes a session with its own env,
`POST /sessions/{id}/reset`, `POST /sessions/{id}/step`, `GET /sessions/{id}/state`,
`DELETE /sessions/{id}`. A session unused for `ttl_s` seconds expires (a killed client frees its
slot); at most `max_sessions` live at once (429 beyond); a body over `max_body` bytes gets 413.

OpenEnv: `GET /health`, `GET /schema`, `GET /metadata` and the WebSocket `/ws` speak OpenEnv's
messages (`{"type": "reset"|"step"|"state"|"close", "data": ...}` answered by `observation`,
`state` or `error` messages; `openenv_ws.py`), so `openenv.core.GenericEnvClient(base_url=...)`
connects as is: one WebSocket = one session, freed when the socket closes; OpenEnv's `MCPToolClient`
too (its tool steps: `openenv_tools.py`).

MCP: `/mcp` (Streamable HTTP, `mcp_app.py`) serves the same sessions as MCP tools (`mcp_tools.py`).
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import Body, FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException

from discoverylab.server.local_guard import LoopbackOnly
from discoverylab.server.mcp_app import McpEndpoint
from discoverylab.server.openenv_ws import ACTION_SCHEMA, validation_text, ws_answer, ws_error
from discoverylab.server.session import (
    AnswersRequest,
    EpisodeSession,
    ResetRequest,
    SealedLedger,
    SessionError,
    StepResult,
)
from discoverylab.serving import serve_until_signal

if TYPE_CHECKING:
    from discoverylab.server.records import EpisodeRecords

DEFAULT_MAX_SESSIONS = 256
DEFAULT_TTL_S = 600.0
DEFAULT_MAX_BODY = 64 * 1024
# Requests one session may have waiting behind the one it runs: HTTP routes run in a shared pool
# of threads (40), and a client sending many at once to a busy session (grading a looping program
# takes seconds) would hold them all, stalling every other client's requests.
MAX_QUEUED = 4
SERVER_GOING = 1012  # the close code of a WebSocket uvicorn shuts down with the server ("service restart")


class StepRequest(BaseModel):
    """One action: DiscoveryWorld's `{"action", "arg1", "arg2"}` / dialog choice (or its JSON text),
    or a Tiny Labs message (a string, or `{"message": ...}`)."""

    action: dict[str, Any] | str


class PoolFull(SessionError):
    status = 429


class NoSession(SessionError):
    status = 404


class SessionBusy(SessionError):
    status = 429


@dataclass
class Slot:
    session: EpisodeSession
    lock: threading.Lock = field(default_factory=threading.Lock)
    used: float = field(default_factory=time.monotonic)
    waiting: int = 0  # requests running or waiting for `lock` (`SessionPool.run`, under the pool's lock)


class SessionPool:
    """The live sessions: capped, each with its own lock, expired when idle past `ttl_s`."""

    def __init__(self, max_sessions: int = DEFAULT_MAX_SESSIONS, ttl_s: float = DEFAULT_TTL_S,
                 key: bytes | None = None, ledger: SealedLedger | None = None,
                 records: EpisodeRecords | None = None) -> None:  # fmt: skip
        self.max_sessions, self.ttl_s, self.key, self.records = max_sessions, ttl_s, key, records
        self.slots: dict[str, Slot] = {}
        self.expired = 0
        # shared by all sessions: each sealed instance plays once per server (per Ray pool: one ledger actor)
        self.ledger = ledger if ledger is not None else SealedLedger()
        self._lock = threading.Lock()

    def create(self) -> str:
        self.sweep()
        with self._lock:
            if len(self.slots) >= self.max_sessions:
                raise PoolFull(f"The server holds its maximum of {self.max_sessions} sessions; "
                               "close one (DELETE /sessions/ID) or wait for idle ones to expire.")
            sid = secrets.token_urlsafe(16)
            self.slots[sid] = Slot(EpisodeSession(self.key, self.ledger, self.records))
            return sid

    def run(self, sid: str, work: Callable[[EpisodeSession], Any]) -> Any:
        """`work` on the session, one request at a time; beyond `MAX_QUEUED` waiting, 429 at once."""
        with self._lock:
            slot = self.slots.get(sid)
            if slot is None:
                raise NoSession(f"No session {sid[:40]!r}: it was closed, expired after {self.ttl_s:g} s idle, "
                                "or never existed; POST /sessions makes a new one.")
            if slot.waiting > MAX_QUEUED:
                raise SessionBusy(f"Session {sid[:40]!r} is busy: one request runs and {slot.waiting - 1} wait for it "
                                  "(a session answers one at a time); send the next once an answer came.")
            slot.waiting += 1
        try:
            with slot.lock:
                slot.used = time.monotonic()
                try:
                    return work(slot.session)
                finally:
                    slot.used = time.monotonic()
        finally:
            with self._lock:
                slot.waiting -= 1

    def close(self, sid: str, why: str = "the client closed its session", *, stopping: bool = False) -> bool:
        """Close one session (`why`: what its record says of an episode it leaves unfinished)."""
        with self._lock:
            slot = self.slots.pop(sid, None)
        if slot is not None:
            with slot.lock:
                slot.session.close(why, stopping=stopping)
        return slot is not None

    def close_all(self) -> None:
        """The server stops: every session goes (ended episodes still waiting for a sheet are recorded,
        made durable together: `EpisodeRecords.batched`)."""
        with self.records.batched() if self.records is not None else nullcontext():
            for sid in list(self.slots):
                self.close(sid, "the server stopped", stopping=True)

    def sweep(self) -> int:
        """Close sessions idle past the TTL (a killed client's); returns how many."""
        now = time.monotonic()
        with self._lock:
            stale = [sid for sid, slot in self.slots.items() if now - slot.used > self.ttl_s and not slot.lock.locked()]
        closed = sum(self.close(sid, f"the session expired after {self.ttl_s:g} s idle") for sid in stale)
        self.expired += closed
        return closed


ASGIApp = Callable[[MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


class BodyLimit:
    """ASGI middleware: a request body over `limit` bytes gets 413 (declared or streamed)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(send)
            return
        seen = 0

        async def counting() -> Any:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise _TooLarge(413, _too_large_text(self.limit))
            return message

        try:
            await self.app(scope, counting, send)
        except _TooLarge:
            await self._refuse(send)

    async def _refuse(self, send: Any) -> None:
        body = json.dumps({"detail": _too_large_text(self.limit)}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


class _TooLarge(HTTPException):
    """A streamed (chunked) body over the limit: FastAPI's body reader passes an HTTPException on
    (any other error there becomes 400 "error parsing the body"), so it gets 413 like a declared one."""


def _too_large_text(limit: int) -> str:
    return f"Request body over the server's limit of {limit} bytes."


def create_app(max_sessions: int = DEFAULT_MAX_SESSIONS, ttl_s: float = DEFAULT_TTL_S,
               max_body: int = DEFAULT_MAX_BODY, key: bytes | None = None, out: Path | None = None,
               ledger: SealedLedger | None = None) -> FastAPI:  # fmt: skip
    """The env server's app (`key`: the evaluator's key for the sealed test split, else
    $DISCOVERYLAB_EVAL_KEY; `out`: the folder of the server's own records, checked and locked
    here: `RunDirError`, `RunLocked` or `RunConfigMismatch` before anything is served; `ledger`:
    the sealed instances played, e.g. a `ledger.FileLedger` that outlives the process)."""
    records = None
    if out is not None:
        from discoverylab.instances import key_id, load_key
        from discoverylab.server.records import ServerRecords

        held = key if key is not None else load_key()
        records = ServerRecords(out, key_id(held) if held is not None else None)
    pool = SessionPool(max_sessions, ttl_s, key, ledger, records=records)
    for task, difficulty, index in records.sealed_played() if records is not None else ():
        pool.ledger.claim_name(task, difficulty, index)  # played on an earlier server with this DIR: once is all
    stop = threading.Event()
    mcp = McpEndpoint(pool, max_body)

    def reaper() -> None:
        while not stop.wait(max(0.05, min(ttl_s / 4, 30.0))):
            pool.sweep()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> Any:
        thread = threading.Thread(target=reaper, name="session-reaper", daemon=True)
        thread.start()
        try:
            async with mcp.running():
                yield
        finally:
            stop.set()
            if records is not None:  # finished episodes are never lost: the pending sheets recorded
                await run_in_threadpool(pool.close_all)
                records.close()

    app = FastAPI(title="discoverylab env server", lifespan=lifespan)
    app.state.pool = pool
    app.state.records = records
    app.add_middleware(BodyLimit, limit=max_body)  # type: ignore[arg-type]
    app.add_middleware(LoopbackOnly)  # outermost: a refused name is answered before anything is read
    app.add_route("/mcp", mcp, include_in_schema=False)  # type: ignore[arg-type]  # an ASGI app: MCP's transport

    @app.exception_handler(SessionError)
    async def session_error(_: Request, exc: SessionError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def bad_body(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": validation_text(list(exc.errors()))}, status_code=422)

    # The read-only routes are coroutines: they answer on the event loop, never waiting for a
    # thread of the pool that session work runs in.
    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"status": "healthy", "sessions": len(pool.slots), "max_sessions": pool.max_sessions,
                "expired": pool.expired}  # fmt: skip

    @app.get("/metadata")
    async def metadata() -> dict[str, Any]:
        return {"name": "discoverylab", "description": "DiscoveryWorld tasks and Tiny Labs protocols: "
                "scientific-discovery episodes for agents.", "version": "0.1.0"}  # fmt: skip

    @app.get("/schema")
    async def schema() -> dict[str, Any]:
        """OpenEnv's schema route: `action` is what a WebSocket step's data is (the action itself)."""
        return {"action": ACTION_SCHEMA, "observation": StepResult.model_json_schema(),
                "state": {"type": "object"}, "reset": ResetRequest.model_json_schema()}  # fmt: skip

    @app.post("/sessions", status_code=201)
    def create() -> dict[str, Any]:
        return {"session_id": pool.create(), "ttl_s": pool.ttl_s}

    @app.post("/sessions/{sid}/reset")
    def reset(sid: str, req: ResetRequest) -> StepResult:
        return pool.run(sid, lambda s: s.reset(req))  # type: ignore[no-any-return]

    @app.post("/sessions/{sid}/step")
    def step(sid: str, req: StepRequest = Body(...)) -> StepResult:
        return pool.run(sid, lambda s: s.step(req.action))  # type: ignore[no-any-return]

    @app.get("/sessions/{sid}/answer_sheet")
    def answer_sheet(sid: str) -> dict[str, Any]:
        return {"answer_sheet": pool.run(sid, lambda s: s.answer_sheet())}

    @app.post("/sessions/{sid}/answers")
    def answers(sid: str, req: AnswersRequest) -> dict[str, Any]:
        return pool.run(sid, lambda s: s.hand_in(req.answers, req.knowledge))  # type: ignore[no-any-return]

    @app.get("/sessions/{sid}/state")
    def state(sid: str) -> dict[str, Any]:
        return pool.run(sid, lambda s: s.state())  # type: ignore[no-any-return]

    @app.delete("/sessions/{sid}")
    def close(sid: str) -> dict[str, Any]:
        if not pool.close(sid, "the client closed its session (DELETE)"):
            raise NoSession(f"No session {sid[:40]!r} (already closed or expired).")
        return {"closed": sid}

    @app.websocket("/ws")
    async def openenv_ws(ws: WebSocket) -> None:
        await ws.accept()
        try:
            sid = pool.create()
        except PoolFull as exc:
            await ws.send_text(ws_error(str(exc), "CAPACITY_REACHED"))
            await ws.close()
            return
        stopping = False  # uvicorn closes every socket (1012) before the app's shutdown: not the client's doing
        try:
            while True:
                frame = await ws.receive()
                if frame["type"] == "websocket.disconnect":
                    stopping = frame.get("code") == SERVER_GOING
                    break
                raw = frame.get("text")
                if raw is None:  # a binary frame: OpenEnv's messages are text; decode it, never crash on it
                    raw = (frame.get("bytes") or b"").decode("utf-8", errors="replace")
                size = len(raw.encode("utf-8", errors="replace"))
                if size > max_body:  # as HTTP's 413
                    await ws.send_text(ws_error(f"A message is at most {max_body} bytes (--max-body); this one "
                                                 f"has {size}.", "MESSAGE_TOO_LARGE"))
                    continue
                answer, closing = await run_in_threadpool(ws_answer, pool, sid, raw)
                if closing:
                    break
                await ws.send_text(answer)
        except WebSocketDisconnect as exc:
            stopping = exc.code == SERVER_GOING
        finally:
            await run_in_threadpool(pool.close, sid, "the WebSocket closed", stopping=stopping)

    return app


def serve(host: str = "127.0.0.1", port: int = 8000, **options: Any) -> int | None:
    """Serve until SIGINT or SIGTERM; returns that signal's number (None: the server stopped by
    itself). Idle clients never hold the stop (`serving.serve_until_signal`); then the app's
    shutdown records the ended episodes."""
    # The WebSocket's frames are bounded near the HTTP body limit too (uvicorn's default is 16 MB);
    # the app answers a message over `max_body` with an error, the transport drops far larger ones.
    ws_max = 2 * options.get("max_body", DEFAULT_MAX_BODY) + 4096
    return serve_until_signal(create_app(**options), host, port, ws_max_size=ws_max)
