"""Anti-gold trajectories and rules of the dialog, giving, measuring, feed and NPC unit tasks.

The oracle tests (test_unit_tasks.py) show each task can be solved; these show the wrong moves
are scored as the task descriptions say. They peek at the scenario to know the answers.
"""

from __future__ import annotations

from typing import Any

import pytest

from discoverylab.scenarios.unit.moving_agents import WEATHER
from discoverylab.world.objects import WorldObject
from env_driver import EnvDriver


class Driver(EnvDriver):
    def __init__(self, task: str, seed: int = 0) -> None:
        super().__init__(task, seed=seed, max_steps=300)

    def reach(self, obj: WorldObject) -> None:
        """Teleport beside a (possibly moving) object until it is within reach."""
        for _ in range(20):
            self.do("TELEPORT_TO_OBJECT", obj)
            if any(e["uuid"] == obj.uuid for e in self.obs["accessibleEnvironmentObjects"]):
                return
        raise AssertionError(f"could not reach {obj}")

    @property
    def card(self) -> dict[str, Any]:
        return dict(self.scenario.scorecard.to_dict())

    def scores(self) -> list[int]:
        return [item["score"] for item in self.card["scoreCard"]]


def test_dialog_wrong_answer_fails_the_task() -> None:
    """A wrong choice fails the task at once (the original let a new TALK start over, so trying
    every option passed); "Exit" is not a wrong choice."""
    d = Driver("DialogTest")
    sally = d.scenario.sally
    assert d.do("TELEPORT_TO_OBJECT", sally).startswith("I teleported")
    d.do("TALK", sally)
    d.choose("Exit")
    assert not d.card["completed"]
    d.do("TALK", sally)
    wanted = d.obs["dialog_box"]["dialogIn"].split("`")[1]
    wrong = next(v for v in d.obs["dialog_box"]["dialogOptions"].values() if v not in (wanted, "Exit"))
    assert "not the correct answer" in d.choose(wrong)
    assert d.scores() == [1, 0, 0, 0] and d.card["completed"] and not d.card["completedSuccessfully"]


def test_dialog_right_answers_succeed() -> None:
    d = Driver("DialogTest")
    sally = d.scenario.sally
    assert d.do("TELEPORT_TO_OBJECT", sally).startswith("I teleported")
    d.do("TALK", sally)
    for _ in range(3):
        d.choose(d.obs["dialog_box"]["dialogIn"].split("`")[1])
    assert d.scores() == [1, 1, 1, 1] and d.card["completedSuccessfully"]


@pytest.mark.parametrize("mistake", ["distractor", "other object"])
def test_pick_and_give_failures(mistake: str) -> None:
    d = Driver("PickAndGiveTest")
    sc = d.scenario
    if mistake == "distractor":
        d.take(sc.target)
        receiver = sc.npcs[1]
        item = sc.target
    else:
        item = next(o for o in d.scenario.world.objects.values() if o.type == "table" and o.contents
                    and o.contents[0] is not sc.target).contents[0]  # fmt: skip
        d.take(item)
        receiver = sc.recipient
    assert d.do("TELEPORT_TO_OBJECT", receiver).startswith("I teleported")
    assert d.do("PUT", item, receiver) == f"I gave the {item.name} to {receiver.name}."
    assert d.card["completed"] and not d.card["completedSuccessfully"]


def test_measurement_place_first_then_measure() -> None:
    d = Driver("InstrumentMeasurementTest", seed=1)
    sc = d.scenario
    d.take(sc.target)
    d.do("TELEPORT_TO_OBJECT", sc.pot)
    assert d.do("PUT", sc.target, sc.pot).startswith("I put")
    assert d.scores() == [1, 0, 1] and not d.card["completed"]  # placed, but not measured yet
    d.take(sc.instrument)
    d.do("TELEPORT_TO_OBJECT", sc.pot)
    assert d.do("USE", sc.instrument, sc.target).startswith("You use")
    assert d.scores() == [1, 1, 1] and d.card["completedSuccessfully"]


def test_measurement_wrong_pot_fails() -> None:
    d = Driver("InstrumentMeasurementTest", seed=2)
    sc = d.scenario
    wrong = next(p for p in sc.pots if p is not sc.pot)
    d.take(sc.target)
    d.do("TELEPORT_TO_OBJECT", wrong)
    assert d.do("PUT", sc.target, wrong).startswith("I put")
    assert d.card["completed"] and not d.card["completedSuccessfully"]


def test_measurement_readings_are_the_drawn_values() -> None:
    d = Driver("InstrumentMeasurementTest", seed=3)
    target = d.scenario.target
    material = target.materials[0]
    d.take(target)
    for kind, expected in (
        ("densitometer", f"approximately {target.density:.3f} grams"),
        ("PH meter", f"PH of {material.ph:.1f}."),
        ("thermometer", f"temperature of {target.temperature_c:.2f} degrees"),
        ("spectrometer", f"Channel 3: {material.spectrum[2]:.2f}"),
        ("microscope", material.microscope),
    ):
        tool = next(o for o in d.scenario.world.objects.values() if o.type == kind)
        d.take(tool)
        assert expected in d.do("USE", tool, target)


def test_discovery_feed_distractor_fails() -> None:
    d = Driver("DiscoveryFeedTest")
    sc = d.scenario
    poster_posts = [p for p in sc.world.feed.updates if p.author == sc.poster]
    assert len(poster_posts) == 1 and sc.target.name in poster_posts[0].content
    other = next(o for o in sc.world.objects.values() if o.type == "table" and o.contents
                 and o.contents[0] not in (sc.target, sc.container)).contents[0]  # fmt: skip
    d.take(other)
    d.do("TELEPORT_TO_OBJECT", sc.container)
    assert d.do("PUT", other, sc.container).startswith("I put")
    assert d.card["completed"] and not d.card["completedSuccessfully"]


def test_moving_agents_warned_npc_walks_home_busy() -> None:
    d = Driver("MovingAgentsTest")
    npc = d.scenario.npcs[0]
    d.scenario.player.seen.add(npc.uuid)  # skip the search; the oracle test covers finding them
    d.reach(npc)
    d.do("TALK", npc)
    d.choose(WEATHER[d.scenario.weather])
    d.choose("Safe travels")
    assert d.scores() == [1]
    d.reach(npc)
    assert "busy" in d.do("TALK", npc)
    for _ in range(60):
        if not npc.is_busy():
            break
        d.do("WAIT")
    assert not npc.is_busy()
    world = d.scenario.world
    signs = [o.document for o in world.top_level_at(npc.x - 1, npc.y + 1) if o.type == "sign"]
    assert signs == ["House 0"]  # home: inside its own house, just north of the door
    d.reach(npc)
    d.do("TALK", npc)
    assert list(d.obs["dialog_box"]["dialogOptions"].values()) == [
        "Oh right, I already spoke to you about the rain. Nevermind."
    ]
