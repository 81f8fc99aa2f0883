"""Docs that are generated from code must match it."""

from __future__ import annotations

from pathlib import Path

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.scenarios.docs import tasks_markdown
from discoverylab.scenarios.registry import all_tasks

ROOT = Path(__file__).resolve().parents[1]


def test_tasks_page_is_up_to_date() -> None:
    page = (ROOT / "docs" / "tasks.md").read_text(encoding="utf-8")
    assert page == tasks_markdown(), "docs/tasks.md is stale: run `discoverylab docs`"


def test_every_task_docstring_has_the_standard_sections() -> None:
    for tid, cls in all_tasks().items():
        doc = cls.__doc__ or ""
        for section in ("Description:", "Actions:", "Observation:", "Scoring:", "Difficulty knobs:", "Registered ids:"):
            assert section in doc, f"{tid} docstring lacks {section!r}"
        for diff in cls.difficulties:
            assert f"discoverylab/{tid}-{diff.capitalize()}-v0" in doc, f"{tid} docstring must name its ids"


def test_readme_starts_with_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = readme[readme.index("## Quick start"):][:600]
    assert "make run" in quick and "make test" in quick


def test_readme_states_every_default_step_limit() -> None:
    """The README said "100 for Easy and unit tests, 1000 otherwise"; SpaceSick Normal and
    Challenge have 1500. A limit other than that rule must be named with its task."""
    import re

    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    rule = re.search(r"`truncated` at the step limit \(([^)]*)\)", readme)
    assert rule is not None
    stated = rule.group(1)
    for tid, cls in all_tasks().items():
        for diff in cls.difficulties:
            env = DiscoveryWorldEnv(tid, diff, info="lean")
            env.reset(seed=0)
            if env._limit != (100 if cls.suite == "unit" or diff == "easy" else 1000):
                assert f"{env._limit} for {tid}" in stated and diff.capitalize() in stated, (tid, diff, env._limit)
