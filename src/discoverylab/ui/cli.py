"""`discoverylab serve` and `discoverylab replay`: the terminal side of the browser UI."""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Annotated
from urllib.parse import quote

import typer
from rich.console import Console

from discoverylab.hostnames import is_loopback

console = Console()
err = Console(stderr=True)
LONG_GAME_MB = 16  # about 10 KB a logged step, 1,500 steps (Space Sick Normal and Challenge)


def serve(
    host: Annotated[str, typer.Option("--host", help="interface to listen on (localhost by default)")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535)] = 8765,
    logs: Annotated[Path, typer.Option("--logs", help="folder for human game logs; replay and leaderboard read it")] = Path("runs/ui"),
    max_games: Annotated[int, typer.Option("--max-games", min=1, help="games loaded at once (the idlest is "
                                           "unloaded, resumable, to make room)")] = 32,
    max_games_per_client: Annotated[int | None, typer.Option("--max-games-per-client", min=1,
                                    help="games one client address keeps loaded (default max-games/4)")] = None,
    allowed_host: Annotated[list[str] | None, typer.Option("--allowed-host", help="a Host name to answer besides "
                            "localhost/127.0.0.1/::1 (repeatable; the name people type in the browser)")] = None,
    max_log_mb: Annotated[float, typer.Option("--max-log-mb", min=0.01, help="log size limit per game")] = 20.0,
    open_browser: Annotated[bool, typer.Option("--open", help="open the page in a browser")] = False,
    study: Annotated[bool, typer.Option("--study", help="study mode: the server assigns every game a fresh "
                                        "instance of the sealed test split (needs the evaluator's key)")] = False,
    eval_key_file: Annotated[Path | None, typer.Option("--eval-key-file", help="the evaluator's key for --study "
                                                       "(else $DISCOVERYLAB_EVAL_KEY)")] = None,
) -> None:
    """Serve the browser UI: play tasks as a human, replay logs, human-vs-agent leaderboard."""
    from discoverylab.instances import KEY_ENV, InstanceError, load_key
    from discoverylab.ui.server import create_app

    key = None
    if study or eval_key_file is not None:
        try:
            key = load_key(eval_key_file)
        except InstanceError as exc:
            err.print(f"[red]Error:[/red] {exc}", soft_wrap=True)
            raise typer.Exit(2) from None
        if not study:
            err.print("[red]Error:[/red] --eval-key-file is only for --study.", soft_wrap=True)
            raise typer.Exit(2)
        if key is None:
            err.print(f"[red]Error:[/red] --study needs the evaluator's key: pass --eval-key-file FILE or set {KEY_ENV}.",
                      soft_wrap=True)  # fmt: skip
            raise typer.Exit(2)

    if max_log_mb < LONG_GAME_MB:
        err.print(f"[yellow]Warning:[/yellow] --max-log-mb {max_log_mb:g}: a game's log grows by about 10 KB a step, so "
                  f"games stop at about step {int(max_log_mb * 100)} (then only the report is taken); the longest tasks "
                  f"allow 1,500 steps: {LONG_GAME_MB} MB or more lets every game reach its step limit.", soft_wrap=True)  # fmt: skip
    hosts = list(allowed_host or [])
    if not is_loopback(host):
        err.print(f"[yellow]Warning:[/yellow] listening on {host}: anyone who can reach this machine can play "
                  "games and read every log in the logs folder. There is no authentication.")  # fmt: skip
        if host not in ("0.0.0.0", "::"):
            hosts.append(host)
        if not allowed_host:
            err.print("Only requests addressed to localhost or the listening address are answered; "
                      "add --allowed-host NAME for the name people use.")  # fmt: skip
    try:  # the logs folder is made here: a file in its place is a clear error, not a traceback
        app = create_app(logs, max_games=max_games, max_log_bytes=int(max_log_mb * 1_000_000), study_key=key,
                         allowed_hosts=hosts, max_games_per_client=max_games_per_client)  # fmt: skip
    except OSError as exc:
        err.print(f"[red]Error:[/red] cannot use {logs} as the logs folder: {exc.strerror or exc}", soft_wrap=True)
        raise typer.Exit(2) from None
    url = f"http://{'[' + host + ']' if ':' in host else host}:{port}/"
    mode = ", study mode: sealed test instances" if key is not None else ""
    console.print(f"discoverylab UI: [bold]{url}[/bold]  (logs: {logs}{mode})  Ctrl+C stops it.")
    if open_browser:
        webbrowser.open(url)
    _serve(app, host, port)


def replay(
    log: Annotated[Path, typer.Argument(help="a run log (.jsonl) of an agent, oracle or human")],
    gif: Annotated[Path | None, typer.Option("--gif", help="write a captioned GIF here")] = None,
    mp4: Annotated[Path | None, typer.Option("--mp4", help="write a captioned MP4 here")] = None,
    fps: Annotated[float, typer.Option("--fps", min=0.1, max=60)] = 2.0,
    grid: Annotated[bool, typer.Option("--grid", help="draw the tile grid")] = False,
    port: Annotated[int, typer.Option("--port", min=0, max=65535)] = 8765,
) -> None:
    """Replay a run log: write a GIF/MP4, or open it in the browser UI (step slider, play/pause)."""
    from discoverylab.ui.replay import LogError, Replay, load_log

    if not log.is_file():
        err.print(f"[red]Error:[/red] no such log file: {log}", soft_wrap=True)
        raise typer.Exit(2)
    try:  # a file that is no run log is said here, not served as a page that cannot show it
        run_log = load_log(log)
    except (LogError, OSError) as exc:
        err.print(f"[red]Error:[/red] {exc}", soft_wrap=True)
        raise typer.Exit(2) from None
    if gif is None and mp4 is None:
        from discoverylab.ui.server import create_app

        app = create_app(log.parent, only_log=log.name)  # that log only: no siblings, no games
        url = f"http://127.0.0.1:{port}/replay?log={quote(log.name)}"
        console.print(f"Replay of {log.name}: [bold]{url}[/bold]  Ctrl+C stops it.")
        _serve(app, "127.0.0.1", port)
        return
    from discoverylab.ui.video import write_gif, write_mp4

    try:
        rp = Replay.build(run_log)
    except (LogError, OSError) as exc:
        err.print(f"[red]Error:[/red] {exc}", soft_wrap=True)
        raise typer.Exit(2) from None
    if rp.diverged_at is not None:
        err.print(f"[yellow]Warning:[/yellow] the replay differs from the log from step {rp.diverged_at} "
                  "(a log from another simulator version?).")  # fmt: skip
    for out, writer in ((gif, write_gif), (mp4, write_mp4)):
        if out is not None:
            try:  # a folder or a read-only place: say so, not a traceback
                if out.is_dir():
                    raise IsADirectoryError(21, "it is a folder", str(out))
                frames = writer(rp, out, fps=fps, grid=grid)
            except OSError as exc:
                err.print(f"[red]Error:[/red] cannot write {out}: {exc.strerror or exc}", soft_wrap=True)
                raise typer.Exit(2) from None
            console.print(f"wrote {out} ({frames} frames)", soft_wrap=True)


def _serve(app: object, host: str, port: int) -> None:
    """Serve until Ctrl-C or SIGTERM, then exit 130 or 143 as `env-serve`, `run` and `bench` do
    (uvicorn's own re-raised Ctrl-C ended the command with status 0)."""
    import signal

    from discoverylab.bench.exits import server_stopped
    from discoverylab.serving import serve_until_signal

    stopped_by = serve_until_signal(app, host, port)
    if stopped_by is not None:
        code = server_stopped(stopped_by)
        err.print(f"UI server stopped ({signal.Signals(stopped_by).name})")
        raise typer.Exit(code)
