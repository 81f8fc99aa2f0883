"""Generate the task reference (docs/tasks.md) from the registry and the task docstrings."""

from __future__ import annotations

import inspect

from discoverylab.scenarios.registry import all_tasks
from discoverylab.world.action_specs import ACTION_SPECS


def tasks_markdown() -> str:
    """The docs page listing every task: a table, then each task's docstring."""
    tasks = all_tasks()
    lines = [
        "# Tasks",
        "",
        "Generated from the task registry by `discoverylab docs` — do not edit by hand.",
        "",
        "| task | suite | difficulties | Gymnasium ids | original taskName |",
        "|---|---|---|---|---|",
    ]
    for tid, cls in tasks.items():
        ids = ", ".join(f"`discoverylab/{tid}-{d.capitalize()}-v0`" for d in cls.difficulties)
        lines.append(f"| {tid} | {cls.suite} | {', '.join(cls.difficulties)} | {ids} | {cls.task_name} |")
    lines += ["", "## Actions", "", "| action | arguments | description |", "|---|---|---|"]
    for spec in ACTION_SPECS.values():
        if spec.advertised:
            lines.append(f"| `{spec.name}` | {', '.join(spec.args) or '-'} | {spec.description} |")
    for tid, cls in tasks.items():
        doc = inspect.cleandoc(cls.__doc__ or "")
        lines += ["", f"## {tid} — {cls.title}", "", doc]
    return "\n".join(lines) + "\n"
