"""Import a script of `benchmarks/` (not a package) as a module, for the smoke tests of the
benchmarks themselves."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(script: str, module_name: str) -> ModuleType:
    """`benchmarks/<script>` loaded as `module_name` (registered in `sys.modules`, so dataclasses
    and pickling inside it resolve)."""
    spec = importlib.util.spec_from_file_location(module_name, BENCHMARKS / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def main_exit_code(monkeypatch: Any, main: Callable[[], Any], argv: list[str], *stubs: tuple[Any, str]) -> Any:
    """The SystemExit code of `main()` run with `sys.argv = argv`, each `(object, name)` of `stubs`
    replaced by a failure first: a usage error (2) must come before any of that work starts."""
    for owner, name in stubs:
        monkeypatch.setattr(owner, name, lambda *a, _name=name, **k: pytest.fail(f"{_name} ran"))
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as exc:
        main()
    return exc.value.code


def default_out_is_ignored(path: str) -> None:
    """`path` (relative to the repository) is ignored by git: a benchmark's default output never
    shows up as a change to commit (skipped outside a git checkout)."""
    import shutil
    import subprocess

    root = BENCHMARKS.parent
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")
    done = subprocess.run(["git", "-C", str(root), "check-ignore", "-q", path], capture_output=True)
    assert done.returncode == 0, f"{path} is not ignored by git"
