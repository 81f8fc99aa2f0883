"""The step fast paths (issue #27, speed) against the plain code they stand in for: the discrete
packets, the parser's copy, the executor's dispatch, teleports beside objects, door zones and
`DiscoveryWorldEnv.step`'s inline observation and info. Each test fails when its fast path goes
stale (checked by mutating the fast path once)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.rl import make_rl_env
from discoverylab.rl.actions import FIXED, PAIR, SINGLE
from discoverylab.world.action_input import parse_action
from discoverylab.world.agent import DIRECTIONS
from discoverylab.world.zones import label_zones

CLOCKWISE = ("north", "east", "south", "west")
OPPOSITE = {"north": "south", "east": "west", "south": "north", "west": "east"}


def _masked_rollout(env: Any, steps: int, seed: int = 0) -> list[int]:
    """Play a seeded random masked policy (moves two steps of three); return the actions."""
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    actions = []
    for i in range(steps):
        mask = info["action_mask"]
        allowed = np.flatnonzero(mask if i % 3 == 0 or not mask[:15].any() else mask[:15])
        action = int(allowed[int(rng.integers(len(allowed)))])
        actions.append(action)
        *_, term, trunc, info = env.step(action)
        if term or trunc:
            _, info = env.reset(seed=seed + i + 1)
    return actions


def test_packet_of_every_index_is_the_layout_s_action() -> None:
    """`packet` reads a table of `layout` per index: every index gives the action `layout` names,
    on the slots of the moment (some empty), as a new dict each call."""
    env = make_rl_env("PickAndPlaceTest", object_slots=30)
    _masked_rollout(env, 40)
    slots = env.slot_data
    assert 0 < len(slots) < env.num_slots  # some slots filled, some empty
    names = sorted(env.unwrapped.world.teleports)
    for index in range(env.n):
        name, args = env.layout(index)
        packet = env.packet(index)
        if index < env.base_single:
            expected = dict(FIXED[index])
        elif name == "DIALOG":
            expected = {"chosen_dialog_option_int": args[0] + 1}
        elif name == "TELEPORT_TO_LOCATION":
            expected = {"action": name, "arg1": names[args[0]] if args[0] < len(names) else ""}
        else:
            assert name in SINGLE + PAIR
            expected = {"action": name}
            for i, slot in enumerate(args):
                expected[f"arg{i + 1}"] = slots[slot][0].uuid if slot < len(slots) else ""
        assert packet == expected and packet is not env.packet(index), index
    with pytest.raises(ValueError):
        env.packet(env.n)
    with pytest.raises(ValueError):
        env.packet(-1)


def test_fixed_packets_reach_the_world_unchanged() -> None:
    """Moves, turns and waits go to `env.step` as `FIXED`'s own dicts (not copies): nothing on
    the way may change them, and the agent's record is the action's."""
    before = [dict(packet) for packet in FIXED]
    env = make_rl_env("DoorsTest")
    _masked_rollout(env, 300)
    assert [dict(packet) for packet in FIXED] == before
    for index in range(len(FIXED)):
        if FIXED[index]["action"] in ("WAIT", "ROTATE_CW"):
            env.step(index)
            assert env.unwrapped.scenario.player.history[-1].action == FIXED[index]["action"].replace("_CW", "_DIRECTION")


def test_parse_action_copies_a_dict_only_to_convert_its_values() -> None:
    """A dict of plain values is parsed as it is (the executor only reads it); one holding numpy
    values is converted in a copy, and the caller's dict keeps its values."""
    plain = {"action": "PICKUP", "arg1": 12, "arg2": None, "thought": "x", "f": 1.5, "b": True}
    assert parse_action(plain) is plain and plain["arg1"] == 12
    mixed = {"action": "PICKUP", "arg1": np.int64(12), "arg2": np.arange(3)}
    parsed = parse_action(mixed)
    assert parsed == {"action": "PICKUP", "arg1": 12, "arg2": [0, 1, 2]} and type(parsed["arg1"]) is int
    assert type(mixed["arg1"]) is np.int64 and isinstance(mixed["arg2"], np.ndarray)

    class Name(str):
        pass

    odd = {"action": Name("WAIT")}
    assert parse_action(odd) == odd and parse_action(odd) is not odd  # not a plain type: the general path


_MESSY = [
    {"action": "MOVE_DIRECTION", "arg1": " North"}, {"action": "move_direction", "arg1": "east"},
    {"action": "ROTATE_DIRECTION", "arg1": "WEST"}, {"action": "ROTATE_DIRECTION", "arg1": "up"},
    {"action": "MOVE_DIRECTION"}, {"action": "MOVE_DIRECTION", "arg1": ""}, {"action": "MOVE_DIRECTION", "arg1": 3},
    {"action": "PICKUP", "arg1": "12"}, {"action": "PICKUP"}, {"action": "READ", "arg1": 1.0},
    {"action": "TELEPORT_TO_LOCATION", "arg1": 5}, {"action": "TELEPORT_TO_LOCATION", "arg1": "nowhere"},
    {"action": "DISCOVERY_FEED_GET_POST_BY_ID", "arg1": "1"}, {"action": "DISCOVERY_FEED_GET_POST_BY_ID", "arg1": "x"},
    {"action": "PUT", "arg1": 1}, {"action": "USE"}, {"action": 7}, {"action": "FLY"}, {"arg1": 2},
    {"chosen_dialog_option_int": 1},
]  # fmt: skip


@pytest.mark.parametrize("task", ["DoorsTest", "PickAndGiveTest", "DialogTest"])
def test_the_lenient_dispatch_acts_as_the_general_path(task: str) -> None:
    """The default executor takes shortcuts for actions with no or one argument; a strict one
    (which takes none) must do exactly the same with packets that carry no extra keys: the same
    results, records and world, step by step, with random discrete actions and messy packets."""
    lenient, strict = make_rl_env(task), make_rl_env(task, strict=True)
    rng = np.random.default_rng(3)
    for seed in (0, 1):
        _, info = lenient.reset(seed=seed)
        strict.reset(seed=seed)
        for i in range(250):
            mask = info["action_mask"]
            if i % 5 == 4:
                packet = dict(_MESSY[int(rng.integers(len(_MESSY)))])
                if packet.get("action") == "PICKUP" and packet.get("arg1") == "12" and lenient.slot_data:
                    packet["arg1"] = str(lenient.slot_data[0][0].uuid)
            else:
                allowed = np.flatnonzero(mask if i % 3 == 0 or not mask[:15].any() else mask[:15])
                packet = lenient.packet(int(allowed[int(rng.integers(len(allowed)))]))
            obs, _, _, _, info = lenient.unwrapped.step(dict(packet))
            other, _, _, _, theirs_info = strict.unwrapped.step(dict(packet))
            assert info == theirs_info, packet
            assert all(np.array_equal(obs[k], other[k]) for k in obs)
            ours, theirs = lenient.unwrapped.scenario.player, strict.unwrapped.scenario.player
            assert (ours.x, ours.y, ours.facing) == (theirs.x, theirs.y, theirs.facing)
            assert [(r.action, r.arg1_uuid, r.arg2_uuid, r.success, r.message, r.step) for r in ours.history] == [
                (r.action, r.arg1_uuid, r.arg2_uuid, r.success, r.message, r.step) for r in theirs.history
            ]
            lenient._refresh(info)  # the slots (the packets' UUIDs) and the mask of this step


def _plain_zones(world: Any, locked_only: bool) -> list[list[int]] | None:
    """`door_zones` as first written: every wall and closed (or locked) door a barrier."""
    doors = {(o.x, o.y) for o in world.objects.values()
             if o.is_passage and o.alive and not o.is_open and o.layer is not None and (o.requires_key or not locked_only)}  # fmt: skip
    if not doors:
        return None
    walls = {(o.x, o.y) for o in world.objects.values() if o.type == "wall" and o.layer is not None}
    return label_zones(world.size, walls | doors)


def _plain_teleport_side(world: Any, agent: Any, obj: Any) -> tuple[int, int, str] | None:
    """Where `TELEPORT_TO_OBJECT` lands (tile and facing) by the rule as first written."""
    ox, oy = obj.location()
    if ox < 0:
        return None
    sides = [(s, ox + DIRECTIONS[s][0], oy + DIRECTIONS[s][1]) for s in CLOCKWISE]
    free = [(s, x, y) for s, x, y in sides if world.is_passable(x, y)]
    for locked_only in (False, True):
        if not free:
            break
        zones = _plain_zones(world, locked_only)
        here: set[int] = set()
        if zones is not None:
            x, y = agent.x, agent.y
            if zones[x][y] >= 0:
                here = {zones[x][y]}
            else:
                near = ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1))
                here = {zones[a][b] for a, b in near if world.in_bounds(a, b) and zones[a][b] >= 0}
        side = next((c for c in free if zones is None or zones[c[1]][c[2]] in here), None)
        if side is not None:
            return side[1], side[2], OPPOSITE[side[0]]
    return None


@pytest.mark.parametrize("task", ["DoorsTest", "DoorsWithKeysTest", "NavigationHouseTest"])
def test_teleports_and_door_zones_follow_the_plain_rule(task: str) -> None:
    """Teleporting beside objects while doors open and close (locked ones too): the zones the
    world keeps equal a plain labelling, and every teleport lands where the plain rule lands."""
    env = make_rl_env(task, max_steps=10**9)
    rng = np.random.default_rng(11)
    checked = 0
    for seed in (0, 1, 2):
        env.reset(seed=seed)
        base = env.unwrapped
        world, agent, executor = base.world, base.scenario.player, base.executor
        passages = [o for o in world.objects.values() if o.is_passage]
        targets = [o for o in world.objects.values() if o.layer is not None and o.type not in ("grass", "floor")]
        assert passages and targets
        for _ in range(120):
            door = passages[int(rng.integers(len(passages)))]
            if rng.random() < 0.5 and (door.x, door.y) != (agent.x, agent.y):
                door.is_open = not door.is_open
            for locked_only in (False, True):
                assert world.door_zones(locked_only) == _plain_zones(world, locked_only)
            obj = targets[int(rng.integers(len(targets)))]
            expected = _plain_teleport_side(world, agent, obj)
            result = executor._do_teleport_to_object(obj)
            assert result.success == (expected is not None)
            if expected is not None:
                assert (agent.x, agent.y, agent.facing) == expected
                checked += 1
    assert checked > 100


@pytest.mark.parametrize(("observation", "info"), [("symbolic", "lean"), ("symbolic", "full"), ("text", "full"), ("text", "lean")])
def test_env_step_gives_what_its_helpers_give(observation: str, info: str) -> None:
    """`DiscoveryWorldEnv.step` builds its observation and info inline: they equal what the
    plain helpers (`_output`, `_info`) give for the same step, ends of episodes (completed and
    truncated) included."""
    env = DiscoveryWorldEnv("DoorsTest", observation=observation, info=info, max_steps=30)
    rng = np.random.default_rng(2)
    env.reset(seed=4)
    ends = 0
    for i in range(120):
        if i % 25 == 24:  # a task decided (as if it were done): the next step ends it as completed
            env.scenario.scorecard.finish(True)
        action = dict(FIXED[int(rng.integers(len(FIXED)))])
        obs, _, term, trunc, got = env.step(action)
        again = env._output()
        if observation == "symbolic":
            assert obs.keys() == again.keys() and all(np.array_equal(obs[k], again[k]) for k in obs)
        else:
            assert obs == again
        assert got == env._info(SimpleNamespace(success=got["success"]))
        if term or trunc:
            ends += 1
            assert "scorecard" in got
            env.reset(seed=ends)
    assert ends >= 4


@pytest.mark.parametrize("kwargs", [{}, {"notes": True}, {"object_slots": 0}, {"radius": 0}])
def test_encode_s_field_views_equal_one_array_per_key(kwargs: dict[str, Any]) -> None:
    """`SymbolicEncoder.encode` hands out each key as a field view of one structured array over
    its step buffer (`_record_of`), or one array per key where a key has no elements: every key
    is a C-contiguous, writable uint8 array of its space's shape holding the bytes a plain
    array per key over the same buffer holds, a write to one changes no other key, and an
    earlier step's arrays keep their values. Fails when a field's offset or shape goes stale."""
    from discoverylab.rl.symbolic import U8, SymbolicEncoder

    encoder = SymbolicEncoder(**kwargs)
    env = make_rl_env("MovingAgentsTest")
    env.reset(seed=3)
    base = env.unwrapped
    agent, task = base.scenario.player, base.scenario.scorecard.task_description
    assert (encoder._record is None) == ("object_slots" in kwargs)
    earlier: list[tuple[dict[str, np.ndarray], dict[str, bytes]]] = []
    rng = np.random.default_rng(1)
    for _ in range(40):
        env.step(int(rng.integers(15)))
        obs = encoder.encode(agent, task, True, False)
        buffer = obs["tiles"].base
        while isinstance(buffer, np.ndarray):  # the step's own buffer, under the record if any
            buffer = buffer.base
        assert isinstance(buffer, bytearray)
        assert tuple(obs["agent"][:2]) == (agent.x, agent.y)
        for name, shape, offset in encoder._layout:
            plain = np.ndarray(shape, U8, buffer, offset)
            array = obs[name]
            assert type(array) is np.ndarray and array.dtype == U8 and array.shape == shape == encoder.space[name].shape
            assert array.flags.c_contiguous and array.flags.writeable
            assert array.tobytes() == plain.tobytes()
        assert encoder.space.contains(obs)
        earlier.append((obs, {name: array.tobytes() for name, array in obs.items()}))
    obs, kept = earlier[-1]
    for name in obs:
        if obs[name].size:
            obs[name].flat[0] ^= 1
            assert all(obs[other].tobytes() == kept[other] for other in obs if other != name)
            obs[name].flat[0] ^= 1
    assert all({name: array.tobytes() for name, array in old.items()} == values for old, values in earlier)


@pytest.mark.parametrize("difficulty", ["easy", "normal", "challenge"])
def test_moving_agents_scorer_skipping_an_equal_count_changes_nothing(difficulty: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`MovingAgentsTest.update` sets the talk item only when the warned count differs from its
    score: oracle episodes (every character warned, one by one) give the same scorecard at every
    step as the scorer that set it every tick. Fails when the skip keeps a count that changed."""
    from discoverylab.agents import OracleAgent
    from discoverylab.scenarios.unit import moving_agents
    from discoverylab.scenarios.unit.moving_agents import WARNED, MovingAgentsTest

    def plain(self: MovingAgentsTest) -> None:  # the scorer before session 14
        warned = sum(WARNED[i] in npc.states for i, npc in enumerate(self.npcs))
        for i, other in enumerate(self.others, start=len(self.npcs)):
            if (WARNED[i] if i < len(WARNED) else f"completed{i}") in other.states:
                self.scorecard.finish(False)
                return
        self.talk.set(warned)
        if self.talk.completed:
            self.scorecard.finish(True)

    def play() -> list[Any]:
        env = DiscoveryWorldEnv("MovingAgentsTest", difficulty)
        _, info = env.reset(seed=7)
        oracle, cards = OracleAgent("MovingAgentsTest"), []
        for _ in range(100):
            action = oracle.act(info["observation"]) if not oracle.finished else {"action": "WAIT"}
            *_, term, trunc, info = env.step(action)
            cards.append(env.scenario.scorecard.to_dict())
            if term or trunc:
                break
        return cards

    fast = play()
    monkeypatch.setattr(moving_agents.MovingAgentsTest, "update", plain)
    assert play() == fast
    assert fast[-1]["completedSuccessfully"] and fast[-1]["score"] == fast[-1]["maxScore"] >= 2
    assert sorted({card["score"] for card in fast}) == list(range(fast[-1]["maxScore"] + 1))  # one by one
