"""Combined lazy-agent attacks on the sealed test split (session 21 red team).

Each attack alone is cheap: bet on the prior learnt from public instances, read which answer
options the first observation names, copy the answer of the public instance whose first
observation looks most like this one, read a number off the first observation and scale it. A
lazy agent combines them, so every strategy here learns from public `train` instances (whose
golds anyone can read by replaying them) and is then scored on sealed `test` instances (fixed
key: the same sample on every run). None may beat the stated chance by more than the sampling
margin, on any answer-sheet field or knowledge question of any discovery task and difficulty.

The same holds on the RL path: two learners fitted on public instances' step-0 symbolic tensor
and action mask (the nearest by Hamming distance; the best one-feature rule) must not name the
first choice field's answer above chance on sealed instances; on the numeric sheets (Rocket
Science, Archaeology Dating Easy) neither copying the nearest instance's numbers nor regressing
them on the tensor's most correlated features fills a sheet above chance.

What they found (fixed; each named test failed before):
- Reactor Lab Easy's room holds only the critical instrument, so the instrument on show named
  the key property: copying the nearest public instance's `key_property` was right on 0.85 of
  sealed instances (chance 0.2), and its knowledge question "depends on the X reading" likewise.
  Easy's sheet and knowledge now ask only for the law (m), which needs the measurements.
- Lost in Translation Easy offered 15 objects on the sheet (chance 1/15) while the first
  observation shows the five on the store's tables, one of which is always the answer: guessing
  among those five expected 0.2. The options are now the instance's five objects (chance 1/5).
- Rocket Science Easy named a real body ("exactly those of Europa", the original's Easy): its
  radius and gravity were textbook facts, and remembering each body from public instances filled
  40 of 40 sealed Easy sheets (chance 0.005). Easy now states a drawn radius and draws the mass as
  Normal does (the gravity is the pendulum's to find); the attack now remembers G*M by radius.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
from test_fixed_reports import states

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.instances import make_instance
from discoverylab.scenarios.answer_forms import answer_form, answer_gold
from discoverylab.scenarios.registry import all_tasks
from discoverylab.scoring.answer_sheet import Choice, Field, Form, Number

KEY = b"discoverylab-red-team-combined-attack-key"
TASKS = [(t, d) for t, cls in sorted(all_tasks().items()) if cls.suite == "discovery" for d in cls.difficulties]
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
NUMBERS_READ = 300  # the first numbers of the first observation a probe may scale
# Known gaps of the knowledge attacks, each a strict xfail (a fix shows as XPASS): none since Rocket
# Science Easy stopped naming a real body (session 21).
KNOWN_KNOWLEDGE: dict[tuple[str, str], str] = {}
# Known gaps of the slow sweep, each a strict xfail (a fix shows as XPASS). Archaeology Easy was one
# until session 21: its oldest age, the largest of three of ten fixed ages, was 1,000,000 years on
# 27% of instances; the oldest is now drawn uniformly (`ArchaeologyDating.unknown_ages`).
KNOWN_SWEEP: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Seen:
    """One instance as the attacker meets it (the first observation) and as it is graded."""

    text: str  # the first observation's text, lower-cased
    words: frozenset[str]
    form: Form
    gold: dict[str, Any]
    facts: tuple[str, ...]  # each knowledge question's gold facts, joined


@cache
def _env(task: str, difficulty: str) -> DiscoveryWorldEnv:
    return DiscoveryWorldEnv(task, difficulty, info="lean")


@cache
def seen(task: str, difficulty: str, split: str, index: int) -> Seen:
    inst = make_instance(task, difficulty, split, index, KEY if split == "test" else None)
    env = _env(task, difficulty)
    obs, _ = env.reset(options={"instance": inst})
    text = str(obs).lower()
    card = env.scorecard(reveal=True)
    facts = tuple(" ".join(q["goldFacts"]) for q in card["knowledgeQuestions"])
    return Seen(text, frozenset(re.findall(r"[a-z]+|\d+", text)), answer_form(env), answer_gold(env), facts)


def sample(task: str, difficulty: str, train: int, test: int) -> tuple[list[Seen], list[Seen]]:
    return ([seen(task, difficulty, "train", i) for i in range(train)],
            [seen(task, difficulty, "test", i) for i in range(test)])  # fmt: skip


def bound(chance: float, n: int) -> float:
    """Chance plus three standard errors of a fair guesser (and one instance)."""
    return chance + 3 * math.sqrt(chance * (1 - chance) / n) + 1 / n


def nearest(s: Seen, pool: list[Seen]) -> Seen:
    """The public instance whose first observation shares the most words with `s`'s (Jaccard);
    `s` itself is left out (leave-one-out on the training instances)."""
    others = [p for p in pool if p is not s]
    return max(others, key=lambda p: len(s.words & p.words) / len(s.words | p.words))


# ---- answer-sheet strategies: each gives an instance an expected score for one field ----------
Strategy = Callable[[Seen], float]


def _options(s: Seen, name: str) -> tuple[Any, ...]:
    kind = s.form.field(name).kind
    assert isinstance(kind, Choice)
    return kind.options


def _mentioned(s: Seen, name: str) -> list[Any]:
    """The field's options that the first observation names, in the order it first names them."""
    found = {o: s.text.find(str(o).lower()) for o in _options(s, name)}
    return sorted((o for o, at in found.items() if at >= 0), key=lambda o: found[o])


def _right(f: Field, s: Seen, answer: Any) -> float:
    try:
        return float(f.kind.matches(f.kind.parse(answer), s.gold[f.name]))
    except (ValueError, TypeError):
        return 0.0


def _uniform(f: Field, s: Seen, among: list[Any]) -> float:
    """Expected score of a uniform guess among `among` (the prior's mode where it is empty)."""
    return sum(_right(f, s, o) for o in among) / len(among) if among else 0.0


def choice_strategies(f: Field, train: list[Seen]) -> dict[str, Strategy]:
    """Prior, option rank, nearest public instance, and probes of what the first observation names
    (alone, and backed by the prior)."""
    name = f.name
    mode = Counter(str(s.gold[name]) for s in train).most_common(1)[0][0]
    rank = Counter(_options(s, name).index(s.gold[name]) for s in train).most_common(1)[0][0]

    def probe(pick: Callable[[Seen, list[Any]], Any]) -> Strategy:
        return lambda s: _right(f, s, pick(s, named) if (named := _mentioned(s, name)) else mode)

    return {
        "prior": lambda s: _right(f, s, mode),
        "rank": lambda s: _right(f, s, _options(s, name)[rank] if rank < len(_options(s, name)) else mode),
        "nearest": lambda s: _right(f, s, nearest(s, train).gold[name]),
        "among_named": lambda s: _uniform(f, s, _mentioned(s, name)),
        "among_unnamed": lambda s: _uniform(f, s, [o for o in _options(s, name) if o not in _mentioned(s, name)]),
        "first_named": probe(lambda s, m: m[0]),
        "last_named": probe(lambda s, m: m[-1]),
        "most_named": probe(lambda s, m: max(m, key=lambda o: s.text.count(str(o).lower()))),
    }


def _read(s: Seen) -> tuple[float, ...]:
    return _read_text(s.text)


@cache
def _read_text(text: str) -> tuple[float, ...]:
    """Parsed once per observation: `number_strategies` reads each up to 3 x 300 times (one regex
    pass over a Rocket Science map each time was 14 of the test's 16 s)."""
    return tuple(float(x) for x in NUMBER.findall(text)[:NUMBERS_READ])


def number_strategies(f: Field, train: list[Seen]) -> dict[str, Strategy]:
    """The prior's densest value, and (one number) the k-th number of the first observation times
    the ratio that fits the training instances best, for the k that fits best."""
    golds = [s.gold[f.name] for s in train]
    best = max(golds, key=lambda c: sum(f.kind.matches(c, g) for g in golds))
    out: dict[str, Strategy] = {"prior": lambda s: float(f.kind.matches(best, s.gold[f.name]))}
    if isinstance(f.kind, Number):
        fits: list[tuple[float, int, float]] = []
        for k in range(NUMBERS_READ):
            pairs = [(_read(s)[k], g) for s, g in zip(train, golds, strict=True) if len(_read(s)) > k and _read(s)[k]]
            if len(pairs) >= len(train) // 2:
                ratio = statistics.median(g / x for x, g in pairs)
                fits.append((sum(f.kind.matches(ratio * x, g) for x, g in pairs), k, ratio))
        if fits:
            _, k, ratio = max(fits)
            out["scaled_reading"] = lambda s: float(len(_read(s)) > k and f.kind.matches(ratio * _read(s)[k], s.gold[f.name]))
    return out


def sheet_attack_scores(task: str, difficulty: str, train: int, test: int) -> list[tuple[str, str, float, float, int]]:
    """(field, strategy, mean score on the sealed instances, the field's chance, n) for each."""
    learn, sealed = sample(task, difficulty, train, test)
    out = []
    for f in sealed[0].form.fields:
        strategies = choice_strategies(f, learn) if isinstance(f.kind, Choice) else number_strategies(f, learn)
        for name, strategy in strategies.items():
            out.append((f.name, name, statistics.fmean(strategy(s) for s in sealed), f.chance_score, len(sealed)))
    return out


def _numbers(text: str) -> list[float]:
    return sorted(float(n) for n in NUMBER.findall(text))


def judged_equal(report: str, gold: str) -> bool:
    """`test_fixed_reports.py`'s strict, symmetric judge, and every number within 1% (that judge
    lets numbers differ by 6%, the oracle's fitting margin, which would credit a copied slope of
    71 for a gold of 75; a judge asked for "a slope of 75" would not)."""
    mine, want = _numbers(report), _numbers(gold)
    return states(report, gold) and len(mine) == len(want) and all(
        abs(a - b) <= 0.01 * max(abs(b), 1.0) for a, b in zip(mine, want, strict=True))


def knowledge_attack_scores(task: str, difficulty: str, train: int, test: int) -> list[tuple[int, str, float, float, int]]:
    """Per knowledge question: the training instances' commonest gold fact, or the gold fact of the
    public instance that looks most like this one, sent as the report; chance 1/k for k distinct
    training answers (`judged_equal`)."""
    learn, sealed = sample(task, difficulty, train, test)
    out = []
    for q in range(len(sealed[0].facts)):
        answers = Counter(s.facts[q] for s in learn if len(s.facts) > q)
        distinct: list[str] = []
        for answer in answers:
            if not any(judged_equal(answer, d) for d in distinct):
                distinct.append(answer)
        mode = answers.most_common(1)[0][0]
        asked = [s for s in sealed if len(s.facts) > q]
        copied = [nearest(s, learn).facts for s in asked]
        reports = {"commonest": [mode] * len(asked),
                   "nearest": [c[q] if len(c) > q else "" for c in copied]}  # fmt: skip
        for name, sent in reports.items():
            hits = statistics.fmean(judged_equal(r, s.facts[q]) for r, s in zip(sent, asked, strict=True))
            out.append((q, name, hits, 1 / len(distinct), len(asked)))
    return out


def _beats(rows: list[tuple[Any, str, float, float, int]]) -> list[str]:
    return [f"{field} {name}: {score:.2f} > {bound(chance, n):.2f} (chance {chance:.3f})"
            for field, name, score, chance, n in rows if score > bound(chance, n)]  # fmt: skip


def _knowledge_params() -> list[Any]:
    marks = {k: [pytest.mark.xfail(reason=v, strict=True)] for k, v in KNOWN_KNOWLEDGE.items()}
    return [pytest.param(t, d, marks=marks.get((t, d), []), id=f"{t}-{d}") for t, d in TASKS]


@pytest.mark.parametrize(("task", "difficulty"), TASKS, ids=[f"{t}-{d}" for t, d in TASKS])
def test_attack_prior_and_first_observation_probes_on_the_sealed_sheet(task: str, difficulty: str) -> None:
    assert not _beats(sheet_attack_scores(task, difficulty, 30, 60))  # type: ignore[arg-type]


@pytest.mark.parametrize(("task", "difficulty"), _knowledge_params())
def test_attack_commonest_or_nearest_public_report_on_the_sealed_split(task: str, difficulty: str) -> None:
    assert not _beats(knowledge_attack_scores(task, difficulty, 30, 60))  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.parametrize(("task", "difficulty"), [
    pytest.param(t, d, id=f"{t}-{d}", marks=[pytest.mark.xfail(reason=KNOWN_SWEEP[(t, d)], strict=True)]
                 if (t, d) in KNOWN_SWEEP else []) for t, d in TASKS])  # fmt: skip
def test_attack_prior_and_probes_on_the_sealed_split_200_instances(task: str, difficulty: str) -> None:
    rows: list[Any] = sheet_attack_scores(task, difficulty, 100, 200)
    if (task, difficulty) not in KNOWN_KNOWLEDGE:
        rows += knowledge_attack_scores(task, difficulty, 100, 200)
    assert not _beats(rows)


# ---- Rocket Science Easy: remember G*M from public instances, by the stated radius ----
RADIUS = re.compile(r"radius of planet x is (\d+) km")
HEIGHT = re.compile(r"altitude of (\d+) km")
FACT_NUMBER = re.compile(r"about (\d+(?:\.\d+)?)")


def remembered_gm(train: list[Seen]) -> list[tuple[float, float]]:
    """(radius m, G*M) of each public instance: the stated radius, and the orbit-speed fact v at
    height h (G*M = v^2 * (R + h))."""
    out: list[tuple[float, float]] = []
    for s in train:
        radius, height = RADIUS.search(s.text), HEIGHT.search(s.text)
        assert radius is not None and height is not None
        speed = float(FACT_NUMBER.findall(s.facts[-1])[0])
        r = float(radius.group(1)) * 1000
        out.append((r, speed**2 * (r + float(height.group(1)) * 1000)))
    return out


def rocket_easy_memory_hits(train: int, test: int) -> tuple[float, float, int]:
    """(share of sealed sheets right, the field's chance, n): the radius and height read off the
    task text, G*M taken from the public instance nearest in radius (Easy named a real body until
    session 21: remembering each body's numbers won 40 of 40)."""
    learn, sealed = sample("RocketScience", "easy", train, test)
    known = remembered_gm(learn)
    f = sealed[0].form.fields[0]
    hits = []
    for s in sealed:
        radius, height = RADIUS.search(s.text), HEIGHT.search(s.text)
        assert radius is not None and height is not None
        r = float(radius.group(1)) * 1000
        gm = min(known, key=lambda k: abs(k[0] - r))[1]
        guess = math.sqrt(gm / (r + float(height.group(1)) * 1000))
        hits.append(_right(f, s, guess))
    return statistics.fmean(hits), f.chance_score, len(sealed)


def test_attack_rocket_easy_remembered_gm_and_arithmetic() -> None:
    """Easy states the radius and the height: G*M remembered from the public instance nearest in
    radius gives no speed within the sheet's tolerance (chance 0.005)."""
    score, chance, n = rocket_easy_memory_hits(40, 40)
    assert score <= bound(chance, n), score


# ---- the RL path: the step-0 symbolic tensor and action mask, learnt from public instances ----
RL_PAIRS = [("Proteomics", "easy"), ("Proteomics", "challenge"), ("SpaceSick", "easy"), ("PlantNutrients", "easy"),
            ("ReactorLab", "challenge"), ("ArchaeologyDating", "challenge"), ("CombinatorialChemistry", "easy"),
            ("LostInTranslation", "challenge")]  # fmt: skip


@cache
def rl_env(task: str, difficulty: str) -> Any:
    from discoverylab.rl import make_rl_env

    return make_rl_env(task, difficulty)


@cache
def rl_seen(task: str, difficulty: str, split: str, index: int) -> tuple[tuple[int, ...], str]:
    """(the step-0 symbolic observation and action mask, flattened; the first choice field's gold
    as an option rank and name) of one instance."""
    import numpy as np

    env = rl_env(task, difficulty)
    obs, _ = env.reset(options={"instance": make_instance(task, difficulty, split, index, KEY if split == "test" else None)})
    flat = np.concatenate([np.asarray(obs[k]).ravel() for k in sorted(obs)] + [np.asarray(env.action_masks()).ravel()])
    if (task, difficulty) == ("ReactorLab", "easy"):  # the control: its property is on show
        return tuple(int(v) for v in flat), str(env.unwrapped.scenario.dimension.words)
    field = next(f for f in answer_form(env).fields if isinstance(f.kind, Choice))
    return tuple(int(v) for v in flat), str(answer_gold(env)[field.name])


def rl_attack_scores(task: str, difficulty: str, train: int, test: int) -> list[tuple[str, str, float, float, int]]:
    """Two learners on the symbolic tensor plus mask: copy the nearest public instance's answer
    (Hamming distance), and the best one-feature rule (value -> commonest answer) of the training
    instances."""
    learn = [rl_seen(task, difficulty, "train", i) for i in range(train)]
    sealed = [rl_seen(task, difficulty, "test", i) for i in range(test)]
    form = seen(task, difficulty, "test", 0).form
    field = next((f for f in form.fields if isinstance(f.kind, Choice)), Field("key_property", "", Choice(tuple("abcde"))))
    mode = Counter(g for _, g in learn).most_common(1)[0][0]

    def nearest_gold(x: tuple[int, ...], pool: list[tuple[tuple[int, ...], str]]) -> str:
        return min(pool, key=lambda p: sum(a != b for a, b in zip(x, p[0], strict=True)))[1]

    def stump(k: int) -> dict[int, str]:
        by_value: dict[int, Counter[str]] = {}
        for x, g in learn:
            by_value.setdefault(x[k], Counter())[g] += 1
        return {v: c.most_common(1)[0][0] for v, c in by_value.items()}

    width = len(learn[0][0])
    best = max(range(width), key=lambda k: sum(stump(k).get(x[k], mode) == g for x, g in learn))
    rule = stump(best)
    scores = {"rl_nearest": statistics.fmean(nearest_gold(x, learn) == g for x, g in sealed),
              "rl_stump": statistics.fmean(rule.get(x[best], mode) == g for x, g in sealed)}  # fmt: skip
    return [(field.name, name, score, field.chance_score, len(sealed)) for name, score in scores.items()]


@pytest.mark.parametrize(("task", "difficulty"), RL_PAIRS, ids=[f"{t}-{d}" for t, d in RL_PAIRS])
def test_attack_symbolic_tensor_and_mask_learners_on_the_sealed_split(task: str, difficulty: str) -> None:
    assert not _beats(rl_attack_scores(task, difficulty, 40, 60))  # type: ignore[arg-type]


# Numeric sheets on the RL path: Rocket Science's orbit speed and Archaeology Dating Easy's ages
# (no choice field, so the learners above skip them). Two learners fitted on public instances'
# step-0 tensor and mask: copy the nearest one's numbers (Hamming distance), and a regression of
# each number on its most correlated features, as a value network would (the sheet's tolerance).
RL_NUMERIC_PAIRS = [("RocketScience", "easy"), ("RocketScience", "normal"), ("ArchaeologyDating", "easy")]


@cache
def rl_tensor(task: str, difficulty: str, split: str, index: int) -> tuple[int, ...]:
    """One instance's step-0 symbolic observation and action mask, flattened."""
    import numpy as np

    env = rl_env(task, difficulty)
    obs, _ = env.reset(options={"instance": make_instance(task, difficulty, split, index, KEY if split == "test" else None)})
    flat = np.concatenate([np.asarray(obs[k]).ravel() for k in sorted(obs)] + [np.asarray(env.action_masks()).ravel()])
    return tuple(int(v) for v in flat)


def _gold_numbers(value: Any) -> list[float]:
    return [float(v) for v in value] if isinstance(value, list | tuple) else [float(value)]


def _ridge(train_x: Any, train_y: Any, test_x: Any, keep: int = 5) -> Any:
    """Per column of `train_y`: least squares (a small ridge, intercept) on the `keep` features
    most correlated with it, as a lazy learner screens hundreds of features with 40 instances."""
    import numpy as np

    mean, scale = train_x.mean(0), train_x.std(0) + 1e-9
    a, b = (train_x - mean) / scale, (test_x - mean) / scale
    out = np.empty((len(test_x), train_y.shape[1]))
    for c in range(train_y.shape[1]):
        y = train_y[:, c] - train_y[:, c].mean()
        top = np.argsort(-np.abs(a.T @ y))[:keep]
        w = np.linalg.solve(a[:, top].T @ a[:, top] + 1e-3 * np.eye(len(top)), a[:, top].T @ y)
        out[:, c] = b[:, top] @ w + train_y[:, c].mean()
    return out


def rl_numeric_scores(task: str, difficulty: str, train: int, test: int, leak: bool = False) -> list[tuple[str, str, float, float, int]]:
    """The two learners' expected scores per numeric field on sealed instances. `leak`: the
    control, each instance's gold appended to its features (the learners must then find it)."""
    import numpy as np

    learn_seen, sealed_seen = sample(task, difficulty, train, test)
    rows = []
    for f in sealed_seen[0].form.fields:
        def features(split: str, group: list[Seen], f: Field = f) -> Any:
            x = np.array([rl_tensor(task, difficulty, split, i) for i in range(len(group))], dtype=float)
            if leak:
                x = np.hstack([x, np.array([_gold_numbers(s.gold[f.name]) for s in group])])
            return x

        learn, sealed = features("train", learn_seen), features("test", sealed_seen)
        varying = learn.std(0) > 0
        learn, sealed = learn[:, varying], sealed[:, varying]
        shape = type(learn_seen[0].gold[f.name])

        def as_answer(values: Any, shape: type = shape) -> Any:
            return [float(v) for v in values] if shape in (list, tuple) else float(values[0])

        y = np.array([_gold_numbers(s.gold[f.name]) for s in learn_seen])
        ridge = _ridge(learn, y, sealed)
        near = [int(np.argmin((learn != x).sum(1))) for x in sealed]
        scores = {"rl_nearest": statistics.fmean(_right(f, s, learn_seen[j].gold[f.name]) for j, s in zip(near, sealed_seen, strict=True)),
                  "rl_ridge": statistics.fmean(_right(f, s, as_answer(p)) for p, s in zip(ridge, sealed_seen, strict=True))}  # fmt: skip
        rows += [(f.name, name, score, f.chance_score, len(sealed_seen)) for name, score in scores.items()]
    return rows


@pytest.mark.parametrize(("task", "difficulty"), RL_NUMERIC_PAIRS, ids=[f"{t}-{d}" for t, d in RL_NUMERIC_PAIRS])
def test_attack_symbolic_tensor_learners_copy_no_numeric_answer(task: str, difficulty: str) -> None:
    assert not _beats(rl_numeric_scores(task, difficulty, 40, 60))  # type: ignore[arg-type]


def test_the_numeric_tensor_learners_find_an_answer_the_tensor_would_show() -> None:
    """Control: with each instance's gold appended to its tensor, the ridge learner fills the
    sheet far above chance (the attack above would see a tensor that showed the answer)."""
    beats = _beats(rl_numeric_scores("RocketScience", "easy", 40, 60, leak=True))  # type: ignore[arg-type]
    assert any("rl_ridge" in beat for beat in beats), beats


def test_the_symbolic_learners_find_reactor_easy_s_property_on_show() -> None:
    """Control: Reactor Lab Easy's room shows its one instrument, so the learners name the key
    property far above chance (why Easy's sheet no longer asks it): the one-feature rule finds the
    instrument's feature (1.0 on seeds measured; the Hamming neighbour drowns in other features)."""
    assert any("rl_stump" in beat for beat in _beats(rl_attack_scores("ReactorLab", "easy", 40, 60)))  # type: ignore[arg-type]
