"""Object classes with behaviour beyond plain attributes: doors, appliances, food, soil..."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mypy_extensions import mypyc_attr

from discoverylab.world.objects import ActionResult, Container, Layer, WorldObject, text_state

if TYPE_CHECKING:
    from discoverylab.world.agent import Agent


@mypyc_attr(allow_interpreted_subclasses=True)
class Terrain(WorldObject):
    """Grass, paths, floors, walls, fences: immovable scenery."""

    default_layer = Layer.WORLD
    movable = False


@mypyc_attr(allow_interpreted_subclasses=True)
class Wall(Terrain):
    default_layer = Layer.BUILDING
    passable = False
    obscures_below = True


@mypyc_attr(allow_interpreted_subclasses=True)
class Door(WorldObject):
    """A passage: passable iff open; may need a key whose `key_id` matches."""

    default_layer = Layer.BUILDING
    movable = False
    openable = True
    is_passage = True
    obscures_below = True

    def is_passable_now(self) -> bool:
        return self.is_open

    @text_state("is_open", "requires_key")
    def describe_state(self) -> str:
        if self.is_open:
            return f"open {self.name}"
        return f"closed locked {self.name}" if self.requires_key else f"closed {self.name}"


@mypyc_attr(allow_interpreted_subclasses=True)
class Sign(WorldObject):
    default_layer = Layer.OBJECTS
    movable = False
    passable = False
    readable = True


@mypyc_attr(allow_interpreted_subclasses=True)
class Jar(Container):
    """Open container; 'empty jar' / 'jar containing items'."""

    @text_state()  # and its contents, whose changes `add` / `detach` report
    def describe_state(self) -> str:
        return f"{self.name} containing items" if self.contents else f"empty {self.name}"


@mypyc_attr(allow_interpreted_subclasses=True)
class Pot(Container):
    @text_state("temperature_c")
    def describe_state(self) -> str:
        t = self.temperature_c
        word = "cold" if t <= 10 else "hot" if t >= 100 else "warm"
        return f"{word} {self.name}"


@mypyc_attr(allow_interpreted_subclasses=True)
class Appliance(Container):
    """Fridge and stove: openable containers that, while activated, pull the temperature of
    everything inside (parts included) 25 C per tick towards a set point."""

    needs_tick = True
    openable = True
    is_open = False
    activatable = True
    movable = False
    passable = False
    default_layer = Layer.FURNITURE
    set_point: float = 20.0

    @text_state("activated", "type", "is_open")
    def describe_state(self) -> str:
        state = ("activated" if self.activated else "inactive") if self.type == "stove" else ""
        words = ["open" if self.is_open else "closed", state, self.name]
        return " ".join(w for w in words if w)

    def tick(self) -> None:
        if self.activated:  # (not asleep: code may switch it on without reporting its tile)
            self.heat()

    def heat(self) -> bool:
        """One activated tick: whether any temperature changed. After a tick that changed none,
        the next changes none either (every target at the set point, `react_to_temperature`
        already applied there) until something is put in or taken out or a temperature is set
        by other code: the Tutorial's fridge sleeps on that (`scenarios/tutorial/things.py`)."""
        changed = False
        for obj in [*self.all_contents()]:
            for target in (obj, *obj.parts):
                delta = self.set_point - target.temperature_c
                target.temperature_c += max(-25.0, min(25.0, delta))
                changed = changed or delta != 0
                target.react_to_temperature()
        if changed:  # a pot's warmth shows; everything heated is on this tile
            self.text_changed()
        return changed


@mypyc_attr(allow_interpreted_subclasses=True)
class Food(WorldObject):
    """Edible things (mushrooms): cooked at >= 100 C, poisonous if they or their parts are.

    Not ticked: a temperature changes only inside an activated appliance, which calls
    `react_to_temperature` right after, and no food is built at 100 C or more
    (tests/test_world_things.py checks every task's built world), so a per-tick check never
    found anything to do (a village holds dozens of foods)."""

    edible = True
    color: str = ""

    def react_to_temperature(self) -> None:
        if self.temperature_c >= 100 and not self.cooked:
            self.cooked = True
            self.text_changed()

    @text_state("color", "cooked")
    def describe_state(self) -> str:
        name = f"{self.color} {self.name}" if self.color and self.color not in self.name else self.name
        return f"cooked {name}" if self.cooked else name


@mypyc_attr(allow_interpreted_subclasses=True)
class Mold(WorldObject):
    """A living part: dies (stops being poisonous) outside its material's living range."""

    needs_tick = True

    def tick(self) -> None:
        if self.poisonous:  # a dead mold stays dead: nothing to check
            self.react_to_temperature()

    def react_to_temperature(self) -> None:
        for mat in self.materials:
            if mat.living and not (mat.living[0] <= self.temperature_c <= mat.living[1]) and self.poisonous:
                self.poisonous = False
                self.props["microscope_note"] = "This mold appears dead."
                self.text_changed()

    @text_state("poisonous", props=("microscope_note",))
    def describe_state(self) -> str:
        return f"burned {self.name}" if not self.poisonous and self.props.get("microscope_note") else self.name


@mypyc_attr(allow_interpreted_subclasses=True)
class SoilTile(Container):
    """Soil holds one dirt; dug out, it is a hole that swallows loose objects on its tile."""

    needs_tick = True
    default_layer = Layer.WORLD
    movable = False
    obscures_below = True
    shovelable = True
    is_open = False  # covered by its dirt (contents hidden) until dug; `tick` keeps this in sync

    def has_hole(self) -> bool:
        for obj in self.contents:  # a loop, not any(): every soil tile asks every tick
            if obj.type == "dirt":
                return False
        return True

    @text_state()  # `has_hole`: its contents (reported by `add` / `detach`) and their `type`
    def describe_state(self) -> str:
        return "hole" if self.has_hole() else self.name

    def tick(self) -> None:
        if not self.is_open:  # covered and still holding its dirt (`has_hole` False): nothing to do
            for obj in self.contents:  # (the usual state of every soil tile, every tick)
                if obj.type == "dirt":
                    # Nor until its lid or contents change, which its tile reports: asleep till then.
                    self.world.pause_tick_until_touched(self)
                    return
        if self.is_open != self.has_hole():
            self.is_open = not self.is_open
            self.text_changed()
        if not self.is_open:
            return
        for obj in list(self.world.top_level_at(self.x, self.y)):
            if obj is not self and not obj.is_agent and obj.type != "grass" and obj.movable:
                self.add(obj)

    def dig(self, agent: Agent) -> ActionResult:
        dirt = next((o for o in self.contents if o.type == "dirt"), None)
        if dirt is None:
            return ActionResult(False, "There is already a hole here.")
        agent.add(dirt)  # reports the tile to its watchers
        self.is_open = True
        self.text_changed()
        return ActionResult(True, "You dig a hole in the soil, creating a hole and dirt.")


@mypyc_attr(allow_interpreted_subclasses=True)
class Shovel(WorldObject):
    usable = True

    def use_with(self, agent: Agent, target: WorldObject) -> ActionResult:
        if isinstance(target, SoilTile):
            return target.dig(agent)
        return ActionResult(False, "You can't use the shovel on that.")


@mypyc_attr(allow_interpreted_subclasses=True)
class FertilizerBag(Container):
    """Refills to three pellets every tick."""

    needs_tick = True

    def tick(self) -> None:
        self.refill()
        self.world.pause_tick_until_touched(self)  # full: asleep until its contents change (reported)

    def refill(self) -> None:
        from discoverylab.world.catalog import spawn

        while self._pellets() < 3:
            self.add(spawn(self.world, "fertilizer_pellet"))

    def _pellets(self) -> int:
        count = 0
        for obj in self.contents:  # a loop, not sum() over a generator: every tick
            if obj.type == "fertilizer pellet":
                count += 1
        return count


@mypyc_attr(allow_interpreted_subclasses=True)
class Key(WorldObject):
    @text_state(props=("rusted",))
    def describe_state(self) -> str:
        return f"rusted {self.name}" if self.props.get("rusted") else self.name
