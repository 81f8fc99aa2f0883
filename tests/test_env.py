"""The Gymnasium API: registration, check_env, step semantics, errors for bad task names."""

from __future__ import annotations

import json

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import discoverylab
from discoverylab.env import DiscoveryWorldEnv

ALL_IDS = [i for i in discoverylab.register_envs() if "/Lab-" not in i and "MacroEcon" not in i]


def test_lab_ids_registered_on_import_match_the_lab_registry() -> None:
    from discoverylab.labs.gym_text import lab_gym_id
    from discoverylab.labs.protocol import protocol_names

    builtin = [n for n in protocol_names() if n.split("/")[0] in ("sequence", "macro")]  # tests add others
    assert set(discoverylab.LAB_PROTOCOLS) == set(builtin)
    for name in builtin:
        assert lab_gym_id(name) == discoverylab.lab_gym_id(name)
        assert lab_gym_id(name) in gymnasium.registry
    env = gymnasium.make("discoverylab/Lab-SequenceHiddenProperty-v0")
    assert isinstance(env.reset(seed=0)[0], str)


def test_every_task_and_difficulty_has_a_gym_id() -> None:
    expected = {discoverylab.gym_id(t, d) for t, diffs in discoverylab.tasks().items() for d in diffs}
    assert set(ALL_IDS) == expected
    assert all(i.startswith("discoverylab/") and i.endswith("-v0") for i in ALL_IDS)


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_check_env_passes(env_id: str) -> None:
    env = gymnasium.make(env_id)
    check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_reset_and_step_contract(env_id: str) -> None:
    env = gymnasium.make(env_id, info="full")
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    data = json.loads(obs)
    assert data == info["observation"]
    assert data["world_steps"] == 0
    assert "scorecard" not in data and "score" not in json.dumps(data["taskProgress"])
    assert env.unwrapped.scorecard(reveal=True)["maxScore"] > 0
    obs2, reward, terminated, truncated, info2 = env.step({"action": "WAIT"})
    assert json.loads(obs2)["world_steps"] == 1
    assert info2["observation"]["lastActionMessage"] == "I waited."
    assert isinstance(reward, float) and not terminated and not truncated


def test_registered_ids_give_lean_info() -> None:
    env = gymnasium.make("discoverylab/PickAndPlaceTest-Normal-v0")
    _, info = env.reset(seed=0)
    assert set(info) == {"success", "step", "message"}
    *_, info = env.step({"action": "WAIT"})
    assert info == {"success": True, "step": 1, "message": "I waited."}


def test_unknown_task_and_difficulty_name_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="Valid tasks: .*PickAndPlaceTest"):
        discoverylab.make("NoSuchTask")
    with pytest.raises(ValueError, match="Valid difficulties: easy, normal, challenge"):
        discoverylab.make("PickAndPlaceTest", difficulty="nightmare")
    with pytest.raises(ValueError, match="Valid difficulties: normal"):
        discoverylab.make("Tutorial", difficulty="challenge")


@pytest.mark.parametrize(("task", "difficulty"), [(None, "normal"), (3, "normal"), (["Proteomics"], "normal"),
                                                  ("x" * 1_000_000, "normal"), ("Proteomics", None),
                                                  ("Proteomics", 1), ("Proteomics", "x" * 1_000_000)])
def test_task_and_difficulty_of_another_type_or_huge_get_the_listing_error(task: object, difficulty: object) -> None:
    """They raised AttributeError/TypeError from inside the name lookup, and a megabyte name was quoted whole."""
    with pytest.raises(ValueError, match="Valid (tasks|difficulties): ") as caught:
        DiscoveryWorldEnv(task, difficulty)  # type: ignore[arg-type]
    assert len(str(caught.value)) < 1000


@pytest.mark.parametrize(("option", "value"), [
    ("radius", 10**9), ("radius", 33), ("radius", -1), ("radius", "3"), ("radius", 1.5), ("radius", None),
    ("max_steps", "10"), ("max_steps", -1), ("max_steps", 2.5), ("max_steps", True),
    ("image_scale", 2.0), ("image_scale", True), ("object_slots", -1),
    ("teleport", "no"), ("strict", "false"), ("image_grid", 2), ("notes", "yes"),
])
def test_bad_numeric_options_are_refused_at_construction(option: str, value: object) -> None:
    """Before: radius=10**9 hung at reset (a (2r+1)**2-tile window), a string radius or max_steps
    raised a TypeError at reset or mid-step, image_scale=2.0 a TypeError from gymnasium's Box;
    teleport="no" or strict="false" counted as True."""
    kwargs = {"observation": "symbolic"} if option == "object_slots" else {}
    with pytest.raises(ValueError, match=option):
        DiscoveryWorldEnv("PickAndPlaceTest", **kwargs, **{option: value})  # type: ignore[arg-type]


def test_numeric_options_take_numpy_integers_and_the_extremes() -> None:
    import numpy as np

    env = DiscoveryWorldEnv("PickAndPlaceTest", radius=np.int64(32), max_steps=np.int32(1), image_scale=np.int8(2))
    assert (type(env.radius), env.radius, env.max_steps, env.image_scale) == (int, 32, 1, 2)
    _, info = env.reset(seed=0)
    assert info["observation"]["nearbyObjects"]["distance"] == 32
    assert env.step({"action": "WAIT"})[3] is True
    assert DiscoveryWorldEnv("PickAndPlaceTest", radius=0).radius == 0


def test_loose_task_names_resolve() -> None:
    for name in ("PickAndPlaceTest", "pick_and_place_test", "Small Skills: Pick and Place Test"):
        assert discoverylab.make(name).scenario_cls.task_id == "PickAndPlaceTest"


def test_truncation_at_step_limit_and_override() -> None:
    env = DiscoveryWorldEnv("PickAndPlaceTest", max_steps=5)
    env.reset(seed=0)
    flags = [env.step({"action": "WAIT"})[3] for _ in range(5)]
    assert flags == [False, False, False, False, True]
    default = DiscoveryWorldEnv("PickAndPlaceTest")
    default.reset(seed=0)
    assert default._limit == 100


def test_reward_is_change_of_normalised_procedure_score() -> None:
    from discoverylab.agents import OracleAgent

    env = DiscoveryWorldEnv("PickAndPlaceTest", reward="procedure")
    _, info = env.reset(seed=1)
    agent = OracleAgent("PickAndPlaceTest")
    obs = info["observation"]
    agent.reset(obs)
    total = 0.0
    done = False
    while not done:
        _, reward, terminated, truncated, info = env.step(agent.act(obs))
        obs = info["observation"]
        total += float(reward)
        done = terminated or truncated
    assert total == pytest.approx(info["scorecard"]["scoreNormalized"]) == pytest.approx(1.0)
    assert terminated and info["scorecard"]["completedSuccessfully"]


def test_step_before_reset_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="reset"):
        DiscoveryWorldEnv("PickAndPlaceTest").step({"action": "WAIT"})


def test_accessors_before_reset_say_to_reset() -> None:
    """They failed with a bare AssertionError (no message), step and scorecard with this one."""
    env = DiscoveryWorldEnv("PickAndPlaceTest")
    for read in (env.image, env.observation_dict, lambda: env.task_description):
        with pytest.raises(RuntimeError, match=r"Call reset\(\) before"):
            read()


def test_vector_env_runs() -> None:
    envs = gymnasium.vector.SyncVectorEnv([lambda: DiscoveryWorldEnv("PickAndPlaceTest") for _ in range(2)])
    obs, _ = envs.reset(seed=[0, 1])
    assert len(obs) == 2 and obs[0] != obs[1]
    envs.step(['{"action": "WAIT"}', '{"action": "WAIT"}'])
    envs.close()


@pytest.mark.parametrize("task", list(discoverylab.tasks()))
def test_observations_match_the_typed_schema(task: str) -> None:
    from discoverylab.agents import RandomAgent
    from discoverylab.world.observation_model import Observation

    env = DiscoveryWorldEnv(task)
    _, info = env.reset(seed=0)
    agent = RandomAgent(0)
    for _ in range(30):
        model = Observation.model_validate(info["observation"])
        assert json.loads(model.to_json())["world_steps"] == info["observation"]["world_steps"]
        _, _, term, trunc, info = env.step(agent.act(info["observation"]))
        if term or trunc:
            break


def test_image_and_both_observation_modes() -> None:
    import numpy as np

    env = discoverylab.make("PickAndPlaceTest", observation="both")
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert obs["image"].shape == (512, 768, 3) and obs["image"].dtype == np.uint8
    assert json.loads(obs["text"]) == info["observation"]
    moved, *_ = env.step({"action": "MOVE_DIRECTION", "arg1": "north"})
    assert not np.array_equal(moved["image"], obs["image"])  # the view follows the agent
    img_env = discoverylab.make("PickAndPlaceTest", observation="image", image_scale=2)
    img, _ = img_env.reset(seed=0)
    assert img.shape == (1024, 1536, 3)
    check_env(img_env, skip_render_check=True)


def test_image_observations_are_deterministic() -> None:
    import numpy as np

    a = discoverylab.make("MovingAgentsTest", observation="image")
    b = discoverylab.make("MovingAgentsTest", observation="image")
    a.reset(seed=5)
    b.reset(seed=5)
    for _ in range(5):
        ia, *_ = a.step({"action": "WAIT"})
        ib, *_ = b.step({"action": "WAIT"})
        assert np.array_equal(ia, ib)


@pytest.mark.parametrize("scale", [0, 5, 100, 1.5, "2", True])
def test_image_scale_out_of_range_is_refused_before_drawing(scale: object) -> None:
    """scale=100 drew an 11.8 GB array (and larger ones ran out of memory); "2" raised a TypeError."""
    env = discoverylab.make("DialogTest")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"scale must be a whole number in 1\.\.4"):
        env.image(scale=scale)  # type: ignore[arg-type]
    assert env.image(scale=4).shape == (2048, 3072, 3)


def test_rgb_array_render_and_bad_modes() -> None:
    env = discoverylab.make("DialogTest", render_mode="rgb_array")
    env.reset(seed=0)
    assert env.render().shape == (512, 768, 3)
    with pytest.raises(ValueError, match="valid: text, image, both"):
        discoverylab.make("DialogTest", observation="smell")
    with pytest.raises(ValueError, match="image_scale"):
        discoverylab.make("DialogTest", image_scale=3)
