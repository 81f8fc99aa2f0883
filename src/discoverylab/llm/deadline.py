"""A total deadline for one HTTP exchange, which httpx alone does not have.

httpx timeouts bound each socket operation, so a server that trickles a byte every 20 s holds a
request for as long as it likes. This transport wraps the response body: when the deadline
passes it shuts the socket down (waking a blocked read at once) and raises `httpx.ReadTimeout`,
which the openai package reports as a timeout like any other.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

try:  # openai >= 3 talks through httpx2 (same API); older releases through httpx
    import httpx2 as httpx
except ImportError:  # pragma: no cover - depends on the installed openai
    import httpx  # type: ignore[no-redef]


def make_http_client(transport: DeadlineTransport, timeout: float) -> Any:
    """An HTTP client of the kind the installed openai package expects, using `transport`."""
    return httpx.Client(transport=transport, timeout=timeout)


class DeadlineTransport(httpx.BaseTransport):
    """`httpx.HTTPTransport` whose responses stop at the deadline set for the calling thread."""

    def __init__(self, **options: Any) -> None:
        self._inner = httpx.HTTPTransport(**options)
        self._local = threading.local()

    def set_deadline(self, deadline: float | None) -> None:
        """Monotonic time at which this thread's next requests must be over (None: no limit)."""
        self._local.deadline = deadline

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline: float | None = getattr(self._local, "deadline", None)
        response = self._inner.handle_request(request)
        if deadline is None:
            return response
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        body = _DeadlineStream(response.stream, deadline, sock)  # type: ignore[arg-type]
        return httpx.Response(response.status_code, headers=response.headers, stream=body,
                              extensions=response.extensions)  # fmt: skip

    def close(self) -> None:
        self._inner.close()


class _DeadlineStream(httpx.SyncByteStream):
    def __init__(self, inner: httpx.SyncByteStream, deadline: float, sock: socket.socket | None) -> None:
        self._inner = inner
        self._deadline = deadline
        self._sock = sock
        self._expired = threading.Event()

    def _expire(self) -> None:
        self._expired.set()
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __iter__(self) -> Iterator[bytes]:
        timer = threading.Timer(max(0.0, self._deadline - time.monotonic()), self._expire)
        timer.daemon = True
        timer.start()
        try:
            for chunk in self._inner:
                if self._expired.is_set() or time.monotonic() > self._deadline:
                    break
                yield chunk
        except (httpx.HTTPError, OSError):
            if not self._expired.is_set():
                raise
        finally:
            timer.cancel()
        if self._expired.is_set() or time.monotonic() > self._deadline:
            raise httpx.ReadTimeout("the request's total deadline passed while reading the reply")

    def close(self) -> None:
        self._inner.close()
