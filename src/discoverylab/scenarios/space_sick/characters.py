"""The colony's characters: the Chef (collects, serves, calls to meals), the Farmer (plants
seeds) and the colonists (eat when called or when handed a mushroom, go to the infirmary when
ill).

Each character runs a queue of small steps ("jobs": callables that return True when done) on
top of the engine's NPC wandering. Walking follows a cached A* path that is recomputed only
when the next tile is blocked, so seven characters cost little per tick.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from mypy_extensions import mypyc_attr

from discoverylab.scenarios.space_sick.things import poisonous_food
from discoverylab.world.agent import Agent
from discoverylab.world.npc import NPC, find_path
from discoverylab.world.objects import Layer, WorldObject
from discoverylab.world.things import SoilTile
from discoverylab.world.unpickle import FastState

if TYPE_CHECKING:
    from discoverylab.world.world import World

Step = Callable[[], bool]
_DIRS: Final = {(0, -1): "north", (1, 0): "east", (0, 1): "south", (-1, 0): "west"}
_STEPS: Final = tuple((sx, sy, facing) for (sx, sy), facing in _DIRS.items())
EAT_SIGNAL: Final = "eatSignal"


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
class Call(FastState):  # (unpickled, attributes inline: `world/unpickle.py`)
    """A character's method by name, with its arguments: a job of its queue or a dialog
    option's callback. An object, not a bound method, `partial` or closure: compiled, those are
    builtins, which `copy.deepcopy` keeps as they are (a clone's Chef asked to collect queued
    the walk on the original's) or cannot copy (a closure); so is `set.add`, even pure."""

    def __init__(self, owner: Any, name: str, args: tuple[Any, ...] = ()) -> None:
        self.owner = owner
        self.name = name
        self.args = args

    def __call__(self) -> Any:
        return getattr(self.owner, self.name)(*self.args)


@mypyc_attr(allow_interpreted_subclasses=True)
class ColonyNPC(NPC):
    """A character with a job queue, cached-path walking and hands that reach one tile around.
    Compiled with the engine (`make native`: its tick runs every step for seven characters), so
    every attribute is declared here or in an `__init__` (a compiled object has no `__dict__`)."""

    sick = False
    colony: Any = None  # the Colony (characters that act in it); `release` drops it

    def __init__(self, world: World, name: str, x: int, y: int, **attrs: Any) -> None:
        # `facing` spelled out: compiled, `**attrs` after fewer positionals went into its place.
        super().__init__(world, name, x, y, "south", **attrs)
        self.jobs: deque[Step] = deque()
        self.wander_home: tuple[int, int, float] | None = None  # (x, y, step probability)
        self._path: list[tuple[int, int]] = []
        self._stuck = 0
        self._coins: list[float] = []

    def is_busy(self) -> bool:
        return bool(self.jobs) or super().is_busy()

    def release(self) -> None:
        self.jobs.clear()  # walks: generators whose frames hold this character
        self.colony = None  # the colony lists its characters

    def react(self) -> None:
        """Decisions before the current job runs, on ticks when the character holds
        something, has states, or is (or was) ill (subclasses)."""

    def tick(self) -> None:
        """Same order as the engine's NPC tick (poison clock, then the autopilot unless in a
        dialog): reactions, then the job queue, then wandering. Seven characters tick every
        step and most ticks end in wandering near home with a draw that says "stay": that
        path runs here, with no further call."""
        if self.poison_counter or self.poisoned:
            Agent.tick(self)
        if self.dialog_partner is not None:
            return
        if self.contents or self.states or self.sick:
            self.react()
        jobs = self.jobs
        if jobs:
            if jobs[0]():
                jobs.popleft()
            return
        home = self.wander_home
        if home is None:
            return
        # Wander around home: beyond four tiles head back, else with the home's probability
        # step one tile in a random direction (draws from the NPC stream, 64 at a time).
        x, y, probability = home
        if self._door_to_close is not None:
            self._close_door_behind()
        dx, dy = x - self.x, y - self.y
        if dx * dx + dy * dy > 16:
            self._head_back(x, y, dx, dy)
            return
        if self._path:  # (only a write when there is a path to drop: most ticks have none)
            self._path = []
        coins = self._coins
        if not coins:
            coins = self._coins = self.world.rng_npc.random(64).tolist()
        coin = coins.pop()
        if coin < probability:  # (unpacked, not `*args`: a compiled star call goes through Python's)
            sx, sy, facing = _STEPS[int(coin / probability * 4)]
            self._try_step(sx, sy, facing)

    def _head_back(self, x: int, y: int, dx: int, dy: int) -> None:
        """Towards home (x, y), which lies (dx, dy) away: a straight step when free (along the
        longer axis first), else one along a path. (Written out: no lists or generator.)"""
        sx = 1 if dx > 0 else -1
        sy = 1 if dy > 0 else -1
        if abs(dy) > abs(dx):
            if dy and self._try_step(0, sy, "south" if dy > 0 else "north"):
                return
            if dx and self._try_step(sx, 0, "east" if dx > 0 else "west"):
                return
        else:
            if dx and self._try_step(sx, 0, "east" if dx > 0 else "west"):
                return
            if dy and self._try_step(0, sy, "south" if dy > 0 else "north"):
                return
        self._walk_to(x, y)

    def _try_step(self, sx: int, sy: int, facing: str) -> bool:
        """Face (sx, sy) and step there if free. (`blocker_at` and `World.walk`: compiled,
        `paths.walk_if_free` cost ~300 instructions a step more here.)"""
        self.facing = facing
        nx, ny = self.x + sx, self.y + sy
        world = self.world
        size = world.size
        if 0 <= nx < size and 0 <= ny < size and world.blocker_at(nx, ny) is None:
            world.walk(self, nx, ny)
            return True
        return False

    # ---- steps --------------------------------------------------------------------------
    def walk(self, x: int, y: int) -> Step:
        return Call(self, "_walk_to", (x, y))

    def _walk_to(self, x: int, y: int) -> bool:
        if self._door_to_close is not None and self._close_door_behind():  # (no call without a door)
            return (self.x, self.y) == (x, y)
        if (self.x, self.y) == (x, y):
            self._path = []
            return True
        path = self._path
        if not path or path[-1] != (x, y) or abs(path[0][0] - self.x) + abs(path[0][1] - self.y) != 1:
            path = self._path = find_path(self.world, (self.x, self.y), (x, y)) or []
        if not path:
            self._stuck += 1
            if self._stuck > 30:  # unreachable: give up this walk
                self._stuck = 0
                return True
            return False
        nx, ny = path[0]
        step = self.advance_to(nx, ny)
        if step == "blocked":
            self._path = []
            return (nx, ny) == (x, y)
        if step == "moved":
            path.pop(0)
            return (nx, ny) == (x, y) and self._door_to_close is None
        return False

    def say(self, text: str, signals: list[str] | None = None) -> Step:
        return Call(self, "_say", (text, signals))

    def _say(self, text: str, signals: list[str] | None) -> bool:
        self.world.feed.add_update(self.world.step, self.name, text, signals)
        return True

    def reachable(self, obj: WorldObject) -> bool:
        ox, oy = obj.location()
        return abs(ox - self.x) <= 1 and abs(oy - self.y) <= 1

    def take(self, obj: WorldObject, into: WorldObject | None = None) -> None:
        (into or self).add(obj)
        self.record("PICKUP", obj, None, True, f"I picked up the {obj.name}.")

    def put(self, obj: WorldObject, container: WorldObject) -> None:
        container.add(obj)
        self.record("PUT", obj, container, True, f"I put the {obj.name} into the {container.name}.")

    def eat(self, food: WorldObject) -> None:
        bad = poisonous_food(food)
        self.record("EAT", food, None, True, f"I ate the {food.name}.")
        food.remove_from_world()
        if bad:
            self.eat_poison()

    def dialog(self, greeting: str, requests: list[tuple[str, str, Callable[[], None]]]) -> None:
        """A menu: each request leads to a confirmation node with "OK"; plus "Goodbye"."""
        tree = self.dialog_tree
        assert tree is not None
        tree.add_node("root", greeting)
        for i, (ask, answer, callback) in enumerate(requests):
            tree.add_node(f"r{i}", answer)
            tree.add_option("root", ask, f"r{i}", callback=callback)
            tree.add_option(f"r{i}", "OK", "end")
        tree.add_option("root", "Goodbye", "end")
        tree.add_node("end", "Goodbye.")


def _mushrooms_in(holder: WorldObject) -> list[WorldObject]:
    return [o for o in holder.contents if "mushroom" in o.type]


@mypyc_attr(allow_interpreted_subclasses=True)
class Colonist(ColonyNPC):
    """Eats the mushroom it is handed (fresh ones only), fetches one from the cafeteria tables
    when called to a meal, and rests in the infirmary while ill (one walk, not one per tick)."""

    def __init__(self, world: World, name: str, x: int, y: int, home: tuple[int, int], colony: Any) -> None:
        super().__init__(world, name, x, y)
        self.home = home
        self.colony = colony
        self._tries = 0
        self.wander_home = (home[0], home[1], 0.25)
        self.dialog(
            "Hello, I am a colonist here on Discovery World. ",
            [("I think there is food available in the cafeteria.", "Thanks, I'll head over there.",
              Call(self, "_hungry"))],
        )  # fmt: skip

    def _hungry(self) -> None:
        self.states.add(EAT_SIGNAL)

    def react(self) -> None:
        if not (self.contents or self.poisoned or self.sick or self.states):
            return
        if self.poisoned and not self.sick:
            self.sick = True
            self.jobs.clear()
            self.wander_home = None
            self.jobs.append(self.walk(*self.colony.infirmary))
            return
        if self.sick and not self.poisoned:
            self.sick = False
            self.wander_home = (self.home[0], self.home[1], 0.25)
        for food in _mushrooms_in(self):
            if food.cooked:
                self.world.place(food, self.x, self.y, Layer.OBJECTS)
                self.world.feed.add_update(self.world.step, self.name, "I only eat fresh mushrooms, not cooked ones.")
            else:
                self.world.feed.add_update(self.world.step, self.name, "I'm going to eat a mushroom.")
                self.eat(food)
            return
        if EAT_SIGNAL in self.states:
            self.states.discard(EAT_SIGNAL)
            if not self.sick:
                self.jobs.append(self.say("Heading to the cafeteria for some food."))
                self.jobs.append(self.walk(*self.colony.dining_spot))
                self._tries = 0
                self.jobs.append(Call(self, "_fetch"))

    def _fetch(self) -> bool:
        """Walk to a cafeteria table holding a fresh mushroom and take it (it is eaten next
        tick); give up after three looks that find nothing."""
        tables = [t for t in self.colony.tables if any(not f.cooked for f in _mushrooms_in(t))]
        if not tables:
            self._tries += 1
            return self._tries >= 3
        table = min(tables, key=lambda t: abs(t.x - self.x) + abs(t.y - self.y))
        spot = (table.x, table.y + 1)
        if (self.x, self.y) != spot:
            if self._walk_to(*spot) and (self.x, self.y) != spot:  # gave up: the way is blocked
                self._tries += 1
                return self._tries >= 3
            return False
        self.facing = "north"
        food = next(f for f in _mushrooms_in(table) if not f.cooked)
        self.take(food)
        return True


@mypyc_attr(allow_interpreted_subclasses=True)
class Chef(ColonyNPC):
    """Collects the farm's mushrooms into the pot, serves the pot onto the tables, calls meals."""

    def __init__(self, world: World, x: int, y: int, colony: Any) -> None:
        super().__init__(world, "Chef", x, y)
        self.colony = colony
        self.home = (x, y)
        self.dialog(
            "Hello, I am the chef. I can collect food from the farm, or serve food from the pot.",
            [
                ("Can you collect food from the farm and place it in the pot?",
                 "OK, I'll collect food from the farm.", Call(self, "_collect")),
                ("Can you serve the food in the pot onto the buffet so it's available for meals?",
                 "OK, I'll serve the food.", Call(self, "_serve")),
                ("Can you call the colonists for a meal?", "OK, I'll call the colonists.", Call(self, "_call")),
            ],
        )  # fmt: skip

    def _pot_steps(self) -> list[Step]:
        prep = self.colony.prep_table
        return [self.walk(prep.x, prep.y + 1), Call(self, "_take_pot")]

    def _take_pot(self) -> bool:
        pot = self.colony.pot
        if self.reachable(pot) and pot.parent is not self:
            self.take(pot)
        return True

    def _return_pot(self) -> bool:
        if self.colony.pot.parent is self:
            self.put(self.colony.pot, self.colony.prep_table)
        return True

    def _collect(self) -> None:
        prep = self.colony.prep_table
        self.jobs.extend([
            self.say("I'm going to the farm to collect mushrooms."), *self._pot_steps(), Call(self, "_harvest"),
            self.say("I'm going back to the cafeteria from the farm."), self.walk(prep.x, prep.y + 1),
            Call(self, "_return_pot"), self.walk(*self.home),
        ])  # fmt: skip

    def _harvest(self) -> bool:
        """Walk onto each mushroom lying in the field and put it into the pot."""
        pot = self.colony.pot
        if pot.parent is not self:
            return True
        found = [
            o
            for x, y in self.colony.field_tiles
            for o in self.world.layer_at(x, y, Layer.OBJECTS)
            if "mushroom" in o.type
        ]
        if not found:
            return True
        food = min(found, key=lambda o: abs(o.x - self.x) + abs(o.y - self.y))
        if (self.x, self.y) == (food.x, food.y):
            self.take(food, into=pot)
            return False
        return self._walk_to(food.x, food.y) and (self.x, self.y) != (food.x, food.y)  # unreachable: stop

    def _serve(self) -> None:
        self.jobs.extend([*self._pot_steps(), Call(self, "_plate"), Call(self, "_return_pot"), self.walk(*self.home)])

    def _plate(self) -> bool:
        """Put one edible item from the pot on each empty cafeteria table."""
        pot = self.colony.pot
        food = [o for o in pot.contents if o.edible] if pot.parent is self else []
        empty = [t for t in self.colony.tables if not t.contents]
        if not food or not empty:
            return True
        table = empty[0]
        spot = (table.x, table.y - 1)
        if (self.x, self.y) != spot:
            return self._walk_to(*spot) and (self.x, self.y) != spot  # unreachable: stop
        self.facing = "south"
        self.put(food[0], table)
        return False

    def _call(self) -> None:
        self.jobs.append(self.say("Food is being served in the cafeteria.", [EAT_SIGNAL]))


@mypyc_attr(allow_interpreted_subclasses=True)
class Farmer(ColonyNPC):
    """Plants up to five seeds from the seed jar on blank field soil, with the farm's shovel."""

    def __init__(self, world: World, x: int, y: int, colony: Any) -> None:
        super().__init__(world, "Farmer", x, y)
        self.colony = colony
        self.home = (x, y)
        self._target: SoilTile | None = None
        self.wander_home = (x, y, 0.25)
        self.dialog(
            "Hello, I am the farmer. I can plant more seeds.",
            [("Can you plant more seeds", "OK, I'll plant some seeds.", Call(self, "_plant"))],
        )

    def _plant(self) -> None:
        self.wander_home = None
        self.jobs.extend([
            self.say("I'm going to try to plant some seeds. First I need a shovel, then some seeds."),
            self.walk(*self.colony.farm_spot), Call(self, "_gather"), Call(self, "_sow"),
            self.walk(*self.colony.farm_spot), Call(self, "_put_back"), self.walk(*self.home), Call(self, "_resume"),
        ])  # fmt: skip

    def _gather(self) -> bool:
        shovel, jar = self.colony.shovel, self.colony.seed_jar
        if self.reachable(shovel) and shovel.parent is not self and not shovel.held_by_agent:
            self.take(shovel)
        if self.reachable(jar):
            for seed in [o for o in jar.contents if o.type == "seed"][:5]:
                self.take(seed)
        return True

    def _sow(self) -> bool:
        """One tile at a time: walk onto blank soil, dig, drop a seed in, put the dirt back."""
        seeds = [o for o in self.contents if o.type == "seed"]
        if not seeds or self.colony.shovel.parent is not self:
            return True
        target = self._target
        if target is None or not self._blank(target):  # choose the nearest blank tile once
            blank = [t for t in self.colony.soil if self._blank(t)]
            if not blank:
                return True
            target = self._target = min(blank, key=lambda t: abs(t.x - self.x) + abs(t.y - self.y))
        if (self.x, self.y) != (target.x, target.y):
            if self._walk_to(target.x, target.y) and (self.x, self.y) != (target.x, target.y):
                return True  # unreachable: stop
            return False
        dirt = next(o for o in target.contents if o.type == "dirt")
        self.add(dirt)
        self.record("USE", self.colony.shovel, target, True, "You dig a hole in the soil, creating a hole and dirt.")
        self.put(seeds[0], target)
        self.put(dirt, target)
        self._target = None
        return False

    def _blank(self, tile: SoilTile) -> bool:
        holds_dirt = any(o.type == "dirt" for o in tile.contents)
        has_seed = any(o.type == "seed" for o in tile.contents)
        return holds_dirt and not has_seed and not self.world.layer_at(tile.x, tile.y, Layer.OBJECTS)

    def _put_back(self) -> bool:
        shovel = self.colony.shovel
        if shovel.parent is self:
            self.world.place(shovel, *self.colony.shovel_spot)
        return True

    def _resume(self) -> bool:
        self.wander_home = (self.home[0], self.home[1], 0.25)
        return True
