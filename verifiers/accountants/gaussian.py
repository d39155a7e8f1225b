"""Accounting for the privacy events an algorithm ran, through dp-accounting (Google's library).

Semantics, pinned by tests against the analytic Gaussian mechanism (Balle & Wang 2018):
ISRL-DP is defined with replace-one adjacency inside a silo (seed 004, Def. 2, L96). A silo's
message is (1/K) sum of K per-record gradients, each of norm <= L, plus N(0, sigma^2 I): replacing
one record moves the mean by at most 2L/K (seed L672), so the noise multiplier is
z = sigma / (2L/K) = sigma K / (2L). The RDP accountant (sampling without replacement) takes z as it is;
the PLD accountant reads a Gaussian's multiplier under REPLACE_ONE against one record's norm bound L/K
and doubles the sensitivity itself, so it is handed 2z = sigma K / L.
"""
from __future__ import annotations

import dp_accounting
from dp_accounting.pld import pld_privacy_accountant

from algorithms.events import GaussianRelease
from verifiers.accountants import rdp_wor
from verifiers.accountants.base import Accountant

REPLACE_ONE = dp_accounting.NeighboringRelation.REPLACE_ONE
# Renyi orders: dense near 1 and wide enough that the optimum is never at the grid's edge in our specs
RDP_ORDERS = tuple([1 + x / 20 for x in range(1, 100)] + list(range(6, 64)) + [64, 80, 96, 128, 192, 256, 512, 1024])


def noise_multiplier(event: GaussianRelease, L: float) -> float:
    return event.sigma * event.batch_size / (2 * L)


def dp_event(event: GaussianRelease, L: float) -> dp_accounting.DpEvent:
    z = noise_multiplier(event, L)
    if event.sampling == "disjoint":
        # parallel composition: a record enters only the releases of the rounds that read it; PLD gets 2z
        # (see the module docstring; pinned in tests/test_accounting.py)
        return dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(2 * z), event.max_record_uses)
    if event.sampling == "without_replacement":
        gauss = dp_accounting.GaussianDpEvent(z)
        sampled = dp_accounting.SampledWithoutReplacementDpEvent(event.pool_size, event.batch_size, gauss)
        return dp_accounting.SelfComposedDpEvent(sampled, event.rounds)
    raise ValueError(f"no accountant for sampling {event.sampling!r}")


def epsilon(events: tuple[GaussianRelease, ...], L: float, delta: float) -> tuple[float, str]:
    """Unsampled Gaussian compositions go to the PLD accountant (tight); subsampled-without-replacement ones to the
    RDP accountant (the one dp-accounting supports for that event)."""
    return compose(tuple((e, 1) for e in events), L, delta)


def compose(leaves: tuple[tuple[GaussianRelease, int], ...], L: float, delta: float) -> tuple[float, str]:
    """Gaussian releases, each run ``count`` times (an event tree's leaves), composed by dp-accounting."""
    events = [e for e, _ in leaves]
    composed = dp_accounting.ComposedDpEvent([dp_event(e, L) if c == 1 else
                                              dp_accounting.SelfComposedDpEvent(dp_event(e, L), c) for e, c in leaves])
    if all(e.sampling == "disjoint" for e in events):
        acc = pld_privacy_accountant.PLDAccountant(REPLACE_ONE, value_discretization_interval=1e-4)
        name = "PLD (dp-accounting), replace-one"
    else:
        acc = rdp_wor.RdpAccountant(list(RDP_ORDERS), REPLACE_ONE)         # dp-accounting's, bit for bit
        name = "RDP (dp-accounting, Wang-Balle-Kasiviswanathan sampling w/o replacement), replace-one"
    acc.compose(composed)
    return float(acc.get_epsilon(delta)), name


def describe(event: GaussianRelease, L: float, delta: float) -> dict:
    return {"noise_multiplier": noise_multiplier(event, L)}


def view(threat_model: str) -> str:
    if threat_model == "local":
        return ("every user's message as run (one record, noise multiplier sigma/(2L), replace-one; each user speaks "
                "once)")
    return ("the Gaussian releases as run (a silo's transcript under ISRL, the curator's under central DP; noise "
            "multiplier sigma K/(2L), replace-one)")


ACCOUNTANT = Accountant(GaussianRelease, epsilon, describe, view, compose=compose)
