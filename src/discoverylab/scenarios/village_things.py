"""Village scenery shared by Lost in Translation and the Tutorial: coloured items, furniture, and the
school's counting computer, floppy disks, flag pole and measuring tape.

The counting computer moves the flag on the flag pole by the amount written on a floppy disk, and the
measuring tape reads the flag's height; that pair is how an agent learns the alien numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from discoverylab.world.agent import Agent
from discoverylab.world.instruments import READERS, Instrument
from discoverylab.world.materials import material
from discoverylab.world.objects import ActionResult, Layer, WorldObject
from discoverylab.world.things import Food, Key

if TYPE_CHECKING:
    from discoverylab.world.world import World

COLORS = ("red", "green", "blue", "yellow", "pink", "white", "orange")


class Colored(WorldObject):
    """A coloured flower or paint bucket; `color` is what the elder's colour word checks."""

    color: str = ""


class ColoredKey(Key):
    color: str = ""


def colored_mushroom(world: World, color: str) -> Food:
    return Food(world, f"{color} mushroom", "mushroom", [material("plant_matter_white")], color=color)


def colored_flower(world: World, color: str) -> Colored:
    return Colored(world, f"{color} flower", "flower", [material("plant_matter_green")], color=color)


def colored_key(world: World, color: str) -> ColoredKey:
    return ColoredKey(world, f"{color} key", "key", [material("metal")], color=color)


def paint_bucket(world: World, color: str) -> Colored:
    return Colored(world, f"{color} paint bucket", "paint bucket", [material("metal")], color=color)


def stick(world: World) -> WorldObject:
    return WorldObject(world, "wood stick", "stick", [material("wood")])


class Furniture(WorldObject):
    """Bookcases and village-sign posts: immovable, impassable scenery."""

    default_layer = Layer.FURNITURE
    movable = False
    passable = False


class FlagPole(WorldObject):
    """A pole whose flag sits `flag_height` meters up (0 .. pole_height - 1)."""

    default_layer = Layer.FURNITURE
    movable = False
    passable = False
    pole_height: int = 6
    flag_height: int = 4


class FloppyDisk(WorldObject):
    """A program for the counting computer: add `value` to the flag's height (0 resets it)."""

    value: int = 0


class CountingComputer(WorldObject):
    """USE computer ON floppy disk runs the disk's program on the linked flag pole."""

    usable = True
    pole: FlagPole | None = None

    def use_with(self, agent: Agent, target: WorldObject) -> ActionResult:
        if not isinstance(target, FloppyDisk) or self.pole is None:
            return ActionResult(False, "The computer is waiting for some input program.\n")
        pole = self.pole
        before = pole.flag_height
        pole.flag_height = 0 if target.value == 0 else min(before + target.value, pole.pole_height - 1)
        if pole.flag_height != before:
            return ActionResult(True, "You hear a bip from the computer and notice the flagpole has moved.\n")
        return ActionResult(True, "You hear a bip from the computer but nothing happened.\n")


def _measuring_tape(inst: Instrument, obj: WorldObject) -> str | None:
    if not isinstance(obj, FlagPole):
        return None
    height = obj.flag_height
    return f"The flag is {height} {'meter' if height == 1 else 'meters'} from the ground.\n"


READERS["tape"] = _measuring_tape


def measuring_tape(world: World) -> Instrument:
    return Instrument(world, "measuring tape", "tape", [material("metal")])
