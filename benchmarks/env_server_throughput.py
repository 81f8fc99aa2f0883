"""Env server throughput: S concurrent sessions, each a client thread stepping its own world.

    PYTHONPATH=src python benchmarks/env_server_throughput.py [--sessions 1 16 64] [--seconds 10] [--task PickAndPlaceTest]
    PYTHONPATH=src python benchmarks/env_server_throughput.py --ray 16 --sessions 64   # one Ray actor per 16 sessions

The server runs as `discoverylab env-serve` in its own process (one uvicorn worker); the clients
run in this process (httpx, keep-alive), so on a 2-core machine clients and server share the
cores, as they would on one box. Reports total steps/s (sessions x steps/s), the median and p95
step latency as a client sees it, and the server's resident memory after each run.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def run(url: str, sessions: int, seconds: float, task: str) -> dict[str, Any]:
    latencies: list[list[float]] = [[] for _ in range(sessions)]
    errors: list[str] = []
    start_gate = threading.Barrier(sessions + 1)
    stop_at = [0.0]

    def client(n: int) -> None:
        with httpx.Client(base_url=url, timeout=120) as http:
            try:
                sid = http.post("/sessions").json()["session_id"]
                reset = http.post(f"/sessions/{sid}/reset", json={"task": task, "seed": n, "max_steps": 100_000})
                if reset.status_code != 200:
                    raise RuntimeError(f"reset answered {reset.status_code}: {reset.text[:300]}")
                start_gate.wait()
            except (threading.BrokenBarrierError, httpx.HTTPError, RuntimeError, KeyError, ValueError) as exc:
                # a session that cannot start must not leave the others (and main) at the gate for ever
                errors.append(f"session {n}: {exc}")
                start_gate.abort()
                return
            while time.perf_counter() < stop_at[0]:
                t0 = time.perf_counter()
                answer = http.post(f"/sessions/{sid}/step", json={"action": {"action": "ROTATE_DIRECTION", "arg1": "north"}})
                if answer.status_code != 200:
                    errors.append(answer.text)
                    break
                latencies[n].append(time.perf_counter() - t0)
            http.delete(f"/sessions/{sid}")

    threads = [threading.Thread(target=client, args=(n,)) for n in range(sessions)]
    for t in threads:
        t.start()
    stop_at[0] = time.perf_counter() + 3600
    try:
        start_gate.wait()
    except threading.BrokenBarrierError:
        for t in threads:
            t.join()
        raise SystemExit(f"env_server_throughput.py: a session could not start: {next(e for e in errors if 'Barrier' not in e)}") from None
    began = time.perf_counter()
    stop_at[0] = began + seconds
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - began
    flat = sorted(x for lat in latencies for x in lat)
    return {"sessions": sessions, "steps": len(flat), "steps_per_s": round(len(flat) / elapsed, 1),
            "latency_ms_p50": round(1000 * statistics.median(flat), 1) if flat else None,
            "latency_ms_p95": round(1000 * flat[int(0.95 * (len(flat) - 1))], 1) if flat else None,
            "errors": len(errors)}


def run_ray(sessions: int, per_actor: int, seconds: float, task: str) -> dict[str, Any]:
    """The same load on Ray: `sessions` sessions over actors of `per_actor`, stepped in lock-step
    (`step_many`: one step in every session per round, the actors working in parallel)."""
    import ray

    from discoverylab.server.ray_sessions import RaySessions

    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)
    try:
        pool = RaySessions(sessions_per_actor=per_actor, num_cpus=0.01)
        sids = [pool.create() for _ in range(sessions)]
        for n, sid in enumerate(sids):
            pool.reset(sid, task=task, seed=n, max_steps=100_000)
        action = {"action": "ROTATE_DIRECTION", "arg1": "north"}
        steps, began = 0, time.perf_counter()
        while time.perf_counter() - began < seconds:
            pool.step_many({sid: action for sid in sids})
            steps += sessions
        elapsed = time.perf_counter() - began
        return {"sessions": sessions, "ray_actors": len(pool.actors), "steps": steps,
                "steps_per_s": round(steps / elapsed, 1), "errors": 0}
    finally:
        ray.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--task", default="PickAndPlaceTest")
    parser.add_argument("--json", default=None)
    parser.add_argument("--ray", type=int, default=0, metavar="N", help="run on Ray instead: one actor per N sessions")
    args = parser.parse_args()
    if min(args.sessions) < 1 or args.seconds <= 0:
        parser.error("--sessions must be counts of at least 1 and --seconds more than 0")
    if args.json and (os.path.isdir(args.json) or not os.path.isdir(os.path.dirname(os.path.abspath(args.json)))):
        parser.error(f"--json {args.json!r}: a file in an existing folder is needed")
    if args.ray:
        for sessions in args.sessions:
            print(json.dumps(run_ray(sessions, args.ray, args.seconds, args.task)), flush=True)
        return
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "discoverylab.cli", "env-serve", "--port", str(port),
                             "--max-sessions", str(max(args.sessions) + 8)], env=os.environ.copy())  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                httpx.get(url + "/health").raise_for_status()
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        rows = []
        for sessions in args.sessions:
            row = run(url, sessions, args.seconds, args.task)
            row["server_rss_mb"] = round(rss_mb(proc.pid), 1)
            rows.append(row)
            print(json.dumps(row), flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=1)
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
