"""Attack: a client of a sealed env server reads the answer off the end's scorecard, then hands it in.

The end of a discovery episode used to send the full scorecard (gold hypotheses, knowledge
questions and the procedural items) in the last step's answer, in `state()` and over OpenEnv's
socket, while the answer sheet was still to be handed in: an agent that waited out its steps
read "the vortisquid ... outliers" and scored 1.0 on the sheet. The gold and the procedural items
(whose scores tell which flag spot or instrument was right) now wait until the sheet is in, and
for a sealed instance they never reach the client: the next server with the same key plays the
same test#N, where a remembered gold would answer it.
"""

from __future__ import annotations

import json

import pytest

from discoverylab.env import GOLD_KEYS, PROCEDURE_KEYS
from discoverylab.server.client import EnvServerClient
from env_server_kit import running_env_server

KEY = b"g" * 32
WITHHELD = GOLD_KEYS + PROCEDURE_KEYS


@pytest.fixture(scope="module")
def url():
    with running_env_server(max_sessions=8, ttl_s=60, key=KEY) as (base, _):
        yield base


def _gold_species(card: dict) -> str | None:
    """What the attacker looks for: the outlier species the gold hypothesis names."""
    text = " ".join(card.get("criticalHypotheses") or [])
    for name in ("animaplant", "echojelly", "prismatic beast", "spheroid", "vortisquid"):
        if f"the {name} has" in text:
            return name
    return None


def test_attack_sealed_end_scorecard_withholds_the_gold_until_the_sheet_is_in(url):
    with EnvServerClient(url) as env:
        result = env.reset("Proteomics", "easy", split="test", index=4, max_steps=2)
        while not result.done:
            result = env.step({"action": "WAIT"})
        seen = [result.scorecard or {}, env.state()["scorecard"]]
        for card in seen:
            assert card["completed"] is not None and "taskDescription" in card  # progress stays
            assert not any(key in card for key in WITHHELD), sorted(card)
            assert _gold_species(card) is None
        assert not any(key in json.dumps(result.model_dump()) for key in GOLD_KEYS + ("scoreCard",))
        receipt = env.hand_in({"outlier_species": "echojelly"})
        assert receipt["received"] is True  # no grade: right or wrong would narrow the answer
        # A sealed instance's gold never reaches the client, even once the sheet is in: the next
        # server with this key plays the same test#4, where a remembered gold would answer it.
        after = env.state()["scorecard"]
        assert not any(key in after for key in WITHHELD) and _gold_species(after) is None
        assert not {"score", "fields", "gold"} & set(receipt), receipt


def test_a_public_instance_shows_its_gold_once_the_sheet_is_in(url):
    with EnvServerClient(url) as env:
        result = env.reset("Proteomics", "easy", split="dev", index=4, max_steps=1)
        result = env.step({"action": "WAIT"})
        assert result.done and not any(key in result.scorecard for key in WITHHELD)
        grade = env.hand_in({"outlier_species": "echojelly"})
        after = env.state()["scorecard"]  # the sheet is in: its grade stands, the gold may be shown
    assert all(key in after for key in WITHHELD) and _gold_species(after) is not None
    assert all("gold" in field for field in grade["fields"])


def test_openenv_socket_end_withholds_the_gold_until_the_sheet_is_in(url):
    websockets = pytest.importorskip("websockets.sync.client", reason="the websockets package is not installed")
    with websockets.connect(url.replace("http://", "ws://") + "/ws") as ws:
        ws.send(json.dumps({"type": "reset", "data": {"task": "Proteomics", "difficulty": "easy", "split": "test",
                                                      "index": 5, "max_steps": 1}}))  # fmt: skip
        assert json.loads(ws.recv(timeout=30))["type"] == "observation"
        ws.send(json.dumps({"type": "step", "data": {"action": "WAIT"}}))
        end = ws.recv(timeout=30)
        ws.send(json.dumps({"type": "state"}))
        state = ws.recv(timeout=30)
    assert json.loads(end)["data"]["done"] is True
    cards = [json.loads(end)["data"]["observation"]["scorecard"], json.loads(state)["data"]["scorecard"]]
    assert all(card and not any(key in card for key in WITHHELD) for card in cards), cards
    assert not any(key in text for key in GOLD_KEYS + ("scoreCard",) for text in (end, state))


def test_a_task_without_a_sheet_shows_its_full_card_at_the_end(url):
    """A public instance's (a sealed one's end shows no card: tests/attacks/test_sealed_outcome_served.py)."""
    with EnvServerClient(url) as env:
        result = env.reset("PickAndPlaceTest", "normal", split="dev", index=0, max_steps=1)
        result = env.step({"action": "WAIT"})
    assert result.done and result.scorecard is not None and "scoreCard" in result.scorecard


def test_a_server_without_a_key_tells_the_client_where_the_key_belongs(monkeypatch):
    """Before: a client asking a keyless server for test#0 was told to "set DISCOVERYLAB_EVAL_KEY or
    pass --eval-key-file FILE", options of the server it cannot reach. The start line now says
    whether the sealed split is served, and with which key (its fingerprint, as in run.json)."""
    from typer.testing import CliRunner

    from discoverylab.cli import app
    from discoverylab.instances import KEY_ENV, key_id
    from discoverylab.server.client import EnvServerError

    monkeypatch.delenv(KEY_ENV, raising=False)
    with running_env_server(max_sessions=2, ttl_s=60) as (base, _), EnvServerClient(base) as env:
        with pytest.raises(EnvServerError) as refused:
            env.reset("Proteomics", "easy", split="test", index=0)
    assert refused.value.status == 400 and "this server holds no evaluation key" in str(refused.value)
    assert "env-serve --eval-key-file" in str(refused.value)

    started: list[dict] = []
    monkeypatch.setattr("discoverylab.server.app.serve", lambda *a, **kw: started.append(kw))
    said = CliRunner().invoke(app, ["env-serve"]).output
    assert "test split: not served (no evaluation key)" in said, said
    monkeypatch.setenv(KEY_ENV, KEY.decode())
    said = CliRunner().invoke(app, ["env-serve"]).output
    assert f"test split: sealed, key {key_id(KEY)}" in said and KEY.decode() not in said, said
    assert started[-1]["key"] == KEY
