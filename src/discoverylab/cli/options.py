"""What the `discoverylab` commands share: option types, consoles, the error exit, LLM settings.

`main` (tasks, play, run, bench) and `saved_runs` (report, judge) both take these options and
report errors the same way; keeping them here lets each command module import them without
importing the other. The LLM helpers turn the model options into `LLMSettings`, refusing bad
combinations with a one-line error before any episode starts.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from discoverylab.agents import AGENT_NAMES, LLM_AGENTS
from discoverylab.agents.llm_common import LLMSettings
from discoverylab.bench.runner import run_config

# Piped output (CI logs, `make run | tee`) gets a fixed width wide enough for the result tables.
console = Console(width=None if sys.stdout.isatty() else 120)
err = Console(stderr=True)

AGENTS = AGENT_NAMES
AGENT_HELP = "random, oracle, react, plan-execute or hypothesizer"
ModelOpt = Annotated[str | None, typer.Option("--model", "-m", help="LLM model name (default: the endpoint's first)")]
BaseUrlOpt = Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint ending in /v1 (default: $DISCOVERYLAB_LLM_BASE_URL, else the embedded offline model)")]
MaxCostOpt = Annotated[float | None, typer.Option("--max-cost", help="per-episode cost ceiling in USD (prices: built-in table + --prices)")]
PricesOpt = Annotated[Path | None, typer.Option("--prices", help='JSON file {"model": [usd_per_M_input, usd_per_M_output]} extending the price table')]
TempOpt = Annotated[float, typer.Option("--temperature")]
JsonModeOpt = Annotated[str, typer.Option("--json-mode", help="json_schema (constrained decoding), json_object or prompt, for servers without schema support")]
JSON_MODES = ("json_schema", "json_object", "prompt")
VisionOpt = Annotated[bool, typer.Option("--vision", help="hypothesizer: also send the rendered views of the previous and the current step as PNGs (models that read images)")]
EndActionOpt = Annotated[bool, typer.Option("--end-action", help="react: offer an END action that ends the episode (off in the paper presets)")]
JudgeOpt = Annotated[bool, typer.Option("--judge/--no-judge", help="grade LLM agents' knowledge at the end of each episode")]
JudgeModelOpt = Annotated[str | None, typer.Option("--judge-model", help="judge model (default: the agent's)")]
JudgeUrlOpt = Annotated[str | None, typer.Option("--judge-base-url", help="judge endpoint (default: the agent's)")]
ContextTokensOpt = Annotated[int | None, typer.Option(
    "--context-tokens", min=256, help="the judge model's context in tokens; longer reports are cut to fit "
    "(default: 4096 for the embedded model, else 8192)")]
UnjudgedOnlyOpt = Annotated[bool, typer.Option("--unjudged-only", help="grade only episodes without a valid grade yet")]

ENV_EPISODE_TIMEOUT = "DISCOVERYLAB_EPISODE_TIMEOUT"

WorkersOpt = Annotated[int, typer.Option("--workers", "-w", min=1, help="parallel episodes (capped at the job count)")]
MaxStepsOpt = Annotated[int | None, typer.Option("--max-steps", min=1, help="step limit per episode")]
EpisodeTimeoutOpt = Annotated[float | None, typer.Option(
    "--episode-timeout", min=0.001, envvar=ENV_EPISODE_TIMEOUT,
    help="total seconds per episode; a longer one is stopped with status timeout")]
RequestTimeoutOpt = Annotated[float | None, typer.Option(
    "--request-timeout", min=0.001, help="total seconds per LLM request, retries included "
    "(env DISCOVERYLAB_LLM_REQUEST_TIMEOUT)")]
BackendOpt = Annotated[str, typer.Option("--backend", help="local (worker processes) or ray (Ray tasks)")]
AddressOpt = Annotated[str | None, typer.Option("--address", help="Ray cluster address (ray backend)")]
SplitOpt = Annotated[str | None, typer.Option("--split", help="paper, dev, train or test (sealed): --seeds are then "
                                              "instance indices of that split (default: --seeds are raw public seeds)")]
EvalKeyOpt = Annotated[Path | None, typer.Option("--eval-key-file", help="the evaluator's secret key for --split test "
                                                 "(default: $DISCOVERYLAB_EVAL_KEY)")]


def split_key(split: str | None, key_file: Path | None) -> bytes | None:
    """The evaluator's key when the split needs it; a missing or bad key is a one-line error."""
    from discoverylab.instances import SEALED_SPLIT, SPLITS, InstanceError, load_key

    if split is None:
        if key_file is not None:
            fail("--eval-key-file goes with --split test.")
        return None
    if split not in SPLITS:
        fail(f"Unknown split {split!r}; choose one of {', '.join(SPLITS)}.")
    if split != SEALED_SPLIT:
        return None
    try:
        key = load_key(key_file)
    except InstanceError as exc:
        fail(str(exc))
    if key is None:
        fail("The test split is sealed: it needs the evaluator's key (set $DISCOVERYLAB_EVAL_KEY or pass --eval-key-file FILE).")
    return key


def check_indices(task: str, difficulty: str, split: str | None, key: bytes | None, indices: Any) -> None:
    """Fail now (not mid-run) when an index is beyond its split, e.g. `--split paper --seeds 0-9`."""
    from discoverylab.instances import InstanceError, make_instance

    if split is None:
        return
    try:
        make_instance(task, difficulty, split, max(r[-1] for r in indices.ranges if len(r)), key)
    except (InstanceError, ValueError) as exc:
        fail(str(exc))


def fail(message: str) -> None:
    """Print a one-line error (no traceback) and exit 2, the usage-error code."""
    err.print(f"[red]Error:[/red] {escape(message)}", soft_wrap=True)
    raise typer.Exit(2)


def llm_settings(agent: str, model: str | None, base_url: str | None, temperature: float,
                 max_cost: float | None, prices: Path | None, json_mode: str = "json_schema",
                 vision: bool = False, end_action: bool = False) -> LLMSettings | None:  # fmt: skip
    """The agent's model settings (None for non-LLM agents); a cost ceiling needs a known price."""
    if agent not in LLM_AGENTS:
        return None
    if json_mode not in JSON_MODES:
        fail(f"Unknown --json-mode {json_mode!r}. Valid: {', '.join(JSON_MODES)}.")
    check_base_url(base_url, "--base-url")
    if not math.isfinite(temperature) or temperature < 0:  # NaN is no JSON: every request failed
        fail(f"--temperature must be a number >= 0, not {temperature}.")
    if max_cost is not None and not max_cost >= 0:
        fail(f"--max-cost must be a number of USD >= 0, not {max_cost}.")
    from discoverylab.agents.pricing import PriceError, load_prices, price_of

    settings = LLMSettings(model=model, base_url=base_url, temperature=temperature, max_cost=max_cost,
                           prices_file=str(prices) if prices else None, json_mode=json_mode, vision=vision,
                           end_action=end_action)  # fmt: skip
    try:
        table = load_prices(settings.prices_file)
    except PriceError as exc:
        fail(str(exc))
    if max_cost is not None and not settings.embedded and (model is None or price_of(model, table) is None):
        fail(f"--max-cost needs the price of the model {model!r}: pass --model and add it with --prices FILE.")
    return settings


def check_base_url(url: str | None, option: str) -> None:
    """An endpoint without http:// or https:// is a one-line error now: before, every episode tried
    it and ended `llm_error` (UnsupportedProtocol) until the circuit breaker stopped the run."""
    if url is not None and not url.lower().startswith(("http://", "https://")):
        fail(f"{option} {url!r} is not an http:// or https:// URL (e.g. http://127.0.0.1:8080/v1).")


def check_llm_env(request_timeout: float | None) -> None:
    """Fail now on a malformed LLM setting in the environment: read in each worker, it ended every
    episode `error` with the same ValueError (and a bad price was silently ignored: cost unknown)."""
    from discoverylab.bench.schema import ENV_PRICE, _price
    from discoverylab.llm.client import (
        DEFAULT_MAX_REPLY_BYTES,
        DEFAULT_REQUEST_TIMEOUT,
        ENV_BASE_URL,
        ENV_MAX_REPLY_BYTES,
        ENV_REQUEST_TIMEOUT,
        _env_seconds,
    )

    try:
        if request_timeout is None:  # --request-timeout replaces the variable
            _env_seconds(ENV_REQUEST_TIMEOUT, DEFAULT_REQUEST_TIMEOUT)
        _env_seconds(ENV_MAX_REPLY_BYTES, DEFAULT_MAX_REPLY_BYTES, unit="bytes")
    except ValueError as exc:
        fail(str(exc))
    check_base_url(os.environ.get(ENV_BASE_URL) or None, f"${ENV_BASE_URL}")
    if os.environ.get(ENV_PRICE, "").strip() and _price() is None:
        fail(f'${ENV_PRICE} must be "PROMPT,COMPLETION" in USD per million tokens, got {os.environ[ENV_PRICE]!r}.')


def stored_config(max_steps: int | None, llm: LLMSettings | None, judge: LLMSettings | None,
                  split: str | None = None, key: bytes | None = None) -> dict[str, Any]:  # fmt: skip
    """The run's stored config: a resume with other model settings, another split or another
    evaluation key (only its fingerprint is stored) is refused (api keys left out)."""
    from dataclasses import asdict

    def settings(value: LLMSettings | None) -> dict[str, Any] | None:
        return None if value is None else {k: v for k, v in asdict(value).items() if k != "api_key"}

    options: dict[str, Any] = {}
    if llm is not None:
        options["llm"] = settings(llm)
        options["judge"] = settings(judge)
        # An endpoint or model taken from the environment is part of the settings too: stored (only
        # then, so other runs keep their config), a resume under another $DISCOVERYLAB_LLM_BASE_URL
        # is refused instead of playing the rest of the run with another model.
        from_env = {name: found for name, value in (("llm", llm), ("judge", judge)) if (found := _env_endpoint(value))}
        if from_env:
            options["endpoint_from_env"] = from_env
    if split is not None:  # raw-seed runs keep the config (and hash) they had before splits
        from discoverylab.instances import key_id

        options["split"] = split
        if key is not None:
            options["eval_key_id"] = key_id(key)
    return run_config(max_steps, **options)


def _env_endpoint(value: LLMSettings | None) -> dict[str, str]:
    """What the LLM client would take from the environment for `value`: the base URL and the model
    it leaves unset (`LLMClient`'s lookup)."""
    from discoverylab.llm.client import ENV_BASE_URL, ENV_MODEL

    if value is None:
        return {}
    found = {}
    if value.base_url is None and (url := os.environ.get(ENV_BASE_URL) or os.environ.get("OPENAI_BASE_URL")):
        found["base_url"] = url
    if value.model is None and (model := os.environ.get(ENV_MODEL)):
        found["model"] = model
    return found


def judge_settings(llm: LLMSettings | None, judge: bool, model: str | None, base_url: str | None) -> LLMSettings | None:
    """The judge's settings: the agent's model unless a judge model or endpoint is given.

    The judge inherits the run's `--json-mode` (a server without json_schema support refuses
    the judge's schema as it would the agent's) and, on the agent's endpoint, its API key; the
    request timeout reaches it through the environment, as it reaches the agent.
    """
    if llm is None or not judge:
        return None
    check_base_url(base_url, "--judge-base-url")
    if model is None and base_url is None:
        return LLMSettings(model=llm.model, base_url=llm.base_url, api_key=llm.api_key, json_mode=llm.json_mode)
    same = base_url is None or base_url == llm.base_url
    return LLMSettings(model=model, base_url=base_url or llm.base_url, api_key=llm.api_key if same else None,
                       json_mode=llm.json_mode)  # fmt: skip


RUN_JUDGE_FIX = ("name the judge with --judge-model / --judge-base-url (the agent's endpoint too, if the evaluator runs "
                 "it), or pass --no-judge and grade the run later with `discoverylab judge RUN_DIR --model M --base-url U`.")


def check_sealed_judge(split: str | None, pairs: list[tuple[str, str]], llm: LLMSettings | None, judge: bool,
                       model: str | None, base_url: str | None, *, default: str = "the agent's own endpoint",
                       fix: str = RUN_JUDGE_FIX) -> None:  # fmt: skip
    """A sealed run's judge prompts carry each test instance's gold facts. By default the judge is the
    agent's own model on its endpoint, which may be the submitter's: it would collect the test set's
    answers (and grade its own reports). So a sealed run of discovery tasks names its judge, or has
    none; the embedded model (in this process) and tasks without questions send nothing out.

    `bench`/`run` and `judge RUN_DIR` (whose `llm` is the judge's own default, $DISCOVERYLAB_LLM_BASE_URL)
    share this rule; `default` names where the gold would go and `fix` how to name the judge."""
    from discoverylab.instances import SEALED_SPLIT
    from discoverylab.llm.client import ENV_BASE_URL

    if split != SEALED_SPLIT or llm is None or not judge or model is not None or base_url is not None or llm.embedded:
        return
    if not any(_asks_questions(task) for task, _ in pairs):
        return
    where = llm.base_url or os.environ.get(ENV_BASE_URL)
    fail(f"A sealed run sends each test instance's gold facts to the knowledge judge, by default {default} "
         f"({where}), which should never see them: {fix}")


def warn_embedded_judge(judge: LLMSettings | None, pairs: list[tuple[str, str]],
                        fix: str = "--judge-model / --judge-base-url") -> None:
    """Say so where the embedded SmolLM2-135M judges knowledge: it grades noisily (it gave honest
    reports 0 and credited some reports stating every candidate over a lone guess; docs/agents.md),
    so its knowledge scores are plumbing, not a measurement, and a run's table would not say so."""
    if judge is None or not judge.embedded or not any(_asks_questions(task) for task, _ in pairs):
        return
    err.print("[yellow]Knowledge is judged by the embedded SmolLM2-135M model: its knowledge scores are plumbing, "
              f"not a measurement (docs/agents.md). For results you report, name a judge with {fix}.[/yellow]",
              soft_wrap=True)  # fmt: skip


def _asks_questions(task: str) -> bool:
    """Whether a task's judge gets gold facts (discovery tasks); an unknown name (a record from
    another version) counts as one, so the rule errs on the side of the gold."""
    from discoverylab.scenarios.registry import get_task

    try:
        return get_task(task).suite == "discovery"
    except ValueError:
        return True


def any_embedded(*settings: LLMSettings | None) -> bool:
    """Whether the agent or the judge would start the embedded model (one per worker process)."""
    return any(s is not None and s.embedded for s in settings)
