"""House rules that reviews keep checking, enforced: no global RNG, no prints or exits in the
library, small modules, a one-way import direction (engine at the bottom)."""

from __future__ import annotations

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
    offenders = [str(p.relative_to(SRC)) for p in FILES if "cli" not in p.name and bad.search(_code(p))]
    assert not offenders, offenders


def test_modules_stay_small() -> None:
    big = {str(p.relative_to(SRC)): n for p in FILES if (n := len(_code(p).splitlines())) > 700}
    assert not big, f"split these by responsibility: {big}"


def test_engine_does_not_import_upper_layers() -> None:
    upper = re.compile(r"^\s*(from|import) discoverylab\.(scenarios|agents|bench|env|cli|labs|llm)\b", re.M)
    offenders = [str(p.relative_to(SRC)) for p in (SRC / "world").rglob("*.py") if upper.search(_code(p))]
    assert not offenders, offenders
