"""verifiers/accountants/pld_pmfs.py: dp-accounting's PLD of two probability mass functions, built with numpy, must be
the library's bit for bit (the same dictionaries in the same order, the same floats); where it cannot promise that,
the library's own function runs."""
from __future__ import annotations

import math

import numpy as np
import pytest

from verifiers.accountants import binomial_privacy as bp
from verifiers.accountants import pld_pmfs as pp


def test_the_self_check_passes_here():
    pp.agrees_with_library.cache_clear()
    assert pp.agrees_with_library()


@pytest.mark.parametrize("m,p,pair,interval", [(10**6, 0.3, bp.Pair(0.0, 40.0), 1e-4),
                                               (5000, 0.5, bp.Pair(0.3, 1.7), 1e-3),
                                               (300, 0.4, bp.Pair(2.5, 2.0), 2e-3),
                                               (200, 0.01, bp.Pair(0.0, 5.0), 1e-4),
                                               (4000, 0.2, bp.Pair(12.3, 40.6), 0.3)])
def test_the_binomial_pairs_pld_is_the_librarys(m, p, pair, interval):
    """The P_VEC canaries' pairs (binomial_privacy's tables): sparse and dense results, outcomes one side lacks,
    grids fine and coarse (many losses to one rounded value)."""
    t = bp._pair_logpmfs(m, p, pair)
    assert pp.same(pp.fast(t.logP, t.logQ, interval), pp.library(t.logP, t.logQ, interval))


@pytest.mark.parametrize("seed", range(12))
def test_random_pmfs_with_ties_and_missing_outcomes_are_the_librarys(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 3000))
    lower = np.log(rng.dirichlet(np.full(size, 0.3)))
    upper = np.log(rng.dirichlet(np.full(size, 0.3)))
    for side in (lower, upper):
        side[rng.random(size) < 0.05] = -np.inf
    ties = rng.random(size) < 0.3                               # exact equal losses: lower = -i, upper = -i + 0.25
    lower[ties] = -np.floor(rng.uniform(1, 40, ties.sum()))
    upper[ties] = lower[ties] + 0.25
    interval = float(rng.choice([1e-4, 1e-2, 0.2, 1.0]))
    assert pp.same(pp.fast(lower, upper, interval), pp.library(lower, upper, interval))
    assert pp.same(pp.from_two_pmfs(lower, upper, interval), pp.library(lower, upper, interval))


def test_no_finite_loss_and_no_infinity_mass_are_the_librarys():
    one = np.array([0.0, -np.inf])
    for lower, upper in ((one, one), (one, one[::-1].copy()), (np.full(3, -np.inf), np.log(np.full(3, 1 / 3)))):
        assert pp.same(pp.fast(lower, upper, 1e-3), pp.library(lower, upper, 1e-3))


def test_inputs_it_cannot_promise_go_to_the_library():
    good = np.log(np.array([0.5, 0.5]))
    for lower, upper, interval in ((np.array([np.nan, 0.0]), good, 1e-3), (np.array([np.inf, 0.0]), good, 1e-3),
                                   (good.astype(np.float32), good, 1e-3), (good, good[:1], 1e-3),
                                   (np.log(np.array([1e-300, 1.0])), np.array([0.0, 0.0]), 1e-300)):
        assert pp.fast(lower, upper, interval) is None
    lib = pp.library(good, np.log(np.array([0.25, 0.75])), 1e-3)
    assert pp.same(pp.from_two_pmfs(good, np.log(np.array([0.25, 0.75])), 1e-3), lib)


@pytest.mark.parametrize("level", [0, 1])
@pytest.mark.parametrize("how", ["reversed", "pairwise"])
def test_a_changed_summation_order_is_caught_by_the_self_check(monkeypatch, level, how):
    """Planted: one level's sums (0: over equal losses, 1: over equal rounded losses; each _rounded call makes one
    bincount of each, in that order) taken in reverse or pairwise (np.add.reduce) instead of in input order. The
    self-check sees each, and the process then uses the library."""
    real = np.bincount
    calls = [0]

    def planted(x, weights=None, minlength=0):
        calls[0] += 1
        if weights is None or (calls[0] - 1) % 2 != level:
            return real(x, weights=weights, minlength=minlength)
        out = np.zeros(max(minlength, int(x.max()) + 1))
        for b in np.unique(x):
            w = weights[x == b]
            out[b] = np.add.reduce(w) if how == "pairwise" else sum_in_order(w[::-1])
        return out

    monkeypatch.setattr(pp.np, "bincount", planted)
    pp.agrees_with_library.cache_clear()
    try:
        assert not pp.agrees_with_library()
        lower, upper, interval = pp._self_check_pair()
        assert pp.same(pp.from_two_pmfs(lower, upper, interval), pp.library(lower, upper, interval))   # the library
    finally:
        monkeypatch.undo()
        pp.agrees_with_library.cache_clear()


def sum_in_order(w: np.ndarray) -> float:
    total = 0.0
    for v in w.tolist():
        total += v
    return total


def test_a_float32_interval_goes_to_the_library():
    """The library divides a loss by a float32 interval in float32 (numpy 2's promotion), so its keys can differ."""
    lower, upper = np.array([0.0, 0.0]), np.log(np.array([1.00000003, 0.5]))
    assert pp.fast(lower, upper, np.float32(0.1)) is None
    assert pp.same(pp.from_two_pmfs(lower, upper, np.float32(0.1)), pp.library(lower, upper, np.float32(0.1)))
    assert pp.fast(lower, upper, np.float64(0.1)) is not None


def test_pld_epsilon_is_the_librarys_construction():
    """binomial_privacy.pld_epsilon through pld_pmfs gives the epsilon of the library's own construction."""
    m, p, delta = 2000, 0.3, 1e-5
    pairs = bp.pvec_canaries(4, 6)["(Delta_2/sqrt d) 1 vs its negation"]
    got = bp.pld_epsilon(m, p, pairs, delta, interval=1e-3)
    t = bp._pair_logpmfs(m, p, pairs[0])
    lib = pp.library(t.logP, t.logQ, 1e-3)
    composed = bp.composed_epsilon([(lib, len(pairs), t.outside)], delta)
    assert got == composed
    assert math.isfinite(got) and got > 0
