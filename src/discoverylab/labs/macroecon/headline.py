"""The macro lab's headline score: the rubric's process credit counts only as far as discovery goes.

The five criteria of spec §3.7 split into discovery (Hypothesis, Goal Progress: the chance-corrected
signed-edge F1 and held-out prediction skill) and process (Workflow, Coverage, Data Analysis). A
templated scaffold (one-factor runs, boilerplate hypotheses, verified differences between its own
runs, no graph) earned full process marks and scored 0.512 on seeds 0-49 without discovering
anything, against 0.032 for the random agent. So, as DiscoveryWorld reports its procedure score
apart from discovery, the process criteria are reported on their own (`parts["process"]`) and
count in the score only in proportion to the *measured* discovery `d` (`parts["discovery"]`: the
automatic parts of Hypothesis and Goal Progress, which no prose or judge can raise):

    score = (Hypothesis + Goal Progress + d * (Workflow + Coverage + Data Analysis)) / 25

Without a judge that is `d * (0.4 + 0.6 * process)`: no discovery scores 0 whatever the process,
full discovery with a careful process scores 1, and the paper's Net (the plain mean, Table 7) stays
in `labels["net"]` and `details["net_0_5"]`.
"""

from __future__ import annotations

from collections.abc import Mapping

GRADER_VERSION = 4
"""Bumped whenever the macro grade changes (1: the plain rubric mean; 2: process gated by discovery;
3: the judge no longer reads the agent's sentences about grading, `judge_rules.agent_text`; 4: edge
credit counted above the best public graph, not the published one alone, `prior.public_candidates`):
a run directory's records carry it, and resuming or judging a run graded by another version is refused."""

DISCOVERY: tuple[str, ...] = ("hypothesis", "goal_progress")
PROCESS: tuple[str, ...] = ("workflow", "coverage", "data_analysis")


def discovery_share(hypothesis_auto: float, goal_progress_auto: float) -> float:
    """The measured discovery in 0..1: the mean of the two discovery criteria's automatic parts."""
    return min(max(0.5 * (hypothesis_auto + goal_progress_auto), 0.0), 1.0)


def headline(values: Mapping[str, float], discovery: float) -> tuple[float, dict[str, float]]:
    """(score in 0..1, the extra parts `discovery` and `process`) from the 0-5 criteria."""
    found = sum(values[c] for c in DISCOVERY)
    process = sum(values[c] for c in PROCESS)
    score = (found + discovery * process) / (5.0 * (len(DISCOVERY) + len(PROCESS)))
    return min(max(score, 0.0), 1.0), {"discovery": discovery, "process": process / (5.0 * len(PROCESS))}
