"""One client's episode behind the env server: a DiscoveryWorld task or a Tiny Labs protocol.

The server, its OpenEnv-compatible WebSocket, the Inspect task and the verifiers environment all
play episodes through `EpisodeSession`, so there is one definition of what a remote agent sees:
the env's text observation (the same text `DiscoveryWorldEnv` / `TinyLabTextEnv` return), the
reward of the env's default `success` mode (never the answer-revealing procedure reward), and the
instance's public part (`Instance.public()`: a sealed test instance's seed never leaves the
server). The full scorecard (gold included) is sent only once the episode has ended and, for a
discovery task, its answer sheet has been handed in (the gold would fill the sheet). A sealed
instance's gold and grades are the evaluator's alone (`--out` records): its client's hand-in gets
a receipt and a sealed Tiny Lab's end no grade, since a right/wrong names a few-option answer. A
sealed DiscoveryWorld episode's reward is 0 and its end says that it ended, not whether it
succeeded (the env's own rule, `DiscoveryWorldEnv`): a win and a loss read the same.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from discoverylab.env import GOLD_KEYS, PROCEDURE_KEYS, DiscoveryWorldEnv
from discoverylab.instances import (
    SEALED_GRADED,
    SEALED_SPLIT,
    Instance,
    InstanceError,
    from_seed,
    load_key,
    make_instance,
)

if TYPE_CHECKING:
    from discoverylab.server.records import EpisodeRecords

LAB_DIFFICULTY = ""  # Tiny Labs protocols have no difficulty levels (their instances are keyed with "")
MAX_ACTION_CHARS = 20_000
REMOTE_AGENT = "remote"  # the agent of a client that names none (the server's records)


class SessionError(ValueError):
    """A request the session refuses (bad task, instance, action or order): a 4xx for the client."""

    status = 400


class AlreadyPlayed(SessionError):
    status = 409


class SealedLedger:
    """The sealed test instances a server has started: each plays once per server, since the end
    of an episode reveals its gold (a replay could copy it, or probe the answer sheet again)."""

    def __init__(self) -> None:
        self.started: set[tuple[str, str, int]] = set()
        self._lock = threading.Lock()

    def claim(self, inst: Instance) -> None:
        if not self.claim_name(inst.task, inst.difficulty or "", inst.index):
            raise AlreadyPlayed(f"{' '.join(filter(None, (inst.task, inst.difficulty)))} test#{inst.index} was already played on this "
                                "server: each sealed instance plays once (its end reveals the gold).")

    def claim_name(self, task: str, difficulty: str, index: int) -> bool:
        """True the first time an instance is claimed, False after (a subclass may ask elsewhere:
        the Ray pool asks one ledger actor for all its session actors)."""
        with self._lock:
            if (task, difficulty, index) in self.started:
                return False
            self.started.add((task, difficulty, index))
            return True


class ResetRequest(BaseModel):
    """Which instance to play: `seed` (a public seed) or `split` + `index` (the sealed `test`
    split needs the evaluator's key on the server: $DISCOVERYLAB_EVAL_KEY)."""

    model_config = ConfigDict(extra="forbid")

    task: str = Field(min_length=1, max_length=200, description="DiscoveryWorld task id or Tiny Labs protocol name")
    difficulty: str = Field(default="normal", max_length=20)
    seed: int | None = Field(default=None, ge=0, lt=2**32)
    split: str | None = Field(default=None, max_length=20)
    index: int | None = Field(default=None, ge=0)
    text_format: Literal["lm", "json"] = "lm"
    max_steps: int | None = Field(default=None, ge=1, le=100_000)
    structured: bool = Field(default=False, description="also send DiscoveryWorld's structured observation dict")
    agent: str | None = Field(default=None, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
                              description="the agent's name in the server's records (`env-serve --out`; default 'remote')")
    episode_id: str | None = Field(default=None, max_length=200,
                                   description="the client's name for this episode (OpenEnv's reset argument, which "
                                   "its harnesses send); state() reports it")


class AnswersRequest(BaseModel):
    """The filled answer sheet, handed in once after the episode ended, with the agent's
    knowledge report if it wrote one (kept in the server's records for `discoverylab judge`)."""

    answers: dict[str, Any]
    knowledge: str | None = Field(default=None, max_length=20_000)


class StepResult(BaseModel):
    """What the client sees after reset or a step."""

    observation: str
    reward: float = 0.0
    done: bool = False
    terminated: bool = False
    truncated: bool = False
    step: int = 0
    action_ok: bool = True
    task: str
    difficulty: str
    instance: dict[str, Any]
    structured: dict[str, Any] | None = None
    scorecard: dict[str, Any] | None = None  # only once the episode ended (gold included, as in `info`)
    # on the answer that ends a discovery episode: its answer sheet (the form), to hand in next
    # (HTTP: POST .../answers; OpenEnv's socket: a step whose data is {"answers": ...})
    answer_sheet: dict[str, Any] | None = None


def lab_names() -> list[str]:
    from discoverylab.labs.protocol import protocol_names

    return protocol_names()


def resolve_instance(req: ResetRequest, key: bytes | None, task: str, difficulty: str) -> Instance:
    """The instance a reset names (exactly one of `seed` or `split` + `index`) of the canonical
    `task` and `difficulty` (a sealed seed is keyed on those, not on the client's spelling)."""
    if req.seed is not None and (req.split is not None or req.index is not None):
        raise SessionError("Give either seed, or split and index, not both.")
    if req.seed is not None:
        return from_seed(task, difficulty, req.seed)
    if req.split is None or req.index is None:
        raise SessionError("Name the instance: seed, or split and index (e.g. split='dev', index=0).")
    if req.split == SEALED_SPLIT and key is None:  # the key is the server's business, not the client's
        raise SessionError("The test split is sealed and this server holds no evaluation key: the evaluator "
                           "starts it with `discoverylab env-serve --eval-key-file KEY` (or $DISCOVERYLAB_EVAL_KEY).")
    try:
        return make_instance(task, difficulty, req.split, req.index, key)
    except InstanceError as exc:
        raise SessionError(str(exc)) from None


def _refuse_dw_options(req: ResetRequest) -> None:
    """A Tiny Lab's reset with DiscoveryWorld's options is refused, not played without them: a
    client asking for `max_steps=2` or a "hard" lab would otherwise get the protocol's defaults."""
    wrong = [f"difficulty={req.difficulty!r} (labs have no difficulty levels)"] if req.difficulty not in ("normal", LAB_DIFFICULTY) else []
    if req.max_steps is not None:
        wrong.append("max_steps (the protocol's own turn limit holds)")
    if req.structured:
        wrong.append("structured (a lab's observation is its text)")
    if req.text_format != "lm":
        wrong.append(f"text_format={req.text_format!r} (a lab speaks its own text)")
    if wrong:
        raise SessionError(f"{req.task} is a Tiny Labs protocol; these options are DiscoveryWorld's: {'; '.join(wrong)}.")


class EpisodeSession:
    """A client's env: reset builds one instance's world, step plays one action."""

    def __init__(self, key: bytes | None = None, ledger: SealedLedger | None = None,
                 records: EpisodeRecords | None = None) -> None:  # fmt: skip
        self.key = key if key is not None else load_key()
        self.ledger = ledger if ledger is not None else SealedLedger()
        self.records = records  # the evaluator's own records (`env-serve --out`), or None
        self.agent = REMOTE_AGENT
        self.episode_id: str | None = None  # the client's name for the episode, if it gave one
        self.started_at = self.ended_at = 0.0
        self.log: list[dict[str, Any]] = []  # the runner's episode log; kept only with `records`
        self.record_pending = False  # an ended episode whose record the disk refused
        self.answers_in: dict[str, Any] | None = None
        self.knowledge_in: str | None = None  # the agent's knowledge report, handed in with the sheet
        self.env: Any = None
        self.kind: str = ""
        self.instance: Instance | None = None
        self.task = ""
        self.difficulty = ""
        self.steps = 0
        self.done = False
        self.reward_total = 0.0
        self.structured = False
        self.last: StepResult | None = None
        self.handed_in: dict[str, Any] | None = None
        self.lab_grade: dict[str, Any] | None = None  # graded once: grading runs the agent's programs

    def reset(self, req: ResetRequest) -> StepResult:
        """Start the named episode; a refused reset (bad task or instance, 409) leaves the running one as it was."""
        env: Any
        if req.task in lab_names():
            from discoverylab.labs.gym_text import TinyLabTextEnv

            _refuse_dw_options(req)
            inst = resolve_instance(req, self.key, req.task, LAB_DIFFICULTY)
            if inst.sealed:
                self.ledger.claim(inst)
            env, kind, task, difficulty = TinyLabTextEnv(req.task), "lab", req.task, LAB_DIFFICULTY
        else:
            try:
                env = DiscoveryWorldEnv(req.task, req.difficulty, max_steps=req.max_steps, text_format=req.text_format)
            except ValueError as exc:
                raise SessionError(f"{exc} Tiny Labs protocols: {', '.join(lab_names())}.") from None
            try:
                inst = resolve_instance(req, self.key, env.scenario_cls.task_id, env.difficulty)
                if inst.sealed:
                    self.ledger.claim(inst)
            except SessionError:
                env.close()
                raise
            kind, task, difficulty = "dw", env.scenario_cls.task_id, env.difficulty
        self.close("a new episode was reset in its session")  # only now: the new episode is sure to start
        self.env, self.kind, self.task, self.difficulty = env, kind, task, difficulty
        text, _ = env.reset(options={"instance": inst})  # the seed goes no further than the world
        self.instance, self.steps, self.done, self.reward_total = inst, 0, False, 0.0
        self.handed_in, self.lab_grade, self.answers_in, self.knowledge_in = None, None, None, None
        self.agent, self.started_at, self.ended_at = req.agent or REMOTE_AGENT, time.perf_counter(), 0.0
        self.episode_id = req.episode_id
        self.log, self.record_pending = [], False
        if self.records is not None and kind == "dw":
            self.log.append({"type": "start", "task": task, "difficulty": difficulty, **inst.public(),
                             "agent": self.agent, "observation": env.observation_dict()})  # fmt: skip
        self.structured = req.structured
        self.last = self._result(text, 0.0, False, False, True)
        return self.last

    def step(self, action: Any) -> StepResult:
        if self.env is None:
            raise SessionError("Call reset before step.")
        if self.done:
            raise SessionError("The episode has ended; call reset to play another.")
        message = action.get("message") if self.kind == "lab" and isinstance(action, dict) else action
        if isinstance(message, str) and len(message) > MAX_ACTION_CHARS:  # a bare string, or a lab's {"message": ...}
            raise SessionError(f"An action is at most {MAX_ACTION_CHARS} characters.")
        if self.kind == "lab":
            if not isinstance(message, str):
                raise SessionError('A Tiny Labs action is a message: a string or {"message": "..."}.')
            text, reward, terminated, truncated, info = self.env.step(message)
            self.lab_grade = info.get("score", self.lab_grade)
            ok = True
        else:
            if not isinstance(action, dict | str):
                raise SessionError('A DiscoveryWorld action is {"action": NAME, "arg1": ..., "arg2": ...}, '
                                   '{"chosen_dialog_option_int": N} or that object as JSON text.')
            text, reward, terminated, truncated, info = self.env.step(action)
            ok = bool(info["success"])
        self.steps += 1
        if self.kind == "lab" and self.sealed:  # a lab's reward is its grade: the evaluator's, like a sheet's
            reward = 0.0
        self.reward_total += float(reward)
        self.done = bool(terminated or truncated)
        self.last = self._result(text, float(reward), bool(terminated), bool(truncated), ok)
        if self.records is not None:
            if self.kind == "dw":  # a list append: the log is written once, at the end
                self.log.append({"type": "step", "step": self.steps, "action": action, "reward": float(reward),
                                 "observation": info.get("observation"), "terminated": bool(terminated),
                                 "truncated": bool(truncated)})  # fmt: skip
            if self.done:
                self._ended()
        return self.last

    def _ended(self) -> None:
        """The episode has ended: its record (a 507 if the disk refuses it; the end stands)."""
        self.ended_at = time.perf_counter()
        if self.records is not None:
            self.records.episode_ended(self)

    def _result(self, text: str, reward: float, terminated: bool, truncated: bool, ok: bool) -> StepResult:
        assert self.instance is not None
        done = terminated or truncated
        structured = self.env.observation_dict() if self.kind == "dw" and self.structured else None
        return StepResult(observation=text, reward=reward, done=done, terminated=terminated, truncated=truncated,
                          step=self.steps, action_ok=ok, task=self.task, difficulty=self.difficulty,
                          instance=self.instance.public(), structured=structured,
                          scorecard=self.client_card() if done else None,
                          answer_sheet=self.answer_sheet() if done and self.handed_in is None else None)  # fmt: skip

    def final_card(self) -> dict[str, Any]:
        """The episode's scorecard (DiscoveryWorld: gold included; Tiny Labs: the protocol's grade)."""
        if self.kind == "lab":
            if self.lab_grade is None:  # ended early (`finish`): grade once, not on every state() call
                self.lab_grade = self.env.protocol.grade().model_dump(mode="json")
            score = self.lab_grade
            return {"completed": self.done, "completedSuccessfully": score["score"] >= 1.0, **score}
        return dict(self.env.scorecard(reveal=True))

    @property
    def sealed(self) -> bool:
        """The episode plays a sealed test instance: its grades are the evaluator's alone."""
        return self.instance is not None and self.instance.sealed

    def client_card(self) -> dict[str, Any]:
        """The ended episode's scorecard as the client sees it. Until a discovery task's answer sheet
        is handed in, its gold and procedural items wait (task progress only, as before the end):
        the gold names the answer and the items' scores tell which choice was right, so a client
        would copy them into the sheet. A sealed instance's never come: every server with this key
        plays the same test#N, where a remembered gold would answer it; nor whether it succeeded
        (`completedSuccessfully` None, a unit test's gold too). Nor does a sealed Tiny Lab's grade
        (its details hold the truth, its labels and score say right or wrong).
        `final_card` is the evaluator's full card."""
        from discoverylab.scenarios.answer_forms import has_answer_sheet

        if self.kind == "lab" and self.sealed:
            return {"completed": self.done, "graded": SEALED_GRADED}
        if self.kind == "dw" and self.sealed:  # the env's sealed card: decided or not, never how it went
            return {**self.env.scorecard(), "graded": SEALED_GRADED}
        card = self.final_card()
        if self.kind == "dw" and has_answer_sheet(self.task) and (self.handed_in is None or self.sealed):
            return {k: v for k, v in card.items() if k not in GOLD_KEYS + PROCEDURE_KEYS}
        return card

    def finish(self) -> None:
        """End the episode where it stands (a harness whose agent stopped early): no more steps;
        the answer sheet may then be handed in, as after the env's own end."""
        if self.env is not None and not self.done:
            self.done = True
            if self.kind == "dw":
                self.env._ended = True  # the env's own end flag: its scorecard and sheet now reveal
            self._ended()

    def answer_sheet(self) -> dict[str, Any] | None:
        """The task's answer sheet (its public form: fields, options, JSON schema), or None when
        the task has none (unit tests, Tiny Labs)."""
        from discoverylab.scenarios.answer_forms import answer_form, has_answer_sheet

        if self.kind != "dw" or not has_answer_sheet(self.task):
            return None
        form = answer_form(self.env)
        return {**form.to_dict(), "text": form.text(), "json_schema": form.json_schema()}

    def hand_in(self, answers: Any, knowledge: str | None = None) -> dict[str, Any]:
        """Grade the filled sheet: once per episode and only after it ended (a second hand-in
        would let a client probe the gold field by field). The reply is the grade, or for a
        sealed instance a `receipt` (the grade stays in `handed_in`, for the evaluator)."""
        from discoverylab.scenarios.answer_forms import grade_answers

        if self.answer_sheet() is None:
            raise SessionError(f"{self.task or 'This session'} has no answer sheet.")
        if not self.done:
            raise SessionError("The answer sheet is handed in after the episode ends.")
        if self.handed_in is not None:
            raise SessionError("The answer sheet of this episode was already handed in; its grade stands.")
        self.handed_in = grade_answers(self.env, answers).to_dict()
        self.answers_in = answers if isinstance(answers, dict) else {"(not a dict)": repr(answers)[:200]}
        self.knowledge_in = knowledge
        if self.records is not None:
            self.records.sheet_in(self)
        return self.receipt() if self.sealed else self.handed_in

    def receipt(self) -> dict[str, Any]:
        """A sealed instance's hand-in reply: the sheet came and was recorded; which fields it
        filled and the form's own validation errors (the form decides them, never the gold). No
        score and no right/wrong: "wrong" on a field of two or three options names the answer, and
        every server with this key plays the same test#N."""
        assert self.handed_in is not None
        filled = [f["name"] for f in self.handed_in["fields"] if f["answer"] is not None]
        return {"received": True, "recorded": self.records is not None, "fields_submitted": filled,
                "errors": dict(self.handed_in["errors"]), "graded": SEALED_GRADED}  # fmt: skip

    def state(self) -> dict[str, Any]:
        """Where the episode stands (OpenEnv's `state()`): no observation, no gold before the end
        (nor, for a discovery task, before its answer sheet is in)."""
        out: dict[str, Any] = {"step_count": self.steps, "task": self.task, "difficulty": self.difficulty,
                               "kind": self.kind or None, "done": self.done, "reward_total": self.reward_total}  # fmt: skip
        if self.instance is not None:
            out["instance"] = self.instance.public()
            out["episode_id"] = self.episode_id or f"{self.task}/{self.difficulty}/{self.instance.label}"
        if self.done:
            out["scorecard"] = self.client_card()
        return out

    def close(self, why: str = "its session was closed", *, stopping: bool = False) -> None:
        """Free the env; with records, an episode not yet recorded is recorded first (`why` the
        session goes; `stopping`: the server stops, see `EpisodeRecords.closing`)."""
        if self.records is not None:
            self.records.closing(self, why, stopping=stopping)
        env, self.env = self.env, None
        if env is not None:
            world = getattr(env, "world", None)
            if world is not None:
                world.dispose()
            env.close()
