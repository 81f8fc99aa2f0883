"""Helpers for the integration tests: a real env server on 127.0.0.1 in a thread, and an LLM side
that plays the oracle (the scripted OpenAI-compatible server answering with the oracle's actions)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from discoverylab.server.app import create_app


@contextmanager
def running_env_server(**options: Any) -> Iterator[tuple[str, Any]]:
    """An env server on a free port of 127.0.0.1; yields its base URL and the app."""
    app = create_app(**options)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the env server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", app
    finally:
        server.should_exit = True
        thread.join(10)

