"""Tickers asleep until their tile changes (`World.pause_tick_until_touched`, world/tick_pause.py):
covered soil leaves the tick loop, and every tick must run as if it had stayed in it."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from discoverylab.rl import make_rl_env
from discoverylab.world.catalog import spawn
from discoverylab.world.objects import Container, WorldObject
from discoverylab.world.things import SoilTile
from discoverylab.world.tick_pause import KEY
from discoverylab.world.world import World
from world_kit import moves_first


class _Hand(WorldObject):
    """A ticker running a script: per tick, the moves listed for that step (by the world's
    clock), and a note of every soil's lid and dirt as it finds them (mid-loop state)."""

    needs_tick = True

    def __init__(self, world: World, script: dict[int, list[Callable[[], None]]], log: list[object]) -> None:
        super().__init__(world, "hand", "hand")
        self.script, self.log = script, log

    def tick(self) -> None:
        for move in self.script.get(self.world.step, []):
            move()
        soils = [o for o in self.world.objects.values() if isinstance(o, SoilTile)]
        self.log.append((self.world.step, self.uuid, [(s.is_open, len(s.contents)) for s in soils]))


def _soil(world: World, x: int, y: int) -> SoilTile:
    tile = SoilTile(world, "soil", "soil", [])
    tile.add(spawn(world, "dirt"))
    world.place(tile, x, y)
    return tile


def _play(pausing: bool) -> list[object]:
    """Soils and two hands interleaved in the tick order; the hands take dirt out of soils that
    rank before and after them, put it back, drop things on holes; one soil changes between ticks."""
    world = World(3, 12)
    if not pausing:
        world.pause_tick_until_touched = lambda obj: None  # type: ignore[method-assign]
    log: list[object] = []
    script: dict[int, list[Callable[[], None]]] = {}
    first = _soil(world, 10, 1)  # ranks first: taken from between ticks (as an action would)
    _Hand(world, script, log)  # ranks after `first`, before the soils below
    soils = [_soil(world, 1 + i, 2) for i in range(3)]
    late = _Hand(world, {}, log)
    soils += [_soil(world, 1 + i, 5) for i in range(3)]
    bag = Container(world, "bag", "bag")
    world.place(bag, 9, 9)
    coin = spawn(world, "coin")
    world.place(coin, 8, 8)

    def take_dirt(soil: SoilTile) -> Callable[[], None]:
        return lambda: bag.add(next(o for o in soil.contents if o.type == "dirt"))

    def give_dirt(soil: SoilTile) -> Callable[[], None]:
        return lambda: soil.add(next(o for o in bag.contents if o.type == "dirt"))

    script.update({
        3: [take_dirt(soils[1])],  # ranks after the first hand: its hole opens in this very tick
        6: [give_dirt(soils[1])],
        9: [take_dirt(soils[4]), lambda: world.place(coin, soils[4].x, soils[4].y)],  # after `late` too
        12: [give_dirt(soils[4]), take_dirt(soils[0])],
        15: [lambda: world.place(coin, soils[2].x, soils[2].y)],  # onto covered soil: nothing to swallow
        16: [give_dirt(soils[0]), lambda: world.place(spawn(world, "coin"), soils[0].x, soils[0].y)],
    })  # fmt: skip
    late.script = {10: [take_dirt(soils[2])], 11: [give_dirt(soils[2])]}  # a soil ranked before it
    soils.append(first)
    between = {18: take_dirt(first), 20: give_dirt(first)}
    states = []
    for _ in range(24):
        if world.step in between:
            between[world.step]()
        world.tick()
        states.append([(s.is_open, sorted(o.uuid for o in s.contents), s.x, s.y) for s in soils])
        states.append((coin.parent is not None and coin.parent.uuid, coin.location()))
    paused = world.caches.get(KEY)
    return [log, states, pausing == (paused is not None and bool(paused.paused))]  # type: ignore[attr-defined]


def test_paused_soil_ticks_as_if_it_never_slept() -> None:
    """Covered soil sleeps (`SoilTile.tick`), yet every tick leaves the same world and every
    ticker finds the same soil mid-loop as without the pause: a soil ranked after the hand
    that took its dirt opens in the same tick; one ranked before it, the next tick."""
    assert _play(True) == _play(False)


@pytest.mark.parametrize("task", ["LostInTranslation", "Tutorial", "PlantNutrients", "NavigationHouseTest",
                                  "SearchTest", "ArchaeologyDating"])  # fmt: skip
def test_rollouts_with_sleeping_soil_equal_the_plain_loop(task: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Random masked rollouts (many USE actions: shovels on soil) give the same observations,
    rewards and scorecards with covered soil asleep as with every soil ticking; soil did sleep."""

    def play() -> tuple[list[bytes], int]:
        env = make_rl_env(task, "normal", max_steps=10**9)
        obs, info = env.reset(seed=5)
        rng = np.random.default_rng(5)
        out = []
        for i in range(250):
            obs, reward, term, trunc, info = env.step(moves_first(rng, info["action_mask"], i))
            card = env.unwrapped.scenario.scorecard
            out.append(b"".join(v.tobytes() for v in obs.values()) + repr((reward, card.score, [(i.score, i.completed) for i in card.items])).encode())
            if term or trunc:
                obs, info = env.reset(seed=100 + i)
        pause = env.unwrapped.scenario.world.caches.get(KEY)
        return out, len(pause.paused) if pause is not None else 0

    slept, asleep = play()
    monkeypatch.setattr(World, "pause_tick_until_touched", lambda self, obj: None)
    plain, none = play()
    assert slept == plain
    assert asleep > 0 and none == 0


@pytest.mark.parametrize("difficulty", ["normal", "challenge"])
def test_plant_nutrients_oracle_with_sleeping_seeds_equals_the_plain_loop(difficulty: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seeds asleep in soil with a hole or levels their rule rejects (`NutrientSeed.tick`) wake
    when a controller imprints their field (`_imprint` reports the tiles) or the soil changes:
    the oracle (imprinting fields, burying seeds, growing mushrooms) plays the same episodes,
    step for step, as with every seed ticking."""
    from discoverylab.bench.episode import run_episode

    def play() -> list[object]:
        out: list[object] = []
        for seed in (1, 2):
            _, log = run_episode("PlantNutrients", difficulty, seed, "oracle")
            out += [*log[:-1], log[-1]["scorecard"]]
        return out

    slept = play()
    monkeypatch.setattr(World, "pause_tick_until_touched", lambda self, obj: None)
    assert play() == slept


def _bury_then_imprint(pausing: bool) -> list[object]:
    """A seed buried in an unset test field (levels 0: its rule rejects them) sleeps; the field's
    controller then imprints the rule's level: the seed must wake and grow as in the plain loop."""
    from discoverylab.env import DiscoveryWorldEnv
    from discoverylab.scenarios.plant_nutrients.things import NutrientSeed, _Select

    env = DiscoveryWorldEnv("PlantNutrients", "normal")
    env.reset(seed=4)
    scenario, world = env.scenario, env.world
    if not pausing:
        world.pause_tick_until_touched = lambda obj: None  # type: ignore[method-assign]
    soil, controller = scenario.fields[0][1], scenario.controllers[0]
    dirt = next(o for o in soil.contents if o.type == "dirt")
    seed = NutrientSeed(world, scenario.rule)
    world.place(dirt, soil.x, soil.y + 2)  # dug out
    soil.add(seed)
    soil.add(dirt)  # and covered again
    states: list[object] = []
    for step in range(40):
        if step == 12:
            _Select(controller, scenario.rule.n1, scenario.rule.v1)()
            controller._imprint()
        world.tick()
        grown = [o.props.get("locationGrown") for o in world.objects.values() if o.type == "mushroom"]
        states.append((seed.alive, seed.timer, seed.parent is soil, sorted(map(str, grown))))
    return states


def test_a_sleeping_seed_wakes_when_its_field_is_imprinted() -> None:
    """`SoilController._imprint` reports its field's tiles (levels are not shown, so nothing
    else would): the seed buried before it grows as without sleep."""
    slept = _bury_then_imprint(True)
    assert slept == _bury_then_imprint(False)
    assert slept[-1][0] is False  # it grew


def _bags(pausing: bool) -> list[object]:
    """Two fertilizer bags (asleep when full), one ranked before a hand and one after it, whose
    pellets are taken between ticks and by hands mid-loop; a stove switched on and off beside."""
    world = World(5, 10)
    if not pausing:
        world.pause_tick_until_touched = lambda obj: None  # type: ignore[method-assign]
    log: list[object] = []
    script: dict[int, list[Callable[[], None]]] = {}
    first = spawn(world, "fertilizer_bag")  # ranks first: emptied between ticks, it refills in the next loop
    world.place(first, 6, 6)
    stove = spawn(world, "stove")
    world.place(stove, 2, 2)
    pot = spawn(world, "pot")
    stove.add(pot)
    _Hand(world, script, log)
    second = spawn(world, "fertilizer_bag")  # after the first hand: emptied by it, it refills in that loop
    world.place(second, 6, 7)
    late = _Hand(world, {}, log)  # after both bags: they refill next tick
    box = Container(world, "box", "box")
    world.place(box, 8, 8)

    def switch(on: bool) -> Callable[[], None]:
        def flip() -> None:
            stove.activated = on
            stove.text_changed()  # as the ACTIVATE action does

        return flip

    def take(bag: WorldObject, count: int) -> Callable[[], None]:
        return lambda: [box.add(p) for p in bag.contents[:count]]  # type: ignore[func-returns-value]

    between = {4: switch(True), 9: switch(False), 12: take(first, 1), 13: take(second, 3)}
    script.update({6: [take(second, 2), take(first, 1)], 14: [switch(True)]})
    late.script = {16: [take(first, 3), take(second, 1)], 18: [switch(False)]}
    states: list[object] = []
    for _ in range(22):
        if world.step in between:
            between[world.step]()
        world.tick()
        states.append((stove.activated, pot.temperature_c, len(first.contents), len(second.contents), len(box.contents)))
    return [states, log]


def test_full_bags_sleep_as_if_ticking() -> None:
    """A full fertilizer bag sleeps (world/things.py): taking pellets (between ticks, mid-loop
    before and after it ticks) refills it on the same ticks as in the plain loop, beside a stove
    switched on and off (which does not sleep: tests switch it without reporting its tile)."""
    slept = _bags(True)
    assert slept == _bags(False)
    assert slept[0][-1][1] != 20.0  # the pot was heated
