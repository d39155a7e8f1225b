"""verifiers.stats.logsumexp1d against scipy.special.logsumexp (the reference), on random and edge inputs."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp

from verifiers.stats import logsumexp1d


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
