"""Typed errors of the Tiny Labs framework; messages say what to change."""

from __future__ import annotations


class LabError(Exception):
    """Base class of the lab framework's errors."""


class InvalidObject(LabError, ValueError):
    """An object is not a member of the lab's object space."""


class InvalidSpec(LabError, ValueError):
    """A LabSpec names an unknown kind or has inconsistent fields."""


class UnknownKind(InvalidSpec, KeyError):
    """No class is registered under the requested ``kind``."""

    def __str__(self) -> str:  # KeyError would print the message with quotes around it
        return str(self.args[0]) if self.args else ""
