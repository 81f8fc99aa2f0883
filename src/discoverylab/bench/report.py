"""The paper's result tables from a run directory: Table 4 (discovery tasks: procedure, completion,
knowledge per task and agent, averages per difficulty) and Table 5 (unit tests: procedure and
completion), as data, markdown or a matplotlib figure.

Works on finished and partial runs alike: each episode counts once (its last line), `ok`
episodes are scored, `agent_error` ones (the model answered, nothing could be acted on) count as
0, and the other failures are counted apart so a dead server never reads as 0.
Knowledge is the mean of the records' `knowledge_score` (set by the knowledge judge during the
run, or later by `discoverylab judge`, whose `knowledge.jsonl` takes precedence); a dash means no
episode was judged, or that some episode's knowledge is unjudged (the judge failed): a cell never
leaves out an episode whose report the judge could not grade. Answers (discovery tasks, beyond the
paper) is the mean exact answer-sheet score (`answers_score`, graded with no LLM); a sheet the
agent failed to hand in (its call raised) counts as 0, like an `agent_error` episode; a dash for
cells whose records have no sheet (unit tests, older runs).
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from discoverylab.bench.episode import EpisodeRecord, episode_key
from discoverylab.bench.rundir import (
    TORN,
    BadLine,
    RunDirError,
    bad_lines_text,
    describe_io_error,
    saved_results,
    scan_results,
    stored_config_hash,
)
from discoverylab.bench.schema import SCORED_AS_ZERO

DIFFICULTY_ORDER = ("easy", "normal", "challenge")
SUITE_TITLES = {
    "discovery": "Discovery tasks (Table 4 layout)",
    "unit": "Unit tests (Table 5 layout)",
    "tutorial": "Tutorial",
}


READ_WHILE_WRITTEN = "torn last line (its writer was killed mid-line, or is still writing it)"


class ReportError(ValueError):
    """The directory holds no DiscoveryWorld results to report on."""


class FigureWriteError(OSError):
    """`--figure`'s file could not be written (a full disk, no permission): one line, exit code 74."""


@dataclass(slots=True)
class Cell:
    """Means over the scored episodes of one (row, agent): `ok` ones, and `agent_error` ones as 0;
    `failed` counts the others (infrastructure failures, redone on resume)."""

    procedure: float | None = None
    completion: float | None = None
    knowledge: float | None = None
    answers: float | None = None  # the answer sheet's exact score (None: no graded sheet)
    episodes: int = 0
    failed: int = 0


@dataclass(slots=True)
class Row:
    label: str  # task title, or "Average", "Average (Easy)", ...
    difficulty: str
    cells: dict[str, Cell]
    average: bool = False


@dataclass(slots=True)
class Table:
    suite: str
    title: str
    rows: list[Row]
    knowledge: bool  # Table 4 has a knowledge column, Table 5 does not


@dataclass(slots=True)
class Report:
    run_dir: Path
    agents: list[str]
    tables: list[Table]
    statuses: Counter[str] = field(default_factory=Counter)
    bad_lines: list[BadLine] = field(default_factory=list)
    unjudged: int = 0  # ok episodes whose knowledge the judge could not grade (their cells show –)
    costs: list[CostRow] = field(default_factory=list)  # LLM agents only (paper App. C.4)
    bad_grades: int = 0  # knowledge.jsonl rows whose score is no grade (not a number in 0..1): skipped


@dataclass(slots=True)
class CostRow:
    """What one agent's episodes of one task cost (`cost_usd` None: some episode's price is unknown)."""

    label: str
    difficulty: str
    agent: str
    episodes: int = 0
    steps: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0

    @property
    def per_100_steps(self) -> float | None:
        return None if self.cost_usd is None or not self.steps else 100 * self.cost_usd / self.steps


def _costs(label: str, difficulty: str, agent: str, records: list[EpisodeRecord]) -> CostRow | None:
    used = [r for r in records if r.usage is not None]
    if not used:
        return None
    row = CostRow(label, difficulty, agent, episodes=len(used))
    for r in used:
        assert r.usage is not None
        row.steps += r.steps
        row.requests += r.usage.requests
        row.prompt_tokens += r.usage.prompt_tokens
        row.completion_tokens += r.usage.completion_tokens
        row.cost_usd = None if row.cost_usd is None or r.usage.cost_usd is None else row.cost_usd + r.usage.cost_usd
    return row


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _answers_mean(ok: list[EpisodeRecord], zeros: list[float]) -> float | None:
    """Mean answer-sheet score; None when no record carries a sheet (unit tests, older runs). A sheet
    that was asked for but not graded (the agent's call raised) counts 0: failing to hand it in must
    never keep a wrong sheet out of the mean."""
    asked = [r for r in ok if r.answers_grade is not None or r.answers_score is not None]
    if not asked:
        return None
    return _mean([r.answers_score if r.answers_score is not None else 0.0 for r in asked] + zeros)


def _cell(records: list[EpisodeRecord]) -> Cell:
    ok = [r for r in records if r.status == "ok"]
    zeros = [0.0] * sum(r.status in SCORED_AS_ZERO for r in records)  # the model's own failures score 0
    judged = [r.knowledge_score for r in ok if r.knowledge_score is not None]
    unjudged = any(r.knowledge_status == "unjudged" for r in ok)  # a failed judge hides no wrong report
    return Cell(
        procedure=_mean([r.procedure_score for r in ok] + zeros),
        completion=_mean([1.0 if r.success else 0.0 for r in ok] + zeros),
        knowledge=None if unjudged else _mean(judged + zeros),
        answers=_answers_mean(ok, zeros),
        episodes=len(ok) + len(zeros),
        failed=len(records) - len(ok) - len(zeros),
    )


def _with_rejudged(run_dir: Path, records: list[EpisodeRecord]) -> tuple[list[EpisodeRecord], int]:
    """Records with the knowledge scores of a later `discoverylab judge` pass, when there is one,
    and the number of its rows skipped because their score is no grade (an edited or foreign file:
    copied in unchecked, a score of "high" crashed the means)."""
    from discoverylab.bench.judging import KNOWLEDGE_FILE
    from discoverylab.bench.records import read_jsonl

    path = run_dir / KNOWLEDGE_FILE
    if not path.is_file():
        return records, 0
    scores, bad = {}, 0
    for row in read_jsonl(path):  # `judge` writes only graded rows: each settles its episode
        if isinstance(row, dict):
            score = row.get("knowledge_score")
            if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)
                                      or not 0.0 <= score <= 1.0):
                bad += 1
                continue
            key = episode_key(*(row.get(k) for k in ("task", "difficulty", "agent", "split", "index", "seed")))  # type: ignore[arg-type]
            scores[key] = {"knowledge_score": score, "knowledge_status": "judged" if score is not None else None}
    return [r.model_copy(update=scores[r.key]) if r.key in scores else r for r in records], bad


@dataclass(slots=True)
class SavedRun:
    """One run folder's records (last line per episode, later judge grades applied) and what
    had to be skipped reading it."""

    run_dir: Path
    records: list[EpisodeRecord]
    bad_lines: list[BadLine]
    bad_grades: int


def read_run(run_dir: Path) -> SavedRun:
    """Read `run_dir/results.jsonl` (bad lines are skipped and listed); a ReportError names what is
    wrong with the folder or says that it holds no DiscoveryWorld episode."""
    try:
        path = saved_results(run_dir)
        # Only the run's own config (run.json), as run, bench and judge read it: a record pasted in
        # from another run is a bad line, never averaged in (compare runs with `report A B`).
        scan = scan_results(path, EpisodeRecord, lambda r: r.key, config_hash=stored_config_hash(run_dir))
    except RunDirError as exc:
        raise ReportError(str(exc)) from None
    except OSError as exc:  # e.g. no permission to read it
        raise ReportError(f"cannot read {exc.filename or run_dir}: {exc.strerror or exc}") from None
    # `report` takes no lock: a torn last line may be a run's record half appended right now.
    bad = [BadLine(b.line, READ_WHILE_WRITTEN) if b.reason == TORN else b for b in scan.bad]
    records, bad_grades = _with_rejudged(run_dir, list(scan.latest.values()))
    if not records:
        raise ReportError(_no_records(path, f"skipped {len(bad)} bad line(s): {bad_lines_text(bad)}" if bad else ""))
    return SavedRun(run_dir, records, bad, bad_grades)


def _no_records(path: Path, bad: str) -> str:
    """Why `path` gives no table: empty (no episode has ended yet), a Tiny Labs run, or no line is
    a DiscoveryWorld record (before, the first two read as the third)."""
    from discoverylab.bench.records import read_jsonl

    if not bad:
        return f"{path} is empty: no episode has finished there yet (each is appended as it ends)"
    if any("protocol" in rec and "task" not in rec for rec in read_jsonl(path)):
        return (f"{path} is a Tiny Labs run: `discoverylab lab run` prints its tables; `report` reads "
                "DiscoveryWorld runs (bench, run)")
    return f"{path} holds no DiscoveryWorld episode records ({bad})"


def load_report(run_dir: Path) -> Report:
    """Read `run_dir/results.jsonl` (bad lines are skipped and listed) into report tables."""
    run = read_run(run_dir)
    return build_report(run_dir, run.records, sorted({r.agent for r in run.records}), run.bad_lines, run.bad_grades)


def build_report(run_dir: Path, records: list[EpisodeRecord], agents: list[str], bad_lines: list[BadLine],
                 bad_grades: int) -> Report:  # fmt: skip
    """The tables of `records`, one column group per name in `agents` (each record's `agent`)."""
    from discoverylab.scenarios.registry import all_tasks

    registry = all_tasks()
    order = {tid: i for i, tid in enumerate(registry)}
    tables = []
    for suite in SUITE_TITLES:
        mine = [r for r in records if getattr(registry.get(r.task), "suite", "discovery") == suite]
        if not mine:
            continue
        keys = sorted({(r.task, r.difficulty) for r in mine},
                      key=lambda k: (order.get(k[0], len(order)), _difficulty_rank(k[1]), k[0]))
        rows = []
        for task, diff in keys:
            group = [r for r in mine if (r.task, r.difficulty) == (task, diff)]
            title = getattr(registry.get(task), "title", task)
            rows.append(Row(title, diff, {a: _cell([r for r in group if r.agent == a]) for a in agents}))
        rows.append(Row("Average", "", {a: _cell([r for r in mine if r.agent == a]) for a in agents}, True))
        diffs = sorted({d for _, d in keys}, key=_difficulty_rank)
        if len(diffs) > 1:
            for diff in diffs:
                group = [r for r in mine if r.difficulty == diff]
                rows.append(Row(f"Average ({diff.capitalize()})", diff,
                                {a: _cell([r for r in group if r.agent == a]) for a in agents}, True))
        tables.append(Table(suite, f"{SUITE_TITLES[suite]}; {split_line(mine)}", rows, knowledge=suite == "discovery"))
    unjudged = sum(r.status == "ok" and r.knowledge_status == "unjudged" for r in records)
    costs = []
    for task, diff in sorted({(r.task, r.difficulty) for r in records},
                             key=lambda k: (order.get(k[0], len(order)), _difficulty_rank(k[1]), k[0])):  # fmt: skip
        title = getattr(registry.get(task), "title", task)
        for a in agents:
            found = _costs(title, diff, a, [r for r in records if (r.task, r.difficulty, r.agent) == (task, diff, a)])
            costs += [found] if found is not None else []
    for a in agents:
        found = _costs("All", "", a, [r for r in records if r.agent == a])
        costs += [found] if found is not None else []
    return Report(run_dir, agents, tables, Counter(r.status for r in records), bad_lines, unjudged, costs,
                  bad_grades)


def _difficulty_rank(difficulty: str) -> int:
    return DIFFICULTY_ORDER.index(difficulty) if difficulty in DIFFICULTY_ORDER else len(DIFFICULTY_ORDER)


def metrics(table: Table) -> list[str]:
    return ["procedure", "completion", "knowledge", "answers"] if table.knowledge else ["procedure", "completion"]


def fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def to_markdown(report: Report) -> str:
    """GitHub markdown: one table per suite, agents side by side as in the paper."""
    out: list[str] = [f"# Results: {report.run_dir}", ""]
    for table in report.tables:
        names = metrics(table)
        out += [f"## {table.title}", ""]
        head = ["#", "Task", "Difficulty"] + [f"{md_cell(a)} {m}" for a in report.agents for m in names] + ["n (failed)"]
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "|".join("---" if i < 3 else "---:" for i in range(len(head))) + "|")
        number = 0
        for row in table.rows:
            number += 0 if row.average else 1
            cells = [fmt(getattr(row.cells[a], m)) for a in report.agents for m in names]
            counts = ", ".join(f"{row.cells[a].episodes} ({row.cells[a].failed})" for a in report.agents)
            label = f"**{row.label}**" if row.average else row.label
            out.append("| " + " | ".join(["" if row.average else str(number), label,
                                           "" if row.average else row.difficulty, *cells, counts]) + " |")
        out.append("")
    if report.costs:
        out += cost_markdown(report.costs)
    out.append("Statuses: " + ", ".join(f"{n} {s}" for s, n in sorted(report.statuses.items())))
    return "\n".join(out) + "\n"


def md_cell(text: str) -> str:
    """`text` for a markdown table cell: a `|` (a compared run's folder name) would split the cell."""
    return text.replace("|", "\\|")


def cost_markdown(rows: list[CostRow]) -> list[str]:
    """The cost table (paper App. C.4): dollars per task and per 100 steps, "?" for an unknown price."""
    out = ["## Cost (paper App. C.4 layout)", "",
           "| Task | Difficulty | Agent | Episodes | Steps | Requests | Prompt tokens | Completion tokens | USD | USD / 100 steps |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for r in rows:
        usd = "?" if r.cost_usd is None else f"{r.cost_usd:.4f}"
        per = "?" if r.per_100_steps is None else f"{r.per_100_steps:.4f}"
        label = f"**{r.label}**" if r.label == "All" else r.label
        out.append(f"| {label} | {r.difficulty} | {md_cell(r.agent)} | {r.episodes} | {r.steps} | {r.requests} | {r.prompt_tokens:,} "
                   f"| {r.completion_tokens:,} | {usd} | {per} |")  # fmt: skip
    return [*out, ""]


def figure_path(path: Path) -> Path:
    """The file `plot_report` writes for `path`: a name without a suffix gets `.png`, as matplotlib
    adds it (before, `--figure out` wrote out.png and said `figure: out`); a folder or an image
    format matplotlib cannot write is a ReportError (before, a traceback after the tables)."""
    from matplotlib.backend_bases import FigureCanvasBase

    if path.is_dir():
        raise ReportError(f"--figure {path} is a folder; give a file name such as {path / 'report.png'}")
    path = path if path.suffix else path.with_suffix(".png")
    above = next((p for p in path.parents if p.exists()), None)
    if above is not None and not above.is_dir():  # before: a NotADirectoryError traceback after the tables
        raise ReportError(f"--figure {path}: {above} is a file, not a folder")
    formats = FigureCanvasBase.get_supported_filetypes()
    if path.suffix[1:].lower() not in formats:
        raise ReportError(f"--figure {path}: matplotlib cannot write {path.suffix!r} files; "
                          f"use one of {', '.join(sorted(formats))}")
    return path


def plot_report(report: Report, path: Path) -> Path:
    """One panel per suite: grouped bars of each metric per task row, one colour per agent x metric."""
    path = figure_path(path)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(report.tables), 1, figsize=(12, 4.5 * len(report.tables)), squeeze=False)
    for ax, table in zip(axes[:, 0], report.tables, strict=True):
        names = metrics(table)
        series = [(a, m) for a in report.agents for m in names]
        width = 0.8 / max(1, len(series))
        labels = [row.label if row.average else f"{row.label} ({row.difficulty})" for row in table.rows]
        for i, (agent, metric) in enumerate(series):
            values = [getattr(row.cells[agent], metric) or 0.0 for row in table.rows]
            ax.bar([x + i * width for x in range(len(table.rows))], values, width, label=f"{agent} {metric}")
        ax.set_xticks([x + width * (len(series) - 1) / 2 for x in range(len(table.rows))], labels,
                      rotation=60, ha="right", fontsize=8)  # fmt: skip
        ax.set_ylim(0, 1)
        ax.set_title(table.title)
        ax.legend(fontsize=8, ncols=min(3, len(series)))
    fig.tight_layout()
    # Beside it first, then moved into place: a full disk, or a second `report` writing the same
    # file at the same time, never leaves a half-written figure where a good one was.
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(temp, dpi=110, format=path.suffix[1:].lower())
        os.replace(temp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):  # (it may never have been made)
            temp.unlink()
        raise FigureWriteError(describe_io_error(exc, path)) from None
    finally:
        plt.close(fig)
    return path


def split_line(records: list[EpisodeRecord]) -> str:
    """Which instances a table's episodes played (in its title): "test (sealed): 40 episodes",
    "raw seeds: 10 episodes, paper: 5 episodes"."""
    names = {"seed": "raw seeds", "test": "test (sealed)"}
    counts = Counter(r.split for r in records)
    return ", ".join(f"{names.get(s, s)}: {n} episodes" for s, n in sorted(counts.items()))
