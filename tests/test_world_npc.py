"""Dialog mode (spec §4.3) and NPC autopilot (spec §7): path finding, doors, wandering, determinism."""

from __future__ import annotations

import pytest

from discoverylab.scenarios import layout
from discoverylab.world.actions import ActionExecutor
from discoverylab.world.agent import DIRECTIONS
from discoverylab.world.catalog import place
from discoverylab.world.npc import NPC, find_path
from discoverylab.world.observation import build_observation
from discoverylab.world.world import World
from world_kit import Player, meadow


# ---- dialog -----------------------------------------------------------------------------------
def _shopkeeper(world: World, x: int, y: int) -> NPC:
    npc = NPC(world, "sally", x, y)
    npc.props["price"] = 3
    tree = npc.dialog_tree
    assert tree is not None
    tree.add_node("root", "Welcome! Apples cost {price} coins.", states_to_add=("greeted",))
    tree.add_option("root", "I'll buy one", "sold", anti_states=("sold out",))
    tree.add_option("root", "Any discounts?", "discount", requires_states=("member",))
    tree.add_option("root", "Goodbye", "end")
    tree.add_node("sold", "Here you are.", states_to_add=("sold out",), states_to_remove=("greeted",))
    tree.add_option("sold", "Thanks", "end")
    tree.add_node("discount", "Members pay half.")
    tree.add_option("discount", "Nice", "end")
    tree.add_node("end", "Bye!")
    return npc


def test_dialog_options_are_filtered_by_states_and_states_follow_the_nodes() -> None:
    p = Player(meadow(), 5, 5, facing="south")
    npc = _shopkeeper(p.world, 5, 6)
    result = p.do("TALK", npc)
    assert result.message == "We are talking.  You said: Hello!\n\nsally said: Welcome! Apples cost 3 coins."
    assert "greeted" in npc.states
    box = p.observe()["dialog_box"]
    assert box == {
        "is_in_dialog": True,
        "dialogIn": "Welcome! Apples cost 3 coins.",
        "dialogOptions": {"1": "I'll buy one", "2": "Goodbye"},
    }
    result = p.say(1)
    assert (
        result.success
        and result.message == "We are talking.  You said: I'll buy one\n\nsally said: Here you are."
    )
    assert npc.states == {"sold out"}
    assert p.say(1).message == "We are talking.  You said: Thanks\n\nsally said: Bye!"
    # A node without options ends the dialog: both leave dialog mode and the tree is back at its root.
    assert p.agent.dialog_partner is None and npc.dialog_partner is None
    assert p.observe()["dialog_box"] == {"is_in_dialog": False}
    npc.states.add("member")
    p.do("TALK", npc)
    assert p.observe()["dialog_box"]["dialogOptions"] == {"1": "Any discounts?", "2": "Goodbye"}
    assert [r.action for r in p.history] == ["TALK", "DIALOG", "DIALOG", "TALK"]


def test_invalid_choices_list_the_valid_options_and_other_actions_are_rejected() -> None:
    p = Player(meadow(), 5, 5, facing="south")
    npc = _shopkeeper(p.world, 5, 6)
    p.do("TALK", npc)
    for choice in (0, 3, "x", None):
        result = p.say(choice)  # type: ignore[arg-type]
        assert not result.success
        assert (
            result.message
            == "`chosen_dialog_option_int` must be one of [1, 2] ({1: \"I'll buy one\", 2: 'Goodbye'})."
        )
    assert p.say("2").success  # strings that parse as integers are accepted
    p.do("TALK", npc)
    before = p.agent.location()
    for packet in (
        {"action": "MOVE_DIRECTION", "arg1": "north"},
        {"action": "TELEPORT_TO_LOCATION", "arg1": "x"},
    ):
        result = p.executor.execute(packet)
        assert not result.success and result.message.startswith("Missing `chosen_dialog_option_int` key.")
    strict = ActionExecutor(p.agent, strict=True)
    result = strict.execute({"chosen_dialog_option_int": 2, "action": "WAIT"})
    assert "Unexpected key(s) ['action']" in result.message
    assert p.agent.location() == before and p.agent.dialog_partner is npc
    assert [r.action for r in p.history] == ["TALK", "DIALOG", "TALK"]  # rejected input is not recorded
    lenient = p.executor.execute({"chosen_dialog_option_int": 2, "thought": "leave", "action": "WAIT"})
    assert lenient.success and "You said: Goodbye" in lenient.message  # the default ignores extra keys


def test_option_callbacks_run_and_a_talk_without_answers_ends_at_once() -> None:
    p = Player(meadow(), 5, 5, facing="south")
    npc = NPC(p.world, "guard", 5, 6)
    calls: list[str] = []
    tree = npc.dialog_tree
    assert tree is not None
    tree.add_node("root", "Halt!")
    p_result = p.do("TALK", npc)  # nothing to answer: no dialog mode to get stuck in
    assert p_result.success and p_result.message.endswith("guard said: Halt!")
    assert p.agent.dialog_partner is None and p.observe()["dialog_box"] == {"is_in_dialog": False}
    tree.add_option("root", "Let me pass", "open", callback=lambda: calls.append("open"))
    tree.add_node("open", "Go ahead.")
    p.do("TALK", npc)
    p.say(1)
    assert calls == ["open"] and p.agent.dialog_partner is None


def test_npcs_in_dialog_pause_their_autopilot() -> None:
    p = Player(meadow(), 5, 5, facing="south")
    npc = _shopkeeper(p.world, 5, 6)
    npc.enqueue("goto", priority=1, x=5, y=10)
    p.do("TALK", npc)
    for _ in range(5):
        p.world.tick()
    assert npc.location() == (5, 6)
    p.say(2)
    for _ in range(6):
        p.world.tick()
    assert npc.location() == (5, 10)


# ---- path finding and goto ------------------------------------------------------------------
def test_path_finding_goes_around_walls() -> None:
    world = meadow(w=20, h=20)
    for y in range(0, 9):
        place(world, "wall", 5, y)
    path = find_path(world, (2, 2), (8, 2))
    assert path is not None and path[-1] == (8, 2)
    assert len(path) == 6 + 2 * 7  # down to y=9, across, back up
    assert all(world.is_passable(x, y) for x, y in path)
    steps = [(2, 2), *path]
    assert all(abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1 for a, b in zip(steps, steps[1:], strict=False))


def _house(world: World, key_id: int = 0) -> tuple[int, int]:
    """A 5x5 building at (10, 10); returns its door tile (12, 14)."""
    door = layout.building(world, 10, 10, 5, 5, "House", key_id=key_id)
    assert door is not None
    return door.location()


@pytest.mark.parametrize("goal", [(12, 13), (11, 11)])
def test_npc_walks_through_an_unlocked_door_and_closes_it_behind(goal: tuple[int, int]) -> None:
    world = meadow(w=25, h=25)
    door_xy = _house(world)
    (door,) = [o for o in world.top_level_at(*door_xy) if o.type == "door"]
    npc = NPC(world, "bob", 12, 20, facing="north")
    npc.enqueue("goto", priority=1, x=goal[0], y=goal[1])
    opened = False
    for _ in range(40):
        world.tick()
        opened = opened or door.is_open
        if not npc.queue:
            break
    assert npc.location() == goal and opened
    assert not door.is_open  # closed behind it, even when the goal is just inside


def test_npc_goto_turns_before_it_steps() -> None:
    world = meadow()
    npc = NPC(world, "bob", 5, 5, facing="north")
    npc.enqueue("goto", x=7, y=5)
    world.tick()
    assert (npc.location(), npc.facing) == ((5, 5), "east")
    world.tick()
    world.tick()
    assert npc.location() == (7, 5) and not npc.queue


def test_locked_doors_block_npcs_who_give_up() -> None:
    world = meadow(w=25, h=25)
    _house(world, key_id=4)
    assert find_path(world, (12, 20), (12, 12)) is None
    npc = NPC(world, "bob", 12, 20)
    npc.enqueue("goto", priority=5, x=12, y=12, give_up=3)
    assert npc.is_busy()
    for _ in range(5):
        world.tick()
    assert not npc.queue and not npc.is_busy() and npc.location() == (12, 20)


def test_goto_an_impassable_tile_ends_beside_it_facing_it() -> None:
    world = meadow()
    place(world, "table", 5, 2)
    npc = NPC(world, "bob", 5, 8, facing="north")
    npc.enqueue("goto", priority=5, x=5, y=2)
    for _ in range(12):
        world.tick()
    assert npc.location() == (5, 3) and npc.facing == "north"
    assert not npc.queue and not npc.is_busy()


# ---- wandering and determinism ----------------------------------------------------------------
def _wander_trace(seed: int, ticks: int = 200, **enqueue: int) -> list[tuple[int, int]]:
    world = World(seed)
    npc = NPC(world, "bob", 16, 16)
    npc.enqueue("wander", x=16, y=16, **enqueue)
    trace = []
    for _ in range(ticks):
        world.tick()
        trace.append(npc.location())
    return trace


def test_wandering_stays_near_its_point_and_is_not_busy() -> None:
    trace = _wander_trace(3, 400)
    assert len(set(trace)) > 10
    assert all((x - 16) ** 2 + (y - 16) ** 2 <= 25 for x, y in trace)
    world = World(0)
    npc = NPC(world, "bob", 16, 16)
    npc.enqueue("wander", x=16, y=16)
    for _ in range(20):
        world.tick()
        assert not npc.is_busy()


def test_a_wanderer_far_from_its_point_walks_back() -> None:
    world = World(1)
    npc = NPC(world, "bob", 2, 2)
    npc.enqueue("wander", x=20, y=20)
    for _ in range(80):
        world.tick()
    assert (npc.x - 20) ** 2 + (npc.y - 20) ** 2 <= 25


def test_npc_movement_is_deterministic_per_seed() -> None:
    assert _wander_trace(5) == _wander_trace(5)
    assert _wander_trace(5) != _wander_trace(6)
    # Same trace whether wandering is queued at the documented priority 0 or the default.
    assert _wander_trace(5, priority=0) == _wander_trace(5)


def test_nearby_agents_show_recent_history() -> None:
    p = Player(meadow(), 5, 5, facing="south")
    other = Player(p.world, 6, 6, name="bob")
    other.do("ROTATE_DIRECTION", "west")
    for _ in range(3):
        p.world.tick()
    other.do("WAIT")
    agents = build_observation(p.agent, [], "")["nearbyAgents"]["list_of_agents"]
    assert list(agents) == [f"bob uuid {other.agent.uuid}"]
    (entry,) = agents[f"bob uuid {other.agent.uuid}"]  # only actions of the last 3 steps
    assert entry == {"actionType": "WAIT", "success": True, "message": "I waited.", "step": 3}


def test_draw_quarter_is_the_generator_s_integers_0_4() -> None:
    """`draw_quarter` draws through the bit generator's ctypes interface (session 11): the same
    values as `rng.integers(0, 4)` and the same state afterwards, interleaved with the other draws
    of the NPC stream (`random()`, the poison clock's `integers(-20, -1)`, batches), and a world
    with wandering NPCs still pickles and copies (tests/test_env_vector.py plays the clones)."""
    import copy
    import pickle

    from discoverylab.world.npc import draw_quarter, draw_unit

    ours, plain = World(3).rng_npc, World(3).rng_npc
    for i in range(30000):
        assert draw_quarter(ours) == int(plain.integers(0, 4))
        if i % 2 == 0:
            assert ours.random() == plain.random()
        if i % 3 == 0:  # `draw_unit` (session 12), between two 32-bit halves of a word too
            assert draw_unit(ours) == plain.random()
        if i % 11 == 0:
            assert int(ours.integers(-20, -1)) == int(plain.integers(-20, -1))
        if i % 997 == 0:
            assert ours.random(5).tolist() == plain.random(5).tolist()
    assert ours.bit_generator.state == plain.bit_generator.state
    world = World(4)
    npc = NPC(world, "bob", 5, 5)
    npc.enqueue("wander", x=5, y=5)
    for _ in range(20):
        world.tick()
    clone, twin = pickle.loads(pickle.dumps(world)), copy.deepcopy(world)
    draws = [draw_quarter(w.rng_npc) for w in (world, clone, twin) for _ in range(3)]
    assert draws[:3] == draws[3:6] == draws[6:]


class _PlainRunnerNPC(NPC):
    """Overrides the two runners `NPC.tick` writes out, with their bodies before sessions 11-12
    (`rng.random()`, `rng.integers(0, 4)`): its ticks take the generic path (`run(self, **args)`,
    `heappush`/`heappop`), the reference for the inline one."""

    def _run_wander(self, x: int, y: int, probability: float = 0.5) -> bool:
        if len(self.queue) > 1:
            return False
        dx, dy = self.x - x, self.y - y
        if dx * dx + dy * dy > 16:
            self.enqueue("goto", priority=1, x=x, y=y, give_up=40)
            return False
        rng = self.world.rng_npc
        if rng.random() < probability:
            self.enqueue("move", priority=1, direction=tuple(DIRECTIONS)[int(rng.integers(0, 4))])
        return False

    def _run_move(self, direction: str) -> bool:
        return NPC._run_move(self, direction)


def _wander_states(cls: type[NPC], seed: int, ticks: int) -> list[tuple[object, ...]]:
    """Per tick, every wanderer's place, facing and queue, and the NPC stream's next draw."""
    world = World(seed)
    npcs = [cls(world, f"bob{i}", 4 + 6 * i, 6 + 3 * i) for i in range(4)]
    for i, npc in enumerate(npcs):
        npc.enqueue("wander", priority=0, x=4 + 6 * i + (12 if i == 3 else 0), y=6 + 3 * i, probability=0.3 + 0.2 * i)
    npcs[2].enqueue("wait_here", priority=0)  # not a lone wander: the generic path, every tick
    npcs[2].clear_queue("wait_here")
    states: list[tuple[object, ...]] = []
    for _ in range(ticks):
        world.tick()
        queues = tuple(tuple((t.sort_key, t.kind, tuple(sorted(t.args.items()))) for t in n.queue) for n in npcs)
        states.append((tuple((n.x, n.y, n.facing) for n in npcs), queues, world.rng_npc.bit_generator.state["state"]["state"]))
    return states


def test_the_inline_wander_and_move_equal_the_generic_runners() -> None:
    """`NPC.tick` runs a lone wander and a one-tile move inline (session 11, round 2): the same
    draws in the same order, the same queue (a move ahead of the wander, as `heappush` puts
    it), the same steps as the runners called through the generic path. One wanderer starts
    far from its point (a goto, then back to wandering)."""
    for seed in (0, 7):
        assert _wander_states(NPC, seed, 300) == _wander_states(_PlainRunnerNPC, seed, 300)
