"""`discoverylab env-serve` and `discoverylab export-sft` (registered by `discoverylab.cli.main`)."""

from __future__ import annotations

import signal
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
    out: Annotated[Path | None, typer.Option("--out", help="write the server's own record of every episode that "
                                             "ends here (results.jsonl, logs/, run.json, labs/), as the runner "
                                             "does: `discoverylab report/audit/judge` read it")] = None,
    ledger: Annotated[Path | None, typer.Option("--ledger", help="with a key: the file of sealed instances already "
                                                "played, kept across restarts (default: $XDG_STATE_HOME/discoverylab/"
                                                "env-serve-played-KEYID.jsonl)")] = None,
) -> None:
    """Serve episodes to remote agents: HTTP sessions (reset/step/state), OpenEnv's WebSocket /ws and MCP at /mcp."""
    from rich.markup import escape

    from discoverylab.bench.exits import server_stopped
    from discoverylab.bench.rundir import RunConfigMismatch, RunDirError, RunLocked
    from discoverylab.instances import InstanceError, key_id, load_key
    from discoverylab.server import app
    from discoverylab.server.ledger import FileLedger, LedgerError, ledger_path

    try:
        key = load_key(eval_key_file)
        kid = key_id(key) if key is not None else None
        # each sealed instance plays once, across restarts too: the ledger is read back from its file
        path = ledger_path(kid, ledger, "--ledger", "--eval-key-file")
        played = FileLedger(path, kid) if path is not None and kid is not None else None
    except (InstanceError, LedgerError) as exc:
        err.print(f"[red]Error:[/red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None
    err.print(f"env server on http://{host}:{port} (OpenEnv WebSocket: ws://{host}:{port}/ws; MCP: http://{host}:{port}/mcp)")
    # which test set clients play (the fingerprint is run.json's eval_key_id), or that none is served
    if played is not None:
        err.print(f"test split: sealed, key {played.key_id}; each instance plays once: {len(played)} played "
                  f"(ledger {escape(str(played.path))})", soft_wrap=True)  # fmt: skip
    else:
        err.print("test split: not served (no evaluation key)")
    if out is not None:
        err.print(f"records: {out} (results.jsonl, logs/, labs/; read with `discoverylab report {out}`)", soft_wrap=True)
    try:
        stopped_by = app.serve(host, port, max_sessions=max_sessions, ttl_s=ttl, max_body=max_body, key=key,
                               out=out, ledger=played)  # fmt: skip
    except (RunDirError, RunLocked, RunConfigMismatch) as exc:  # --out checked and locked before serving
        err.print(f"[red]Error:[/red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None
    finally:
        if played is not None:
            played.close()  # the server stopped: its hold on the ledger goes (the claims are on disk)
    if stopped_by is not None:  # Ctrl-C 130, SIGTERM 143, as `run` and `bench` end when stopped
        code = server_stopped(stopped_by)
        err.print(f"env server stopped ({signal.Signals(stopped_by).name})")
        raise typer.Exit(code)


def export_sft(
    out: Annotated[Path, typer.Option("--out", "-o", help="the JSONL file to write")] = Path("sft.jsonl"),
    agent: Annotated[str, typer.Option("--agent", "-a", help="the expert whose episodes are exported")] = "oracle",
    suite: Annotated[str, typer.Option("--suite", help="unit, discovery, tutorial or all")] = "all",
    task: Annotated[str | None, typer.Option("--task", "-t", help="only this task (all its difficulties)")] = None,
    difficulty: Annotated[str | None, typer.Option("--difficulty", "-d")] = None,
    split: Annotated[str | None, typer.Option("--split", help="train or dev (instance indices in --seeds); "
                                              "the sealed test split is never exported")] = "train",
    seeds: Annotated[str, typer.Option("--seeds", help="e.g. 0-9 or 0,2,5 (indices of --split)")] = "0-9",
    only_success: Annotated[bool, typer.Option("--only-success/--all-episodes", help="keep only solved episodes")] = True,
    max_turns: Annotated[int | None, typer.Option("--max-turns", min=1, help="cut episodes into windows of at most "
                                                  "this many assistant turns (for short training contexts)")] = None,
) -> None:
    """Write expert trajectories for supervised fine-tuning: chat `messages` JSONL (see docs/integrations.md)."""
    import json
    import os

    from discoverylab.agents import AGENT_NAMES
    from discoverylab.bench.exits import EXIT_IO
    from discoverylab.bench.runner import parse_seeds, suite_tasks
    from discoverylab.bench.sft_export import episode_conversation, instances, tokens, windows
    from discoverylab.instances import InstanceError

    try:
        if agent not in AGENT_NAMES:
            raise ValueError(f"Unknown agent {agent!r}. Valid agents: {', '.join(AGENT_NAMES)}.")
        if out.is_dir() or not out.parent.is_dir():  # found before the episodes, not when writing their first line
            raise ValueError(f"--out {out} must name a file in an existing folder.")
        pairs = suite_tasks(suite, difficulty)
        if task is not None:
            from discoverylab.scenarios.registry import get_task

            task_id = get_task(task).task_id
            pairs = [(tid, diff) for tid, diff in pairs if tid == task_id]
        todo = list(instances(pairs, split, parse_seeds(seeds)))
    except (ValueError, InstanceError) as exc:
        err.print(f"[red]Error:[/red] {exc}", soft_wrap=True)
        raise typer.Exit(2) from None
    if not todo:
        err.print("[red]Error:[/red] no instances: check --suite, --task and --difficulty.")
        raise typer.Exit(2)
    kept = total_tokens = 0
    # Written beside `out` and moved over it at the end: a failed or interrupted export leaves an
    # earlier file of that name as it was, never half of a new one.
    part = out.with_name(f".{out.name}.part-{os.getpid()}")
    try:
        with part.open("w", encoding="utf-8") as f:
            for inst in todo:
                example = episode_conversation(inst, agent)
                if only_success and not example["metadata"]["success"]:
                    err.print(f"skipped {inst.task}/{inst.difficulty}/{inst.label}: not solved")
                    continue
                for piece in windows(example, max_turns) if max_turns else [example]:
                    f.write(json.dumps(piece, ensure_ascii=False) + "\n")
                    kept += 1
                    total_tokens += tokens(piece)
        os.replace(part, out)
    except OSError as exc:
        err.print(f"[red]Error:[/red] writing {out} failed: {exc.strerror or exc}; nothing was written there.", soft_wrap=True)
        raise typer.Exit(EXIT_IO) from None
    finally:
        part.unlink(missing_ok=True)
    err.print(f"wrote {kept} conversations (~{total_tokens} tokens) to {out}")
