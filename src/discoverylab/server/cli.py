"""`discoverylab env-serve` and `discoverylab export-sft` (registered by `discoverylab.cli.main`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

err = Console(stderr=True)


def env_serve(
    host: Annotated[str, typer.Option("--host", help="interface to listen on (localhost by default)")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535)] = 8000,
    max_sessions: Annotated[int, typer.Option("--max-sessions", min=1, help="sessions alive at once (429 beyond)")] = 256,
    ttl: Annotated[float, typer.Option("--ttl", min=0.1, help="seconds a session may sit idle before it expires")] = 600.0,
    max_body: Annotated[int, typer.Option("--max-body", min=1024, help="largest request body in bytes (413 beyond)")] = 65536,
    eval_key_file: Annotated[Path | None, typer.Option("--eval-key-file", help="the evaluator's key: lets clients "
                                                       "play the sealed test split (else $DISCOVERYLAB_EVAL_KEY)")] = None,
) -> None:
    """Serve episodes to remote agents: HTTP sessions (reset/step/state) and OpenEnv's WebSocket /ws."""
    from discoverylab.instances import InstanceError, load_key
    from discoverylab.server.app import serve

    try:
        key = load_key(eval_key_file)
    except InstanceError as exc:
        err.print(f"[red]Error:[/red] {exc}", soft_wrap=True)
        raise typer.Exit(2) from None
    err.print(f"env server on http://{host}:{port} (OpenEnv WebSocket: ws://{host}:{port}/ws)")
    serve(host, port, max_sessions=max_sessions, ttl_s=ttl, max_body=max_body, key=key)
