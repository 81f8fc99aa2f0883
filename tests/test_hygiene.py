"""House rules that reviews keep checking, enforced: no global RNG, no prints or exits in the
library, small modules, a one-way import direction (engine at the bottom)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "discoverylab"
FILES = sorted(SRC.rglob("*.py"))


def _code(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_no_global_random_state() -> None:
    bad = re.compile(r"^\s*(import random\b|from random import)|np\.random\.(seed|rand|randint|choice|random|shuffle)\(", re.M)
    offenders = [str(p.relative_to(SRC)) for p in FILES if bad.search(_code(p))]
    assert not offenders, f"use a seeded numpy Generator instead: {offenders}"


def test_library_never_prints_or_exits() -> None:
    bad = re.compile(r"^\s*print\(|\bsys\.exit\(|^\s*exit\(", re.M)
    offenders = [str(p.relative_to(SRC)) for p in FILES if "cli" not in p.name and "cli" not in p.parts and bad.search(_code(p))]
    assert not offenders, offenders


def test_modules_stay_small() -> None:
    big = {str(p.relative_to(SRC)): n for p in FILES if (n := len(_code(p).splitlines())) > 700}
    assert not big, f"split these by responsibility: {big}"


# What each top-level part may import (besides itself): the engine at the bottom, one direction up.
ALLOWED = {
    "world": {"data"},
    "render": {"world"},
    "scoring": {"world"},
    "llm": set(),
    "scenarios": {"world", "scoring"},
    "env": {"world", "render", "scenarios", "scoring", "rl"},
    "rl": {"world"},
    "agents": {"world", "render", "scenarios", "scoring", "env", "llm"},
    "compat": {"world", "render", "scenarios", "scoring", "env", "compat_members"},
    "compat_members": {"world", "scenarios", "scoring", "env"},
    "original": {"world", "render", "scenarios", "scoring", "env", "compat"},  # scripts for the original, on top of compat
    "bench": {"world", "render", "scenarios", "scoring", "env", "agents", "llm"},
    "labs": {"bench", "llm"},
    "ui": {"world", "render", "scenarios", "scoring", "env", "agents", "bench", "llm"},
    # integrations (docs/integrations.md): the env server on the episode core, the harness adapters on top
    "server": {"world", "render", "scenarios", "scoring", "env", "agents", "bench", "llm", "labs"},
    "integrations": {"world", "render", "scenarios", "scoring", "env", "agents", "bench", "llm", "labs", "server"},
}
THEMES = sorted(p.name for p in (SRC / "scenarios").iterdir() if (p / "scenario.py").exists())


def _imports(path: Path) -> set[str]:
    """Every `discoverylab.*` module a file imports (at any depth, lazily or not)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(_code(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("discoverylab"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("discoverylab"))
    return found


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


# `python -m discoverylab.compat` (compat.py's `if __name__ == "__main__":` block) is an entry point,
# on top like the CLI: it may start the runner that sits above compat.
ENTRY_POINT_IMPORTS = {("compat.py", "discoverylab.original.runner"), ("compat.py", "discoverylab.original.runner.main")}


def test_import_direction_between_parts() -> None:
    offenders = []
    for path in FILES:
        rel = path.relative_to(SRC).parts
        me = rel[0].removesuffix(".py") if len(rel) > 1 else rel[0].removesuffix(".py")
        if me not in ALLOWED:
            continue  # the package root and the CLI may import anything
        for module in _imports(path):
            part = _part(module)
            if ("/".join(rel), module) in ENTRY_POINT_IMPORTS:
                continue
            if part and part != me and part not in ALLOWED[me] and (SRC / part).exists():
                offenders.append(f"{'/'.join(rel)} imports {module}")
    assert not offenders, offenders


def test_engine_never_imports_render_or_scenarios() -> None:
    offenders = [
        f"{p.relative_to(SRC)}: {m}"
        for p in (SRC / "world").rglob("*.py")
        for m in _imports(p)
        if _part(m) in ("render", "scenarios")
    ]
    assert not offenders, offenders


def test_a_theme_never_imports_another_theme() -> None:
    assert len(THEMES) >= 8, THEMES
    offenders = []
    for path in (SRC / "scenarios").rglob("*.py"):
        rel = path.relative_to(SRC / "scenarios").parts
        mine = rel[0] if len(rel) > 1 else None  # None: shared plumbing, which imports no theme at all
        for module in _imports(path):
            parts = module.split(".")
            if len(parts) > 2 and parts[1] == "scenarios" and parts[2] in THEMES and parts[2] != mine:
                offenders.append(f"scenarios/{'/'.join(rel)} imports {module}")
    assert not offenders, offenders


def test_a_hung_test_fails_well_inside_the_ci_budget(pytestconfig) -> None:  # type: ignore[no-untyped-def]
    """CI has 90 minutes for the whole of `make test`: a deadlock (a fork after Ray started hung
    one full run in session 19) must fail its test, not spend them all."""
    seconds = float(pytestconfig.getini("timeout"))
    assert 0 < seconds <= 900
