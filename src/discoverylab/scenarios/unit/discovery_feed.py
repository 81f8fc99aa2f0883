"""Small Skills: Discovery Feed."""

from __future__ import annotations

import re

from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.registry import register
from discoverylab.scenarios.unit._common import (
    outdoor_base,
    score_pick_and_place,
    villa,
    villa_objects_and_container,
)
from discoverylab.world.agent import Agent

POSTERS = ("Hari", "Bayta", "Salvor", "Arkady", "Hober", "Wanda", "Gaal", "Dors")
_POST = re.compile(r"Post (\d+)\nPosted by (.+?) on Step \d+:\n(.*?)\n", re.S)
_REQUEST = re.compile(r"Please pick up the (.+) and place it in the (.+)\.$")


@register
class DiscoveryFeedTest(Scenario):
    """Read the DiscoveryFeed and follow the instructions of one named poster.

    Description: the villa of Pick and Place, renamed "Discovery Feed Station": five objects
    on tables and a pot or a jar. At step 0 five people post "Please pick up the X and place it
    in the <container>." for five different objects; the task names the one poster to obey.
    Actions: DISCOVERY_FEED_GET_UPDATES (or read the posts shown in the observation during the
    first steps), PICKUP, PUT.
    Observation: standard text observation; `discoveryFeed.posts` shows the posts of the last
    three steps.
    Scoring: Pick up the object /1, Place the object /1. Putting anything else into the
    container first ends the task unsuccessfully.
    Difficulty knobs: none (Normal only); the seed picks objects, container, posters and order.
    Registered ids: discoverylab/DiscoveryFeedTest-Normal-v0.
    """

    task_id = "DiscoveryFeedTest"
    title = "Small Skills: Discovery Feed Test"
    suite = "unit"
    task_name = "SmallSkillsDiscoveryFeedTask"

    def build(self) -> Agent:
        world = self.world
        self.burn()
        outdoor_base(world)
        villa(world, "Discovery Feed Station")
        objects, self.container = villa_objects_and_container(self)
        self.target = objects[0]
        names = self.shuffled(POSTERS)
        self.poster = names[0]
        posts = [
            (name, f"Please pick up the {obj.name} and place it in the {self.container.name}.")
            for name, obj in zip(names[:5], objects[:5], strict=True)
        ]
        for author, content in self.shuffled(posts):
            world.feed.add_update(0, author, content)
        world.teleports["initial location"] = (18, 12)
        self.pick = self.scorecard.add("Pick up the object", f"Pick up the {self.target.name}.", 1)
        self.place = self.scorecard.add(
            "Place the object", f"Place the {self.target.name} in the {self.container.name}.", 1
        )
        return Agent(world, "agent", 18, 12)

    def description(self) -> str:
        return (
            f"Your task is to read the Discovery Feed, and follow the instructions posted by `{self.poster}`, "
            "while ignoring the instructions by the other posters.\n"
        )

    def update(self) -> None:
        score_pick_and_place(self.scorecard, self.target, self.container, self.pick, self.place)

    @staticmethod
    def oracle(obs: ot.Obs) -> OracleGen:
        (poster,) = ot.quoted(ot.task_text(obs))
        where = {entry["name"]: entry["uuid"] for _, entry in ot.nearby_entries(obs)}
        feed = yield from ot.checked(ot.act("DISCOVERY_FEED_GET_UPDATES"))
        posts = {author: content for _, author, content in _POST.findall(feed["lastActionMessage"])}
        request = ot.need(_REQUEST.match(posts.get(poster, "")), f"a request posted by {poster}")
        item, container = request[1], request[2]
        obs = yield from ot.checked(ot.act("TELEPORT_TO_OBJECT", where[item]))
        obs = yield from ot.checked(ot.act("PICKUP", ot.require(ot.find_accessible(obs, item), item)["uuid"]))
        obs = yield from ot.checked(ot.act("TELEPORT_TO_OBJECT", where[container]))
        target = ot.require(ot.find_accessible(obs, container), container)["uuid"]
        yield from ot.checked(ot.act("PUT", where[item], target))
