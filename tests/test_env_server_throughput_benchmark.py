"""`benchmarks/env_server_throughput.py` when a session cannot start (a misspelt `--task`: the
server answers 400 to its reset): the client thread died before the start gate, and the others
and the main thread waited at that gate for ever. Now the run ends with the server's reason."""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest

from bench_loader import load_benchmark, main_exit_code

throughput = load_benchmark("env_server_throughput.py", "env_server_throughput_bench")


def test_a_session_that_cannot_start_ends_the_run_with_the_server_s_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    def server(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/sessions":
            return httpx.Response(200, json={"session_id": "s"})
        if request.url.path.endswith("/reset"):
            return httpx.Response(400, json={"detail": "Unknown task 'DoorTest'."})
        return httpx.Response(200, json={})

    real_client = httpx.Client
    monkeypatch.setattr(throughput.httpx, "Client", lambda **kw: real_client(transport=httpx.MockTransport(server), **kw))
    outcome: list[Any] = []

    def call() -> None:
        try:
            throughput.run("http://test", 2, 0.1, "DoorTest")
        except SystemExit as exc:
            outcome.append(exc)

    caller = threading.Thread(target=call, daemon=True)  # daemon: a regression hangs only this thread
    caller.start()
    caller.join(timeout=20)
    assert not caller.is_alive(), "run() waited at the start gate for ever"
    assert outcome and "Unknown task 'DoorTest'" in str(outcome[0].code)


@pytest.mark.parametrize("argv", [["--sessions", "0"], ["--seconds", "0"], ["--json", "."]])
def test_bad_arguments_are_usage_errors_before_the_server_starts(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ["env_server_throughput.py", *argv]
    assert main_exit_code(monkeypatch, throughput.main, argv, (throughput.subprocess, "Popen")) == 2
