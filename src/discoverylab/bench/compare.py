"""`discoverylab report RUN_DIR RUN_DIR ...`: several runs side by side in one table.

An LLM agent's run and the random and oracle baselines are separate runs by design (each run
directory holds one config), yet the paper's tables put them side by side. Each run's agents
become columns named by agent and model (`hypothesizer/gpt-4o`), with the split added where the
runs played different ones and the run folder's name where two columns would still read the
same; every run is read and checked exactly as a single-folder report reads it, and each keeps
its own warnings.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from discoverylab.bench.episode import EpisodeRecord
from discoverylab.bench.report import Report, ReportError, SavedRun, build_report, md_cell, read_run

SPLIT_NAMES = {"seed": "seeds"}  # raw public seeds; the other splits go by their own name


@dataclass(frozen=True, slots=True)
class Column:
    """One column group of a comparison: an agent of one run."""

    label: str
    run_dir: Path
    agent: str
    model: str | None
    splits: str
    episodes: int
    config_hash: str


@dataclass(slots=True)
class Comparison:
    report: Report  # agents are the column labels
    columns: list[Column]
    runs: list[SavedRun]


def _model(records: list[EpisodeRecord]) -> str | None:
    """The LLM an agent's records name (`embedded` for the offline model); None for other agents."""
    names = set()
    for r in records:
        if r.llm is not None:
            names.add(str(r.llm.get("model") or ("embedded" if r.llm.get("base_url") == "embedded" else "?")))
    return "+".join(sorted(names)) or None


def _column(run: SavedRun, agent: str) -> Column:
    mine = [r for r in run.records if r.agent == agent]
    model = _model(mine)
    splits = "+".join(sorted({SPLIT_NAMES.get(r.split, r.split) for r in mine}))
    hashes = sorted({r.config_hash for r in mine if r.config_hash})
    return Column(f"{agent}/{model}" if model else agent, run.run_dir, agent, model, splits, len(mine), "+".join(hashes))


def _unique(columns: list[Column]) -> list[Column]:
    """Labels that tell the columns apart: agent and model, then the split where the columns'
    splits differ, then the run folder's name where labels still repeat (the same agent and
    model in two runs), and its whole path where the names repeat too."""
    if len({c.splits for c in columns}) > 1:
        columns = [replace(c, label=f"{c.label}, {c.splits}") for c in columns]
    labels = [c.label for c in columns]
    named = [f"{c.label} ({c.run_dir.name})" if labels.count(c.label) > 1 else c.label for c in columns]
    return [replace(c, label=f"{c.label} ({c.run_dir})" if named.count(name) > 1 else name)
            for c, name in zip(columns, named, strict=True)]


def load_comparison(run_dirs: list[Path]) -> Comparison:
    """Read each run (a ReportError names the folder that cannot be reported) and build one report
    whose columns are the runs' agents, in the order the runs were given."""
    seen: set[Path] = set()
    for run_dir in run_dirs:
        if run_dir.resolve() in seen:
            raise ReportError(f"{run_dir} is given twice; name each run folder once")
        seen.add(run_dir.resolve())
    runs = [read_run(run_dir) for run_dir in run_dirs]
    columns = _unique([_column(run, agent) for run in runs for agent in sorted({r.agent for r in run.records})])
    label = {(c.run_dir, c.agent): c.label for c in columns}
    records = [r.model_copy(update={"agent": label[run.run_dir, r.agent]}) for run in runs for r in run.records]
    report = build_report(run_dirs[0], records, [c.label for c in columns],
                          [b for run in runs for b in run.bad_lines], sum(run.bad_grades for run in runs))  # fmt: skip
    return Comparison(report, columns, runs)


def runs_markdown(columns: list[Column]) -> list[str]:
    """The markdown table saying which run folder each column comes from."""
    out = ["## Runs", "", "| Column | Run folder | Agent | Model | Split | Episodes | Config |", "|---|---|---|---|---|---:|---|"]
    for c in columns:
        cells = [c.label, str(c.run_dir), c.agent, c.model or "–", c.splits, str(c.episodes), c.config_hash]
        out.append("| " + " | ".join(md_cell(x) for x in cells) + " |")
    return [*out, ""]


def comparison_markdown(comparison: Comparison) -> str:
    """The single-run markdown with the runs named under the title."""
    from discoverylab.bench.report import to_markdown

    _, _, rest = to_markdown(comparison.report).partition("\n\n")  # its title names one folder
    title = "# Results: " + ", ".join(str(run.run_dir) for run in comparison.runs)
    return "\n".join([title, "", *runs_markdown(comparison.columns), rest])
