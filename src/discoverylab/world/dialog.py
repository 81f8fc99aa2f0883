"""Dialog trees: NPC conversations as nodes with state-filtered options."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from mypy_extensions import mypyc_attr

from discoverylab.world.unpickle import FastState


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
@dataclass(slots=True)
class DialogOption:
    text: str
    next: str
    requires_states: tuple[str, ...] = ()
    anti_states: tuple[str, ...] = ()
    callback: Callable[[], None] | None = None


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
@dataclass(slots=True)
class DialogNode:
    name: str
    text: str
    options: list[DialogOption] = field(default_factory=list)
    states_to_add: tuple[str, ...] = ()
    states_to_remove: tuple[str, ...] = ()


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
class DialogTree(FastState):
    """A conversation graph. Entering a node updates the owner's states; options can require or
    forbid owner states, which is how menus change over the conversation."""

    def __init__(self, owner_states: set[str], root: str = "root") -> None:
        self.nodes: dict[str, DialogNode] = {}
        self.root = root
        self.current = root
        self._states = owner_states

    def add_node(
        self,
        name: str,
        text: str,
        states_to_add: tuple[str, ...] = (),
        states_to_remove: tuple[str, ...] = (),
    ) -> DialogNode:
        node = DialogNode(name, text, [], states_to_add, states_to_remove)
        self.nodes[name] = node
        return node

    def add_option(
        self,
        node: str,
        text: str,
        next_node: str,
        requires_states: tuple[str, ...] = (),
        anti_states: tuple[str, ...] = (),
        callback: Callable[[], None] | None = None,
    ) -> None:
        self.nodes[node].options.append(DialogOption(text, next_node, requires_states, anti_states, callback))

    def _enter(self, name: str) -> DialogNode:
        node = self.nodes[name]
        self.current = name
        self._states.update(node.states_to_add)
        self._states.difference_update(node.states_to_remove)
        return node

    def start(self) -> DialogNode:
        return self._enter(self.root)

    def node(self) -> DialogNode:
        return self.nodes[self.current]

    def visible_options(self) -> list[DialogOption]:
        states = self._states
        return [
            opt
            for opt in self.node().options
            if all(s in states for s in opt.requires_states) and not any(s in states for s in opt.anti_states)
        ]

    def choose(self, index: int) -> DialogNode:
        """Pick the 1-based visible option; the caller validates the index first."""
        option = self.visible_options()[index - 1]
        if option.callback is not None:
            option.callback()
        return self._enter(option.next)

    def reset(self) -> None:
        self.current = self.root
