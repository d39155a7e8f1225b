"""Seed 001's RDP bounds for the subsampled shuffle model (verifiers/accountants/subsampled_shuffle.py): the printed Thm 2 sum,
an exact Renyi divergence of binary randomized response computed independently, the bounds' order and
monotonicity, and numerics at the extremes the issue names."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import comb
from scipy.stats import binom

from verifiers.accountants import subsampled_shuffle as S


def printed_thm2(lam: int, k: int, n: int, eps0: float) -> float:
    """Thm 2 exactly as printed (L151): central moments E(m - kp)^j summed directly (small k only)."""
    g, p = k / n, 1 / (math.exp(eps0) + 1)
    m = np.arange(k + 1)
    pmf = binom.pmf(m, k, p)
    total = 1 + comb(lam, 2) * g**2 * math.expm1(eps0) ** 2 / (k * math.exp(eps0))
    for j in range(3, lam + 1):
        moment = float((pmf * (m - k * p) ** j).sum())
        total += comb(lam, j) * g**j * (math.expm1(2 * eps0) / (k * math.exp(eps0))) ** j * moment
    return math.log(total) / (lam - 1)


def exact_rr_divergence(lam: int, k: int, n: int, eps0: float) -> float:
    """D_lam(M(D1) || M(D0)) for binary randomized response, computed from the two count distributions:
    D0 all records equal (each sampled client reports the other bit w.p. p), D1 one record changed. The count
    of 'other' bits is Bin(k, p) under D0 and (1-g) Bin(k, p) + g [Bin(k-1, p) * Bern(1-p)] under D1."""
    g, p = k / n, 1 / (math.exp(eps0) + 1)
    m = np.arange(k + 1)
    p0 = binom.pmf(m, k, p)
    shifted = np.concatenate([[0.0], binom.pmf(m[:-1], k - 1, p)])      # the changed client says 'other'
    p1 = (1 - g) * p0 + g * ((1 - p) * shifted + p * np.concatenate([binom.pmf(m[:-1], k - 1, p), [0.0]]))
    return math.log(float((p1**lam * p0 ** (1 - lam)).sum())) / (lam - 1)


@pytest.mark.parametrize("lam,k,n,eps0", [(3, 5, 20, 0.7), (5, 12, 30, 1.5), (8, 30, 90, 0.3), (6, 7, 7, 2.0)])
def test_thm2_closed_form_equals_the_printed_sum_and_the_exact_rr_divergence(lam, k, n, eps0):
    ours = S.rdp_lower(lam, k=k, n=n, eps0=eps0)
    assert ours == pytest.approx(printed_thm2(lam, k, n, eps0), rel=1e-9)
    assert ours == pytest.approx(exact_rr_divergence(lam, k, n, eps0), rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 300), st.integers(1, 20000), st.floats(1.0, 50.0), st.floats(0.05, 5.0))
def test_lower_bound_never_exceeds_upper_bound(lam, k, ratio, eps0):
    n = max(k, int(k * ratio))
    assert S.rdp_lower(lam, k=k, n=n, eps0=eps0) <= S.rdp_upper(lam, k=k, n=n, eps0=eps0) * (1 + 1e-9) + 1e-15


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 100), st.integers(2, 5000), st.floats(2.0, 20.0), st.floats(0.1, 4.0))
def test_bounds_grow_with_the_sampling_rate_and_eps0(lam, k, ratio, eps0):
    n = int(k * ratio)
    for fn in (S.rdp_upper, S.rdp_lower):
        base = fn(lam, k=k, n=n, eps0=eps0)
        assert fn(lam, k=k, n=max(k, n // 2), eps0=eps0) >= base * (1 - 1e-9)       # larger gamma = k/n
        assert fn(lam, k=k, n=n, eps0=eps0 * 1.2) >= base * (1 - 1e-9)


def test_no_overflow_at_the_extremes():
    for lam in (2, 1000, 10_000):
        for fn in (S.rdp_upper, S.rdp_lower):
            v = fn(lam, k=10**7, n=10**8, eps0=2.0)
            assert math.isfinite(v) and v >= 0
    res = S.epsilon("upper", k=10**7, n=10**8, eps0=2.0, T=10**6, delta=1e-8)
    assert math.isfinite(res.epsilon) and res.order < res.grid_top


def test_the_optimal_order_is_inside_the_grid_even_when_it_is_large():
    res = S.epsilon("lower", k=10**4, n=10**7, eps0=1.0, T=10, delta=1e-8)     # tiny per-round RDP
    assert res.grid_top > 1024 and res.order < res.grid_top


def test_delta_for_inverts_epsilon():
    kw = dict(k=1000, n=10**6, eps0=2.0, T=1000)
    eps = S.epsilon("upper", **kw, delta=1e-6).epsilon
    delta, _ = S.delta_for("upper", **kw, eps=eps)
    assert delta <= 1e-6 * 1.0001
