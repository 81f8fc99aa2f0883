"""`benchmarks/ppo.py --out` in a folder that does not exist yet: the run trained to the end and
then lost everything at `torch.save` (RuntimeError: parent directory does not exist). The folder
is made before training now, as sb3.py does; an --out that is a folder is a usage error."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")

from bench_loader import load_benchmark  # noqa: E402

ppo = load_benchmark("ppo.py", "ppo_bench")


class Trained(Exception):
    pass


def test_out_s_folder_exists_before_training(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "new" / "curve"

    def train(*args: object, **kwargs: object) -> None:
        assert out.parent.is_dir(), "training started with nowhere to write its results"
        raise Trained

    monkeypatch.setattr(ppo, "train", train)
    monkeypatch.setattr(ppo, "relax_gc", lambda: None)
    monkeypatch.setattr(sys, "argv", ["ppo.py", "--tasks", "DoorsTest", "--out", str(out)])
    with pytest.raises(Trained):
        ppo.main()


def test_out_that_is_a_folder_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ppo, "train", lambda *a, **k: pytest.fail("trained"))
    monkeypatch.setattr(ppo, "relax_gc", lambda: None)
    monkeypatch.setattr(sys, "argv", ["ppo.py", "--tasks", "DoorsTest", "--out", str(tmp_path)])
    with pytest.raises(SystemExit) as exc:
        ppo.main()
    assert exc.value.code == 2


def test_a_bare_run_writes_under_runs_not_over_the_committed_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the default --out was docs/images/ppo_curve, so `python benchmarks/ppo.py` with no
    --out overwrote the figure and data the docs show. It is runs/ppo_curve now (runs/ is git-ignored)."""
    from bench_loader import default_out_is_ignored

    made: list[Path] = []

    def train(*args: object, **kwargs: object) -> None:
        made.extend(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
        raise Trained

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ppo, "train", train)
    monkeypatch.setattr(ppo, "relax_gc", lambda: None)
    monkeypatch.setattr(sys, "argv", ["ppo.py", "--tasks", "DoorsTest"])
    with pytest.raises(Trained):
        ppo.main()
    assert made == [Path("runs")]
    default_out_is_ignored("runs/ppo_curve.json")


def test_an_interrupted_run_leaves_the_complete_curve_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: each evaluation wrote the curve so far over <out>.json and .png, so a run stopped
    part way (Ctrl-C, or a kill) left a partial curve where a complete one (the docs' figure) was,
    and Ctrl-C ended in a traceback. The curve so far goes to <out>-partial.* now; Ctrl-C exits 130."""
    out = tmp_path / "curve"
    for suffix in (".json", ".png"):
        out.with_suffix(suffix).write_text(f"complete {suffix}")

    def train(*args: object, log: Any, **kwargs: object) -> None:
        log({"eval": [{"steps": 1000, "DoorsTest": 0.5}]})
        raise KeyboardInterrupt

    monkeypatch.setattr(ppo, "train", train)
    monkeypatch.setattr(ppo, "plot", lambda curve, path: Path(path).write_text("a plot"))
    monkeypatch.setattr(ppo, "relax_gc", lambda: None)
    monkeypatch.setattr(sys, "argv", ["ppo.py", "--tasks", "DoorsTest", "--out", str(out)])
    with pytest.raises(SystemExit) as exc:
        ppo.main()
    assert exc.value.code == 130
    assert [out.with_suffix(s).read_text() for s in (".json", ".png")] == ["complete .json", "complete .png"]
    partial = tmp_path / "curve-partial.json"
    assert json.loads(partial.read_text())["eval"][0]["steps"] == 1000 and (tmp_path / "curve-partial.png").is_file()
    # A run that ends writes the complete curve and drops the partial one.
    done = {"eval": [{"steps": 2000, "DoorsTest": 1.0}], "final": {}, "total_steps": 2000, "seconds_total": 1.0}

    def finish(*args: object, log: Any, **kwargs: object) -> dict[str, Any]:
        log(done)
        return {**done, "policy": ppo.torch.nn.Linear(1, 1)}

    monkeypatch.setattr(ppo, "train", finish)
    ppo.main()
    assert json.loads(out.with_suffix(".json").read_text())["total_steps"] == 2000 and out.with_suffix(".pt").is_file()
    assert not partial.exists() and not (tmp_path / "curve-partial.png").exists()


def test_an_out_under_a_file_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: a FileExistsError traceback making the folder of `--out afile/x`."""
    from bench_loader import main_exit_code

    (tmp_path / "afile").write_text("x")
    monkeypatch.setattr(ppo, "relax_gc", lambda: None)
    argv = ["ppo.py", "--tasks", "DoorsTest", "--out", str(tmp_path / "afile" / "x")]
    assert main_exit_code(monkeypatch, ppo.main, argv, (ppo, "train")) == 2
