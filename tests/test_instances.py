"""The instance core: splits, sealed seeds, commitments and keys."""

from __future__ import annotations

import pytest

from discoverylab import instances as inst

KEY = b"k" * 32


def test_public_splits_map_indices_to_their_documented_seeds() -> None:
    assert inst.make_instance("t", "easy", "paper", 3).seed == 3
    assert inst.make_instance("t", "easy", "dev", 0).seed == 5
    assert inst.make_instance("t", "easy", "train", 7).seed == 1007
    with pytest.raises(inst.InstanceError, match="0..4"):
        inst.make_instance("t", "easy", "paper", 5)
    with pytest.raises(inst.InstanceError, match="Unknown split"):
        inst.make_instance("t", "easy", "holdout", 0)


def test_test_split_needs_a_key_and_hides_its_seed() -> None:
    with pytest.raises(inst.InstanceError, match="sealed"):
        inst.make_instance("t", "easy", "test", 0)
    a = inst.make_instance("t", "easy", "test", 0, KEY)
    assert a.sealed and a.seed >= 2**32
    assert str(a.seed) not in repr(a)
    assert "seed" not in a.public() and a.public()["index"] == 0
    # Distinct per task, difficulty, index and key; stable for the same ones.
    seeds = {inst.make_instance(t, d, "test", i, k).seed
             for t in ("t", "u") for d in ("easy", "normal") for i in range(5) for k in (KEY, b"j" * 32)}
    assert len(seeds) == 40
    assert inst.make_instance("t", "easy", "test", 0, KEY).seed == a.seed


def test_commitment_verifies_only_with_the_right_key() -> None:
    a = inst.make_instance("t", "easy", "test", 4, KEY)
    assert inst.verify(a.public(), "t", "easy", KEY)
    assert not inst.verify(a.public(), "t", "easy", b"x" * 32)
    assert not inst.verify({**a.public(), "index": 5}, "t", "easy", KEY)
    assert not inst.verify({"split": "test"}, "t", "easy", KEY)


def test_keys_load_from_file_or_environment(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv(inst.KEY_ENV, raising=False)
    assert inst.load_key(None) is None
    path = tmp_path / "key"
    path.write_text(inst.new_key() + "\n")
    assert len(inst.load_key(path) or b"") == 64
    path.write_text("short")
    with pytest.raises(inst.InstanceError, match="too short"):
        inst.load_key(path)
    with pytest.raises(inst.InstanceError, match="Cannot read"):
        inst.load_key(tmp_path / "missing")
    monkeypatch.setenv(inst.KEY_ENV, "e" * 20)
    assert inst.load_key(None) == b"e" * 20


def test_raw_seeds_stay_public() -> None:
    a = inst.from_seed("t", "easy", 42)
    assert a.public()["seed"] == 42 and a.label == "s42" and not a.sealed
    with pytest.raises(inst.InstanceError):
        inst.from_seed("t", "easy", -1)


def test_a_revealed_key_as_text_derives_the_same_seeds(tmp_path) -> None:
    """The protocol's reveal step: anyone derives the seeds with make_instance(..., key).seed from the
    published key. Before: the key as text (what is published, and what a key file holds) raised
    `TypeError: key: expected bytes or bytearray, but got 'str'`."""
    text = inst.new_key()
    path = tmp_path / "eval.key"
    path.write_text(text + "\n")
    from_file = inst.make_instance("t", "easy", "test", 3, inst.load_key(path))
    from_text = inst.make_instance("t", "easy", "test", 3, text + "\n")
    assert from_text.seed == from_file.seed and from_text.commitment == from_file.commitment
    assert inst.verify(from_file.public(), "t", "easy", text)
    with pytest.raises(inst.InstanceError, match="too short"):
        inst.make_instance("t", "easy", "test", 0, "short")
