"""`benchmarks/ppo.py --out` in a folder that does not exist yet: the run trained to the end and
then lost everything at `torch.save` (RuntimeError: parent directory does not exist). The folder
is made before training now, as sb3.py does; an --out that is a folder is a usage error."""

from __future__ import annotations

import sys
from pathlib import Path

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
