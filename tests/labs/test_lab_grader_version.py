"""Grader versions: a run directory never mixes grades of two versions of a protocol's grader.

Each protocol's grader has a version (`GRADER_VERSION` of its grading module, bumped whenever the
grade changes), recorded in every `LabRecord` and part of its `config_hash`. Before, a run made before
a grader change resumed silently: its old records stood beside new ones graded differently, and `lab
judge` re-graded some episodes with the new grader and left the others as they were.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from discoverylab.labs import protocol as protocol_module
from discoverylab.labs.cli import lab_app
from discoverylab.labs.jobs import make_jobs
from discoverylab.labs.macroecon.headline import GRADER_VERSION as MACRO_GRADER
from discoverylab.labs.protocol import grader_version, protocol_entry
from discoverylab.labs.rejudge import rejudge_run
from discoverylab.labs.run_record import GraderVersionMismatch, config_hash
from discoverylab.labs.runner import run_lab_jobs

HIDDEN = "sequence/hidden-property"
SMALL: dict[str, Any] = {"rounds": 2, "n_predictions": 5}


def _run(out: Path) -> None:
    records = run_lab_jobs(make_jobs([HIDDEN], [0], ["oracle"], SMALL), out, plots=False, retry_delay=0)
    assert records[0].status == "ok" and records[0].grader_version == grader_version(HIDDEN)


def _age_records(out: Path, version: int | None) -> str:
    """Rewrite the stored records as an older grader wrote them; returns the file's new text."""
    path = out / "results.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        if version is None:
            line.pop("grader_version", None)
        else:
            line["grader_version"] = version
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path.read_text()


def _bump(monkeypatch: pytest.MonkeyPatch, name: str) -> int:
    """Pretend the protocol's grader changed since the run (its version bumped)."""
    entry = protocol_entry(name)
    monkeypatch.setitem(protocol_module._REGISTRY, name, dataclasses.replace(entry, grader_version=entry.grader_version + 1))
    return entry.grader_version + 1


def test_every_protocol_has_a_grader_version_and_the_macro_one_was_bumped() -> None:
    """The macro grade changed (process credit gated by discovery, then its judge's evidence
    without the agent's sentences about grading, then edge credit above the best public graph):
    its version is 4, not the default."""
    assert grader_version("macro/causal-discovery") == MACRO_GRADER == 4
    assert grader_version(f"{HIDDEN}@some-spec") == grader_version(HIDDEN) >= 1


def test_records_and_transcripts_carry_the_grader_version(tmp_path: Path) -> None:
    _run(tmp_path)
    stored = json.loads((tmp_path / "results.jsonl").read_text().splitlines()[0])
    start = json.loads((tmp_path / stored["transcript"]).read_text().splitlines()[0])
    assert stored["grader_version"] == start["grader_version"] == grader_version(HIDDEN)


def test_a_bumped_grader_changes_the_config_hash(monkeypatch: pytest.MonkeyPatch) -> None:
    before = config_hash(HIDDEN, SMALL)
    _bump(monkeypatch, HIDDEN)
    assert config_hash(HIDDEN, SMALL) != before


def test_resuming_after_the_grader_changed_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _run(tmp_path)
    text = (tmp_path / "results.jsonl").read_text()
    new = _bump(monkeypatch, HIDDEN)
    with pytest.raises(GraderVersionMismatch, match=f"grader version {new - 1}; this code grades with version {new}"):
        run_lab_jobs(make_jobs([HIDDEN], [0, 1], ["oracle"], SMALL), tmp_path, plots=False, retry_delay=0)
    assert (tmp_path / "results.jsonl").read_text() == text  # nothing run, nothing mixed in


@pytest.mark.parametrize("version", [None, 0])
def test_resuming_a_run_recorded_by_an_older_grader_is_refused_with_a_clear_message(tmp_path: Path,
                                                                                      version: int | None) -> None:
    """A record from before grader versions (no field) or of an older version: the CLI says why, one line."""
    _run(tmp_path)
    text = _age_records(tmp_path, version)
    result = CliRunner().invoke(lab_app, ["run", HIDDEN, "--agent", "oracle", "--seeds", "0-1", "--config",
                                          json.dumps(SMALL), "--out", str(tmp_path), "--no-plots"])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    said = " ".join(result.output.split())
    assert f"this code grades with version {grader_version(HIDDEN)}" in said and "another --out" in said, said
    assert ("before grader versions were recorded" if version is None else "grader version 0") in said
    assert (tmp_path / "results.jsonl").read_text() == text


def test_judging_a_run_graded_by_an_older_grader_is_refused(tmp_path: Path) -> None:
    """`lab judge` would re-grade some episodes with the new grader beside old grades: refused, untouched."""
    _run(tmp_path)
    text = _age_records(tmp_path, 0)

    def no_judge() -> Any:
        raise AssertionError("no episode may be judged")

    with pytest.raises(GraderVersionMismatch, match="judging would mix old and new grades"):
        rejudge_run(tmp_path, no_judge)
    result = CliRunner().invoke(lab_app, ["judge", str(tmp_path), "--judge-model", "m", "--judge-base-url",
                                          "http://127.0.0.1:9/v1"])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert "graded by another version" in " ".join(result.output.split())
    assert (tmp_path / "results.jsonl").read_text() == text
