"""Chaos benchmark (issue 23): hundreds of LLM episodes against a server that fails at random,
while the runner is killed and resumed; the end result must match a quiet run.

    nice -n 10 .venv/bin/python benchmarks/chaos.py [--seeds 0-49] [--kills 6] [--rate 0.2]
        [--workers 2] [--max-steps 3] [--seed 0] [--out runs/chaos]

The "model" is a fake OpenAI-compatible server on 127.0.0.1 (`tests/llm_scripted_server.py`)
whose reply is a function of the conversation only: it picks an action from the request's
schema by a hash of the first two messages, so every run sees the same model. It is a garbage
model (replies off the schema) for one task (`--garbage-task`), whose episodes must end
`agent_error` in every run. The benchmark runs ReAct (`--max-steps`) on the 10 unit tests:

1. a quiet run: the same model, no faults;
2. a chaos run: the same model behind a server that, per request and from its own seeded RNG,
   injects every failure the client classifies (FAULTS: 500, 503 and 429 with and without
   Retry-After, TCP resets, a hang, status and headers sent one byte at a time, a body trickled
   past the deadline, invalid JSON, an HTML page, a 4 MiB reply over a 1 MiB cap, and a reply off
   the action schema on a first ask). The runner is killed `--kills` times (SIGKILL to the
   runner, SIGKILL to its process group, SIGTERM to the group, in turn) at random moments and
   resumed each time, then resumed until a run finishes;
3. checks: every episode has a record; no episode recorded `ok` twice or redone after `ok`; no
   `error` (crash) status; every `ok` episode's result (status, steps, scores, scorecard,
   knowledge, actions in its log) equals the quiet run's; `agent_error` exactly where the quiet
   run has it; every `llm_error`/`timeout` names an injected fault;
4. one more resume with the faults off: then every episode equals the quiet run.

Prints a summary and writes `<out>/chaos_summary.json`; exit 1 when a check fails.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the one fake server of the project

from llm_scripted_server import Scripted, ScriptedLLMServer, chat_reply, error_body  # noqa: E402

OFF_SCHEMA = '{"nonsense": true}'
CAP_BYTES = 2**20
FAULTS: dict[str, Any] = {  # kind -> the answer (the body is the model's reply where one is sent)
    "500": lambda body: Scripted(status=500, body=error_body("injected 500")),
    "503": lambda body: Scripted(status=503, body=error_body("injected 503")),
    "503-retry-after": lambda body: Scripted(status=503, body=error_body("busy"), headers={"retry-after": "1"}),
    "429": lambda body: Scripted(status=429, body=error_body("injected 429")),
    "429-retry-after": lambda body: Scripted(status=429, body=error_body("slow down"), headers={"retry-after": "1"}),
    "reset": lambda body: Scripted(reset=True),
    "hang": lambda body: Scripted(body=body, hang=60.0),
    "slow-headers": lambda body: Scripted(body=body, slow_headers=0.2),
    "trickle": lambda body: Scripted(body=body, trickle=0.1),
    "invalid-json": lambda body: Scripted(body='{"id": "chatcmpl-1", "choices": [{"mess'),
    "html": lambda body: Scripted(body="<html><body><h1>502 Bad Gateway</h1></body></html>", content_type="text/html"),
    "huge": lambda body: Scripted(huge=4 * CAP_BYTES, declare_length=False),
    "off-schema": lambda body: Scripted(body=chat_reply(OFF_SCHEMA)),
}
# What an episode that failed because of the server may say (its `error` names the fault).
FAULT_SIGNS = ("gave up after", "500", "503", "429", "capped at", "not a chat completion", "JSON", "Connection",
               "connection", "reset", "passed its deadline", "HTML", "html")
KILLS = ("SIGKILL-runner", "SIGKILL-group", "SIGTERM-group")
VOLATILE = ("seconds", "usage", "llm")  # time and accounting: retries and re-asks are paid for truthfully


class ChaosModel:
    """A deterministic model: the reply depends on the first two messages of the request only."""

    def __init__(self, garbage_task: str) -> None:
        self.garbage_task = garbage_task

    def reply(self, request: dict[str, Any]) -> str:
        messages = request.get("messages") or []
        user = next((str(m.get("content", "")) for m in messages if m.get("role") == "user"), "")
        if self.garbage_task and self.garbage_task in user.split("\n\n", 1)[0]:
            return OFF_SCHEMA
        digest = int(hashlib.sha256(json.dumps(messages[:2], sort_keys=True).encode()).hexdigest()[:15], 16)
        schema = ((request.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
        props = schema.get("properties") or {}
        reply: dict[str, Any] = {"thought": f"idea {digest % 997}"}
        if "chosen_dialog_option_int" in props:
            options = props["chosen_dialog_option_int"].get("enum") or [1]
            reply["chosen_dialog_option_int"] = options[digest % len(options)]
        else:
            names = (props.get("action") or {}).get("enum") or ["WAIT"]
            reply.update(action=names[digest % len(names)], arg1=None, arg2=None)
        return json.dumps(reply)


class ChaosServer:
    """The model behind a server that injects a fault into a share `rate` of the requests."""

    def __init__(self, model: ChaosModel, rate: float, seed: int) -> None:
        self.model, self.rate = model, rate
        self.rng = random.Random(seed)
        self.injected: Counter[str] = Counter()
        self._lock = threading.Lock()
        self.server = ScriptedLLMServer(models=("chaos-model",))
        self.server.responder = self.answer

    def answer(self, request: dict[str, Any]) -> Scripted:
        body = chat_reply(self.model.reply(request), model="chaos-model")
        with self._lock:
            kind = self.rng.choice(sorted(FAULTS)) if self.rate and self.rng.random() < self.rate else None
            if kind == "off-schema" and len(request.get("messages") or []) != 2:
                kind = None  # only on a first ask: the re-ask gets the model's own reply
            if self.rate:
                self.injected[kind or "none"] += 1
            self.server.requests.clear()  # keep no history: the benchmark sends many thousands
            self.server.headers.clear()
        return FAULTS[kind](body) if kind else Scripted(body=body)

    def __enter__(self) -> ChaosServer:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()


def runner_args(args: argparse.Namespace, base_url: str, out: Path) -> list[str]:
    return [sys.executable, "-m", "discoverylab.cli", "bench", "--suite", "unit", "--agent", "react",
            "--seeds", args.seeds, "--max-steps", str(args.max_steps), "--workers", str(args.workers),
            "--no-judge", "--base-url", base_url, "--model", "chaos-model",
            "--request-timeout", str(args.request_timeout), "--episode-timeout", str(args.episode_timeout),
            "--out", str(out)]  # fmt: skip


def run_once(args: argparse.Namespace, base_url: str, out: Path, kill: str | None = None,
             after: float = 0.0) -> tuple[int, str]:  # fmt: skip
    """One runner process (in its own session); `kill` it `after` seconds. Returns (exit code, stderr)."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "DISCOVERYLAB_LLM_MAX_REPLY_BYTES": str(CAP_BYTES), "COLUMNS": "200"}  # fmt: skip
    with open(out.parent / f"{out.name}.stderr.log", "ab") as log:
        proc = subprocess.Popen(runner_args(args, base_url, out), env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
        timer = None
        if kill is not None:
            sig = signal.SIGTERM if kill.startswith("SIGTERM") else signal.SIGKILL
            target = (lambda: os.killpg(proc.pid, sig)) if kill.endswith("group") else (lambda: os.kill(proc.pid, sig))
            timer = threading.Timer(after, _quietly, (target,))
            timer.start()
        _, err = proc.communicate()
        if timer is not None:
            timer.cancel()
        log.write(err)
    _wait_group_gone(proc.pid)
    return proc.returncode, err.decode("utf-8", "replace")


def _quietly(action: Any) -> None:
    try:
        action()
    except ProcessLookupError:
        pass  # it had finished already


def _wait_group_gone(pgid: int, limit: float = 20.0) -> None:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)


def read_results(out: Path) -> list[dict[str, Any]]:
    path = out / "results.jsonl"
    rows = []
    for raw in path.read_bytes().split(b"\n") if path.exists() else []:
        try:
            rows.append(json.loads(raw))
        except ValueError:
            continue  # a torn line: the runner reports and redoes it
    return rows


def key(row: dict[str, Any]) -> tuple[str, str, int, str]:
    return (row["task"], row["difficulty"], row["seed"], row["agent"])


def comparable(row: dict[str, Any], out: Path) -> dict[str, Any]:
    """The episode's result without time and accounting, plus the actions its log shows."""
    kept = {k: v for k, v in row.items() if k not in VOLATILE}
    log = out / "logs" / f"{row['task']}-{row['difficulty']}-s{row['seed']}-{row['agent']}.jsonl"
    if row.get("status") == "ok":
        entries = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        kept["actions"] = [e.get("action") for e in entries if e.get("type") == "step"]
    return kept


def check(quiet: Path, chaos: Path, expected: int, *, final: bool) -> tuple[dict[str, Any], list[str]]:
    """Compare a chaos run folder with the quiet one; returns (figures, problems)."""
    problems: list[str] = []
    quiet_rows = {key(r): r for r in read_results(quiet)}
    rows = read_results(chaos)
    latest: dict[Any, dict[str, Any]] = {}
    ok_lines: Counter[Any] = Counter()
    for row in rows:
        k = key(row)
        if k in latest and latest[k].get("status") == "ok":
            problems.append(f"{k} was redone after an ok record")
        if row.get("status") == "ok":
            ok_lines[k] += 1
        latest[k] = row
    if len(latest) != expected or set(latest) != set(quiet_rows):
        problems.append(f"{len(latest)} episodes recorded, {expected} expected (lost or extra episodes)")
    problems += [f"{k} recorded ok {n} times" for k, n in ok_lines.items() if n > 1]
    statuses = Counter(r.get("status") for r in latest.values())
    for k, row in latest.items():
        status, want = row.get("status"), quiet_rows.get(k, {})
        if status == "ok" and comparable(row, chaos) != comparable(want, quiet):
            problems.append(f"{k}: ok but its result differs from the quiet run")
        elif status == "agent_error" and want.get("status") != "agent_error":
            problems.append(f"{k}: agent_error, but the quiet run (same model) says {want.get('status')}")
        elif status in ("llm_error", "timeout") and not any(s in (row.get("error") or "") for s in FAULT_SIGNS):
            problems.append(f"{k}: {status} naming no injected fault: {(row.get('error') or '')[:200]}")
        elif status not in ("ok", "agent_error", "llm_error", "timeout"):
            problems.append(f"{k}: status {status}: {(row.get('error') or '')[:200]}")
        if final and status in ("llm_error", "timeout"):
            problems.append(f"{k}: still {status} after the quiet resume")
    figures = {"episodes": len(latest), "lines": len(rows), "statuses": dict(sorted(statuses.items())),
               "equal_to_quiet": sum(comparable(r, chaos) == comparable(quiet_rows.get(k, {}), quiet)
                                     for k, r in latest.items())}  # fmt: skip
    return figures, problems


def garbage_problems(quiet: Path, garbage_task: str) -> list[str]:
    """A `--garbage-task` that no task's text holds (a misspelling) leaves no `agent_error`
    episode to check, and the run passed as if the check had held."""
    if garbage_task and not any(r.get("status") == "agent_error" for r in read_results(quiet)):
        return [f"--garbage-task {garbage_task!r}: no episode of the quiet run ended agent_error (no task text holds "
                "these words?), so the agent_error check tested nothing"]
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="0-49")
    parser.add_argument("--kills", type=int, default=6)
    parser.add_argument("--rate", type=float, default=0.2, help="share of requests that get a fault")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-steps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0, help="seeds the faults and the kill times")
    parser.add_argument("--request-timeout", type=float, default=4.0)
    parser.add_argument("--episode-timeout", type=float, default=60.0)
    parser.add_argument("--kill-after", type=float, nargs=2, default=(5.0, 40.0), help="kill window in seconds")
    parser.add_argument("--garbage-task", default="Discovery Feed", help="words of the task text the model answers with garbage")
    parser.add_argument("--max-rounds", type=int, default=40)
    parser.add_argument("--out", type=Path, default=Path("runs/chaos"))
    args = parser.parse_args(argv)
    if args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {str(args.out)!r} is a file: it names the folder of the runs and chaos_summary.json")
    import shutil

    from discoverylab.bench.runner import parse_seed_ranges, suite_tasks

    expected = len(suite_tasks("unit")) * len(parse_seed_ranges(args.seeds))
    quiet_dir, chaos_dir = args.out / "quiet", args.out / "chaos"
    for folder in (quiet_dir, chaos_dir):
        shutil.rmtree(folder, ignore_errors=True)
    args.out.mkdir(parents=True, exist_ok=True)
    model = ChaosModel(args.garbage_task)
    plan = random.Random(args.seed)
    rounds: list[dict[str, Any]] = []
    started = time.monotonic()
    # One server (one address, so one run config) for every phase; only its fault rate changes.
    with ChaosServer(model, 0.0, args.seed) as server:
        url = server.server.base_url
        t0 = time.monotonic()
        code, _ = run_once(args, url, quiet_dir)
        quiet_s = time.monotonic() - t0
        rounds.append({"run": "quiet", "exit": code, "seconds": round(quiet_s, 1)})
        server.rate = args.rate
        for i in range(args.kills):
            how, after = KILLS[i % len(KILLS)], plan.uniform(*args.kill_after)
            code, _ = run_once(args, url, chaos_dir, how, after)
            rounds.append({"run": f"chaos, {how} after {after:.1f} s", "exit": code,
                           "recorded": len(read_results(chaos_dir))})  # fmt: skip
        for _ in range(args.max_rounds):
            code, err = run_once(args, url, chaos_dir)
            rounds.append({"run": "chaos, to the end", "exit": code, "recorded": len(read_results(chaos_dir))})
            # Done when a run ended by itself and every episode has a record (a run the circuit
            # breaker stopped counts once nothing is left unrecorded: a failed episode is redone
            # on every resume, and under chaos the last ones may keep failing three in a row).
            everything = len({key(r) for r in read_results(chaos_dir)}) >= expected
            if code in (0, 1) and ("Circuit breaker" not in err or everything):
                break
        injected = dict(sorted(server.injected.items()))
        chaos_figures, problems = check(quiet_dir, chaos_dir, expected, final=False)
        server.rate = 0.0  # the endpoint is fixed: a resume redoes the failed episodes
        code, _ = run_once(args, url, chaos_dir)
        rounds.append({"run": "quiet resume", "exit": code})
    final_figures, final_problems = check(quiet_dir, chaos_dir, expected, final=True)
    quiet_figures, _ = check(quiet_dir, quiet_dir, expected, final=False)
    summary = {"command": "benchmarks/chaos.py " + " ".join(sys.argv[1:] if argv is None else argv),
               "expected_episodes": expected, "quiet": quiet_figures, "quiet_seconds": round(quiet_s, 1),
               "after_chaos": chaos_figures, "after_quiet_resume": final_figures, "faults_injected": injected,
               "requests": sum(injected.values()), "rounds": rounds,
               "seconds": round(time.monotonic() - started, 1), "problems": garbage_problems(quiet_dir, args.garbage_task) + problems + final_problems}  # fmt: skip
    (args.out / "chaos_summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    print(json.dumps(summary, indent=2, default=str))
    return 1 if summary["problems"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
