"""Registries mapping ``kind`` strings to classes or factories (spec §1.6), so labs can be built from data.

Every list a user sees (spec kinds, CLI choices, test parametrisation) is derived from these.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from discoverylab.labs.core.errors import UnknownKind

T = TypeVar("T")


class Registry(Generic[T]):
    """A named mapping ``kind -> T`` with a decorator for registration."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._items: dict[str, T] = {}

    def register(self, kind: str, item: T, *, overwrite: bool = False) -> T:
        """Add ``item`` under ``kind``; re-registering needs ``overwrite=True`` (catches name clashes)."""
        if kind in self._items and not overwrite and self._items[kind] is not item:
            raise ValueError(f"{self.what} kind {kind!r} is already registered; pass overwrite=True to replace it")
        self._items[kind] = item
        return item

    def decorator(self, kind: str) -> Callable[[T], T]:
        """``@registry.decorator("gc")`` registers the decorated class or function."""

        def wrap(item: T) -> T:
            return self.register(kind, item)

        return wrap

    def get(self, kind: str) -> T:
        """Look up ``kind``; unknown kinds raise ``UnknownKind`` listing the known ones."""
        try:
            return self._items[kind]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "(none)"
            raise UnknownKind(f"unknown {self.what} kind {kind!r}; known: {known}") from None

    def __contains__(self, kind: object) -> bool:
        return kind in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))

    def kinds(self) -> list[str]:
        """Sorted registered kinds."""
        return sorted(self._items)
