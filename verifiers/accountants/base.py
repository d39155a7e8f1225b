"""An accountant as data: the epsilon of one kind of privacy event as it ran, what the report shows next to it,
and why the paper's proof may not cover the run."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


def covers_always(event: Any, eps: float, delta: float) -> list[str]:
    """An accountant whose epsilon alone decides (no calibration conditions of its own)."""
    return []


@dataclass(frozen=True)
class Accountant:
    """``epsilon(events, L, delta)`` -> (epsilon, the method's name) for events of type ``event``; ``compose(((event,
    count), ...), L, delta)`` the same for a tree's leaves, each run ``count`` times (None: the accountant takes one
    release on its own); ``describe(event, L, delta)`` -> the report's columns; ``view(threat_model)`` -> what was accounted,
    in words; ``covers(event, eps, delta)`` -> why the paper's privacy proof does not cover the run (empty: it does)."""

    event: type
    epsilon: Callable[[tuple, float, float], tuple[float, str]]
    describe: Callable[[Any, float, float], dict]
    view: Callable[[str], str]
    covers: Callable[[Any, float, float], list[str]] = covers_always
    compose: Callable[[tuple, float, float], tuple[float, str]] | None = None
