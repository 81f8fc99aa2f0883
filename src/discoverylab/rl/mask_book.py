"""The look-up `DiscreteActions._refresh` makes every step, in a module the compiled engine
compiles (`make native`, `native.MODULES`): the wrapper is a `gymnasium.Wrapper` and stays
interpreted, and from interpreted code each read of a compiled object's attribute (the
encoder's slots, the agent's dialog partner, its world's locations) cost ~200-300
instructions, ~2k a step for this look-up; compiled, a few each. The pure engine runs the
same function (one call more than the lines it replaces)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from discoverylab.rl.symbolic import SymbolicEncoder
    from discoverylab.world.agent import Agent


def known_mask(encoder: SymbolicEncoder, agent: Agent, by_counts: dict[Any, Any]) -> Any:
    """The mask of the encoder's current slots from `by_counts`, keyed by (slots, slots within
    reach, locations): their mask follows from those (`DiscreteActions._refresh`); None in a
    dialog and for counts not seen yet (the wrapper's own cases)."""
    if agent.dialog_partner is not None:
        return None
    return by_counts.get((len(encoder.slot_data), encoder.slot_reach, len(agent.world.teleports)))
