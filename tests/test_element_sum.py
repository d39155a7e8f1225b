"""Seed 002's subsampled Gaussian element sum (mechanism (4)), its accounting (Cor 2.5, Cor 3.1/3.2, Eq. (16)) and Cor
2.4: the accountant pinned against independent references (closed forms, dp-accounting, mpmath quadrature), planted
faults each caught by a named check, the laws eps_alpha obeys, and bad parameters refused."""
from __future__ import annotations

import math
from types import SimpleNamespace

import mpmath
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dp_accounting.rdp import rdp_privacy_accountant as rdp_lib
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from scipy.stats import norm

from algorithms import element_sum as es
from catalog import MECHANISMS
from catalog import element_sum_002 as cat
from catalog.base import RuleError
from verifiers.accountants import element_rdp as er
from verifiers.checks import element_sum as checks

CHECK = SimpleNamespace(id="c", kind="k", confidence=0.999)


def _point(**kw):
    base = {"q": 0.05, "sigma": 2.0, "T": 200, "delta": 5e-4, "n": 1000, "K": 1, "audit": 0}
    return cat.ElementSumParams.model_validate(base | kw).model_dump()


# ---------------------------------------------------------------------------------------------------------------- pins

@pytest.mark.parametrize("alpha", [1.5, 2.0, 7.25, 40.0])
@pytest.mark.parametrize("a,b,sigma", [(1.0, -1.0, 2.0), (3.0, 1.0, 1.5), (0.5, -0.5, 0.7)])
def test_q_one_is_the_gaussian_closed_form(alpha, a, b, sigma):
    assert er.eps_alpha(1.0, sigma, alpha, a, b) == pytest.approx(alpha * (a - b) ** 2 / (2 * sigma**2), rel=1e-10)


@pytest.mark.parametrize("q,sigma,alpha", [(0.05, 2.0, 2.0), (0.1, 1.0, 10.5), (0.01, 4.0, 50.0), (0.3, 1.2, 3.3)])
def test_renyi_against_mpmath_quadrature(q, sigma, alpha):
    mp = mpmath.mp
    mp.dps = 30

    def dens(y, c):
        return q * mpmath.npdf(y, c, sigma) + (1 - q) * mpmath.npdf(y, 0, sigma)

    for a, b in ((1, -1), (-1, 1), (4, 2)):
        centre = alpha * a + (1 - alpha) * b
        pts = sorted({-60 * sigma + min(0, a, b, centre), 0, a, b, centre, 60 * sigma + max(0, a, b, centre)})
        integral = mpmath.quad(lambda y: dens(y, a) ** alpha * dens(y, b) ** (1 - alpha), pts)
        assert er.renyi(q, sigma, alpha, a, b) == pytest.approx(float(mpmath.log(integral)) / (alpha - 1), rel=1e-8)


@pytest.mark.parametrize("alpha", [2.0, 3.0, 3.5, 16.0])
def test_add_remove_pair_matches_dp_accounting_rdp(alpha):
    """b = 0 makes the second mixture N(0): the add/remove pair dp-accounting's RDP accountant computes (exactly at
    integer orders; at fractional orders its value is slightly above the exact one, which mpmath confirms is ours:
    0.0076383 vs dp-accounting's 0.0076467 at alpha = 3.5)."""
    q, sigma = 0.07, 1.3
    ref = rdp_lib._compute_rdp_poisson_subsampled_gaussian(q, sigma, np.array([alpha]))[0]
    ours = er.renyi(q, sigma, alpha, 1.0, 0.0)
    if alpha == int(alpha):
        assert ours == pytest.approx(ref, rel=1e-9)
    else:
        assert ours <= ref <= ours * 1.002


def test_q_one_tight_epsilon_matches_the_analytic_gaussian():
    """q = 1: T rounds of N(1) vs N(-1) at noise sigma are one Gaussian pair with mu = 2 sqrt(T) / sigma."""
    sigma, T, delta = 3.0, 20, 1e-5
    mu = 2 * math.sqrt(T) / sigma

    def d(e):
        return norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2)

    lo, hi = 0.0, 50.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if d(mid) > delta else (lo, mid)
    ours_hi = er.tight_epsilon(1.0, sigma, T, delta)
    ours_lo = er.tight_epsilon(1.0, sigma, T, delta, pessimistic=False)
    assert ours_lo - 1e-9 <= hi <= ours_hi + 1e-9 and ours_hi - ours_lo < 0.01
    lib = pld_lib.from_gaussian_mechanism(sigma, sensitivity=2.0, value_discretization_interval=1e-4)
    assert lib.self_compose(T).get_epsilon_for_delta(delta) == pytest.approx(hi, abs=5e-3)


def test_tight_below_mironov_and_the_labelled_limit_above_every_pair():
    q, sigma, T, delta = 0.05, 2.0, 200, 5e-4
    paper = er.paper_epsilon(q, sigma, T, delta).epsilon
    lo, hi = er.tight_epsilon(q, sigma, T, delta, pessimistic=False), er.tight_epsilon(q, sigma, T, delta)
    assert lo <= hi <= paper
    lab = er.labelled_tight_epsilon(q, sigma, T, delta)
    k10 = er.tight_epsilon(q, sigma, T, delta, 10.0, 8.0, pessimistic=False)
    assert hi < k10 <= lab
    for al in (2.0, 6.0):
        assert er.eps_alpha(q, sigma, al) <= er.eps_alpha(q, sigma, al, 3.0, 1.0) <= er.labelled_eps_alpha(q, sigma, al)
        assert er.eps_alpha(q, sigma, al, 40.0, 38.0) == pytest.approx(er.labelled_eps_alpha(q, sigma, al), rel=1e-6)


def test_centred_pair_is_the_worst_collinear_pair_for_k_one():
    """Our reading of the element pair for K = 1: (1, -1) maximises eps_alpha over a grid of collinear (a, b)."""
    q, sigma, al = 0.05, 2.0, 6.0
    best = er.eps_alpha(q, sigma, al)
    grid = np.linspace(-1, 1, 9)
    assert all(er.eps_alpha(q, sigma, al, a, b) <= best * (1 + 1e-12) for a in grid for b in grid)


def test_approximation_limit_is_twice_the_claimed_coefficient():
    sigma, al = 2.0, 4.0
    assert er.eps_alpha(1e-4, sigma, al) / 1e-8 == pytest.approx(er.approximation_limit(sigma, al), rel=2e-3)
    assert er.approximation_limit(sigma, al) / (al / sigma**2) > 2


def test_cor24_exact_pins():
    """K = 1, m = 1 of n: Balle et al.'s Thm 9 is tight; Poisson with n = 1: no amplification at all."""
    for eps in (0.3, 1.0, 4.0):
        for q in (0.5, 0.1, 0.01):
            assert er.amplification_exact(eps, 1, q) == pytest.approx(er.amplification_claim(eps, q), rel=1e-10)
            assert er.amplification_poisson_single(eps, 3, q) == pytest.approx(eps, rel=1e-10)
            assert er.amplification_exact(eps, 2, q) > er.amplification_claim(eps, q)


def test_eq16_closed_minimiser():
    T, q, sigma, n, delta = 200, 0.05, 2.0, 1000, 1e-5
    grid = np.linspace(1e-3, sigma**2 * math.log(1 / q), 200001)
    direct = (T * q**2 / sigma**2 + T * q**2 * grid / sigma**2 + math.log(1 / delta) / grid).min()
    assert er.eq16(T, q, sigma, n, delta) == pytest.approx(direct, rel=1e-6)


# ---------------------------------------------------------------------------------------------------------- mechanism

def test_fixed_size_indicators_pick_exactly_m_of_n():
    rng = np.random.default_rng(0)
    B = es.sample_indicators(20, 20, 0.25, "fixed", (5000,), rng)
    assert (B.sum(axis=1) == 5).all()
    assert B.mean() == pytest.approx(0.25, abs=0.01)
    one = es.sample_indicators(1, 1000, 0.05, "fixed", (200000,), rng)
    assert one.mean() == pytest.approx(0.05, abs=0.002)


def test_release_noise_and_sum():
    rng = np.random.default_rng(1)
    y = es.release(np.array([[1.0, 0.0], [0.0, 2.0]]), 2, q=0.999999, sigma=0.5, rho=2.0, sampling="poisson",
                   rounds=3, trials=20000, rng=rng)
    assert y.shape == (20000, 3, 2)
    assert y.mean(axis=(0, 1)) == pytest.approx([1.0, 2.0], abs=0.03)
    assert y.std(axis=(0, 1)) == pytest.approx([1.0, 1.0], rel=0.02)


# ------------------------------------------------------------------------------------------------------ planted faults

def _audit_point(**kw):
    p = _point(q=0.5, sigma=4.0, T=10, delta=1e-3, audit=1) | kw
    return cat.run_point(p, 40000, np.random.SeedSequence(11))


def test_clean_audit_passes():
    r = checks.element_audit(CHECK, "element_subsampled_sum", [_audit_point() | {"value": None}])
    assert r.verdict == "pass" and r.claims == checks.CLAIMS_AUDIT


def test_noise_too_small_is_caught_by_the_audit(monkeypatch):
    real = es.release
    monkeypatch.setattr(es, "release", lambda sums, n, **kw: real(sums, n, **(kw | {"sigma": kw["sigma"] / 4})))
    r = checks.element_audit(CHECK, "element_subsampled_sum", [_audit_point() | {"value": None}])
    assert r.verdict == "fail"


def test_canary_counted_twice_is_caught_by_the_audit(monkeypatch):
    real = es.user_sum
    monkeypatch.setattr(es, "user_sum", lambda v: 2 * real(v))
    r = checks.element_audit(CHECK, "element_subsampled_sum", [_audit_point() | {"value": None}])
    assert r.verdict == "fail"


def test_wrong_sensitivity_in_the_claim_is_caught_by_accounting(monkeypatch):
    """A claim computed for sensitivity rho (the pair N(+-1/2)) instead of 2 rho: sigma doubled in Cor 2.5."""
    real = er.paper_epsilon
    monkeypatch.setattr(er, "paper_epsilon", lambda q, s, T, d, *a: real(q, 2 * s, T, d, *a))
    pt = cat.run_point(_point(), 100, np.random.SeedSequence(0)) | {"value": None}
    assert checks.element_accounting(CHECK, "element_subsampled_sum", [pt]).verdict == "fail"


def _acc_point(relation=cat.ELEMENT, **kw):
    p = _point(T=50, **kw)
    return {"value": p["K"], "params": p, "relation": {"label": relation.label, "unit": relation.unit},
            "accounting": cat.accounting(p, relation)}


def test_accounting_verdicts_by_k_and_relation():
    r = checks.element_accounting(CHECK, "element_subsampled_sum", [_acc_point(K=1), _acc_point(K=3)])
    assert r.verdict == "fail" and [row["verdict"] for row in r.rows] == ["pass", "fail"]
    ru = checks.element_accounting(CHECK, "element_subsampled_sum", [_acc_point(cat.USER, K=2)])
    assert ru.verdict == "pass" and ru.claims == checks.CLAIMS_USER
    fixed = checks.element_accounting(CHECK, "element_subsampled_sum", [_acc_point(fixed_size=1)])
    assert fixed.verdict == "inconclusive"


def _approx_point(q, sigma=2.0):
    p = _point(q=q, sigma=sigma)
    return {"value": q, "params": p, "approximation": cat.approximation(p)}


def test_cor25_approximation_fails_as_q_goes_to_zero():
    r = checks.approximation(CHECK, "element_subsampled_sum", [_approx_point(q) for q in (0.05, 0.01, 0.002)])
    assert r.verdict == "fail" and r.claims == checks.CLAIMS_APPROX
    assert checks.approximation(CHECK, "x", [_approx_point(0.05)]).verdict == "inconclusive"
    assert checks.approximation(CHECK, "x", [_approx_point(0.05, sigma=1.5)]).verdict == "inapplicable"


def test_amplification_check_fails_exactly_where_k_exceeds_one():
    pts = [cat.amplification_point({"eps0": 1.0, "q": 0.1, "K": 1}, 100, None) | {"value": 1}]
    r = checks.subsampling_amplification(CHECK, "element_amplification", pts)
    assert r.verdict == "fail" and [x["exact / claim"] > 1 + 1e-9 for x in r.rows] == [False, True]


# ------------------------------------------------------------------------------------------------------------- laws

@settings(max_examples=25, deadline=None)
@given(q=st.floats(0.005, 0.5), sigma=st.floats(0.8, 6.0), alpha=st.floats(1.1, 30.0))
def test_eps_alpha_monotone(q, sigma, alpha):
    e = er.eps_alpha(q, sigma, alpha)
    assert er.eps_alpha(q, sigma, alpha * 1.2) >= e * (1 - 1e-9)
    assert er.eps_alpha(min(1.0, q * 1.3), sigma, alpha) >= e * (1 - 1e-9)
    assert er.eps_alpha(q, sigma * 1.2, alpha) <= e * (1 + 1e-9)


# ------------------------------------------------------------------------------------------------------ bad params

def test_bad_params_refused():
    with pytest.raises(ValidationError):
        cat.ElementSumParams.model_validate({"q": 1.5, "sigma": 2.0, "T": 10, "delta": 1e-5, "n": 100})
    with pytest.raises(RuleError, match="whole number"):
        cat.rules(_point(q=0.0555, fixed_size=1))
    with pytest.raises(RuleError, match="whole number"):
        cat.amplification_rules({"eps0": 1.0, "q": 0.3, "K": 1})
    with pytest.raises(ValueError, match="sampling rate"):
        er.eps_alpha(0.0, 1.0, 2.0)
    with pytest.raises(ValueError, match="alpha"):
        er.renyi(0.1, 1.0, 1.0)
    assert {"element_subsampled_sum", "element_amplification"} <= set(MECHANISMS.names())


# ------------------------------------------------------------------------------- speed-ups that keep every number (issue 17)

def _renyi_as_printed(q, sigma, alpha, a, b):
    """renyi before issue 17: log_mixture twice and scipy's logsumexp, the reference for the in-place version."""
    from scipy.special import logsumexp
    centres = [0.0, a, b, alpha * a + (1 - alpha) * b, alpha * a, (1 - alpha) * b]
    lo, hi = min(centres) - er.QUAD_TAIL * sigma, max(centres) + er.QUAD_TAIL * sigma
    n = int(math.ceil((hi - lo) / sigma * er.GRID_PER_SIGMA)) + 1
    y = np.linspace(lo, hi, n)
    f = alpha * er.log_mixture(y, q, a, sigma) + (1 - alpha) * er.log_mixture(y, q, b, sigma)
    w = np.full(n, math.log(y[1] - y[0]))
    w[0] = w[-1] = w[0] - math.log(2.0)
    return max(float(logsumexp(f + w)) / (alpha - 1), 0.0)


@pytest.mark.parametrize("q,sigma,a,b", [(0.05, 2.0, 1.0, -1.0), (0.02, 0.7, 3.0, 1.0), (1.0, 1.5, 5.0, -5.0),
                                         (0.3, 20.0, 10.0, 8.0)])
def test_renyi_in_place_is_the_printed_formula_bit_for_bit(q, sigma, a, b):
    for alpha in (1.001, 1.5, 2.0, 7.25, 40.0, 333.3):
        assert er.renyi(q, sigma, alpha, a, b) == _renyi_as_printed(q, sigma, alpha, a, b)


def _mironov_whole_grid(rdp, T, delta):
    """mironov before issue 17: every order of the grid evaluated."""
    from scipy.optimize import minimize_scalar
    L = math.log(1 / delta)

    def obj(al):
        return T * rdp(al) + L / (al - 1)
    vals = np.array([obj(a) for a in er.ORDERS])
    i = int(np.argmin(vals))
    lo, hi = er.ORDERS[max(i - 1, 0)], er.ORDERS[min(i + 1, len(er.ORDERS) - 1)]
    best = (float(vals[i]), float(er.ORDERS[i]))
    r = minimize_scalar(obj, bounds=(lo, hi), method="bounded", options={"xatol": 1e-6 * lo})
    return (float(r.fun), float(r.x)) if r.fun < best[0] else best


@pytest.mark.parametrize("q,sigma,T,a,b", [(0.05, 2.0, 200, 1.0, -1.0), (0.05, 4.0, 1, 10.0, 8.0),
                                           (0.001, 20.0, 200, 1.0, -1.0), (0.5, 0.5, 5000, 1.0, -1.0)])
def test_mironov_leaving_the_grid_early_gives_the_whole_grids_number(q, sigma, T, a, b):
    rdp = lambda al: er.eps_alpha(q, sigma, al, a, b)      # noqa: E731
    c = er.mironov(rdp, T, 5e-4)
    assert (c.epsilon, c.alpha) == _mironov_whole_grid(rdp, T, 5e-4)
    lab = er.mironov(lambda al: er.labelled_eps_alpha(q, sigma, al), T, 5e-4)
    assert (lab.epsilon, lab.alpha) == _mironov_whole_grid(lambda al: er.labelled_eps_alpha(q, sigma, al), T, 5e-4)


def test_cached_accountants_return_the_computed_numbers():
    er.pair_conversion.cache_clear()
    er._tight_epsilon.cache_clear()
    first = er.paper_epsilon(0.05, 2.0, 50, 5e-4)
    assert er.paper_epsilon(0.05, 2.0, 50, 5e-4) is first
    assert first == er.mironov(lambda al: er.eps_alpha(0.05, 2.0, al), 50, 5e-4)
    t = er.tight_epsilon(0.05, 2.0, 50, 5e-4, 3.0, 1.0)
    assert t == float(er.epsilon_for_delta(er.one_round_pld(0.05, 2.0, 3.0, 1.0).self_compose(50), 5e-4))
