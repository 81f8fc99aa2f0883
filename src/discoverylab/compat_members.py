"""The original API's members beyond the observe/act/tick loop that its scripts touch.

The original's RandomAgent reads `api.THREAD_ID` and `api.ui[0].currentAgent`; its
HypothesizerAgent and README call `api.world.exportWorldHistoryJSON(logInfo, filename, None,
None, None)`. `OriginalMembers` gives `compat.DiscoveryWorldAPI` those names, on our engine:

* `ui` is one `UserInterfaceView` per user agent (one here), whose `currentAgent` is a read-only
  `AgentView` of the player (name, uuid, location, facing), not the engine object.
* `world` is a `WorldView`: the step counter and the original's history exporters, not the
  engine's `World` (scripts never need more, and a handle on the engine would hand them every
  hidden property).
* The history holds, for every tick, what the user agent perceives: its place and facing, the
  visible objects (uuid, name, type, description) of each tile in its observation window (the
  square `nearbyObjects` covers), its inventory, the feed posts so far and the task's visible
  progress. The original's holds every object's full state and the task scores; a script could
  read the whole map, hidden properties and buried objects from its own export mid-run, so ours
  keeps to what the observation already showed. Recording takes about a millisecond a tick, so it
  is on only where `record_history` is true (the runner's API sets it; set it on an instance
  before `loadScenario` otherwise).
"""

from __future__ import annotations

import io
import json
import operator
import os
import zipfile
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from discoverylab.env import DiscoveryWorldEnv
    from discoverylab.world.agent import Agent
    from discoverylab.world.objects import WorldObject
    from discoverylab.world.world import World

STEPS_PER_PART = 100  # the original splits exports into files of at most 100 steps
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # a fixed timestamp: the same run gives byte-identical zips


class WorldHistoryError(RuntimeError):
    """The world history cannot be exported (nothing recorded, bad log info or file name)."""


class AgentView:
    """Read-only view of a user agent: what a script may print or check about itself."""

    __slots__ = ("_agent",)

    def __init__(self, agent: Agent) -> None:
        self._agent = agent

    @property
    def name(self) -> str:
        return self._agent.name

    @property
    def uuid(self) -> int:
        return self._agent.uuid

    @property
    def location(self) -> tuple[int, int]:
        return self._agent.location()

    @property
    def faceDirection(self) -> str:  # noqa: N802 - the original's observation key
        return self._agent.facing

    def __repr__(self) -> str:
        x, y = self.location
        return f"<Agent {self.name!r} uuid={self.uuid} at ({x}, {y}) facing {self.faceDirection}>"


class UserInterfaceView:
    """Stands for the original's per-agent `UserInterface` (its scripts read `currentAgent`)."""

    __slots__ = ("agentIdx", "currentAgent")

    def __init__(self, agent_idx: int, agent: Agent) -> None:
        self.agentIdx = agent_idx
        self.currentAgent = AgentView(agent)

    def __repr__(self) -> str:
        return f"<UserInterface agentIdx={self.agentIdx} currentAgent={self.currentAgent!r}>"


def _entry(obj: WorldObject) -> dict[str, Any]:
    return {"uuid": obj.uuid, "name": obj.name, "type": obj.type, "description": obj.describe()}


def snapshot(world: World, player: Agent, radius: int, progress: list[dict[str, Any]]) -> dict[str, Any]:
    """One step of world history: what the agent perceives (see the module docstring)."""
    size = world.size
    ax, ay = player.location()
    xs = range(max(0, ax - radius), min(size, ax + radius + 1))
    ys = range(max(0, ay - radius), min(size, ay + radius + 1))
    return {
        "step": world.step,
        "sizeX": size,
        "sizeY": size,
        "agent": {"x": ax, "y": ay, "faceDirection": player.facing},
        "tiles": [{"x": x, "y": y, "objects": [_entry(o) for o in world.objects_at(x, y)]} for x in xs for y in ys],
        "inventory": [_entry(o) for o in player.inventory()],
        "discoveryFeed": [p.public() for p in world.feed.posts if p.step <= world.step],
        "taskProgress": progress,
    }


class WorldView:
    """`api.world`: the step counter and the original's world-history exporters."""

    def __init__(self, world: World, recorder: Callable[[], dict[str, Any]], record: bool) -> None:
        self._world = world
        self._recorder = recorder
        self._history: list[bytes] = []  # one zlib-compressed JSON snapshot per tick
        self.recording = record
        if record:
            world.on_tick.append(self._record)

    @property
    def step(self) -> int:
        return self._world.step

    def _record(self) -> None:
        data = json.dumps(self._recorder(), separators=(",", ":"), sort_keys=True)
        self._history.append(zlib.compress(data.encode("utf-8")))

    def historyLength(self) -> int:  # noqa: N802
        return len(self._history)

    def getWorldHistoryAtStep(self, step: int) -> dict[str, Any] | None:  # noqa: N802
        """The snapshot recorded at tick `step` (0 = the tick `loadScenario` runs), or None."""
        try:
            index = operator.index(step)
        except TypeError:
            return None
        if isinstance(step, bool) or not 0 <= index < len(self._history):
            return None
        result: dict[str, Any] = json.loads(zlib.decompress(self._history[index]))
        return result

    def exportWorldHistoryJSON(self, logInfo: dict[str, Any], filename: str | os.PathLike[str],  # noqa: N802, N803
                               pygameWindow: Any = None, pygame: Any = None,  # noqa: N803
                               lastScreenExportFilename: Any = None) -> list[str]:  # noqa: N803
        """Write the history as the original does: parts of at most 100 steps, each a JSON file
        `{"logInfo": ..., "worldHistory": [...]}` zipped as `NAME.partIofN.zip`. The three display
        arguments (a pygame progress screen in the original) are accepted and ignored. Returns the
        paths written."""
        if not self.recording:
            raise WorldHistoryError(
                "No world history was recorded: set record_history = True on the API before loadScenario "
                "(python -m discoverylab.compat does)."
            )
        if not isinstance(logInfo, dict):
            raise WorldHistoryError(f"logInfo must be a dict (it is written into every part), not {type(logInfo).__name__}.")
        try:
            json.dumps(logInfo)
        except (TypeError, ValueError) as exc:
            raise WorldHistoryError(f"logInfo must be JSON-serialisable: {exc}") from exc
        try:
            name = os.fspath(filename)
        except TypeError:
            name = None
        if not isinstance(name, str) or not name:
            raise WorldHistoryError(f"filename must be a non-empty path, not {filename!r}.")
        base = name[: -len(".json")] if name.endswith(".json") else name
        parts = max(1, -(-len(self._history) // STEPS_PER_PART))
        written = []
        for part in range(parts):
            start, end = part * STEPS_PER_PART, (part + 1) * STEPS_PER_PART
            info = {**logInfo, "partIdx": part, "numParts": parts, "startStep": start, "endStep": end}
            steps = ",\n".join(zlib.decompress(blob).decode("utf-8") for blob in self._history[start:end])
            text = '{\n"logInfo": ' + json.dumps(info, sort_keys=True) + ',\n"worldHistory": [\n' + steps + "\n]\n}\n"
            stem = f"{base}.part{part}of{parts}"
            entry = zipfile.ZipInfo(os.path.basename(stem) + ".json", date_time=ZIP_DATE)
            entry.compress_type = zipfile.ZIP_DEFLATED
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w") as archive:
                archive.writestr(entry, text)
            try:
                with open(stem + ".zip", "wb") as out:
                    out.write(buffer.getvalue())
            except OSError as exc:
                raise WorldHistoryError(f"Could not write world history to {stem}.zip: {exc}") from exc
            written.append(stem + ".zip")
        return written


class _Attached:
    """The views of one loaded scenario."""

    __slots__ = ("ui", "world")

    def __init__(self, env: DiscoveryWorldEnv, record: bool) -> None:
        scenario, world = env.scenario, env.world
        assert scenario is not None and world is not None
        player = scenario.player
        self.ui = [UserInterfaceView(0, player)]
        radius = env.radius
        self.world = WorldView(world, lambda: snapshot(world, player, radius, [scenario.scorecard.progress()]), record)


class OriginalMembers:
    """Mixed into `compat.DiscoveryWorldAPI`: the original's `THREAD_ID`, `ui` and `world`."""

    threadID: int
    record_history: bool = False  # record a world-history snapshot every tick (`api.world`)
    _original: _Attached | None = None

    @property
    def THREAD_ID(self) -> int:  # noqa: N802 - the original's name
        """The `threadID` given at construction (the original names its frame folder after it)."""
        return self.threadID

    @property
    def ui(self) -> list[UserInterfaceView]:
        """One user interface per user agent, as the original keeps them; empty before loading."""
        return self._original.ui if self._original is not None else []

    @property
    def world(self) -> WorldView | None:
        """The loaded world's view (None before `loadScenario`, as the original's)."""
        return self._original.world if self._original is not None else None

    def _attach_original(self, env: DiscoveryWorldEnv) -> None:
        """Called by `loadScenario` after building the world and before its first tick."""
        self._original = _Attached(env, bool(self.record_history))
