"""What an agent can reach: the objects its actions may name (its inventory, its own tile and
the tile it faces). The executor resolves arguments with it; the observations and the RL masks
list the same objects, so they share one definition."""

from __future__ import annotations

from discoverylab.world.agent import DIRECTIONS, Agent
from discoverylab.world.objects import WorldObject


def accessible_objects(agent: Agent) -> dict[int, WorldObject]:
    """What action arguments may name: the inventory, plus everything visible on the agent's
    own tile and on the tile it faces (other agents and their open inventories included)."""
    world = agent.world
    found: dict[int, WorldObject] = {obj.uuid: obj for obj in agent.inventory()} if agent.contents else {}
    x, y = agent.x, agent.y
    dx, dy = DIRECTIONS[agent.facing]
    size = world.size
    for obj in world.objects_at(x, y):
        if obj is not agent and obj.uuid not in found:
            found[obj.uuid] = obj
    x, y = x + dx, y + dy
    if 0 <= x < size and 0 <= y < size:
        for obj in world.objects_at(x, y):
            if obj is not agent and obj.uuid not in found:
                found[obj.uuid] = obj
    return found


def accessible_object(agent: Agent, uid: int) -> WorldObject | None:
    """`accessible_objects(agent).get(uid)` without building the dict: the same places in the
    same order, stopping at the first object with that UUID."""
    if agent.contents:
        for obj in agent.inventory():
            if obj.uuid == uid:
                return obj
    world = agent.world
    x, y = agent.x, agent.y
    for obj in world.objects_at(x, y):
        if obj.uuid == uid and obj is not agent:
            return obj
    dx, dy = DIRECTIONS[agent.facing]
    x, y = x + dx, y + dy
    if 0 <= x < world.size and 0 <= y < world.size:
        for obj in world.objects_at(x, y):
            if obj.uuid == uid and obj is not agent:
                return obj
    return None
