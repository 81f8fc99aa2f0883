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
        "Seeds: a task's categorical answer (Proteomics species, Reactor Lab property, Chemistry Easy",
        "remedy, Plant Nutrients nutrient or rule kind, Lost in Translation item, Rocket Science Easy",
        "body; Space Sick's Easy instrument and pathogen and Normal mold colour(s)) is drawn per instance",
        "from a stream of its own (keyed by task, difficulty and what is drawn): no blocks of seeds, so",
        "earlier episodes' answers say nothing about the next. Each difficulty of a seed is drawn on its",
        "own; uuids are drawn per episode and say nothing about an object's role. Scored evaluation uses",
        "the sealed `test` split (seeds from the evaluator's key; see docs/running.md).",
        "",
        "Unit-test levels: each unit test draws, from its instance's build stream (never the seed's",
        "value), where its building stands, its layout, the agent's start cell and its goal (which object,",
        "character, poster, place or weather), so over seeds 0-299 at Normal every one has at least 20",
        "distinct task descriptions (Doors, Doors with Keys and Search: exactly their 20 goal objects)",
        "and at least 120 distinct start cells. Each has Easy, Normal and Challenge levels; the knobs are",
        "listed per task below (tests/test_unit_levels.py checks them, and that replaying one level's",
        "winning actions fails on the others).",
        "",
        "Rewards: `reward=\"success\"` (the default) pays 1.0 on the step the task completes successfully,",
        "else 0; `reward=\"procedure\"` pays the change of the normalised procedural score each step (the",
        "original's shaped reward). The procedural reward pays answer-specific choices at once, so it",
        "reveals the answer: use it for training or ablations, never to score discovery. During an",
        "episode `info[\"scorecard\"]` holds progress only; the full scorecard arrives with the step that",
        "ends it (or `env.unwrapped.scorecard(reveal=True)` for evaluators).",
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
