"""The original DiscoveryWorld's Python API on our engine, so code written for it runs unchanged.

Written from the original's documented behaviour (spec section 1): a client loads a scenario by
its canonical name and difficulty string, then loops `getAgentObservation` -> `performAgentAction`
-> `tick`. Observations come as `{"errors": [], "ui": {...}, "vision": {"base64_no_grid": ...,
"base64_with_grid": ...}}` with the views as PNG data URLs (1536x1024, as the original renders).
Actions may carry the extra keys the original's agents add (`thought`, `explanation`, ...).

Differences, on purpose: nothing is written to disk (the original saves a frame per observation),
one user agent only, `createAgentVideo` writes the frames kept in memory (one per observation, as
PNG files; `keep_frames=False` keeps none) with the ffmpeg that imageio-ffmpeg ships, and
`render_images=False` skips the PNGs for clients that never read them (the text observation is
the same).

`sealed=True` (off by default, which keeps the original's behaviour) hides the gold:
`getTaskScorecard()` then gives task progress only (task name and text, completed, completed
successfully: no procedural items, scores, critical hypotheses or knowledge questions) until the
episode has ended, that is until the task is completed or the harness calls `endEpisode()`; an
ended episode takes no more actions. The original hands the whole card to anyone at any step,
which lets an agent that calls it read the answer.
"""

from __future__ import annotations

import base64
import operator
from typing import Any

import numpy as np

from discoverylab.compat_members import OriginalMembers
from discoverylab.env import GOLD_KEYS, PROCEDURE_KEYS, DiscoveryWorldEnv
from discoverylab.scenarios.registry import all_tasks
from discoverylab.world.action_specs import ACTION_FORMAT_HELP, ACTION_SPECS
from discoverylab.world.observation import build_observation

SCENARIO_DIFFICULTY_OPTIONS = {"easy": "Easy", "normal": "Normal", "challenge": "Challenge"}
ALREADY_ACTED = "Agent has already acted this step.  World tick must be called before this agent can act again."
NO_SCENARIO = "No scenario is loaded: call loadScenario() first."
ENDED = "The episode has ended (endEpisode() was called or the task is completed): load a scenario to play again."


def _scenario_table() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Canonical name (the original's spelling) -> (our task id, difficulties)."""
    return {cls.title: (tid, cls.difficulties) for tid, cls in all_tasks().items()}


SCENARIO_NAMES = list(_scenario_table())


def _seed(value: Any) -> int:
    """`loadScenario`'s seed: an integer (numpy's too) or a digit string from a script's argv; 1.5
    was once silently seed 1, and None, "abc" or -1 failed deep in the env."""
    try:
        seed = int(value.strip()) if isinstance(value, str) else operator.index(value)
    except (TypeError, ValueError):
        seed = -1
    if isinstance(value, bool) or not 0 <= seed < 2**32:
        raise ValueError(f"loadScenario: randomSeed must be a whole number in 0..2**32-1, not {value!r}.")
    return seed


class DiscoveryWorldAPI(OriginalMembers):
    """One user agent in one scenario, driven the way the original's API is.

    Args:
        threadID: accepted for compatibility (the original names its frame folder after it).
        render_images: include the `vision` PNGs in observations (the original always does).
        keep_frames: keep each observation's view (a 1536x1024 PNG, about 150 KB per step) for
            `createAgentVideo`; the original saves them to disk instead.
        sealed: `getTaskScorecard()` gives task progress only until the episode has ended (see
            the module's note); off by default, as the original.

    The original's `THREAD_ID`, `ui` and `world` (with `exportWorldHistoryJSON`) come from
    `OriginalMembers` (discoverylab/compat_members.py); `record_history` turns the history on.
    """

    def __init__(self, threadID: int = 1, render_images: bool = True, keep_frames: bool = True, sealed: bool = False) -> None:  # noqa: N803
        self.threadID = threadID
        self.sealed = sealed
        self._ended = False
        self.render_images = render_images
        self.keep_frames = keep_frames
        self._frames: list[bytes] = []  # PNG files
        self.env: DiscoveryWorldEnv | None = None
        self._acted = False
        self._message = "You are ready to start."
        self._extended: list[str] = []
        self._last_ui: dict[str, Any] | None = None

    # ---- scenarios ------------------------------------------------------------------------
    def getValidScenarios(self) -> dict[str, dict[str, list[str]]]:  # noqa: N802
        return {
            name: {"difficulty": [SCENARIO_DIFFICULTY_OPTIONS[d] for d in diffs], "variations": ["1", "2", "3", "4", "5"]}
            for name, (_, diffs) in _scenario_table().items()
        }

    def loadScenario(self, scenarioName: str, difficultyStr: str, randomSeed: int = 0, numUserAgents: int = 1) -> bool:  # noqa: N802, N803
        """Build the scenario and tick once, as the original does. False for unknown names or
        difficulties, or more than one user agent (not supported here); a seed that is no whole
        number from 0 (a digit string is one) raises ValueError before anything is built."""
        seed = _seed(randomSeed)
        table = _scenario_table()
        entry = table.get(scenarioName)
        difficulty = str(difficultyStr).strip().lower()
        if entry is None or difficulty not in entry[1] or numUserAgents != 1:
            return False
        self.env = DiscoveryWorldEnv(entry[0], difficulty, max_steps=10**9)
        self.env.reset(seed=seed)
        assert self.env.world is not None
        self._attach_original(self.env)  # THREAD_ID, ui, world: see OriginalMembers
        self.env.world.tick()
        self._acted = False
        self._ended = False
        self._message, self._extended, self._last_ui = "You are ready to start.", [], None
        self._frames = []
        return True

    # ---- the loop ---------------------------------------------------------------------------
    def getAgentObservation(self, agentIdx: int) -> dict[str, Any]:  # noqa: N802, N803
        if self.env is None or self.env.scenario is None:
            return {"errors": [NO_SCENARIO], "ui": {}, "vision": {}}
        if agentIdx != 0:
            return {"errors": ["Agent index out of range (this engine runs one user agent: index 0)."], "ui": {}, "vision": {}}
        scenario = self.env.scenario
        extended = self._extended.pop(0) if self._extended else ""
        ui = build_observation(scenario.player, [scenario.scorecard.progress()], self._message, extended,
                               radius=self.env.radius, teleport=self.env.teleport)  # fmt: skip
        self._last_ui = ui
        vision: dict[str, str] = {}
        if self.render_images:
            from discoverylab.render.renderer import vision_observation

            vision = vision_observation(scenario.world, scenario.player, scale=2)
            if self.keep_frames:
                self._frames.append(base64.b64decode(vision["base64_with_grid"].split(",", 1)[1]))
        return {"errors": [], "ui": ui, "vision": vision}

    def performAgentAction(self, agentIdx: int, actionJSON: Any) -> dict[str, Any]:  # noqa: N802, N803
        if self.env is None or self.env.scenario is None:
            return {"errors": [NO_SCENARIO], "success": False}
        if agentIdx != 0:
            return {"errors": ["Agent index out of range."], "success": False}
        if self._acted:
            return {"errors": [ALREADY_ACTED], "success": False}
        if self.sealed and self.episodeEnded():
            return {"errors": [ENDED], "success": False}
        self._acted = True
        result = self.env.executor.execute(actionJSON)
        self._message = result.message
        if result.important:
            self._extended.append(result.message)
        return {"errors": [] if result.success else [result.message], "success": result.success}

    def tick(self) -> dict[str, Any]:
        if self.env is None or self.env.world is None:
            return {"errors": [NO_SCENARIO], "success": False}
        self.env.world.tick()
        self._acted = False
        return {"errors": [], "success": True}

    # ---- queries ----------------------------------------------------------------------------
    def getTaskScorecard(self) -> list[dict[str, Any]]:  # noqa: N802
        """Oracle information (never shown to the agent). Sealed: progress only until the end."""
        if self.env is None or self.env.scenario is None:
            return []
        card = self.env.scenario.scorecard
        if self.sealed and not self.episodeEnded():
            return [card.to_dict(GOLD_KEYS + PROCEDURE_KEYS)]
        return [card.to_dict()]

    def endEpisode(self) -> dict[str, Any]:  # noqa: N802
        """(Not in the original.) The harness ends the episode: a sealed API shows the whole
        scorecard from now on and takes no more actions."""
        if self.env is None or self.env.scenario is None:
            return {"errors": [NO_SCENARIO], "success": False}
        self._ended = True
        return {"errors": [], "success": True}

    def episodeEnded(self) -> bool:  # noqa: N802
        """(Not in the original.) Whether `endEpisode()` was called or the task is completed."""
        if self.env is None or self.env.scenario is None:
            return False
        return self._ended or self.env.scenario.scorecard.completed

    def areTasksComplete(self) -> bool:  # noqa: N802
        """From the most recent observation, as the original does."""
        progress = (self._last_ui or {}).get("taskProgress") or []
        return bool(progress) and all(t["completed"] for t in progress)

    def listKnownActions(self, limited: bool = False) -> dict[str, dict[str, Any]]:  # noqa: N802
        """`limited=True` leaves out TALK and the feed actions, as the original's does."""
        teleport = self.env.teleport if self.env is not None else True
        return {
            spec.name: {"args": [f"arg{i + 1}" for i in range(len(spec.args))], "desc": spec.description}
            for spec in ACTION_SPECS.values()
            if spec.advertised and (teleport or not spec.teleport)
            and not (limited and (spec.name == "TALK" or spec.name.startswith("DISCOVERY_FEED")))
        }

    def additionalActionDescriptionString(self) -> str:  # noqa: N802
        return ACTION_FORMAT_HELP

    def listTeleportLocationsDict(self) -> dict[str, dict[str, int]]:  # noqa: N802
        if self.env is None or self.env.world is None:
            return {}
        return {name: {"gridX": x, "gridY": y} for name, (x, y) in sorted(self.env.world.teleports.items())}

    def isAgentInDialog(self, agentIdx: int) -> bool:  # noqa: N802, N803
        if self.env is None or self.env.scenario is None or agentIdx != 0:
            return False
        return self.env.scenario.player.dialog_partner is not None

    def getStepCounter(self) -> int:  # noqa: N802
        """The step counter of the most recent observation, as the original caches it."""
        return int((self._last_ui or {}).get("world_steps", 0))

    def createAgentVideo(self, agentIdx: int, filenameOut: str) -> dict[str, Any]:  # noqa: N802, N803
        """Write the frames of every observation so far as a video at 2 frames/s, as the
        original does (MP4, or a GIF when the name ends in .gif)."""
        if agentIdx != 0:
            return {"errors": ["Agent index out of range."], "success": False}
        if not self._frames:
            why = "no frames were kept (render_images=False or keep_frames=False)" if self.env else NO_SCENARIO.rstrip(".")
            return {"errors": [f"No video written: {why}."], "success": False}
        import io

        import imageio.v2 as imageio
        from PIL import Image

        try:
            frames = [Image.open(io.BytesIO(f)).convert("RGB") for f in self._frames]
            if str(filenameOut).lower().endswith(".gif"):
                frames[0].save(filenameOut, save_all=True, append_images=frames[1:], duration=500, loop=0)
            else:
                with imageio.get_writer(filenameOut, fps=2, macro_block_size=16) as writer:
                    for frame in frames:
                        writer.append_data(np.asarray(frame))  # type: ignore[attr-defined]
        except (OSError, ValueError, RuntimeError) as exc:  # unwritable path, codec trouble
            return {"errors": [f"No video written: {exc}"], "success": False}
        return {"errors": [], "success": True, "frames": len(frames)}


# ---- `python -m discoverylab.compat script.py [args...]`: run a script written for the original ----
# (an entry point, like cli.py: the exit status is the script's).
if __name__ == "__main__":
    import sys

    from discoverylab.original.runner import main

    raise SystemExit(main(sys.argv[1:]))
