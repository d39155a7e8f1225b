"""Accounting for the privacy events an algorithm ran: one accountant per event type (``ACCOUNTANTS``, keyed by the
event's class; a new event kind's accountant is one module and one line below).

- Gaussian releases (ISRL silos, the central curator, local users): dp-accounting's PLD and RDP accountants
  (``gaussian.py``).
- P_VEC's binomial counts (seed 000's shuffle sums): exact PLDs of the canary pairs, bucketed for huge binomials
  (``pvec.py``, ``binomial_privacy.py``, ``binomial_bucketed.py``).
- A shuffled LDP release (seed 001's subsampled shuffle mechanism, CLDP-SGD) has no library accountant: its
  epsilon is seed 001's Thm 1 composed over the rounds and converted by Lemma 1 (``subsampled_shuffle.py``), which
  is exactly Thm 3's privacy statement (Eq. 5); Thm 2's lower bound is reported next to it.
- Seed 004's shuffled Gaussian reports: the per-round chain of published bounds of ``shuffled_gaussian.py``, its
  rounds composed by dp-accounting's PLD (the calibration that sets sigma composes them by KOV instead).
- Seed 002's element-level SGD: the PLD of the worst element pair of users holding K element vectors, or the
  labelled pair for fixed-size sampling (``element_sgd.py``, on ``element_rdp.py``).
"""
from __future__ import annotations

from typing import Any

from algorithms.events import leaves
from verifiers.accountants import element_sgd, gaussian, pvec, shuffled_gaussian, subsampled_shuffle
from verifiers.accountants.base import Accountant

ACCOUNTANTS: dict[type, Accountant] = {a.event: a for a in (
    gaussian.ACCOUNTANT,
    pvec.ACCOUNTANT,
    subsampled_shuffle.ACCOUNTANT,
    shuffled_gaussian.ACCOUNTANT,
    element_sgd.ACCOUNTANT,
)}


def accountant_for(event: Any) -> Accountant:
    try:
        return ACCOUNTANTS[type(event)]
    except KeyError:
        raise ValueError(f"no accountant for a privacy event of kind {getattr(event, 'kind', type(event).__name__)!r}; "
                         f"accountants exist for: {', '.join(sorted(getattr(t, 'kind', t.__name__) for t in ACCOUNTANTS))}"
                         ) from None


def epsilon(events: tuple, *, L: float, delta: float) -> tuple[float, str]:
    """epsilon at delta for what the events released together (one silo's whole transcript under ISRL, the server's
    view under shuffle DP, ...); returns (epsilon, accountant used). The events may be trees (algorithms/events.py):
    their leaves, each repeated as often as the tree says, go to the accountant of their kind where it composes
    them; mixed kinds have no accountant yet, and the error names them and the node."""
    flat = [leaf for e in events for leaf in leaves(e)]
    kinds = sorted({leaf.kind for leaf, _ in flat})
    if len(kinds) != 1:
        raise ValueError(f"no accountant composes privacy events of kinds {', '.join(kinds)} (in a "
                         f"{'composed event' if len(events) == 1 else 'run of several events'})")
    acc = accountant_for(flat[0][0])
    if len(flat) == 1 and flat[0][1] == 1:
        return acc.epsilon((flat[0][0],), L, delta)
    if acc.compose is None:
        raise ValueError(f"the {kinds[0]} accountant accounts one release on its own; it cannot compose "
                         f"{len(flat)} of them run {sum(c for _, c in flat)} times in all")
    return acc.compose(tuple(flat), L, delta)


def describe(event: Any, L: float, delta: float) -> dict:
    """What the report shows about an event next to its epsilon."""
    return accountant_for(event).describe(event, L, delta)
