"""Agents: the player and the NPCs. Agents are objects too (their inventory is their contents)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from mypy_extensions import mypyc_attr

from discoverylab.world.objects import Container, Layer, WorldObject

if TYPE_CHECKING:
    from discoverylab.world.devices import Device
    from discoverylab.world.dialog import DialogTree
    from discoverylab.world.world import World

# (Final, as the other module constants read per step: compiled, a C static instead of a
# look-up in the module's dict, ~140 instructions, at each read)
DIRECTIONS: Final[dict[str, tuple[int, int]]] = {"north": (0, -1), "east": (1, 0), "south": (0, 1), "west": (-1, 0)}


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
@dataclass(slots=True, init=False)
class ActionRecord:
    """One entry of an agent's action history (what scorers look at). `__init__` written out,
    not the dataclass's: compiled, that one stays interpreted (mypyc leaves the methods
    `dataclass` makes to it), ~2.4k instructions a record, one record per step."""

    action: str
    arg1: Any
    arg2: Any
    success: bool
    message: str
    step: int

    def __init__(self, action: str, arg1: Any, arg2: Any, success: bool, message: str, step: int) -> None:
        self.action = action
        self.arg1 = arg1
        self.arg2 = arg2
        self.success = success
        self.message = message
        self.step = step

    @property
    def arg1_uuid(self) -> int | None:
        return self.arg1.uuid if isinstance(self.arg1, WorldObject) else None

    @property
    def arg2_uuid(self) -> int | None:
        return self.arg2.uuid if isinstance(self.arg2, WorldObject) else None


@mypyc_attr(allow_interpreted_subclasses=True)
class Agent(Container):
    """Anything that acts: has a facing, an action history, dialog state and states (flags)."""

    default_layer = Layer.AGENT
    is_agent = True
    dialogable = True
    movable = False
    container_prefix = "held by"
    needs_tick = True

    def __init__(self, world: World, name: str, x: int, y: int, facing: str = "south", **attrs: Any) -> None:
        # `materials` spelled out: compiled by mypyc, the call passed `attrs` in its place.
        super().__init__(world, name, "agent", None, **attrs)
        self.facing = facing
        self.history: list[ActionRecord] = []
        self.states: set[str] = set()
        self.dialog_partner: Agent | Device | None = None  # a character or a device's menu
        self.dialog_tree: DialogTree | None = None
        self.poison_counter = 0
        self.poisoned = False
        self.seen: set[int] = set()  # UUIDs that appeared in this agent's observations
        world.place(self, x, y)
        world.add_agent(self)

    def facing_tile(self) -> tuple[int, int]:
        dx, dy = DIRECTIONS[self.facing]
        return self.x + dx, self.y + dy

    def record(self, action: str, arg1: Any, arg2: Any, success: bool, message: str) -> None:
        self.history.append(ActionRecord(action, arg1, arg2, success, message, self.world.step))

    def inventory(self) -> list[WorldObject]:
        """Direct contents plus, recursively, the contents of open containers carried (each
        object then its `visible_tree`, written out: compiled, a generator per object carried
        cost ~500 instructions, and the action arguments and the RL view read this each step)."""
        out: list[WorldObject] = []
        for obj in self.contents:
            out.append(obj)
            if obj.contents and obj.is_open:
                _add_visible(obj, out)
        return out

    def eat_poison(self) -> None:
        """Start the incubation clock (spec section 8.2) from the NPC stream."""
        if self.poison_counter == 0 and not self.poisoned:
            self.poison_counter = int(self.world.rng_npc.integers(-20, -1))

    def tick(self) -> None:
        if self.poison_counter < 0 and not self.poisoned:
            self.poison_counter -= 1
            if self.poison_counter < -45:
                self.poisoned = True
                self.poison_counter = 100
                self.states.add("poisoned")
                self.world.feed.add_update(self.world.step, self.name, "I'm not feeling well.")
        elif self.poisoned:
            self.poison_counter -= 1
            if self.poison_counter <= -1:
                self.poisoned = False
                self.poison_counter = 0
                self.states.discard("poisoned")
                self.world.feed.add_update(self.world.step, self.name, "I'm feeling better.")


def _add_visible(holder: WorldObject, out: list[WorldObject]) -> None:
    """Append `holder.visible_tree()` (an open holder's contents, recursively) to `out`."""
    for child in holder.contents:
        out.append(child)
        if child.contents and child.is_open:
            _add_visible(child, out)
