"""`discoverylab native build|status`: the opt-in compiled engine (`make native`; docs/rl.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from discoverylab import native

native_app = typer.Typer(help="The compiled engine (opt-in, mypyc): build it, or say whether a build is usable.",
                         no_args_is_help=True)  # fmt: skip
FolderOption = Annotated[Path, typer.Option("--folder", help="the build folder")]


@native_app.command()
def build(folder: FolderOption = native.DEFAULT_DIR) -> None:
    """Compile `world/` and the symbolic encoder into FOLDER (used with DISCOVERYLAB_NATIVE=1)."""
    typer.echo(f"Compiling the engine ({len(native.modules())} modules) with mypyc into {folder}: about 2.5 "
               "CPU-minutes, one C file, no progress to show meanwhile...")  # fmt: skip
    try:
        out = native.build(folder)
    except native.NativeBuildError as exc:
        typer.echo(f"make native: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"Compiled engine built in {out}; use it with {native.ENV_VAR}=1.")


@native_app.command()
def status(folder: FolderOption = native.DEFAULT_DIR) -> None:
    """Whether the build in FOLDER can be used (exit 1, with the reason, when not)."""
    reason = native.usable(folder)
    typer.echo(f"usable: {folder}" if reason is None else f"not usable: {reason}")
    if reason is not None:
        raise typer.Exit(1)
