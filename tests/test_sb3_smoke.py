"""Stable-Baselines3 as users call it (issue 27): MaskablePPO on `make_sb3_env` and on the
batched `SB3VecEnv` with masks, and a few hundred steps of benchmarks/sb3.py. Skipped where
the optional `rl` extra (torch, stable-baselines3, sb3-contrib) is absent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bench_loader import load_benchmark

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.utils import get_action_masks  # noqa: E402
from stable_baselines3.common.env_checker import check_env  # noqa: E402

from discoverylab.rl import make_rl_env, make_sb3_env  # noqa: E402
from discoverylab.rl.features import features  # noqa: E402
from discoverylab.rl.sb3 import SB3VecEnv  # noqa: E402


def test_sb3_check_env_and_mlp_policy_on_one_env() -> None:
    env = make_sb3_env("DialogTest", max_steps=20)
    check_env(env, warn=False)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, device="cpu", seed=0)
    model.learn(64)
    obs, _ = env.reset(seed=0)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(action)]  # masks reach the policy
    # SB3's logger folder is the test's own ($SB3_LOGDIR, conftest), not a new /tmp/SB3-<date>
    assert Path(model.logger.get_dir()).is_relative_to(os.environ["SB3_LOGDIR"])


def test_attack_raw_symbolic_obs_goes_to_an_image_extractor() -> None:
    """What users met first: the raw symbolic observation sends `tiles` to NatureCNN and fails.
    Kept so that the reason docs/rl.md gives stays true; the one-hot route above works."""
    with pytest.raises(RuntimeError, match="Kernel size"):
        MaskablePPO("MultiInputPolicy", make_rl_env("DialogTest"), device="cpu")


def test_vec_adapter_matches_serial_envs_and_autoresets_as_sb3_does() -> None:
    venv = SB3VecEnv("PickAndPlaceTest", num_envs=3, workers=2, seed=10, max_steps=6, spin=0)
    serial = [make_rl_env("PickAndPlaceTest", max_steps=6, notes=True) for _ in range(3)]  # SB3VecEnv: notes by default
    try:
        obs = venv.reset()
        raw = [env.reset(seed=10 + i) for i, env in enumerate(serial)]
        assert np.array_equal(obs, features({k: np.stack([o[k] for o, _ in raw]) for k in raw[0][0]}))
        assert np.array_equal(get_action_masks(venv), np.stack([i["action_mask"] for _, i in raw]))
        rng = np.random.default_rng(0)
        ended = 0
        for _ in range(6):
            masks = venv.action_masks()
            actions = (rng.random(masks.shape) * masks).argmax(axis=1)
            obs, rewards, dones, infos = venv.step(actions)
            for i, env in enumerate(serial):
                o, r, term, trunc, _ = env.step(int(actions[i]))
                assert rewards[i] == r and dones[i] == (term or trunc)
                want = features({k: v[None] for k, v in o.items()})[0]
                got = infos[i]["terminal_observation"] if dones[i] else obs[i]
                assert np.array_equal(got, want)
                if dones[i]:
                    ended += 1
                    assert infos[i]["TimeLimit.truncated"] == (trunc and not term) and "is_success" in infos[i]
        assert ended == 3  # 6-step episodes end together, and SB3 sees the reset observation
    finally:
        venv.close()
        for env in serial:
            env.close()


def test_sb3_benchmark_runs_a_few_hundred_steps(tmp_path: Path) -> None:
    sb3 = load_benchmark("sb3.py", "sb3_baseline")
    curve = sb3.train("DialogTest", 256, num_envs=2, workers=2, max_steps=15, n_steps=64, eval_every=128,
                      eval_episodes=1, reward="explore")  # fmt: skip
    assert curve["total_steps"] >= 256 and curve["eval"] and 0.0 <= curve["final"] <= 1.0
    curve.pop("model")
    sb3.plot([curve], tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 1000


def test_slot_policy_scores_every_action_and_shares_slot_weights() -> None:
    import torch

    from discoverylab.rl.sb3_policy import SlotHead, SlotPolicy

    env = make_sb3_env("PickAndPlaceTest", max_steps=10)
    model = MaskablePPO(SlotPolicy, env, n_steps=16, batch_size=16, n_epochs=1, device="cpu", seed=0)
    model.learn(32)
    obs, _ = env.reset(seed=0)
    head = model.policy.mlp_extractor
    assert isinstance(head, SlotHead) and head.latent_dim_pi == env.action_space.n
    x = torch.as_tensor(obs)[None]
    logits = head.forward_actor(x)
    assert logits.shape == (1, env.action_space.n) and torch.isfinite(logits).all()
    # Swapping two slots' rows swaps their actions' scores: one network scores every slot.
    w2, b, k = head.w2, head.b, head.k
    at = w2 * b + head.state_width  # after the kinds and the tile flags (with notes, the visited plane)
    rows = x[:, at : at + k * head.slot_width].view(1, k, -1).clone()
    swapped = x.clone()
    rows[:, [0, 1]] = rows[:, [1, 0]]
    swapped[:, at : at + k * head.slot_width] = rows.flatten(1)
    other = head.forward_actor(swapped)
    base = env.get_wrapper_attr("base_single")
    pick0, pick1 = base, base + 1  # PICKUP on slots 0 and 1
    assert torch.allclose(logits[0, pick0], other[0, pick1], atol=1e-5)
    with pytest.raises(ValueError, match="features"):
        SlotHead(100)


def test_time_limit_stops_training_cleanly_and_the_curve_is_on_disk(tmp_path: Path) -> None:
    sb3 = load_benchmark("sb3.py", "sb3_baseline")
    sb3.EVAL_RESERVE = 0.0  # stop at the limit itself (the default keeps time for the final evaluation)
    path = tmp_path / "DialogTest.json"
    curve = sb3.train("DialogTest", 10**6, num_envs=2, max_steps=10, n_steps=16, batch_size=32, eval_episodes=1,
                      time_limit=1.0, curve_path=path)  # fmt: skip
    assert curve["stopped"] == "time_limit" and 0 < curve["total_steps"] < 10**6
    on_disk = json.loads(path.read_text())
    assert on_disk["total_steps"] == curve["total_steps"] and on_disk["final"] == curve["final"]


def test_early_stop_ends_training_after_two_evaluations_at_the_target() -> None:
    sb3 = load_benchmark("sb3.py", "sb3_baseline")
    curve = sb3.train("DialogTest", 10**6, num_envs=2, max_steps=10, n_steps=16, batch_size=32, eval_every=32,
                      eval_episodes=1, early_stop=0.0)  # fmt: skip
    assert curve["stopped"] == "early_stop" and len(curve["eval"]) == 2 and curve["total_steps"] < 200
    late = sb3.train("DialogTest", 96, num_envs=2, max_steps=10, n_steps=16, batch_size=32, eval_every=32,
                     eval_episodes=1, early_stop=1.01)  # fmt: skip  # an unreachable target: runs its steps
    assert "stopped" not in late and late["total_steps"] >= 96


def test_sweep_outputs_merge_partial_curves_and_replot(tmp_path: Path) -> None:
    """A task killed at the time limit leaves its last evaluation: the table says so, the plot
    and `--plot-only` still work."""
    sb3 = load_benchmark("sb3.py", "sb3_baseline")
    out = tmp_path / "sweep"
    parts = tmp_path / "sweep.parts"
    parts.mkdir()
    done = {"task": "DialogTest", "obs": "onehot", "policy": "slot", "eval": [{"steps": 100, "success": 0.95, "seconds": 1.0}],
            "final": 0.96, "total_steps": 128, "seconds_total": 2.0}  # fmt: skip
    killed = {"task": "DoorsTest", "obs": "onehot", "policy": "slot", "eval": [{"steps": 100, "success": 0.3, "seconds": 9.0}]}
    (parts / "DialogTest.json").write_text(json.dumps(done))
    (parts / "DoorsTest.json").write_text(json.dumps(killed))
    (parts / "DoorsTest.log").write_text("step\n" * 20 + "the last line\n")
    (parts / "MovingAgentsTest.log").write_text("Traceback ...\nImportError: no module named x\n")  # died early
    curves = sb3.write_outputs(out, ["DialogTest", "DoorsTest", "MovingAgentsTest", "SearchTest"])  # Search never ran
    assert [c["task"] for c in curves] == ["DialogTest", "DoorsTest", "MovingAgentsTest"]
    assert curves[1]["log_tail"][-1] == "the last line" and len(curves[1]["log_tail"]) == 12
    assert "ImportError" in curves[2]["log_tail"][-1] and "no curve" in curves[2]["stopped"]
    text = (tmp_path / "sweep.md").read_text()
    assert "| DialogTest | 128 | 0.96 |  | 100 |" in text and "killed (partial curve)" in text and "1 of 3 tasks" in text
    (tmp_path / "sweep.png").unlink()
    sb3.redraw(out)
    assert (tmp_path / "sweep.png").stat().st_size > 1000
    assert sb3.parse_cpus("0-2,5") == [0, 1, 2, 5]
    with pytest.raises(SystemExit, match="cpus"):
        sb3.parse_cpus("a-b")


def test_sweep_runs_tasks_as_pinned_processes(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "sb3.py"
    out = tmp_path / "s"
    cmd = [sys.executable, str(script), "--jobs", "2", "--cpus", "0", "--tasks", "DialogTest,PickAndPlaceTest",
           "--steps", "32", "--num-envs", "2", "--n-steps", "16", "--batch-size", "32", "--max-steps", "8",
           "--eval-every", "0", "--eval-episodes", "1", "--time-limit", "300", "--out", str(out)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(script.parents[1] / "src")}
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=400, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    curves = json.loads(out.with_suffix(".json").read_text())
    assert [c["task"] for c in curves] == ["DialogTest", "PickAndPlaceTest"]
    assert all(c["total_steps"] >= 32 and c["settings"]["num_envs"] == 2 for c in curves)
    assert out.with_suffix(".png").exists() and "| PickAndPlaceTest |" in out.with_suffix(".md").read_text()


def test_vec_adapter_history_matches_serial_envs_and_restarts_at_autoreset() -> None:
    from discoverylab.rl.features import HISTORY

    venv = SB3VecEnv("PickAndPlaceTest", num_envs=3, workers=1, seed=20, max_steps=4, history=True)
    serial = [make_sb3_env("PickAndPlaceTest", max_steps=4, history=True) for _ in range(3)]
    try:
        obs = venv.reset()
        assert np.array_equal(obs, np.stack([env.reset(seed=20 + i)[0] for i, env in enumerate(serial)]))
        rng = np.random.default_rng(1)
        for _ in range(4):
            masks = venv.action_masks()
            actions = (rng.random(masks.shape) * masks).argmax(axis=1)
            obs, _, dones, infos = venv.step(actions)
            for i, env in enumerate(serial):
                o, *_ = env.step(int(actions[i]))
                assert np.array_equal(infos[i]["terminal_observation"] if dones[i] else obs[i], o)
                assert o[-HISTORY:].any()  # the last action is named
        assert dones.all() and not obs[:, -HISTORY:].any()  # each new episode starts with no history
    finally:
        venv.close()


def test_sweep_stopped_by_sigterm_still_writes_the_partial_curves(tmp_path: Path) -> None:
    """An outer `timeout` signals the driver (and, with GNU timeout, its whole process group):
    the tasks stop and the curves up to their last evaluation are merged, plotted and tabled."""
    import signal
    import time

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "sb3.py"
    out, parts = tmp_path / "s", tmp_path / "parts"
    cmd = [sys.executable, str(script), "--jobs", "1", "--tasks", "DialogTest", "--steps", "10000000", "--num-envs", "2",
           "--n-steps", "16", "--batch-size", "32", "--max-steps", "8", "--eval-every", "64", "--eval-episodes", "1",
           "--parts", str(parts), "--out", str(out)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(script.parents[1] / "src")}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    deadline = time.monotonic() + 300
    while not (parts / "DialogTest.json").exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    proc.send_signal(signal.SIGTERM)  # twice, as a process-group signal can arrive
    output, _ = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, output
    curves = json.loads(out.with_suffix(".json").read_text())
    assert curves[0]["task"] == "DialogTest" and curves[0]["eval"] and "final" not in curves[0]
    assert "killed (partial curve)" in out.with_suffix(".md").read_text() and out.with_suffix(".png").exists()


def test_sb3_main_refuses_a_wrong_task_before_any_training(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:  # fmt: skip
    sb3 = load_benchmark("sb3.py", "sb3_baseline")
    for jobs in ([], ["--jobs", "2"]):  # with --jobs: not a sweep of processes that each fail
        monkeypatch.setattr("sys.argv", ["sb3.py", "--tasks", "DialogTest,Nope", "--steps", "64", *jobs,
                                         "--out", str(tmp_path / "x")])  # fmt: skip
        with pytest.raises(SystemExit) as stop:
            sb3.main()
        assert stop.value.code == 2 and "Unknown task 'Nope'" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()
    monkeypatch.setattr("sys.argv", ["sb3.py", "--plot-only", "--out", str(tmp_path / "x")])
    with pytest.raises(SystemExit) as stop:  # nothing to redraw: a usage error naming the file
        sb3.main()
    assert stop.value.code == 2 and "x.json, which does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("levels", ["test", "train"])
def test_sealed_levels_end_without_is_success(levels: str) -> None:
    """A sealed level's outcome is the evaluator's (its card says None): SB3's `is_success` was
    read off it as False on every sealed episode, a made-up 0% success rate in SB3's logs. It is
    left out for sealed levels and kept for public ones."""
    key = b"sb3-sealed-levels-key-0000000001" if levels == "test" else None
    venv = SB3VecEnv("PickAndPlaceTest", num_envs=2, workers=1, seed=3, max_steps=1, levels=levels, level_key=key)
    try:
        venv.reset()
        _, _, dones, infos = venv.step(np.zeros(2, dtype=np.int64))
    finally:
        venv.close()
    assert dones.all()
    assert all(("is_success" in info) == (levels != "test") for info in infos), infos
