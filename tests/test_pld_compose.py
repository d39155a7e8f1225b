"""verifiers.accountants.pld_compose against dp-accounting's own self-composition (the reference): the same truncation
bounds and the same composed PMFs, bit for bit, on the PLDs the accountants compose (seed 002's element pairs, the
labelled Gaussian mixture, sampled Gaussians in both directions, an (eps, delta) mechanism, randomized response) and
on random PMFs; the guard's exact path and a planted error in the fast moments."""
from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.pld import common, pld_pmf
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from hypothesis import given, settings
from hypothesis import strategies as st

from verifiers.accountants import element_rdp, pld_compose


def _same_pmf(a, b) -> bool:
    if isinstance(a, pld_pmf.DensePLDPmf):
        return (isinstance(b, pld_pmf.DensePLDPmf) and a._lower_loss == b._lower_loss
                and a._infinity_mass == b._infinity_mass and a._discretization == b._discretization
                and a._pessimistic_estimate == b._pessimistic_estimate and np.array_equal(a._probs, b._probs))
    return a._loss_probs == b._loss_probs and a._infinity_mass == b._infinity_mass


def _same(a, b) -> bool:
    return (a._symmetric == b._symmetric and _same_pmf(a._pmf_remove, b._pmf_remove)
            and _same_pmf(a._pmf_add, b._pmf_add))


def _plds():
    step = element_rdp.VALUE_STEP
    yield element_rdp.one_round_pld(0.01, 1.2), (200, 5000)                 # seed 002's pair (asymmetric)
    yield element_rdp.one_round_pld(0.3, 4.0, pessimistic=False), (20, 1000)
    g = pld_lib.from_gaussian_mechanism(2.0, sensitivity=2.0, value_discretization_interval=step)
    yield g.compute_mixture(pld_lib.identity(value_discretization_interval=step), 0.05), (1, 7, 20000)
    yield pld_lib.from_gaussian_mechanism(0.9, sampling_prob=0.02, value_discretization_interval=1e-3), (3, 1000)
    yield pld_lib.from_privacy_parameters(common.DifferentialPrivacyParameters(0.3, 1e-6),
                                          value_discretization_interval=1e-3), (40,)
    yield pld_lib.from_randomized_response(0.1, 3, value_discretization_interval=1e-3), (2, 300)
    yield pld_lib.from_laplace_mechanism(1.5, value_discretization_interval=1e-2), (50,)


def test_self_compose_is_the_librarys_bit_for_bit():
    for pld, counts in _plds():
        for k in counts:
            assert _same(pld_compose.self_compose(pld, k), pld.self_compose(k)), k
    pmf = element_rdp.one_round_pld(0.05, 2.0)._pmf_add                     # a PMF alone, at another truncation
    for tail in (0.0, 1e-15, 1e-9):
        assert _same_pmf(pld_compose.pmf_self_compose(pmf, 64, tail), pmf.self_compose(64, tail))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(L=st.integers(2, 4000), num_times=st.integers(1, 50000), shape=st.sampled_from(["dirichlet", "peaked", "tail"]),
       tail=st.sampled_from([0.0, 1e-15, 1e-10, 1e-3]), seed=st.integers(0, 2**32 - 1))
def test_bounds_are_the_librarys(L, num_times, shape, tail, seed):
    rng = np.random.default_rng(seed)
    if shape == "dirichlet":
        p = rng.dirichlet(np.ones(L))
    elif shape == "peaked":
        x = np.arange(L)
        p = np.exp(-0.5 * ((x - rng.uniform(0, L)) / max(1.0, rng.uniform(0.5, L / 4))) ** 2)
        p /= p.sum()
    else:
        p = np.zeros(L)
        p[0], p[-1] = 1 - 1e-9, 1e-9
    assert pld_compose.self_convolve_bounds(p, num_times, tail) == common.compute_self_convolve_bounds(p, num_times,
                                                                                                          tail)


def test_the_guard_takes_the_librarys_expression_and_the_fast_moments_alone_agree(monkeypatch):
    """GUARD = inf: every order through the library's log-sum-exp (the exact path); GUARD = 0: the powers alone, which
    must agree too on PMFs whose bounds lie far from an integer (so a wrong power is seen, not hidden by the guard)."""
    p = element_rdp.one_round_pld(0.01, 1.2)._pmf_remove._probs
    want = common.compute_self_convolve_bounds(p, 5000, 1e-15)
    monkeypatch.setattr(pld_compose, "GUARD", math.inf)
    assert pld_compose.self_convolve_bounds(p, 5000, 1e-15) == want
    monkeypatch.setattr(pld_compose, "GUARD", 0.0)
    assert pld_compose.self_convolve_bounds(p, 5000, 1e-15) == want


def test_a_power_off_by_one_is_caught(monkeypatch):
    """A planted error in the fast moments (e^{i (j + 1) / L} for order j / L) moves the bounds, and the pin sees it."""
    p = element_rdp.one_round_pld(0.01, 1.2)._pmf_remove._probs
    want = common.compute_self_convolve_bounds(p, 5000, 1e-15)
    real_exp = np.exp

    def shifted(x, *a, **k):
        return real_exp(x * (1 + 1 / 20), *a, **k)
    monkeypatch.setattr(pld_compose.np, "exp", shifted)
    with pytest.raises(AssertionError):
        assert pld_compose.self_convolve_bounds(p, 5000, 1e-15) == want


def test_a_sparse_or_negative_pmf_keeps_the_librarys_code():
    sparse = pld_lib.PrivacyLossDistribution(pld_pmf.SparsePLDPmf({-2: 0.3, 1: 0.6, 4: 0.1}, 1e-2, 0.0, True))
    assert _same(pld_compose.self_compose(sparse, 5), sparse.self_compose(5))
    neg = pld_pmf.DensePLDPmf(1e-3, -3, np.array([0.5, -1e-18, 0.5]), 0.0, True)
    assert _same_pmf(pld_compose.pmf_self_compose(neg, 9, 1e-15), neg.self_compose(9))
