"""A real HTTP server on 127.0.0.1 that plays back scripted OpenAI-format replies.

Tests of the LLM client talk to it over real sockets, so retries, timeouts and parsing are
exercised through the `openai` package exactly as against a hosted endpoint.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Scripted:
    """One scripted HTTP answer."""

    status: int = 200
    body: Any = None  # dict -> JSON; str -> sent verbatim (to fake malformed bodies)
    headers: dict[str, str] = field(default_factory=dict)
    hang: float = 0.0  # seconds to stall before answering (to trigger client timeouts)
    trickle: float = 0.0  # send the body one byte per `trickle` seconds (a slow-loris server)
    reset: bool = False  # drop the connection without answering (TCP reset)
    content_type: str = "application/json"
    slow_headers: float = 0.0  # send the status line and headers one byte per `slow_headers` seconds
    huge: int = 0  # answer with a chat completion whose content is `huge` bytes, generated as it is sent
    declare_length: bool = True  # False: no content-length, the body ends when the connection closes


def chat_reply(text: str, prompt_tokens: int = 11, completion_tokens: int = 7, model: str = "scripted") -> dict:
    """An OpenAI chat-completions body whose assistant message is `text`."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def as_stream(answer: Scripted) -> Scripted:
    """A chat-completions answer sent as server-sent events (`stream: true`): one chunk with the
    whole message (content or tool calls), a finish chunk with the usage, then [DONE]."""
    body = answer.body
    message = body["choices"][0]["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{**call, "index": i} for i, call in enumerate(message["tool_calls"])]
    head = {k: body[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    chunks = [head | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
              head | {"choices": [{"index": 0, "delta": {}, "finish_reason": body["choices"][0]["finish_reason"]}],
                      "usage": body.get("usage")}]  # fmt: skip
    text = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return Scripted(status=answer.status, body=text, headers=answer.headers, content_type="text/event-stream")


def error_body(message: str) -> dict:
    return {"error": {"message": message, "type": "server_error", "code": None}}


class ScriptedLLMServer:
    """Serves `/v1/chat/completions` from a queue of `Scripted` answers and records requests.

    When the queue is empty, `responder` (if set) answers from the request itself, e.g. a
    rule-following judge or a server that refuses json_schema; otherwise the answer is a 500.
    """

    def __init__(self, models: tuple[str, ...] = ("scripted-model",)) -> None:
        self.script: deque[Scripted] = deque()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.models = models
        self.models_answer: Scripted | None = None  # what GET /models answers (None: the model list)
        self.sent_bytes = 0  # body bytes written by `huge` answers (how much a client read at most)
        self.release = threading.Event()
        self.responder: Callable[[dict[str, Any]], Scripted] | None = None
        # POST /tokenize (llama.cpp and vLLM): None answers 404, as a server without the route;
        # else the token ids of the request's text. Never consumes the chat script.
        self.tokenizer: Callable[[str], list[int]] | None = None
        self.tokenize_requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def push(self, *answers: Scripted) -> None:
        self.script.extend(answers)

    def push_text(self, *texts: str) -> None:
        self.push(*(Scripted(body=chat_reply(text)) for text in texts))

    def start(self) -> ScriptedLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next(self, request: dict[str, Any], headers: dict[str, str]) -> Scripted:
        with self._lock:
            self.requests.append(request)
            self.headers.append(headers)
            if self.script:
                return self.script.popleft()
            responder = self.responder
        if responder is not None:
            return responder(request)
        return Scripted(status=500, body=error_body("script exhausted"))

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
                pass  # keep test output clean

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models") and owner.models_answer is not None:
                    if owner.models_answer.hang:
                        owner.release.wait(owner.models_answer.hang)
                    self._send(owner.models_answer)
                elif self.path.rstrip("/").endswith("/models"):
                    data = [{"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in owner.models]
                    self._send(Scripted(body={"object": "list", "data": data}))
                else:
                    self._send(Scripted(status=404, body=error_body("not found")))

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                request = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/").endswith("/tokenize"):
                    owner.tokenize_requests.append(request)
                    tokenizer = owner.tokenizer
                    text = str(request.get("content", request.get("prompt", "")))
                    self._send(Scripted(status=404, body=error_body("not found")) if tokenizer is None
                               else Scripted(body={"tokens": tokenizer(text)}))  # fmt: skip
                    return
                answer = owner._next(request, {k.lower(): v for k, v in self.headers.items()})
                if request.get("stream") and isinstance(answer.body, dict) and answer.body.get("choices"):
                    answer = as_stream(answer)  # harnesses that stream (verifiers' chat program)
                if answer.hang:
                    owner.release.wait(answer.hang)
                if answer.reset:
                    import socket
                    import struct

                    # SO_LINGER 0 makes close() send a RST instead of a FIN.
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    return
                self._send(answer)

            def _send(self, answer: Scripted) -> None:
                if answer.huge:
                    self._send_huge(answer)
                    return
                payload = answer.body if isinstance(answer.body, str) else json.dumps(answer.body)
                data = payload.encode()
                try:
                    self.send_response(answer.status)
                    self.send_header("content-type", answer.content_type)
                    self.send_header("content-length", str(len(data)))
                    for key, value in answer.headers.items():
                        self.send_header(key, value)
                    if answer.slow_headers:
                        head = b"".join(self._headers_buffer) + b"\r\n"
                        self._headers_buffer = []
                        for i in range(len(head)):
                            self.wfile.write(head[i:i + 1])
                            self.wfile.flush()
                            if owner.release.wait(answer.slow_headers):
                                return
                    else:
                        self.end_headers()
                    if answer.trickle:
                        for i in range(len(data)):
                            self.wfile.write(data[i:i + 1])
                            self.wfile.flush()
                            if owner.release.wait(answer.trickle):
                                return
                    else:
                        self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test); nothing to answer

            def _send_huge(self, answer: Scripted) -> None:
                head, tail = json.dumps(chat_reply("@")).encode().split(b"@")
                chunk = b"a" * 65536
                try:
                    self.send_response(answer.status)
                    self.send_header("content-type", answer.content_type)
                    if answer.declare_length:
                        self.send_header("content-length", str(len(head) + answer.huge + len(tail)))
                    self.end_headers()
                    self.wfile.write(head)
                    left = answer.huge
                    while left > 0:
                        piece = chunk[:left]
                        self.wfile.write(piece)
                        left -= len(piece)
                        with owner._lock:
                            owner.sent_bytes += len(piece)
                    self.wfile.write(tail)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading: what we wanted

        return Handler
