"""Bad input from an agent: a clear, specific error in the observation; never an exception,
never a changed world."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.scenarios.registry import all_tasks
from discoverylab.world.action_specs import ACTION_SPECS
from discoverylab.world.actions import ActionExecutor
from dw_helpers import world_fingerprint


def _fresh(task: str = "PickAndPlaceTest", seed: int = 0) -> tuple[DiscoveryWorldEnv, dict[str, Any]]:
    env = DiscoveryWorldEnv(task)
    _, info = env.reset(seed=seed)
    return env, info["observation"]


BAD_ACTIONS: list[tuple[Any, str]] = [
    (None, "must be a JSON object"),
    (42, "must be a JSON object"),
    ([1, 2], "must be a JSON object"),
    ("not json", "Could not parse the action as JSON"),
    ("{\"action\": ", "Could not parse the action as JSON"),
    ({}, "Missing 'action' key"),
    ({"arg1": 5}, "Missing 'action' key"),
    ({"action": 7}, "'action' must be a string"),
    ({"action": "FLY", "arg1": "north"}, "Unknown action 'FLY'"),
    ({"action": "WAIT", "thought": "hmm"}, "Unexpected key(s) ['thought']"),
    ({"action": "WAIT", "arg1": 3}, "'arg1' is not expected"),
    ({"action": "MOVE_DIRECTION"}, "requires 'arg1'"),
    ({"action": "MOVE_DIRECTION", "arg1": "up"}, "Invalid direction 'up'"),
    ({"action": "MOVE_DIRECTION", "arg1": 3}, "Invalid direction 3"),
    ({"action": "PICKUP"}, "requires 'arg1'"),
    ({"action": "PICKUP", "arg1": "flag"}, "must be an object UUID (an integer)"),
    ({"action": "PICKUP", "arg1": 1.5}, "must be an object UUID"),
    ({"action": "PICKUP", "arg1": True}, "must be an object UUID"),
    ({"action": "PICKUP", "arg1": 999999}, "could not find an accessible object with UUID 999999"),
    ({"action": "PUT", "arg1": 5}, "requires two argument objects. Missing arg2"),
    ({"action": "USE"}, "requires two argument objects. Missing both arguments"),
    ({"action": "USE", "arg2": 5}, "requires two argument objects. Missing arg1"),
    ({"action": "TELEPORT_TO_OBJECT", "arg1": 999999}, "you have not observed an object with UUID 999999"),
    ({"action": "TELEPORT_TO_LOCATION", "arg1": "moon"}, "not a known teleport location ('moon')"),
    ({"action": "TELEPORT_TO_LOCATION", "arg1": 5}, "must be a teleport location name"),
    ({"action": "DISCOVERY_FEED_GET_POST_BY_ID", "arg1": "x"}, "Invalid post ID 'x'"),
    ({"action": "DISCOVERY_FEED_GET_POST_BY_ID", "arg1": 99}, "No post found with ID 99"),
    ({"chosen_dialog_option_int": 1}, "You are not in a dialog"),
]


@pytest.mark.parametrize(("action", "expected"), BAD_ACTIONS)
def test_bad_actions_give_specific_errors_and_change_nothing(action: Any, expected: str) -> None:
    env, _ = _fresh()
    assert env.world is not None
    executor = ActionExecutor(env.scenario.player)  # type: ignore[union-attr]
    before = world_fingerprint(env.world)
    result = executor.execute(action)
    assert not result.success
    assert expected in result.message
    assert world_fingerprint(env.world) == before
    # Through the env: the same message shows in the observation, and nothing raises.
    env2, _ = _fresh()
    _, _, _, _, info = env2.step(action)
    assert expected in info["observation"]["lastActionMessage"]
    assert info["success"] is False


def test_json_text_actions_work_like_dicts() -> None:
    env, obs = _fresh()
    _, _, _, _, info = env.step(json.dumps({"action": "ROTATE_DIRECTION", "arg1": "north"}))
    assert info["observation"]["lastActionMessage"] == "I rotated to face north."
    assert info["observation"]["agentLocation"]["faceDirection"] == "north"


def test_seen_but_out_of_reach_object_says_so() -> None:
    env, obs = _fresh()
    far = [e for entries in obs["nearbyObjects"]["objects"].values() for e in entries if e["distance"] >= 2]
    _, _, _, _, info = env.step({"action": "PICKUP", "arg1": far[0]["uuid"]})
    assert "is not accessible" in info["observation"]["lastActionMessage"]


def test_immovable_and_in_dialog_errors() -> None:
    env, obs = _fresh()
    floor = obs["accessibleEnvironmentObjects"][0]
    _, _, _, _, info = env.step({"action": "PICKUP", "arg1": floor["uuid"]})
    assert info["observation"]["lastActionMessage"] == f"That object ({floor['name']}) is not movable."


def test_every_advertised_action_is_parsed() -> None:
    """Every listed action name reaches its handler (no 'Unknown action' for advertised names)."""
    env, obs = _fresh()
    for entry in obs["availableActions"]:
        spec = ACTION_SPECS[entry["name"]]
        env2, _ = _fresh()
        args = {f"arg{i + 1}": "north" if k == "direction" else "initial location" if k == "location" else 1
                for i, k in enumerate(spec.args)}  # fmt: skip
        _, _, _, _, info = env2.step({"action": entry["name"], **args})
        assert "Unknown action" not in info["observation"]["lastActionMessage"]


def test_teleport_can_be_disabled() -> None:
    env = DiscoveryWorldEnv("PickAndPlaceTest", teleport=False)
    _, info = env.reset(seed=0)
    assert "teleportLocations" not in info["observation"]
    assert all("TELEPORT" not in a["name"] for a in info["observation"]["availableActions"])
    _, _, _, _, info = env.step({"action": "TELEPORT_TO_LOCATION", "arg1": "initial location"})
    assert "disabled" in info["observation"]["lastActionMessage"]


# ---- fuzzing: >= 10,000 random and malformed actions across all tasks --------------------
_json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.floats(allow_nan=True),
                          st.text(max_size=12))  # fmt: skip
_names = st.one_of(st.sampled_from(sorted(ACTION_SPECS)), st.text(max_size=10), st.integers())
_args = st.one_of(_json_scalars, st.sampled_from(["north", "south", "initial location"]), st.integers(0, 70000),
                  st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2))  # fmt: skip
_packets = st.fixed_dictionaries({"action": _names}, optional={"arg1": _args, "arg2": _args, "extra": _args})
_actions = st.one_of(
    _packets,
    _packets.map(json.dumps),
    st.text(max_size=40),
    _json_scalars,
    st.fixed_dictionaries({"chosen_dialog_option_int": _args}),
    st.binary(max_size=20),
)
TASKS = list(all_tasks())


@pytest.mark.parametrize("task", TASKS)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions=st.lists(_actions, min_size=90, max_size=90), seed=st.integers(0, 50))
def test_fuzz_actions_never_raise(task: str, actions: list[Any], seed: int) -> None:
    env = DiscoveryWorldEnv(task, max_steps=1000)
    _, info = env.reset(seed=seed)
    uuids = [e["uuid"] for e in info["observation"]["accessibleEnvironmentObjects"]]
    for i, action in enumerate(actions):
        if isinstance(action, dict) and uuids and i % 3 == 0:  # also hit real objects
            action = {**action, "arg1": uuids[i % len(uuids)]}
        obs, reward, terminated, truncated, info = env.step(action)
        assert isinstance(info["observation"]["lastActionMessage"], str)
        assert env.observation_space.contains(obs)
        uuids = [e["uuid"] for e in info["observation"]["accessibleEnvironmentObjects"] + info["observation"]["inventoryObjects"]] or uuids


@pytest.mark.parametrize("name", ["X\x7fY", "ünï", "\x00", "a\u2028b", "😀"])
def test_odd_characters_in_input_keep_the_observation_in_its_space(name: str) -> None:
    env, _ = _fresh()
    obs, _, _, _, info = env.step({"action": name})
    assert env.observation_space.contains(obs)
    assert json.loads(obs)["lastActionMessage"] == info["observation"]["lastActionMessage"]
    assert "Unknown action" in info["observation"]["lastActionMessage"]
