"""Protocol A round structure, replies and the final-answer turn, replayed through `step`."""

from __future__ import annotations

import json
import re

import pytest

from discoverylab.labs.protocol import ProtocolStateError, make_protocol
from discoverylab.labs.sequence.properties import compute
from discoverylab.labs.sequence.protocol_a import HiddenPropertyProtocol, format_value

EVAL = re.compile(r"^([ACGT]{10}) -> ([0-9.]+)( \(random\))?$", re.MULTILINE)


def _proto(**config: object) -> HiddenPropertyProtocol:
    proto = make_protocol("sequence/hidden-property", **config)
    assert isinstance(proto, HiddenPropertyProtocol)
    return proto


@pytest.mark.parametrize(("value", "text"), [(0.6, "0.6"), (1.0, "1.0"), (0.0, "0.0"), (1 / 3, "0.333"), (0.25, "0.25")])
def test_value_format(value: float, text: str) -> None:
    assert format_value(value) == text


def test_intro_states_length_rounds_batch_and_options() -> None:
    intro = _proto(length=12, rounds=4, batch=5, allow_random=True).reset(0)
    assert "length 12" in intro and "exactly 4 rounds" in intro and "receive 5 sequences" in intro
    assert "`RANDOM`" in intro and "Round 1 of 4" in intro
    assert "`RANDOM`" not in _proto().reset(0)


def test_sample_reply_values_are_true_values_near_target() -> None:
    proto = _proto(hidden="gc_content")
    proto.reset(3)
    reply = proto.step("SAMPLE 0.7")
    assert reply.text.startswith("Round 1 of 5.\nSampling sequences with value around 0.7.")
    pairs = EVAL.findall(reply.text)
    assert len(pairs) == 10
    for seq, value, _ in pairs:
        assert float(value) == pytest.approx(round(compute("gc_content", seq), 3))
        assert abs(float(value) - 0.7) <= 0.1 + 1e-9
    assert reply.info["action"] == {"kind": "sample", "value": 0.7, "requested": 0.7}


def test_infeasible_target_is_clamped_and_said() -> None:
    proto = _proto(hidden="palindrome_score", length=11)  # odd N: max pal = 10/11
    proto.reset(0)
    proto.config = proto.config.model_copy(update={"epsilon": 0.05})
    reply = proto.step("SAMPLE 1")
    assert "not achievable" in reply.text and "closest achievable" in reply.text


def test_query_reply_evaluates_the_sequences_in_order() -> None:
    proto = _proto(hidden="palindrome_score", batch=3)
    proto.reset(0)
    seqs = ["AGGGGTCCCC", "GCTAGCTAGC", "CAGGGTCGGT"]
    reply = proto.step("\n".join(seqs))
    assert [(s, v) for s, v, _ in EVAL.findall(reply.text)] == [(seqs[0], "0.6"), (seqs[1], "1.0"), (seqs[2], "0.2")]


def test_strict_invalid_consumes_round_with_random_batch() -> None:
    proto = _proto(batch=3)
    proto.reset(0)
    reply = proto.step("ACGTACGTAC\nnot a sequence")
    assert "Error: Found 1 valid sequence(s)" in reply.text and "This round is used" in reply.text
    assert len(EVAL.findall(reply.text)) == 3 and reply.info["error"]
    assert proto.rounds_used == 1


def test_lenient_invalid_pads_valid_sequences_with_marked_random_ones() -> None:
    proto = _proto(batch=3, invalid_mode="lenient")
    proto.reset(0)
    rows = EVAL.findall(proto.step("ACGTACGTAC").text)
    assert rows[0][0] == "ACGTACGTAC" and rows[0][2] == ""
    assert [r[2] for r in rows[1:]] == [" (random)", " (random)"]


def _play_rounds(proto: HiddenPropertyProtocol, n: int) -> str:
    text = ""
    for _ in range(n):
        text = proto.step("SAMPLE 0.5").text
    return text


def test_final_request_lists_held_out_sequences_and_final_answer_ends_episode() -> None:
    proto = _proto(hidden="gc_content", rounds=2, n_predictions=5)
    proto.reset(1)
    text = _play_rounds(proto, 2)
    assert "All rounds are used" in text
    listed = re.findall(r"^\d+\. ([ACGT]{10})$", text, re.MULTILINE)
    assert listed == proto.prediction_sequences and len(listed) == 5
    answer = {"hypotheses": [{"rank": 1, "description": "GC fraction"}],
              "predictions": {s: compute("gc_content", s) for s in listed}}
    reply = proto.step("```json\n" + json.dumps(answer) + "\n```")
    assert reply.done and "recorded" in reply.text
    score = proto.grade()
    assert score.parts["prediction_exact"] == 1.0 and "program" not in score.parts
    assert score.score == pytest.approx(1.0)
    with pytest.raises(ProtocolStateError):
        proto.step("SAMPLE 0.5")


def test_bad_final_answer_gets_one_retry_then_free_text_is_kept() -> None:
    proto = _proto(rounds=1, final_retries=1)
    proto.reset(0)
    _play_rounds(proto, 1)
    first = proto.step("It is the GC content.")
    assert not first.done and "could not find a JSON object" in first.text
    second = proto.step("Still the GC content.")
    assert second.done and proto.answer is not None
    assert proto.answer.hypotheses[0].description == "Still the GC content." and not proto.answer.structured
    assert proto.grade().score < 0.3
    assert proto.turn == proto.max_turns


def test_hints() -> None:
    assert "belongs to one of these families" in _proto(hint="family").reset(0)
    examples = _proto(hint="examples", hidden="gc_content").reset(0)
    shown = re.findall(r"([ACGT]{10}) -> ([0-9.]+)", examples)
    assert len(shown) == 3 and all(float(v) == round(compute("gc_content", s), 3) for s, v in shown)


def test_random_hidden_property_is_drawn_per_seed_and_noise_perturbs_values() -> None:
    drawn = {_proto(hidden=None).reset(s) and _last_hidden(s) for s in range(6)}
    assert len(drawn) > 1
    proto = _proto(hidden="gc_content", noise=0.05, batch=10)
    proto.reset(0)
    rows = EVAL.findall(proto.step("SAMPLE 0.5").text)
    assert any(float(v) != round(compute("gc_content", s), 3) for s, v, _ in rows)


def _last_hidden(seed: int) -> str:
    proto = _proto(hidden=None)
    proto.reset(seed)
    return proto.hidden


def test_every_seed_draws_a_problem_and_the_paper_preset_is_fixed() -> None:
    """Seeds 0-19 draw >= 10 distinct hidden properties; `preset="paper"` hides palindromicity on all."""
    from discoverylab.labs.protocol import make_protocol

    drawn, paper = set(), set()
    for seed in range(20):
        proto = make_protocol("sequence/hidden-property")
        proto.reset(seed)
        drawn.add(proto.problem_signature())  # type: ignore[attr-defined]
        fixed = make_protocol("sequence/hidden-property", preset="paper")
        fixed.reset(seed)
        paper.add(fixed.problem_signature())  # type: ignore[attr-defined]
    assert len(drawn) >= 10 and len(paper) == 1


def test_sampler_tells_epsilon_and_flags_misses() -> None:
    """The intro states epsilon; sequences the sampler could not bring within epsilon are marked."""
    from discoverylab.labs.protocol import make_protocol

    proto = make_protocol("sequence/hidden-property", preset="paper", epsilon=0.05)
    intro = proto.reset(0)
    assert "epsilon = 0.05" in intro
    reply = proto.step("SAMPLE 0.5")  # palindromicity of length 10 takes only multiples of 0.2
    assert "missed the target" in reply.text and "(miss)" in reply.text
    hit = proto.step("SAMPLE 0.6").text
    assert "(miss)" not in hit


# ---------------------------------------------------------------------- long sequences (issue #22)
@pytest.mark.parametrize("hidden", ["gc_content", "palindrome_score", "alternation_2", "hamming_distance",
                                    "weighted_count", "entropy_score", "interaction_energy"])
def test_length_1000_with_a_long_sampler_meets_the_tolerance(hidden: str) -> None:
    from discoverylab.labs.agents import make_agent, run_episode
    from discoverylab.labs.protocol import make_protocol

    proto = make_protocol("sequence/hidden-property", hidden=hidden, length=1000, rounds=2)
    prompt = proto.reset(0)
    assert "length 1000" in prompt
    reply = proto.step("SAMPLE 0.3")
    assert "(miss)" not in reply.text
    proto2 = make_protocol("sequence/hidden-property", hidden=hidden, length=1000, rounds=1)
    assert run_episode(proto2, make_agent("sequence/hidden-property", "oracle", proto2), seed=0).score.score == pytest.approx(1.0)


@pytest.mark.parametrize("hidden", [None, "motif_score"])
def test_length_1000_without_a_long_sampler_is_refused_with_the_reason(hidden: str | None) -> None:
    """Drawn (composed) problems and the motif score are sampled by a search that misses long targets."""
    from discoverylab.labs.protocol import make_protocol

    with pytest.raises(ValueError, match="meets its tolerance on long sequences"):
        make_protocol("sequence/hidden-property", hidden=hidden, length=1000)


def test_a_program_s_outputs_are_clamped_into_0_1_as_stated_predictions_are() -> None:
    """A predictor returning 5 for every sequence is graded as one returning 1.0 (the property
    lies in [0, 1], as stated predictions are clamped): its MAE part stays in 0..1."""
    parts = []
    for value in ("5", "1.0"):
        proto = _proto(hidden="gc_content", rounds=1, n_predictions=5)
        proto.reset(1)
        _play_rounds(proto, 1)
        answer = {"hypotheses": [{"rank": 1, "description": "always high", "python": f"def f(s):\n    return {value}"}]}
        assert proto.step(json.dumps(answer)).done
        parts.append(proto.grade().parts)
    assert 0.0 <= parts[0]["program_mae"] <= 1.0
    assert {k: v for k, v in parts[0].items() if k.startswith("program")} == {k: v for k, v in parts[1].items() if k.startswith("program")}
