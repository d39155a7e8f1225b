"""verifiers.stats.logsumexp1d against scipy.special.logsumexp (the reference), on random and edge inputs."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp

from verifiers.stats import logsumexp1d, logsumexp_scipy


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(min_value=-1e4, max_value=1e4, allow_nan=False), min_size=1, max_size=40))
def test_matches_scipy(xs):
    assert math.isclose(logsumexp1d(xs), float(logsumexp(xs)), rel_tol=1e-12, abs_tol=1e-12)


def test_edges():
    assert logsumexp1d([]) == -np.inf
    assert logsumexp1d([-np.inf, -np.inf]) == -np.inf == float(logsumexp([-np.inf, -np.inf]))
    assert logsumexp1d([-np.inf, 0.0]) == 0.0
    assert logsumexp1d([np.inf, 1.0]) == np.inf
    assert math.isnan(logsumexp1d([np.nan, 1.0]))
    assert logsumexp1d([1000.0, 1000.0]) == 1000.0 + math.log(2)


def test_logsumexp_scipy_is_scipys_bit_for_bit():
    """The element accountant's logsumexp (verifiers.stats.logsumexp_scipy) equals scipy's to the last bit."""
    rng = np.random.default_rng(7)
    for i in range(3000):
        n = int(rng.integers(1, 400))
        v = rng.standard_normal(n) * 10 ** rng.uniform(-3, 3) + rng.uniform(-1000, 1000)
        if i % 3 == 0:
            v[rng.integers(0, n, 3)] = v.max()                   # a repeated maximum
        if i % 5 == 0:
            v = np.round(v)
        if i % 7 == 0:
            v[rng.integers(0, n)] = -np.inf
        assert logsumexp_scipy(v) == float(logsumexp(v))
