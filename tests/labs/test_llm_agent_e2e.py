"""One short episode per registered protocol with the real embedded model (SmolLM2-135M).

Checks plumbing only: the loop ends, the weak model's replies are parsed (or answered with the
lab's error text), the transcript is written and re-read, and the grade is in 0..1. Not quality.
"""

from __future__ import annotations

from typing import Any

import pytest

from discoverylab.bench.records import read_jsonl, write_jsonl
from discoverylab.labs.agents import run_episode
from discoverylab.labs.llm_agent import LLMLabAgent
from discoverylab.labs.llm_formats import SMALL_MODEL_LIMITS
from discoverylab.labs.protocol import make_protocol, protocol_names
from discoverylab.llm import EmbeddedModelServer

# Smallest useful episodes; protocols not listed run with their defaults, cut to MAX_TURNS turns.
SHORT_CONFIGS: dict[str, dict[str, Any]] = {
    "sequence/hidden-property": {"rounds": 1, "n_predictions": 3, "length": 8, "batch": 4},
    "sequence/unknown-dynamics": {"rounds": 1, "n_heldout": 2, "length": 12, "max_steps": 4},
    "sequence/population-dynamics": {"rounds": 1, "size": 4, "length": 8, "n_heldout": 3, "replicates": 16},
    "macro/causal-discovery": {
        "budget": 1, "held_out": 1, "max_turns": 3,
        "ground_truth": {"replicates": 2, "steps": 40, "short_window": (1, 10), "long_window": (21, 40)},
    },
}
MAX_TURNS = 4


@pytest.mark.llm
@pytest.mark.parametrize("name", protocol_names())
def test_one_episode_with_the_embedded_model(name: str, embedded_llm: EmbeddedModelServer, tmp_path: Any) -> None:
    protocol = make_protocol(name, **SHORT_CONFIGS.get(name, {}))
    protocol.max_turns = min(protocol.max_turns, MAX_TURNS)
    client = embedded_llm.client(timeout=300.0, max_retries=1)
    agent = LLMLabAgent(protocol, client, max_tokens=300, max_text_chars=30, max_message_chars=1000, history_turns=1,
                        limits=SMALL_MODEL_LIMITS, hypothesis_updates=False)

    result = run_episode(protocol, agent, seed=7)

    assert protocol.done and 1 <= result.turns <= MAX_TURNS
    assert len(agent.turns) == result.turns
    assert client.usage.completion_tokens > 0
    assert 0.0 <= result.score.score <= 1.0

    path = tmp_path / "transcript.jsonl"
    records = [{"kind": "message", **entry.model_dump()} for entry in result.transcript]
    records += [{"kind": "agent_turn", **turn} for turn in agent.turn_records()]
    records.append({"kind": "score", "protocol": name, "seed": 7, **result.score.model_dump(mode="json")})
    write_jsonl(path, records)
    back = list(read_jsonl(path))
    assert len(back) == len(records)
    assert [r["text"] for r in back if r["kind"] == "message" and r["role"] == "agent"] == [
        t.message for t in agent.turns
    ]
