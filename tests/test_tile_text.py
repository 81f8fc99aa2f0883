"""The text observation's per-tile cache (`world.caches["tile_text"]`) against fresh builds.

Tiles are redescribed only when `World.watch_tiles` reports them: membership changes, and
`WorldObject.text_changed` after a write of what a description reads. So check every step of
random and oracle rollouts against an observation built from an empty cache, each tracked
mutation kind on its own, and (statically) that every write of such state is reported.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.world_kit import Player, meadow

import discoverylab
from discoverylab.agents import OracleAgent
from discoverylab.env import DiscoveryWorldEnv
from discoverylab.scenarios.registry import all_tasks
from discoverylab.scenarios.rocket_science.things import Pendulum
from discoverylab.world.catalog import place, spawn
from discoverylab.world.materials import material
from discoverylab.world.objects import TEXT_ATTRS, TEXT_PROPS, Container, WorldObject, is_text_audited
from discoverylab.world.observation import build_observation
from discoverylab.world.things import Mold

PAIRS = [(tid, d) for tid, cls in all_tasks().items() for d in cls.difficulties]


def _fresh(agent: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """The observation built from an empty tile cache (the old one stops watching)."""
    world = agent.world
    old = world.caches.pop("tile_text")
    world.unwatch_tiles(old.changed)
    return build_observation(agent, *args, **kwargs)


def _check_env_step(env: DiscoveryWorldEnv, info: dict[str, Any], where: Any) -> None:
    obs = info["observation"]
    message = obs["lastActionMessage"], obs["extended_action_message"]
    fresh = _fresh(env.scenario.player, obs["taskProgress"], *message, radius=env.radius, teleport=env.teleport)
    assert fresh == obs, where


@pytest.mark.parametrize(("task", "difficulty"), PAIRS)
def test_cached_tile_text_matches_a_fresh_build_on_random_rollouts(task: str, difficulty: str) -> None:
    """Moves, turns, teleports and object verbs (pick up, drop, open, close, activate, use)."""
    env = DiscoveryWorldEnv(task, difficulty, max_steps=10**9)
    _, info = env.reset(seed=5)
    rng = np.random.default_rng(5)
    moves = [{"action": a, "arg1": d} for a in ("MOVE_DIRECTION", "ROTATE_DIRECTION") for d in ("north", "east", "south", "west")]
    verbs = ("PICKUP", "DROP", "OPEN", "CLOSE", "ACTIVATE", "DEACTIVATE", "USE")
    for i in range(120):
        obs = info["observation"]
        uuids = [o["uuid"] for o in obs["accessibleEnvironmentObjects"] + obs["inventoryObjects"]]
        if uuids and i % 3 == 0:
            action = {"action": verbs[int(rng.integers(len(verbs)))], "arg1": uuids[int(rng.integers(len(uuids)))]}
            if action["action"] == "USE":
                action["arg2"] = uuids[int(rng.integers(len(uuids)))]
        elif i % 17 == 0 and obs.get("teleportLocations"):
            action = {"action": "TELEPORT_TO_LOCATION", "arg1": obs["teleportLocations"][int(rng.integers(len(obs["teleportLocations"])))]}
        else:
            action = moves[int(rng.integers(len(moves)))]
        _, _, term, trunc, info = env.step(action)
        _check_env_step(env, info, (task, difficulty, i))
        if term or trunc:
            _, info = env.reset(seed=6 + i)


ORACLE_TASKS = [("ReactorLab", "normal"), ("RocketScience", "normal"), ("CombinatorialChemistry", "normal"),
                ("ArchaeologyDating", "normal"), ("DoorsWithKeysTest", "normal"), ("SpaceSick", "easy")]  # fmt: skip


@pytest.mark.parametrize(("task", "difficulty"), ORACLE_TASKS)
def test_cached_tile_text_matches_a_fresh_build_on_oracle_rollouts(task: str, difficulty: str) -> None:
    """Oracles reach the state changes random walks rarely do: calibrated reactors, mixed
    remedies derusting keys, running pendulums, dug sites, unlocked doors, cooked food."""
    env = DiscoveryWorldEnv(task, difficulty, max_steps=10**9)
    _, info = env.reset(seed=1)
    oracle = OracleAgent(task)
    steps = 0
    for i in range(250):
        action = oracle.act(info["observation"])
        if oracle.finished:
            break
        _, _, term, trunc, info = env.step(action)
        _check_env_step(env, info, (task, difficulty, i))
        steps += 1
        if term or trunc:
            break
    assert steps >= 20 and not oracle.error, (steps, oracle.error)


# ---- each tracked mutation kind -------------------------------------------------------------
def _descriptions(player: Player) -> list[str]:
    """Nearby descriptions from the (warm) cache, after checking them against a fresh build."""
    cached = player.observe()
    assert _fresh(player.agent, [], "") == cached
    return [e["description"] for entries in cached["nearbyObjects"]["objects"].values() for e in entries]


def test_opening_and_closing_a_container_shows_its_state_and_contents() -> None:
    world = meadow()
    player = Player(world, 5, 5, facing="east")
    fridge = place(world, "fridge", 6, 5)
    jar = spawn(world, "jar")
    fridge.add(jar)
    assert "closed fridge" in _descriptions(player) and not any("jar" in d for d in _descriptions(player))
    assert player.do("OPEN", fridge).success
    seen = _descriptions(player)
    assert "open fridge" in seen and any(d.startswith("empty jar (in fridge") for d in seen)
    assert player.do("CLOSE", fridge).success
    assert "closed fridge" in _descriptions(player)


def test_a_stove_heats_a_pot_and_cooks_a_mushroom_in_view() -> None:
    world = meadow()
    player = Player(world, 5, 5, facing="east")
    stove = place(world, "stove", 6, 5)
    pot, mushroom = spawn(world, "pot"), spawn(world, "mushroom")
    pot.add(mushroom)
    stove.add(pot)
    assert player.do("OPEN", stove).success
    before = _descriptions(player)
    assert "open inactive stove" in before and not any(d.startswith("cooked") for d in before)
    assert player.do("ACTIVATE", stove).success
    assert "open activated stove" in _descriptions(player)
    stove.set_point = 250.0
    for _ in range(5):
        world.tick()
        _descriptions(player)
    after = _descriptions(player)
    assert any(d.startswith("hot pot") for d in after) and any(d.startswith("cooked ") and "mushroom" in d for d in after)


def test_doors_opened_by_the_agent_and_by_an_npc() -> None:
    from discoverylab.world.npc import NPC

    world = meadow()
    player = Player(world, 5, 5, facing="east")
    door = place(world, "door", 6, 5)
    assert "closed door" in _descriptions(player)
    assert "east" in player.observe()["agentLocation"]["directions_blocked"]
    assert player.do("OPEN", door).success
    assert "open door" in _descriptions(player)
    assert "east" in player.observe()["agentLocation"]["directions_you_can_move"]
    assert player.do("CLOSE", door).success
    npc = NPC(world, "walker", 7, 5, facing="west")
    assert npc.advance_to(6, 5) == "opened"
    assert "open door" in _descriptions(player)
    assert "east" in player.observe()["agentLocation"]["directions_you_can_move"]


def test_a_dead_mold_and_a_rusted_key_show_their_props() -> None:
    """`props` entries are mutated in place: the writer reports them with `text_changed`."""
    world = meadow()
    player = Player(world, 5, 5)
    mold = world.place(Mold(world, "mold", "mold", [material("mold_red")], poisonous=True), 6, 5)
    key = place(world, "key", 4, 5)
    assert "mold" in _descriptions(player) and "key" in _descriptions(player)
    mold.temperature_c = 500.0
    mold.react_to_temperature()
    key.props["rusted"] = True
    key.text_changed()
    seen = _descriptions(player)
    assert "burned mold" in seen and "rusted key" in seen


def test_digging_soil_shows_a_hole_and_what_it_holds() -> None:
    world = meadow()
    player = Player(world, 5, 5, facing="east")
    soil = world.place(spawn(world, "soil"), 6, 5)
    shovel = spawn(world, "shovel")
    player.agent.add(shovel)
    assert "soil" in _descriptions(player)
    assert player.do("USE", shovel, soil).success
    assert "hole" in _descriptions(player)


def test_a_running_pendulum_is_redescribed_every_tick() -> None:
    world = meadow()
    player = Player(world, 5, 5, facing="east")
    pendulum = world.place(Pendulum(world, 2.0), 6, 5)
    assert player.do("ACTIVATE", pendulum).success
    texts = []
    for _ in range(3):
        world.tick()
        texts.append([d for d in _descriptions(player) if d.startswith("1-meter pendulum")])
    assert texts[0] != texts[1] != texts[2]


def test_renaming_a_holder_redescribes_its_contents() -> None:
    world = meadow()
    player = Player(world, 5, 5)
    table = place(world, "table", 6, 5)
    table.add(spawn(world, "jar"))
    assert any("(on table" in d for d in _descriptions(player))
    table.name = "workbench"
    table.text_changed()
    assert any("(on workbench" in d for d in _descriptions(player))


class _Counter(Container):
    """Not audited: its description reads an attribute nobody reports."""

    count = 0

    def describe_state(self) -> str:
        return f"counter at {self.count}"


def test_an_unaudited_object_is_described_afresh_every_time() -> None:
    world = meadow()
    player = Player(world, 5, 5)
    counter = world.place(_Counter(world, "counter", "counter"), 6, 5)
    assert "counter at 0" in _descriptions(player)
    counter.count = 3  # no `text_changed`
    assert "counter at 3" in _descriptions(player)


def test_other_characters_history_stays_live_on_a_cached_tile() -> None:
    from discoverylab.world.npc import NPC

    world = meadow()
    player = Player(world, 5, 5)
    npc = NPC(world, "walker", 6, 5, facing="west")
    key = f"walker uuid {npc.uuid}"
    assert player.observe()["nearbyAgents"]["list_of_agents"][key] == []
    npc.record("WAIT", None, None, True, "waited")
    assert [e["actionType"] for e in player.observe()["nearbyAgents"]["list_of_agents"][key]] == ["WAIT"]


# ---- every write of described state is reported ---------------------------------------------
SRC = Path(discoverylab.__file__).parent
# (module, function): why a write of described state there needs no `text_changed`.
UNREPORTED = {
    ("scenarios/archaeology/scenario.py", "ArchaeologyDating._dig_site"): "world building",
    ("scenarios/archaeology/scenario.py", "ArchaeologyDating._stray_hole"): "world building",
    ("scenarios/lost_in_translation/scenario.py", "LostInTranslation._build_village"): "world building",
    ("scenarios/reactor_lab/scenario.py", "ReactorLab.build"): "world building",
    ("scenarios/reactor_lab/things.py", "make_crystal"): "a new object, not placed yet",
    ("scenarios/space_sick/colony.py", "new_mushroom"): "a new object, not placed yet",
    ("scenarios/space_sick/colony.py", "_science_lab"): "world building",
    ("scenarios/space_sick/things.py", "_sample_of"): "a new object, not placed yet",
    ("scenarios/tutorial/scenario.py", "Tutorial.build"): "world building",
    ("scenarios/tutorial/scenario.py", "Tutorial._build_house"): "world building",
    ("scenarios/unit/instrument_measurement.py", "InstrumentMeasurementTest._randomise"): "world building",
    ("scenarios/explore.py", "WorldMap.update"): "a map record, not a world object",
    ("world/catalog.py", "build_plain"): "a new object (WorldObject.__init__'s inline twin), placed while nobody watches",
    ("world/catalog.py", "place_each"): "new objects (`build_plain`'s body inline), placed while nobody watches",
    ("world/catalog.py", "place"): "a new object (`build_plain`'s body inline), placed while nobody watches",
    ("world/materials.py", "Material.copy"): "a new material (the copy), held by no object yet",
    ("world/spares.py", "_sole_refs"): "a stand-in for reference counts, never in a world",
    ("scenarios/combinatorial_chemistry/things.py", "RustedKey.tick"): "every branch ends in _rename(), which reports",
    ("labs/sequence/protocol_population.py", "PopulationProtocol._on_reset"): "a Tiny Labs protocol, no world object",
}


def _described_writes(path: Path) -> dict[str, list[str]]:
    """Per function: its writes of `TEXT_ATTRS` attributes and `TEXT_PROPS` entries, unless it
    calls `text_changed` (a constructor's writes to `self` need none: not placed yet)."""
    found: dict[str, list[str]] = {}

    def visit(node: ast.AST, qual: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, [*qual, child.name])
                if not isinstance(child, ast.ClassDef):
                    check(child, [*qual, child.name])

    def check(fn: ast.FunctionDef | ast.AsyncFunctionDef, qual: list[str]) -> None:
        nodes = [n for stmt in fn.body for n in ast.walk(stmt)]
        if any(isinstance(n, ast.Attribute) and n.attr == "text_changed" for n in nodes):
            return
        for node in nodes:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for target in targets:
                for item in target.elts if isinstance(target, ast.Tuple) else [target]:
                    holder = item.value if isinstance(item, (ast.Attribute, ast.Subscript)) else None
                    if isinstance(item, ast.Subscript) and isinstance(holder, ast.Attribute) and holder.attr == "props":
                        key = item.slice.value if isinstance(item.slice, ast.Constant) else None
                        if key not in TEXT_PROPS:
                            continue
                        holder = holder.value
                    elif not (isinstance(item, ast.Attribute) and item.attr in TEXT_ATTRS):
                        continue
                    if fn.name == "__init__" and isinstance(holder, ast.Name) and holder.id == "self":
                        continue
                    found.setdefault(".".join(qual), []).append(f"line {node.lineno}: {ast.unparse(item)}")

    visit(ast.parse(path.read_text(encoding="utf-8")), [])
    return found


def test_every_write_of_described_state_is_reported() -> None:
    """A write of what a description reads (`TEXT_ATTRS`, `TEXT_PROPS`) on an object in the
    world must be followed by `text_changed`, or observations keep showing the old text."""
    unreported = {}
    for path in sorted(SRC.rglob("*.py")):
        module = path.relative_to(SRC).as_posix()
        for function, writes in _described_writes(path).items():
            if (module, function) not in UNREPORTED:
                unreported[f"{module}:{function}"] = writes
    assert not unreported, f"call text_changed after these writes (or list them in UNREPORTED): {unreported}"
    assert {"is_open", "passable", "activated", "temperature_c", "cooked", "document"} <= TEXT_ATTRS
    assert {"rusted", "microscope_note"} <= TEXT_PROPS


def test_the_tripwire_catches_an_unreported_write(tmp_path: Path) -> None:
    source = tmp_path / "x.py"
    source.write_text("def f(obj):\n    obj.is_open = True\n\ndef g(obj):\n    obj.is_open = True\n    obj.text_changed()\n")
    assert list(_described_writes(source)) == ["f"]


def test_every_describe_state_override_is_audited() -> None:
    """Unaudited ones work (described afresh) but cost every step: keep the engine's audited."""

    def subclasses(cls: type) -> list[type]:
        return [cls, *(s for sub in cls.__subclasses__() for s in subclasses(sub))]

    engine = [c for c in subclasses(WorldObject) if c.__module__.startswith("discoverylab.")]
    assert len(engine) > 30
    assert [c.__name__ for c in engine if not is_text_audited(c.describe_state)] == []
