"""The sb3 sweep's outputs (`benchmarks/sb3.py`): the merged curves, their figure and table,
the Ctrl-C partial outputs and the `--plot-only` redraw, apart from the training code."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _best(curve: dict[str, Any]) -> tuple[float | None, int | None]:
    """The final greedy success (or the last evaluation's) and the first step count >= 0.9."""
    final = curve.get("final")
    if final is None and curve.get("eval"):
        final = curve["eval"][-1]["success"]
    reach = next((e["steps"] for e in curve.get("eval", []) if e["success"] >= 0.9), None)
    if reach is None and curve.get("final") is not None and curve["final"] >= 0.9:
        reach = curve.get("total_steps")
    return final, reach


def plot(curves: list[dict[str, Any]], path: Path) -> None:
    """Greedy held-out success vs env steps, one line per task (the final evaluation last)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for c in curves:
        points = [(e["steps"], e["success"]) for e in c.get("eval", [])]
        if c.get("final") is not None and c.get("total_steps"):
            points.append((c["total_steps"], c["final"]))
        extra = [str(c["obs"])] if c.get("obs", "onehot") != "onehot" else []
        extra += ["no history"] if c.get("settings", {}).get("history") is False else []
        label = ", ".join([f"{c['task']} ({c.get('policy', 'mlp')}", *extra]) + ")"
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", ms=3, label=label)
    ax.set_xlabel("env steps")
    ax.set_ylabel("greedy success, held-out dev levels")
    ax.set_ylim(-0.05, 1.05)
    ax.axhline(0.9, color="grey", lw=0.7, ls="--")
    ax.set_title("MaskablePPO per unit test: greedy success on held-out dev levels", fontsize=9)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    fig.savefig(path, dpi=90, bbox_inches="tight")  # the legend sits right of the axes
    plt.close(fig)


def table(curves: list[dict[str, Any]]) -> str:
    """A markdown table: task, steps trained, final greedy held-out success, steps to 0.9, seconds."""
    lines = ["| task | env steps | greedy held-out success | sampled | first >= 0.9 at | seconds | stopped by |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for c in curves:
        final, reach = _best(c)
        steps = c.get("total_steps") or (c["eval"][-1]["steps"] if c.get("eval") else 0)
        seconds = c.get("seconds_total") or (c["eval"][-1]["seconds"] if c.get("eval") else "")
        stopped = c.get("stopped") or ("steps" if "final" in c else "killed (partial curve)")
        sampled = c.get("final_sampled")
        lines.append(f"| {c['task']} | {steps:,} | {'' if final is None else f'{final:.2f}'} | "
                     f"{'' if sampled is None else f'{sampled:.2f}'} | "
                     f"{'' if reach is None else f'{reach:,}'} | {seconds} | {stopped} |")  # fmt: skip
    hits = sum(1 for c in curves if (_best(c)[0] or 0) >= 0.9)
    lines.append(f"\n{hits} of {len(curves)} tasks at >= 0.9 greedy success on held-out dev levels.")
    return "\n".join(lines) + "\n"


def parts_dir(out: Path, parts: str | None = None) -> Path:
    return Path(parts) if parts else out.parent / (out.name + ".parts")


def write_outputs(out: Path, tasks: list[str], parts: Path | None = None,
                  stopped: dict[str, str] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Merge `<parts>/<task>.json` into `<out>.json` (with the end of each task's log, where
    the sweep wrote one), `<out>.png` and `<out>.md`; `stopped` names why tasks cut short stopped."""
    parts = parts or parts_dir(out)
    curves = []
    for task in tasks:
        log = parts / f"{task}.log"
        if (parts / f"{task}.json").exists():
            curves.append(json.loads((parts / f"{task}.json").read_text()))
        elif log.exists():  # started, but died before its first evaluation: say so, with its log
            curves.append({"task": task, "obs": "onehot", "policy": "?", "eval": [], "stopped": "no curve: see log_tail"})
        else:
            continue
        if log.exists():
            curves[-1]["log_tail"] = log.read_text(errors="replace").splitlines()[-12:]
        if task in (stopped or {}):
            curves[-1]["stopped"] = (stopped or {})[task]
    out.with_suffix(".json").write_text(json.dumps(curves, indent=1))
    return redraw(out, curves)


def interrupted(out: Path, started: list[str], cut: list[str], parts: Path) -> None:
    """Ctrl-C: the partial curves of the tasks started go to `<out>-interrupted.{json,png,md}`, never
    over a complete `<out>.json` of an earlier run (before, they replaced it); exit code 130."""
    target = out.with_name(out.name + "-interrupted")
    curves = write_outputs(target, started, parts, {t: "interrupted (Ctrl-C)" for t in cut})
    print(table(curves), flush=True)
    print(f"Interrupted (Ctrl-C): partial curves of {len(curves)} task(s) in {target}.json, .png and .md; "
          f"{out.with_suffix('.json')} was left as it was. Run the command again to train the tasks in full.",
          file=sys.stderr, flush=True)  # fmt: skip
    raise SystemExit(130)


def redraw(out: Path, curves: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """`<out>.png` and `<out>.md` from `<out>.json` (`--plot-only`)."""
    if curves is None:
        curves = json.loads(out.with_suffix(".json").read_text())
    plot(curves, out.with_suffix(".png"))
    out.with_suffix(".md").write_text(table(curves))
    return curves


def curves_problem(path: Path) -> str:
    """What keeps `path` from being redrawn ('' when it is a list of curves as `write_outputs` writes)."""
    try:
        curves = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return f"cannot be read as JSON ({exc})"
    if not isinstance(curves, list):
        return "is not a list of curves"
    for i, c in enumerate(curves):
        evals = c.get("eval") if isinstance(c, dict) else None
        if not isinstance(c, dict) or not isinstance(c.get("task"), str) or not isinstance(evals, list) or not all(
                isinstance(e, dict) and isinstance(e.get("steps"), int | float) and isinstance(e.get("success"), int | float)
                for e in evals):  # fmt: skip
            return f"holds no curve at index {i} (a task name and an eval list of steps and success)"
    return ""
