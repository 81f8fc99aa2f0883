"""`discoverylab lab ...` run as a user would (typer's runner, real files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from discoverylab.bench import records
from discoverylab.cli import app
from discoverylab.labs.agents import make_agent
from discoverylab.labs.gym_text import lab_gym_id
from discoverylab.labs.protocol import grader_version, make_protocol, protocol_names

runner = CliRunner()
HIDDEN = "sequence/hidden-property"
SMALL_A: dict[str, Any] = {"rounds": 2, "n_predictions": 5}
SMALL_B: dict[str, Any] = {"rounds": 2, "n_heldout": 4, "max_steps": 8, "end_steps": 8, "length": 12}
SMALL_MACRO: dict[str, Any] = {
    "structure": {"n_households": 50, "n_firms": 5}, "budget": 2,
    "ground_truth": {"replicates": 2, "steps": 40, "short_window": [1, 10], "long_window": [21, 40]},
}
REQUIRED = ("lab", "protocol", "seed", "agent", "status", "score", "parts")


def _json_out(output: str) -> Any:
    """The JSON list in the output (the status summary line may follow it)."""
    return json.JSONDecoder().raw_decode(output[output.index("["):])[0]


def test_list_shows_every_protocol() -> None:
    result = runner.invoke(app, ["lab", "list"])
    assert result.exit_code == 0, result.output
    for name in protocol_names():
        assert name in result.output
    result = runner.invoke(app, ["lab", "list", "--json"])
    rows = _json_out(result.output)
    assert [r["protocol"] for r in rows] == protocol_names()
    for row in rows:
        assert row["gym_id"] == lab_gym_id(row["protocol"]) and {"oracle", "random", "heuristic"} <= set(row["agents"])


def test_run_all_json_records(tmp_path: Path) -> None:
    config = {HIDDEN: SMALL_A, "sequence/unknown-dynamics": SMALL_B, "macro/causal-discovery": SMALL_MACRO}
    result = runner.invoke(app, ["lab", "run", "all", "--agent", "random", "--seeds", "0", "--no-plots",
                                 "--out", str(tmp_path), "--config", json.dumps(config), "--json"])
    assert result.exit_code == 0, result.output
    recs = _json_out(result.stdout)
    assert sorted(r["protocol"] for r in recs) == protocol_names()
    for rec in recs:
        assert all(key in rec for key in REQUIRED)
        assert rec["status"] == "ok" and rec["agent"] == "random" and rec["seed"] == 0
        assert 0.0 <= rec["score"] <= 1.0 and rec["parts"]
        assert rec["lab"] == rec["protocol"].split("/")[0]
        assert (tmp_path / rec["transcript"]).exists() and (tmp_path / rec["score_file"]).exists()
    assert not (tmp_path / "plots").exists()


def test_run_table_and_resume_after_a_torn_write(tmp_path: Path) -> None:
    args = ["lab", "run", "sequence/hidden-property", "--agent", "oracle,random", "--seeds", "0-1", "--no-plots",
            "--out", str(tmp_path), "--config", json.dumps(SMALL_A)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "oracle" in result.output and "random" in result.output and "grader parts" in result.output
    results_path = tmp_path / "results.jsonl"
    lines = results_path.read_text().splitlines()
    assert len(lines) == 4
    results_path.write_text("\n".join(lines[:3]) + "\n" + lines[3][:25])  # killed while writing the last one
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    recs = _json_out(result.stdout)
    assert [(r["agent"], r["seed"]) for r in recs] == [("oracle", 0), ("oracle", 1), ("random", 0), ("random", 1)]
    stored = list(records.read_jsonl(results_path))
    assert len(stored) == 4 and len(results_path.read_text().splitlines()) == 4
    assert [r["score"] for r in recs if r["agent"] == "oracle"] == [1.0, 1.0]


def test_run_lab_name_selects_its_protocols() -> None:
    config = {HIDDEN: SMALL_A, "sequence/unknown-dynamics": SMALL_B}
    result = runner.invoke(app, ["lab", "run", "sequence", "--agent", "random", "--seeds", "3", "--config",
                                 json.dumps(config), "--json"])
    assert result.exit_code == 0, result.output
    assert [r["protocol"] for r in _json_out(result.stdout)] == protocol_names("sequence")


def test_bad_names_and_options_give_clear_errors() -> None:
    result = runner.invoke(app, ["lab", "run", "nope"])
    assert result.exit_code == 2 and "neither a protocol nor a lab" in result.output
    result = runner.invoke(app, ["lab", "run", HIDDEN, "--agent", "genius"])
    assert result.exit_code == 2 and "valid agents" in result.output
    result = runner.invoke(app, ["lab", "run", HIDDEN, "--seeds", "5-1"])
    assert result.exit_code == 2 and "seed" in result.output.lower()
    result = runner.invoke(app, ["lab", "run", HIDDEN, "--config", "{not json"])
    assert result.exit_code == 2 and "JSON object" in result.output
    result = runner.invoke(app, ["lab", "run", HIDDEN, "--config", '{"rounds": 0}'])
    assert result.exit_code == 2 and "bad config" in result.output
    result = runner.invoke(app, ["lab", "play", HIDDEN, "--seed", "-1"], input=":quit\n")  # was a ValueError traceback
    assert result.exit_code == 2 and "--seed" in result.output and "Traceback" not in result.output
    result = runner.invoke(app, ["lab", "play", "sequence/nope"])
    assert result.exit_code == 2 and "unknown protocol" in result.output


def _oracle_messages(seed: int) -> list[str]:
    """What the scripted oracle types in this episode (blank lines dropped: they end a message in play)."""
    protocol = make_protocol(HIDDEN, **SMALL_A)
    agent = make_agent(HIDDEN, "oracle", protocol)
    agent.reset(seed)
    message = protocol.reset(seed)
    sent = []
    while not protocol.done:
        text = "\n".join(line for line in agent.act(message).splitlines() if line.strip())
        sent.append(text)
        message = protocol.step(text).text
    assert protocol.grade().score == 1.0
    return sent


def test_play_a_whole_episode_from_stdin(tmp_path: Path) -> None:
    typed = ":help\n\n" + "".join(m + "\n\n" for m in _oracle_messages(2))
    result = runner.invoke(app, ["lab", "play", HIDDEN, "--seed", "2", "--config", json.dumps(SMALL_A),
                                 "--out", str(tmp_path)], input=typed)
    assert result.exit_code == 0, result.output
    assert "empty line sends it" in result.output and "Grade" in result.output
    assert "1.000" in result.output and "stopped" not in result.output
    score = json.loads((tmp_path / "scores" / "sequence-hidden-property-s2-human.json").read_text())
    assert score["score"] == 1.0 and score["agent"] == "human"
    assert score["grader_version"] == grader_version(HIDDEN) and score["config_hash"]  # which grader graded it
    transcript = list(records.read_jsonl(tmp_path / "transcripts" / "sequence-hidden-property-s2-human.jsonl"))
    assert transcript[0]["role"] == "lab" and transcript[-1]["role"] == "lab"


def test_play_handles_end_of_input_and_bad_messages() -> None:
    result = runner.invoke(app, ["lab", "play", HIDDEN, "--config", json.dumps(SMALL_A)], input="this is not an action\n")
    assert result.exit_code == 0, result.output
    assert "stopped" in result.output and "Grade" in result.output
    assert "0.000" in result.output


def test_play_refuses_an_out_that_is_a_file_before_the_episode(tmp_path: Path) -> None:
    """`--out FILE` is refused at once with the reason, not with a traceback after the player's episode."""
    taken = tmp_path / "taken"
    taken.write_text("mine", encoding="utf-8")
    result = runner.invoke(app, ["lab", "play", HIDDEN, "--config", json.dumps(SMALL_A), "--out", str(taken)],
                           input="SAMPLE 0.5\n\n")  # fmt: skip
    assert result.exit_code == 2 and "is a file, not a directory" in result.output
    assert "Round 1" not in result.output and taken.read_text(encoding="utf-8") == "mine"


def test_user_guide_covers_every_protocol_and_gym_id() -> None:
    guide = (Path(__file__).resolve().parents[2] / "docs" / "tinylabs.md").read_text(encoding="utf-8")
    for name in protocol_names():
        assert f"`{name}`" in guide and f"`{lab_gym_id(name)}`" in guide


def test_generate_a_suite_and_run_it_by_spec(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    result = runner.invoke(app, ["lab", "generate", "--complexity", "easy", "--n", "2", "--out", str(suite)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["lab", "run", "--spec", str(suite), "--agent", "oracle,random", "--json"])
    assert result.exit_code == 0, result.output
    rows = _json_out(result.output)
    assert len(rows) == 4 and all("@gen-easy-" in r["protocol"] for r in rows)
    assert all(r["score"] == 1.0 for r in rows if r["agent"] == "oracle")
    bad = tmp_path / "bad.yaml"
    bad.write_text("lab: sequence\nproperties: {g: {kind: gc}}\ndynamics: {kind: majority_update}\n"
                   "protocol: {kind: sequence/unknown-dynamics}\n", encoding="utf-8")
    result = runner.invoke(app, ["lab", "run", "--spec", str(bad), "--agent", "oracle"])
    assert result.exit_code == 2 and "majority_update" in result.output


def test_generate_refuses_a_directory_as_the_suite_file(tmp_path: Path) -> None:
    """`--out DIR` is refused with the reason (it was an IsADirectoryError traceback after generating)."""
    result = runner.invoke(app, ["lab", "generate", "--complexity", "easy", "--n", "1", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "is a directory" in result.output and "suite.yaml" in result.output
    assert list(tmp_path.iterdir()) == []


def test_run_exits_non_zero_when_episodes_error(tmp_path: Path) -> None:
    """An unreachable LLM endpoint makes every llm episode an error: the run says so in its exit code."""
    import os

    env = {"DISCOVERYLAB_LLM_BASE_URL": "http://127.0.0.1:9/v1"}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        result = runner.invoke(app, ["lab", "run", HIDDEN, "--agent", "llm", "--retries", "0",
                                     "--config", json.dumps(SMALL_A), "--agent-options", '{"history_turns": 1}'])
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    assert result.exit_code == 1, result.output
    assert "llm_error" in result.output  # the status summary line names the failure kind


def test_config_accepts_a_preset_name() -> None:
    result = runner.invoke(app, ["lab", "run", HIDDEN, "--agent", "oracle", "--config", "paper", "--json"])
    assert result.exit_code == 0, result.output
    assert _json_out(result.output)[0]["config"] == {"preset": "paper"}
    result = runner.invoke(app, ["lab", "run", HIDDEN, "--agent", "oracle", "--config", "nosuch"])
    assert result.exit_code == 2 and "no preset 'nosuch'" in result.output


def test_generate_with_an_unknown_lab_lists_the_families(tmp_path: Path) -> None:
    """A fresh process (no family loaded yet) told `--lab sequnce` names sequence, population and
    macro, not "known: (none)"."""
    import subprocess
    import sys

    code = "import sys; from discoverylab.cli import app; sys.argv[0] = 'discoverylab'; app()"
    done = subprocess.run([sys.executable, "-c", code, "lab", "generate", "--complexity", "easy", "--n", "1",
                           "--out", str(tmp_path / "s.yaml"), "--lab", "sequnce"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "'sequnce'" in done.stderr and all(name in done.stderr for name in ("macro", "population", "sequence"))
    assert not (tmp_path / "s.yaml").exists()
