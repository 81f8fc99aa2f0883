"""Unpickled envs as fast as built ones (`world/unpickle.py`): pickle's default restore gave every
world object a dict of its own (CPython 3.11), and an env adopted by the batched vector env's
driver stepped 0.72x as fast as before the trip (DoorsTest, session 18)."""

from __future__ import annotations

import collections
import gc
import pickle
import sys
from enum import Enum

import numpy as np
import pytest

from discoverylab.rl import make_rl_env
from discoverylab.scenarios.registry import all_tasks
from discoverylab.world.unpickle import FastState, restore

_CONTAINERS = (dict, list, tuple, set, frozenset, collections.deque)


class _Plain:
    def __init__(self) -> None:
        self.a, self.b, self.c = 1, "two", [3]


class _Fast(FastState):
    def __init__(self) -> None:
        self.a, self.b, self.c = 1, "two", [3]


class _Slotted(FastState):
    __slots__ = ("s", "__dict__")


class _ReadOnly(FastState):
    @property
    def shown(self) -> str:
        return "property"


def _materialised(obj: object, refs: list[object] | None = None) -> bool:
    """Whether `obj` keeps its attributes in a dict of its own: the garbage collector then sees
    that dict among its referents (`refs`, read before this call looks at `vars`), where an
    object with inline values shows the values."""
    refs = gc.get_referents(obj) if refs is None else refs
    own = vars(obj)  # (materialises it now, after the look)
    return any(ref is own for ref in refs)


def _detects_materialised_dicts() -> bool:
    """The check above works on this Python: a default-unpickled object reads as materialised,
    a built one does not (CPython 3.11, our interpreter; where a later version keeps inline values
    or shows them otherwise, the tests that need this check skip)."""
    return _materialised(pickle.loads(pickle.dumps(_Plain()))) and not _materialised(_Plain())


def _ours_materialised(root: object) -> collections.Counter[str]:
    """Per class, how many of the package's objects reachable from `root` (through containers
    and the package's objects only) keep a dict of their own."""
    seen: set[int] = set()
    stack, found = [root], collections.Counter[str]()
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        refs = gc.get_referents(obj)
        kind = type(obj)
        ours = kind.__module__.startswith("discoverylab")
        if ours and kind.__dictoffset__ and not isinstance(obj, Enum) and _materialised(obj, refs):
            found[kind.__qualname__] += 1
        stack += [r for r in refs if type(r) in _CONTAINERS or (type(r).__module__.startswith("discoverylab") and not isinstance(r, type))]
    return found


def _played(task: str, steps: int = 150, seed: int = 0) -> tuple[object, list[int]]:
    env = make_rl_env(task, max_steps=10**9)
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    actions = []
    for _ in range(steps):
        action = int((rng.random(info["action_mask"].shape) * info["action_mask"]).argmax())
        actions.append(action)
        *_, info = env.step(action)
    return env, actions


def test_restore_sets_attributes_in_order_and_handles_slots_and_read_only_names() -> None:
    obj = _Slotted()
    restore(obj, ({"x": 1, "y": 2}, {"s": 3}))
    assert (obj.s, list(vars(obj))) == (3, ["x", "y"])
    copy = pickle.loads(pickle.dumps(obj))
    assert (copy.s, vars(copy)) == (3, {"x": 1, "y": 2})
    shadowed = _ReadOnly()
    restore(shadowed, {"z": 1, "shown": "state"})  # as the default restore would: into the dict
    assert vars(shadowed) == {"z": 1, "shown": "state"} and shadowed.shown == "property"
    empty = _Fast()
    restore(empty, None)  # an object without attributes pickles with no state
    assert vars(empty) == {"a": 1, "b": "two", "c": [3]}


def test_fast_state_objects_keep_inline_attributes_where_default_unpickling_does_not() -> None:
    if not _detects_materialised_dicts():
        pytest.skip(f"this Python ({sys.version.split()[0]}) keeps inline values or hides them from gc")
    copy = pickle.loads(pickle.dumps(_Fast()))
    assert not _materialised(copy) and (copy.a, copy.b, copy.c) == (1, "two", [3])


@pytest.mark.parametrize("task", sorted(t for t, cls in all_tasks().items() if "normal" in cls.difficulties))
def test_an_unpickled_env_s_objects_are_as_their_originals(task: str) -> None:
    """Every class of the package reachable from a played env keeps its attributes inline after a
    pickle round trip wherever the original did (a class left out of `FastState` shows here:
    its objects read as materialised in the copy only), in the same order."""
    if not _detects_materialised_dicts():
        pytest.skip(f"this Python ({sys.version.split()[0]}) keeps inline values or hides them from gc")
    env, _ = _played(task)
    before = _ours_materialised(env)  # (before pickling: pickling materialises the original's dicts)
    copy = pickle.loads(pickle.dumps(env))
    after = _ours_materialised(copy)
    cold = {"ActionText"}  # a gymnasium space per env, read once a step at most
    assert {k: v for k, v in after.items() if k not in cold} == {k: v for k, v in before.items() if k not in cold}
    objects = env.unwrapped.world.objects  # type: ignore[attr-defined]
    copies = copy.unwrapped.world.objects  # type: ignore[attr-defined]
    assert objects.keys() == copies.keys()
    assert all(list(vars(objects[uuid])) == list(vars(copies[uuid])) for uuid in objects)


def test_an_unpickled_env_plays_on_as_its_original() -> None:
    env, _ = _played("PickAndPlaceTest", steps=60, seed=3)
    copy = pickle.loads(pickle.dumps(env))
    rng = np.random.default_rng(7)
    for _ in range(120):
        mask = env.action_masks()  # type: ignore[attr-defined]
        assert np.array_equal(mask, copy.action_masks())  # type: ignore[attr-defined]
        action = int((rng.random(mask.shape) * mask).argmax())
        first, second = env.step(action), copy.step(action)
        assert all(first[0][k].tobytes() == second[0][k].tobytes() for k in first[0])
        assert first[1:4] == second[1:4]
