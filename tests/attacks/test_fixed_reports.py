"""A knowledge report written without playing scores at chance on every discovery task (issue 21).

The attack: for each question, the gold fact seen most often over training instances (the best a
non-player can do is bet on the prior's mode), sent as the report for evaluation instances. It
must not state the evaluation instance's gold fact more often than chance, 1/k for a question
with k distinct answers on the training instances (a question whose answer never changes has
k = 1 and fails outright). Equal facts are judged by a scripted judge that is the scoring's
mechanical matcher (`missing_gold_facts`) made symmetric and strict about short words: the report
states the gold fact (its words and numbers) and claims nothing the gold fact does not, so
"red and pink" does not answer "red", and "red" is checked although it has three letters. The
default run samples instances; the slow run uses 50 training and 50 evaluation instances.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import cache

import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.instances import make_instance
from discoverylab.scenarios.registry import all_tasks
from discoverylab.scoring.knowledge import missing_gold_facts

TASKS = [
    (tid, d) for tid, cls in sorted(all_tasks().items()) if cls.suite == "discovery" for d in cls.difficulties
]
MINE = {"LostInTranslation", "SpaceSick"}  # this change's themes (and Archaeology Challenge)
# Other themes' questions that still beat chance (measured, reported to the lead on issue 21):
# xfail until their owners make those facts instance-specific; a fix shows as XPASS.
# (Proteomics N/C were here: the gold named all five species, so a fixed report hit 0.30 / 0.48
# against chance 0.14 / 0.10; the gold now names only the outlier: 0.24 / 0.16 against 0.20.)
KNOWN: set[tuple[str, str]] = set()
_STOP = frozenset("and are for its the this that with from into than then they them".split())


@cache
def gold_facts(task: str, difficulty: str, seed: int) -> tuple[str, ...]:
    """Each knowledge question's gold facts (joined), for one instance."""
    env = DiscoveryWorldEnv(task, difficulty)
    env.reset(seed=seed)
    card = env.scorecard(reveal=True)
    env.close()
    return tuple(" ".join(q["goldFacts"]) for q in card["knowledgeQuestions"])


def _short_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) == 3 and w not in _STOP}


def states(report: str, gold: str) -> bool:
    """The scripted judge: `report` states `gold` and nothing more (words and numbers)."""
    return (
        not missing_gold_facts([gold], report)
        and not missing_gold_facts([report], gold)
        and _short_words(gold) == _short_words(report)
    )


def fixed_report_rates(task: str, difficulty: str, train: int, evaluate: int) -> list[tuple[int, float, str]]:
    """Per question: (k distinct training answers, hit rate of the most common one, that answer).
    Answers the judge cannot tell apart (the same channel with other noisy readings) count once."""
    train_facts = [
        gold_facts(task, difficulty, make_instance(task, difficulty, "train", i).seed) for i in range(train)
    ]
    eval_facts = [gold_facts(task, difficulty, seed) for seed in range(evaluate)]
    out = []
    for q in range(len(train_facts[0])):
        answers = Counter(facts[q] for facts in train_facts if len(facts) > q)
        best = answers.most_common(1)[0][0]
        distinct: list[str] = []
        for answer in answers:
            if not any(states(answer, seen) for seen in distinct):
                distinct.append(answer)
        asked = [facts[q] for facts in eval_facts if len(facts) > q]
        out.append((len(distinct), sum(states(best, gold) for gold in asked) / len(asked), best))
    return out


def _check(task: str, difficulty: str, train: int, evaluate: int) -> None:
    for q, (k, rate, best) in enumerate(fixed_report_rates(task, difficulty, train, evaluate)):
        chance = 1 / k
        margin = 2 * math.sqrt(chance * (1 - chance) / evaluate) + 0.05
        assert k >= 2, f"question {q} has one answer on every training instance: {best!r}"
        assert rate <= chance + margin, (
            f"question {q}: fixed report {best!r} hits {rate:.2f} (chance {chance:.2f})"
        )


def _params(train: int, evaluate: int) -> list[object]:
    marks = {t: [pytest.mark.xfail(reason="beats chance: reported on issue 21", strict=False)] for t in KNOWN}
    return [pytest.param(t, d, train, evaluate, marks=marks.get((t, d), []), id=f"{t}-{d}") for t, d in TASKS]


@pytest.mark.parametrize(("task", "difficulty", "train", "evaluate"), _params(20, 20))
def test_fixed_report_scores_at_chance(task: str, difficulty: str, train: int, evaluate: int) -> None:
    _check(task, difficulty, train, evaluate)


@pytest.mark.slow
@pytest.mark.parametrize(("task", "difficulty", "train", "evaluate"), _params(50, 50))
def test_fixed_report_scores_at_chance_seeds_0_to_49(
    task: str, difficulty: str, train: int, evaluate: int
) -> None:
    _check(task, difficulty, train, evaluate)


def test_every_discovery_task_is_covered() -> None:
    """8 themes x 3 difficulties, this change's themes among them."""
    assert len(TASKS) == 24 and MINE <= {t for t, _ in TASKS}


def test_the_judge_is_strict_and_symmetric() -> None:
    gold = "The moldy mushrooms are the red ones."
    assert states(gold, gold)
    assert not states("The moldy mushrooms are the pink ones.", gold)  # "red" has three letters
    assert not states("The moldy mushrooms are the red and pink ones.", gold)  # claims more
    assert states("Moldy mushrooms read 0.70 on Channel 2", "Moldy mushrooms read 0.7 on Channel 2")
    assert not states("Moldy mushrooms read 0.70 on Channel 2", "Moldy mushrooms read 0.8 on Channel 3")
