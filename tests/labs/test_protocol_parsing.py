"""Parser tables for the sequence-lab protocols: valid messages -> actions, invalid -> specific errors."""

from __future__ import annotations

import json

import pytest

from discoverylab.labs.sequence.parsing import (
    FinalAnswer,
    ParseFailure,
    QueryAction,
    RandomAction,
    SampleAction,
    extract_json_object,
    parse_final_answer,
    parse_round,
)
from discoverylab.labs.sequence.parsing_dynamics import (
    ExperimentAction,
    ReportAction,
    parse_dynamics_message,
)

SEQS = ["ACGTACGTAC", "GGGGGCCCCC", "AAAAAAAAAA"]


def _round(text: str, *, batch: int = 3, allow_random: bool = False) -> object:
    return parse_round(text, length=10, batch=batch, allow_random=allow_random)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("SAMPLE 0.5", 0.5),
        ("  sample .25  ", 0.25),
        ("I think...\nSAMPLE 0.2\nthen SAMPLE 0.9 maybe\nSAMPLE 0.7", 0.7),  # last valid line counts
        ("```\nSAMPLE 1\n```", 1.0),
    ],
)
def test_sample_requests(text: str, value: float) -> None:
    action = _round(text)
    assert isinstance(action, SampleAction)
    assert action.value == value


@pytest.mark.parametrize("text", ["SAMPLE 1.5", "SAMPLE -0.3"])
def test_out_of_range_sample_is_refused(text: str) -> None:
    action = _round(text)
    assert not isinstance(action, SampleAction) and "out of range" in action.message


@pytest.mark.parametrize(
    "text",
    [
        "\n".join(SEQS),
        "1. ACGTACGTAC\n2. GGGGGCCCCC\n3) AAAAAAAAAA",
        "- acgtacgtac\n* GGGGGCCCCC\n• AAAAAAAAAA",
        "Here are my picks:\n```\nACGTACGTAC\nGGGGGCCCCC\nAAAAAAAAAA\nTTTTTTTTTT\n```",  # first B used
        "Sequence 1: ACGTACGTAC\nSequence 2: GGGGGCCCCC\nSequence 3: `AAAAAAAAAA`",
    ],
)
def test_query_batches(text: str) -> None:
    action = _round(text)
    assert isinstance(action, QueryAction)
    assert action.sequences == SEQS


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("SAMPLE", "SAMPLE needs one number"),
        ("sample around 0.5 please", "SAMPLE needs one number"),
        ("ACGTACGTAC\nGGGGGCCCCC", "Found 2 valid sequence(s) but exactly 3"),
        ("ACGTACGTAC\nGGGGGCCCCCA\nAAAAAAAAAA", "has 11 letters instead of 10"),
        ("ACGTACGTAC\nGGGGGXCCCC\nAAAAAAAAAA", "letters other than A, C, G, T (X)"),
        ("What should I do?", "could not find a request"),
        ("", "could not find a request"),
        ("RANDOM", "RANDOM is not enabled"),
    ],
)
def test_invalid_round_messages_explain_the_problem(text: str, needle: str) -> None:
    action = _round(text)
    assert isinstance(action, ParseFailure)
    assert needle in action.message


def test_random_when_enabled_and_partial_batch_kept() -> None:
    assert isinstance(_round("random", allow_random=True), RandomAction)
    failure = _round("ACGTACGTAC\nbad")
    assert isinstance(failure, ParseFailure) and failure.partial == ["ACGTACGTAC"]


def test_extract_json_skips_prose_and_broken_braces() -> None:
    assert extract_json_object('Sure! {not json} then ```json\n{"a": {"b": 1}}\n``` bye') == {"a": {"b": 1}}
    assert extract_json_object("[1, 2]") is None
    assert extract_json_object("no braces") is None


HELD = ["ACGTACGTAC", "GGGGGCCCCC"]


def test_final_answer_structured() -> None:
    text = """Final:
```json
{"hypotheses": [{"rank": 2, "description": "GC fraction"},
                {"rank": 1, "description": "palindromicity", "python": "def f(s):\\n    return 0.5"}],
 "predictions": {"acgtacgtac": 0.4, "2": "0.9", "TTTTTTTTTT": 0.1}}
```"""
    answer = parse_final_answer(text, length=10, held_out=HELD)
    assert isinstance(answer, FinalAnswer)
    assert [h.rank for h in answer.hypotheses] == [1, 2]
    assert answer.hypotheses[0].python is not None
    assert answer.predictions == {"ACGTACGTAC": 0.4, "GGGGGCCCCC": 0.9}
    assert any("not among the listed" in w for w in answer.warnings)


def test_final_answer_list_predictions_and_hypothesis_cap() -> None:
    text = '{"hypotheses": ["a", "b", "c", "d"], "predictions": [0.1, 2]}'
    answer = parse_final_answer(text, length=10, held_out=HELD)
    assert isinstance(answer, FinalAnswer)
    assert len(answer.hypotheses) == 3
    assert answer.predictions == {"ACGTACGTAC": 0.1, "GGGGGCCCCC": 1.0}


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("f is the GC content", "could not find a JSON object"),
        ('{"hypotheses": 3, "predictions": "x"}', "neither usable"),
    ],
)
def test_final_answer_failures(text: str, needle: str) -> None:
    answer = parse_final_answer(text, length=10, held_out=HELD)
    assert isinstance(answer, ParseFailure) and needle in answer.message


MEAS = ["gc_content", "palindrome_score", "hamming_distance", "entropy_score"]
IDS = ["S1", "S2"]
SEQ30 = "ACGT" * 7 + "AC"


def _exp(sequence: str, **fields: object) -> str:
    return json.dumps({"type": "experiment", "sequence": sequence, **fields})


def _dyn(text: str) -> object:
    return parse_dynamics_message(text, length=30, max_steps=20, measurables=MEAS, start_ids=IDS)


def test_experiment_parsing_normalises_and_warns() -> None:
    action = _dyn("```json\n" + _exp(SEQ30.lower(), measurables=["GC_content", "mass"], steps=50) + "\n```")
    assert isinstance(action, ExperimentAction)
    assert action.sequence == SEQ30 and action.measurables == ["gc_content"] and action.steps == 20
    assert any("mass" in w for w in action.warnings) and any("clamped" in w for w in action.warnings)
    empty = _dyn(_exp(SEQ30, measurables=[], steps="3"))
    assert isinstance(empty, ExperimentAction) and empty.measurables == MEAS and empty.steps == 3


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("run an experiment please", "No JSON object"),
        ('{"type": "experiment", "sequence": "ACGT", "steps": 3}', "exactly 30 letters"),
        (_exp(SEQ30, steps=2.5), "`steps` must be an integer"),
        (_exp(SEQ30, measurables=5, steps=2), "`measurables`"),
        ('{"type": "dance"}', "`type` must be"),
    ],
)
def test_invalid_experiments(text: str, needle: str) -> None:
    action = _dyn(text)
    assert isinstance(action, ParseFailure) and needle in action.message


def test_report_parsing() -> None:
    text = ('{"type": "report", "hypothesis": "two attractors", "evidence": "runs 1-3", '
            '"attractors": [{"gc": 0.8, "pal": 0.8, "type": "two-cycle"}, [0.4, 0.2, "fixed"], {"gc": "x"}], '
            '"drivers": ["GC", "palindromicity", "gc_content"], '
            '"predictions": {"s1": {"attractor": 1, "gc": 0.8, "pal": 0.75}, "S2": 2, "S9": 1}}')
    report = _dyn(text)
    assert isinstance(report, ReportAction)
    assert [(a.coords, a.type) for a in report.attractors] == [
        ({"gc_content": 0.8, "palindrome_score": 0.8}, "2-cycle"),
        ({"gc_content": 0.4, "palindrome_score": 0.2}, "fixed")]
    assert report.drivers == ["gc_content", "palindrome_score"]
    assert report.predictions["S1"].attractor == 1 and report.predictions["S1"].state["palindrome_score"] == 0.75
    assert report.predictions["S2"].attractor == 2 and "S9" not in report.predictions
    assert len(report.warnings) == 2
    inferred = _dyn('{"hypothesis": "h"}')
    assert isinstance(inferred, ReportAction) and inferred.warnings


def test_report_keyed_by_measurable_when_the_format_names_no_axes() -> None:
    meas = ["weighted_count", "alternation_k", "entropy_score"]
    text = json.dumps({
        "type": "report", "drivers": ["weighted", "alternation_k"],
        "attractors": [{"weighted_count": 0.7, "alternation": 0.3, "type": "2-cycle"}, {"bogus": 0.5}, [0.1, 0.9]],
        "predictions": {"S1": {"attractor": 2, "weighted_count": 0.2}, "S2": {"gc": 0.4}},
    })
    report = parse_dynamics_message(text, length=30, max_steps=20, measurables=meas, start_ids=IDS, list_axes=())
    assert isinstance(report, ReportAction)
    assert report.drivers == ["weighted_count", "alternation_k"]
    assert [(a.coords, a.type) for a in report.attractors] == [
        ({"weighted_count": 0.7, "alternation_k": 0.3}, "2-cycle"),
        ({"weighted_count": 0.1, "alternation_k": 0.9}, "other")]  # a bare list runs along the named drivers
    assert report.predictions["S1"].attractor == 2 and report.predictions["S1"].state == {"weighted_count": 0.2}
    assert "S2" not in report.predictions  # gc is not a measurable of this lab
    assert any("'bogus'" in w for w in report.warnings) and any("'gc'" in w for w in report.warnings)
    assert report.as_info()["attractors"][0] == {"weighted_count": 0.7, "alternation_k": 0.3, "type": "2-cycle"}


def test_paper_format_needs_both_named_axes() -> None:
    report = _dyn('{"type": "report", "attractors": [{"gc": 0.5}, {"gc": 0.5, "palindrome_score": 0.1}]}')
    assert isinstance(report, ReportAction)
    assert [a.coords for a in report.attractors] == [{"gc_content": 0.5, "palindrome_score": 0.1}]
    assert report.as_info()["attractors"][0] == {"gc": 0.5, "pal": 0.1, "type": "other"}


@pytest.mark.parametrize(("protocol", "options", "before"), [
    ("sequence/hidden-property", {"rounds": 1}, ["SAMPLE 0.5"]),
    ("sequence/unknown-dynamics", {}, []),
    ("sequence/population-dynamics", {}, []),
    ("macro/causal-discovery", {"budget": 2}, []),
])  # fmt: skip
def test_json_nested_past_the_recursion_limit_is_an_error_reply_not_a_crash(protocol, options, before) -> None:
    """A message nested deeper than Python's recursion limit (a few KB of brackets) raised
    RecursionError out of `step`: a 500 from env-serve, an errored episode. Now it is a message
    with no usable JSON, answered like any other, and the episode goes on."""
    from discoverylab.labs.protocol import make_protocol

    lab = make_protocol(protocol, **options)
    lab.reset(seed=0)
    for message in before:
        lab.step(message)
    reply = lab.step('{"type": "report", "hypotheses": ' + "[" * 5000 + "]" * 5000 + "}")
    assert not reply.done and "json" in reply.text.lower()
