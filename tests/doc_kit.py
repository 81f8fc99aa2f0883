"""What the docs tests read (`test_doc_commands`, `test_doc_links`, `test_doc_names`): the pages,
their prose (fenced blocks removed), inline code and shell code."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```([a-z]*)\n(.*?)^```", re.S | re.M)
INLINE = re.compile(r"`([^`\n]+)`")
SHELL = {"", "bash", "sh", "console", "shell", "text"}  # fenced blocks read as shell code


def doc_pages(changelog: bool = False, history: bool = True) -> list[Path]:
    """README.md (then CHANGELOG.md if asked) and docs/*.md in name order; `history=False` leaves
    out performance-history.md, which keeps the names of its sessions."""
    docs = sorted((ROOT / "docs").glob("*.md"))
    return [ROOT / "README.md", *([ROOT / "CHANGELOG.md"] if changelog else []),
            *(p for p in docs if history or p.name != "performance-history.md")]  # fmt: skip


def prose(page: Path) -> str:
    return FENCE.sub("", page.read_text(encoding="utf-8"))


def inline_code(page: Path) -> list[str]:
    return INLINE.findall(prose(page))


def shell_code(page: Path) -> list[str]:
    """The page's shell blocks, then its inline code spans."""
    text = page.read_text(encoding="utf-8")
    return [body for lang, body in FENCE.findall(text) if lang in SHELL] + inline_code(page)
