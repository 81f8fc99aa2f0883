"""Tutorial: the house layout, the elder's rules (cold meals come back, a warm one earns the
key) and the scorecard. The oracle test (test_discovery_tasks.py) shows it is solvable."""

from __future__ import annotations

import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.scenarios.village import build_village
from discoverylab.world.objects import WorldObject
from env_driver import EnvDriver
from world_kit import moves_first

ACCEPT = "Of course. What can I do?"
REFUSE = "No. I need to leave."
HOWS_IT = "How's your meal?"


class Driver(EnvDriver):
    def __init__(self, seed: int = 0) -> None:
        super().__init__("Tutorial", "normal", seed, reveal=True, max_steps=200)
        self.elder = self.scenario.elder

    def talk(self, choice: str) -> str:
        assert self.do("TELEPORT_TO_OBJECT", self.elder).startswith("I teleported")
        assert self.do("TALK", self.elder).startswith("We are talking")
        return self.choose(choice)

    def obj_at(self, x: int, y: int, type_: str) -> WorldObject:
        (obj,) = [o for o in self.world.objects_at(x, y) if o.type == type_]
        return obj

    def fetch_pot(self) -> WorldObject:
        fridge = self.obj_at(19, 21, "fridge")
        (pot,) = fridge.contents
        self.do("TELEPORT_TO_OBJECT", fridge)
        assert self.do("OPEN", fridge) == "I opened the fridge."
        assert self.do("PICKUP", pot) == "I picked up the pot."
        return pot

    def score(self, name: str) -> int:
        (item,) = [i for i in self.scenario.scorecard.to_dict()["scoreCard"] if i["name"] == name]
        return int(item["score"])


def test_house_layout_and_start() -> None:
    d = Driver()
    player = d.scenario.player
    assert (player.x, player.y) == (25, 22)
    pot = d.obj_at(19, 21, "fridge").contents[0]
    assert pot.type == "pot" and [o.type for o in pot.contents] == ["mushroom", "mushroom"]
    assert d.obj_at(21, 21, "stove") and d.obj_at(25, 21, "bed")
    front = d.obj_at(23, 26, "door")
    assert front.requires_key == 42 and not front.is_open
    assert (d.elder.x, d.elder.y) == (19, 24)
    assert [(o.type, o.key_id) for o in d.elder.contents] == [("key", 42)]
    assert set(d.world.teleports) == {"Starting Location", "Near Elder", "Kitchen", "Front Door"}
    card = d.scenario.scorecard.to_dict()
    assert card["maxScore"] == 3 and not card["criticalQuestions"]


def test_refusing_scores_nothing_and_accepting_scores_talk() -> None:
    d = Driver()
    assert "complete the tutorial" in d.talk(REFUSE)
    assert d.score("Talk to elder") == 0
    assert "meal in the fridge" in d.talk(ACCEPT)
    assert d.score("Talk to elder") == 1


def test_cold_meal_comes_back_and_no_key() -> None:
    d = Driver()
    d.talk(ACCEPT)
    pot = d.fetch_pot()
    assert d.do("TELEPORT_TO_OBJECT", d.elder).startswith("I teleported")
    assert d.do("PUT", pot, d.elder) == "I gave the pot to Elder."
    assert "not a pot of cooked mushrooms" in d.talk(HOWS_IT)
    assert pot.location() == (19, 24) and pot.parent is not d.elder
    assert d.elder.contents and d.elder.contents[0].type == "key"
    assert d.score("Collect key") == 0
    # The front door stays locked without the key.
    d.do("TELEPORT_TO_LOCATION", "Front Door")
    d.do("ROTATE_DIRECTION", "south")
    assert "requires a key" in d.do("OPEN", d.obj_at(23, 26, "door"))
    assert not d.scenario.scorecard.completed


def test_teleporting_past_the_locked_door_does_not_count_as_leaving() -> None:
    d = Driver()
    outside = next(o for o in d.world.objects_at(23, 27) if o.type == "path")
    player = d.scenario.player
    # Teleporting never crosses a locked door: the agent stays in the room...
    assert not d.do("TELEPORT_TO_OBJECT", outside).startswith("I teleported")
    assert 19 <= player.x <= 26 and 21 <= player.y <= 25
    # ...and even an agent put outside by other means has not left through the door.
    player.world.place(player, 23, 27)
    d.do("WAIT")
    assert d.score("Exit the room") == 0 and not d.scenario.scorecard.completed


def test_warm_meal_earns_the_key_and_leaving_completes() -> None:
    d = Driver()
    d.talk(ACCEPT)
    pot = d.fetch_pot()
    stove = d.obj_at(21, 21, "stove")
    d.do("TELEPORT_TO_OBJECT", stove)
    d.do("OPEN", stove)
    assert d.do("PUT", pot, stove) == "I put the pot into the stove."
    d.do("ACTIVATE", stove)
    for _ in range(6):
        d.do("WAIT")
    assert all(m.cooked and m.temperature_c >= 50 for m in pot.contents)
    d.do("PICKUP", pot)
    d.do("TELEPORT_TO_OBJECT", d.elder)
    d.do("PUT", pot, d.elder)
    assert "Your completion code is 3941." in d.talk(HOWS_IT)
    key = next(o for o in d.world.objects_at(19, 24) if o.type == "key")
    assert pot.parent is d.elder
    assert d.do("PICKUP", key) == "I picked up the key."
    assert d.score("Collect key") == 1
    d.do("TELEPORT_TO_LOCATION", "Front Door")
    d.do("ROTATE_DIRECTION", "south")
    assert d.do("OPEN", d.obj_at(23, 26, "door")) == "I opened the door."
    d.do("MOVE_DIRECTION", "south")
    card = d.scenario.scorecard
    assert card.completed and card.success
    assert [i["score"] for i in card.to_dict()["scoreCard"]] == [1, 1, 1]


def test_village_keeps_its_paint_shop_by_default() -> None:
    """The Tutorial builds the village without the paint shop; Lost in Translation still has it."""
    d = Driver()
    assert not any(o.name == "paint bucket" or "paint" in o.name for o in d.world.objects.values())
    env = DiscoveryWorldEnv("LostInTranslation", "normal")
    env.reset(seed=0)
    assert env.world is not None
    assert build_village.__defaults__ == (True,)
    assert any("paint" in o.name for o in env.world.objects.values())


def test_the_elder_without_a_meal_skipping_its_state_update_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The elder's states are rebuilt only while it holds more than its key (session 12): the
    oracle's episodes (a meal handed over, handed back cold or accepted warm) give the same logs
    as rebuilding them every tick."""
    from discoverylab.bench.episode import run_episode
    from discoverylab.scenarios.tutorial.scenario import HouseElder

    def logs() -> list[object]:
        out: list[object] = []
        for seed in (0, 1, 2):
            _, log = run_episode("Tutorial", "normal", seed, "oracle")
            out += [*log[:-1], log[-1]["scorecard"]]
        return out

    def plain_states(self: HouseElder) -> None:  # `_update_states` before session 12
        held = [o for top in self.meal() for o in (top, *top.all_contents())]
        self.states.discard("hasMeal")
        self.states.discard("mealWarm")
        if held:
            self.states.add("hasMeal")
        if any(o.cooked and o.temperature_c >= 50 for o in held):
            self.states.add("mealWarm")

    skipping = logs()
    monkeypatch.setattr(HouseElder, "_update_states", plain_states)
    assert logs() == skipping
    assert any("hasMeal" in str(e) or "meal" in str(e) for e in skipping)


def test_the_elder_s_quick_state_update_equals_the_full_one() -> None:
    """The same elder states from the quick path (no meal: the key alone or nothing) as from
    the full rebuild, whatever the elder holds and whichever states it had, over random gifts,
    take-backs, heating and the key coming and going (session 12)."""
    import numpy as np

    from discoverylab.scenarios.tutorial.scenario import HouseElder
    from discoverylab.world.catalog import spawn

    env = DiscoveryWorldEnv("Tutorial", "normal")
    env.reset(seed=0)
    world = env.world
    elder = next(o for o in world.objects.values() if isinstance(o, HouseElder))
    foods = [spawn(world, "mushroom") for _ in range(3)]
    rng = np.random.default_rng(0)
    kinds = set()
    for _ in range(400):
        op = int(rng.integers(5))
        thing = foods[int(rng.integers(3))]
        if op == 0:
            elder.add(thing)
        elif op == 1:
            world.place(thing, 5, 5)
        elif op == 2:
            thing.temperature_c, thing.cooked = float(rng.choice([20.0, 60.0, 120.0])), bool(rng.integers(2))
        elif op == 3:
            world.place(elder.key, 6, 6) if elder.key.parent is elder else elder.add(elder.key)
        start = {s for s in ("hasMeal", "mealWarm", "other") if rng.integers(2)}
        elder.states = set(start)
        elder._update_states()
        quick = set(elder.states)
        elder.states = set(start)
        held = [o for top in elder.meal() for o in (top, *top.all_contents())]
        elder.states.difference_update(("hasMeal", "mealWarm"))
        if held:
            elder.states.add("hasMeal")
        if any(o.cooked and o.temperature_c >= 50 for o in held):
            elder.states.add("mealWarm")
        assert quick == elder.states
        kinds.add((len(elder.contents), frozenset(start), frozenset(quick)))
    assert len(kinds) > 20


def test_the_key_check_skipping_empty_hands_and_a_done_item_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """`Tutorial.update` looks for the key only in hands that hold something and while "collect"
    is not done (session 13): the oracle's episodes and random RL episodes (pick-ups, the key
    taken) score step by step as with the inventory scanned every tick."""
    import numpy as np

    from discoverylab.bench.episode import run_episode
    from discoverylab.rl import make_rl_env
    from discoverylab.scenarios.tutorial.scenario import Tutorial, _inside

    def plain_update(self: Tutorial) -> None:  # before session 13
        if "taskAccepted" in self.elder.states:
            self.talk.set(1)
        if any(o.type == "key" for o in self.player.inventory()):
            self.collect.set(1)
        self.door_opened = self.door_opened or self.front_door.is_open
        if self.door_opened and not _inside(self.player.x, self.player.y):
            self.exit.set(1)
            self.scorecard.finish(True)

    def play() -> list[object]:
        out: list[object] = []
        for seed in (1, 2):
            _, log = run_episode("Tutorial", "normal", seed, "oracle")
            out += [*log[:-1], log[-1]["scorecard"]]
        env = make_rl_env("Tutorial", "normal", max_steps=10**9)
        _, info = env.reset(seed=3)
        rng = np.random.default_rng(3)
        for i in range(400):
            _, reward, term, trunc, info = env.step(moves_first(rng, info["action_mask"], i))
            card = env.unwrapped.scenario.scorecard
            out.append((reward, [(it.score, it.completed) for it in card.items]))
            if term or trunc:
                _, info = env.reset(seed=50 + i)
        return out

    skipping = play()
    monkeypatch.setattr(Tutorial, "update", plain_update)
    assert play() == skipping


def test_the_kitchen_fridge_is_the_template_s_fridge() -> None:
    """`make_fridge` builds what `catalog.spawn(world, "fridge")` builds (name, type, materials,
    attributes, one UUID), as a `KitchenFridge`: fails when the template and the class drift."""
    from discoverylab.scenarios.tutorial.things import KitchenFridge, make_fridge
    from discoverylab.world.catalog import spawn
    from discoverylab.world.world import World

    def state(obj: WorldObject) -> dict[str, object]:
        return {k: v for k, v in vars(obj).items() if k != "world"}  # (materials: dataclasses, compared by value)

    plain_world, world = World(5), World(5)
    plain, fridge = spawn(plain_world, "fridge"), make_fridge(world)
    assert type(fridge) is KitchenFridge and state(fridge) == state(plain)
    assert spawn(plain_world, "pot").uuid == spawn(world, "pot").uuid


def test_the_fridge_asleep_while_settled_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Tutorial's fridge leaves the tick loop after a tick that changed no temperature, until
    its tile is reported (session 16). Played against the engine's plain appliance tick: a hot
    cooked pot and a half-warmed one put back into the fridge, a mushroom taken out and put in
    alone, the fridge switched off and on, the door opened and closed, with waits between; the
    oracle's episodes; random RL episodes. Every step's temperatures, texts, observation and
    scorecard must match, and the fridge must have slept (else the test proves nothing)."""
    import numpy as np

    from discoverylab.bench.episode import run_episode
    from discoverylab.rl import make_rl_env
    from discoverylab.scenarios.tutorial.things import KitchenFridge
    from discoverylab.world.things import Appliance
    from discoverylab.world.tick_pause import KEY

    slept: list[bool] = []

    def scripted() -> list[object]:
        d = Driver(seed=4)
        fridge, stove = d.obj_at(19, 21, "fridge"), d.obj_at(21, 21, "stove")
        out: list[object] = []

        def log(message: str) -> None:
            pause = d.world.caches.get(KEY)
            slept.append(pause is not None and fridge in pause.paused)
            things = [fridge, *fridge.all_contents(), stove, *stove.all_contents()]
            out.append((message, [(o.uuid, o.temperature_c, o.cooked, o.describe()) for o in things], d.obs))

        def wait(n: int) -> None:
            for _ in range(n):
                log(d.do("WAIT"))

        wait(3)
        pot = d.fetch_pot()
        wait(2)
        d.do("TELEPORT_TO_OBJECT", stove)
        log(d.do("OPEN", stove))
        log(d.do("PUT", pot, stove))
        log(d.do("ACTIVATE", stove))
        wait(4)  # half warmed
        log(d.do("PICKUP", pot))
        d.do("TELEPORT_TO_OBJECT", fridge)
        log(d.do("PUT", pot, fridge))
        wait(12)
        log(d.do("PICKUP", pot))
        d.do("TELEPORT_TO_OBJECT", stove)
        log(d.do("PUT", pot, stove))
        wait(20)  # hot and cooked
        log(d.do("PICKUP", pot))
        d.do("TELEPORT_TO_OBJECT", fridge)
        log(d.do("PUT", pot, fridge))
        wait(25)
        mushroom = pot.contents[0]
        log(d.do("PICKUP", mushroom))
        wait(2)
        log(d.do("PUT", mushroom, stove))
        wait(3)
        log(d.do("PICKUP", mushroom))
        log(d.do("PUT", mushroom, fridge))
        wait(4)
        log(d.do("DEACTIVATE", fridge))
        wait(2)
        log(d.do("ACTIVATE", fridge))
        wait(3)
        log(d.do("CLOSE", fridge))
        wait(2)
        log(d.do("OPEN", fridge))
        wait(15)
        out.append(d.scenario.scorecard.to_dict())
        return out

    def play() -> list[object]:
        out = scripted()
        for seed in (1, 2):
            _, log = run_episode("Tutorial", "normal", seed, "oracle")
            out += [*log[:-1], log[-1]["scorecard"]]
        env = make_rl_env("Tutorial", "normal", max_steps=10**9, info="full")
        _, info = env.reset(seed=3)
        rng = np.random.default_rng(3)
        for i in range(300):
            obs, reward, term, trunc, info = env.step(moves_first(rng, info["action_mask"], i))
            out.append((reward, {k: v.tobytes() for k, v in obs.items()}, info["observation"]))
            if term or trunc:
                _, info = env.reset(seed=50 + i)
        return out

    asleep = play()
    slept_then = [*slept]
    monkeypatch.setattr(KitchenFridge, "tick", Appliance.tick)
    slept.clear()
    assert play() == asleep
    assert any(slept_then) and not all(slept_then) and not any(slept)
