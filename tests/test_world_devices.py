"""NPC devices (world/devices.py): machines placed like objects and operated through a dialog
menu whose options change numeric settings with clamping."""

from __future__ import annotations

from typing import Any

from discoverylab.world.actions import ActionExecutor
from discoverylab.world.agent import Agent
from discoverylab.world.catalog import place, spawn
from discoverylab.world.devices import Device
from discoverylab.world.objects import ActionResult, WorldObject
from discoverylab.world.observation import build_observation
from discoverylab.world.world import World


class Dial(Device):
    """A test device: a level 0..10 stepped by 5 or 1; it lights up at exactly 7."""

    is_container = True
    is_open = True

    def __init__(self, world: World) -> None:
        super().__init__(world, "dial", "dial", variables={"level": 3})
        self.changes = 0
        self.add_node("root", "The level is {level}.")
        self.add_option("root", "Up 5", "root", modify={"level": 5}, clamp=(0, 10))
        self.add_option("root", "Down 1", "root", modify={"level": -1}, clamp=(0, 10))
        self.add_option("root", "Exit", "bye")
        self.add_node("bye", "Dial off.")

    def on_change(self) -> None:
        self.changes += 1
        self.activated = self.props["level"] == 7


def _setup() -> tuple[World, Agent, ActionExecutor, Dial]:
    world = World(0)
    for x in range(6):
        for y in range(6):
            place(world, "grass", x, y)
    agent = Agent(world, "agent", 2, 2, facing="south")
    dial = Dial(world)
    place(world, "table", 2, 3).add(dial)
    return world, agent, ActionExecutor(agent), dial


def _do(ex: ActionExecutor, action: str, arg1: Any = None, arg2: Any = None) -> ActionResult:
    packet: dict[str, Any] = {"action": action}
    for key, arg in (("arg1", arg1), ("arg2", arg2)):
        if arg is not None:
            packet[key] = arg.uuid if isinstance(arg, WorldObject) else arg
    return ex.execute(packet)


def _box(agent: Agent) -> dict[str, Any]:
    return build_observation(agent, [], "")["dialog_box"]


def test_talk_opens_the_menu_with_the_settings_formatted_into_the_text() -> None:
    _, agent, ex, dial = _setup()
    result = _do(ex, "TALK", dial)
    assert result.success and "dial said: The level is 3." in result.message
    box = _box(agent)
    assert box == {"is_in_dialog": True, "dialogIn": "The level is 3.",
                   "dialogOptions": {"1": "Up 5", "2": "Down 1", "3": "Exit"}}  # fmt: skip
    assert agent.history[-1].action == "TALK" and agent.history[-1].arg1 is dial


def test_options_step_settings_with_clamping_and_the_device_reacts_at_once() -> None:
    _, agent, ex, dial = _setup()
    _do(ex, "TALK", dial)
    before = dial.changes
    result = ex.execute({"chosen_dialog_option_int": 1})
    assert result.success and result.message.endswith("dial said: The level is 8.")
    assert dial.changes == before + 1 and not dial.activated
    ex.execute({"chosen_dialog_option_int": 1})  # 13 clamps to 10
    assert dial.props["level"] == 10 and _box(agent)["dialogIn"] == "The level is 10."
    for _ in range(3):
        ex.execute({"chosen_dialog_option_int": 2})
    assert dial.props["level"] == 7 and dial.activated
    assert dial.variables is dial.props
    result = ex.execute({"chosen_dialog_option_int": 3})
    assert result.message.endswith("dial said: Dial off.")
    assert (
        agent.dialog_partner is None
        and dial.dialog_partner is None
        and _box(agent) == {"is_in_dialog": False}
    )
    assert dial.props["level"] == 7  # settings persist between conversations
    _do(ex, "TALK", dial)
    assert _box(agent)["dialogIn"] == "The level is 7."


def test_use_on_a_device_opens_its_menu_and_is_recorded_as_the_talk_that_ran() -> None:
    _, agent, ex, dial = _setup()
    flag = spawn(world := agent.world, "flag")
    agent.add(flag)
    result = _do(ex, "USE", dial, flag)
    assert result.success and "The level is 3." in result.message
    assert _box(agent)["is_in_dialog"]  # visible at once (the original hid USE-opened menus)
    assert [(r.action, r.arg1) for r in agent.history] == [("TALK", dial)]
    ex.execute({"chosen_dialog_option_int": 3})
    # With the arguments swapped (the flag is not usable), the device's menu opens as well.
    result = _do(ex, "USE", flag, dial)
    assert result.success and agent.dialog_partner is dial
    assert agent.history[-1].action == "TALK" and agent.history[-1].arg1 is dial
    assert world.step == 0


def test_an_instrument_used_on_a_device_measures_it_rather_than_opening_the_menu() -> None:
    _, agent, ex, dial = _setup()
    thermometer = spawn(agent.world, "thermometer")
    agent.add(thermometer)
    result = _do(ex, "USE", thermometer, dial)
    assert result.success and "temperature of the dial" in result.message
    assert agent.dialog_partner is None and agent.history[-1].action == "USE"


def test_a_device_is_immovable_and_what_it_holds_is_not_held_by_an_agent() -> None:
    _, agent, ex, dial = _setup()
    assert not _do(ex, "PICKUP", dial).success
    coin = spawn(agent.world, "coin")
    agent.add(coin)
    assert coin.held_by_agent
    result = _do(ex, "PUT", coin, dial)
    assert result.success and result.message == "I put the coin into the dial."
    assert coin.parent is dial and not coin.held_by_agent
    assert coin.describe() == f"coin (in dial [uuid: {dial.uuid}])"
    assert _do(ex, "PICKUP", coin).success and coin.held_by_agent


def test_devices_are_listed_with_the_nearby_agents_and_an_empty_history() -> None:
    _, agent, ex, dial = _setup()
    _do(ex, "TALK", dial)
    obs = build_observation(agent, [], "")
    assert obs["nearbyAgents"]["list_of_agents"] == {f"dial uuid {dial.uuid}": []}


def test_a_device_talking_to_one_agent_is_busy_for_another() -> None:
    world, agent, ex, dial = _setup()
    other = Agent(world, "visitor", 3, 3, facing="west")
    _do(ex, "TALK", dial)
    result = ActionExecutor(other).execute({"action": "TALK", "arg1": dial.uuid})
    assert not result.success and "busy talking to (agent)" in result.message
