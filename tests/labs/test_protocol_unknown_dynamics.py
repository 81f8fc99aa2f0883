"""Protocol B: experiment replies, invalid rounds, the final-round note and the mandatory report turn."""

from __future__ import annotations

import json

import pytest

from discoverylab.labs.protocol import make_protocol
from discoverylab.labs.sequence.properties import compute
from discoverylab.labs.sequence.protocol_b import UnknownDynamicsProtocol

SEQ = "ATGCGTACGATTAGCCATCGATGCAATTGG"


def _proto(**config: object) -> UnknownDynamicsProtocol:
    """The paper's lab unless the config gives its own drivers (then no preset)."""
    preset = {} if "drivers" in config else {"preset": "paper"}
    proto = make_protocol("sequence/unknown-dynamics", **preset, **config)
    assert isinstance(proto, UnknownDynamicsProtocol)
    return proto


def _exp(seq: str = SEQ, steps: int = 4, measurables: list[str] | None = None) -> str:
    return json.dumps({"type": "experiment", "sequence": seq, "measurables": measurables or ["gc_content"],
                       "steps": steps, "reasoning": "probe"})


def test_intro_lists_measurables_in_a_seeded_order_and_hints() -> None:
    a, b = _proto().reset(0), _proto().reset(0)
    assert a == b and "at most 6 experiments" in a and "length 30" in a
    orders = set()
    for seed in range(6):
        proto = _proto()
        proto.reset(seed)
        orders.add(tuple(proto.order))
    assert len(orders) > 1
    assert "AAAAAAATTTTTTT" in _proto(hint="examples").reset(0)
    assert "two different convergence points" in _proto(hint="structure").reset(0)


def test_experiment_reply_has_trajectory_and_rounded_measurements() -> None:
    proto = _proto()
    proto.reset(0)
    reply = proto.step(_exp(steps=4, measurables=["gc_content", "palindrome_score"]))
    payload = json.loads(reply.text)
    assert payload["type"] == "lab_results" and payload["round"] == 1
    traj = payload["trajectory"]
    assert len(traj) == 5 and traj[0] == SEQ
    assert all(sum(a != b for a, b in zip(s, t, strict=True)) == 1 for s, t in zip(traj, traj[1:], strict=False))
    assert payload["measurements"]["gc_content"] == [round(compute("gc_content", s), 3) for s in traj]
    assert set(payload["measurements"]) == {"gc_content", "palindrome_score"}


def test_invalid_message_consumes_a_round_by_default_and_not_when_configured() -> None:
    proto = _proto()
    proto.reset(0)
    payload = json.loads(proto.step("let me think").text)
    assert payload["type"] == "error" and payload["experiments_left"] == 5
    lenient = _proto(invalid_consumes_round=False)
    lenient.reset(0)
    assert json.loads(lenient.step("{bad json").text)["experiments_left"] == 6


def test_final_round_note_then_mandatory_report_turn() -> None:
    proto = _proto(rounds=3, n_heldout=4)
    proto.reset(1)
    assert "note" not in json.loads(proto.step(_exp()).text)
    assert "final round" in json.loads(proto.step(_exp()).text)["note"]
    last = proto.step(_exp())
    first_line, request_line = last.text.split("\n", 1)
    assert json.loads(first_line)["type"] == "lab_results"
    request = json.loads(request_line)
    assert request["type"] == "report_request" and set(request["heldout_starts"]) == {"S1", "S2", "S3", "S4"}
    refused = proto.step(_exp())
    assert not refused.done and "Experiments are closed" in refused.text
    report = {"type": "report", "hypothesis": "two-cycles", "attractors": [{"gc": 0.79, "pal": 0.77, "type": "2-cycle"}],
              "drivers": ["gc_content", "palindrome_score"], "predictions": {"S1": {"attractor": 1}}}
    done = proto.step(json.dumps(report))
    assert done.done
    score = proto.grade()
    assert score.parts["drivers"] == 1.0 and score.parts["cycle_claim"] == 1.0
    assert score.parts["cycle"] == score.parts["attractors"] == 2 / 3  # the cycle claim counts by the attractor F1
    assert score.parts["attractor_recall"] == 0.5 and score.parts["attractor_precision"] == 1.0
    assert 0.0 < score.score < 1.0


def test_early_report_is_kept_and_merged_with_the_final_one() -> None:
    proto = _proto(n_heldout=2)
    proto.reset(0)
    early = {"type": "report", "hypothesis": "h", "drivers": ["gc", "pal"]}
    reply = proto.step(json.dumps(early))
    assert not reply.done and "report_request" in reply.text
    final = {"type": "report", "attractors": [{"gc": 0.41, "pal": 0.22, "type": "2-cycle"}]}
    assert proto.step(json.dumps(final)).done
    assert proto.report is not None
    assert proto.report.drivers == ["gc_content", "palindrome_score"] and proto.report.hypothesis == "h"
    assert proto.report.attractors[0].coords == pytest.approx({"gc_content": 0.41, "palindrome_score": 0.22})


def test_report_turn_gives_up_after_retries() -> None:
    proto = _proto(rounds=1, final_retries=1, n_heldout=2)
    proto.reset(0)
    proto.step(_exp())
    assert not proto.step("no json").done
    final = proto.step("still no json")
    assert final.done and proto.report is None
    assert proto.grade().score == 0.0


def test_same_messages_same_transcript() -> None:
    def run() -> list[str]:
        proto = _proto(p_explore=0.3)
        proto.reset(4)
        for steps in (3, 5):
            proto.step(_exp(steps=steps))
        return [e.text for e in proto.transcript]

    assert run() == run()


def test_drivers_must_be_listed_measurables_with_matching_attractors() -> None:
    with pytest.raises(ValueError, match="must also be listed in measurables"):
        _proto(drivers=("gc_content", "weighted_count"), attractors=((0.5, 0.5),),
               measurables=("gc_content", "palindrome_score"))
    with pytest.raises(ValueError, match="one coordinate per driver"):
        _proto(drivers=("gc_content",), attractors=((0.5, 0.5),))
    with pytest.raises(ValueError, match="drivers need attractors"):
        _proto(drivers=("gc_content",))
    with pytest.raises(ValueError, match="no property entry"):
        _proto(measurables=("gc_content", "palindrome_score", "mystery"))


# ---------------------------------------------------------------------- drivers other than (gc, pal)
WEIGHTS = {"A": 0.0, "C": 1.0, "G": 0.3, "T": 0.7}
CUSTOM = {
    "length": 20, "drivers": ("weighted_count", "alternation_k"), "attractors": ((0.7, 0.3), (0.3, 0.7)),
    "measurables": ("weighted_count", "alternation_k", "entropy_score"),
    "properties": {"weighted_count": {"kind": "weighted_count", "weights": WEIGHTS},
                   "alternation_k": {"kind": "alternation", "k": 2}},
    "n_heldout": 6,
}
SEQ20 = "ACGTTGCAACGTAAGGCCTA"


def _by_hand(seq: str) -> tuple[float, float]:
    """weighted_count with WEIGHTS and alternation with k = 2, from their definitions."""
    every_other = seq[::2]
    changes = sum(a != b for a, b in zip(every_other, every_other[1:], strict=False))
    return sum(WEIGHTS[c] for c in seq) / len(seq), changes / (len(every_other) - 1)


def test_custom_drivers_prompt_hides_drivers_and_hidden_parameters() -> None:
    proto = _proto(**CUSTOM)
    intro = proto.reset(0)
    assert '"gc": x' not in intro and '"<measurable>": x' in intro
    assert "0.7" not in intro and "undisclosed" in intro  # the weights stay hidden
    assert "s[0], s[2], s[4]" in intro
    assert proto.report_axes == ()
    structure = _proto(**CUSTOM, hint="structure").reset(0)
    assert "(weighted_count, alternation_k) space" in structure
    assert "Examples of measurements" in _proto(**CUSTOM, hint="examples").reset(0)


def test_custom_drivers_are_measured_from_their_spec_entries() -> None:
    proto = _proto(**CUSTOM)
    proto.reset(2)
    payload = json.loads(proto.step(_exp(SEQ20, steps=6, measurables=["weighted_count", "alternation_k"])).text)
    traj, meas = payload["trajectory"], payload["measurements"]
    assert meas["weighted_count"] == [round(_by_hand(s)[0], 3) for s in traj]
    assert meas["alternation_k"] == [round(_by_hand(s)[1], 3) for s in traj]
    assert proto.visited == [pytest.approx(_by_hand(s)) for s in traj]


def test_custom_drivers_report_is_keyed_by_measurable_and_graded_on_the_true_drivers() -> None:
    proto = _proto(**CUSTOM, rounds=1)
    proto.reset(3)
    proto.step(_exp(SEQ20))
    truth = proto.ground_truth()
    assert truth["drivers"] == ["weighted_count", "alternation_k"] and truth["report_keys"] == truth["drivers"]
    a1, a2 = truth["attractors"]
    report = {"type": "report", "hypothesis": "h", "drivers": ["weighted", "alternation_k"],
              "attractors": [{"weighted_count": a1[0], "alternation_k": a1[1], "entropy_score": 0.9},
                             {"weighted_count": a2[0]}]}
    assert proto.step(json.dumps(report)).done
    score = proto.grade()
    assert score.parts["drivers"] == 1.0
    # The first claim is located; the second lacks a driver coordinate and cannot match.
    assert score.parts["attractor_recall"] == 0.5 and score.parts["attractor_precision"] == 0.5
    assert score.details["report"]["attractors"][0] == {"weighted_count": a1[0], "alternation_k": a1[1],
                                                        "entropy_score": 0.9, "type": "other"}


def test_paper_keys_do_not_locate_attractors_of_other_drivers() -> None:
    proto = _proto(**CUSTOM, rounds=1)
    proto.reset(3)
    proto.step(_exp(SEQ20))
    a1 = proto.ground_truth()["attractors"][0]
    reply = proto.step(json.dumps({"type": "report", "attractors": [{"gc": a1[0], "pal": a1[1]}]}))
    assert reply.done and "not a listed measurable" in reply.text
    assert proto.grade().parts["attractors"] == 0.0


@pytest.mark.parametrize("hint", ["none", "examples", "structure"])
def test_default_spec_builds_the_paper_protocol(hint: str) -> None:
    from discoverylab.labs.sequence.lab import preset
    from discoverylab.labs.sequence.protocols import protocol_from_spec

    spec = preset("default")
    assert spec.protocol is not None
    spec.protocol = spec.protocol.model_copy(update={"hint": hint})
    from_spec = protocol_from_spec(spec)
    assert isinstance(from_spec, UnknownDynamicsProtocol) and from_spec.config.hint == hint
    assert from_spec.report_axes == ()  # reports are keyed by the agent's own drivers
    assert from_spec.reset(4) == _proto(hint=hint).reset(4)


def test_cycle_claim_comes_from_structured_fields_not_prose() -> None:
    """'does not oscillate' in the hypothesis is not a 2-cycle claim; the attractor's `type` is."""
    def cycle_part(kind: str, text: str) -> float:
        proto = _proto(rounds=1, n_heldout=2)
        proto.reset(3)
        proto.step(_exp())
        proto.step(json.dumps({"type": "report", "hypothesis": text, "drivers": ["gc_content"],
                               "attractors": [{"gc_content": 0.8, "type": kind}]}))
        return proto.grade().parts["cycle_claim"]

    truth = _proto()
    truth.reset(3)
    wrong = "fixed" if truth.truth.cycle_type == "2-cycle" else "2-cycle"
    assert cycle_part(wrong, "It does not oscillate; a two-cycle? no.") == 0.0
    assert cycle_part(truth.truth.cycle_type, "no words about cycles") == 1.0


def test_distractor_hint_differs_from_structure_and_every_seed_draws_dynamics() -> None:
    structure = make_protocol("sequence/unknown-dynamics", hint="structure")
    distractor = make_protocol("sequence/unknown-dynamics", hint="distractor")
    assert structure.reset(5) != distractor.reset(5)
    assert isinstance(distractor, UnknownDynamicsProtocol)
    hint = distractor.reset(5).splitlines()[-1]
    assert not all(d in hint for d in distractor.drivers)
    signatures = set()
    for seed in range(20):
        proto = make_protocol("sequence/unknown-dynamics")
        proto.reset(seed)
        assert isinstance(proto, UnknownDynamicsProtocol)
        signatures.add(proto.problem_signature())
    assert len(signatures) >= 10
    paper = set()
    for seed in range(3):
        proto = _proto()
        proto.reset(seed)
        paper.add(proto.problem_signature())
    assert len(paper) == 1
