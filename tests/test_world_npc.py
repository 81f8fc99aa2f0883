"""Dialog mode (spec §4.3) and NPC autopilot (spec §7): path finding, doors, wandering, determinism."""

from __future__ import annotations

from collections import Counter
from typing import Any

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
    """The characters' draws (`draw_quarter`, `draw_unit`, off `NpcDraws`' block of raw words
    drawn ahead, session 26) give the values of `rng.integers(0, 4)` and `rng.random()`, and
    `world.rng_npc` (the other readers': `random()`, the poison clock's `integers(-20, -1)`,
    batches) continues where they left it, `next_uint32`'s kept half included, with the same
    state; a world with wandering NPCs still pickles and copies mid-block (tests/test_env_vector.py
    plays the clones)."""
    import copy
    import pickle

    from discoverylab.world.npc import draw_quarter, draw_unit

    world, plain = World(3), World(3).rng_npc
    ours = world.npc_draws
    for i in range(30000):
        assert draw_quarter(ours) == int(plain.integers(0, 4))
        if i % 2 == 0:
            assert draw_unit(ours) == plain.random()
        if i % 3 == 0:  # between two 32-bit halves of a word too
            assert draw_unit(ours) == plain.random()
        if i % 11 == 0:
            assert int(world.rng_npc.integers(-20, -1)) == int(plain.integers(-20, -1))
        if i % 97 == 0:
            assert world.rng_npc.random() == plain.random()
        if i % 997 == 0:
            assert world.rng_npc.random(5).tolist() == plain.random(5).tolist()
            assert world.rng_npc.bit_generator.state == plain.bit_generator.state
    assert world.rng_npc.bit_generator.state == plain.bit_generator.state
    world = World(4)
    npc = NPC(world, "bob", 5, 5)
    npc.enqueue("wander", x=5, y=5)
    for _ in range(20):
        world.tick()
    assert 0 < world.npc_draws.used < len(world.npc_draws.words)  # (mid-block)
    clone, twin = pickle.loads(pickle.dumps(world)), copy.deepcopy(world)
    draws = [draw_quarter(w.npc_draws) for w in (world, clone, twin) for _ in range(3)]
    assert draws[:3] == draws[3:6] == draws[6:]
    states = [w.rng_npc.bit_generator.state for w in (world, clone, twin)]
    assert states[0] == states[1] == states[2]


def test_npc_draws_hand_the_generator_over_exactly() -> None:
    """`World.rng_npc` settles the block at any point: after a kept half (`next_uint32`), after
    its consumption, between blocks, with nothing drawn; a generator handed out and drawn from
    (leaving a half of its own) is adopted by the next block; a stream set anew is read from."""
    import numpy as np

    from discoverylab.world.npc import draw_quarter, draw_unit

    for pattern in ("q", "qq", "u", "qu", "uq", "qqq", "", "q" * 130, "u" * 64, "u" * 65):
        world, plain = World(7), World(7).rng_npc
        for _ in range(3):
            for kind in pattern:
                if kind == "q":
                    assert draw_quarter(world.npc_draws) == int(plain.integers(0, 4))
                else:
                    assert draw_unit(world.npc_draws) == plain.random()
            assert world.rng_npc.bit_generator.state == plain.bit_generator.state
            assert int(world.rng_npc.integers(0, 7)) == int(plain.integers(0, 7))  # leaves a half
    world, plain = World(9), np.random.default_rng(5)
    world.rng_npc = np.random.default_rng(5)
    assert [draw_quarter(world.npc_draws) for _ in range(5)] == [int(plain.integers(0, 4)) for _ in range(5)]
    assert world.rng_npc.bit_generator.state == plain.bit_generator.state


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


def _wander_laws(cls: type[NPC], probability: float, seeds: range, ticks: int) -> tuple[Counter[int], Counter[str], Counter[int]]:
    """Pooled over seeds: the ticks between a wanderer's successive step attempts (each goes
    through `walk_if_free`), the directions tried, and the squared distances from its point
    every 20th tick (where it stands a few ticks apart is one sample, not several). Three
    wanderers per world, far apart; one starts outside its radius (a goto first)."""
    import discoverylab.world.npc as npc_module

    gaps: Counter[int] = Counter()
    directions: Counter[str] = Counter()
    offsets: Counter[int] = Counter()
    plain = npc_module.walk_if_free
    last: dict[int, int] = {}  # per wanderer, the tick of its last attempt

    def attempt(world: World, who: NPC, x: int, y: int) -> None:
        if id(who) in last:
            gaps[world.step - last[id(who)]] += 1
        last[id(who)] = world.step
        directions[who.facing] += 1
        plain(world, who, x, y)

    for seed in seeds:
        world = World(seed)
        npcs = [cls(world, f"bob{i}", 5 + 11 * i, 8 + 3 * (i == 2)) for i in range(3)]
        homes = [(5 + 11 * i, 8) for i in range(3)]
        last.clear()
        npc_module.walk_if_free = attempt  # type: ignore[assignment]
        try:
            for npc, (hx, hy) in zip(npcs, homes, strict=True):
                npc.enqueue("wander", priority=0, x=hx, y=hy, probability=probability)
            for tick in range(ticks):
                world.tick()
                if tick % 20 == 19:
                    for npc, (hx, hy) in zip(npcs, homes, strict=True):
                        offsets[(npc.x - hx) ** 2 + (npc.y - hy) ** 2] += 1
        finally:
            npc_module.walk_if_free = plain
    return gaps, directions, offsets


def _chi_square(a: Counter[Any], b: Counter[Any], least: int = 40) -> tuple[float, int]:
    """Two-sample chi-square statistic of two histograms (bins with under `least` counts in
    both pooled into one) and its degrees of freedom."""
    na, nb = sum(a.values()), sum(b.values())
    bins: list[tuple[int, int]] = []
    rest = [0, 0]
    for key in sorted(set(a) | set(b), key=repr):
        if a[key] + b[key] >= least:
            bins.append((a[key], b[key]))
        else:
            rest[0] += a[key]
            rest[1] += b[key]
    if sum(rest):
        bins.append((rest[0], rest[1]))
    statistic = 0.0
    for x, y in bins:
        ex, ey = na * (x + y) / (na + nb), nb * (x + y) / (na + nb)
        statistic += (x - ex) ** 2 / ex + (y - ey) ** 2 / ey
    return statistic, len(bins) - 1


@pytest.mark.parametrize("probability", [0.25, 0.5])
def test_the_napping_wander_walks_as_the_tick_by_tick_runners(probability: float) -> None:
    """`NPC.tick` draws a lone wander's ticks of "stay" all at once and naps through them
    (session 23; `draw_wait`): the stream of draws changed, the walk's law must not. Against
    the runners' own tick-by-tick draws (the pre-session-11 bodies), pooled over seeds: the same
    law of ticks between step attempts (a geometric wait, a deciding tick, a step tick), of
    directions and of where the wanderers stand, each by a two-sample chi-square test far
    below its 0.1% critical value (the seeds are fixed: a deterministic check). An off-by-one
    nap moves every gap by a tick and fails it at once; so does a skewed direction."""
    # 0.1% points of the chi-square law for 1-40 degrees of freedom, roughly: df + 3.4 * sqrt(2 df) + 6
    ours = _wander_laws(NPC, probability, range(40), 600)
    theirs = _wander_laws(_PlainRunnerNPC, probability, range(100, 140), 600)
    for mine, other in zip(ours, theirs, strict=True):
        statistic, df = _chi_square(mine, other)
        assert df >= 3
        assert statistic < df + 3.4 * (2 * df) ** 0.5 + 6, (statistic, df, mine, other)
    gaps = ours[0]
    mean_gap = sum(g * n for g, n in gaps.items()) / sum(gaps.values())
    assert abs(mean_gap - (1 / probability + 1)) < 0.35 * (1 / probability + 1)  # goto detours aside
    assert min(gaps) == 2  # never two attempts on adjacent ticks: a deciding tick comes between


def test_draw_wait_is_geometric() -> None:
    """`draw_wait`: P(wait >= k) = (1 - p)**k, one draw per wait; certain and impossible steps."""
    from discoverylab.world.npc import draw_wait

    world = World(2)
    draws = world.npc_draws
    for probability in (0.1, 0.25, 0.5, 0.9):
        waits = [draw_wait(draws, probability) for _ in range(20000)]
        for k in range(4):
            share = sum(w >= k for w in waits) / len(waits)
            assert abs(share - (1 - probability) ** k) < 0.015, (probability, k, share)
    state = world.rng_npc.bit_generator.state
    assert draw_wait(draws, 1.0) == 0 and draw_wait(draws, 0.0) > 10**12
    assert world.rng_npc.bit_generator.state == state  # neither draws


def _napping(seed: int = 0) -> tuple[World, NPC]:
    """A lone wanderer ticked until it naps through drawn ticks of "stay" (two or more left)."""
    world = World(seed)
    npc = NPC(world, "bob", 16, 16, facing="south")
    npc.enqueue("wander", priority=0, x=16, y=16, probability=0.1)
    for _ in range(200):
        world.tick()
        if npc._nap > 2:
            return world, npc
    raise AssertionError("never napped")


def test_a_napping_wanderer_takes_a_new_task_at_once() -> None:
    """A task queued while a wanderer naps (a warning sends it home) runs on the next tick, as
    it did when every tick drew: the nap is dropped, the stream is not read while it lasts."""
    world, npc = _napping()
    state = world.rng_npc.bit_generator.state
    world.tick()
    assert world.rng_npc.bit_generator.state == state and npc.location() == (16, 16)
    npc.enqueue("goto", priority=100, x=16, y=10)  # (the wander stays queued below it)
    world.tick()
    assert npc.facing == "north"
    world.tick()
    assert npc.location() == (16, 15) and npc.is_busy()
    world, npc = _napping(3)
    where = npc.location()
    npc.clear_queue()
    for _ in range(npc._nap + 3):
        world.tick()
    assert not npc.queue and npc._nap == 0 and npc.location() == where


def test_a_wanderer_in_a_dialog_when_its_step_is_due_does_not_step() -> None:
    """In a dialog a character does not act: a step that falls due then is dropped, and the
    wander draws afresh once the dialog ends."""
    world, npc = _napping(1)
    npc.dialog_partner = Player(world, 16, 17, name="ann").agent  # type: ignore[assignment]
    for _ in range(npc._nap + 3):
        world.tick()
    assert npc.location() == (16, 16) and npc._nap == 0
    npc.dialog_partner = None
    for _ in range(300):
        world.tick()
    assert npc.location() != (16, 16) or npc.facing != "south"


def test_a_wanderer_carried_off_during_its_nap_walks_back() -> None:
    """Moved far from its point by someone else while it naps, a wanderer heads back when its
    step falls due instead of stepping at random."""
    world, npc = _napping(2)
    world.walk(npc, 25, 16)
    for _ in range(npc._nap + 1):
        world.tick()
    assert any(task.kind == "goto" for task in npc.queue)
    for _ in range(60):
        world.tick()
    assert (npc.x - 16) ** 2 + (npc.y - 16) ** 2 <= 25
