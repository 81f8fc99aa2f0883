"""Attack: a remote agent reads a sealed DiscoveryWorld episode's outcome off the server's answers.

Before: env-serve's step result for a sealed episode carried the env's reward (1.0 on a win), its
end's scorecard said `completedSuccessfully` (a sealed unit test's card held its gold too), the
observation text said "succeeded" or "failed", and `state` summed the reward; the OpenEnv socket,
the Ray pool and the Inspect and verifiers adapters play through the same session. Every server
with the evaluator's key plays the same test#N, so a client learnt which way it went.

Each test plays one sealed instance to a win and its twin to a loss (`sealed_outcome_kit`) and
compares the raw answers: equal bytes. The evaluator's records (`--out`) still tell them apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from discoverylab.instances import make_instance
from discoverylab.integrations import common
from discoverylab.server.app import create_app
from discoverylab.server.session import EpisodeSession, ResetRequest, SealedLedger
from sealed_outcome_kit import DIFFICULTY, INDEX, KEY, TASK, lose, oracle_actions
from uvicorn_kit import serve_in_thread

SHEET = {"outlier_species": "echojelly"}
RESET = {"task": TASK, "difficulty": DIFFICULTY, "split": "test", "index": INDEX, "text_format": "lm", "structured": True}


def _session_of(app: Any) -> EpisodeSession:
    (slot,) = app.state.pool.slots.values()
    return slot.session


def _over_http(losing: bool, out: Path) -> tuple[list[bytes], dict[str, Any]]:
    app = create_app(key=KEY, ledger=SealedLedger(), out=out)
    seen: list[bytes] = []
    with serve_in_thread(app, what="the env server") as port, httpx.Client(base_url=f"http://127.0.0.1:{port}") as http:
        sid = http.post("/sessions").json()["session_id"]
        seen.append(http.post(f"/sessions/{sid}/reset", json=RESET).content)
        if losing:
            lose(_session_of(app).env.scenario)
        for action in oracle_actions():
            seen.append(http.post(f"/sessions/{sid}/step", json={"action": action}).content)
        seen += [http.get(f"/sessions/{sid}/state").content, http.get(f"/sessions/{sid}/answer_sheet").content,
                 http.post(f"/sessions/{sid}/answers", json={"answers": SHEET}).content]  # fmt: skip
        http.delete(f"/sessions/{sid}")
    (record,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()][-1:]
    return seen, record


def test_attack_sealed_http_answers_tell_win_from_loss(tmp_path: Path):
    win, win_record = _over_http(False, tmp_path / "win")
    loss, loss_record = _over_http(True, tmp_path / "loss")
    assert win_record["success"] is True and loss_record["success"] is False  # the evaluator's records tell
    ends = [json.loads(win[-4]), json.loads(loss[-4])]
    assert all(end["done"] and end["terminated"] and end["reward"] == 0.0 for end in ends), ends
    assert ends[0]["scorecard"]["completedSuccessfully"] is None
    for step, (a, b) in enumerate(zip(win, loss, strict=True)):
        assert a == b, f"answer {step}: {a[-300:]!r} != {b[-300:]!r}"


def _over_socket(losing: bool) -> list[str]:
    websockets = pytest.importorskip("websockets.sync.client", reason="the websockets package is not installed")
    app = create_app(key=KEY, ledger=SealedLedger())
    seen: list[str] = []
    with serve_in_thread(app, what="the env server") as port, websockets.connect(f"ws://127.0.0.1:{port}/ws") as ws:
        def ask(kind: str, data: Any = None) -> None:
            ws.send(json.dumps({"type": kind, **({} if data is None else {"data": data})}))
            seen.append(str(ws.recv(timeout=60)))

        ask("reset", RESET)
        if losing:
            lose(_session_of(app).env.scenario)
        for action in oracle_actions():
            ask("step", action)
        ask("state")
        ask("step", {"answers": SHEET})
    return seen


def test_attack_sealed_openenv_socket_tells_win_from_loss():
    win, loss = _over_socket(False), _over_socket(True)
    end = json.loads(win[-3])["data"]
    assert end["done"] and end["reward"] == 0.0, end
    assert win == loss


def _adapter_texts(losing: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], dict[str, Any]]:
    """What the Inspect and verifiers adapters hand the model: the first observation, each act's text."""
    monkeypatch.setenv("DISCOVERYLAB_EVAL_KEY", KEY.decode())
    (row,) = common.rows(TASK, difficulty=DIFFICULTY, split="test", indices=str(INDEX))
    session, first = common.start(row)
    if losing:
        lose(session.env.scenario)
    texts = [first] + [common.act(session, **action) for action in oracle_actions()]
    texts.append(str(common.sheet_prompt(session)))
    res = common.results(session, "report", SHEET)  # the harness's scores: the evaluator's
    session.close()
    return texts, res


def test_attack_sealed_inspect_and_verifiers_messages_tell_win_from_loss(monkeypatch: pytest.MonkeyPatch):
    win, win_res = _adapter_texts(False, monkeypatch)
    loss, loss_res = _adapter_texts(True, monkeypatch)
    assert win_res["success"] is True and loss_res["success"] is False  # the scorers still see the truth
    assert common.ENDED in win[-2]
    assert win == loss


def test_attack_sealed_unit_test_end_shows_no_gold():
    """A unit test has no answer sheet, so its sealed end's card was the whole card: its gold (the
    flag's place) and success. Now: the task, decided or not, and the receipt's note."""
    session = EpisodeSession(KEY)
    session.reset(ResetRequest(task="SearchTest", difficulty="normal", split="test", index=0, max_steps=2))
    session.step({"action": "WAIT"})
    end = session.step({"action": "WAIT"})
    assert end.done and end.scorecard is not None
    assert set(end.scorecard) == {"taskName", "taskDescription", "completed", "completedSuccessfully", "graded"}
    assert end.scorecard["completedSuccessfully"] is None and session.state()["scorecard"] == end.scorecard
    assert session.final_card()["criticalHypotheses"]  # the evaluator's card keeps the gold
    assert make_instance("SearchTest", "normal", "test", 0, KEY).sealed
