"""The symbolic observation, the action mask and the image reveal per object no more than the
text observation does (issue #20). Each attack is a named test that the attack must lose."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import pytest

from discoverylab.env import VIEW_TILES, DiscoveryWorldEnv
from discoverylab.render.sprite_keys import FADE_SUFFIX, sprite_key
from discoverylab.render.tiles import tile_look
from discoverylab.rl import make_rl_env
from discoverylab.rl.view import kind_id
from discoverylab.scenarios.registry import all_tasks
from discoverylab.world.things import SoilTile

CONTENTS = 16  # the slot row's "number of contents" column (see rl/symbolic.py)
INTRINSIC = [1, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]  # per-object columns: no position or reach


def _soil_slots(env: DiscoveryWorldEnv, obs: dict[str, np.ndarray]) -> list[tuple[SoilTile, np.ndarray]]:
    """The covered soil tiles in the symbolic slots, each with its slot row."""
    assert env.symbolic is not None
    out = []
    for i, (obj, *_) in enumerate(env.symbolic.slot_data):
        if isinstance(obj, SoilTile) and not obj.is_open:
            out.append((obj, obs["slots"][i]))
    return out


def _buries_artifact(soil: SoilTile) -> bool:
    return any(o.type != "dirt" for o in soil.contents)


@pytest.mark.parametrize("difficulty", ["normal", "challenge"])
def test_soil_count_attack_finds_buried_artifacts_no_more_often_than_blind(difficulty: str) -> None:
    """The attack: at each dig site, dig the covered soil tile whose "number of contents" is
    highest (a buried artifact made it read 2 against 1 for dirt alone). Blind: dig the first
    covered soil tile in the slots. With the count hiding what soil covers, both pick the same."""
    env = DiscoveryWorldEnv("ArchaeologyDating", difficulty, observation="symbolic", info="lean")
    attack = blind = sites = differ = 0
    for seed in range(8):
        env.reset(seed=seed)
        assert env.world is not None
        for name in sorted(n for n in env.world.teleports if n.startswith("dig site")):
            obs, *_ = env.step({"action": "TELEPORT_TO_LOCATION", "arg1": name})
            soils = _soil_slots(env, obs)
            if len(soils) < 2 or not any(_buries_artifact(s) for s, _ in soils):
                continue  # an exposed site, or one whose soil is not all in view: no choice to make
            sites += 1
            differ += len({bytes(row[INTRINSIC]) for _, row in soils}) > 1
            pick = max(range(len(soils)), key=lambda i: (int(soils[i][1][CONTENTS]), -i))
            attack += _buries_artifact(soils[pick][0])
            blind += _buries_artifact(soils[0][0])
    assert sites >= 10, f"too few buried dig sites seen ({sites}) for the test to mean anything"
    assert blind < sites, "blind digging always hits: the test could not tell the attack from chance"
    assert attack <= blind, f"the soil count finds buried artifacts: {attack}/{sites} against {blind}/{sites} blind"
    assert differ == 0, f"at {differ} sites the covered soil tiles differ in what the symbolic view shows"


def _text_entries(obs: dict[str, Any]) -> dict[int, tuple[str, str, int]]:
    """UUID -> (name, description, how many listed objects it holds) of every object the text
    observation lists; the description without the holder's UUID (a name tag, not a property)."""
    named: dict[int, tuple[str, str]] = {}
    held: dict[int, int] = defaultdict(int)
    groups = [obs.get("inventoryObjects", []), obs.get("accessibleEnvironmentObjects", [])]
    groups += list((obs.get("nearbyObjects", {}).get("objects") or {}).values())
    for entries in groups:
        for e in entries:
            uuid, desc = int(e["uuid"]), str(e["description"])
            if uuid in named:
                continue
            cut = desc.find(" [uuid: ")
            if cut >= 0:
                end = desc.index("]", cut)
                held[int(desc[cut + 8 : end])] += 1
                desc = desc[:cut] + desc[end + 1 :]
            named[uuid] = (str(e["name"]), desc)
    return {uuid: (name, desc, held[uuid]) for uuid, (name, desc) in named.items()}


def _every_task() -> list[tuple[str, str]]:
    return [(tid, d) for tid, cls in sorted(all_tasks().items()) for d in cls.difficulties]


@pytest.mark.parametrize(("task", "difficulty"), _every_task())
def test_symbolic_features_are_a_function_of_what_the_text_shows(task: str, difficulty: str) -> None:
    """Over random rollouts of several seeds: every object in a symbolic slot is listed by the
    text observation of the same step, and its per-object features (kind, open, activated, the
    fixed flags, named in the task, number of contents) are the same for every object the text
    shows alike (same name and description, holding as many listed objects, under the same
    task text). The tile channel's kinds are those of the objects
    the text lists on the tile, and a tile's state (passable, character, open door) is the same
    for every tile the text shows alike, so neither shows anything the text hides."""
    env = DiscoveryWorldEnv(task, difficulty, observation="symbolic", info="full", max_steps=40)
    assert env.symbolic is not None
    seen: dict[tuple[str, tuple[str, str, int]], set[bytes]] = defaultdict(set)
    kinds: dict[str, set[int]] = defaultdict(set)
    states: dict[tuple[tuple[str, str], ...], set[bytes]] = defaultdict(set)
    rng = np.random.default_rng(7)
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        for _ in range(40):
            text = _text_entries(info["observation"])
            task_text = " ".join(t["description"] for t in info["observation"]["taskProgress"])
            for i, (o, *_) in enumerate(env.symbolic.slot_data):
                assert o.uuid in text, f"slot {i} holds {o.name!r}, which the text observation does not list"
                seen[(task_text, text[o.uuid])].add(bytes(obs["slots"][i][INTRINSIC]))
            agent = env.scenario.player  # type: ignore[union-attr]
            world = agent.world
            r = env.symbolic.radius
            for dy in range(-r, r + 1):
                for dx in range(-r, r + 1):
                    x, y = agent.x + dx, agent.y + dy
                    if not (0 <= x < world.size and 0 <= y < world.size) or (dx, dy) == (0, 0):
                        continue
                    shown = world.objects_at(x, y)
                    want = bytes(kind_id(o.type) for o in shown[:4]).ljust(4, b"\0")
                    assert bytes(obs["tiles"][dy + r, dx + r]) == want
                    for o in shown:
                        kinds[o.name].add(kind_id(o.type))
                    look = tuple((o.name, o.describe(with_uuid=False)) for o in shown)
                    states[look].add(bytes(obs["tile_state"][dy + r, dx + r]))
            options = [o for o in text if o != agent.uuid]
            if options and rng.random() < 0.5:
                verb = ["PICKUP", "OPEN", "ACTIVATE", "USE", "DROP", "EAT", "READ"][int(rng.integers(7))]
                action = {"action": verb, "arg1": int(rng.choice(options))}
                if verb == "USE":
                    action["arg2"] = int(rng.choice(options))
            else:
                action = {"action": ["MOVE_FORWARD", "ROTATE_CW", "ROTATE_CCW"][int(rng.integers(3))]}
            if rng.random() < 0.1 and world.teleports:
                action = {"action": "TELEPORT_TO_LOCATION", "arg1": str(rng.choice(sorted(world.teleports)))}
            obs, _, term, trunc, info = env.step(action)
            if term or trunc:
                break
    leaks = {key: rows for key, rows in seen.items() if len(rows) > 1}
    assert not leaks, f"objects the text shows alike differ in the symbolic slots: {sorted((k, sorted(v)) for k, v in leaks.items())[:5]}"
    hidden = {look: rows for look, rows in states.items() if len(rows) > 1}
    assert not hidden, f"tiles the text shows alike differ in the tile channel: {sorted(hidden)[:3]}"
    mixed = {name: ids for name, ids in kinds.items() if len(ids) > 1}
    assert not mixed, f"objects of one name show different kinds in the tile channel: {sorted(mixed)[:5]}"


POSITIONAL = frozenset({"grass", "path", "sand", "plant", "tree_canopy", "wall", "fence"})  # look follows place


def _look(obj: Any) -> str:
    """An object's sprite key less what follows only from where it stands (ground variants,
    wall caps, fence joins, which half of a two-tile generator): the image shows places anyway."""
    key = sprite_key(obj)
    base = key.split(":", 1)[0]
    if base in POSITIONAL:
        return base
    if base == "generator":
        return "generator:" + key.rsplit(":", 1)[1]
    return key


def _drawn_keys(world: Any, x: int, y: int) -> set[str]:
    """The sprite keys the image draws on tile (x, y), holders' shown contents included."""
    keys: set[str] = set()
    for entry in tile_look(world, x, y):
        parts = [entry] if isinstance(entry, str) else [entry[0], *entry[1]]
        keys.update(p.removesuffix(FADE_SUFFIX) for p in parts)
    return keys


@pytest.mark.parametrize(("task", "difficulty"), _every_task())
def test_image_draws_only_what_the_text_shows(task: str, difficulty: str) -> None:
    """Every sprite the image view draws belongs to an object the text observation would list
    on that tile (`World.objects_at`: never the contents of a closed holder, a covered soil
    tile's buried artifact or seed included), and an object's sprite is the same for every
    object the text shows alike (same name and description)."""
    env = DiscoveryWorldEnv(task, difficulty, info="full", max_steps=30)
    looks: dict[tuple[str, str], set[str]] = defaultdict(set)
    rng = np.random.default_rng(11)
    for seed in range(2):
        _, info = env.reset(seed=seed)
        for step in range(30):
            agent = env.scenario.player  # type: ignore[union-attr]
            world = agent.world
            if step % 6 == 0:
                x0, y0 = agent.x - VIEW_TILES[0] // 2, agent.y - VIEW_TILES[1] // 2
                for x in range(max(0, x0), min(world.size, x0 + VIEW_TILES[0])):
                    for y in range(max(0, y0), min(world.size, y0 + VIEW_TILES[1])):
                        shown = world.objects_at(x, y, respect_obscuring=False)
                        allowed = {sprite_key(o) for o in shown}
                        extra = _drawn_keys(world, x, y) - allowed
                        assert not extra, f"the image draws {sorted(extra)} at ({x}, {y}), which the text hides"
                        for o in world.objects_at(x, y):
                            if not o.is_agent:  # characters face and walk: their sprite follows that
                                looks[(o.name, o.describe(with_uuid=False))].add(_look(o))
            text = _text_entries(info["observation"])
            options = [o for o in text if o != agent.uuid]
            if options and rng.random() < 0.5:
                verb = ["PICKUP", "OPEN", "USE", "DROP"][int(rng.integers(4))]
                action: dict[str, Any] = {"action": verb, "arg1": int(rng.choice(options)), "arg2": int(rng.choice(options))}
            elif rng.random() < 0.15 and world.teleports:
                action = {"action": "TELEPORT_TO_LOCATION", "arg1": str(rng.choice(sorted(world.teleports)))}
            else:
                action = {"action": ["MOVE_FORWARD", "ROTATE_CW"][int(rng.integers(2))]}
            _, _, term, trunc, info = env.step(action)
            if term or trunc:
                break
    mixed = {key: keys for key, keys in looks.items() if len(keys) > 1}
    assert not mixed, f"objects the text shows alike are drawn differently: {sorted(mixed.items())[:5]}"


@pytest.mark.parametrize(("task", "difficulty"), [("ArchaeologyDating", "normal"), ("SpaceSick", "normal"), ("PlantNutrients", "normal")])
def test_action_mask_is_a_function_of_the_symbolic_observation(task: str, difficulty: str) -> None:
    """The mask offers actions on the slots' objects only: equal symbolic views (which objects
    are present and within reach, the dialog options, the number of locations) give equal
    masks, so the mask never points at an object the observation hides (a buried artifact)."""
    env = make_rl_env(task, difficulty, max_steps=60)
    masks: dict[bytes, set[bytes]] = defaultdict(set)
    rng = np.random.default_rng(5)
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        for _ in range(60):
            key = bytes(obs["slots"][:, [0, 3]]) + bytes(obs["dialog"][:, 0]) + bytes(obs["agent"][[3, 6]])
            masks[key].add(np.packbits(info["action_mask"]).tobytes())
            obs, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            if term or trunc:
                break
    assert all(len(v) == 1 for v in masks.values()), "equal symbolic views came with different action masks"
