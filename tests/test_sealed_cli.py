"""Sealed splits end to end at the command line (issue #20): bench/run/lab run --split, the key,
records with index and commitment, resume, replay, report and audit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from discoverylab.cli import app
from discoverylab.instances import KEY_ENV, make_instance

runner = CliRunner()
TASK = "PickAndPlaceTest"


@pytest.fixture(autouse=True)
def _no_key_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)


def _key(tmp_path: Path, name: str = "eval.key", text: str = "0123456789abcdef0123456789abcdef") -> Path:
    path = tmp_path / name
    path.write_text(text + "\n")
    return path


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _bench(out: Path, key: Path, seeds: str = "0-1") -> list[str]:
    return ["bench", "--agent", "oracle", "--task", TASK, "--split", "test", "--seeds", seeds,
            "--eval-key-file", str(key), "--workers", "1", "--out", str(out)]


@pytest.mark.parametrize("command", [
    ["bench", "--task", TASK, "--split", "test", "--seeds", "0"],
    ["run", "--task", TASK, "--split", "test", "--seeds", "0", "--out", "OUT"],
    ["lab", "run", "sequence/hidden-property", "--split", "test", "--seeds", "0"],
])
def test_test_split_without_a_key_is_a_one_line_error(tmp_path: Path, command: list[str]) -> None:
    result = runner.invoke(app, [c.replace("OUT", str(tmp_path / "o")) for c in command])
    assert result.exit_code == 2, result.output
    assert "sealed" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "o" / "results.jsonl").exists()


def test_bad_split_index_and_short_key_are_clear_errors(tmp_path: Path) -> None:
    result = runner.invoke(app, ["bench", "--task", TASK, "--split", "paper", "--seeds", "3-7"])
    assert result.exit_code == 2 and "0..4" in result.output
    result = runner.invoke(app, ["bench", "--task", TASK, "--split", "holdout", "--seeds", "0"])
    assert result.exit_code == 2 and "Unknown split" in result.output
    result = runner.invoke(app, _bench(tmp_path / "o", _key(tmp_path, text="short")))
    assert result.exit_code == 2 and "too short" in result.output


def test_sealed_bench_records_resume_replay_report_and_audit(tmp_path: Path) -> None:
    key = _key(tmp_path)
    out = tmp_path / "run"
    result = runner.invoke(app, _bench(out, key))
    assert result.exit_code == 0, result.output
    recs = _lines(out / "results.jsonl")
    seeds = [make_instance(TASK, "normal", "test", i, key.read_bytes().strip()).seed for i in (0, 1)]
    assert [(r["split"], r["index"], r["seed"]) for r in recs] == [("test", 0, None), ("test", 1, None)]
    assert all(isinstance(r["commitment"], str) and len(r["commitment"]) == 64 for r in recs)
    logs = sorted(p.name for p in (out / "logs").iterdir())
    assert logs == [f"{TASK}-normal-test0-oracle.jsonl", f"{TASK}-normal-test1-oracle.jsonl"]
    written = "".join(p.read_text() for p in [out / "results.jsonl", out / "run.json", *(out / "logs").iterdir()])
    assert not any(str(s) in written for s in seeds)
    # resume: nothing is redone; a third index is added
    assert runner.invoke(app, _bench(out, key, "0-2")).exit_code == 0
    assert [r["index"] for r in _lines(out / "results.jsonl")] == [0, 1, 2]
    # replay by the key holder: a fresh run of the same instances gives the same records
    again = tmp_path / "again"
    assert runner.invoke(app, _bench(again, key)).exit_code == 0
    strip = lambda r: {k: v for k, v in r.items() if k not in ("seconds", "usage")}  # noqa: E731
    assert [strip(r) for r in _lines(again / "results.jsonl")] == [strip(r) for r in recs]
    # another key may not resume this run (its test#0 is another world)
    other = _key(tmp_path, "other.key", "fedcba9876543210fedcba9876543210")
    result = runner.invoke(app, _bench(out, other))
    assert result.exit_code == 2 and "eval_key_id" in result.output, result.output
    first = result.output.split("Error: ", 1)[1]  # the reason comes first, before the two configs
    assert first.startswith(f"{out} was made with another evaluation key"), result.output
    # report shows the split; audit checks every commitment against the key
    assert "test (sealed): 3 episodes" in runner.invoke(app, ["report", str(out)]).output
    audit = runner.invoke(app, ["audit", str(out), "--eval-key-file", str(key)])
    assert audit.exit_code == 0 and "3 of 3 records verified" in audit.output
    wrong = runner.invoke(app, ["audit", str(out), "--eval-key-file", str(other)])
    assert wrong.exit_code == 1 and "0 of 3 records verified" in wrong.output
    assert "another key than the run's" in wrong.output, wrong.output  # said once, not only 3 mismatches
    # lines that are no records (a torn tail, garbage, another object) are said, not passed over in silence
    with (out / "results.jsonl").open("ab") as fh:
        fh.write(b'{"note": "not a record"}\n\xff\xfe garbage\n{"task": "torn')
    audit = runner.invoke(app, ["audit", str(out), "--eval-key-file", str(key)])
    assert audit.exit_code == 0 and "3 of 3 records verified" in audit.output and "3 line(s)" in audit.output, audit.output


def test_raw_seed_runs_written_before_splits_still_resume(tmp_path: Path) -> None:
    out = tmp_path / "old"
    args = ["bench", "--agent", "oracle", "--task", TASK, "--seeds", "0-1", "--workers", "1", "--out", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    old = [{k: v for k, v in r.items() if k not in ("split", "index", "commitment")} for r in _lines(out / "results.jsonl")]
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in old))  # the pre-split format
    assert runner.invoke(app, args).exit_code == 0
    assert [r["seed"] for r in _lines(out / "results.jsonl")] == [0, 1]  # nothing redone
    assert "raw seeds: 2 episodes" in runner.invoke(app, ["report", str(out)]).output


def test_sealed_lab_run_records_index_and_commitment(tmp_path: Path) -> None:
    key = _key(tmp_path)
    out = tmp_path / "labs"
    result = runner.invoke(app, ["lab", "run", "sequence/unknown-dynamics", "--agent", "random", "--split", "test",
                                 "--seeds", "0", "--eval-key-file", str(key), "--out", str(out)])
    assert result.exit_code == 0, result.output
    (rec,) = _lines(out / "results.jsonl")
    inst = make_instance("sequence/unknown-dynamics", "", "test", 0, key.read_bytes().strip())
    assert (rec["split"], rec["index"], rec["seed"], rec["commitment"]) == ("test", 0, None, inst.commitment)
    written = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())  # plots and score files too
    assert str(inst.seed).encode() not in written and any(out.rglob("*.png"))
    assert (out / "transcripts" / "sequence-unknown-dynamics-test0-random.jsonl").is_file()
    audit = runner.invoke(app, ["audit", str(out), "--eval-key-file", str(key)])
    assert audit.exit_code == 0, audit.output


def test_sealed_lab_run_resumed_with_another_key_says_so(tmp_path: Path) -> None:
    """Before: `('…', 'test#0', 'random') was already run in this directory with config {}; use
    another --out directory for a different protocol config`, naming a config that had not changed."""
    out = tmp_path / "labs"
    args = ["lab", "run", "sequence/unknown-dynamics", "--agent", "random", "--split", "test", "--seeds", "0",
            "--out", str(out), "--eval-key-file"]
    assert runner.invoke(app, [*args, str(_key(tmp_path))]).exit_code == 0
    result = runner.invoke(app, [*args, str(_key(tmp_path, "other.key", "fedcba9876543210fedcba9876543210"))])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "another evaluation key" in result.output and "test#0" in result.output, result.output


def test_sealed_run_will_not_send_the_gold_to_the_agent_s_own_endpoint_unasked(tmp_path: Path) -> None:
    """Attack: the submitter runs the endpoint the LLM agent talks to. The knowledge judge, by default
    the agent's own model on that endpoint, gets every sealed instance's gold facts in its prompt
    (and would grade its own reports): the submitter collects the test set's answers. A sealed run
    of discovery tasks now needs the judge named (or --no-judge) before any episode starts."""
    out = tmp_path / "o"
    args = ["bench", "--agent", "react", "--task", "Proteomics", "-d", "easy", "--split", "test", "--seeds", "0",
            "--eval-key-file", str(_key(tmp_path)), "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
            "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "gold" in result.output and "--judge-base-url" in result.output and "--no-judge" in result.output
    assert not (out / "results.jsonl").exists()
    run = ["run", *args[1:]]
    assert runner.invoke(app, run).exit_code == 2


def test_sealed_judge_check_lets_named_judges_unit_tests_and_the_embedded_model_through() -> None:
    from discoverylab.agents.llm_common import LLMSettings
    from discoverylab.cli.options import check_sealed_judge

    remote = LLMSettings(base_url="http://127.0.0.1:9/v1", model="m")
    discovery = [("Proteomics", "easy")]
    check_sealed_judge("test", discovery, remote, False, None, None)  # --no-judge
    check_sealed_judge("test", discovery, remote, True, "judge-model", None)  # named, even on that endpoint
    check_sealed_judge("test", discovery, remote, True, None, "http://127.0.0.1:10/v1")
    check_sealed_judge("test", [("PickAndPlaceTest", "normal")], remote, True, None, None)  # no questions asked
    check_sealed_judge("dev", discovery, remote, True, None, None)  # public gold
    check_sealed_judge("test", discovery, LLMSettings(), True, None, None)  # the embedded model: this process
    check_sealed_judge("test", discovery, None, True, None, None)  # no LLM agent


def test_audit_prints_a_folder_name_with_brackets_as_it_is(tmp_path: Path) -> None:
    """Before: `audit` read the path in its skipped-lines warning as terminal markup (x[red]y -> xy)."""
    from discoverylab.bench.runner import make_jobs, run_jobs

    odd = tmp_path / "x[red]y"
    run_jobs(make_jobs([("PickAndPlaceTest", "normal")], [0], "random", 5), odd)
    with (odd / "results.jsonl").open("a") as fh:
        fh.write("[]\n")
    result = runner.invoke(app, ["audit", str(odd), "--eval-key-file", str(_key(tmp_path))])
    assert result.exit_code == 0 and f"1 line(s) of {odd / 'results.jsonl'} are no records" in result.output, result.output


def test_audit_reads_the_results_once_and_leaves_no_file_open(tmp_path: Path) -> None:
    """Before: `audit` counted the lines through a file it never closed (a ResourceWarning per
    audit), then read the file again: a line a runner appended between the two readings
    counted as a record on one side only, and the "no records" count came out wrong."""
    import gc
    import warnings

    from discoverylab.bench.runner import make_jobs, run_jobs

    out = tmp_path / "run"
    run_jobs(make_jobs([("PickAndPlaceTest", "normal")], [0], "random", 5), out)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = runner.invoke(app, ["audit", str(out), "--eval-key-file", str(_key(tmp_path))])
        gc.collect()
    assert result.exit_code == 0 and "1 of 1 records verified" in result.output, result.output
    leaked = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert not [m for m in leaked if "results.jsonl" in m], leaked  # (another test's leak may surface here)


@pytest.mark.parametrize(("extra", "warned"), [
    ([], True),  # agent and judge: the embedded model
    (["--judge-model", "judge", "--judge-base-url", "http://127.0.0.1:9/v1"], False),  # a named judge
    (["--no-judge"], False),
])  # fmt: skip
def test_run_says_when_the_embedded_model_judges_knowledge(monkeypatch: pytest.MonkeyPatch, extra: list[str],
                                                             warned: bool) -> None:  # fmt: skip
    """Before: a run judged by the embedded SmolLM2-135M printed its knowledge scores like any
    other, though that model grades noisily (it credited some reports that state every candidate
    over a lone guess; docs/agents.md). Now the run says so before it starts."""
    from discoverylab.cli import main as cli_main
    from discoverylab.llm.client import ENV_BASE_URL

    monkeypatch.delenv(ENV_BASE_URL, raising=False)
    monkeypatch.setattr(cli_main, "_execute", lambda *a, **k: None)  # the warning, not the episodes
    result = runner.invoke(app, ["run", "--agent", "react", "--task", "Proteomics", "--difficulty", "easy",
                                 "--seeds", "0", *extra])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert ("judged by the embedded SmolLM2-135M" in result.output) is warned, result.output
