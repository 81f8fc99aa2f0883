"""Terminal play (issue #26): logged like a browser game, objects by name, a command that does
not parse costs no step, teleport names in any case, the task printed once, text printed as is."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from discoverylab.cli import app
from discoverylab.env import DiscoveryWorldEnv
from discoverylab.ui.commands import parse_command
from discoverylab.ui.leaderboard import leaderboard
from discoverylab.ui.replay import Replay, load_log


def _play(tmp_path: Path, task: str, commands: list[str], *extra: str) -> tuple[str, list[dict]]:  # type: ignore[type-arg]
    result = CliRunner().invoke(app, ["play", task, "--logs", str(tmp_path), *extra], input="\n".join(commands) + "\n")
    assert result.exit_code == 0, result.output
    (log,) = tmp_path.glob("*.jsonl")
    return result.output, [json.loads(line) for line in log.read_text().splitlines()]


def _wrong_option(seed: int = 0) -> tuple[str, int, int]:
    """Seed `seed`'s Dialog character (name, UUID) and the number of an option it did not ask for."""
    env = DiscoveryWorldEnv("DialogTest")
    env.reset(seed=seed)
    person = env.scenario.sally  # type: ignore[union-attr]
    env.step({"action": "TELEPORT_TO_OBJECT", "arg1": person.uuid})
    *_, info = env.step({"action": "TALK", "arg1": person.uuid})
    box = info["observation"]["dialog_box"]
    wanted = box["dialogIn"].split("`")[1]
    wrong = next(int(k) for k, v in box["dialogOptions"].items() if v not in (wanted, "Exit"))
    return person.name, person.uuid, wrong


def test_terminal_play_is_logged_like_a_browser_game(tmp_path: Path) -> None:
    name, uuid, wrong = _wrong_option()
    out, lines = _play(tmp_path, "DialogTest", [f"goto {name.lower()}", f"talk {name.upper()}", str(wrong), f"{name} wanted the apple."])
    assert [x["type"] for x in lines] == ["start", "step", "step", "step", "end", "end"]  # the outcome, then the report
    assert "Episode over: FAILURE." in out and lines[-1]["record"]["success"] is False
    assert lines[0]["agent"] == "human" and all("time" in x and "elapsed_s" in x for x in lines)
    assert lines[1]["action"] == {"action": "TELEPORT_TO_OBJECT", "arg1": uuid}  # by name
    assert lines[-1]["knowledge"]["report"] == f"{name} wanted the apple."
    assert Replay.build(load_log(next(tmp_path.glob("*.jsonl")))).diverged_at is None
    assert leaderboard(tmp_path)["rows"][0]["cells"]["human"]["n"] == 1
    assert "Log:" in out


def test_a_file_as_the_logs_folder_is_a_clear_error(tmp_path: Path) -> None:
    """`play --logs FILE` was a FileExistsError traceback, exit 1."""
    (tmp_path / "afile").write_text("x")
    result = CliRunner().invoke(app, ["play", "DialogTest", "--logs", str(tmp_path / "afile")], input="quit\n")
    assert result.exit_code == 2 and "cannot use" in result.output, result.output


def test_leaving_before_the_first_move_shows_no_scorecard(tmp_path: Path) -> None:
    """Quitting at step 0 leaves no log (never played) but printed the full scorecard (the gold's
    item names), and a later game on that seed was no replay: a free look at the answer."""
    result = CliRunner().invoke(app, ["play", "SpaceSick", "-d", "easy", "--seed", "2", "--logs", str(tmp_path)],
                                input="quit\n\n\n")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert not list(tmp_path.glob("*.jsonl")) and "Scorecard" not in result.output
    assert "Nothing was recorded" in result.output


def test_a_command_that_does_not_parse_costs_no_step(tmp_path: Path) -> None:
    """The old terminal sent an unknown verb to the env as an action: a wasted step."""
    out, lines = _play(tmp_path, "DialogTest", ["fly", "take unicorn", "tp NOWHERE", "read sign", "quit"])
    steps = [x for x in lines if x["type"] == "step"]
    assert len(steps) == 1 and steps[0]["action"]["action"] == "READ"
    assert out.count("(no step taken)") == 3
    assert lines[-1]["record"]["status"] == "abandoned"  # left without a report


def test_the_task_is_printed_once_and_text_as_is(tmp_path: Path) -> None:
    out, lines = _play(tmp_path, "DialogTest", ["wait", "goto key", "report The key lies on the table."])
    assert lines[-1]["knowledge"]["report"] == "The key lies on the table." and lines[-1]["record"]["status"] == "ok"
    assert out.count("Task: ") == 1
    assert "(on table [uuid: " in out and "(on table )" not in out  # rich markup swallowed '[uuid: N]'


def test_teleport_names_match_in_any_case() -> None:
    obs = {"teleportLocations": ["Animal Area 1", "Animal Area 2", "Instrument Table"]}
    assert parse_command("tp instrument TABLE", obs)["arg1"] == "Instrument Table"
    assert parse_command("teleport to instr", obs)["arg1"] == "Instrument Table"
    for ambiguous in ("tp animal", "tp zoo"):
        try:
            parse_command(ambiguous, obs)
        except ValueError as exc:
            assert "Animal Area 1" in str(exc)
        else:
            raise AssertionError(f"{ambiguous!r} should not parse")
