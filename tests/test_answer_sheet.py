"""Answer sheets: typed forms graded exactly (no LLM), one per discovery task and difficulty.

Kinds and grading are tested on hand-made forms; the 24 real forms on built instances (their gold
is valid and scores 1, the oracles fill them, fixed, copied, hedged and random sheets stay at
chance). Chance per form is the best blind answer's expected score (scoring/answer_sheet.py).
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest

from discoverylab.agents import RandomAgent
from discoverylab.agents.llm_common import LLMSettings
from discoverylab.bench.episode import EpisodeRecord, run_episode
from discoverylab.env import DiscoveryWorldEnv
from discoverylab.scenarios.answer_forms import (
    ANSWER_MODULES,
    NoAnswerSheet,
    answer_form,
    answer_gold,
    grade_answers,
)
from discoverylab.scenarios.registry import all_tasks
from discoverylab.scoring.answer_sheet import (
    AnswerSheetError,
    Choice,
    Field,
    Form,
    Number,
    Numbers,
    Tolerance,
    grade,
    random_answers,
    validate,
)
from llm_scripted_server import ScriptedLLMServer

SHEETS = [(tid, d) for tid, cls in all_tasks().items() if cls.suite == "discovery" for d in cls.difficulties]
DEV = range(0, 30)  # graded seeds (whole blocks of 5, 10 and 15 for the balanced answers)
TRAIN = range(1000, 1030)  # where an attacker picks its constants


def _form() -> Form:
    return Form("T", "normal", (
        Field("species", "Which?", Choice(("echojelly", "spheroid", "vortisquid"))),
        Field("speed", "How fast?", Number(Tolerance(rel=0.01), span=(0.0, 100.0)), chance=0.0),
        Field("coefficients", "Which?", Numbers(2, (Tolerance(abs=0.5), Tolerance(rel=0.1)), span=(0.0, 9.0)),
              chance=0.0),
        Field("parts", "Mix?", Numbers(3, Tolerance(abs=0.01), span=(0.0, 3.0), scale_free=True), chance=0.0),
    ))  # fmt: skip


GOLD = {"species": "spheroid", "speed": 50.0, "coefficients": [3.0, 100.0], "parts": [1, 1, 2]}


# ---- kinds, validation, grading -------------------------------------------------------------
def test_gold_scores_one_and_each_field_is_graded_alone() -> None:
    form = _form()
    assert grade(form, GOLD, GOLD).score == 1.0
    result = grade(form, {**GOLD, "speed": 51.0}, GOLD)
    assert result.score == 0.75 and [r["correct"] for r in result.fields] == [True, False, True, True]


def test_choice_matches_one_option_loosely_spelled_and_nothing_else() -> None:
    form = _form()
    assert validate(form, {**GOLD, "species": "  SpheROID "}).values["species"] == "spheroid"
    for bad in ("spheroid or echojelly", "spheroid, echojelly", ["spheroid"], ["spheroid", "echojelly"],
                {"spheroid": 1}, True, 3.0, "", "kraken"):  # fmt: skip
        result = grade(form, {**GOLD, "species": bad}, GOLD)
        assert result.fields[0]["correct"] is False and "species" in result.errors, bad


def test_number_bounds_are_exclusive_and_relative_or_absolute() -> None:
    rel = Number(Tolerance(rel=0.01), span=(0, 1))
    assert rel.matches(50.49, 50.0) and not rel.matches(50.5, 50.0) and not rel.matches(49.5, 50.0)
    both = Tolerance(rel=0.1, abs=2.0)
    assert both.accepts(1.9, 0.0) and not both.accepts(2.0, 0.0) and both.accepts(109.9, 100.0)
    assert Tolerance().accepts(7.0, 7.0) and not Tolerance().accepts(7.0000001, 7.0)
    form = _form()
    assert validate(form, {**GOLD, "speed": " 50.2 "}).values["speed"] == 50.2
    for bad in ("50 or 51", "49-51", [50.0], [49.0, 51.0], float("nan"), float("inf"), "1e400", 10**400, False, None,
                {"v": 50}):  # fmt: skip
        assert grade(form, {**GOLD, "speed": bad}, GOLD).fields[1]["correct"] is False, bad


def test_number_lists_have_one_length_per_element_tolerances_and_scale_free_proportions() -> None:
    form = _form()
    assert grade(form, {**GOLD, "coefficients": [3.4, 109.0]}, GOLD).fields[2]["correct"]
    assert not grade(form, {**GOLD, "coefficients": [3.5, 100.0]}, GOLD).fields[2]["correct"]
    assert not grade(form, {**GOLD, "coefficients": [3.0, 100.0, 0.0]}, GOLD).fields[2]["correct"]
    assert grade(form, {**GOLD, "parts": [2, 2, 4]}, GOLD).fields[3]["correct"]  # 2:2:4 is 1:1:2
    assert not grade(form, {**GOLD, "parts": [1, 2, 1]}, GOLD).fields[3]["correct"]
    for bad in ([0, 0, 0], [-1, 1, 2], "1:1:2", [[1, 1, 2]]):
        assert "parts" in grade(form, {**GOLD, "parts": bad}, GOLD).errors, bad


def test_bad_sheets_get_clear_errors_never_a_crash() -> None:
    form = _form()
    for sheet in (None, [], "spheroid", 42, {"species": object()}, {1: 2}):
        result = grade(form, sheet, GOLD)
        assert result.score <= 0.25 and result.errors, sheet
    result = grade(form, {**GOLD, "extra": 1}, GOLD)
    assert result.score == 1.0 and "unknown field" in result.errors["extra"]
    assert grade(form, {}, GOLD).errors == {name: "missing" for name in GOLD}


def test_forms_reject_duplicates_and_numbers_without_a_stated_chance() -> None:
    with pytest.raises(AnswerSheetError):
        Form("T", "normal", (Field("a", "?", Choice(("x",))), Field("a", "?", Choice(("y",)))))
    with pytest.raises(AnswerSheetError):
        Form("T", "normal", (Field("a", "?", Choice(("x", " X "))),))
    with pytest.raises(AnswerSheetError):
        Form("T", "normal", (Field("a", "?", Choice(())),))
    with pytest.raises(AnswerSheetError):
        _ = Form("T", "normal", (Field("a", "?", Number(Tolerance(), span=(0, 1))),)).chance
    with pytest.raises(AnswerSheetError):
        grade(_form(), GOLD, {"species": "spheroid"})


def test_unordered_groups_accept_either_order_but_not_a_repeat() -> None:
    conds = Choice(("a", "b", "c", "none"))
    form = Form("T", "challenge", (Field("c1", "?", conds), Field("c2", "?", conds)), unordered=(("c1", "c2"),))
    gold = {"c1": "a", "c2": "b"}
    assert grade(form, {"c1": "b", "c2": "a"}, gold).score == 1.0
    assert grade(form, {"c1": "a", "c2": "a"}, gold).score == 0.5


def test_schema_and_text_render_every_field() -> None:
    form = _form()
    schema = form.json_schema()
    assert schema["required"] == list(GOLD) and schema["additionalProperties"] is False
    assert schema["properties"]["species"]["enum"] == ["echojelly", "spheroid", "vortisquid"]
    assert schema["properties"]["coefficients"]["minItems"] == schema["properties"]["coefficients"]["maxItems"] == 2
    text = form.text()
    assert all(f"- {name} (" in text for name in GOLD) and "one of: echojelly, spheroid, vortisquid" in text
    data = json.loads(json.dumps(form.to_dict()))
    assert [f["name"] for f in data["fields"]] == list(GOLD) and data["fields"][0]["schema"]["enum"][1] == "spheroid"


# ---- the 24 forms ----------------------------------------------------------------------------
@cache
def _instances(task: str, difficulty: str, seeds: range) -> tuple[tuple[Form, dict[str, Any]], ...]:
    env = DiscoveryWorldEnv(task, difficulty, info="lean")
    out = []
    for seed in seeds:
        env.reset(seed=seed)
        out.append((answer_form(env), answer_gold(env)))
    return tuple(out)


def test_every_discovery_task_and_difficulty_has_a_sheet() -> None:
    assert len(SHEETS) == 24 and {t for t, _ in SHEETS} == set(ANSWER_MODULES)
    env = DiscoveryWorldEnv("DialogTest")
    env.reset(seed=0)
    with pytest.raises(NoAnswerSheet):
        answer_form(env)


@pytest.mark.parametrize(("task", "difficulty"), SHEETS)
def test_gold_is_a_valid_sheet_that_scores_one(task: str, difficulty: str) -> None:
    for form, gold in _instances(task, difficulty, DEV):
        assert 0 < form.chance < 0.5 and form.json_schema()["required"] == [f.name for f in form.fields]
        result = grade(form, gold, gold)
        assert result.score == 1.0 and not result.errors, result


@pytest.mark.parametrize(("task", "difficulty"), SHEETS)
def test_attack_answer_sheet_form_leaks_nothing(task: str, difficulty: str) -> None:
    """The form is public: its choice lists are sorted or fixed (never creation order), and the gold's
    place in them moves from seed to seed."""
    places: dict[str, set[int]] = {}
    lists: dict[str, set[tuple[Any, ...]]] = {}
    for form, gold in _instances(task, difficulty, DEV):
        for f in form.fields:
            if isinstance(f.kind, Choice):
                options = [str(o) for o in f.kind.options]
                lists.setdefault(f.name, set()).add(f.kind.options)
                places.setdefault(f.name, set()).add(options.index(str(gold[f.name])))
    for name, seen in lists.items():  # an instance's own list (e.g. its species) is sorted
        assert len(seen) == 1 or all(list(map(str, o)) == sorted(map(str, o)) for o in seen), name
    assert all(len(seen) > 1 for seen in places.values()), places


def _mean_score(sheets: list[dict[str, Any]], instances: tuple[tuple[Form, dict[str, Any]], ...]) -> float:
    return float(np.mean([grade(form, sheet, gold).score for sheet, (form, gold) in zip(sheets, instances, strict=True)]))


def _at_chance(score: float, chance: float, n: int) -> bool:
    """Within three standard errors (and one seed) of chance."""
    return score <= chance + 3 * math.sqrt(chance * (1 - chance) / n) + 1 / n


@pytest.mark.parametrize(("task", "difficulty"), SHEETS)
def test_attack_fixed_answer_sheet_per_field(task: str, difficulty: str) -> None:
    """A constant answer per field (every option of a choice; for numbers, the value most often
    right on other seeds) is right no more often than the field's stated chance."""
    dev = _instances(task, difficulty, DEV)
    form = dev[0][0]
    for f in form.fields:
        if isinstance(f.kind, Choice):
            constants = list(f.kind.options)
        else:
            train = [g[f.name] for _, g in _instances(task, difficulty, TRAIN)]
            constants = [max(train, key=lambda c: sum(f.kind.matches(c, g) for g in train))]  # noqa: B023
        for constant in constants:
            hits = sum(f.kind.matches(constant, g[f.name]) for _, g in dev)
            assert _at_chance(hits / len(dev), f.chance_score, len(dev)), (f.name, constant, hits)


@pytest.mark.parametrize(("task", "difficulty"), SHEETS)
def test_attack_fixed_answer_sheet_copied_from_other_seeds(task: str, difficulty: str) -> None:
    """Handing in another seed's gold sheet (a public seed's answers, an earlier episode's) scores
    at chance."""
    dev = _instances(task, difficulty, DEV)
    for shift in (1, 5, 7):
        sheets = [dev[(i + shift) % len(dev)][1] for i in range(len(dev))]
        assert _at_chance(_mean_score(sheets, dev), dev[0][0].chance, len(dev)), shift


@pytest.mark.parametrize(("task", "difficulty"), SHEETS)
def test_attack_hedged_answer_sheet_scores_zero(task: str, difficulty: str) -> None:
    """One value per field: a list of candidates, an 'A or B' string or a numeric range is invalid."""
    form, gold = _instances(task, difficulty, DEV)[0]
    for f in form.fields:
        kind, right = f.kind, gold[f.name]
        if isinstance(kind, Choice):
            wrong = next(o for o in kind.options if o != right)
            hedges: list[Any] = [list(kind.options), [right, wrong], f"{right} or {wrong}", f"{right}, {wrong}"]
        elif isinstance(kind, Number):
            hedges = [[right, right * 2], f"{right * 0.9}-{right * 1.1}", f"{right} or {right * 2}"]
        else:
            hedges = [[right, right], [*right, *right], " or ".join(map(str, right))]
        for hedge in hedges:
            result = grade(form, {**gold, f.name: hedge}, gold)
            assert not result.fields[[x.name for x in form.fields].index(f.name)]["correct"], (f.name, hedge)
            assert f.name in result.errors


@pytest.mark.parametrize(("task", "difficulty"), SHEETS)
def test_attack_random_answer_sheet_at_chance(task: str, difficulty: str) -> None:
    dev = _instances(task, difficulty, DEV)
    rng = np.random.default_rng(7)
    score = _mean_score([random_answers(form, rng) for form, _ in dev], dev)
    assert _at_chance(score, dev[0][0].chance, len(dev)), score


def test_random_agent_fills_valid_sheets_deterministically() -> None:
    form = _instances("RocketScience", "challenge", DEV)[0][0]
    first, again = RandomAgent(3).answer_sheet(form), RandomAgent(3).answer_sheet(form)
    assert first == again and not validate(form, first).errors


def test_attack_answer_sheet_gold_hidden_until_the_episode_ends() -> None:
    env = DiscoveryWorldEnv("Proteomics", "easy")
    env.reset(seed=0)
    form = answer_form(env)
    with pytest.raises(RuntimeError, match="after the episode ends"):
        grade_answers(env, {"outlier_species": form.fields[0].kind.options[0]})  # type: ignore[union-attr]
    assert grade_answers(env, {}, reveal=True).score == 0.0
    wrapped = gymnasium.make("discoverylab/Proteomics-Easy-v0")
    wrapped.reset(seed=0)
    assert answer_form(wrapped) == form
    with pytest.raises(RuntimeError, match="after the episode ends"):
        grade_answers(wrapped, {})
    with pytest.raises(RuntimeError, match="reset"):
        answer_form(DiscoveryWorldEnv("Proteomics", "easy"))


def test_answer_sheets_page_is_up_to_date() -> None:
    from discoverylab.scenarios.answer_docs import answer_sheets_markdown

    page = (Path(__file__).resolve().parents[1] / "docs" / "answer_sheets.md").read_text(encoding="utf-8")
    assert page == answer_sheets_markdown(), "docs/answer_sheets.md is stale: run `discoverylab docs`"


# ---- the episode path ------------------------------------------------------------------------
ORACLE_SAMPLE = [(tid, d, seed) for i, (tid, d) in enumerate(SHEETS) for seed in (i % 3,)]


@pytest.mark.parametrize(("task", "difficulty", "seed"), ORACLE_SAMPLE)
def test_oracle_fills_the_sheet_correctly(task: str, difficulty: str, seed: int) -> None:
    record, _ = run_episode(task, difficulty, seed, "oracle", keep_log=False)
    assert record.success and record.answers_score == 1.0, record.answers_grade


@pytest.mark.slow
@pytest.mark.parametrize(("task", "difficulty"), SHEETS)
def test_oracle_fills_every_sheet_correctly_on_seeds_0_to_9(task: str, difficulty: str) -> None:
    for seed in range(10):
        record, _ = run_episode(task, difficulty, seed, "oracle", keep_log=False)
        assert record.answers_score == 1.0, (seed, record.answers_grade)


def test_records_hold_the_sheet_deterministically_and_old_records_still_load() -> None:
    first, log = run_episode("PlantNutrients", "easy", 4, "random", max_steps=5)
    again, _ = run_episode("PlantNutrients", "easy", 4, "random", max_steps=5)
    assert first.answers is not None and first.answers_score is not None
    assert (first.answers, first.answers_score, first.answers_grade) == (again.answers, again.answers_score,
                                                                          again.answers_grade)  # fmt: skip
    assert log[-1]["record"]["answers_score"] == first.answers_score
    unit, _ = run_episode("DialogTest", "normal", 0, "random", max_steps=2)
    assert unit.answers is None and unit.answers_score is None
    old = first.model_dump(mode="json", exclude={"answers", "answers_score", "answers_grade"})
    assert EpisodeRecord.model_validate(old).answers_score is None


class _Silent:
    name = "silent"

    def reset(self, obs: dict[str, Any]) -> None:
        pass

    def act(self, obs: dict[str, Any]) -> Any:
        return {"action": "WAIT"}


class _Broken(_Silent):
    def answer_sheet(self, form: Form) -> dict[str, Any]:
        raise ConnectionError("the model server went away")


class _Weird(_Silent):
    def answer_sheet(self, form: Form) -> Any:
        return ["vortisquid", object()]


@pytest.mark.parametrize(("agent", "score"), [(_Silent(), 0.0), (_Broken(), None), (_Weird(), 0.0)])
def test_agents_without_a_sheet_score_zero_and_a_failed_sheet_is_ungraded(
    agent: Any, score: float | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("discoverylab.bench.episode.make_agent", lambda *a, **k: agent)
    record, _ = run_episode("Proteomics", "easy", 0, "random", max_steps=2)
    assert record.status == "ok" and record.answers_score == score
    if score is None:
        assert "went away" in record.answers_grade["errors"]["(agent)"]  # type: ignore[index]
    elif isinstance(agent, _Weird):
        assert "(sheet)" in record.answers_grade["errors"] and "(not a dict)" in record.answers  # type: ignore[index,operator]
        assert json.loads(json.dumps(record.model_dump(mode="json")))["answers_score"] == 0.0
    else:
        assert record.answers == {} and record.answers_grade["errors"]["outlier_species"] == "missing"  # type: ignore[index]


def test_llm_agent_with_an_unusable_sheet_reply_hands_in_an_empty_sheet(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text('{"thought": "wait", "action": "WAIT", "arg1": null, "arg2": null}',
                           "it is the spheroid or the echojelly", '{"outlier_species": ["spheroid", "echojelly"]}')
    settings = LLMSettings(model="gpt-4o", base_url=scripted_llm.base_url)
    record, log = run_episode("Proteomics", "easy", 0, "react", max_steps=1, llm=settings)
    assert record.status == "ok" and record.answers_score == 0.0 and len(scripted_llm.requests) == 3
    assert record.llm is not None and record.llm["invalid_replies"] == 1 and log[-1]["record"]["answers_score"] == 0.0


def test_report_shows_the_answer_sheet_column_and_a_dash_for_old_records(tmp_path: Path) -> None:
    from discoverylab.bench import records
    from discoverylab.bench.report import load_report, to_markdown
    from discoverylab.bench.runner import make_jobs, run_jobs

    jobs = make_jobs([("Proteomics", "easy"), ("DialogTest", "normal")], [0, 1], "oracle", 100)
    run_jobs(jobs + make_jobs([("Proteomics", "easy")], [0, 1], "random", 5), tmp_path)
    rep = load_report(tmp_path)
    discovery, unit = rep.tables
    row = next(r for r in discovery.rows if not r.average)
    assert row.cells["oracle"].answers == 1.0 and row.cells["random"].answers is not None
    assert "oracle answers" in to_markdown(rep) and unit.rows[0].cells["oracle"].answers is None
    lines = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    old = [{k: v for k, v in x.items() if not k.startswith("answers")} for x in lines]
    records.write_jsonl(tmp_path / "results.jsonl", old)
    row = next(r for r in load_report(tmp_path).tables[0].rows if not r.average)
    assert row.cells["oracle"].answers is None and row.cells["oracle"].completion == 1.0


def test_play_asks_the_answer_sheet_after_the_episode(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from discoverylab.cli import app

    gold = _instances("RocketScience", "normal", DEV)[0][1]
    speed = gold["orbit_speed_m_s"]
    typed = f"quit\n{gold['planet_radius_km']}\n\n{speed}\n"  # radius right, gravity skipped, speed right
    result = CliRunner().invoke(app, ["play", "RocketScience", "-d", "normal", "--seed", "0", "--logs", str(tmp_path)],
                                input=typed)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Answer sheet: one value per field" in result.output and "surface_gravity_m_s2: wrong missing" in result.output
    assert "planet_radius_km: right" in result.output and "answer sheet: 0.67" in result.output
    (log,) = tmp_path.glob("*.jsonl")  # the sheet is logged with the game, as the browser's
    end = [json.loads(x) for x in log.read_text().splitlines()][-1]
    assert end["record"]["answers_score"] == pytest.approx(0.67, abs=0.01)
    assert end["record"]["answers"] == {"planet_radius_km": gold["planet_radius_km"], "orbit_speed_m_s": speed}
    assert result.output.index("Answer sheet: one value per field") < result.output.index("(gold: ")
    unit = CliRunner().invoke(app, ["play", "DialogTest", "--seed", "0", "--logs", str(tmp_path)], input="quit\n")
    assert unit.exit_code == 0 and "Answer sheet" not in unit.output


def test_llm_agent_past_its_cost_ceiling_asks_no_sheet(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text(*['{"thought": "t", "action": "WAIT", "arg1": null, "arg2": null}'] * 3)
    settings = LLMSettings(model="gpt-4o", base_url=scripted_llm.base_url, max_cost=1e-9)
    record, _ = run_episode("Proteomics", "easy", 0, "react", max_steps=5, llm=settings)
    assert len(scripted_llm.requests) == 1 and record.answers == {} and record.answers_score == 0.0
