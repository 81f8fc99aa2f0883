"""Bad input from an agent: a clear, specific error in the observation; never an exception,
never a changed world."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
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


STRICT_ONLY: list[tuple[Any, str]] = [
    ({"action": "WAIT", "thought": "hmm"}, "Unexpected key(s) ['thought']"),
    ({"action": "WAIT", "arg1": 3}, "'arg1' is not expected"),
    ({"action": "WAIT", 1: 2, "b" * 5000: 0}, "Unexpected key(s) ['bbbb"),
]


@pytest.mark.parametrize(("action", "expected"), STRICT_ONLY)
def test_strict_mode_rejects_extra_keys_and_unused_arguments(action: Any, expected: str) -> None:
    env = DiscoveryWorldEnv("PickAndPlaceTest", strict=True)
    env.reset(seed=0)
    _, _, _, _, info = env.step(action)
    assert info["success"] is False
    assert expected in info["observation"]["lastActionMessage"]
    assert len(info["observation"]["lastActionMessage"]) < 1000


def test_strict_listing_of_many_extra_keys_is_the_first_twenty_in_the_actions_order() -> None:
    """The 20 keys shown were the first of a set, whose order of strings follows PYTHONHASHSEED:
    the same action gave another message (and observation) in another process."""
    keys = [f"k{i}" for i in range(30)]
    expected = "[" + ", ".join(sorted(repr(k) for k in keys[:20])) + ", ...]"
    env = DiscoveryWorldEnv("PickAndPlaceTest", strict=True)
    env.reset(seed=0)
    _, _, _, _, info = env.step({"action": "WAIT", **dict.fromkeys(keys, 1)})
    assert info["observation"]["lastActionMessage"].startswith(f"Unexpected key(s) {expected}.")
    _, _, _, _, info = env.step(json.dumps(dict.fromkeys(reversed(keys), 1) | {"action": "WAIT"}))
    shown = "[" + ", ".join(sorted(repr(k) for k in keys[10:])) + ", ...]"
    assert info["observation"]["lastActionMessage"].startswith(f"Unexpected key(s) {shown}.")


def test_lenient_default_ignores_what_the_original_ignores() -> None:
    """The original's agents send thought/explanation/memory/... next to the action: accepted."""
    env, obs = _fresh()
    packet = {"action": "ROTATE_DIRECTION", "arg1": "north", "arg2": 77, "thought": "face the door",
              "explanation": "x", "memory": "y", "running_hypotheses": [], "step": 3, "arg1_desc": "north"}  # fmt: skip
    _, _, _, _, info = env.step(packet)
    assert info["success"] is True
    assert info["observation"]["lastActionMessage"] == "I rotated to face north."
    _, _, _, _, info = env.step(json.dumps({"action": "WAIT", "arg1": 3, "thought": "t"}))
    assert info["success"] is True and info["observation"]["lastActionMessage"] == "I waited."


HOSTILE: list[tuple[Any, str]] = [
    ({"action": "PICKUP", "arg1": 10**5000}, "must be an object UUID"),
    ({"action": "PICKUP", "arg1": 2**64}, "must be an object UUID"),
    ({"action": "PICKUP", "arg1": "7" * 5000}, "must be an object UUID"),
    ({"action": "PICKUP", "arg1": 1e300}, "must be an object UUID"),
    ('{"action": "PICKUP", "arg1": ' + "9" * 5000 + "}", "Could not parse the action as JSON"),
    ("[" * 1000 + "]" * 1000, "Could not parse the action as JSON"),
    ('{"action": "WAIT"} trailing', "Could not parse the action as JSON"),
    ({"action": "x" * 3_000_000}, "Unknown action 'xxx"),
    ({"action": "MOVE_DIRECTION", "arg1": "n" * 100_000}, "Invalid direction"),
    ({"action": "TELEPORT_TO_LOCATION", "arg1": "m" * 100_000}, "not a known teleport location"),
    ({"action": "DISCOVERY_FEED_GET_POST_BY_ID", "arg1": 10**5000}, "Invalid post ID"),
    ("x" * 200_000, "characters long"),
    ({"chosen_dialog_option_int": 10**5000}, "You are not in a dialog"),
]


@pytest.mark.parametrize("name", ["\ud800", "\x1b[2J", "moon\x00", "\u202eevil"])
def test_unknown_teleport_location_is_echoed_escaped(name: str) -> None:
    """Other echoes go through `brief`; this one quoted the raw name, so a lone surrogate made the
    message unencodable (print, UTF-8 logs) and terminal escapes reached `play`'s screen."""
    env, _ = _fresh()
    _, _, _, _, info = env.step({"action": "TELEPORT_TO_LOCATION", "arg1": name})
    message = info["observation"]["lastActionMessage"]
    assert info["success"] is False and "not a known teleport location" in message
    assert message.isprintable() and repr(name)[1:-1] in message
    message.encode("utf-8")


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(("action", "expected"), HOSTILE)
def test_hostile_input_gives_a_bounded_message(action: Any, expected: str) -> None:
    env, _ = _fresh()
    obs, _, _, _, info = env.step(action)
    message = info["observation"]["lastActionMessage"]
    assert info["success"] is False and expected in message
    assert len(message) < 1000 and len(obs) < 20_000
    assert env.observation_space.contains(obs)


@pytest.mark.parametrize("depth", [50, 990, 5000])
def test_deeply_nested_arguments_are_refused_without_recursion_errors(depth: int) -> None:
    env, _ = _fresh()
    for action in ({"action": "PICKUP", "arg1": _nested(depth)}, {"action": "USE", "arg1": 1, "arg2": _nested(depth)},
                   {"action": _nested(depth)}, {"action": "MOVE_DIRECTION", "arg1": _nested(depth)}):  # fmt: skip
        obs, _, _, _, info = env.step(action)
        assert info["success"] is False
        assert len(info["observation"]["lastActionMessage"]) < 1000


NUMPY_BAD: list[tuple[Any, str]] = [
    ({"action": "PICKUP", "arg1": np.array([1, 2])}, "must be an object UUID (an integer), not [1, 2]"),
    ({"action": "USE", "arg1": np.zeros(3), "arg2": np.zeros(3)}, "must be an object UUID"),
    ({"action": "PICKUP", "arg1": np.zeros((1000, 1000))}, "numpy array of shape (1000, 1000)"),
    ({"action": "MOVE_DIRECTION", "arg1": np.array(["north", "south"])}, "Invalid direction"),
    ({"action": np.array(["PICKUP", "DROP"])}, "'action' must be a string"),
    ({"chosen_dialog_option_int": np.array([1, 2])}, "You are not in a dialog"),
]


@pytest.mark.parametrize(("action", "expected"), NUMPY_BAD)
def test_numpy_array_arguments_give_a_clear_error_never_raise(action: Any, expected: str) -> None:
    """A policy's arrays are bad input like any other (issue 23.8: they raised ValueError)."""
    env, _ = _fresh()
    before = world_fingerprint(env.world)
    _, _, _, _, info = env.step(action)
    assert info["success"] is False and expected in info["observation"]["lastActionMessage"]
    assert world_fingerprint(env.world) == before


def test_numpy_scalars_work_like_python_values() -> None:
    env, obs = _fresh()
    _, _, _, _, info = env.step({"action": np.str_("ROTATE_DIRECTION"), "arg1": np.array("north")})
    assert info["observation"]["lastActionMessage"] == "I rotated to face north."
    far = [e for entries in obs["nearbyObjects"]["objects"].values() for e in entries if e["distance"] >= 2]
    _, _, _, _, info = env.step({"action": "PICKUP", "arg1": np.int64(far[0]["uuid"])})
    assert "is not accessible" in info["observation"]["lastActionMessage"]  # read as that UUID, not refused


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


# ---- fuzzing: random and malformed actions across all tasks --------------------------------
# `make test` runs 7,040 actions (11 task/difficulty pairs); the slow sweep below runs 102,400 (`pytest -m slow`).
_json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.floats(allow_nan=True),
                          st.text(max_size=12))  # fmt: skip
_huge_ints = st.one_of(st.integers(2**63, 2**70), st.integers(0, 5).map(lambda k: 10 ** (4300 + k * 300)))
_huge_texts = st.integers(1_000, 120_000).map(lambda n: "z" * n)
_deep = st.integers(1, 3000).map(_nested)
_names = st.one_of(st.sampled_from(sorted(ACTION_SPECS)), st.text(max_size=10), st.integers(), _huge_ints, _huge_texts)
_args = st.one_of(_json_scalars, st.sampled_from(["north", "south", "initial location"]), st.integers(0, 70000),
                  st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
                  _huge_ints, _huge_texts, _deep, st.integers(4301, 6000).map(lambda n: "9" * n))  # fmt: skip
_packets = st.fixed_dictionaries(
    {"action": _names}, optional={"arg1": _args, "arg2": _args, "extra": _args, "thought": st.text(max_size=30)}
)
_json_text = st.fixed_dictionaries({"action": st.sampled_from(sorted(ACTION_SPECS)), "arg1": st.integers(0, 70000)}).map(json.dumps)
_actions = st.one_of(
    _packets,
    _packets.map(lambda p: _dumps_or_none(p)),
    st.text(max_size=40),
    _json_scalars,
    st.fixed_dictionaries({"chosen_dialog_option_int": _args}),
    st.binary(max_size=20),
    st.tuples(_json_text, st.text(min_size=1, max_size=8)).map("".join),  # JSON text with trailing garbage
    st.integers(100, 2500).map(lambda n: "[" * n + "]" * n),  # deep nesting as JSON text
    st.integers(0, 3).map(lambda k: '{"action": "PICKUP", "arg1": ' + "9" * (4301 + k * 1000) + "}"),
    _deep,
)
TASKS = [(t, d) for t, cls in all_tasks().items() for d in cls.difficulties]


def _dumps_or_none(packet: dict[str, Any]) -> str | None:
    """The packet as JSON text, as an LLM would send it (None where json itself gives up)."""
    try:
        return json.dumps(packet)[:100_000]
    except (ValueError, RecursionError):
        return None


def _play_fuzz(task: str, difficulty: str, actions: list[Any], seed: int) -> None:
    env = DiscoveryWorldEnv(task, difficulty, max_steps=1000)
    _, info = env.reset(seed=seed)
    uuids = [e["uuid"] for e in info["observation"]["accessibleEnvironmentObjects"]]
    for i, action in enumerate(actions):
        if isinstance(action, dict) and uuids and i % 3 == 0:  # also hit real objects
            action = {**action, "arg1": uuids[i % len(uuids)]}
        obs, reward, terminated, truncated, info = env.step(action)
        message = info["observation"]["lastActionMessage"]
        assert isinstance(message, str)
        assert info["success"] or len(message) <= 2000
        assert env.observation_space.contains(obs)
        uuids = [e["uuid"] for e in info["observation"]["accessibleEnvironmentObjects"] + info["observation"]["inventoryObjects"]] or uuids


@pytest.mark.parametrize(("task", "difficulty"), TASKS[::3])
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(actions=st.lists(_actions, min_size=80, max_size=80), seed=st.integers(0, 50))
def test_fuzz_actions_never_raise(task: str, difficulty: str, actions: list[Any], seed: int) -> None:
    _play_fuzz(task, difficulty, actions, seed)


@pytest.mark.slow
@pytest.mark.parametrize(("task", "difficulty"), TASKS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(actions=st.lists(_actions, min_size=80, max_size=80), seed=st.integers(0, 50))
def test_fuzz_sweep_over_100k_actions(task: str, difficulty: str, actions: list[Any], seed: int) -> None:
    """32 task/difficulty pairs x 40 examples x 80 actions = 102,400 actions."""
    _play_fuzz(task, difficulty, actions, seed)


@pytest.mark.parametrize("name", ["X\x7fY", "ünï", "\x00", "a\u2028b", "😀"])
def test_odd_characters_in_input_keep_the_observation_in_its_space(name: str) -> None:
    env, _ = _fresh()
    obs, _, _, _, info = env.step({"action": name})
    assert env.observation_space.contains(obs)
    assert json.loads(obs)["lastActionMessage"] == info["observation"]["lastActionMessage"]
    assert "Unknown action" in info["observation"]["lastActionMessage"]


class _NoEquality:
    """An argument whose comparisons raise, as pandas.NA's truth value does (`NA == ""` is NA)."""

    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        raise TypeError("boolean value of NA is ambiguous")

    def __ne__(self, other: object) -> bool:
        raise TypeError("boolean value of NA is ambiguous")

    def __repr__(self) -> str:
        return "<NA>"


@pytest.mark.parametrize("strict", [False, True])
def test_an_argument_whose_comparison_raises_is_a_bad_action_not_an_exception(strict: bool) -> None:
    """`value == ""` and `in (None, "")` asked the argument itself: pandas.NA (or any value whose
    __eq__ raises) made step raise, against "bad actions never raise"."""
    env = DiscoveryWorldEnv("PickAndPlaceTest", strict=strict)
    env.reset(seed=0)
    assert env.world is not None
    before = world_fingerprint(env.world)
    for action in ({"action": "PICKUP", "arg1": _NoEquality()}, {"action": "PUT", "arg1": _NoEquality(), "arg2": _NoEquality()},
                   {"action": "USE", "arg1": _NoEquality(), "arg2": 1}, {"action": "MOVE_DIRECTION", "arg1": _NoEquality()}):
        assert "<NA>" in env.step(action)[4]["observation"]["lastActionMessage"]
    assert world_fingerprint(env.world) == before
    waited = env.step({"action": "WAIT", "arg1": _NoEquality()})[4]["observation"]["lastActionMessage"]
    assert ("not expected" in waited) if strict else (waited == "I waited.")  # lenient: the extra argument is ignored


def test_an_integer_too_large_for_an_id_is_said_to_be_one() -> None:
    """10**20 as a post ID or a UUID was answered "expected an integer" though it is one."""
    env, _ = _fresh("DiscoveryFeedTest")
    say = lambda action: env.step(action)[4]["observation"]["lastActionMessage"]  # noqa: E731
    assert "no post has an ID that large" in say({"action": "DISCOVERY_FEED_GET_POST_BY_ID", "arg1": 10**20})
    assert "no object has a UUID that large" in say({"action": "PICKUP", "arg1": 10**20})
    assert "no object has a UUID that large" in say({"action": "PICKUP", "arg1": "9" * 45})
    assert "must be an object UUID (an integer)" in say({"action": "PICKUP", "arg1": "x"})


def test_an_action_on_the_agent_itself_says_so() -> None:
    """The agent's own UUID is listed at its location; PICKUP of it said "not accessible ... must
    be on your tile" although it is on the agent's tile."""
    env, _ = _fresh()
    assert env.scenario is not None
    me = env.scenario.player.uuid
    message = env.step({"action": "PICKUP", "arg1": me})[4]["observation"]["lastActionMessage"]
    assert f"UUID {me} is you" in message, message


def test_any_integer_type_names_an_object_as_numpy_integers_do() -> None:
    """A torch integer scalar (any type with __index__) was no UUID though numpy's are; a
    several-valued one still is no integer."""

    class Index:  # what torch.tensor(12) offers: __index__
        def __init__(self, value: int) -> None:
            self.value = value

        def __index__(self) -> int:
            return self.value

    class Many:
        def __index__(self) -> int:
            raise TypeError("only integer tensors of a single element can be converted to an index")

    env, obs = _fresh()
    uuid = obs["accessibleEnvironmentObjects"][-1]["uuid"]  # the table beside the agent
    plain = env.step({"action": "OPEN", "arg1": uuid})[4]["observation"]["lastActionMessage"]
    assert env.step({"action": "OPEN", "arg1": Index(uuid)})[4]["observation"]["lastActionMessage"] == plain
    assert "must be an object UUID" in env.step({"action": "OPEN", "arg1": Many()})[4]["observation"]["lastActionMessage"]
    assert "must be an object UUID" not in plain
