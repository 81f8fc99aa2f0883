"""What scripts import from the original's `discoveryworld.ScenarioMaker`, from our registry.

`SCENARIO_NAMES` and `SCENARIO_INFOS` are the canonical names and their difficulties/variations
(as `DiscoveryWorldAPI.getValidScenarios()` gives them); `SCENARIO_DIFFICULTY_OPTIONS` maps
`easy/normal/challenge/test` to the display strings (the original lists "Test", which no
scenario offers); `getInternalScenarioName(name, difficulty)` gives our internal name
(`"<task>_<difficulty>"`, e.g. `"proteomics_easy"`; the original's spellings differ) or None, and
`SCENARIOS` lists them all. `ScenarioMaker(world, seed).setupScenario(internal_name)` builds the
scenario as a `DiscoveryWorldEnv` (our scenarios build their own world, so the `world` passed in is
replaced by the built one, not filled).
"""

from __future__ import annotations

import re
from typing import Any

from discoverylab.compat import SCENARIO_DIFFICULTY_OPTIONS as _DIFFICULTIES
from discoverylab.compat import SCENARIO_NAMES as _NAMES
from discoverylab.compat import DiscoveryWorldAPI
from discoverylab.env import DiscoveryWorldEnv
from discoverylab.scenarios.registry import all_tasks

SCENARIO_DIFFICULTY_OPTIONS: dict[str, str] = {**_DIFFICULTIES, "test": "Test"}
SCENARIO_NAMES: list[str] = list(_NAMES)
SCENARIO_INFOS: dict[str, dict[str, list[str]]] = DiscoveryWorldAPI(render_images=False).getValidScenarios()


def _snake(task_id: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", task_id).lower()


# internal name -> (task id, difficulty); canonical name -> {difficulty: internal name}
_INTERNAL: dict[str, tuple[str, str]] = {}
_BY_NAME: dict[str, dict[str, str]] = {}
for _tid, _cls in all_tasks().items():
    for _difficulty in _cls.difficulties:
        _name = f"{_snake(_tid)}_{_difficulty}"
        _INTERNAL[_name] = (_tid, _difficulty)
        _BY_NAME.setdefault(_cls.title, {})[_difficulty] = _name
SCENARIOS: list[str] = list(_INTERNAL)


def getInternalScenarioName(scenarioNameIn: str, difficulty: str) -> str | None:  # noqa: N802, N803
    """Our internal name for a canonical scenario name and difficulty string ("Easy", "normal",
    ...), or None where the pair does not exist (as the original answers)."""
    if not isinstance(scenarioNameIn, str) or not isinstance(difficulty, str):
        return None
    return _BY_NAME.get(scenarioNameIn, {}).get(difficulty.strip().lower())


class ScenarioMaker:
    """Builds a scenario by internal name, as the original's class does (one user agent)."""

    def __init__(self, world: Any = None, seed: int | None = None) -> None:
        self.world = world
        self.seed = 0 if seed is None else int(seed)
        self.env: DiscoveryWorldEnv | None = None

    def setupScenario(self, scenarioName: str, numUserAgents: int = 1) -> tuple[bool, str]:  # noqa: N802, N803
        """(True, "") once built, else (False, why): the original's return shape."""
        entry = _INTERNAL.get(scenarioName) if isinstance(scenarioName, str) else None
        if entry is None:
            return False, f"Unknown scenario {scenarioName!r}: expected one of discoveryworld.ScenarioMaker.SCENARIOS."
        if numUserAgents != 1:
            return False, f"This engine runs one user agent, not {numUserAgents!r}."
        self.env = DiscoveryWorldEnv(entry[0], entry[1], max_steps=10**9)
        self.env.reset(seed=self.seed)
        self.world = self.env.world
        return True, ""
