"""The predictor sandbox's real child with its seccomp module changed, for tests that need the
whole child (policy, limits, the grade) but another filter: one builder for every such variant."""

from __future__ import annotations

from pathlib import Path

import pytest

from discoverylab.labs.sequence import sandbox, sandbox_child

_CHILD_WITH_PATCH = r"""
import importlib.util, sys
spec = importlib.util.spec_from_file_location("child", CHILD_PATH)
child = importlib.util.module_from_spec(spec)
spec.loader.exec_module(child)
load = child._load_beside
def patched(filename):
    module = load(filename)
    if filename == "sandbox_seccomp.py":
        PATCH
    return module
child._load_beside = patched
child.main()
"""


def use_child_with_seccomp_patch(patch: str, path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `run_predictor` run, from `path`, the real child whose `sandbox_seccomp` module gets
    the one statement `patch` (on `module`) when the child loads it."""
    path.write_text(_CHILD_WITH_PATCH.replace("CHILD_PATH", repr(sandbox_child.__file__)).replace("PATCH", patch))
    monkeypatch.setattr(sandbox, "_CHILD", path)
