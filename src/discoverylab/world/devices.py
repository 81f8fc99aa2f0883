"""NPC devices: machines operated through a dialog menu (crystal reactors, soil controllers,
launch terminals, load-cell interfaces...).

A device stands where an object would (usually on a table), never moves and never acts on
its own. TALK to it, or USE it with anything accessible, and its menu opens as a dialog. Its
numeric settings live in `props`, so node texts show them (``"The frequency is {freq} Hz."``),
and a menu option can change them by a step, clamped to a range (the original's
`floatVariablesToModify` / `minMaxRange`). After every such change `on_change` runs, so a
device reacts at once (a reactor re-checks its calibration before the next observation).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from mypy_extensions import mypyc_attr

from discoverylab.world.dialog import DialogTree
from discoverylab.world.objects import Layer, WorldObject

# A setting and its steps keep their own type (5100 shows as "5100", 5100.0 as "5100.0"): spelled
# `int | float`, since compiled code turns an int passed as a `float` into one (100 -> 100.0).
Number = int | float

if TYPE_CHECKING:
    from discoverylab.world.agent import ActionRecord, Agent
    from discoverylab.world.materials import Material
    from discoverylab.world.world import World


@mypyc_attr(allow_interpreted_subclasses=True)
class Device(WorldObject):
    """A dialog-driven machine. Subclasses build their menu and override `on_change` / `tick`.

    Not an agent: scorers asking whether something is "held by an agent" never count what a
    device holds (a crystal in a reactor is not in anyone's inventory). Devices that hold
    things set `is_container` (and `is_open`) like any container.
    """

    default_layer = Layer.OBJECTS
    dialogable = True
    movable = False
    passable = False

    def __init__(
        self,
        world: World,
        name: str,
        type_: str,
        materials: list[Material] | None = None,
        variables: Mapping[str, Any] | None = None,
        **attrs: Any,
    ) -> None:
        super().__init__(world, name, type_, materials, **attrs)
        self.states: set[str] = set()
        self.dialog_tree: DialogTree | None = DialogTree(self.states)
        self.dialog_partner: Agent | None = None
        self.history: list[ActionRecord] = []  # devices never act; listed among nearby agents
        if variables:
            self.props.update(variables)

    @property
    def variables(self) -> dict[str, Any]:
        """The device's settings (shared with `props`, which dialog texts are formatted with)."""
        return self.props

    # ---- menu building ----------------------------------------------------------------
    def add_node(self, name: str, text: str, **kwargs: Any) -> None:
        assert self.dialog_tree is not None
        self.dialog_tree.add_node(name, text, **kwargs)

    def add_option(
        self,
        node: str,
        text: str,
        next_node: str,
        *,
        modify: Mapping[str, Number] | None = None,
        clamp: tuple[Number, Number] | None = None,
        requires_states: tuple[str, ...] = (),
        anti_states: tuple[str, ...] = (),
        callback: Callable[[], None] | None = None,
    ) -> None:
        """A menu option. `modify` adds each step to its variable, clamped to `clamp`
        (inclusive), then `on_change` runs; `callback` runs after that."""
        assert self.dialog_tree is not None
        action = callback
        if modify:  # a partial of a method (not a closure), so worlds pickle and deep-copy
            action = partial(self._adjust_then, dict(modify), clamp, callback)
        self.dialog_tree.add_option(node, text, next_node, requires_states, anti_states, action)

    def _adjust_then(
        self, steps: Mapping[str, Number], clamp: tuple[Number, Number] | None, callback: Callable[[], None] | None
    ) -> None:
        self.adjust(steps, clamp)
        if callback is not None:
            callback()

    # ---- behaviour --------------------------------------------------------------------
    def adjust(self, steps: Mapping[str, Number], clamp: tuple[Number, Number] | None = None) -> None:
        """Add `steps` to the named variables (clamped), then let the device react."""
        for key, step in steps.items():
            value = self.props[key] + step
            if clamp is not None:
                value = min(max(value, clamp[0]), clamp[1])
            self.props[key] = value
        self.on_change()

    def on_change(self) -> None:
        """React to a changed setting (default: nothing)."""
