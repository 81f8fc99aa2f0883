"""Task registry: every list of tasks (CLI, Gymnasium ids, docs, tests) derives from here."""

from __future__ import annotations

import importlib
from functools import lru_cache

from discoverylab.scenarios.base import Scenario

# One line per scenario module: adding a task = its package (or unit file) + a line here.
SCENARIO_MODULES = (
    "discoverylab.scenarios.unit.dialog",
    "discoverylab.scenarios.unit.pick_and_place",
    "discoverylab.scenarios.unit.pick_and_give",
    "discoverylab.scenarios.unit.instrument_measurement",
    "discoverylab.scenarios.unit.doors",
    "discoverylab.scenarios.unit.doors_with_keys",
    "discoverylab.scenarios.unit.navigation_house",
    "discoverylab.scenarios.unit.search",
    "discoverylab.scenarios.unit.discovery_feed",
    "discoverylab.scenarios.unit.moving_agents",
    "discoverylab.scenarios.proteomics.scenario",
    "discoverylab.scenarios.archaeology.scenario",
    "discoverylab.scenarios.lost_in_translation.scenario",
    "discoverylab.scenarios.reactor_lab.scenario",
    "discoverylab.scenarios.combinatorial_chemistry.scenario",
    "discoverylab.scenarios.plant_nutrients.scenario",
    "discoverylab.scenarios.tutorial.scenario",
    "discoverylab.scenarios.rocket_science.scenario",
    "discoverylab.scenarios.space_sick.scenario",
)

_TASKS: dict[str, type[Scenario]] = {}


def register(cls: type[Scenario]) -> type[Scenario]:
    """Class decorator used by scenario modules."""
    if cls.task_id in _TASKS and _TASKS[cls.task_id] is not cls:
        raise ValueError(f"Task id {cls.task_id!r} registered twice.")
    _TASKS[cls.task_id] = cls
    return cls


@lru_cache(maxsize=1)
def _load() -> dict[str, type[Scenario]]:
    for module in SCENARIO_MODULES:
        importlib.import_module(module)
    return dict(_TASKS)


def all_tasks() -> dict[str, type[Scenario]]:
    """task_id -> Scenario class, in registry order."""
    return _load()


def _norm(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def get_task(name: str) -> type[Scenario]:
    """Look a task up by id, title or a loose spelling ("dialog_test", "Dialog Test")."""
    tasks = all_tasks()
    if name in tasks:
        return tasks[name]
    wanted = _norm(name)
    for cls in tasks.values():
        if wanted in (_norm(cls.task_id), _norm(cls.title)):
            return cls
    raise ValueError(f"Unknown task {name!r}. Valid tasks: {', '.join(tasks)}.")


def task_problem(task: str, difficulty: str | None = None) -> str | None:
    """Why `task` (at `difficulty`) cannot be played, or None: scripts turn it into a usage error
    before any work (a misspelt name was a traceback from deep in the env)."""
    try:
        cls = get_task(task)
        if difficulty is not None:
            check_difficulty(cls, difficulty)
    except ValueError as exc:
        return str(exc)
    return None


def check_difficulty(cls: type[Scenario], difficulty: str) -> str:
    diff = difficulty.strip().lower()
    if diff not in cls.difficulties:
        raise ValueError(
            f"Unknown difficulty {difficulty!r} for task {cls.task_id}. Valid difficulties: {', '.join(cls.difficulties)}."
        )
    return diff
