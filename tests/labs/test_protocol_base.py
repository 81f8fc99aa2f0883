"""The shared Protocol base: transcript shape, state errors, turn limit and the registry."""

from __future__ import annotations

from typing import Any

import pytest

from discoverylab.labs.protocol import (
    Protocol,
    ProtocolStateError,
    Reply,
    Score,
    UnknownProtocolError,
    make_protocol,
    protocol_entry,
    register_protocol,
)


class EchoProtocol(Protocol):
    """Ends when the agent says 'stop'; counts the words it received."""

    name = "test/echo"
    max_turns = 3

    def _on_reset(self, seed: int) -> str:
        self.words = 0
        return f"hello {seed}"

    def _on_step(self, message: str) -> Reply:
        self.words += len(message.split())
        return Reply(text=f"got {message}", done=message == "stop", info={"action": {"said": message}})

    def grade(self) -> Score:
        return Score(score=min(1.0, self.words / 10), parts={"words": float(self.words)})

    def ground_truth(self) -> dict[str, Any]:
        return {"answer": 42}


def test_transcript_records_both_sides_and_parsed_action() -> None:
    proto = EchoProtocol()
    assert proto.reset(7) == "hello 7"
    reply = proto.step("a b")
    assert not reply.done and reply.info["turn"] == 1
    reply = proto.step("stop")
    assert reply.done
    roles = [(e.turn, e.role) for e in proto.transcript]
    assert roles == [(0, "lab"), (1, "agent"), (1, "lab"), (2, "agent"), (2, "lab")]
    assert proto.transcript[1].info == {"said": "a b"}
    assert proto.grade().score == pytest.approx(0.3)


def test_step_before_reset_and_after_done_are_state_errors() -> None:
    proto = EchoProtocol()
    with pytest.raises(ProtocolStateError):
        proto.step("x")
    proto.reset(0)
    proto.step("stop")
    with pytest.raises(ProtocolStateError):
        proto.step("x")
    proto.reset(1)
    assert len(proto.transcript) == 1


def test_turn_limit_ends_the_episode() -> None:
    proto = EchoProtocol()
    proto.reset(0)
    assert not proto.step("a").done
    assert not proto.step("b").done
    last = proto.step("c")
    assert last.done and last.info["turn_limit"]


def test_registry_builds_and_rejects_unknown_names() -> None:
    register_protocol("test/echo", EchoProtocol, summary="echo", overwrite=True)
    assert isinstance(make_protocol("test/echo"), EchoProtocol)
    assert protocol_entry("test/echo").lab == "test"
    with pytest.raises(UnknownProtocolError, match="registered"):
        make_protocol("test/nope")
    with pytest.raises(ValueError):
        register_protocol("noslash", EchoProtocol)
    with pytest.raises(ValueError):
        register_protocol("test/echo", lambda: EchoProtocol())
