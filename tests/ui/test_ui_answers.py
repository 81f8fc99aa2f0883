"""The answer sheet in the UI: the form beside the report, graded exactly at the end, stored as
agents' records store it; mid-game the form holds no answer, and a sheet can be handed in once.
The forms come with `scenarios.answer_forms` (the s8-answers branch): without it the UI has no
sheet, which the first test checks."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.ui.leaderboard import leaderboard
from discoverylab.ui.server import create_app

HAS_FORMS = importlib.util.find_spec("discoverylab.scenarios.answer_forms") is not None
needs_forms = pytest.mark.skipif(not HAS_FORMS, reason="no scenarios.answer_forms in this build")


def _client(logs: Path) -> TestClient:
    return TestClient(create_app(logs), base_url="http://127.0.0.1")


def _new(client: TestClient, task: str, difficulty: str = "easy", seed: int = 0) -> dict[str, Any]:
    response = client.post("/api/games", json={"task": task, "difficulty": difficulty, "seed": seed})
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_a_unit_task_has_no_answer_sheet(tmp_path: Path) -> None:
    client = _client(tmp_path)
    game = _new(client, "DialogTest", "normal")
    assert client.get(f"/api/games/{game['id']}/answer_form").json() == {"form": None}
    done = client.post(f"/api/games/{game['id']}/report", json={"report": "", "answers": {}}).json()
    assert done["finished"] and not (done["answers"] or {}).get("answers_score")


@pytest.mark.parametrize("bad", [{"x": "y" * 201}, {f"f{i}": 1 for i in range(41)}, {"f": [1, "a"]}, {"f": {"a": 1}}, [1, 2]])
def test_bad_answer_sheets_are_422_and_end_nothing(tmp_path: Path, bad: Any) -> None:
    client = _client(tmp_path)
    game = _new(client, "DialogTest", "normal")
    response = client.post(f"/api/games/{game['id']}/report", json={"report": "", "answers": bad})
    assert response.status_code == 422
    assert client.get(f"/api/games/{game['id']}").json()["finished"] is False


@pytest.mark.parametrize("bad", ['{"f": NaN}', '{"f": [1, Infinity]}', '{"f": -Infinity}'])
def test_non_finite_answers_are_422_not_written_into_the_log(tmp_path: Path, bad: str) -> None:
    """NaN / Infinity (which Python's JSON reader accepts) were stored: the log's end line then
    held NaN tokens, which strict JSON readers (jq, JSON.parse) refuse."""
    client = _client(tmp_path)
    game = _new(client, "DialogTest", "normal")
    client.post(f"/api/games/{game['id']}/step", json={"action": "ROTATE_CW"})
    body = '{"report": "x", "answers": ' + bad + "}"
    response = client.post(f"/api/games/{game['id']}/report", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 422 and "finite" in response.json()["detail"]
    assert client.get(f"/api/games/{game['id']}").json()["finished"] is False
    assert "NaN" not in (tmp_path / game["log"]).read_text() and "Infinity" not in (tmp_path / game["log"]).read_text()


@needs_forms
def test_attack_the_mid_game_form_and_state_hold_no_gold(tmp_path: Path) -> None:
    """The form is for any time; its grade (which names the gold) only once the game has ended."""
    from discoverylab.scenarios.answer_forms import answer_gold

    client = _client(tmp_path)
    game = _new(client, "RocketScience", "normal")
    form = client.get(f"/api/games/{game['id']}/answer_form").json()["form"]
    state = client.get(f"/api/games/{game['id']}").json()
    assert form["fields"] and state["answers"] is None
    env = DiscoveryWorldEnv("RocketScience", "normal")
    env.reset(seed=0)
    numbers = [v for v in answer_gold(env).values() if isinstance(v, float)]
    assert numbers and not [v for v in numbers if str(v) in json.dumps([form, state])]


@needs_forms
def test_the_sheet_is_graded_at_the_end_and_kept_in_the_record(tmp_path: Path) -> None:
    from discoverylab.scenarios.answer_forms import answer_gold

    env = DiscoveryWorldEnv("Proteomics", "easy")
    env.reset(seed=0)
    gold = answer_gold(env)
    client = _client(tmp_path)
    right = _new(client, "Proteomics")
    done = client.post(f"/api/games/{right['id']}/report", json={"report": "x", "answers": gold}).json()
    assert done["answers"]["answers_score"] == 1.0 and done["answers"]["answers"] == gold
    record = json.loads((tmp_path / done["log"]).read_text().splitlines()[-1])["record"]
    assert record["answers_score"] == 1.0 and record["answers_grade"]["fields"]
    again = client.post(f"/api/games/{right['id']}/report", json={"report": "y", "answers": gold})
    assert again.status_code == 409  # one sheet per game
    left = _new(client, "Proteomics", seed=1)
    client.post(f"/api/games/{left['id']}/step", json={"action": "WAIT"})
    client.delete(f"/api/games/{left['id']}")  # abandoned: no sheet, 0 as for agents
    human = leaderboard(tmp_path)["rows"][0]["cells"]["human"]
    assert human["n"] == 2 and human["answers"] == 0.5  # (1 + 0) / 2
    resumed = _client(tmp_path).get(f"/api/games/{right['id']}").json()
    assert resumed["answers"]["answers_score"] == 1.0
