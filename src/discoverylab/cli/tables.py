"""The CLI's result tables: a scorecard after a played episode, the per-task summary of a run."""

from __future__ import annotations

from rich.table import Table

from discoverylab.bench.episode import EpisodeRecord
from discoverylab.bench.runner import summarize
from discoverylab.cli.options import console


def print_scorecard(card: dict[str, object]) -> None:
    """The full scorecard of a finished episode, one row per item."""
    table = Table(title=f"Scorecard: {card['taskName']}")
    table.add_column("item")
    table.add_column("score", justify="right")
    for item in card["scoreCard"]:  # type: ignore[attr-defined]
        table.add_row(item["name"], f"{item['score']}/{item['maxScore']}")
    table.add_row("[bold]total[/bold]", f"{card['score']}/{card['maxScore']} ({card['scoreNormalized']:.2f})")
    console.print(table)
    console.print(f"completed: {card['completed']}  success: {card['completedSuccessfully']}")


def results_table(title: str, results: list[EpisodeRecord]) -> Table:
    """One row per task and difficulty (the mean over its episodes), then all episodes."""
    table = Table(title=title)
    for col, just in (("task", "left"), ("difficulty", "left"), ("episodes", "right"), ("completion", "right"),
                      ("procedure", "right"), ("steps", "right"), ("errors", "right")):  # fmt: skip
        table.add_column(col, justify=just, no_wrap=col in ("task", "difficulty"))  # type: ignore[arg-type]
    rows = summarize(results)
    for row in rows:
        table.add_row(
            str(row["task"]), str(row["difficulty"]), str(row["episodes"]), f"{row['completion']:.2f}",
            f"{row['procedure']:.2f}", f"{row['steps']:.1f}", str(row["errors"]),
        )  # fmt: skip
    if rows:
        n = len(results)
        table.add_row(
            "[bold]all[/bold]", "", str(n), f"{sum(r.success for r in results) / n:.2f}",
            f"{sum(r.procedure_score for r in results) / n:.2f}", f"{sum(r.steps for r in results) / n:.1f}",
            str(sum(r.status != 'ok' for r in results)),
        )  # fmt: skip
    return table
