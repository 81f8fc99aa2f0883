"""What the `discoverylab lab` commands share: the consoles, the error exit, option parsing."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

# Piped output (logs, `| tee`) gets a fixed width wide enough for the result tables.
console = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True)


def _split_key(split: str | None, key_file: Path | None) -> bytes | None:
    """The evaluator's key when `split` is the sealed test split; a missing key is a one-line error."""
    from discoverylab.instances import SEALED_SPLIT, SPLITS, InstanceError, load_key

    if split is None:
        if key_file is not None:
            _fail("--eval-key-file goes with --split test")
        return None
    if split not in SPLITS:
        _fail(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    if split != SEALED_SPLIT:
        return None
    try:
        key = load_key(key_file)
    except InstanceError as exc:
        _fail(str(exc))
    if key is None:
        _fail("the test split is sealed: it needs the evaluator's key (set $DISCOVERYLAB_EVAL_KEY or pass --eval-key-file FILE)")
    return key


def _fail(message: str) -> NoReturn:
    err.print(f"[red]Error:[/red] {escape(message)}", soft_wrap=True)
    raise typer.Exit(2)


def _parse_config(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    if text.strip().isidentifier():  # a preset name: --config paper
        return {"preset": text.strip()}
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        _fail(f"--config must be a JSON object, e.g. '{{\"rounds\": 6}}' ({exc})")
    if not isinstance(config, dict):
        _fail("--config must be a JSON object, e.g. '{\"rounds\": 6}'")
    return config


def parse_seeds(text: str) -> list[int]:
    """'0-4' -> [0..4]; '1,3,5' -> [1, 3, 5]; '7' -> [7]."""
    from discoverylab.bench.runner import parse_seeds as parse

    seeds = parse(text)
    if any(s < 0 for s in seeds):
        raise ValueError(f"seeds must be >= 0, got {text!r}")
    return seeds


def _parse_json_object(text: str | None, option: str) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        _fail(f"{option} must be a JSON object ({exc})")
    if not isinstance(value, dict):
        _fail(f"{option} must be a JSON object")
    return value




