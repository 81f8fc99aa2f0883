"""Small Skills: Discovery Feed."""

from __future__ import annotations

import re

from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.explore import Explorer
from discoverylab.scenarios.registry import register
from discoverylab.scenarios.unit._common import (
    VILLA_CENTRE,
    outdoor_around,
    put_named_in,
    score_pick_and_place,
    start_inside,
    villa,
    villa_objects_and_container,
)
from discoverylab.scenarios.unit._levels import PEOPLE
from discoverylab.world.agent import Agent
from discoverylab.world.feed import read_posts

POSTERS = PEOPLE
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
    Difficulty knobs: the level draws where the villa stands, the objects, the container, the
    posters (from 24 names), the order of the posts and the start cell (one of the six central
    cells). Easy: three posts (three objects). Challenge: the 9x7 villa of Pick and Place's
    Challenge (every free tile joined), seven posts, both a pot and a jar (every post names the
    same container) and the start is any free cell of the villa.
    Registered ids: discoverylab/DiscoveryFeedTest-Easy-v0, discoverylab/DiscoveryFeedTest-Normal-v0,
    discoverylab/DiscoveryFeedTest-Challenge-v0.
    """

    task_id = "DiscoveryFeedTest"
    title = "Small Skills: Discovery Feed Test"
    suite = "unit"
    task_name = "SmallSkillsDiscoveryFeedTask"
    difficulties = ("easy", "normal", "challenge")

    def build(self) -> Agent:
        world = self.world
        self.burn()
        site = villa(self, "Discovery Feed Station")
        hard = self.difficulty == "challenge"
        count = {"easy": 3, "normal": 5, "challenge": 7}[self.difficulty]
        objects, self.container = villa_objects_and_container(self, site, count, both_containers=hard)
        self.target = objects[0]
        names = self.shuffled(POSTERS)
        self.poster = names[0]
        posts = [
            (name, f"Please pick up the {obj.name} and place it in the {self.container.name}.")
            for name, obj in zip(names[:count], objects, strict=True)
        ]
        for author, content in self.shuffled(posts):
            world.feed.add_update(0, author, content)
        outdoor_around(self, site)
        start = start_inside(self, site, None if hard else VILLA_CENTRE)
        self.pick = self.scorecard.add("Pick up the object", f"Pick up the {self.target.name}.", 1)
        self.place = self.scorecard.add(
            "Place the object", f"Place the {self.target.name} in the {self.container.name}.", 1
        )
        return Agent(world, "agent", *start)

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
        ex = Explorer(obs)
        feed = yield from ex.checked(ot.act("DISCOVERY_FEED_GET_UPDATES"))
        posts = dict(read_posts(feed["lastActionMessage"]))
        request = ot.need(_REQUEST.match(posts.get(poster, "")), f"a request posted by {poster}")
        item, container = request[1], request[2]
        yield from put_named_in(ex, item, container)
