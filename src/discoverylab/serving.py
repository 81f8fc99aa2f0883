"""Running an ASGI app under uvicorn until SIGINT or SIGTERM, for every server command (`env-serve`,
the browser UI's `serve` and `replay`), so that each one stops the same way and says truthfully why.

uvicorn re-raises the signal that stopped it: under asyncio's runner a re-raised SIGINT ended the
process with status 0 (its handler only cancels a task already done), and a re-raised SIGTERM killed
it by the signal before the command could let go of what it held. Here the signal is returned
instead, and the commands exit 130 or 143 as `run` and `bench` do. Idle clients never hold the stop:
open sockets and keep-alive connections close at once, a request still running gets `grace_s`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

STOP_GRACE_S = 2  # requests still running when the server is stopped get this long to answer

def _no_cancel_traceback(record: logging.LogRecord) -> bool:
    """uvicorn says it cancelled the requests left after the grace ("Cancel 1 running task(s)"),
    then logs each one's CancelledError as a crash with its traceback: that second line goes."""
    return not (record.exc_info and isinstance(record.exc_info[1], asyncio.CancelledError))

def serve_until_signal(app: Any, host: str, port: int, grace_s: int = STOP_GRACE_S, **config: Any) -> int | None:
    """Serve `app` until SIGINT or SIGTERM; returns that signal's number (None: the server stopped
    by itself, e.g. its port was taken). `config`: more `uvicorn.Config` options."""
    import signal

    import uvicorn

    class Server(uvicorn.Server):
        stopped_by: int | None = None

        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

        def handle_exit(self, sig: int, frame: Any) -> None:
            # the first signal names the stop; a second one only repeats it (the stop is bounded already)
            self.stopped_by = self.stopped_by or sig
            self.should_exit = True

    logging.getLogger("uvicorn.error").addFilter(_no_cancel_traceback)
    config.setdefault("log_level", "warning")
    server = Server(uvicorn.Config(app, host=host, port=port, timeout_graceful_shutdown=grace_s, **config))
    server.run()
    return server.stopped_by

