"""Discrete actions with exact masks, the symbolic observation, and their vector-env use."""

from __future__ import annotations

import pickle
import re

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from discoverylab.bench.runner import suite_tasks
from discoverylab.env import DiscoveryWorldEnv
from discoverylab.rl import DiscreteActions, make_rl_env

SLOW = pytest.mark.slow
MASK_TASKS = [("DialogTest", "normal"), ("ReactorLab", "easy"), ("DoorsWithKeysTest", "normal"),
              pytest.param("PickAndPlaceTest", "normal", marks=SLOW),
              pytest.param("PickAndGiveTest", "normal", marks=SLOW)]  # fmt: skip


def _accepted(env: DiscreteActions) -> np.ndarray:
    """Which actions the parser accepts now: the agent records every parsed action and a
    rejected one leaves the world untouched, so each action runs on the live executor and a
    fresh clone replaces the env after every accepted (possibly world-changing) one."""
    snapshot = pickle.dumps(env)
    out = np.zeros(env.n, dtype=bool)
    for i in range(env.n):
        agent = env.unwrapped.scenario.player
        before = len(agent.history)
        env.unwrapped.executor.execute(env.packet(i))
        out[i] = len(agent.history) > before
        if out[i]:
            env = pickle.loads(snapshot)
    return out


def _states(env: DiscreteActions, seed: int, count: int):  # type: ignore[no-untyped-def]
    """Yield the env at `count` states of a seeded random masked rollout, talking when possible."""
    rng = np.random.default_rng(seed)
    was_talking = False
    _, info = env.reset(seed=seed)
    talk = [i for i in range(env.n) if env.layout(i)[0] == "TALK"]
    for step in range(count * 4):
        talking = env.unwrapped.scenario.player.dialog_partner is not None
        if step % 4 == 0 or (talking and not was_talking):
            yield info  # every 4th state, and each state where a dialog starts
        was_talking = talking
        mask = info["action_mask"]
        talkable = [i for i in talk if mask[i] and env.slots[env.layout(i)[1][0]].obj.dialogable]
        choices = talkable if talkable and rng.random() < 0.7 else np.flatnonzero(mask)
        _, _, term, trunc, info = env.step(int(rng.choice(choices)))
        if term or trunc:
            _, info = env.reset(seed=seed + step + 1)


@pytest.mark.parametrize(("task", "difficulty"), MASK_TASKS)
def test_mask_is_exactly_the_set_the_parser_accepts(task: str, difficulty: str) -> None:
    env = DiscreteActions(DiscoveryWorldEnv(task, difficulty, info="lean"), object_slots=5, locations=3)
    in_dialog = 0
    for info in _states(env, seed=1, count=5):
        mask = info["action_mask"]
        assert np.array_equal(mask, env.action_masks()) and mask.dtype == bool and mask.any()
        in_dialog += int(env.unwrapped.scenario.player.dialog_partner is not None)
        accepted = _accepted(pickle.loads(pickle.dumps(env)))
        wrong = [(i, env.layout(i), bool(mask[i])) for i in np.flatnonzero(accepted != mask)]
        assert not wrong, wrong
    if task in ("DialogTest", "ReactorLab"):
        assert in_dialog, "the rollout should have reached a dialog"


def test_layout_covers_every_index_and_bad_indices_are_rejected() -> None:
    env = DiscreteActions(DiscoveryWorldEnv("PickAndPlaceTest"), object_slots=4, locations=2, dialog_options=3)
    env.reset(seed=0)
    names = [env.layout(i)[0] for i in range(env.n)]
    assert env.n == 15 + 10 * 4 + 2 * 16 + 2 + 3 and names.count("PUT") == 16 and names.count("DIALOG") == 3
    assert env.packet(env.base_pair + 1 * 4 + 2) == {"action": "PUT", "arg1": env.slots[1].obj.uuid,
                                                     "arg2": env.slots[2].obj.uuid}  # fmt: skip
    with pytest.raises(ValueError, match="outside"):
        env.layout(env.n)
    for bad in (env.n, -1, 3.7, np.float32(1.0), "3", None, np.array([3]), True, False):  # never truncated, never parsed
        steps = env.unwrapped._steps  # (a bool, say one of a mask's values, played action 1 or 0)
        with pytest.raises(ValueError, match="outside|whole number"):
            env.step(bad)  # type: ignore[arg-type]
        assert env.unwrapped._steps == steps
        for name_it in (env.layout, env.packet):
            with pytest.raises(ValueError, match="outside|whole number"):
                name_it(bad)  # type: ignore[arg-type]
    assert env.layout(np.int64(env.base_pair)) == ("PUT", (0, 0)) and env.packet(np.int64(12)) == {"action": "WAIT"}
    for fine in (np.int64(12), np.array(12), 12):  # WAIT, whichever integer type
        assert env.step(fine)[4]["observation"]["lastActionMessage"] == "I waited."  # type: ignore[arg-type]


def test_symbolic_observation_fits_its_space_and_check_env_passes() -> None:
    env = make_rl_env("DialogTest")
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert obs["tiles"].shape == (7, 7, 4) and obs["slots"].shape == (12, 17) and obs["dialog"].shape == (10, 3)
    assert obs["tiles"][3, 3].any() and obs["tile_state"][3, 3, 0] == 1  # the agent's own tile
    check_env(env.unwrapped, skip_render_check=True)
    check_env(env, skip_render_check=True)


def test_symbolic_dialog_marks_the_option_named_in_the_line() -> None:
    env = make_rl_env("DialogTest")
    _, info = env.reset(seed=0)
    sally = next(i for i, s in enumerate(env.slots) if s.obj.is_npc)
    _, *_, info = env.step(env.base_single + 9 * env.num_slots + sally)  # TELEPORT_TO_OBJECT
    assert info["success"], info["message"]
    sally = next(i for i, s in enumerate(env.slots) if s.obj.is_npc)
    obs, *_, info = env.step(env.base_single + 6 * env.num_slots + sally)  # TALK
    assert info["success"], info["message"]
    line = env.unwrapped.observation_dict()["dialog_box"]
    named = [k for k, v in line["dialogOptions"].items() if f"`{v}`" in line["dialogIn"]]
    assert obs["agent"][3] == 1 and obs["dialog"][:, 0].sum() == len(line["dialogOptions"])
    assert [i + 1 for i in np.flatnonzero(obs["dialog"][:, 2])] == [int(k) for k in named]


def test_symbolic_and_text_modes_take_identical_trajectories() -> None:
    text = DiscreteActions(DiscoveryWorldEnv("PickAndGiveTest", info="lean"))
    sym = make_rl_env("PickAndGiveTest")
    rng = np.random.default_rng(3)
    _, ti = text.reset(seed=2)
    _, si = sym.reset(seed=2)
    for _ in range(60):
        assert np.array_equal(ti["action_mask"], si["action_mask"])
        action = int(rng.choice(np.flatnonzero(ti["action_mask"])))
        _, tr, tterm, ttrunc, ti = text.step(action)
        _, sr, sterm, strunc, si = sym.step(action)
        assert (ti["message"], tr, tterm, ttrunc) == (si["message"], sr, sterm, strunc)
        if tterm or ttrunc:
            break


def test_symbolic_observations_are_deterministic_and_pickle() -> None:
    a, b = make_rl_env("MovingAgentsTest"), make_rl_env("MovingAgentsTest")
    oa, _ = a.reset(seed=7)
    ob, _ = b.reset(seed=7)
    for _ in range(20):
        assert all(np.array_equal(oa[k], ob[k]) for k in oa)
        oa, *_ = a.step(12)  # WAIT: the characters wander on their own
        ob, *_ = b.step(12)
    clone = pickle.loads(pickle.dumps(a))
    assert all(np.array_equal(x, y) for x, y in zip(clone.step(10)[0].values(), a.step(10)[0].values(), strict=True))


def test_make_rl_env_bad_reward_or_observation_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="valid: success, procedure, explore"):
        make_rl_env("DoorsTest", reward="shaped")
    with pytest.raises(ValueError, match="symbolic observation only"):
        make_rl_env("DoorsTest", observation="text")
    with pytest.raises(ValueError, match="make_rl_env"):  # the registered ids have no explore reward
        gymnasium.make("discoverylab/DoorsTest-Normal-v0", reward="explore")
    assert make_rl_env("DoorsTest", observation="symbolic").observation_space == make_rl_env("DoorsTest").observation_space


def test_bad_radius_or_slot_count_is_a_clear_error() -> None:
    for bad in ({"radius": -1}, {"radius": 3.5}, {"object_slots": -1}, {"object_slots": 2.0}):
        with pytest.raises(ValueError, match="whole number from 0"):
            make_rl_env("DoorsTest", **bad)  # type: ignore[arg-type]
    for bad in ({"locations": -2}, {"dialog_options": -1}, {"object_slots": -1}, {"object_slots": 2.5}):
        with pytest.raises(ValueError, match="whole number from 0"):  # locations=-2 once overlapped dialog and teleports
            DiscreteActions(DiscoveryWorldEnv("DoorsTest"), **bad)  # type: ignore[arg-type]
    obs, _ = make_rl_env("DoorsTest", radius=0, object_slots=0).reset(seed=0)  # the edge still works
    assert obs["tiles"].shape == (1, 1, 4) and obs["slots"].shape == (0, 17)


def test_numpy_integer_seeds_reset_like_python_ints() -> None:
    """A seed taken from a numpy array (a vector env's seeds, `rng.integers`) plays the same level."""
    env, want = make_rl_env("DoorsTest"), make_rl_env("DoorsTest").reset(seed=7)[0]
    for seed in (np.int64(7), np.uint32(7)):
        obs, _ = env.reset(seed=seed)
        assert all(obs[k].tobytes() == want[k].tobytes() for k in want)
        assert env.unwrapped.np_random_seed == 7
    with pytest.raises(TypeError, match="options must be a dict"):
        env.reset(seed=7, options=["instance"])  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["async", "sync"])
def test_vector_env_of_rl_envs_carries_masks(mode: str) -> None:
    envs = gymnasium.make_vec("discoverylab/PickAndPlaceTest-Normal-v0", num_envs=2, vectorization_mode=mode,
                              observation="symbolic", wrappers=[DiscreteActions])  # fmt: skip
    try:
        obs, info = envs.reset(seed=[0, 1])
        assert obs["slots"].shape == (2, 12, 17) and info["action_mask"].shape == (2, envs.single_action_space.n)
        obs, _, _, _, info = envs.step(np.array([12, 12]))  # WAIT
        assert list(info["message"]) == ["I waited.", "I waited."] and info["action_mask"].any(axis=1).all()
    finally:
        envs.close()


@pytest.mark.parametrize("task", [task for task, _ in suite_tasks("all", "normal")])
def test_a_reset_lets_the_last_world_go(task: str) -> None:
    """The RL env keeps nothing of a finished episode (mask and view caches included), and no
    world object keeps a cycle (`WorldObject.release`): the world is freed by reference counting
    at the next reset, so a long run's memory stays flat even with the collector relaxed."""
    import gc
    import weakref

    from discoverylab import native

    if native.active():  # mypyc never clears weak references (mypyc/mypyc#1102): compiled classes refuse them
        pytest.skip("the compiled engine's objects refuse weak references (docs/performance.md)")
    env = make_rl_env(task, max_steps=10**6)
    _, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(150):
        _, _, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if terminated:
            break
    old = weakref.ref(env.unwrapped.world)  # type: ignore[attr-defined]
    gc.collect()
    gc.disable()
    try:
        env.reset(seed=1)
        assert old() is None
    finally:
        gc.enable()


def test_numpy_integer_options_work_end_to_end_and_bad_ones_name_the_option() -> None:
    """`make_rl_env("DoorsTest", object_slots=np.int64(12))` was refused as "not 12" (the env took
    numpy integers, the encoder and the action wrapper did not): one check now serves all three."""
    from discoverylab.rl.symbolic import SymbolicEncoder
    from discoverylab.rl.vector import BatchedVectorEnv

    plain = make_rl_env("DoorsTest", object_slots=6, radius=2, max_steps=3)
    env = make_rl_env("DoorsTest", object_slots=np.int64(6), radius=np.int32(2), max_steps=np.uint8(3))
    assert env.action_space == plain.action_space and env.observation_space == plain.observation_space
    assert type(env.num_slots) is int and type(env.unwrapped.symbolic.num_slots) is int  # plain ints on the step path
    (obs, _), (want, _) = env.reset(seed=1), plain.reset(seed=1)
    for action in (12, 1, 12):
        (obs, _, _, trunc, _), (want, *_) = env.step(action), plain.step(action)
        assert all(obs[k].tobytes() == want[k].tobytes() for k in want)
    assert trunc
    wrapped = DiscreteActions(DiscoveryWorldEnv("DoorsTest", observation="symbolic"), object_slots=np.int64(12),
                              locations=np.int16(8), dialog_options=np.uint32(10))  # fmt: skip
    assert wrapped.n == 441
    assert SymbolicEncoder(np.int64(3), np.int64(12), np.int8(10)).num_slots == 12
    envs = BatchedVectorEnv("DoorsTest", num_envs=np.int64(2), workers=np.int64(1), object_slots=np.int64(6))
    try:
        obs, _ = envs.reset(seed=0)
        assert obs["slots"].shape == (2, 6, 17)
        assert envs.step(np.array([12, 12]))[4]["step"].tolist() == [1, 1]
    finally:
        envs.close()
    makers = (lambda **kw: make_rl_env("DoorsTest", **kw), lambda **kw: SymbolicEncoder(**kw),
              lambda **kw: DiscreteActions(DiscoveryWorldEnv("DoorsTest"), **kw))  # fmt: skip
    for make in makers:
        for bad, shown in ((True, "True"), (np.True_, "np.True_"), (12.0, "12.0"), ("12", "'12'"), (-1, "-1"),
                           (np.int64(-1), "np.int64(-1)")):  # fmt: skip
            with pytest.raises(ValueError, match=f"^{re.escape(f'object_slots must be a whole number from 0 to 1024, not {shown}.')}$"):
                make(object_slots=bad)


def test_copy_copy_gives_an_independent_env_as_deepcopy_does() -> None:
    """`copy.copy(env)` shared the world: stepping the copy moved the original's agent while its
    step counter, cached observation and the wrapper's slots stayed behind."""
    import copy

    plain = DiscoveryWorldEnv("DoorsTest", observation="symbolic", info="lean")
    for env in (plain, make_rl_env("DoorsTest", reward="explore", levels="dev", num_levels=3)):
        env.reset(seed=2)
        for level in (env, getattr(env, "env", env)):  # the outer wrapper and the one below it
            clone = copy.copy(level)
            assert clone.unwrapped is not env.unwrapped and clone.unwrapped.world is not env.unwrapped.world
        clone = copy.copy(env)
        move = 1 if isinstance(env, DiscreteActions) else {"action": "MOVE_DIRECTION", "arg1": "east"}
        clone.step(move)
        assert env.unwrapped._steps == 0 and clone.unwrapped._steps == 1
        agent, twin = env.unwrapped.scenario.player, clone.unwrapped.scenario.player
        assert (agent.x, agent.y) != (twin.x, twin.y)  # the original's agent stayed where it was
        other = copy.copy(env)
        a, b = env.step(move), other.step(move)
        assert all(a[0][k].tobytes() == b[0][k].tobytes() for k in a[0]) and a[1:4] == b[1:4]
    from discoverylab.rl.features import OneHotObservation

    sb3 = OneHotObservation(make_rl_env("DoorsTest"))  # make_sb3_env's top wrapper
    sb3.reset(seed=2)
    copy.copy(sb3).step(1)
    assert sb3.unwrapped._steps == 0
    other = copy.copy(sb3)
    assert np.array_equal(sb3.step(1)[0], other.step(1)[0])


def test_gymnasium_wrappers_stack_on_the_rl_env_as_documented() -> None:
    """docs/rl.md, "Gymnasium's wrappers on top": statistics, an outside time limit, a flat
    normalised observation, and the mask through `get_wrapper_attr`."""
    from gymnasium.wrappers import (
        FlattenObservation,
        NormalizeObservation,
        RecordEpisodeStatistics,
        TimeLimit,
    )
    from gymnasium.wrappers import vector as vector_wrappers

    from discoverylab.rl.vector import BatchedVectorEnv

    env = RecordEpisodeStatistics(TimeLimit(NormalizeObservation(FlattenObservation(make_rl_env("DoorsTest"))), 4))
    obs, info = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape and obs.dtype == np.float32
    for _ in range(4):
        assert np.array_equal(env.get_wrapper_attr("action_masks")(), info["action_mask"])
        obs, _, term, trunc, info = env.step(12)
    assert trunc and not term and "scorecard" not in info  # truncated from outside: the env never knew
    assert info["episode"]["l"] == 4 and list(env.length_queue) == [4]
    envs = vector_wrappers.RecordEpisodeStatistics(BatchedVectorEnv("DoorsTest", num_envs=2, workers=1, max_steps=3))
    try:
        envs.reset(seed=0)
        for _ in range(3):
            *_, info = envs.step(np.array([12, 12]))
        assert info["episode"]["l"].tolist() == [3, 3] and "scorecard" in info  # the env's own limit
    finally:
        envs.close()


def test_discrete_actions_name_the_slots_the_observation_shows() -> None:
    """`make_vec(id, observation="symbolic", object_slots=4, wrappers=[DiscreteActions])` gave
    actions over 12 slots beside an observation of 4: the mask offered objects the policy never
    saw. The wrapper now takes the observation's slot count, and refuses another one."""
    env = DiscreteActions(gymnasium.make("discoverylab/DoorsTest-Normal-v0", observation="symbolic", object_slots=4))
    assert env.num_slots == 4 and env.action_space == make_rl_env("DoorsTest", object_slots=4).action_space
    obs, info = env.reset(seed=0)
    assert len(env.slot_data) <= 4 and obs["slots"].shape == (4, 17)
    envs = gymnasium.make_vec("discoverylab/DoorsTest-Normal-v0", num_envs=2, vectorization_mode="sync",
                              observation="symbolic", object_slots=4, wrappers=[DiscreteActions])  # fmt: skip
    assert envs.single_action_space.n == env.n
    envs.close()
    with pytest.raises(ValueError, match="object_slots=12, .* shows 4 slots"):
        DiscreteActions(DiscoveryWorldEnv("DoorsTest", observation="symbolic", object_slots=4), object_slots=12)
    assert DiscreteActions(DiscoveryWorldEnv("DoorsTest")).num_slots == 12  # no symbolic observation: the default


def test_slot_and_option_counts_have_a_ceiling_a_machine_can_hold() -> None:
    """`object_slots=10**6` tried to allocate 1.8 TiB for the mask (2K² pair actions), and a few
    thousand built tens of millions of layouts for minutes; counts stop at 1,024 (2.1M actions)."""
    from discoverylab.rl.symbolic import SymbolicEncoder

    for name in ("object_slots", "locations", "dialog_options"):
        with pytest.raises(ValueError, match=rf"^{name} must be a whole number from 0 to 1024, not 1000000\."):
            DiscreteActions(DiscoveryWorldEnv("DoorsTest"), **{name: 10**6})
    with pytest.raises(ValueError, match=r"^object_slots must be a whole number from 0 to 1024"):
        make_rl_env("DoorsTest", object_slots=10**6)
    with pytest.raises(ValueError, match=r"^radius must be a whole number from 0 to 32"):
        SymbolicEncoder(radius=10**9)
    assert make_rl_env("DoorsTest", object_slots=64).num_slots == 64
