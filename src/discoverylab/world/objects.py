"""The object tree: every thing in the world, from grass to agents, is a `WorldObject`.

Objects sit on a tile layer (top-level) or inside a container (`contents`) or are `parts` of
another object (mold on a mushroom: moves and is measured with it, never listed on its own).
Affordances are plain attributes (`movable`, `openable`, ...) with class-level defaults, so an
instance only stores what differs; behaviour lives in small subclass overrides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from mypy_extensions import mypyc_attr

from discoverylab.world.materials import Material
from discoverylab.world.unpickle import FastState, compiled_fields

if TYPE_CHECKING:
    from discoverylab.world.agent import Agent
    from discoverylab.world.world import World


class Layer(IntEnum):
    """Tile layers, bottom to top. Observation scans run top-down (AIR first)."""

    WORLD = 0
    BUILDING = 1
    FURNITURE = 2
    OBJECTS = 3
    AGENT = 4
    AIR = 5


# What an observer sees of a tile beyond its membership (which `World.place` / `WorldObject.add`
# report to `World.watch_tiles`): names, what is visible inside, passability, the attributes and `props`
# entries each `describe_state` override declares with `text_state`. Code that changes one of them
# on an object that may be in the world calls `text_changed` (tests/test_tile_text.py finds the
# writes that do not), so observations may cache per-tile text.
TEXT_ATTRS: set[str] = {
    "name", "type", "is_open", "obscures_below", "container_prefix", "is_agent", "dialogable", "props",
    "passable",  # the observation's blocked directions
}  # fmt: skip
TEXT_PROPS: set[str] = set()
_Describer = TypeVar("_Describer", bound=Callable[..., str])


def text_state(*attrs: str, props: tuple[str, ...] = ()) -> Callable[[_Describer], _Describer]:
    """Mark a `describe_state` override as audited: `attrs` (and `props` entries) are what it
    reads besides `name` and contents, added to `TEXT_ATTRS` / `TEXT_PROPS`. Objects whose
    `describe_state` is not marked are described afresh in every observation."""

    def mark(describe_state: _Describer) -> _Describer:
        TEXT_ATTRS.update(attrs)
        TEXT_PROPS.update(props)
        try:
            describe_state.text_state = attrs  # type: ignore[attr-defined]
        except AttributeError:  # a compiled method (`make native`) takes no attributes
            _AUDITED_COMPILED.add(describe_state)
        return describe_state

    return mark


_AUDITED_COMPILED: set[object] = set()  # compiled `describe_state` methods `text_state` marked


def is_text_audited(describe_state: object) -> bool:
    """Whether `describe_state` is marked with `text_state`."""
    return hasattr(describe_state, "text_state") or describe_state in _AUDITED_COMPILED


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
@dataclass(slots=True, init=False)
class ActionResult:
    """What an action (or an object's reaction to one) did. `important` messages are queued
    for the observation's `extended_action_message` as well. `__init__` written out: compiled,
    the dataclass's stays interpreted (~1.5k instructions a result, one or more a step)."""

    success: bool
    message: str
    important: bool = False

    def __init__(self, success: bool, message: str, important: bool = False) -> None:
        self.success = success
        self.message = message
        self.important = important


@mypyc_attr(allow_interpreted_subclasses=True)
class WorldObject(FastState):
    """Base object. Subclasses override `tick`, `describe_state` and `use_with` as needed."""

    needs_tick: ClassVar[bool] = False
    default_layer: ClassVar[Layer] = Layer.OBJECTS

    # Affordance defaults (class level; instances override only what differs).
    movable: bool = True
    passable: bool = True
    obscures_below: bool = False
    is_container: bool = False
    container_prefix: str = "in"
    openable: bool = False
    is_open: bool = False
    is_passage: bool = False
    activatable: bool = False
    activated: bool = False
    usable: bool = False
    dialogable: bool = False
    edible: bool = False
    readable: bool = False
    document: str = ""
    is_agent: bool = False
    is_npc: bool = False
    poisonous: bool = False
    cooked: bool = False
    shovelable: bool = False
    temperature_c: float = 20.0
    key_id: int = 0
    requires_key: int = 0
    density: float = 0.0
    sprite: str = ""
    layer_hint: Layer | None = None  # template-chosen layer, else `default_layer`

    def __init__(
        self,
        world: World,
        name: str,
        type_: str,
        materials: list[Material] | None = None,
        **attrs: Any,
    ) -> None:
        self.world = world
        self.name = name
        self.type = type_
        self.materials: list[Material] = materials or []
        self.contents: list[WorldObject] = []
        self.parts: list[WorldObject] = []
        self.parent: WorldObject | None = None
        self.x = -1
        self.y = -1
        self.layer: Layer | None = None
        self.alive = True
        self.props: dict[str, Any] = {}
        if attrs:  # most templates set none
            for key, value in attrs.items():
                if not hasattr(type(self), key):
                    raise AttributeError(f"{type(self).__name__} has no attribute {key!r}")
                setattr(self, key, value)
        self.uuid = world.register(self)

    def __init_subclass__(cls) -> None:
        # No `super()` call (object's does nothing): compiled by mypyc, it raised "super(type,
        # obj): obj must be an instance or subtype of type" for every subclass.
        native_defaults(cls)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} uuid={self.uuid} at {self.location()}>"

    def text_changed(self) -> None:
        """Report a change of its text (`TEXT_ATTRS`, `TEXT_PROPS`) to the tile watchers."""
        if self.world._watchers:
            self._touch_root()

    # ---- tree -------------------------------------------------------------------------
    def location(self) -> tuple[int, int]:
        """Grid location; contained objects carry their outermost holder's tile."""
        obj: WorldObject = self
        while obj.parent is not None:
            obj = obj.parent
        return obj.x, obj.y

    @property
    def held_by_agent(self) -> bool:
        """Directly in an agent's inventory: what scorers mean by "picked up"."""
        return self.parent is not None and self.parent.is_agent

    def root(self) -> WorldObject:
        obj: WorldObject = self
        while obj.parent is not None:
            obj = obj.parent
        return obj

    def _touch_root(self) -> None:
        """Tell the world's tile watchers that the tile this object (or its holder) is on changed."""
        root = self.root()
        if root.layer is not None:
            self.world.touch(root.x, root.y)

    def detach(self) -> None:
        """Remove from wherever it is (container, part list or grid)."""
        if self.parent is not None:
            holder = self.parent
            if self.world._watchers:
                holder._touch_root()
            if self in holder.contents:
                holder.contents.remove(self)
            elif self in holder.parts:
                holder.parts.remove(self)
            self.parent = None
        elif self.layer is not None:
            self.world.grid_remove(self)

    def add(self, obj: WorldObject) -> None:
        """Put `obj` into this object's contents (moving it from wherever it was)."""
        obj.detach()
        self.contents.append(obj)
        obj.parent = self
        self.world.holders[self] = None  # `World.dispose` unties it
        if self.world._watchers:
            self._touch_root()

    def add_part(self, obj: WorldObject) -> None:
        obj.detach()
        self.parts.append(obj)
        obj.parent = self
        self.world.holders[self] = None  # `World.dispose` unties it
        if self.world._watchers:
            self._touch_root()

    def visible_tree(self) -> Iterator[WorldObject]:
        """The visible contents, recursively (not the object itself, never parts): an observer
        sees (and reaches) the contents of open holders only."""
        if self.contents and self.is_open:
            for child in self.contents:
                yield child
                yield from child.visible_tree()

    def all_contents(self) -> Iterator[WorldObject]:
        """Every content regardless of open/closed, recursively."""
        for child in self.contents:
            yield child
            yield from child.all_contents()

    def contains(self, other: WorldObject) -> bool:
        obj = other.parent
        while obj is not None:
            if obj is self:
                return True
            obj = obj.parent
        return False

    def all_materials(self, include_contents: bool = False) -> Iterator[Material]:
        """Materials of this object and its parts (and contents if asked), recursively."""
        yield from self.materials
        for part in self.parts:
            yield from part.all_materials(include_contents)
        if include_contents:
            for child in self.contents:
                yield from child.all_materials(include_contents)

    def remove_from_world(self) -> None:
        """Destroy (eaten, consumed...). Contents and parts go with it."""
        self.detach()
        if self.contents or self.parts:  # holder and held point at each other: `dispose` unties them
            self.world.removed_holders.append(self)
        pending: list[WorldObject] = [self]
        while pending:  # the whole subtree: contents and parts at any depth
            obj = pending.pop()
            obj.alive = False
            self.world.unregister(obj)
            pending.extend(obj.contents)
            pending.extend(obj.parts)

    # ---- text -------------------------------------------------------------------------
    @text_state()
    def describe_state(self) -> str:
        """Name with state words ("open door"); subclasses override."""
        return self.name

    def describe(self, with_uuid: bool = True) -> str:
        """Description with the container suffix, e.g. 'flag (on table [uuid: 12])'."""
        text = self.describe_state()
        if self.parent is not None:
            holder = self.parent
            tag = f" [uuid: {holder.uuid}]" if with_uuid else ""
            text += f" ({holder.container_prefix} {holder.name}{tag})"
        return text

    # ---- behaviour hooks --------------------------------------------------------------
    def tick(self) -> None:
        """Called once per world tick for objects with `needs_tick`."""

    def release(self) -> None:
        """Drop links a subclass keeps to other objects or to its scenario when the world is
        disposed (`World.dispose` calls it on every object built by a constructor: a class that
        overrides it must not be built inline, see `catalog.inline_plan`), where they would keep a cycle, and
        so the whole world, alive until the garbage collector's next full pass."""

    def react_to_temperature(self) -> None:
        """Apply temperature thresholds (cooking, dying). Heat sources call it right after they
        change the temperature, so the outcome never depends on which object ticks first."""

    def is_passable_now(self) -> bool:
        return self.passable

    def use_with(self, agent: Agent, target: WorldObject) -> ActionResult:
        return ActionResult(False, f"I'm not sure how to use the {self.name} with the {target.name}.")


def native_defaults(cls: type) -> None:
    """Give a Python subclass of the compiled engine (`make native`: a theme's or a test's
    class) the attribute defaults its body sets. A compiled class keeps each attribute in a C
    field that its code reads directly, so `movable = False` in a Python subclass's body would
    be seen by Python code and never by the engine (`Cls().movable` False, the engine's read
    True). The subclass's values of compiled attributes leave its class dict and are set on
    each new instance by a `__new__` of its own, as the compiled classes' own defaults are.
    Nothing to do for the pure-Python engine (the reference) or a compiled class."""
    if "__mypyc_attrs__" not in vars(WorldObject) or "__mypyc_attrs__" in vars(cls):
        return
    fields = set(compiled_fields(cls))
    own = {name: value for name, value in vars(cls).items() if name in fields and not hasattr(value, "__get__")}
    for name in own:
        delattr(cls, name)
    defaults = {**getattr(cls, "__native_defaults__", {}), **own}
    if not defaults:
        return
    setattr(cls, "__native_defaults__", defaults)  # noqa: B010  # (a class of no declared type)
    native: Any = next(base for base in cls.__mro__ if "__mypyc_attrs__" in vars(base))
    items = tuple(defaults.items())

    def new(klass: type, *args: Any, **kwargs: Any) -> Any:
        obj = native.__new__(klass)
        for name, value in items:
            setattr(obj, name, value)
        return obj

    setattr(cls, "__new__", staticmethod(new))  # noqa: B010  # (mypy: cannot assign to a method)


@mypyc_attr(allow_interpreted_subclasses=True)
class Container(WorldObject):
    """Anything that holds things: tables ("on"), jars and pots ("in"), fridges (openable)."""

    is_container = True
    is_open = True  # fixed-open holders (tables, jars); openable ones start closed via attrs

    @text_state("openable", "activatable", "is_open", "activated")
    def describe_state(self) -> str:
        if not (self.openable or self.activatable):  # tables, beds: most furniture in view
            return self.name
        words = ["open" if self.is_open else "closed"] if self.openable else []
        if self.activatable:  # e.g. a sink
            words.append("activated" if self.activated else "inactive")
        return " ".join([*words, self.name])


def stack_insert(stack: list[WorldObject], obj: WorldObject, layer: Layer) -> None:
    """Insert `obj` into a tile's stack after everything on the same or a higher layer. The
    stack runs top layer first, so when its last object lies on `layer` or higher (or it is
    empty: most placements) `obj` goes last, without the scan."""
    if not stack or stack[-1].layer >= layer:  # type: ignore[operator]  # on a stack: never None
        stack.append(obj)
        return
    for i, other in enumerate(stack):
        if other.layer is not None and other.layer < layer:
            stack.insert(i, obj)
            return
    stack.append(obj)


def visible_into(contents: list[WorldObject], out: list[WorldObject]) -> bool:
    """Append the visible contents, recursively (`WorldObject.visible_tree` without a generator
    per object: the observation asks for it on every furniture tile every step); whether any
    of them obscures what lies below."""
    obscures = False
    for child in contents:
        out.append(child)
        if child.obscures_below:
            obscures = True
        if child.contents and child.is_open and visible_into(child.contents, out):
            obscures = True
    return obscures
