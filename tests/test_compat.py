"""`discoverylab.compat.DiscoveryWorldAPI`: a scripted client written against the original's API
(loadScenario -> loop of getAgentObservation / performAgentAction / tick) runs unchanged."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from discoverylab.agents.oracle import OracleAgent
from discoverylab.compat import ALREADY_ACTED, SCENARIO_NAMES, DiscoveryWorldAPI
from discoverylab.env import DiscoveryWorldEnv


def _play_like_the_readme(scenario: str, difficulty: str, task_id: str, max_steps: int = 300) -> tuple[DiscoveryWorldAPI, list[dict[str, Any]]]:
    """The original's README loop, with an oracle standing in for the model. Each action gains
    the extra keys the original's agents send."""
    api = DiscoveryWorldAPI(render_images=False)
    assert api.loadScenario(scenario, difficulty, randomSeed=1, numUserAgents=1)
    oracle = OracleAgent(task_id)
    obs = api.getAgentObservation(0)
    oracle.reset(obs["ui"])
    replies = []
    for step in range(max_steps):
        action = oracle.act(obs["ui"])
        if "action" in action:
            action = {**action, "thought": "following the plan", "explanation": "why", "memory": "m", "step": step, "arg1_desc": "x"}
        replies.append(api.performAgentAction(0, json.dumps(action)))
        api.tick()
        obs = api.getAgentObservation(0)
        if api.areTasksComplete():
            break
    return api, replies


@pytest.mark.parametrize(("scenario", "difficulty", "task_id"), [
    ("Small Skills: Pick and Place Test", "Normal", "PickAndPlaceTest"),
    ("Small Skills: Dialog Test", "Normal", "DialogTest"),
    ("Proteomics", "Easy", "Proteomics"),
])  # fmt: skip
def test_a_scripted_client_reaches_success_through_the_original_api(scenario: str, difficulty: str, task_id: str) -> None:
    api, replies = _play_like_the_readme(scenario, difficulty, task_id)
    card = api.getTaskScorecard()[0]
    assert card["completedSuccessfully"] is True and card["scoreNormalized"] > 0
    assert all("Unexpected key" not in " ".join(r["errors"]) for r in replies)
    assert sum(r["success"] for r in replies) >= len(replies) // 2


def test_observation_shape_step_counter_and_one_action_per_tick() -> None:
    api = DiscoveryWorldAPI()
    assert api.loadScenario("Small Skills: Pick and Place Test", "normal", 0)
    obs = api.getAgentObservation(0)
    assert obs["errors"] == [] and set(obs) == {"errors", "ui", "vision"}
    assert obs["ui"]["world_steps"] == api.getStepCounter() == 1  # the original ticks once on load
    for key in ("base64_no_grid", "base64_with_grid"):
        png = base64.b64decode(obs["vision"][key].removeprefix("data:image/png;base64,"))
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(png[16:20], "big") == 1536
    assert api.performAgentAction(0, {"action": "ROTATE_DIRECTION", "arg1": "north", "thought": "t"}) == {"errors": [], "success": True}
    assert api.performAgentAction(0, {"action": "WAIT"}) == {"errors": [ALREADY_ACTED], "success": False}
    api.tick()
    obs = api.getAgentObservation(0)
    assert obs["ui"]["lastActionMessage"] == "I rotated to face north." and api.getStepCounter() == 2
    bad = api.performAgentAction(0, {"action": "FLY"})
    assert bad["success"] is False and "Unknown action" in bad["errors"][0]
    assert api.getAgentObservation(1)["errors"] and not api.isAgentInDialog(0)


def test_queries_match_the_original_shapes() -> None:
    api = DiscoveryWorldAPI(render_images=False)
    scenarios = api.getValidScenarios()
    assert "It's (not) Rocket Science!" in scenarios and scenarios["Proteomics"]["difficulty"] == ["Easy", "Normal", "Challenge"]
    assert set(SCENARIO_NAMES) == set(scenarios)
    assert not api.loadScenario("Nope", "Normal") and not api.loadScenario("Proteomics", "Impossible")
    assert not api.loadScenario("Proteomics", "Normal", numUserAgents=2)
    assert api.getAgentObservation(0)["errors"] and api.performAgentAction(0, {})["success"] is False
    for bad in (1.5, -1, None, "abc", True, 2**32):  # never silently another seed, never an error deep in the env
        with pytest.raises(ValueError, match="randomSeed must be a whole number"):
            api.loadScenario("Reactor Lab", "Normal", randomSeed=bad)
    assert api.loadScenario("Reactor Lab", "Normal", randomSeed=np.int64(2)) and api.loadScenario("Reactor Lab", "Normal", randomSeed=" 2")
    assert api.loadScenario("Reactor Lab", "Normal", randomSeed=2)
    actions = api.listKnownActions()
    assert actions["PUT"] == {"args": ["arg1", "arg2"], "desc": actions["PUT"]["desc"]} and "WAIT" in actions
    assert "chosen_dialog_option_int" in api.additionalActionDescriptionString()
    locations = api.listTeleportLocationsDict()
    assert locations and all(set(v) == {"gridX", "gridY"} for v in locations.values())
    card = api.getTaskScorecard()
    assert len(card) == 1 and card[0]["criticalQuestions"]


def test_same_seed_same_observations_as_the_env_after_the_load_tick() -> None:
    api = DiscoveryWorldAPI(render_images=False)
    api.loadScenario("Small Skills: Pick and Place Test", "Normal", randomSeed=3)
    env = DiscoveryWorldEnv("PickAndPlaceTest")
    env.reset(seed=3)
    _, _, _, _, info = env.step({"action": "ROTATE_DIRECTION", "arg1": "north"})
    api.performAgentAction(0, {"action": "ROTATE_DIRECTION", "arg1": "north"})
    api.tick()
    ui = api.getAgentObservation(0)["ui"]
    expected = info["observation"]
    assert ui["agentLocation"] == expected["agentLocation"] and ui["lastActionMessage"] == expected["lastActionMessage"]
    assert ui["world_steps"] == expected["world_steps"] + 1


def test_create_agent_video_writes_one_frame_per_observation(tmp_path: Any) -> None:
    import imageio.v2 as imageio
    from PIL import Image

    api = DiscoveryWorldAPI()
    assert api.loadScenario("Small Skills: Pick and Place Test", "Normal", 0)
    for direction in ("north", "east", "south"):
        api.getAgentObservation(0)
        api.performAgentAction(0, {"action": "ROTATE_DIRECTION", "arg1": direction})
        api.tick()
    api.getAgentObservation(0)
    gif, mp4 = tmp_path / "run.gif", tmp_path / "run.mp4"
    assert api.createAgentVideo(0, str(gif)) == {"errors": [], "success": True, "frames": 4}
    assert Image.open(gif).n_frames == 4
    assert api.createAgentVideo(0, str(mp4))["success"]
    with imageio.get_reader(str(mp4)) as reader:
        frames = [frame for frame in reader]
    assert len(frames) == 4 and frames[0].ndim == 3
    bad = api.createAgentVideo(0, str(tmp_path / "missing-folder" / "run.mp4"))
    assert not bad["success"] and bad["errors"][0].startswith("No video written")
    assert not api.createAgentVideo(1, str(mp4))["success"]


def test_create_agent_video_without_frames_says_why(tmp_path: Any) -> None:
    assert "loadScenario" in DiscoveryWorldAPI().createAgentVideo(0, str(tmp_path / "a.mp4"))["errors"][0]
    api = DiscoveryWorldAPI(keep_frames=False)
    api.loadScenario("Small Skills: Pick and Place Test", "Normal", 0)
    api.getAgentObservation(0)
    result = api.createAgentVideo(0, str(tmp_path / "a.mp4"))
    assert not result["success"] and "keep_frames=False" in result["errors"][0]
    assert not (tmp_path / "a.mp4").exists()


def test_default_api_hands_out_the_gold_at_step_0_as_the_original_does() -> None:
    api = DiscoveryWorldAPI(render_images=False)
    assert api.loadScenario("Lost in Translation", "Easy", randomSeed=3)
    card = api.getTaskScorecard()[0]
    assert card["scoreCard"] and (card["criticalHypotheses"] or card["knowledgeQuestions"])


@pytest.mark.parametrize(("scenario", "difficulty"), [("Lost in Translation", "Easy"), ("Space Sick", "Easy"), ("Proteomics", "Normal")])
def test_sealed_api_step_0_gold_attack_reads_task_progress_only(scenario: str, difficulty: str) -> None:
    """The attack: call getTaskScorecard() at step 0 and read the answer from the gold. Sealed,
    the card is task progress only until the episode has ended."""
    api = DiscoveryWorldAPI(render_images=False, sealed=True)
    assert api.loadScenario(scenario, difficulty, randomSeed=3)
    full = DiscoveryWorldAPI(render_images=False)
    assert full.loadScenario(scenario, difficulty, randomSeed=3)
    gold = full.getTaskScorecard()[0]
    secrets = [str(i["name"]) for i in gold["scoreCard"]] + [str(h) for h in gold["criticalHypotheses"]]
    secrets += [str(f) for q in gold["knowledgeQuestions"] for f in q["goldFacts"]]
    for _ in range(3):
        (card,) = api.getTaskScorecard()
        assert set(card) == {"taskName", "taskDescription", "completed", "completedSuccessfully"}
        text = json.dumps(card)
        assert not [s for s in secrets if len(s) > 3 and s in text]
        api.performAgentAction(0, {"action": "ROTATE_DIRECTION", "arg1": "north"})
        api.tick()
    assert not api.episodeEnded()
    assert api.endEpisode() == {"errors": [], "success": True}
    assert api.getTaskScorecard()[0]["criticalHypotheses"] == gold["criticalHypotheses"]  # ended: all of it
    refused = api.performAgentAction(0, {"action": "WAIT"})
    assert refused["success"] is False and "ended" in refused["errors"][0]
    api.loadScenario(scenario, difficulty, randomSeed=4)  # a new episode is sealed again
    assert "scoreCard" not in api.getTaskScorecard()[0]


def test_sealed_api_shows_the_whole_card_once_the_task_is_completed() -> None:
    api = DiscoveryWorldAPI(render_images=False, sealed=True)
    api.loadScenario("Small Skills: Pick and Place Test", "Normal", randomSeed=1)
    oracle = OracleAgent("PickAndPlaceTest")
    obs = api.getAgentObservation(0)
    oracle.reset(obs["ui"])
    for _ in range(100):
        assert "scoreCard" not in api.getTaskScorecard()[0]
        api.performAgentAction(0, oracle.act(obs["ui"]))
        api.tick()
        obs = api.getAgentObservation(0)
        if api.areTasksComplete():
            break
    assert api.episodeEnded() and api.getTaskScorecard()[0]["completedSuccessfully"]
    assert api.getTaskScorecard()[0]["scoreNormalized"] == 1.0
    assert DiscoveryWorldAPI().endEpisode()["success"] is False  # nothing loaded: a clear error


def test_a_video_before_any_scenario_says_so_in_one_sentence(tmp_path: Path) -> None:
    """The message once ended in 'first..' (NO_SCENARIO's full stop, then the sentence's)."""
    answer = DiscoveryWorldAPI().createAgentVideo(0, str(tmp_path / "v.mp4"))
    assert answer == {"errors": ["No video written: No scenario is loaded: call loadScenario() first."], "success": False}
