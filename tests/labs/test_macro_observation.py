"""Macro observation window (spec §3.4) and the Gymnasium adapter (spec §1.7)."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from discoverylab.labs.macroecon.gym_env import GYM_ID, MacroEconEnv
from discoverylab.labs.macroecon.model import MacroEconomy
from discoverylab.labs.macroecon.observation import (
    INDICATOR_INDEX,
    INDICATORS,
    OBS_SIZE,
    normalise_observation,
    observation_window,
)
from discoverylab.labs.macroecon.params import MacroParams, MacroStructure

SMALL = {"n_households": 200, "n_firms": 4}


def test_sixteen_indicators_times_four_quarters() -> None:
    assert len(INDICATORS) == 16 and OBS_SIZE == 64
    assert INDICATORS[0] == "gdp_real" and INDICATORS[15] == "credit_tightness"


def test_window_layout_and_padding() -> None:
    rows = [np.full(16, float(t)) + np.arange(16) * 100 for t in range(6)]
    first = observation_window(rows[:1])
    assert first.dtype == np.float32 and first.shape == (64,)
    np.testing.assert_array_equal(first.reshape(16, 4), np.repeat(rows[0][:, None], 4, axis=1))
    two = observation_window(rows[:3]).reshape(16, 4)  # quarters 0..2: oldest repeats quarter 0
    np.testing.assert_array_equal(two[:, 0], rows[0])
    np.testing.assert_array_equal(two[:, 3], rows[2])
    full = observation_window(rows)
    for k in range(16):
        for q in range(4):
            assert full[4 * k + q] == rows[2 + q][k]


def test_economy_observation_tracks_its_history() -> None:
    economy = MacroEconomy(MacroParams(), seed=0, structure=MacroStructure(**SMALL))
    for _ in range(7):
        economy.step()
    obs = economy.observation()
    u = INDICATOR_INDEX["unemployment"]
    np.testing.assert_allclose(obs[4 * u : 4 * u + 4], economy.indicators[-4:, u], rtol=1e-6)


def test_normalised_observation_is_in_unit_interval() -> None:
    economy = MacroEconomy(MacroParams(initial_cash=900, g0=0.6), seed=1, structure=MacroStructure(**SMALL))
    for _ in range(30):
        economy.step()
        norm = normalise_observation(economy.observation(), 200)
        assert norm.shape == (64,) and (norm >= 0).all() and (norm <= 1).all()


@pytest.mark.parametrize("normalize", [False, True])
def test_gym_env_passes_the_checker(normalize: bool) -> None:
    check_env(MacroEconEnv(structure=SMALL, normalize=normalize), skip_render_check=True)


def test_gym_env_rollout_is_deterministic_and_truncates() -> None:
    def rollout(seed: int) -> tuple[np.ndarray, list[float], int]:
        env = MacroEconEnv(structure=SMALL, number_of_steps=12)
        obs, _ = env.reset(seed=seed)
        rewards, steps, truncated = [], 0, False
        while not truncated:
            obs, reward, terminated, truncated, info = env.step(np.array([0.05, 0.2, 0.3], dtype=np.float32))
            assert not terminated and env.observation_space.contains(obs)
            rewards.append(reward)
            steps += 1
        assert info["quarter"] == 12
        return obs, rewards, steps

    a, b = rollout(4), rollout(4)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1] == b[1] and a[2] == 12


def test_gym_actions_move_the_policy_levers() -> None:
    env = MacroEconEnv(structure=SMALL)
    env.reset(seed=0)
    _, _, _, _, info = env.step(np.array([0.5, 0.6, 0.0], dtype=np.float32))
    assert info["indicators"]["policy_rate"] == pytest.approx(0.5)
    assert info["indicators"]["gov_transfers"] == 0.0
    # Out-of-bounds actions are clipped to the lever ranges, never an exception.
    _, _, _, _, info = env.step(np.array([9.0, -1.0, 0.25], dtype=np.float32))
    assert info["indicators"]["policy_rate"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="3 finite numbers"):
        env.step(np.array([0.1, 0.2], dtype=np.float32))


def test_registered_gym_id() -> None:
    env = gymnasium.make(GYM_ID, structure=SMALL)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (64,)
    env.close()
