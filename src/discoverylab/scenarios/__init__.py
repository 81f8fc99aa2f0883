"""Scenarios (tasks): one module each, registered in `registry.SCENARIO_MODULES`."""

from discoverylab.scenarios.base import Scenario
from discoverylab.scenarios.registry import all_tasks, get_task, register

__all__ = ["Scenario", "all_tasks", "get_task", "register"]
