"""verifiers.accountants.pld_compose against dp-accounting's own self-composition (the reference): the same truncation
bounds and the same composed PMFs, bit for bit, on the PLDs the accountants compose (seed 002's element pairs, the
labelled Gaussian mixture, sampled Gaussians in both directions, an (eps, delta) mechanism, randomized response) and
on random PMFs; the guard's margin and its exact path, and a planted error in the fast moments."""
from __future__ import annotations

import math

import numpy as np
from dp_accounting.pld import common, pld_pmf
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from verifiers.accountants import element_rdp, pld_compose
from verifiers.accountants.pld_pmfs import same as same_pld
from verifiers.accountants.pld_pmfs import same_pmf


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
            assert same_pld(pld_compose.self_compose(pld, k), pld.self_compose(k)), k
    pmf = element_rdp.one_round_pld(0.05, 2.0)._pmf_add                     # a PMF alone, at another truncation
    for tail in (0.0, 1e-15, 1e-9):
        assert same_pmf(pld_compose.pmf_self_compose(pmf, 64, tail), pmf.self_compose(64, tail))


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


def test_the_powers_agree_with_the_librarys_log_sum_exps_far_inside_the_guard():
    """The margin the guard rests on: on the accountants' PMFs, random ones and one with end masses of 1e-300, every
    order's log moment-generating function from the powers is within a hundredth of the guard's slack per unit of
    the bound's terms (GUARD (20 + log L)) of the library's log-sum-exp."""
    rng = np.random.default_rng(11)
    cases = [element_rdp.one_round_pld(0.01, 1.2)._pmf_remove._probs, element_rdp.one_round_pld(0.3, 4.0)._pmf_add._probs]
    cases += [rng.dirichlet(np.ones(int(L))) for L in (150, 4000, 30000)]
    tiny = rng.dirichlet(np.ones(3000))
    tiny[0] = tiny[-1] = 1e-300
    for p in cases + [tiny]:
        L = len(p)
        ours = pld_compose.log_mgfs(p)
        for j, v in ours.items():
            lib = float(special.logsumexp(np.arange(L) * (j / L), b=p))
            assert abs(v - lib) <= pld_compose.GUARD * (pld_compose.ORDERS + math.log(L)) / 100, (L, j)


def test_a_bound_next_to_an_integer_is_recomputed_by_the_librarys_expression(monkeypatch):
    """The guard's decisive case: a tail mass chosen so that the first positive order's Chernoff bound lies 1e-9 from
    an integer (where the powers and the library could round to different sides) sends that order through the
    library's log-sum-exp, and the bounds are the library's."""
    p = element_rdp.one_round_pld(0.05, 2.0)._pmf_remove._probs
    L, k = len(p), 3000
    order = 1 / L
    v = float(special.logsumexp(np.arange(L) * order, b=p))
    target = math.ceil((k * v + math.log(2 / 1e-12)) / order) + 1e-9      # a bound just above an integer
    tail = 2 * math.exp(k * v - target * order)
    want = common.compute_self_convolve_bounds(p, k, tail)                 # before the count below starts
    calls = []
    real = special.logsumexp

    def counted(*a, **kw):
        calls.append(1)
        return real(*a, **kw)
    monkeypatch.setattr(special, "logsumexp", counted)
    assert pld_compose.self_convolve_bounds(p, k, tail) == want
    assert calls, "the order next to an integer was not recomputed"
    calls.clear()
    monkeypatch.setattr(pld_compose, "GUARD", 0.0)                          # and without the guard it would not be
    pld_compose.self_convolve_bounds(p, k, tail)
    assert not calls


def test_a_planted_error_in_the_powers_is_caught(monkeypatch):
    """A planted error in the fast moments (every exponent 5% too large: e^{1.05 i j / L} for order j / L) moves the
    bounds, and the pin sees it (the library's log-sum-exp does not call numpy's exp, so only the powers are hit)."""
    p = element_rdp.one_round_pld(0.01, 1.2)._pmf_remove._probs
    want = common.compute_self_convolve_bounds(p, 5000, 1e-15)
    real_exp = np.exp

    def scaled(x, *a, **k):
        return real_exp(x * 1.05, *a, **k)
    monkeypatch.setattr(np, "exp", scaled)
    assert pld_compose.self_convolve_bounds(p, 5000, 1e-15) != want


def test_a_sparse_or_negative_pmf_keeps_the_librarys_code(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("the fast bounds were used")
    monkeypatch.setattr(pld_compose, "self_convolve_bounds", refuse)
    sparse = pld_lib.PrivacyLossDistribution(pld_pmf.SparsePLDPmf({-2: 0.3, 1: 0.6, 4: 0.1}, 1e-2, 0.0, True))
    assert same_pld(pld_compose.self_compose(sparse, 5), sparse.self_compose(5))
    neg = pld_pmf.DensePLDPmf(1e-3, -3, np.array([0.5, -1e-18, 0.5]), 0.0, True)
    assert same_pmf(pld_compose.pmf_self_compose(neg, 9, 1e-15), neg.self_compose(9))
