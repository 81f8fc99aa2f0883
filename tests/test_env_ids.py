"""A registered id names what it plays: `gymnasium.make(id, task=...)` cannot make `env.spec.id` lie.

Before: `gymnasium.make("discoverylab/DialogTest-Normal-v0", task="PickAndPlaceTest")` played Pick
and Place while `env.spec.id` said Dialog (so did difficulty=, make_vec's task= and the Tiny Labs
ids' protocol=). Now a keyword that contradicts the id is a ValueError naming the id to make.
"""

from __future__ import annotations

import copy
import multiprocessing
import pickle

import gymnasium
import pytest

import discoverylab
from discoverylab import gym_id, lab_gym_id

DIALOG = gym_id("DialogTest", "normal")


@pytest.mark.parametrize("kwargs, right", [
    ({"task": "PickAndPlaceTest"}, gym_id("PickAndPlaceTest", "normal")),
    ({"difficulty": "easy"}, gym_id("DialogTest", "easy")),
    ({"task": "PickAndPlaceTest", "difficulty": "easy"}, gym_id("PickAndPlaceTest", "easy")),
])  # fmt: skip
def test_make_refuses_a_task_or_difficulty_that_contradicts_the_id(kwargs: dict[str, str], right: str) -> None:
    with pytest.raises(ValueError, match="would name another environment") as caught:
        gymnasium.make(DIALOG, **kwargs)
    assert repr(right) in str(caught.value)


@pytest.mark.parametrize("mode", ["vector_entry_point", "sync"])
def test_make_vec_refuses_it_too_and_leaves_no_worker(mode: str) -> None:
    with pytest.raises(ValueError, match=gym_id("PickAndPlaceTest", "normal")):
        gymnasium.make_vec(DIALOG, 2, vectorization_mode=mode, task="PickAndPlaceTest", workers=2) \
            if mode == "vector_entry_point" else gymnasium.make_vec(DIALOG, 2, vectorization_mode=mode,
                                                                    task="PickAndPlaceTest")  # fmt: skip
    assert not multiprocessing.active_children()
    with pytest.raises(ValueError, match="task mix has no id"):
        gymnasium.make_vec(DIALOG, 2, task=["PickAndPlaceTest", "DialogTest"])


def test_a_tiny_labs_id_refuses_another_protocol() -> None:
    hidden = lab_gym_id("sequence/hidden-property")
    with pytest.raises(ValueError, match=lab_gym_id("sequence/unknown-dynamics")):
        gymnasium.make(hidden, protocol="sequence/unknown-dynamics")
    env = gymnasium.make(hidden, config={"rounds": 2})  # options of the same protocol pass
    assert env.spec is not None and env.spec.id == hidden and env.unwrapped.protocol.name == "sequence/hidden-property"


def test_keywords_that_agree_with_the_id_or_change_no_environment_pass() -> None:
    env = gymnasium.make(DIALOG, task="dialogtest", difficulty="Normal", max_steps=7)
    core = env.unwrapped
    assert env.spec is not None and env.spec.id == DIALOG == gym_id(core.scenario_cls.task_id, core.difficulty)
    assert core.max_steps == 7
    assert copy.deepcopy(core).spec.id == DIALOG and pickle.loads(pickle.dumps(core)).spec.id == DIALOG
    assert gymnasium.make(env.spec).spec.id == DIALOG  # remade from its own spec
    vec = gymnasium.make_vec(DIALOG, 2, task="DialogTest", workers=1)
    try:
        assert vec.spec is not None and vec.spec.id == DIALOG
    finally:
        vec.close()
    plain = discoverylab.make("PickAndPlaceTest")  # no id, nothing to contradict
    assert plain.spec is None
