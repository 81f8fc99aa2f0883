"""Human game logs, replay of agent/oracle/human logs, videos and the leaderboard."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner
from ui_kit import oracle_log

from discoverylab.bench.episode import run_episode
from discoverylab.bench.records import write_jsonl
from discoverylab.cli import app
from discoverylab.scenarios.proteomics.things import SPECIES
from discoverylab.ui.games import StepRequest
from discoverylab.ui.leaderboard import leaderboard
from discoverylab.ui.manager import GameManager
from discoverylab.ui.replay import LogError, Replay, load_log, parse_log


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_every_human_step_is_on_disk_before_it_is_answered(tmp_path: Path) -> None:
    games = GameManager(tmp_path)
    game = games.create("DialogTest", "normal", 3)
    assert [x["type"] for x in _lines(game.log_path)] == ["start"]
    for n, action in enumerate(({"action": "ROTATE_CW"}, {"action": "WAIT"}, {"action": "MOVE_FORWARD"}), start=1):
        game.step(StepRequest(**action))
        lines = _lines(game.log_path)  # no close, no report: an abandoned game keeps every step
        assert len(lines) == n + 1 and lines[-1]["action"] == action and lines[-1]["step"] == n
    assert lines[0]["agent"] == "human" and lines[0]["seed"] == 3
    replay = Replay.build(load_log(game.log_path))
    assert replay.diverged_at is None and len(replay) == 4 and not replay.summary()["ended"]


def test_report_without_judge_is_stored_ungraded(tmp_path: Path) -> None:
    game = GameManager(tmp_path).create("Proteomics", "easy", 0)
    # Mid-game: task progress only (items name the instrument or the pick; gold names the answer).
    assert set(game.scorecard()) == {"taskName", "taskDescription", "completed", "completedSuccessfully"}
    knowledge = game.finish("The vortisquid is the outlier.", None)
    assert knowledge == {"report": "The vortisquid is the outlier.", "graded": False, "score": None,
                         "verdicts": [], "scorecard_views": 1}  # fmt: skip
    end = _lines(game.log_path)[-1]
    assert end["type"] == "end" and end["knowledge"] == knowledge and end["record"]["agent"] == "human"
    assert "knowledgeQuestions" in game.scorecard()  # full card once the report is in


class KeywordJudge:
    """A stand-in for the LLM judge: yes when the reference facts' outlier is named."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def evaluate(self, question: str, evidence: dict[str, Any]) -> Any:
        self.calls.append((question, evidence))
        species = evidence["Reference facts"][0].split()[1]
        return type("Verdict", (), {"evaluation": int(species in evidence["Agent's knowledge"]), "explanation": "kw"})()


@pytest.mark.parametrize("right", [True, False])
def test_report_is_graded_by_the_agents_judge_when_there_is_one(tmp_path: Path, right: bool) -> None:
    judge = KeywordJudge()
    games = GameManager(tmp_path, judge_factory=lambda: judge)
    game = games.create("Proteomics", "easy", 0)
    answer = game.env.scenario.answer.name  # type: ignore[union-attr]
    named = answer if right else next(sp.name for sp in SPECIES if sp.name != answer)
    report, score = f"It is the {named}.", 1.0 if right else 0.0
    knowledge = game.finish(report, games.judge())
    assert knowledge["graded"] and knowledge["score"] == score and len(judge.calls) == 1
    assert judge.calls[0][1]["Agent's knowledge"] == report


@pytest.mark.parametrize("agent", ["oracle", "random"])
def test_agent_logs_replay_exactly(tmp_path: Path, agent: str) -> None:
    record, log = run_episode("PickAndPlaceTest", "normal", 2, agent, max_steps=40)
    path = tmp_path / "run.jsonl"
    write_jsonl(path, log)
    replay = Replay.build(load_log(path))
    assert replay.diverged_at is None
    assert len(replay) == record.steps + 1
    assert replay.timeline[-1]["score"] == record.procedure_score
    assert [t["action"] for t in replay.timeline[1:]] == [e["action"] for e in log[1:-1]]
    assert replay.scorecard(record.steps)["scoreNormalized"] == record.procedure_score
    png_last, png_first = replay.frame_png(record.steps), replay.frame_png(0)  # backwards: re-simulated
    assert png_first[:8] == b"\x89PNG\r\n\x1a\n" and png_last != png_first or record.steps == 0


def test_a_changed_log_is_flagged_where_it_diverges(tmp_path: Path) -> None:
    path = oracle_log(tmp_path, "DialogTest")
    lines = _lines(path)
    lines[3]["observation"]["lastActionMessage"] = "something else"
    tampered = "\n".join(json.dumps(x) for x in lines) + '\n{"type": "step", "acti'  # and a torn tail
    replay = Replay.build(parse_log(tampered))
    assert replay.diverged_at == 3 and len(replay) == len(lines) - 1


@pytest.mark.parametrize(
    ("text", "needle"),
    [("", "starts with"), ('{"type": "step"}\n', "starts with"), ('{"type": "start", "task": "DialogTest"}\n', "seed"),
     ("[1, 2]\n", "JSON object"), ('not json\n{"type": "start"}\n', "line 1"),
     ('{"type": "start", "task": "DialogTest", "difficulty": "easy", "seed": -1}\n', "0..4294967295"),
     ('{"type": "start", "task": "DialogTest", "difficulty": "easy", "seed": 1e30}\n', "0..4294967295"),
     ('{"type": "start", "task": "DialogTest", "difficulty": "easy", "seed": 1e400}\n', "integer seed")],  # fmt: skip
)
def test_unreadable_logs_raise_log_error(text: str, needle: str) -> None:
    with pytest.raises(LogError, match=needle):
        parse_log(text)


def test_a_log_whose_seed_the_env_refuses_is_a_422_not_a_500(tmp_path: Path) -> None:
    """A start line with seed -1 (or 1e30) passed parsing, then the env's reset raised: a 500."""
    from fastapi.testclient import TestClient

    from discoverylab.ui.server import create_app

    (tmp_path / "neg.jsonl").write_text('{"type": "start", "task": "DialogTest", "difficulty": "easy", "seed": -1}\n')
    client = TestClient(create_app(tmp_path), base_url="http://127.0.0.1", raise_server_exceptions=False)
    for route in ("/api/replay", "/api/replay/scorecard", "/api/replay/frame.png"):
        response = client.get(route, params={"log": "neg.jsonl"})
        assert response.status_code == 422 and "seed" in response.json()["detail"], (route, response.text)


def test_gif_and_mp4_of_an_oracle_run_have_one_frame_per_step(tmp_path: Path) -> None:
    import imageio_ffmpeg
    from PIL import Image

    path = oracle_log(tmp_path, "DialogTest")
    steps = len(_lines(path)) - 2
    result = CliRunner().invoke(app, ["replay", str(path), "--gif", str(tmp_path / "run.gif"),
                                      "--mp4", str(tmp_path / "run.mp4"), "--fps", "4"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"({steps + 1} frames)" in result.output
    with Image.open(tmp_path / "run.gif") as gif:
        assert gif.n_frames == steps + 1 and gif.size == (768, 576)
        assert gif.info["duration"] == 250
    frames, _ = imageio_ffmpeg.count_frames_and_secs(str(tmp_path / "run.mp4"))
    assert frames == steps + 1
    reader = imageio_ffmpeg.read_frames(str(tmp_path / "run.mp4"))
    meta = next(reader)
    reader.close()
    assert tuple(meta["size"]) == (768, 576)


def test_replay_cli_refuses_missing_and_bad_logs(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["replay", str(tmp_path / "nope.jsonl"), "--gif", str(tmp_path / "x.gif")])
    assert result.exit_code == 2 and "no such log" in result.output.lower()
    (tmp_path / "bad.jsonl").write_text("oops\n")
    result = CliRunner().invoke(app, ["replay", str(tmp_path / "bad.jsonl"), "--gif", str(tmp_path / "x.gif")])
    assert result.exit_code == 2 and "not JSON" in result.output


@pytest.mark.parametrize("flag", ["--gif", "--mp4"])
def test_replay_cli_says_when_it_cannot_write_the_video(tmp_path: Path, flag: str) -> None:
    """A folder given as the output was a traceback (IsADirectoryError), exit 1."""
    path = oracle_log(tmp_path, "DialogTest")
    (tmp_path / "taken").mkdir()
    result = CliRunner().invoke(app, ["replay", str(path), flag, str(tmp_path / "taken")])
    assert result.exit_code == 2 and "cannot write" in result.output, result.output


def test_leaderboard_puts_humans_beside_agents(tmp_path: Path) -> None:
    oracle_log(tmp_path / "runs" / "logs", "DialogTest")
    run, log = run_episode("DialogTest", "normal", 1, "random", max_steps=5)
    write_jsonl(tmp_path / "runs" / "logs" / "random.jsonl", log)
    games = GameManager(tmp_path)
    done = games.create("DialogTest", "normal", 2)  # a seed no agent's log in the folder shows
    done.finish("nothing learned", None)
    games.create("DialogTest", "normal", 3)  # in progress: not counted while it is live
    (tmp_path / "results.jsonl").write_text("{}\n")
    board = leaderboard(tmp_path, games.live_logs())
    assert board["agents"] == ["human", "oracle", "random"]
    (row,) = board["rows"]
    assert row["task"] == "DialogTest"
    human = row["cells"]["human"]
    assert human.pop("minutes") >= 0.0  # human games carry their session time (Table 6's time column)
    assert human == {"n": 1, "procedure": 0.0, "completion": 0.0, "knowledge": None, "graded": 0, "answers": None}
    assert row["cells"]["oracle"]["completion"] == 1.0 and row["cells"]["oracle"]["procedure"] == 1.0
    assert row["cells"]["random"]["procedure"] == run.procedure_score
