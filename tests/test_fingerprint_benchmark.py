"""`benchmarks/fingerprint.py`, the byte-identity check of speed changes: the same tree gives the
same hashes twice, a task's hash moves when what it shows moves, and bad arguments are usage
errors before any work."""

from __future__ import annotations

import json

import pytest

from bench_loader import load_benchmark, main_exit_code


def _run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, str]:
    bench = load_benchmark("fingerprint.py", "fingerprint_bench")
    monkeypatch.setattr("sys.argv", ["fingerprint.py", *argv])
    bench.main()
    return dict(json.loads(capsys.readouterr().out))


def test_the_same_tree_gives_the_same_hashes(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    first = _run(monkeypatch, capsys, "--tasks", "DialogTest,ReactorLab")
    assert list(first) == ["active", "DialogTest", "ReactorLab", "total"] and first["active"] is False
    assert _run(monkeypatch, capsys, "--tasks", "DialogTest,ReactorLab") == first


def test_a_changed_text_changes_the_hash(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # What the session-26 bug did (a reactor's 5100 shown as 5100.0): the text of a dialog moves.
    from discoverylab.scenarios.reactor_lab import things

    before = _run(monkeypatch, capsys, "--tasks", "ReactorLab")
    monkeypatch.setattr(things, "REACTOR_TEXT", things.REACTOR_TEXT.replace("Hertz", "Hz"))
    after = _run(monkeypatch, capsys, "--tasks", "ReactorLab")
    assert after["ReactorLab"] != before["ReactorLab"] and after["total"] != before["total"]


@pytest.mark.parametrize(("argv", "said"), [(["--tasks", "DoorTest"], "DoorsTest"),
                                            (["--oracle-seeds", "1,x"], "whole numbers"),
                                            (["--oracle-seeds", "-1"], "0 or more")])  # fmt: skip
def test_bad_arguments_are_usage_errors_before_any_work(argv: list[str], said: str, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    bench = load_benchmark("fingerprint.py", "fingerprint_bad_bench")
    assert main_exit_code(monkeypatch, bench.main, ["fingerprint.py", *argv], (bench, "symbolic")) == 2
    assert said in capsys.readouterr().err
