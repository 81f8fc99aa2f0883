"""Unpickled objects as fast to use as built ones.

Pickle's default restore (and `copy.deepcopy`'s) writes an object's state into its `__dict__`,
which makes CPython 3.11 (ours) give the object a dict of its own instead of the values stored
inline with the keys its class shares: every attribute read of such an object misses the
interpreter's fastest path. An env handed between processes (the batched vector env adopting a
worker's envs) then stepped 0.72x as fast as before the trip (DoorsTest, session 18).
`FastState.__setstate__` sets the attributes one by one, in their original order, as `__init__`
did: the object keeps its inline values (`tests/test_unpickle.py`). `CopiedWhole` makes
`copy.copy` of an env (or one of our wrappers) the clone `copy.deepcopy` makes.
"""

from __future__ import annotations

import copy
from typing import Any, Self


def restore(obj: object, state: Any) -> None:
    """Set `state` (what `object.__getstate__` gave: a dict, or (dict, slots dict) where the
    class has slots) on `obj`, attribute by attribute. A name a data descriptor without a setter
    shadows goes into `__dict__` directly, as the default restore would put it."""
    if isinstance(state, tuple):
        state, slots = state
        for name, value in (slots or {}).items():
            setattr(obj, name, value)
    if not state:
        return
    put = object.__setattr__
    for name, value in state.items():
        try:
            put(obj, name, value)
        except AttributeError:
            obj.__dict__[name] = value


def compiled_fields(cls: type) -> tuple[str, ...]:
    """The typed C fields of `cls` and its bases where mypyc compiled them (`make native`:
    `__mypyc_attrs__`), in order, each once; empty for a class of the pure-Python engine."""
    names = dict.fromkeys(name for base in cls.__mro__ for name in vars(base).get("__mypyc_attrs__", ()))
    return tuple(name for name in names if name not in ("__dict__", "__weakref__"))


def instance_state(obj: object) -> dict[str, Any]:
    """A copy of `obj`'s attributes by name: its `__dict__`, or, for a compiled class (`make
    native`: typed fields, no dict), those of its `compiled_fields` that are set."""
    try:
        return dict(obj.__dict__)
    except AttributeError:
        return {name: getattr(obj, name) for name in compiled_fields(type(obj)) if hasattr(obj, name)}


class FastState:
    """Base of the classes with many instances or hot attributes (world objects, the world, the
    env and its encoder): unpickled, they keep the speed of built ones (module docstring)."""

    __slots__ = ()

    def __setstate__(self, state: Any) -> None:
        restore(self, state)


class CopiedWhole:
    """`copy.copy` makes an independent clone, as `copy.deepcopy` does: a shallow copy of an env
    shared its world, and stepping the copy moved the original's agent behind the original's
    step counter, cached observation and slots (the env, `DiscreteActions`, `Levels`,
    `OneHotObservation`)."""

    __slots__ = ()

    def __copy__(self) -> Self:
        return copy.deepcopy(self)
