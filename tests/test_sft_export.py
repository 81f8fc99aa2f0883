"""`discoverylab export-sft`: the oracle's episodes as chat-format JSONL for fine-tuning.

Checked: every line validates against the documented schema, replaying its actions reproduces
success, the CLI writes it, and (named attack) the sealed test split is never exported.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from discoverylab.bench.runner import suite_tasks
from discoverylab.bench.sft_export import SCHEMA, episode_conversation, replay, validate_line, windows
from discoverylab.cli import app
from discoverylab.instances import InstanceError, make_instance

UNIT = suite_tasks("unit")
DISCOVERY = suite_tasks("discovery")


def _check(task: str, difficulty: str, index: int) -> None:
    example = episode_conversation(make_instance(task, difficulty, "train", index))
    line = json.dumps(example)
    assert validate_line(line) == []
    assert example["metadata"]["success"], (task, difficulty, index)
    success, steps = replay(json.loads(line))
    assert success and steps == example["metadata"]["steps"]
    if example["metadata"]["answers_score"] is not None:  # discovery tasks end with the answer sheet, as JSON
        assert isinstance(json.loads(example["messages"][-1]["content"]), dict)
        assert "answer sheet" in example["messages"][-2]["content"]


@pytest.mark.parametrize(("task", "difficulty"), UNIT + [p for p in DISCOVERY if p[1] == "easy"])
def test_export_validates_and_replays_to_success(task, difficulty):
    _check(task, difficulty, 0)


@pytest.mark.slow
@pytest.mark.parametrize(("task", "difficulty"), UNIT + DISCOVERY)
@pytest.mark.parametrize("index", range(10))
def test_export_all_tasks_seeds_0_to_9(task, difficulty, index):
    _check(task, difficulty, index)


def test_validator_rejects_what_fine_tuning_tools_would_misread():
    good = episode_conversation(make_instance("PickAndPlaceTest", "normal", "train", 0))
    assert validate_line(json.dumps(good)) == []
    bad_role = json.loads(json.dumps(good))
    bad_role["messages"][1]["role"] = "tool"
    twice = json.loads(json.dumps(good))
    twice["messages"].insert(2, dict(twice["messages"][1]))
    no_meta = {"messages": good["messages"]}
    for broken in (bad_role, twice, no_meta):
        assert validate_line(json.dumps(broken))
    assert validate_line("{not json")
    assert good["metadata"]["schema"] == SCHEMA


def test_attack_sealed_split_is_never_exported(tmp_path):
    """Test instances must not become training data, key or no key."""
    with pytest.raises(InstanceError, match="never exported"):
        episode_conversation(make_instance("PickAndPlaceTest", "normal", "test", 0, b"k" * 32))
    result = CliRunner().invoke(app, ["export-sft", "--split", "test", "--suite", "unit", "-o", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2 and "never exported" in result.output


def test_cli_writes_jsonl(tmp_path):
    out = tmp_path / "sft.jsonl"
    result = CliRunner().invoke(app, ["export-sft", "--task", "ArchaeologyDating", "--difficulty", "easy",
                                      "--split", "dev", "--seeds", "0-1", "-o", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    assert len(lines) == 2 and all(validate_line(line) == [] for line in lines)
    assert [json.loads(line)["metadata"]["instance"]["index"] for line in lines] == [0, 1]


def test_cli_refuses_a_bad_agent_or_out_up_front_and_never_leaves_half_a_file(tmp_path, monkeypatch):
    """A misspelt agent or an --out that is a folder or lies in a missing one is a usage error
    before any episode (they were tracebacks, the agent's after --out was emptied); an export that
    fails midway leaves an earlier file of that name as it was, and no partial file beside it."""
    import discoverylab.bench.sft_export as sft

    out = tmp_path / "sft.jsonl"
    out.write_text("OLD\n")
    base = ["export-sft", "--task", "PickAndPlaceTest", "--split", "dev", "--seeds", "0-1"]
    for extra, says in ((["--agent", "oracel", "-o", str(out)], "Valid agents: random, oracle"),
                        (["-o", str(tmp_path)], "must name a file"), (["-o", str(tmp_path / "no" / "x.jsonl")], "must name a file")):
        result = CliRunner().invoke(app, [*base, *extra])
        assert result.exit_code == 2 and says in result.output, result.output
    calls = []

    def failing(inst, agent="oracle"):
        calls.append(inst)
        if len(calls) == 2:
            raise RuntimeError("the second episode crashed")
        return episode_conversation(inst, agent)

    monkeypatch.setattr(sft, "episode_conversation", failing)
    result = CliRunner().invoke(app, [*base, "-o", str(out)])
    assert isinstance(result.exception, RuntimeError) and len(calls) == 2
    assert out.read_text() == "OLD\n" and sorted(p.name for p in tmp_path.iterdir()) == ["sft.jsonl"]


@pytest.mark.parametrize(("task", "difficulty", "turns"), [("ArchaeologyDating", "easy", 5), ("PickAndPlaceTest", "normal", 1)])
def test_windows_keep_every_turn_in_order_and_validate(task, difficulty, turns):
    example = episode_conversation(make_instance(task, difficulty, "train", 0))
    pieces = windows(example, turns)
    assert all(validate_line(json.dumps(p)) == [] for p in pieces)
    assert [p["metadata"]["window"] for p in pieces] == [[k + 1, len(pieces)] for k in range(len(pieces))]
    mine = [m for p in pieces for m in p["messages"] if m["role"] == "assistant"]
    assert mine == [m for m in example["messages"] if m["role"] == "assistant"]
    assert all(p["messages"][1]["content"].startswith("Task: ") for p in pieces)
    assert sum(m["role"] == "assistant" for m in pieces[0]["messages"]) <= turns + (len(pieces) == 1)


def test_export_is_byte_identical_run_to_run():
    inst = make_instance("ArchaeologyDating", "easy", "train", 3)
    assert json.dumps(episode_conversation(inst)) == json.dumps(episode_conversation(inst))
