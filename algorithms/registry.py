"""A small registry: short spec names -> implementations, one registry per kind.

A registry is built in one place per kind, from what its package lists (``Registry.of`` over a tuple of entries or
modules) or, for check kinds, from the ``CHECK`` of every module of verifiers/checks/, read there; an implementation
module never registers itself in someone else's registry when it is imported.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Generic, Iterator, TypeVar

T = TypeVar("T")


class PluginError(ValueError):
    """A user's plugin (catalog/plugins.py) that cannot be used; the message names it."""


class UnknownName(KeyError, ValueError):
    """Raised for a name no entry is registered under; the message lists the known names."""

    def __str__(self) -> str:  # KeyError quotes its argument; we want plain text
        return str(self.args[0])


@dataclass
class Registry(Generic[T]):
    kind: str
    _entries: dict[str, T] = field(default_factory=dict)

    def add(self, name: str, obj: T) -> T:
        if name in self._entries:
            raise ValueError(f"duplicate {self.kind} name {name!r}")
        self._entries[name] = obj
        return obj

    def get(self, name: str) -> T:
        try:
            return self._entries[name]
        except KeyError:
            raise UnknownName(unknown_message(self.kind, name, self.names())) from None

    @classmethod
    def of(cls, kind: str, entries) -> Registry:
        """A registry of (name, object) pairs, in one expression (a duplicate name raises)."""
        reg: Registry = cls(kind)
        for name, obj in entries:
            reg.add(name, obj)
        return reg

    def names(self) -> list[str]:
        return sorted(self._entries)

    def items(self) -> Iterator[tuple[str, T]]:
        return iter(sorted(self._entries.items()))

    def __contains__(self, name: object) -> bool:
        return name in self._entries


def choice_message(what: str, value: object, allowed: list[str]) -> str:
    """One line for a value outside a fixed set of choices, with a close-match hint."""
    hint = difflib.get_close_matches(str(value), allowed, n=1)
    did = f" (did you mean {hint[0]!r}?)" if hint else ""
    return f"unknown {what} {value!r}{did}; allowed: {', '.join(allowed)}"


def unknown_message(kind: str, name: object, known: list[str]) -> str:
    hint = difflib.get_close_matches(str(name), known, n=1)
    did = f" (did you mean {hint[0]!r}?)" if hint else ""
    return f"unknown {kind} {name!r}{did}; known: {', '.join(known)}"
