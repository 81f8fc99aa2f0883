"""Typed schema of the text observation (pydantic), for validation, docs and JSON Schema.

The hot path builds plain dicts (observation.py); `Observation.model_validate(obs)` checks one
against this schema, and `Observation.model_json_schema()` documents it for agent builders.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ObjectRef(_Strict):
    uuid: int
    name: str
    description: str


class NearbyObject(_Strict):
    name: str
    description: str
    distance: int = Field(description="Manhattan distance from the agent")
    uuid: int


class AgentLocation(_Strict):
    x: int
    y: int
    faceDirection: str
    directions_you_can_move: list[str]
    directions_blocked: list[str]


class DialogBox(_Strict):
    is_in_dialog: bool
    dialogIn: str | None = None
    dialogOptions: dict[str, str] | None = None


class FeedPost(_Strict):
    step: int
    author: str
    content: str
    postID: int
    type: str
    title: str | None = None


class ArticleRef(_Strict):
    step: int
    postID: int
    title: str
    author: str


class DiscoveryFeedView(_Strict):
    description: str
    posts: list[FeedPost]
    scientific_articles: list[ArticleRef]


class NearbyAgents(_Strict):
    description: str
    list_of_agents: dict[str, list[dict[str, object]]]


class NearbyObjects(_Strict):
    note: str
    distance: int
    objects: dict[str, list[NearbyObject]]


class TaskProgress(_Strict):
    taskName: str
    description: str
    completed: bool
    completedSuccessfully: bool | None  # None: a sealed instance (its outcome is the evaluator's)


class ActionInfo(_Strict):
    name: str
    args: list[str]
    description: str


class Observation(_Strict):
    """One agent's observation (keys as in the original DiscoveryWorld, plus
    `teleportLocations` and `availableActions`)."""

    accessibleEnvironmentObjects: list[ObjectRef]
    agentLocation: AgentLocation
    dialog_box: DialogBox
    discoveryFeed: DiscoveryFeedView
    extended_action_message: str
    inventoryObjects: list[ObjectRef]
    lastActionMessage: str
    nearbyAgents: NearbyAgents
    nearbyObjects: NearbyObjects
    taskProgress: list[TaskProgress]
    world_steps: int
    teleportLocations: list[str] | None = None
    availableActions: list[ActionInfo]

    def to_json(self) -> str:
        """Compact JSON form (no whitespace; absent optional keys dropped)."""
        return self.model_dump_json(exclude_none=True)
