"""PNG figures of Tiny Labs runs: per-episode plots (by protocol) and a score chart per protocol/agent.

Uses matplotlib's object API with the Agg canvas (never `pyplot`), so nothing opens a window and the
global backend is untouched. Called by the runner after an episode ends, never from `step()`.

Per-episode plotters are registered by protocol name (`register_episode_plotter`); `plot_episode`
returns no paths for a protocol without one. Built in:

* `sequence/unknown-dynamics`: every experiment's trajectory in (gc_content, palindrome_score)
  space, with the measured attractors (and those the agent reported, when it reported any).
* `macro/causal-discovery`: indicator time series of the agent's experiments, and the measured
  causal graph (parameters -> indicators, arrows coloured by sign; one figure per run directory,
  since it depends on the lab's config only).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from discoverylab.labs.protocol import Protocol, TranscriptEntry

if TYPE_CHECKING:
    from discoverylab.labs.run_record import LabRecord

EpisodePlotter = Callable[[Protocol, Path, str], list[Path]]
_PLOTTERS: dict[str, EpisodePlotter] = {}


def register_episode_plotter(protocol: str, plotter: EpisodePlotter) -> None:
    """Register `plotter(protocol, out_dir, stem) -> [png paths]` for a protocol name."""
    _PLOTTERS[protocol] = plotter


def plot_episode(protocol: Protocol, out_dir: str | Path, stem: str) -> list[Path]:
    """Figures of a finished episode, written as `<out_dir>/<stem>-<kind>.png`; [] if no plotter."""
    plotter = _PLOTTERS.get(protocol.name)
    return plotter(protocol, Path(out_dir), stem) if plotter is not None else []


def save_figure(fig: Figure, path: str | Path, dpi: int = 110) -> Path:
    """Render `fig` with the Agg canvas and write it as PNG (parent folders created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=dpi)
    return path


# ---------------------------------------------------------------------- score chart
def plot_scores(results: Sequence[LabRecord], path: str | Path) -> Path:
    """Mean score (bars) with min..max whiskers, grouped by protocol, one colour per agent."""
    protocols = sorted({r.protocol for r in results})
    agents = sorted({r.agent for r in results})
    width = 0.8 / max(len(agents), 1)
    fig = Figure(figsize=(max(5.0, 1.8 * len(protocols) + 2.0), 3.8), layout="constrained")
    ax = fig.add_subplot()
    for i, agent in enumerate(agents):
        means, lows, highs, xs = [], [], [], []
        for j, protocol in enumerate(protocols):
            scores = [r.score for r in results if r.protocol == protocol and r.agent == agent]
            if not scores:
                continue
            mean = float(np.mean(scores))
            xs.append(j - 0.4 + width * (i + 0.5))
            means.append(mean)
            lows.append(mean - min(scores))
            highs.append(max(scores) - mean)
        ax.bar(xs, means, width=width * 0.95, label=agent, yerr=[lows, highs], capsize=3)
    ax.set_xticks(range(len(protocols)), protocols, fontsize=8, rotation=10)
    ax.set_ylim(0.0, 1.05)
    ax.set_ylabel("score (mean; whiskers min..max)")
    ax.set_title(f"Tiny Labs scores ({len(results)} episodes)", fontsize=10)
    ax.legend(fontsize=8, title="agent", title_fontsize=8)
    return save_figure(fig, path)


# ---------------------------------------------------------------------- sequence / unknown dynamics
def json_objects(text: str) -> Iterable[dict[str, Any]]:
    """JSON objects found on the lines of a message (lab replies put one JSON document per line)."""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                yield value


def dynamics_trajectories(transcript: Sequence[TranscriptEntry]) -> list[list[str]]:
    """The sequence trajectory of every experiment the lab ran, read from its `lab_results` replies."""
    paths = []
    for entry in transcript:
        if entry.role != "lab":
            continue
        for payload in json_objects(entry.text):
            if payload.get("type") == "lab_results" and isinstance(payload.get("trajectory"), list):
                paths.append([str(s) for s in payload["trajectory"]])
    return paths


def reported_attractors(transcript: Sequence[TranscriptEntry]) -> list[tuple[float, float]]:
    """(gc, pal) points of the agent's last report that stated attractors."""
    found: list[tuple[float, float]] = []
    for entry in transcript:
        claims = entry.info.get("attractors") if entry.role == "agent" else None
        if isinstance(claims, list) and claims:
            found = [(float(c["gc"]), float(c["pal"])) for c in claims
                     if isinstance(c, dict) and isinstance(c.get("gc"), int | float)
                     and isinstance(c.get("pal"), int | float)]
    return found


def plot_property_trajectories(paths: Sequence[Sequence[str]], attractors: Sequence[Sequence[float]],
                               path: str | Path, reported: Sequence[Sequence[float]] = (),
                               title: str = "Trajectories in property space") -> Path:
    """Each trajectory as a line in (gc_content, palindrome_score), start dots, attractor stars."""
    from discoverylab.labs.sequence.properties import compute_all

    fig = Figure(figsize=(5.2, 4.8), layout="constrained")
    ax = fig.add_subplot()
    for k, seqs in enumerate(paths):
        if not seqs or len({len(s) for s in seqs}) != 1:
            continue
        values = compute_all(list(seqs), names=("gc_content", "palindrome_score"))
        gc, pal = values["gc_content"], values["palindrome_score"]
        line = ax.plot(gc, pal, marker=".", markersize=3, linewidth=1.0, alpha=0.8, label=f"experiment {k + 1}")
        ax.plot(gc[:1], pal[:1], marker="o", markersize=6, color=line[0].get_color())
    if attractors:
        pts = np.asarray(attractors, dtype=float).reshape(-1, 2)
        ax.scatter(pts[:, 0], pts[:, 1], marker="*", s=260, color="black", zorder=5, label="attractor (measured)")
    if reported:
        pts = np.asarray(reported, dtype=float).reshape(-1, 2)
        ax.scatter(pts[:, 0], pts[:, 1], marker="X", s=110, facecolors="none", edgecolors="crimson",
                   linewidths=1.5, zorder=6, label="attractor (reported)")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("gc_content")
    ax.set_ylabel("palindrome_score")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="best")
    return save_figure(fig, path)


def _plot_unknown_dynamics(protocol: Protocol, out_dir: Path, stem: str) -> list[Path]:
    transcript = protocol.transcript
    truth = protocol.ground_truth()
    title = f"{protocol.name}: {stem}"  # the stem names the instance (s<seed> or test3): never a sealed seed
    return [plot_property_trajectories(dynamics_trajectories(transcript), truth.get("attractors", []),
                                       out_dir / f"{stem}-trajectories.png",
                                       reported=reported_attractors(transcript), title=title)]


# ---------------------------------------------------------------------- macro
def _plot_macro(protocol: Protocol, out_dir: Path, stem: str) -> list[Path]:
    from discoverylab.labs.macroecon.plots import plot_causal_graph, plot_indicators

    written = []
    runs = getattr(protocol, "runs", {})
    if runs:
        labelled = {f"exp {k}": run for k, run in sorted(runs.items())}
        written.append(plot_indicators(labelled, out_dir / f"{stem}-indicators.png"))
    # The measured graph depends on the lab's config, not on the episode: one figure per run directory.
    graph_path = out_dir / f"{protocol.name.replace('/', '-')}-causal-graph.png"
    if not graph_path.exists():
        graph = protocol.effect_graph()  # type: ignore[attr-defined]
        plot_causal_graph(graph, graph_path)
    written.append(graph_path)
    return written


register_episode_plotter("sequence/unknown-dynamics", _plot_unknown_dynamics)
register_episode_plotter("macro/causal-discovery", _plot_macro)
