"""One total deadline per HTTP exchange, and a cap on the size of a reply.

httpx timeouts bound each socket operation, so a server that sends its headers or its body one
byte at a time holds a request for as long as it likes (issue 23.1: 82.5 s under an 8 s
deadline). Here every network operation below httpx (name lookup, connect, TLS handshake, each
read and write) gets the time left until one absolute deadline, read from the clock before the
operation, so no sequence of slow-but-alive operations can outlast it; once it has passed, the
next operation fails at once with a timeout that the openai package reports like any other.

A reply body larger than `max_reply_bytes` is refused while it is read (`ReplyTooLarge`), so a
server that answers with 150 MB never costs more than the cap in memory (issue 23.3).
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

try:  # openai >= 3 talks through httpx2 (same API); older releases through httpx
    import httpcore2 as httpcore
    import httpx2 as httpx
except ImportError:  # pragma: no cover - depends on the installed openai
    import httpcore  # type: ignore[no-redef]
    import httpx  # type: ignore[no-redef]

DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024  # a 32k-token reply is ~200 kB of JSON; 8 MB is far above
WRITE_PIECE = 16 * 1024


class ReplyTooLarge(httpx.ReadError):
    """The reply body passed the client's size cap (a server fault, never a model's answer)."""


def make_http_client(transport: DeadlineTransport, timeout: float) -> Any:
    """An HTTP client of the kind the installed openai package expects, using `transport`."""
    return httpx.Client(transport=transport, timeout=timeout)


class _Clock:
    """The deadline of the calling thread's current exchange (threads share one client)."""

    def __init__(self) -> None:
        self._local = threading.local()

    @property
    def deadline(self) -> float | None:
        return getattr(self._local, "deadline", None)

    @deadline.setter
    def deadline(self, value: float | None) -> None:
        self._local.deadline = value

    def bound(self, timeout: float | None, expired: type[Exception]) -> float | None:
        """`timeout` cut to the time left; raises `expired` when none is left."""
        deadline = self.deadline
        if deadline is None:
            return timeout
        left = deadline - time.monotonic()
        if left <= 0:
            raise expired("the request's total deadline passed")
        return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    """A network stream whose every operation ends by the deadline."""

    def __init__(self, inner: Any, clock: _Clock) -> None:
        self._inner = inner
        self._clock = clock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data: bytes = self._inner.read(max_bytes, self._clock.bound(timeout, httpcore.ReadTimeout))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        # In pieces, each bounded anew: one write of a long prompt to a slowly reading server
        # would otherwise wait up to `timeout` per send it needs, past the deadline.
        view = memoryview(buffer)
        while view:
            self._inner.write(bytes(view[:WRITE_PIECE]), self._clock.bound(timeout, httpcore.WriteTimeout))
            view = view[WRITE_PIECE:]

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:  # fmt: skip
        bounded = self._clock.bound(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, bounded), self._clock)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's sync backend with lookups and connects bounded by the deadline."""

    def __init__(self, clock: _Clock) -> None:
        self._inner = httpcore.SyncBackend()
        self._clock = clock

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:  # fmt: skip
        address = _resolve(host, port, self._clock.bound(timeout, httpcore.ConnectTimeout))
        stream = self._inner.connect_tcp(address, port, self._clock.bound(timeout, httpcore.ConnectTimeout),
                                         local_address=local_address, socket_options=socket_options)  # fmt: skip
        return _Stream(stream, self._clock)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:  # fmt: skip
        bounded = self._clock.bound(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.connect_unix_socket(path, bounded, socket_options), self._clock)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


def _resolve(host: str, port: int, timeout: float | None) -> str:
    """The first address of `host`, looked up in a helper thread so a hung resolver cannot hold us."""
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        pass
    found: list[Any] = []

    def lookup() -> None:
        try:
            found.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][4][0])
        except OSError as exc:
            found.append(exc)

    worker = threading.Thread(target=lookup, name="dns-lookup", daemon=True)
    worker.start()
    worker.join(timeout)
    if not found:
        raise httpcore.ConnectTimeout(f"looking up {host} took longer than the request's deadline")
    if isinstance(found[0], OSError):
        raise httpcore.ConnectError(f"cannot resolve {host}: {found[0]}")
    return str(found[0])


class DeadlineTransport(httpx.BaseTransport):
    """`httpx.HTTPTransport` whose exchanges end by the deadline set for the calling thread and
    whose reply bodies stop at `max_reply_bytes`."""

    def __init__(self, max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES) -> None:
        self._clock = _Clock()
        self.max_reply_bytes = max_reply_bytes
        self._inner = httpx.HTTPTransport()
        # httpx builds its connection pool itself; give it our network backend (checked by a test).
        pool = getattr(self._inner, "_pool", None)
        if pool is None or not hasattr(pool, "_network_backend"):  # pragma: no cover - httpx changed
            raise RuntimeError("this httpx version hides its connection pool; discoverylab cannot bound requests")
        pool._network_backend = _Backend(self._clock)

    def set_deadline(self, deadline: float | None) -> None:
        """Monotonic time at which this thread's next requests must be over (None: no limit)."""
        self._clock.deadline = deadline

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._inner.handle_request(request)
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_reply_bytes:
            response.close()
            raise ReplyTooLarge(self._too_large(f"declares {int(declared):,} bytes, more than that"))
        body = _CappedStream(response.stream, self.max_reply_bytes, self._too_large)  # type: ignore[arg-type]
        return httpx.Response(response.status_code, headers=response.headers, stream=body,
                              extensions=response.extensions)  # fmt: skip

    def _too_large(self, what: str) -> str:
        return f"replies are capped at {self.max_reply_bytes:,} bytes (max_reply_bytes); this one {what}"

    def close(self) -> None:
        self._inner.close()


class _CappedStream(httpx.SyncByteStream):
    def __init__(self, inner: httpx.SyncByteStream, cap: int, message: Any) -> None:
        self._inner = inner
        self._cap = cap
        self._message = message

    def __iter__(self) -> Iterator[bytes]:
        seen = 0
        for chunk in self._inner:
            seen += len(chunk)
            if seen > self._cap:
                raise ReplyTooLarge(self._message("grew past that while being read"))
            yield chunk

    def close(self) -> None:
        self._inner.close()


@contextmanager
def request_timeout_env(seconds: float | None) -> Iterator[None]:
    """`--request-timeout` for the LLM clients made inside the block, in this process and in the
    workers it spawns (an environment variable they inherit), restored afterwards, so a command
    run in-process (tests, notebooks) leaves no 1-second deadline behind for later clients."""
    import os

    from discoverylab.llm.client import ENV_REQUEST_TIMEOUT  # deadline.py is imported by client.py

    if seconds is None:
        yield
        return
    old = os.environ.get(ENV_REQUEST_TIMEOUT)
    os.environ[ENV_REQUEST_TIMEOUT] = str(seconds)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(ENV_REQUEST_TIMEOUT, None)
        else:
            os.environ[ENV_REQUEST_TIMEOUT] = old
