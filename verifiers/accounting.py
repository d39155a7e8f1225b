"""Accounting for the privacy events an algorithm ran, through dp-accounting (Google's library).

Semantics, pinned by tests against the analytic Gaussian mechanism (Balle & Wang 2018):
ISRL-DP is defined with replace-one adjacency inside a silo (seed 004, Def. 2, L96). A silo's
message is (1/K) sum of K per-record gradients, each of norm <= L, plus N(0, sigma^2 I): replacing
one record moves the mean by at most 2L/K (seed L672), so the noise multiplier is
z = sigma / (2L/K) = sigma K / (2L). The RDP accountant (sampling without replacement) takes z as it is;
the PLD accountant reads a Gaussian's multiplier under REPLACE_ONE against one record's norm bound L/K
and doubles the sensitivity itself, so it is handed 2z = sigma K / L.

A shuffled LDP release (seed 001's subsampled shuffle mechanism, CLDP-SGD) has no library accountant: its
epsilon is seed 001's Thm 1 composed over the rounds and converted by Lemma 1 (verifiers/shuffle_001.py),
which is exactly Thm 3's privacy statement (Eq. 5); Thm 2's lower bound is reported next to it.
"""
from __future__ import annotations

from collections import Counter

import dp_accounting
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant

from algorithms.events import Event, GaussianRelease, ShuffledGaussianRelease, ShuffledLDPRelease, ShuffleSumRelease
from verifiers import binomial_bucketed, binomial_privacy, shuffle_000_gd, shuffle_001, shuffled_gaussian

REPLACE_ONE = dp_accounting.NeighboringRelation.REPLACE_ONE
# Renyi orders: dense near 1 and wide enough that the optimum is never at the grid's edge in our specs
RDP_ORDERS = tuple([1 + x / 20 for x in range(1, 100)] + list(range(6, 64)) + [64, 80, 96, 128, 192, 256, 512, 1024])


def noise_multiplier(event: GaussianRelease, L: float) -> float:
    return event.sigma * event.batch_size / (2 * L)


def shuffle_sum_epsilon(e: ShuffleSumRelease, delta: float) -> float:
    """P_VEC's (eps at delta) from its parameters as run: each user's data enters only the calls it joined."""
    m = e.users_per_call * e.trials_per_user
    if _bucketed(e):
        # P_GD: every user in all T calls, binomials of ~10^16 trials: the bucketed PLD (verifiers/binomial_bucketed.py)
        return max(binomial_bucketed.epsilon(m, e.p, dict(Counter(pairs * e.max_record_uses)), delta)
                   for pairs in binomial_privacy.pvec_canaries(e.dimension, e.grid).values())
    best = 0.0
    for pairs in binomial_privacy.pvec_canaries(e.dimension, e.grid).values():
        best = max(best, binomial_privacy.pld_epsilon(m, e.p, pairs * e.max_record_uses, delta))
    return best


def _bucketed(e: ShuffleSumRelease) -> bool:
    """Runs whose users join several calls, or that declare a per-call target, take the bucketed accountant."""
    return e.max_record_uses > 1 or e.call_epsilon is not None


def describe(event: Event, L: float, delta: float) -> dict[str, float | int | str]:
    """What the report shows about an event next to its epsilon."""
    if isinstance(event, ShuffledGaussianRelease):
        a = shuffled_gaussian_account(event, L, delta)
        return {"sigma": event.sigma, "silos_per_round": event.silos_per_round, "eps0_local": a.eps0,
                "delta0_local": a.delta0, "eps_shuffle_fmt_numerical": a.eps_shuffle,
                "eps_shuffle_fmt_closed_form": a.eps_shuffle_closed if a.eps_shuffle_closed is not None else "n/a",
                "q_record_per_round": a.q, "eps_round": a.eps_round,
                "epsilon_advanced_composition": a.epsilon_advanced}
    if isinstance(event, ShuffleSumRelease) and event.call_epsilon is not None:
        return {"users_per_call": event.users_per_call, "grid_g": event.grid, "binomial_trials_per_user":
                event.trials_per_user, "p": event.p} | shuffle_000_gd.per_call_table(event, delta)
    if isinstance(event, ShuffleSumRelease):
        return {"users_per_call": event.users_per_call, "grid_g": event.grid, "binomial_trials_per_user":
                event.trials_per_user, "p": event.p}
    if isinstance(event, ShuffledLDPRelease):
        lower = shuffle_001.epsilon("lower", k=event.batch_size, n=event.pool_size, eps0=event.eps_ldp,
                                    T=event.rounds, delta=delta).epsilon
        return {"eps_ldp": event.eps_ldp, "clients_per_round": event.batch_size, "clients": event.pool_size,
                "epsilon_thm2_lower": lower}
    return {"noise_multiplier": noise_multiplier(event, L)}


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


def epsilon(events: tuple[Event, ...], *, L: float, delta: float) -> tuple[float, str]:
    """epsilon at delta for one silo's whole transcript (isrl) or the server's shuffled view (shuffle);
    returns (epsilon, accountant used).

    Unsampled Gaussian compositions go to the PLD accountant (tight); subsampled-without-replacement
    ones to the RDP accountant (the one dp-accounting supports for that event); a shuffled LDP release
    to seed 001's Thm 1 + Lemma 1.
    """
    if any(isinstance(e, ShuffleSumRelease) for e in events):
        if len(events) != 1:
            raise ValueError("a shuffle-sum release is accounted on its own (one event per run)")
        s = events[0]
        assert isinstance(s, ShuffleSumRelease)
        how = ("bucketed PLD (verifiers/binomial_bucketed.py, over-states by <= 5%)" if _bucketed(s) else
               "PLD (dp-accounting)")
        return shuffle_sum_epsilon(s, delta), (f"{how} of P_VEC's binomial counts, worst canary, composed over the calls "
                                               f"one user joins (parallel composition over the others)")
    if any(isinstance(e, ShuffledGaussianRelease) for e in events):
        if len(events) != 1:
            raise ValueError("a shuffled Gaussian release is accounted on its own (one event per run)")
        g = events[0]
        assert isinstance(g, ShuffledGaussianRelease)
        return shuffled_gaussian_account(g, L, delta).epsilon, (
            "seed 004 Thm G.1's chain with published bounds: exact Gaussian local randomizer, FMT 2020b Thm 3.8 "
            "(numerical), subsampling q = M/(N n), KOV composition (verifiers/shuffled_gaussian.py), replace-one")
    if any(isinstance(e, ShuffledLDPRelease) for e in events):
        if len(events) != 1:
            raise ValueError("a shuffled LDP release is accounted on its own (one event per run)")
        e = events[0]
        assert isinstance(e, ShuffledLDPRelease)
        res = shuffle_001.epsilon("upper", k=e.batch_size, n=e.pool_size, eps0=e.eps_ldp, T=e.rounds, delta=delta)
        return res.epsilon, "seed 001 Thm 1 (RDP of the subsampled shuffle model) + Lemma 1, replace-one"
    gaussian = [e for e in events if isinstance(e, GaussianRelease)]
    composed = dp_accounting.ComposedDpEvent([dp_event(e, L) for e in gaussian])
    if all(e.sampling == "disjoint" for e in events):
        acc = pld_privacy_accountant.PLDAccountant(REPLACE_ONE, value_discretization_interval=1e-4)
        name = "PLD (dp-accounting), replace-one"
    else:
        acc = rdp_privacy_accountant.RdpAccountant(list(RDP_ORDERS), REPLACE_ONE)
        name = "RDP (dp-accounting, Wang-Balle-Kasiviswanathan sampling w/o replacement), replace-one"
    acc.compose(composed)
    return float(acc.get_epsilon(delta)), name


def shuffled_gaussian_account(e: ShuffledGaussianRelease, L: float, delta: float) -> shuffled_gaussian.Account:
    return shuffled_gaussian.account(sigma=e.sigma, L=L, M=e.silos_per_round, N=e.silos, n=e.pool_size, R=e.rounds,
                                     delta=delta)
