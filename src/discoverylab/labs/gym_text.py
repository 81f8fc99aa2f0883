"""Gymnasium adapter for every Tiny Labs text protocol, and the Gymnasium ids of the labs.

Description: one episode = one protocol conversation. `reset(seed=k)` returns the lab's first
message (the same episode as `discoverylab lab run PROTOCOL --seeds k`); `reset(options={"instance":
inst})` plays an `instances.Instance` (task = protocol name; a sealed one puts only its public part,
split, index and commitment, in `info["instance"]`, no seed); each `step(text)` sends one agent
message and returns the lab's reply.
Actions: `spaces.Text` — any string (bad input gets the protocol's error reply, never an exception).
Observation: `spaces.Text` — the lab's message; characters outside the space's charset are shown as
"?" (the exact text is then in `info["text"]`), and messages longer than `max_length` are cut
(`info["text"]` again holds the whole message).
Reward: 0 until the episode ends, then the protocol's grade (score in 0..1); `info["score"]` holds
the full grade (parts, labels). A sealed test instance's grade is the evaluator's alone (it would
name a few-option answer): its reward stays 0, `info` says `graded` by the evaluator, and the
evaluator reads the grade with `evaluator_grade()`. Episodes terminate when the protocol says so;
the protocol's own turn limit bounds them, so `truncated` is always False.
Registered ids: `discoverylab/Lab-<Name>-v0` for each registered protocol (`lab_gym_id`), e.g.
`discoverylab/Lab-SequenceHiddenProperty-v0`, plus the macro lab's numeric `discoverylab/MacroEcon-v0`
(`Box(64,)` observation). Importing this module registers them.
"""

from __future__ import annotations

from typing import Any

import gymnasium
from gymnasium import spaces

from discoverylab.instances import SEALED_GRADED
from discoverylab.labs.protocol import Protocol, make_protocol, protocol_names

ENTRY_POINT = "discoverylab.labs.gym_text:TinyLabTextEnv"
# Printable ASCII, whitespace, Latin-1, Greek, general punctuation, arrows and maths operators.
CHARSET = "\t\n\r" + "".join(chr(c) for c in range(32, 127)) + "".join(chr(c) for c in range(0xA0, 0x24FF + 1))
_CHARSET_SET = frozenset(CHARSET)
OBSERVATION_MAX_LENGTH = 200_000
ACTION_MAX_LENGTH = 20_000


def lab_gym_id(protocol: str) -> str:
    """`sequence/hidden-property` -> `discoverylab/Lab-SequenceHiddenProperty-v0`."""
    words = protocol.replace("/", "-").replace("_", "-").split("-")
    return "discoverylab/Lab-" + "".join(w[:1].upper() + w[1:] for w in words if w) + "-v0"


def sanitize(text: str, max_length: int = OBSERVATION_MAX_LENGTH) -> str:
    """Fit a message into the observation space: unknown characters -> "?", cut at `max_length`."""
    if not _CHARSET_SET.issuperset(text):
        text = "".join(c if c in _CHARSET_SET else "?" for c in text)
    return text[:max_length]


class TinyLabTextEnv(gymnasium.Env[str, str]):
    """Any registered protocol as a text-in/text-out Gymnasium environment.

    Args:
        protocol: a registered protocol name (built with `config`) or a `Protocol` instance.
        config: keyword options for the protocol's factory (e.g. `{"rounds": 6}`), or a preset's
            name (`"paper"`, as `--config paper` on the command line).
        max_length: longest observation; longer lab messages are cut (full text in `info["text"]`).
        action_max_length: longest action string the action space describes.
        render_mode: "ansi" returns the last lab message from `render()`.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}
    _spec: Any = None

    @property
    def spec(self) -> Any:
        return self._spec

    @spec.setter
    def spec(self, value: Any) -> None:
        """`gymnasium.make(id, protocol=...)` sets it: a protocol that contradicts the id is refused
        (`discoverylab.env_ids`), never played under the id's name."""
        from discoverylab import lab_gym_id
        from discoverylab.env_ids import check_spec

        name = self.protocol.name
        plays = lab_gym_id(name) if name in protocol_names() else None
        check_spec(self, value, plays, f"the protocol {name}",
                   f"Make {plays!r} instead." if plays else "Build TinyLabTextEnv(protocol, ...) directly.")
        self._spec = value

    def __init__(self, protocol: str | Protocol, config: dict[str, Any] | str | None = None, *,
                 max_length: int = OBSERVATION_MAX_LENGTH, action_max_length: int = ACTION_MAX_LENGTH,
                 render_mode: str | None = None) -> None:
        self._sealed = False  # the episode plays a sealed test instance (`reset`)
        self._grade: Any = None  # the ended episode's grade (`evaluator_grade`)
        if isinstance(protocol, Protocol):
            if config:
                raise ValueError("pass either a Protocol instance or a protocol name with config, not both")
            self.protocol = protocol
        else:
            options = {"preset": config} if isinstance(config, str) else dict(config or {})
            self.protocol = make_protocol(protocol, **options)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.render_mode = render_mode
        self.max_length = max_length
        self.observation_space = spaces.Text(max_length=max_length, min_length=0, charset=CHARSET)
        self.action_space = spaces.Text(max_length=action_max_length, min_length=0, charset=CHARSET)
        self._last_text = ""

    def _observe(self, text: str, info: dict[str, Any]) -> str:
        self._last_text = text
        observation = sanitize(text, self.max_length)
        if observation != text:
            info["text"] = text
        return observation

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode; `seed` is the episode seed (drawn from the env's generator if None),
        or `options["instance"]` an `Instance` of this protocol (then no seed)."""
        from discoverylab.instances import Instance, from_seed

        inst = (options or {}).get("instance")
        if inst is not None and (seed is not None or not isinstance(inst, Instance) or inst.task != self.protocol.name):
            raise ValueError(f"options['instance'] must be an Instance of {self.protocol.name} (and no seed with it)")
        super().reset(seed=seed)
        if inst is None:
            episode_seed = int(seed) if seed is not None else int(self.np_random.integers(0, 2**31 - 1))
            inst = from_seed(self.protocol.name, "", episode_seed)
        text = self.protocol.reset(inst.seed)
        self._sealed = bool(inst.sealed)
        self._grade = None
        public = inst.public()
        info: dict[str, Any] = {"protocol": self.protocol.name, **({"seed": public["seed"]} if "seed" in public else {}),
                                "instance": public, "turn": 0}
        return self._observe(text, info), info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Send one agent message; the reward is the grade's score when the episode ends, else 0."""
        reply = self.protocol.step(action if isinstance(action, str) else str(action))
        info = dict(reply.info)
        reward = 0.0
        if reply.done:
            score = self._grade = self.protocol.grade()
            if self._sealed:
                info["graded"] = SEALED_GRADED
            else:
                reward = float(score.score)
                info["score"] = score.model_dump(mode="json")
        return self._observe(reply.text, info), reward, bool(reply.done), False, info

    def evaluator_grade(self) -> Any:
        """The ended episode's grade (None before the end), sealed or not: the evaluator's read,
        never shown to the agent of a sealed instance."""
        return self._grade

    def render(self) -> str | None:  # type: ignore[override]
        """The last lab message (render mode "ansi"); None otherwise."""
        return self._last_text if self.render_mode == "ansi" else None


def register_lab_envs() -> list[str]:
    """Register one text env id per protocol, plus the macro numeric env (idempotent); returns the ids."""
    from discoverylab.labs.macroecon.gym_env import register_macro_env

    ids = []
    for name in protocol_names():
        env_id = lab_gym_id(name)
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=ENTRY_POINT, kwargs={"protocol": name})
        ids.append(env_id)
    ids.append(register_macro_env())
    return ids


LAB_ENV_IDS: list[str] = register_lab_envs()
