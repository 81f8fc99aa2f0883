"""The oracles see observations only (session 21 red team).

An oracle's success proves a task solvable through the public API only if the oracle reads
nothing else: not the world's objects, the scenario's gold or the seed. Here an oracle plays a
sealed test instance in this process (its seed is out of every agent's reach) while each
observation it is handed is recorded as JSON; then a fresh Python process, where no world, env
or scenario was ever built, hands the same oracle class those observations alone. It must take
the same actions and report the same facts: had it read anything but the observation, it would
have nothing to read there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from discoverylab.agents.oracle import OracleAgent
from discoverylab.env import DiscoveryWorldEnv
from discoverylab.instances import make_instance

KEY = b"discoverylab-red-team-oracle-replay-key"
SRC = Path(__file__).resolve().parents[2] / "src"
REPLAY = """
import json, sys
from discoverylab.agents.oracle import OracleAgent
task, path = sys.argv[1], sys.argv[2]
with open(path) as handle:
    recorded = json.load(handle)
import discoverylab.world.world as world_module
assert not any(isinstance(o, world_module.World) for o in __import__("gc").get_objects())
agent = OracleAgent(task)
actions = [agent.act(obs) for obs in recorded["observations"]]
report = agent.conclude(recorded["final"])
print(json.dumps({"actions": actions, "facts": report.facts if report else None}, default=str))
"""


def record(task: str, difficulty: str, index: int) -> dict[str, Any]:
    """Play the oracle on a sealed instance, keeping each observation it was handed (as JSON)."""
    env = DiscoveryWorldEnv(task, difficulty)
    _, info = env.reset(options={"instance": make_instance(task, difficulty, "test", index, KEY)})
    agent = OracleAgent(task)
    observations, actions = [], []
    obs = info["observation"]
    done = False
    while not done:
        observations.append(json.loads(json.dumps(obs)))
        action = agent.act(obs)
        actions.append(action)
        _, _, terminated, truncated, info = env.step(action)
        obs, done = info["observation"], terminated or truncated
    assert env.scorecard(reveal=True)["completedSuccessfully"], "the oracle must solve the sealed instance"
    report = agent.conclude(obs)
    assert report is not None
    return {"observations": observations, "final": json.loads(json.dumps(obs)), "actions": actions,
            "facts": report.facts}  # fmt: skip


@pytest.mark.parametrize(("task", "difficulty"), [("Proteomics", "normal"), ("PlantNutrients", "easy"),
                                                  ("ArchaeologyDating", "challenge")])  # fmt: skip
def test_oracle_replays_from_recorded_observations_in_a_fresh_process(
    task: str, difficulty: str, tmp_path: Path
) -> None:
    played = record(task, difficulty, 0)
    path = tmp_path / "observations.json"
    path.write_text(json.dumps({"observations": played["observations"], "final": played["final"]}))
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-c", REPLAY, task, str(path)], capture_output=True, text=True,
                          env=env, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    replayed = json.loads(done.stdout.strip().splitlines()[-1])
    assert replayed["actions"] == json.loads(json.dumps(played["actions"], default=str))
    assert replayed["facts"] == json.loads(json.dumps(played["facts"], default=str))


def test_the_replay_follows_the_observations_it_is_handed(tmp_path: Path) -> None:
    """Control: handed another instance's observations, the replay acts differently, so equal
    actions above mean the oracle acted on what it was handed."""
    one, other = record("Proteomics", "normal", 0), record("Proteomics", "normal", 1)
    path = tmp_path / "observations.json"
    path.write_text(json.dumps({"observations": other["observations"], "final": other["final"]}))
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-c", REPLAY, "Proteomics", str(path)], capture_output=True, text=True,
                          env=env, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    replayed = json.loads(done.stdout.strip().splitlines()[-1])
    assert replayed["actions"] != json.loads(json.dumps(one["actions"], default=str))
