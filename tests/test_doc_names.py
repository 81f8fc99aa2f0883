"""The code the docs name exists: every `discoverylab.x.y` in inline code resolves (a module, then
attributes), every `path.py` is a file of the repository (the original's files, which the docs
cite, excepted by name), and every `tests/x.py::test_name` a function of that file. README.md and
docs/ as they stand; the history (performance-history.md, CHANGELOG.md) keeps the names of then."""

from __future__ import annotations

import importlib
import re
from functools import cache
from pathlib import Path

from doc_kit import ROOT, doc_pages, inline_code

_DOTTED = re.compile(r"`(discoverylab(?:\.[A-Za-z_]\w*)+)")
_PATH = re.compile(r"(?<![\w/.-])([\w./-]+\.py)(?:::([\w\[\]-]+))?")
# Files of the original DiscoveryWorld code that the docs cite (not ours), and generic names
# standing for "each theme's scenario.py".
THEIRS = {"agents/RandomAgent.py", "agents/HypothesizerAgent.py", "react_controller.py", "plan_and_execute.py",
          "scenario.py", "script.py"}  # fmt: skip


def _defined_in_source(dotted: str) -> bool:
    """For a module that cannot be imported here (its optional dependency lives elsewhere, e.g.
    verifiers in its own venv): its file exists and defines the rest of the name at top level."""
    parts = dotted.split(".")
    for i in range(len(parts), 1, -1):
        base = ROOT / "src" / Path(*parts[:i])
        source = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if source.is_file():
            rest = parts[i:]
            if not rest:
                return True
            text = source.read_text(encoding="utf-8")
            return len(rest) == 1 and re.search(rf"^(?:async def|def|class) {rest[0]}\b|^{rest[0]} *[:=]", text, re.M) is not None
    return False


def resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError as exc:
            if exc.name is not None and not exc.name.startswith("discoverylab"):
                return _defined_in_source(dotted)  # a third-party module missing here
            continue
        try:
            for name in parts[i:]:
                obj = getattr(obj, name)
        except AttributeError:
            return False
        return True
    return False


def _find(path: str) -> Path | None:
    """The repository's file `path` names: from the root, or any file whose path ends with it
    (the docs write `labs/sequence/sandbox.py`, then `sandbox_policy.py` beside it)."""
    direct = ROOT / path
    if direct.is_file():
        return direct
    tail = "/" + path.lstrip("./")
    return next((f for f in _python_files() if f.as_posix().endswith(tail)), None)


@cache
def _python_files() -> tuple[Path, ...]:
    return tuple(f for top in ("src", "tests", "benchmarks") for f in sorted((ROOT / top).rglob("*.py")))


def test_every_dotted_name_resolves() -> None:
    names = {name for page in doc_pages(history=False) for span in inline_code(page) for name in _DOTTED.findall(f"`{span}")}
    assert len(names) > 20, "few names found: the extraction broke?"
    assert not [name for name in sorted(names) if not resolves(name)]


def test_every_named_file_and_test_exists() -> None:
    problems, files, tests = [], 0, 0
    for page in doc_pages(history=False):
        for span in inline_code(page):
            for path, name in _PATH.findall(span):
                files += 1
                if path in THEIRS:
                    continue
                found = _find(path)
                if found is None:
                    problems.append(f"{page.name}: {path}")
                    continue
                if name:
                    tests += 1
                    base = re.escape(name.split("[")[0])
                    if not re.search(rf"^\s*(?:async )?def {base}\(|^class {base}\b", found.read_text(encoding="utf-8"), re.M):
                        problems.append(f"{page.name}: {path}::{name}")
    assert files > 100 and tests >= 3, "few names found: the extraction broke?"
    assert not problems, "\n".join(problems)
