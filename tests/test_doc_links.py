"""Every relative link in README.md, CHANGELOG.md and docs/ reaches a file of the repository (not
one beside it: a clone lacks those), and every `#anchor` on a Markdown page a heading of that page
(GitHub's heading ids)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from doc_kit import ROOT, doc_pages, prose

_LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)|!\[[^\]\n]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.M)


def slug(heading: str) -> str:
    """GitHub's id for a heading: inline code and link syntax dropped to their text, lower case,
    punctuation but hyphens and underscores removed, each space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    """The ids of a page's headings; a repeated heading gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    ids = set()
    for heading in _HEADING.findall(prose(page)):
        base = slug(heading)
        count = seen.get(base, 0)
        ids.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return frozenset(ids)


def links() -> Iterator[tuple[Path, str]]:
    for page in doc_pages(changelog=True):
        for match in _LINK.finditer(prose(page)):
            target = match.group(1) or match.group(2)
            if not re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, mailto: ... are not checked here
                yield page, target


def test_slug_follows_github() -> None:
    assert slug("Discrete actions with masks (`discoverylab.rl.DiscreteActions`)") == "discrete-actions-with-masks-discoverylabrldiscreteactions"
    assert slug("RL path, one env (`rl_speed.py --suite unit|normal`)") == "rl-path-one-env-rl_speedpy---suite-unitnormal"


def test_every_relative_link_reaches_a_file_and_heading() -> None:
    problems, seen = [], 0
    for page, target in links():
        seen += 1
        where = f"{page.relative_to(ROOT).as_posix()}: ({target})"
        path, _, anchor = target.partition("#")
        destination = (page.parent / path).resolve() if path else page
        if not destination.is_relative_to(ROOT):
            problems.append(f"{where}: leaves the repository (broken in a clone or on GitHub)")
        elif not destination.exists():
            problems.append(f"{where}: no such file")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            problems.append(f"{where}: no heading with id {anchor!r} in {destination.relative_to(ROOT).as_posix()}")
    assert seen > 20, "few links found: the extraction broke?"
    assert not problems, "\n".join(problems)
