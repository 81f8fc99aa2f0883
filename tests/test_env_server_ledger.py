"""Attack: restart the env server to play a sealed instance again.

Each sealed test instance plays once per server: its end reveals the gold, which a replay could
copy, or use to probe the answer sheet again. The ledger of played instances lived in the process,
so a restarted `env-serve` (a crash, a redeploy, or a client that asked for one) let test#N be
played again. With a key, `env-serve` now keeps the ledger in an append-only file (fsync'd, read at
start; `--ledger FILE`, by default under $XDG_STATE_HOME), so the restarted server refuses it too.
(conftest gives each test its own $XDG_STATE_HOME.)
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from discoverylab.cli import app
from discoverylab.instances import KEY_ENV, key_id
from discoverylab.server.client import EnvServerClient, EnvServerError
from env_server_kit import running_env_server

KEY = b"l" * 32
LAB = "sequence/hidden-property"


@pytest.fixture
def serve_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """`env-serve` runs to the point of serving; then its app serves on a thread while the test's
    `during(url)` (popped from `DURING`) plays, and stops, as a real server would."""
    monkeypatch.setenv(KEY_ENV, KEY.decode())
    started: list[dict[str, Any]] = []

    def serve(*_args: Any, **options: Any) -> None:
        started.append(options)
        if DURING:
            with running_env_server(**options) as (url, _), EnvServerClient(url) as env:
                DURING.pop(0)(env)

    monkeypatch.setattr("discoverylab.server.app.serve", serve)
    DURING.clear()
    return started


DURING: list[Callable[[EnvServerClient], None]] = []


def _serve_once(*args: str, during: Callable[[EnvServerClient], None] | None = None) -> str:
    if during is not None:
        DURING.append(during)
    result = CliRunner().invoke(app, ["env-serve", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_a_restarted_server_still_refuses_a_played_sealed_instance(serve_calls: list[dict[str, Any]],
                                                                     tmp_path: Path) -> None:
    def first(env: EnvServerClient) -> None:
        env.reset(LAB, split="test", index=7, difficulty="")

    def second(env: EnvServerClient) -> None:
        with pytest.raises(EnvServerError) as refused:
            env.reset(LAB, split="test", index=7, difficulty="")
        assert refused.value.status == 409 and "plays once" in str(refused.value)
        assert env.reset(LAB, split="test", index=8, difficulty="").instance["index"] == 8

    _serve_once(during=first)
    said = _serve_once(during=second)  # a restart: a new process would read the same file
    assert "1 played" in said, said
    path = Path(os.environ["XDG_STATE_HOME"]) / "discoverylab" / f"env-serve-played-{key_id(KEY)}.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(r["task"], r["index"], r["key_id"]) for r in rows] == [(LAB, 7, key_id(KEY)), (LAB, 8, key_id(KEY))]
    assert KEY.decode() not in path.read_text()


def test_a_ledger_the_server_cannot_trust_is_refused_at_start(serve_calls: list[dict[str, Any]], tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from discoverylab.server.ledger import FileLedger

    ledger = tmp_path / "played.jsonl"
    held = FileLedger(ledger, key_id(KEY))  # another server holds it
    busy = CliRunner().invoke(app, ["env-serve", "--ledger", str(ledger)])
    assert busy.exit_code == 2 and "in use" in busy.output and "Traceback" not in busy.output, busy.output
    held.close()
    ledger.write_text('{"task": "x", "difficulty": "", "index": 1, "key_id": "0000000000000000"}\n')
    other = CliRunner().invoke(app, ["env-serve", "--ledger", str(ledger)])
    assert other.exit_code == 2 and "another key" in other.output, other.output
    ledger.write_text("not json\n")
    bad = CliRunner().invoke(app, ["env-serve", "--ledger", str(ledger)])
    assert bad.exit_code == 2 and "line 1" in bad.output, bad.output
    # a line torn by a kill mid-write is cut (its reset was never answered), the rest is kept
    good = json.dumps({"task": LAB, "difficulty": "", "index": 3, "key_id": key_id(KEY)})
    ledger.write_text(good + '\n{"task": "sequ')
    assert "1 played" in _serve_once("--ledger", str(ledger)) and ledger.read_text() == good + "\n"
    monkeypatch.delenv(KEY_ENV)
    keyless = CliRunner().invoke(app, ["env-serve", "--ledger", str(ledger)])
    assert keyless.exit_code == 2 and "--ledger" in keyless.output, keyless.output


def test_a_claim_the_disk_refuses_is_not_played_and_leaves_the_ledger_whole(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk at the claim: the reset gets a 503 (never a played instance the ledger forgot),
    the half-written line is cut back off, and the instance plays once the disk has room."""
    import errno
    import os

    from discoverylab.server import ledger as ledger_module
    from discoverylab.server.ledger import FileLedger

    path = tmp_path / "played.jsonl"
    ledger = FileLedger(path, key_id(KEY))
    assert ledger.claim_name(LAB, "", 1)
    before = path.read_bytes()

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(ledger_module.os, "fsync", full)
    with running_env_server(max_sessions=2, ttl_s=60, key=KEY, ledger=ledger) as (base, _), EnvServerClient(base) as env:
        with pytest.raises(EnvServerError) as refused:
            env.reset(LAB, split="test", index=2, difficulty="")
        assert refused.value.status == 503 and "does not play it" in str(refused.value), refused.value
        assert path.read_bytes() == before
        monkeypatch.undo()
        assert env.reset(LAB, split="test", index=2, difficulty="").instance["index"] == 2
    ledger.close()
    reread = FileLedger(path, key_id(KEY))
    assert len(reread) == 2
    reread.close()


def test_a_ledger_that_cannot_be_written_is_a_start_up_error(serve_calls: list[dict[str, Any]], tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    result = CliRunner().invoke(app, ["env-serve", "--ledger", str(tmp_path / "afile" / "played.jsonl")])
    assert result.exit_code == 2 and "cannot open" in result.output and "--ledger" in result.output, result.output
    assert "Traceback" not in result.output and not serve_calls
