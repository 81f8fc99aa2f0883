"""Every `discoverylab ...` command line in README.md and docs/ (shell blocks and inline code)
names a real command and only options that command has, and every `benchmarks/X.py ...` line a
script that exists and declares its options: a renamed or removed option shows here, not in a
user's terminal."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from typing import Any

import typer

from discoverylab.cli import app
from doc_kit import ROOT, doc_pages, shell_code

_CALL = re.compile(r"(?:^|[\s(/])discoverylab((?: [^|;&>#`]*)?)")  # up to a pipe, ;, &&, > or a comment


def command_lines() -> Iterator[tuple[str, str]]:
    """(where, the words after `discoverylab`) for each call in shell code of the docs."""
    for path in doc_pages():
        for span in shell_code(path):
            for line in span.replace("\\\n", " ").splitlines():
                for match in _CALL.finditer(line):
                    words = match.group(1).strip()
                    if words and re.match(r"[a-z]", words):
                        yield f"{path.relative_to(ROOT).as_posix()}: {line.strip()}", words


def _options(command: Any) -> set[str]:
    names = {"--help"}
    for param in command.params:
        names.update(param.opts)
        names.update(param.secondary_opts)
    return names


def test_the_docs_name_commands_at_all() -> None:
    found = list(command_lines())
    assert len(found) > 50, "the extraction found few commands: the docs' format changed?"
    assert {words.split()[0] for _, words in found} >= {"bench", "run", "lab", "env-serve", "report"}


def test_every_documented_command_and_option_exists() -> None:
    root = typer.main.get_command(app)
    problems = []
    for where, words in command_lines():
        try:
            tokens = shlex.split(words)
        except ValueError:
            tokens = words.split()
        command: Any = root  # (typer's click: duck-typed, a group has `commands`)
        path = ["discoverylab"]
        while hasattr(command, "commands") and tokens and not tokens[0].startswith("-"):
            sub = command.commands.get(tokens[0])
            if sub is None:
                break
            command, path = sub, [*path, tokens.pop(0)]
        if command is root:
            if not all(part in root.commands for part in tokens[0].split("/")):  # `run/bench`: either
                problems.append(f"{where}\n    no command {tokens[0]!r}")
            continue
        if hasattr(command, "commands"):
            continue  # e.g. `discoverylab lab` on its own, or a group named before its subcommand in prose
        known = _options(command)
        for token in tokens:
            if token.startswith("--") or re.fullmatch(r"-[A-Za-z]", token):
                option = token.split("=", 1)[0].rstrip("]),.:")  # `[--flag]`, `(--flag)` in a usage line
                if option not in known:
                    problems.append(f"{where}\n    {' '.join(path)} has no option {option}")
    assert not problems, "\n".join(problems)


_SCRIPT = re.compile(r"(benchmarks/[a-z_0-9]+\.py)((?: [^|;&>#`]*)?)")


def test_every_documented_benchmark_and_option_exists() -> None:
    """`benchmarks/X.py --option` in the docs' code: the script exists and declares the option
    (`add_argument("--option"`, read from its source: running 20 scripts' --help would cost
    seconds of imports)."""
    problems, seen = [], 0
    for path in doc_pages():
        for span in shell_code(path):
            for line in span.replace("\\\n", " ").splitlines():
                for match in _SCRIPT.finditer(line):
                    seen += 1
                    script = ROOT / match.group(1)
                    where = f"{path.relative_to(ROOT).as_posix()}: {line.strip()}"
                    if not script.is_file():
                        problems.append(f"{where}\n    no {match.group(1)}")
                        continue
                    source = script.read_text(encoding="utf-8")
                    for token in match.group(2).split():
                        option = token.split("=", 1)[0].rstrip("]),.:")
                        if option.startswith("--") and option != "--help" and f'"{option}"' not in source:
                            problems.append(f"{where}\n    {match.group(1)} declares no {option}")
    assert seen > 20, "the extraction found few benchmark lines: the docs' format changed?"
    assert not problems, "\n".join(problems)


def test_every_documented_make_target_exists() -> None:
    targets = set(re.findall(r"^([a-zA-Z][\w.-]*):", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M))
    problems, seen = [], 0
    for path in doc_pages():
        for span in shell_code(path):
            for match in re.finditer(r"(?:^|[\s;&(])make ((?:[a-z][\w.-]* ?)+)", span, re.M):
                for target in match.group(1).split():
                    seen += 1
                    if target not in targets:
                        problems.append(f"{path.relative_to(ROOT).as_posix()}: make {target}")
    assert seen >= 5 and not problems, problems
