"""One way for tests to serve an ASGI app for real: uvicorn on 127.0.0.1 in a daemon thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn


@contextmanager
def serve_in_thread(app: Any, port: int = 0, what: str = "the server", timeout: float = 20.0) -> Iterator[int]:
    """Serve `app` on 127.0.0.1:`port` (0: a free one) until the block ends; yields the port.
    A server that does not start within `timeout` seconds (or whose thread dies) raises."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"{what} did not start")
        time.sleep(0.02)
    try:
        yield int(server.servers[0].sockets[0].getsockname()[1])
    finally:
        server.should_exit = True
        thread.join(10)
