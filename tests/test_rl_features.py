"""One-hot features (`OneHotObservation`) and level sets (`Levels`, `make_rl_env(levels=...)`)."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from discoverylab.instances import InstanceError, make_instance
from discoverylab.rl import make_rl_env, make_sb3_env
from discoverylab.rl.features import BUCKETS, CATALOG, OneHotObservation, features


def test_features_are_one_hot_floats_in_the_unit_box() -> None:
    env = make_sb3_env("PickAndPlaceTest")
    obs, _ = env.reset(seed=0)
    assert obs.dtype == np.float32 and obs.ndim == 1 and env.observation_space.contains(obs)
    sym = make_rl_env("PickAndPlaceTest")
    sym_obs, _ = sym.reset(seed=0)
    w = sym_obs["tiles"].shape[0]
    hot = obs[: w * w * BUCKETS].reshape(w * w, BUCKETS)
    kinds = sym_obs["tiles"].reshape(w * w, -1)
    for cell in range(w * w):  # every catalog kind on a tile lights its own bucket, nothing else
        expect = {int(k) for k in kinds[cell] if 0 < k <= CATALOG}
        lit = set(np.flatnonzero(hot[cell]).tolist())
        assert expect <= lit and len(lit) <= len({int(k) for k in kinds[cell] if k})
    check_env(env, skip_render_check=True)


def test_features_batch_equals_one_at_a_time() -> None:
    env = make_rl_env("DoorsTest")
    rows = []
    obs, info = env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(6):
        rows.append(obs)
        mask = info["action_mask"]
        obs, _, _, _, info = env.step(int((rng.random(mask.shape) * mask).argmax()))
    batch = {k: np.stack([r[k] for r in rows]) for k in rows[0]}
    one = np.stack([features({k: v[None] for k, v in r.items()})[0] for r in rows])
    assert np.array_equal(features(batch), one)
    with pytest.raises(ValueError, match="takes a batch"):  # one observation, no batch axis
        features(rows[0])


def test_one_hot_wrapper_refuses_a_text_env_and_passes_masks() -> None:
    from discoverylab.env import DiscoveryWorldEnv

    with pytest.raises(ValueError, match="symbolic"):
        OneHotObservation(DiscoveryWorldEnv("DialogTest"))
    env = make_sb3_env("DialogTest")
    _, info = env.reset(seed=0)
    assert np.array_equal(env.action_masks(), info["action_mask"])


def test_levels_draw_from_the_split_and_replay_from_a_seed() -> None:
    env = make_rl_env("PickAndPlaceTest", levels="train", num_levels=3)
    inner = env.env
    drawn = []
    for _ in range(12):
        env.reset()
        drawn.append(inner.level)
        public = env.unwrapped.instance
        assert public["split"] == "train" and public["seed"] == make_instance("PickAndPlaceTest", "normal", "train", inner.level).seed
    assert set(drawn) <= {0, 1, 2} and len(set(drawn)) > 1
    env.reset(seed=5)
    first = [inner.level] + [env.reset()[1] and inner.level for _ in range(5)]
    env.reset(seed=5)
    again = [inner.level] + [env.reset()[1] and inner.level for _ in range(5)]
    assert first == again
    inst = make_instance("PickAndPlaceTest", "normal", "dev", 4)
    env.reset(options={"instance": inst})  # an explicit instance still wins
    assert env.unwrapped.instance["split"] == "dev"


def test_an_empty_split_or_a_key_without_the_test_split_is_refused() -> None:
    """`levels=""` played the train split (read as "no split given"), and `level_key` without
    `levels="test"` was dropped: a researcher meaning to report on the sealed split played raw
    seeds, or the train split, without a word."""
    with pytest.raises(InstanceError, match="Unknown split ''"):
        make_rl_env("DialogTest", levels="")
    key = b"k" * 32
    for options in ({}, {"levels": "train"}, {"levels": "dev", "num_levels": 3}, {"num_levels": 3}):
        with pytest.raises(InstanceError, match=r"level_key .* levels='test'"):
            make_rl_env("DialogTest", level_key=key, **options)  # type: ignore[arg-type]
    env = make_rl_env("DialogTest", levels="test", level_key=key)
    env.reset(seed=0)
    assert env.unwrapped.instance["split"] == "test"


def test_a_bad_level_key_is_refused_when_the_env_is_made_not_at_its_first_reset() -> None:
    """A short key built the env and failed at the first reset (in a batched env, inside a
    worker), and an integer key raised "object of type 'int' has no len()" there."""
    for key, why in ((b"short", "too short"), ("x", "too short"), (12345, "bytes or"), (None, "sealed")):
        with pytest.raises(InstanceError, match=why):
            make_rl_env("DialogTest", levels="test", level_key=key)  # type: ignore[arg-type]
    make_rl_env("DialogTest", levels="test", level_key="k" * 16).reset(seed=0)  # a key file's text


def test_a_seeded_reset_through_levels_seeds_the_env_s_generator() -> None:
    """`reset(seed=s)` through `Levels` seeded only the level order: the env played an instance,
    so its `np_random` (which wrappers such as StickyAction draw from) stayed unseeded and
    `check_env` failed. It is seeded from s now, on a stream apart from the level order's."""
    from gymnasium.wrappers import StickyAction

    env = make_rl_env("DoorsTest", levels="dev", num_levels=3)
    check_env(env, skip_render_check=True)
    env.reset(seed=5)
    assert env.env.level == int(np.random.default_rng(5).integers(0, 3))  # the level order is as before
    assert env.unwrapped.np_random_seed == 5
    first = env.unwrapped.np_random.random()
    assert first != np.random.default_rng(5).random()  # not the level order's own stream
    runs = []
    for _ in range(2):  # a sticky-action run repeats itself under the same seed
        sticky = StickyAction(make_rl_env("DoorsTest", levels="dev", num_levels=3), repeat_action_probability=0.5)
        sticky.reset(seed=7)
        runs.append([sticky.step(a)[0]["agent"].tobytes() for a in (1, 2, 3, 0, 1, 2, 3, 0, 1, 2)])
    assert runs[0] == runs[1]


def test_levels_bad_input_is_a_clear_error() -> None:
    with pytest.raises(InstanceError, match="num_levels"):
        make_rl_env("DialogTest", levels="train", num_levels=0)
    with pytest.raises(InstanceError, match="num_levels"):
        make_rl_env("DialogTest", levels="dev", num_levels=10**6)
    with pytest.raises(InstanceError, match="Unknown split"):
        make_rl_env("DialogTest", levels="validation")
    with pytest.raises(InstanceError, match="sealed"):
        make_rl_env("DialogTest", levels="test")
    assert make_rl_env("DialogTest", levels="dev", num_levels=np.int64(3)).env.num_levels == 3
    env = make_rl_env("DialogTest", levels="dev")
    for bad in (-1, 3.7, "3", True):  # never truncated or parsed into a level order
        with pytest.raises(InstanceError, match="whole number"):
            env.reset(seed=bad)  # type: ignore[arg-type]
    env.reset(seed=np.uint32(3))
    key = b"k" * 32
    env = make_rl_env("DialogTest", levels="test", level_key=key, num_levels=4)
    env.reset(seed=0)
    public = env.unwrapped.instance
    assert public["split"] == "test" and "seed" not in public  # sealed: the seed stays private


def test_action_history_names_the_last_action_and_counts_unchanged_steps() -> None:
    """`history=True` appends the last action's kind and how long the observation has not
    changed: what lets a greedy policy leave a loop of an action that changes nothing."""
    from discoverylab.rl.features import GROUPS, HISTORY

    # Without notes: their visit counts grow while the agent stands still, so "unchanged" would
    # only start counting once the count is capped (the counts do the same job).
    env = make_sb3_env("PickAndPlaceTest", history=True, max_steps=20, notes=False)
    plain = make_sb3_env("PickAndPlaceTest", max_steps=20, notes=False)
    obs, _ = env.reset(seed=3)
    base, _ = plain.reset(seed=3)
    assert obs.shape == (base.shape[0] + HISTORY,) and env.observation_space.contains(obs)
    assert np.array_equal(obs[: base.shape[0]], base) and not obs[base.shape[0] :].any()  # nothing done yet
    wait = 14  # WAIT: in this still world the view stops changing (after the first step's success flag)
    stuck, before = 0, base
    for _ in range(5):
        obs, *_ = env.step(wait)
        base, *_ = plain.step(wait)
        tail = obs[base.shape[0] :]
        stuck = stuck + 1 if np.array_equal(base, before) else 0
        before = base
        assert np.array_equal(obs[: base.shape[0]], base)
        assert np.flatnonzero(tail[:GROUPS]).tolist() == [wait]
        assert np.flatnonzero(tail[GROUPS:]).tolist() == ([min(stuck, 3) - 1] if stuck else [])
    assert stuck >= 3  # the count saturates at "3 or more"
    obs, *_ = env.step(0)  # a move: a new kind of action, and (here) a changed view
    tail = obs[base.shape[0] :]
    assert np.flatnonzero(tail[:GROUPS]).tolist() == [0]
    check_env(env, skip_render_check=True)
    with pytest.raises(ValueError, match="slots"):
        from discoverylab.rl.features import ActionHistory

        ActionHistory(1, 20, 12, 10)


def test_attack_history_features_carry_nothing_but_the_observations_and_own_actions() -> None:
    """Were the history to read the env (a success flag, a hidden property), it would differ
    from one rebuilt from the plain features and the actions alone: on a discovery task (hidden
    answer) every step's history equals that rebuild."""
    from discoverylab.rl.features import HISTORY, ActionHistory

    env = make_sb3_env("Proteomics", history=True, max_steps=40)
    plain = make_sb3_env("Proteomics", max_steps=40)
    obs, _ = env.reset(seed=7)
    base, _ = plain.reset(seed=7)
    space = plain.unwrapped.observation_space
    rebuild = ActionHistory(1, int(env.action_space.n), space["slots"].shape[0], space["dialog"].shape[0])
    rebuild.reset(base[None])
    rng = np.random.default_rng(0)
    for _ in range(40):
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        obs, _, term, trunc, _ = env.step(action)
        base, *_ = plain.step(action)
        rebuild.step(np.asarray([action]), base[None])
        assert np.array_equal(obs, np.concatenate([base, rebuild.vector()[0]])) and obs.shape[0] == base.shape[0] + HISTORY
        if term or trunc:
            break
