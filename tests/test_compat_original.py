"""Scripts written for the original DiscoveryWorld run unchanged: `python -m discoverylab.compat`.

tests/original_style_client.py (our own code) makes every call the original's RandomAgent and
HypothesizerAgent make; here it runs as a real subprocess through the runner, in random mode and
against a prompt-answering OpenAI-compatible server on 127.0.0.1. The rest are unit tests of the
shim's members and the named attacks on what they expose.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from discoverylab import compat
from discoverylab.compat_members import STEPS_PER_PART, UserInterfaceView, WorldHistoryError, WorldView
from discoverylab.original import scenario_maker
from discoverylab.original.runner import main as runner_main
from discoverylab.original.shim import BUILDERS, OriginalFinder, installed
from original_style_llm import PromptAnsweringServer, choose_action

ROOT = Path(__file__).resolve().parents[1]
CLIENT = ROOT / "tests" / "original_style_client.py"
PICK = "Small Skills: Pick and Place Test"


def _env(**extra: str) -> dict[str, str]:
    path = os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, **extra}


def _run(args: list[str], cwd: Path, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "discoverylab.compat", *args], cwd=cwd, env=_env(**env),
                          capture_output=True, text=True, timeout=timeout)  # fmt: skip


def _client(tmp_path: Path, scenario: str, difficulty: str, steps: int, *extra: str, **env: str) -> dict[str, Any]:
    out = tmp_path / "out"
    proc = _run([str(CLIENT), "--scenario", scenario, "--difficulty", difficulty, "--numSteps", str(steps),
                 "--seed", "1", "--threadId", "42", "--out", str(out), *extra], tmp_path, **env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    summary["out"] = out
    return summary


def _history(out: Path) -> list[dict[str, Any]]:
    (part,) = sorted(out.glob("world.*.zip"))
    with zipfile.ZipFile(part) as archive:
        (name,) = archive.namelist()
        data = json.loads(archive.read(name))
    assert data["logInfo"]["numParts"] == 1 and data["logInfo"]["scenarioName"]
    history: list[dict[str, Any]] = data["worldHistory"]
    return history


# ---- the client, end to end, as a subprocess ---------------------------------------------------
@pytest.mark.parametrize(("scenario", "difficulty"), [(PICK, "Normal"), ("Small Skills: Dialog Test", "Normal")])
def test_the_original_style_random_client_runs_unchanged_through_the_runner(tmp_path: Path, scenario: str, difficulty: str) -> None:
    summary = _client(tmp_path, scenario, difficulty, 40)
    assert summary["steps"] == 40 and summary["stepCounter"] == 40 and summary["threadId"] == 42
    assert 0 < summary["successes"] < 40 and "historyError" not in summary
    history = _history(summary["out"])
    assert [h["step"] for h in history] == list(range(41))  # the load tick, then one per step


def test_the_original_style_llm_client_solves_a_unit_test_against_a_scripted_server(tmp_path: Path) -> None:
    server = PromptAnsweringServer().start()
    try:
        summary = _client(tmp_path, PICK, "Normal", 15, "--mode", "llm", "--video",
                          OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="scripted")  # fmt: skip
    finally:
        server.stop()
    assert summary["completedSuccessfully"] is True and summary["completedEarly"] is True
    assert summary["steps"] < 15 and summary["usage"]["sent"] == 11 * len(server.requests)
    assert summary["video"]["success"] is True and summary["video"]["frames"] == summary["steps"]
    first = server.requests[0]["messages"][0]["content"]
    assert first[0]["text"].startswith("Environment Observation (as JSON):")
    assert first[1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_the_llm_client_keeps_and_consolidates_knowledge_on_a_discovery_task(tmp_path: Path) -> None:
    server = PromptAnsweringServer().start()
    try:
        summary = _client(tmp_path, "Proteomics", "Easy", 12, "--mode", "llm",
                          OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="scripted")  # fmt: skip
    finally:
        server.stop()
    assert summary["steps"] == 12 and summary["completedEarly"] is False
    assert len(server.requests) == 2 * 12 + 1  # an action and a knowledge question a step; one consolidation
    assert summary["knowledge"] == 1 + 1  # the consolidated base, then step 11's note


def test_the_same_run_writes_byte_identical_history(tmp_path: Path) -> None:
    parts = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        summary = _client(tmp_path / name, PICK, "Normal", 12)
        (part,) = summary["out"].glob("world.*.zip")
        parts.append(part.read_bytes())
    assert parts[0] == parts[1]


# ---- the runner ---------------------------------------------------------------------------------
def test_runner_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert runner_main([str(tmp_path / "nope.py")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot run" in err and "no such file" in err
    assert runner_main([str(tmp_path)]) == 2 and "is a directory" in capsys.readouterr().err
    assert runner_main([]) == 2 and capsys.readouterr().err.startswith("usage: python -m discoverylab.compat")
    assert runner_main(["--help"]) == 0


def test_runner_exit_codes_pass_through(tmp_path: Path) -> None:
    script = tmp_path / "exits.py"
    script.write_text("import sys\nfrom discoveryworld.ScenarioMaker import SCENARIO_NAMES\nprint(sys.argv[1:])\nsys.exit(int(sys.argv[1]))\n")
    seven = _run([str(script), "7", "x"], tmp_path)
    assert seven.returncode == 7 and "['7', 'x']" in seven.stdout
    script.write_text("raise ValueError('boom')\n")
    crash = _run([str(script)], tmp_path)
    assert crash.returncode == 1 and "ValueError: boom" in crash.stderr
    missing = _run(["nope.py"], tmp_path)
    assert missing.returncode == 2 and missing.stderr.strip().count("\n") == 0
    wrong = _run([str(CLIENT), "--scenario", PICK, "--difficulty", "Test", "--out", str(tmp_path)], tmp_path)
    assert wrong.returncode == 3  # the client's own exit: the original lists "Test", no scenario offers it


def test_runner_in_process_restores_argv_and_path(tmp_path: Path) -> None:
    script = tmp_path / "peek.py"
    script.write_text("import sys, discoveryworld.DiscoveryWorldAPI as m\nassert sys.argv == [__file__, 'a'] and m.DiscoveryWorldAPI.record_history\n")
    argv, path0 = sys.argv[:], sys.path[0]
    assert runner_main([str(script), "a"]) == 0
    assert sys.argv == argv and sys.path[0] == path0 and "discoveryworld" not in sys.modules


def test_plain_import_installs_nothing() -> None:
    code = ("import sys, discoverylab, discoverylab.compat\n"
            "assert not any('discoveryworld' in n or 'discoverylab.original' in n for n in sys.modules), sorted(sys.modules)\n"
            "assert not any(type(f).__name__ == 'OriginalFinder' for f in sys.meta_path)\nprint('clean')")  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "clean", proc.stderr[-2000:]


# ---- the shim -----------------------------------------------------------------------------------
def test_shim_maps_the_three_modules_and_refuses_the_rest_clearly() -> None:
    sentinel = type(sys)("discoveryworld")
    sys.modules["discoveryworld"] = sentinel  # a real install, imported before: displaced, then put back
    try:
        with installed() as finder:
            assert isinstance(finder, OriginalFinder) and sys.meta_path[0] is finder
            api_module = importlib.import_module("discoveryworld.DiscoveryWorldAPI")
            maker = importlib.import_module("discoveryworld.ScenarioMaker")
            assert issubclass(api_module.DiscoveryWorldAPI, compat.DiscoveryWorldAPI)
            assert api_module.DiscoveryWorldAPI.record_history and not compat.DiscoveryWorldAPI.record_history
            assert api_module.SCENARIO_NAMES is maker.SCENARIO_NAMES is scenario_maker.SCENARIO_NAMES
            assert sys.modules["discoveryworld"].__path__ == []
            with pytest.raises(ModuleNotFoundError, match="maps only discoveryworld.DiscoveryWorldAPI, discoveryworld.ScenarioMaker"):
                importlib.import_module("discoveryworld.Agent")
        assert sys.modules["discoveryworld"] is sentinel and set(BUILDERS) & set(sys.modules) == {"discoveryworld"}
        assert not any(isinstance(f, OriginalFinder) for f in sys.meta_path)
    finally:
        del sys.modules["discoveryworld"]


def test_scenario_maker_names_come_from_our_registry() -> None:
    sm = scenario_maker
    assert sm.SCENARIO_NAMES == compat.SCENARIO_NAMES and sm.SCENARIO_INFOS == compat.DiscoveryWorldAPI().getValidScenarios()
    assert sm.SCENARIO_DIFFICULTY_OPTIONS == {"easy": "Easy", "normal": "Normal", "challenge": "Challenge", "test": "Test"}
    names = [sm.getInternalScenarioName(n, d) for n, info in sm.SCENARIO_INFOS.items() for d in info["difficulty"]]
    assert sorted(names) == sorted(sm.SCENARIOS) and len(set(names)) == len(names)  # type: ignore[type-var]
    assert sm.getInternalScenarioName("Proteomics", "Easy") == "proteomics_easy" == sm.getInternalScenarioName("Proteomics", "easy")
    assert sm.getInternalScenarioName("Tutorial", "Easy") is None and sm.getInternalScenarioName("Proteomics", "Test") is None
    assert sm.getInternalScenarioName("Nope", "Normal") is None and sm.getInternalScenarioName(None, 3) is None  # type: ignore[arg-type]
    maker = sm.ScenarioMaker(world=None, seed=3)
    assert maker.setupScenario("nope") == (False, maker.setupScenario("nope")[1]) and "SCENARIOS" in maker.setupScenario("nope")[1]
    assert maker.setupScenario("proteomics_easy", numUserAgents=2)[0] is False
    assert maker.setupScenario("proteomics_easy") == (True, "") and maker.env is not None
    assert maker.world is maker.env.world and maker.env.scenario_cls.task_id == "Proteomics" and maker.env.difficulty == "easy"


# ---- the API's extra members ----------------------------------------------------------------------
def test_limited_action_list_drops_talk_and_the_feed() -> None:
    api = compat.DiscoveryWorldAPI(render_images=False)
    full, limited = api.listKnownActions(limited=False), api.listKnownActions(limited=True)
    assert {"TALK", "DISCOVERY_FEED_GET_UPDATES", "DISCOVERY_FEED_GET_POST_BY_ID"} <= set(full)
    assert set(full) - set(limited) == {n for n in full if n == "TALK" or n.startswith("DISCOVERY_FEED")}
    assert "PICKUP" in limited and limited["PICKUP"] == full["PICKUP"]


def test_thread_id_and_ui_views() -> None:
    api = compat.DiscoveryWorldAPI(threadID=77, render_images=False)
    assert api.THREAD_ID == 77 and api.ui == [] and api.world is None
    assert api.loadScenario(PICK, "Normal", randomSeed=2)
    (ui,) = api.ui
    assert isinstance(ui, UserInterfaceView) and ui.agentIdx == 0 and api.ui is api.ui
    where = api.getAgentObservation(0)["ui"]["agentLocation"]
    agent = ui.currentAgent
    assert agent.location == (where["x"], where["y"]) and agent.faceDirection == where["faceDirection"]
    assert f"uuid={agent.uuid}" in repr(agent) and agent.name in repr(ui)
    api.performAgentAction(0, {"action": "ROTATE_DIRECTION", "arg1": "north"})
    api.tick()
    assert agent.faceDirection == "north"  # a live view


def test_world_history_records_each_tick_and_exports_in_parts(tmp_path: Path) -> None:
    api = compat.DiscoveryWorldAPI(render_images=False)
    api.record_history = True
    assert api.loadScenario(PICK, "Normal", randomSeed=0)
    for _ in range(STEPS_PER_PART + 4):
        api.tick()
    world = api.world
    assert isinstance(world, WorldView) and world.step == STEPS_PER_PART + 5 and world.historyLength() == STEPS_PER_PART + 5
    first = world.getWorldHistoryAtStep(0)
    assert first is not None and first["step"] == 0 and len(first["tiles"]) == 7 * 7 and first["agent"]["faceDirection"]
    assert world.getWorldHistoryAtStep(-1) is None and world.getWorldHistoryAtStep(10**6) is None
    assert world.getWorldHistoryAtStep(True) is None and world.getWorldHistoryAtStep("0") is None  # type: ignore[arg-type]
    assert world.getWorldHistoryAtStep(np.int64(3)) == world.getWorldHistoryAtStep(3)  # type: ignore[arg-type]
    paths = world.exportWorldHistoryJSON({"run": "x"}, str(tmp_path / "w.json"), None, None, None)
    assert [Path(p).name for p in paths] == ["w.part0of2.zip", "w.part1of2.zip"]
    with zipfile.ZipFile(paths[1]) as archive:
        data = json.loads(archive.read("w.part1of2.json"))
    assert data["logInfo"] == {"run": "x", "partIdx": 1, "numParts": 2, "startStep": 100, "endStep": 200}
    assert [h["step"] for h in data["worldHistory"]] == list(range(100, 105))
    with pytest.raises(WorldHistoryError, match="dict"):
        world.exportWorldHistoryJSON(["x"], str(tmp_path / "w.json"))  # type: ignore[arg-type]
    with pytest.raises(WorldHistoryError, match="JSON"):
        world.exportWorldHistoryJSON({"x": object()}, str(tmp_path / "w.json"))
    for bad in (None, 3, "", b"w.json"):
        with pytest.raises(WorldHistoryError, match="filename"):
            world.exportWorldHistoryJSON({}, bad)  # type: ignore[arg-type]
    with pytest.raises(WorldHistoryError, match="Could not write"):
        world.exportWorldHistoryJSON({}, str(tmp_path / "missing" / "w.json"))


def test_without_record_history_the_export_says_how_to_turn_it_on(tmp_path: Path) -> None:
    api = compat.DiscoveryWorldAPI(render_images=False)
    assert api.loadScenario(PICK, "Normal")
    assert api.world is not None and api.world.historyLength() == 0
    with pytest.raises(WorldHistoryError, match="record_history = True"):
        api.world.exportWorldHistoryJSON({}, str(tmp_path / "w.json"), None, None, None)


# ---- named attacks: what the original's extra members expose must not give answers away -------------
def test_attack_world_history_shows_no_buried_artifact(tmp_path: Path) -> None:
    """The original's history holds every object, so a script could read where the artifacts are
    buried from its own export mid-run. Ours records only what the agent perceives."""
    api = compat.DiscoveryWorldAPI(render_images=False)
    api.record_history = True
    assert api.loadScenario("Archaeology Dating", "Normal", randomSeed=1)
    assert api.env is not None and api.env.world is not None
    buried = {o.uuid for o in api.env.world.objects.values() if o.parent is not None and o.parent.name == "soil" and o.name != "dirt"}
    assert buried  # the scenario does bury artifacts
    (path,) = api.world.exportWorldHistoryJSON({}, str(tmp_path / "w.json"))  # type: ignore[union-attr]
    with zipfile.ZipFile(path) as archive:
        text = archive.read("w.part0of1.json").decode()
    found = {int(u) for u in re.findall(r'"uuid":(\d+)', text)}
    assert found and not buried & found
    assert not re.search(r"scoreCard|criticalQuestions|criticalHypotheses|scoreNormalized", text)


def test_attack_world_history_holds_nothing_the_observation_did_not_show() -> None:
    """Read mid-run, a whole-map history would show where the Search Test's flag lies before the
    agent has looked. Every object in the snapshot of a tick is in the observation that follows it."""
    api = compat.DiscoveryWorldAPI(render_images=False)
    api.record_history = True
    assert api.loadScenario("Small Skills: Search Test", "Normal", randomSeed=3)
    assert api.env is not None and api.env.world is not None and api.world is not None
    flag = api.env.scenario.flag.uuid  # type: ignore[union-attr]  # the goal object (its name varies per level)
    moves = ["north", "north", "east", "east", "east", "south", "west", "north", "north", "east"]
    for step, direction in enumerate(moves):
        ui = api.getAgentObservation(0)["ui"]
        shown = {o["uuid"] for group in ui["nearbyObjects"]["objects"].values() for o in group}
        shown |= {o["uuid"] for o in ui["inventoryObjects"]}
        recorded = api.world.getWorldHistoryAtStep(step)
        assert recorded is not None and recorded["step"] + 1 == ui["world_steps"]
        in_history = {o["uuid"] for tile in recorded["tiles"] for o in tile["objects"]} | {o["uuid"] for o in recorded["inventory"]}
        assert in_history == shown
        assert (flag in in_history) == (flag in shown)
        api.performAgentAction(0, {"action": "MOVE_DIRECTION", "arg1": direction})
        api.tick()


def test_attack_world_and_ui_views_hand_out_no_engine_object() -> None:
    """`api.world` and `api.ui[0].currentAgent` are views: no `objects`, no `world`, no `contents`
    to walk to hidden properties, and nothing can be attached to them."""
    api = compat.DiscoveryWorldAPI(render_images=False)
    assert api.loadScenario("Proteomics", "Easy", randomSeed=1)
    agent, world = api.ui[0].currentAgent, api.world
    for name in ("world", "contents", "props", "parent"):
        assert not hasattr(agent, name)
    for name in ("objects", "tiles", "agents", "feed", "rng_build"):
        assert not hasattr(world, name)
    with pytest.raises(AttributeError):
        agent.world = 1  # type: ignore[attr-defined]


def test_the_scripted_policy_reads_only_the_observation() -> None:
    """The test server's policy sees the prompt's observation and nothing else (no oracle)."""
    ui = {"taskProgress": [{"description": "pick up the `coin` and place it in the `jar`"}],
          "inventoryObjects": [], "accessibleEnvironmentObjects": [{"name": "coin", "uuid": 5}],
          "nearbyObjects": {"objects": {}}, "agentLocation": {"directions_you_can_move": ["east"]}}  # fmt: skip
    assert choose_action(ui, 0) == {"action": "PICKUP", "arg1": 5}
    ui["inventoryObjects"], ui["accessibleEnvironmentObjects"] = [{"name": "coin", "uuid": 5}], []
    assert choose_action(ui, 0) == {"action": "MOVE_DIRECTION", "arg1": "east"}
    talk = {**ui, "taskProgress": [{"description": "follow the instructions"}], "accessibleEnvironmentObjects": [{"uuid": 9}],
            "nearbyAgents": {"list_of_agents": {"Sally uuid 9": []}}}  # fmt: skip
    assert choose_action(talk, 0) == {"action": "TALK", "arg1": 9}
    talk["dialog_box"] = {"is_in_dialog": True, "dialogOptions": {"2": "no", "1": "yes"}}
    assert choose_action(talk, 0) == {"chosen_dialog_option_int": 1}


# ---- the documented list of what the original agents touch --------------------------------------
def _documented_members() -> list[str]:
    text = (ROOT / "docs" / "agents.md").read_text()
    section = text.split("### What the original's agents touch", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+)`", section, re.M)


def test_the_client_makes_every_documented_call_and_access() -> None:
    members = _documented_members()
    assert len(members) >= 30
    tree = ast.parse(CLIENT.read_text())
    used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    used |= {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    used |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    used |= {k.arg for n in ast.walk(tree) if isinstance(n, ast.Call) for k in n.keywords if k.arg}
    used |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    missing = [m for m in members if m.split("(")[0].split(".")[-1].split("[")[0] not in used]
    assert not missing, missing
