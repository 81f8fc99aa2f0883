"""The Gymnasium environment: one DiscoveryWorld task at one difficulty.

`reset(seed=k)` builds parametric variation k (a raw public seed); `reset(options={"instance":
inst})` plays an `instances.Instance` (a split and index, e.g. a sealed test instance whose seed
nothing the agent reads carries: `info["instance"]` holds its public part, split, index and
commitment, and `info["seed"]` appears only for public instances). `step(action)` applies the
agent's action and ticks the world once. The observation is the compact JSON text of the
structured observation.

Nothing an agent can read during an episode reveals the answer: `info["scorecard"]` holds task
progress only until the episode ends (then the full oracle scorecard, gold hypotheses and
questions included; evaluators may call `scorecard(reveal=True)` at any time), and the default
reward is terminal success. `reward="procedure"` pays the change of the normalised procedural
score each step instead: it rewards answer-specific choices at once, so it reveals the answer.

A sealed test instance (`Instance.sealed`) shows the agent nothing that depends on how it did,
not even at its end: the reward is 0 every step (both modes), `info["scorecard"]` and the
observation's `taskProgress` say whether the task is decided but not whether it succeeded
(`completedSuccessfully` is None), and no gold. Its outcome is the evaluator's:
`scorecard(reveal=True)`, the runner's records. A learner over many sealed instances would
otherwise train on the test set.
"""

from __future__ import annotations

import gc
import json
import string
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
import orjson
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec
from gymnasium.utils import seeding

from discoverylab.env_spaces import ActionText, ObservationText
from discoverylab.instances import Instance, InstanceError, from_seed
from discoverylab.scenarios.base import Scenario
from discoverylab.scenarios.registry import all_tasks, check_difficulty, get_task
from discoverylab.scoring.scorecard import Scorecard
from discoverylab.world import spares
from discoverylab.world.action_input import MAX_ECHO_CHARS, brief, whole_option
from discoverylab.world.actions import ActionExecutor
from discoverylab.world.observation import build_observation
from discoverylab.world.unpickle import CopiedWhole, FastState
from discoverylab.world.world import WORLD_SIZE, World

MAX_OBS_CHARS = 1_000_000
MAX_IMAGE_SCALE = 4  # `image(scale=)`: 3072x2048 px, 19 MB; the observation modes take 1 or 2
_PRINTABLE = frozenset(string.printable)
_GC_FROZEN = False


def _freeze_startup_objects() -> None:
    """Move everything alive at the first reset (modules, caches) out of the cyclic GC's reach.

    A world is a few thousand small cyclic objects; without this, the periodic full collection
    also walks every imported module's objects and pauses a reset for ~40 ms. Done once per
    process; objects frozen here are long-lived anyway."""
    global _GC_FROZEN
    if not _GC_FROZEN:
        gc.collect()
        gc.freeze()
        _GC_FROZEN = True


TEXT_FORMATS = ("json", "lm")
OBSERVATION_MODES = ("text", "image", "both", "symbolic")
REWARD_MODES = ("success", "procedure")
INFO_MODES = ("full", "lean")
GOLD_KEYS = ("criticalHypotheses", "criticalQuestions", "knowledgeQuestions")
PROCEDURE_KEYS = ("score", "maxScore", "scoreNormalized", "scoreCard")
VIEW_TILES = (24, 16)  # viewport width x height in tiles, 32 px each at scale 1


def _task_and_difficulty(task: Any, difficulty: Any) -> tuple[type[Scenario], str]:
    """The task class and difficulty, or the ValueError listing the valid ones that a misspelt
    name gets: a non-string (None, a number) raised an AttributeError from inside the lookup, and
    a megabyte name was quoted whole."""
    if not isinstance(task, str) or len(task) > MAX_ECHO_CHARS:
        raise ValueError(f"Unknown task {brief(task)}. Valid tasks: {', '.join(all_tasks())}.")
    cls = get_task(task)
    if not isinstance(difficulty, str) or len(difficulty) > MAX_ECHO_CHARS:
        raise ValueError(f"Unknown difficulty {brief(difficulty)} for task {cls.task_id}. "
                         f"Valid difficulties: {', '.join(cls.difficulties)}.")
    return cls, check_difficulty(cls, difficulty)


def sealed_card(card: Scorecard) -> dict[str, Any]:
    """A sealed instance's scorecard as its agent sees it: the task and whether it is decided;
    `completedSuccessfully` None (undisclosed), no score, no gold."""
    return {"taskName": card.task_name, "taskDescription": card.task_description, "completed": card.completed,
            "completedSuccessfully": None}


class DiscoveryWorldEnv(gym.Env[Any, Any], FastState, CopiedWhole):
    """A DiscoveryWorld task as a Gymnasium env (text and/or image observations, JSON-or-dict actions).

    Args:
        task: task id, title or loose spelling (see `discoverylab.tasks()`).
        difficulty: "easy", "normal" or "challenge" (the Tutorial: "normal" only).
        max_steps: step limit (default `Scenario.default_step_limit()`: 100 for Easy and unit
            tests, 1000 otherwise, 1500 for SpaceSick Normal and Challenge).
        radius: radius of the nearby-objects window (default 3, as in the original; 0..32).
        teleport: enable the two teleport actions (the paper's teleport handicap).
        render_mode: None, "ansi" (a compact text view) or "rgb_array" (the agent's view).
        observation: "text" (default: compact JSON text), "image" (the agent's 24x16-tile view
            as an RGB array, 768x512 at scale 1) or "both" (a dict with "text" and "image").
            Images are rendered only in these modes; the structured observation is always in
            `info["observation"]`.
        image_scale: 1 (768x512) or 2 (1536x1024).
        image_grid: draw the tile grid with "x,y" labels on images.
        text_format: "json" (default: the structured observation as compact JSON, keys as in the
            original) or "lm": the same facts as short text lines for language models
            (`world/lm_observation.py`, ~45% of the tokens); the first observation of an episode
            then starts with the instructions sent once (action format, actions, locations, task).
        strict: reject actions with keys other than action/arg1/arg2 (or, in a dialog, other
            than chosen_dialog_option_int) and values in unused argument slots. Off by default:
            the original ignores them, so its prompts (which add "thought", ...) work unchanged.

        observation="symbolic": a dict of fixed-shape uint8 tensors for RL (egocentric tile
            window with object-kind ids, object slots, dialog options, agent state; see
            `discoverylab.rl.symbolic`); skips building the JSON text altogether.
        object_slots: number of object slots of the symbolic observation (default 12).
        notes: add the `note_*` keys to the symbolic observation (`discoverylab.rl.notes`: what a
            reader of the texts remembers: feed instructions, instrument readings, task lines,
            where the agent has been).
        reward: "success" (default: 1.0 on the step the task completes successfully, else 0.0)
            or "procedure" (the change of the normalised procedural score each step, the
            original's shaped reward). "procedure" pays answer-specific choices (the right
            object, the right setting) at once, so it REVEALS the answer: use it for training
            or ablations, never to score discovery. A sealed test instance pays 0 every step
            in both modes: its outcome is the evaluator's (`scorecard(reveal=True)`).
        info: "full" (default: `info["observation"]` holds the structured observation dict and
            `info["scorecard"]` the task progress) or "lean" (for RL: only `success`, `step`
            and `message`, the last action's message). In both, the step that ends the
            episode adds the full scorecard (`info["scorecard"]`, gold included). During the
            episode the scorecard in `info` carries no gold (critical hypotheses, questions);
            its procedural scores appear only with `reward="procedure"`. A sealed instance's
            scorecard is task progress with `completedSuccessfully` None, at its end too.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    _spec: EnvSpec | None = None

    @property
    def spec(self) -> EnvSpec | None:
        return self._spec

    @spec.setter
    def spec(self, value: EnvSpec | None) -> None:
        """Gymnasium sets it after `make(id, **kwargs)`: a task= or difficulty= that contradicts the
        id is refused (`env_ids`), never played under the id's name."""
        from discoverylab import gym_id
        from discoverylab.env_ids import check_spec

        task, diff = self.scenario_cls.task_id, self.difficulty
        check_spec(self, value, gym_id(task, diff), f"{task} at {diff}",
                   f"Make {gym_id(task, diff)!r} instead (or discoverylab.make({task!r}, difficulty={diff!r})).")
        self._spec = value

    def __init__(
        self,
        task: str,
        difficulty: str = "normal",
        max_steps: int | None = None,
        radius: int = 3,
        teleport: bool = True,
        render_mode: str | None = None,
        observation: str = "text",
        image_scale: int = 1,
        image_grid: bool = False,
        text_format: str = "json",
        strict: bool = False,

        reward: str = "success",
        info: str = "full",
        object_slots: int = 12,
        notes: bool = False,
    ) -> None:
        self.scenario_cls: type[Scenario]
        self.scenario_cls, self.difficulty = _task_and_difficulty(task, difficulty)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"Unsupported render_mode {render_mode!r}; valid: {self.metadata['render_modes']}.")
        self.render_mode = render_mode
        self.max_steps = None if max_steps is None else whole_option("max_steps", max_steps, 0)
        self.radius = radius = whole_option("radius", radius, 0, WORLD_SIZE)
        for name, flag in (("teleport", teleport), ("strict", strict), ("image_grid", image_grid), ("notes", notes)):
            if not (isinstance(flag, (bool, np.bool_)) or (isinstance(flag, int) and flag in (0, 1))):  # "no" counted as True
                raise ValueError(f"{name} must be True or False, not {brief(flag)}.")
        self.teleport = teleport = bool(teleport)
        self.strict = strict = bool(strict)
        if observation not in OBSERVATION_MODES:
            raise ValueError(f"Unknown observation mode {observation!r}; valid: {', '.join(OBSERVATION_MODES)}.")
        if notes and observation != "symbolic":
            raise ValueError("notes=True adds keys to the symbolic observation; pass observation='symbolic'.")
        if isinstance(image_scale, bool) or not isinstance(image_scale, (int, np.integer)) or image_scale not in (1, 2):
            raise ValueError(f"image_scale must be 1 or 2, not {brief(image_scale)}.")
        image_scale = int(image_scale)
        if text_format not in TEXT_FORMATS:
            raise ValueError(f"Unknown text_format {text_format!r}; valid: {', '.join(TEXT_FORMATS)}.")
        self.text_format = text_format

        if reward not in REWARD_MODES:
            more = " (reward='explore' comes with discoverylab.rl.make_rl_env and the envs built on it)" if reward == "explore" else ""
            raise ValueError(f"Unknown reward mode {reward!r}; valid: {', '.join(REWARD_MODES)}{more}.")
        if info not in INFO_MODES:
            raise ValueError(f"Unknown info mode {info!r}; valid: {', '.join(INFO_MODES)}.")
        self.reward_mode = reward
        self.info_mode = info
        self.observation_mode = observation
        self.image_scale = image_scale
        self.image_grid = image_grid
        text_space = ObservationText(max_length=MAX_OBS_CHARS)
        w, h = (n * 32 * image_scale for n in VIEW_TILES)
        image_space = spaces.Box(0, 255, shape=(h, w, 3), dtype=np.uint8)
        self.symbolic: Any = None
        if observation == "symbolic":
            from discoverylab.rl.symbolic import SymbolicEncoder

            self.symbolic = SymbolicEncoder(radius, object_slots, notes=notes)
            self.observation_space: spaces.Space[Any] = self.symbolic.space
        else:
            self.observation_space = {
                "text": text_space,
                "image": image_space,
                "both": spaces.Dict({"text": text_space, "image": image_space}),
            }[observation]
        self.action_space = ActionText(max_length=512)
        self.world: World | None = None
        self.scenario: Scenario | None = None
        self._steps = 0
        self._limit = 0
        self._last_score = 0.0
        self._ended = False
        self._success = True
        self._message = ("", "")
        self._obs_cache: dict[str, Any] | None = None
        self.instance: dict[str, Any] = {}  # the current instance's public part (never a sealed seed)
        self.sealed = False  # the current instance is sealed: nothing the agent reads says how it did

    # ---- gymnasium API ----------------------------------------------------------------
    _np_seed_pending: int | None = None  # `reset(seed=k)`'s k until the generator is first read
    _np_rng: np.random.Generator | None = None

    @property
    def _np_random(self) -> np.random.Generator | None:  # type: ignore[override]
        """Gymnasium's generator slot (read by its `np_random`, `check_env`), made on first read after
        `reset(seed=k)` as gymnasium's `reset` makes it: unread then, it cost ~75k instructions a reset."""
        pending, self._np_seed_pending = self._np_seed_pending, None
        if pending is not None:
            self._np_rng = seeding.np_random(pending)[0]
        return self._np_rng

    @_np_random.setter
    def _np_random(self, value: np.random.Generator | None) -> None:
        self._np_seed_pending, self._np_rng = None, value

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        if isinstance(seed, np.integer):  # e.g. from a vector env's seed array: gymnasium's seeding takes ints only
            seed = int(seed)
        inst = self._instance(seed, options)
        if type(seed) is int:  # a public seed `_instance` accepted: gymnasium's generator made when first read
            self._np_rng, self._np_seed_pending, self._np_random_seed = None, seed, seed
        else:
            super().reset(seed=seed)  # None for an instance: a sealed seed never reaches np_random
        _freeze_startup_objects()
        if self.world is not None:
            if self.symbolic is not None:  # its mirror and views would keep objects out of the recycling
                self.symbolic.release()
            self.world.dispose()
            self.world = self.scenario = None  # a build that raises below leaves "Call reset()", not a torn episode
        if inst is None:
            inst = from_seed(self.scenario_cls.task_id, self.difficulty, int(self.np_random.integers(0, 2**31 - 1)))
        self.instance = inst.public()
        self.sealed = inst.sealed
        self.world = World(inst.seed)
        self.scenario = self.scenario_cls(self.world, self.difficulty)
        spares.settle()  # recycled scenery the build did not use no longer keeps the old world
        self.executor = ActionExecutor(self.scenario.player, teleport=self.teleport, strict=self.strict)
        self._limit = self.max_steps if self.max_steps is not None else self.scenario.default_step_limit()
        self._steps = 0
        self._last_score = self.scenario.scorecard.normalized
        self._ended = False
        self._success = True
        self._observe("You are ready to start.", "")
        return self._output(), self._info(None)

    def _instance(self, seed: int | None, options: dict[str, Any] | None) -> Instance | None:
        """The instance `reset` plays: `options["instance"]`, else the raw seed (None: draw one)."""
        if options is not None and not isinstance(options, dict):  # else "'str' object has no attribute 'get'"
            raise TypeError(f"reset's options must be a dict or None, not {type(options).__name__}.")
        inst = (options or {}).get("instance")
        task = self.scenario_cls.task_id
        if inst is None:
            return None if seed is None else from_seed(task, self.difficulty, seed)
        if seed is not None:
            raise ValueError("reset takes a seed or options['instance'], not both.")
        if not isinstance(inst, Instance):
            raise TypeError(f"options['instance'] must be a discoverylab.instances.Instance, not {type(inst).__name__}.")
        if (inst.task, inst.difficulty) != (task, self.difficulty):
            raise InstanceError(f"The instance is for {inst.task} {inst.difficulty}; this env plays {task} {self.difficulty}.")
        if isinstance(inst.seed, bool) or not isinstance(inst.seed, int) or inst.seed < 0:  # never quoted: it may be sealed
            raise InstanceError("options['instance'] has no valid seed (a whole number from 0); make instances with "
                                "discoverylab.instances.make_instance or from_seed.")  # fmt: skip
        return inst

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        # `_observe`, `_info` and `_output` inline (an RL step runs ~30,000 times a second: a
        # call and its attribute reads are a measurable share); the same values, in that order.
        world, scenario = self.world, self.scenario
        if world is None or scenario is None:
            raise RuntimeError("Call reset() before step().")
        result = self.executor.execute(action)
        world.tick()
        self._steps = steps = self._steps + 1
        card = scenario.scorecard
        terminated = card.completed
        if self.reward_mode == "procedure":
            reward = card.normalized - self._last_score
            self._last_score = card.normalized
        else:
            reward = 1.0 if terminated and card.success and not self._ended else 0.0
        if self.sealed:  # a win and a loss pay alike: the outcome is the evaluator's
            reward = 0.0
        success = self._success = result.success
        message = result.message
        self._message = (message, message if result.important else "")
        self._obs_cache = None
        symbolic, lean = self.symbolic, self.info_mode == "lean"
        if symbolic is None or not lean:
            self._obs_cache = self.observation_dict()
        truncated = not terminated and steps >= self._limit
        ended = self._ended = self._ended or terminated or truncated
        if lean:
            info: dict[str, Any] = {"success": success, "step": steps, "message": message}
            if ended:
                info["scorecard"] = self.scorecard()
        else:
            info = self._info(result)
        if symbolic is not None:
            obs = symbolic.encode(scenario.player, card.task_description, success, terminated, message)
        else:
            obs = self._output()
        return obs, reward, terminated, truncated, info

    def render(self) -> Any:
        if self.scenario is None:
            return None
        if self.render_mode == "ansi":
            from discoverylab.render.text import render_text

            return render_text(self._obs)
        if self.render_mode == "rgb_array":
            return self.image()
        return None

    def image(self, scale: int | None = None, grid: bool | None = None) -> np.ndarray:
        """The agent's current view as an RGB array (rendered on demand, never cached to disk).
        `scale` (default: `image_scale`) is 1 to MAX_IMAGE_SCALE: the array grows with its
        square, and scale=100 asked for 11.8 GB."""
        from discoverylab.render.renderer import view_array

        if self.scenario is None:
            raise RuntimeError("Call reset() before image().")
        if scale is None:
            scale = self.image_scale
        elif isinstance(scale, bool) or not isinstance(scale, (int, np.integer)) or not 1 <= scale <= MAX_IMAGE_SCALE:
            raise ValueError(f"scale must be a whole number in 1..{MAX_IMAGE_SCALE}, not {brief(scale)}.")
        player = self.scenario.player
        return view_array(player.world, player, scale=int(scale), grid=self.image_grid if grid is None else grid)

    def _output(self) -> Any:
        if self.symbolic is not None:
            assert self.scenario is not None
            card = self.scenario.scorecard
            return self.symbolic.encode(self.scenario.player, card.task_description, self._success, card.completed,
                                        self._message[0])
        if self.observation_mode == "text":
            return self._text()
        if self.observation_mode == "image":
            return self.image()
        return {"text": self._text(), "image": self.image()}

    def _text(self) -> str:
        if self.text_format == "json":
            return self._encode(self._obs)
        from discoverylab.world.lm_observation import lm_instructions, lm_observation

        text = lm_observation(self._obs)
        if self._steps == 0:
            task = "\n".join(t["description"] for t in self._obs["taskProgress"])
            text = f"{lm_instructions(self.teleport, self._obs.get('teleportLocations'))}\n\nTask: {task}\n\n{text}"
        # The Text space promises printable ASCII: escape anything else, as the JSON form does.
        text = text.encode("ascii", "backslashreplace").decode("ascii")
        return "".join(c if c in _PRINTABLE else f"\\x{ord(c):02x}" for c in text)

    # ---- helpers ----------------------------------------------------------------------
    def _observe(self, message: str, extended: str) -> None:
        """Keep this step's messages; build the structured observation now unless the
        symbolic encoder (which marks the same objects as seen) makes it optional."""
        self._message = (message, extended)
        self._obs_cache = None
        if self.symbolic is None or self.info_mode == "full":
            self._obs_cache = self.observation_dict()

    def observation_dict(self) -> dict[str, Any]:
        """The structured (JSON-ready) observation of the current step."""
        if self._obs_cache is None:
            if self.scenario is None:
                raise RuntimeError("Call reset() before observation_dict().")
            self._obs_cache = build_observation(
                self.scenario.player,
                [self.scenario.scorecard.progress(self.sealed)],
                self._message[0],
                self._message[1],
                radius=self.radius,
                teleport=self.teleport,
            )
        return self._obs_cache

    @property
    def _obs(self) -> dict[str, Any]:
        return self.observation_dict()

    @staticmethod
    def _encode(obs: dict[str, Any]) -> str:
        """Compact JSON text (orjson: the observation is re-encoded every step)."""
        try:
            text = orjson.dumps(obs).decode("utf-8")
        except TypeError:  # e.g. an integer beyond 64 bits echoed from an agent's input
            text = ""
        if not text or not text.isascii():  # keep the Text space's printable-ASCII promise
            text = json.dumps(obs, separators=(",", ":"), ensure_ascii=True)
        if "\x7f" in text:  # DEL is ASCII but not printable; JSON may carry it raw inside strings
            text = text.replace("\x7f", "\\u007f")
        return text

    def scorecard(self, reveal: bool = False) -> dict[str, Any]:
        """The scorecard as `info` shows it now, or (`reveal=True`, for evaluators) in full,
        gold hypotheses and knowledge questions included, whether or not the episode ended.
        A sealed instance's, unrevealed, is its task progress at every step, its end included."""
        if self.scenario is None:
            raise RuntimeError("Call reset() before scorecard().")
        card = self.scenario.scorecard
        if self.sealed and not reveal:
            return sealed_card(card)
        if reveal or self._ended:
            return card.to_dict()
        return card.to_dict(GOLD_KEYS if self.reward_mode == "procedure" else GOLD_KEYS + PROCEDURE_KEYS)

    def _info(self, result: Any) -> dict[str, Any]:
        assert self.scenario is not None and self.world is not None
        success = result.success if result is not None else True
        if self.info_mode == "lean":
            info: dict[str, Any] = {"success": success, "step": self._steps, "message": self._message[0]}
            if self._ended:
                info["scorecard"] = self.scorecard()
            return info
        return {
            "observation": self._obs,
            "scorecard": self.scorecard(),
            "success": success,
            "step": self._steps,
            "task": self.scenario_cls.task_id,
            "difficulty": self.difficulty,
            **({"seed": self.instance["seed"]} if "seed" in self.instance else {}),
            "instance": dict(self.instance),
        }

    @property
    def task_description(self) -> str:
        if self.scenario is None:
            raise RuntimeError("Call reset() before reading task_description.")
        return self.scenario.scorecard.task_description
