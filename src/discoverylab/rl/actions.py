"""Discrete actions with masks: `Discrete(N)` over the parser's actions on object slots.

The layout (see `DiscreteActions.layout`): 15 argument-less actions (moves, rotations, wait,
feed), then for each object slot PICKUP, DROP, OPEN, CLOSE, ACTIVATE, DEACTIVATE, TALK, EAT,
READ, TELEPORT_TO_OBJECT, then PUT and USE over every ordered slot pair, then one
TELEPORT_TO_LOCATION per known location (sorted by name) and one dialog choice per option.
`info["action_mask"]` and `action_masks()` (sb3-contrib's MaskablePPO) mark exactly the
actions the parser accepts right now; a masked-out action still runs and fails politely.
"""

from __future__ import annotations

from operator import index as _as_index
from operator import itemgetter
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from discoverylab.rl.mask_book import known_mask
from discoverylab.rl.view import MAX_COUNT, Slot, SlotData, slot_data
from discoverylab.world.action_input import whole_option
from discoverylab.world.unpickle import CopiedWhole, FastState

FIXED: tuple[dict[str, Any], ...] = (
    *({"action": "MOVE_DIRECTION", "arg1": d} for d in ("north", "east", "south", "west")),
    *({"action": "ROTATE_DIRECTION", "arg1": d} for d in ("north", "east", "south", "west")),
    {"action": "MOVE_FORWARD"},
    {"action": "MOVE_BACKWARD"},
    {"action": "ROTATE_CW"},
    {"action": "ROTATE_CCW"},
    {"action": "WAIT"},
    {"action": "DISCOVERY_FEED_GET_UPDATES"},
    {"action": "DISCOVERY_FEED_GET_ARTICLES"},
)
SINGLE = ("PICKUP", "DROP", "OPEN", "CLOSE", "ACTIVATE", "DEACTIVATE", "TALK", "EAT", "READ", "TELEPORT_TO_OBJECT")
PAIR = ("PUT", "USE")
_REACH = itemgetter(2)  # a slot's "within reach" (`SlotData`)


class DiscreteActions(gym.Wrapper[Any, Any, Any, Any], FastState, CopiedWhole):
    """Map `Discrete(N)` to parser actions over object slots, with exact action masks.

    Args:
        env: a `DiscoveryWorldEnv` (possibly wrapped).
        object_slots: number of object slots (inventory, reachable, then in view); default: the
            symbolic observation's (the actions name the slots it shows), else 12.
        locations: number of teleport-location slots.
        dialog_options: number of dialog-choice slots.
    """

    def __init__(self, env: gym.Env[Any, Any], object_slots: int | None = None, locations: int = 8,
                 dialog_options: int = 10, shaping: Any = None) -> None:  # fmt: skip
        encoder = getattr(env.unwrapped, "symbolic", None)  # the symbolic encoder builds the same slots
        shown = None if encoder is None else encoder.num_slots
        object_slots = whole_option("object_slots", (shown or 12) if object_slots is None else object_slots, 0, MAX_COUNT)
        if shown is not None and object_slots != shown:  # else the mask offers objects the policy never sees
            raise ValueError(f"object_slots={object_slots}, but the symbolic observation shows {shown} slots and the "
                             "discrete actions name those; leave object_slots out or pass the same number.")  # fmt: skip
        locations = whole_option("locations", locations, 0, MAX_COUNT)
        dialog_options = whole_option("dialog_options", dialog_options, 0, MAX_COUNT)
        super().__init__(env)
        self.shaping = shaping  # an `ExploreShaping` (reward="explore"), or None
        self.num_slots = object_slots
        self.num_locations = locations
        self.num_dialog = dialog_options
        self.base_single = len(FIXED)
        self.base_pair = self.base_single + len(SINGLE) * object_slots
        self.base_location = self.base_pair + len(PAIR) * object_slots * object_slots
        self.base_dialog = self.base_location + locations
        self.n = self.base_dialog + dialog_options
        self.action_space: spaces.Space[Any] = spaces.Discrete(self.n)
        self.slot_data: list[SlotData] = []  # the current slots as plain tuples (`Slot`'s fields)
        self._slots: list[Slot] | None = []
        self._mask = np.zeros(self.n, dtype=bool)
        self._masks: dict[tuple[Any, ...], np.ndarray] = {}  # mask per (reach, teleportable, locations)
        self.mask_out: np.ndarray | None = None  # `BatchedVectorEnv`'s shared row: masks are written there
        self._base = env.unwrapped
        self._encoder = encoder
        self._by_counts: dict[tuple[int, int, int], np.ndarray] = {}  # (slots, within reach, locations) -> mask
        self._layouts = tuple(self.layout(i) for i in range(self.n))  # `layout` per index, for `packet`

    # ---- the layout -------------------------------------------------------------------
    def layout(self, index: int) -> tuple[str, tuple[int, ...]]:
        """(action name, slot indices) of a discrete action, e.g. ("PUT", (0, 3))."""
        index = self._index(index)
        if not 0 <= index < self.n:
            raise ValueError(f"Action index {index} outside 0..{self.n - 1}.")
        if index < self.base_single:
            return str(FIXED[index]["action"]), ()
        if index < self.base_pair:
            kind, slot = divmod(index - self.base_single, self.num_slots)
            return SINGLE[kind], (slot,)
        if index < self.base_location:
            kind, rest = divmod(index - self.base_pair, self.num_slots * self.num_slots)
            return PAIR[kind], divmod(rest, self.num_slots)
        if index < self.base_dialog:
            return "TELEPORT_TO_LOCATION", (index - self.base_location,)
        return "DIALOG", (index - self.base_dialog,)

    def packet(self, index: int) -> dict[str, Any]:
        """The parser action (a dict) that discrete action `index` stands for right now; an
        empty slot gives an action naming no object (it fails to parse)."""
        try:  # inline, not `_index`: `step` comes here for every object action
            number = _as_index(index)
        except TypeError:
            raise self._not_an_action(index) from None
        if index is True or index is False:
            raise self._not_an_action(index)
        index = number
        if 0 <= index < self.base_single:
            return dict(FIXED[index])
        name, args = self._layouts[index] if 0 <= index < self.n else self.layout(index)  # (which raises)
        if name == "DIALOG":
            return {"chosen_dialog_option_int": args[0] + 1}
        if name == "TELEPORT_TO_LOCATION":
            names = self._locations()
            return {"action": name, "arg1": names[args[0]] if args[0] < len(names) else ""}
        slots = self.slot_data
        count = len(slots)
        first = args[0]
        packet: dict[str, Any] = {"action": name, "arg1": slots[first][0].uuid if first < count else ""}
        if len(args) == 2:
            second = args[1]
            packet["arg2"] = slots[second][0].uuid if second < count else ""
        return packet

    def _index(self, action: Any) -> int:
        """`action` as an int: `operator.index`, not `int`, which made 3.7 or "3" action 3; a
        bool (one of a mask's values, say) is no action, though Python's bool is an int."""
        try:
            index = _as_index(action)
        except TypeError:
            raise self._not_an_action(action) from None
        if action is True or action is False:
            raise self._not_an_action(action)
        return index

    def _not_an_action(self, action: Any) -> ValueError:
        """The one error for a non-integer action, whether stepped, laid out or made a packet."""
        return ValueError(f"A discrete action is a whole number in 0..{self.n - 1}, not {action!r}.")

    @property
    def slots(self) -> list[Slot]:
        """The object slots the actions name right now."""
        if self._slots is None:
            self._slots = [Slot(*data) for data in self.slot_data]
        return self._slots

    # ---- gymnasium API ----------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._refresh(info)
        if self.shaping is not None:
            self.shaping.reset(self._base)
        return obs, info

    def step(self, action: int) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        try:  # `operator.index`, not `int`: 3.7 or "3" would silently become action 3
            index = _as_index(action)
        except TypeError:
            raise self._not_an_action(action) from None
        if action is True or action is False:  # True played action 1 (identity checks: a few ns)
            raise self._not_an_action(action)
        # A move, turn, wait or feed action is one of `FIXED`'s packets itself, not a copy: the
        # executor only reads a packet (`parse_action` copies one only to convert its values).
        packet = FIXED[index] if 0 <= index < self.base_single else self.packet(index)
        if self.shaping is None:
            obs, reward, terminated, truncated, info = self.env.step(packet)
        else:
            allowed = 0 <= index < self.n and bool(self._mask[index])
            obs, reward, terminated, truncated, info = self.env.step(packet)
            reward = float(reward) + self.shaping.step(self._base, packet, allowed)
        self._refresh(info)
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The current mask (a copy): True for every action the parser accepts now."""
        return self._mask.copy()

    # ---- masks ------------------------------------------------------------------------
    def _locations(self) -> list[str]:
        world = self._base.world  # type: ignore[attr-defined]
        return sorted(world.teleports)[: self.num_locations]

    def _refresh(self, info: dict[str, Any]) -> None:
        base = self._base
        agent = base.scenario.player  # type: ignore[attr-defined]
        encoder = self._encoder
        if encoder is not None:
            data = encoder.slot_data  # built this step, or kept from a step with the same view
            if data is not self.slot_data:
                self.slot_data, self._slots = data, None
            # The slots' mask follows from how many there are, how many (the first ones) lie
            # within reach (`SymbolicEncoder.slot_reach`) and the locations: the encoder marked
            # their objects seen and keeps no slot for an object that left the world.
            mask = known_mask(encoder, agent, self._by_counts)  # (compiled: `mask_book`)
            if mask is None and agent.dialog_partner is None:  # counts not seen yet
                counts = (len(data), encoder.slot_reach, len(agent.world.teleports))
                mask = self._world_mask(agent, data, True)
                if len(self._by_counts) < 4096:
                    self._by_counts[counts] = mask
            if mask is not None:
                self._mask = mask  # `_publish`, inline (every step)
                if self.mask_out is None:
                    info["action_mask"] = mask.copy()
                else:
                    self.mask_out[:] = mask
                    info["action_mask"] = self.mask_out
                return
        else:
            self.slot_data, self._slots = slot_data(agent, base.radius, self.num_slots), None  # type: ignore[attr-defined]
        partner = agent.dialog_partner
        if partner is not None and partner.dialog_tree is not None:
            mask = self._cached_mask(("dialog", min(len(partner.dialog_tree.visible_options()), self.num_dialog)))
        else:
            mask = self._world_mask(agent, self.slot_data, False)
        self._publish(mask, info)

    def _publish(self, mask: np.ndarray, info: dict[str, Any]) -> None:
        """Make `mask` current: a copy in `info`, or written into `mask_out` (the shared row)."""
        self._mask = mask
        if self.mask_out is not None:
            self.mask_out[:] = mask
            info["action_mask"] = self.mask_out
        else:
            info["action_mask"] = mask.copy()

    def _world_mask(self, agent: Any, slots: list[SlotData], fresh: bool) -> np.ndarray:
        """The mask outside a dialog; `fresh`: the symbolic encoder built `slots` (so every
        slot's object is in the world and seen)."""
        if self._base.teleport:  # type: ignore[attr-defined]
            world, seen = agent.world, agent.seen
            objects = world.objects
            if fresh:
                teleportable = (True,) * len(slots)
            else:
                teleportable = tuple([s[0].uuid in objects and s[0].uuid in seen for s in slots])
            locations = min(len(world.teleports), self.num_locations)
        else:
            teleportable, locations = (), -1
        return self._cached_mask((tuple(map(_REACH, slots)), teleportable, locations))

    def _cached_mask(self, key: tuple[Any, ...]) -> np.ndarray:
        mask = self._masks.get(key)
        if mask is None:  # a handful of distinct masks per episode: build each once
            mask = self._build_mask(key)
            if len(self._masks) < 4096:
                self._masks[key] = mask
        return mask

    def _build_mask(self, key: tuple[Any, ...]) -> np.ndarray:
        mask = np.zeros(self.n, dtype=bool)
        if key[0] == "dialog":
            mask[self.base_dialog : self.base_dialog + key[1]] = True
        else:
            self._mask_world(mask, *key)
        return mask

    def _mask_world(self, mask: np.ndarray, accessible: tuple[bool, ...], teleportable: tuple[bool, ...], locations: int) -> None:
        mask[: self.base_single] = True
        k = self.num_slots
        n = len(accessible)
        reach = np.zeros(k, dtype=bool)
        reach[:n] = accessible
        for kind, name in enumerate(SINGLE):
            start = self.base_single + kind * k
            if name == "TELEPORT_TO_OBJECT":
                mask[start : start + len(teleportable)] = teleportable
            else:
                mask[start : start + k] = reach
        pairs = np.logical_and.outer(reach, reach).ravel()
        for kind in range(len(PAIR)):
            start = self.base_pair + kind * k * k
            mask[start : start + k * k] = pairs
        if locations > 0:
            mask[self.base_location : self.base_location + locations] = True
