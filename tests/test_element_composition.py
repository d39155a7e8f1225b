"""Seed 002's group privacy (Cor 2.2), composition (Cor 2.3) and O(1) privacy statements (Eq. (16), Prop 3 (i)-(ii)):
the exact computations pinned against independent references (brute-force enumeration, closed forms, quadrature,
dp-accounting), a planted fault per check kind that makes it fail, and bad parameters refused."""
from __future__ import annotations

import itertools
import math
from types import SimpleNamespace

import numpy as np
import pytest
from dp_accounting.pld import common as pld_common
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from pydantic import ValidationError
from scipy.stats import binom, norm

from catalog import MECHANISMS
from catalog import element_composition_002 as cat
from catalog.base import RuleError
from verifiers.accountants import element_rdp as er
from verifiers.checks import element_composition as ec

CHECK = SimpleNamespace(id="c", kind="k")


def _points(fn, model, field, values, **base):
    out = []
    for v in values:
        p = model.model_validate(base | {field: v}).model_dump()
        out.append({"value": v} | fn(p, 100, None))
    return out


def _rr_brute(eps0: float, k: int, E: float) -> float:
    """delta(E) of k-fold RR by enumerating all 2^k outputs (input all ones vs all zeros)."""
    p = math.exp(eps0) / (1 + math.exp(eps0))
    tot = 0.0
    for out in itertools.product((0, 1), repeat=k):
        ones = sum(out)
        P = p**ones * (1 - p) ** (k - ones)
        Q = (1 - p) ** ones * p ** (k - ones)
        tot += max(0.0, P - math.exp(E) * Q)
    return tot


# ---------------------------------------------------------------------------------------------------------------- pins

@pytest.mark.parametrize("eps0,k,E", [(0.5, 1, 0.1), (0.3, 6, 0.5), (1.0, 8, 2.0), (0.05, 7, 0.0), (2.0, 5, 9.9)])
def test_rr_delta_matches_brute_force_enumeration(eps0, k, E):
    assert ec.rr_delta(eps0, k, E) == pytest.approx(_rr_brute(eps0, k, E), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("eps0,k", [(0.1, 100), (0.5, 40), (0.02, 1000)])
def test_rr_composition_matches_dp_accounting(eps0, k):
    """dp-accounting's pessimistic PLD of an eps0-DP mechanism (3 atoms) and of 2-bucket randomized response, composed
    k times: both between our exact delta at E and at E - k x its value step (its losses rounded up by at most a
    step each)."""
    E = ec.advanced_claim([eps0] * k, 1e-5) / 3
    ours = ec.rr_delta(eps0, k, E)
    a = pld_lib.from_privacy_parameters(pld_common.DifferentialPrivacyParameters(eps0, 0.0),
                                        value_discretization_interval=1e-5).self_compose(k).get_delta_for_epsilon(E)
    noise = 2 / (1 + math.exp(eps0))
    b = pld_lib.from_randomized_response(noise, 2, value_discretization_interval=1e-5).self_compose(k) \
        .get_delta_for_epsilon(E)
    assert ours > 1e-12
    for ref in (a, b):
        assert ours <= ref * (1 + 1e-9)
        assert ref <= ec.rr_delta(eps0, k, E - k * 1e-5) * (1 + 1e-6)


@pytest.mark.parametrize("eps0,di,k", [(1.0, 1e-4, 1), (0.5, 1e-6, 50), (2.0, 1e-6, 200)])
def test_worst_delta_matches_dp_accounting_at_the_failing_advanced_points(eps0, di, k):
    """The delta-term finding's second method: dp-accounting's PLD of an (eps0, delta_i)-DP mechanism composed k times
    gives the same delta at the claimed epsilon, above the claimed delta0 + k delta_i/(1 + e^eps0)."""
    E = ec.advanced_claim([eps0] * k, 1e-5)
    ours = ec.worst_delta(eps0, di, k, E)
    ref = pld_lib.from_privacy_parameters(pld_common.DifferentialPrivacyParameters(eps0, di)) \
        .self_compose(k).get_delta_for_epsilon(E)
    assert ref == pytest.approx(ours, rel=1e-3)
    assert ours > ec.advanced_claim_delta([eps0] * k, [di] * k, 1e-5)
    assert ours <= 1e-5 + k * di                   # Dwork-Rothblum-Vadhan's delta0 + k delta_i holds


@pytest.mark.parametrize("sigma,k,eps", [(1.0, 3, 0.2), (2.0, 10, 0.05), (0.5, 2, 1.0)])
def test_gaussian_group_delta_matches_dp_accounting(sigma, k, eps):
    ref = pld_lib.from_gaussian_mechanism(sigma, sensitivity=k).get_delta_for_epsilon(k * eps)
    mu = k / sigma
    closed = norm.cdf(mu / 2 - k * eps / mu) - math.exp(k * eps) * norm.cdf(-mu / 2 - k * eps / mu)
    pt = cat.group_point(cat.GroupParams(k=k, sigma=sigma, eps_min=eps, eps_max=2 * eps, n_eps=2).model_dump(), 100, None)
    row = next(r for r in pt["group"]["rows"] if r["base"] == "gaussian" and r["eps"] == pytest.approx(eps))
    assert row["exact"] == pytest.approx(closed, rel=1e-9)
    assert row["exact"] == pytest.approx(ref, rel=1e-2)


def test_rr_group_rows_match_enumeration_and_the_claim_holds():
    pt = cat.group_point(cat.GroupParams(k=6, eps0=1.0, n_eps=8).model_dump(), 100, None)
    rr = [r for r in pt["group"]["rows"] if r["base"] == "randomized response"]
    assert rr
    for r in rr:
        assert r["exact"] == pytest.approx(_rr_brute(1.0, 6, 6 * r["eps"]), rel=1e-12)
        assert r["base delta"] == pytest.approx(_rr_brute(1.0, 1, r["eps"]), rel=1e-12)
        assert r["exact"] <= r["claim"]


@pytest.mark.parametrize("alpha,s_lo,s_hi", [(2.0, 2.0, 4.0), (3.5, 1.0, 2.5), (1.5, 0.7, 3.0)])
def test_adaptive_rdp_matches_quadrature(alpha, s_lo, s_hi):
    """k = 2 by 1-D quadrature (the second round's integral is closed), k = 3 by a 2-D grid."""
    def g(z, s):   # phi_s(z - 1)^alpha phi_s(z)^(1 - alpha)
        return np.exp(alpha * norm.logpdf(z, 1, s) + (1 - alpha) * norm.logpdf(z, 0, s))

    def c(s):
        return math.exp(alpha * (alpha - 1) / (2 * s**2))

    h = 4e-4                                                         # midpoints: no node on the jump at 0
    z = (np.arange(-100000, 100000) + 0.5) * h
    inner = np.where(z > 0, c(s_lo), c(s_hi))
    two = float(np.sum(g(z, s_lo) * inner) * h)
    assert ec.adaptive_rdp(2, alpha, 1.0, s_lo, s_hi) == pytest.approx(math.log(two) / (alpha - 1), rel=1e-7)
    hh = 0.02
    zz = (np.arange(-1500, 1500) + 0.5) * hh
    s1 = np.where(zz > 0, s_lo, s_hi)
    f1 = g(zz, s_lo)                                                 # round 1
    f2 = g(zz[None, :], s1[:, None])                                 # round 2 given z1 (rows)
    last = np.where(zz > 0, c(s_lo), c(s_hi))                        # round 3 integrated, given z2
    three = float(np.einsum("i,ij,j->", f1, f2, last) * hh * hh)
    assert ec.adaptive_rdp(3, alpha, 1.0, s_lo, s_hi) == pytest.approx(math.log(three) / (alpha - 1), rel=1e-5)


def test_non_adaptive_rdp_is_the_closed_form_and_adaptive_is_below_the_claim():
    assert ec.adaptive_rdp(7, 3.0, 1.0, 1.5, 1.5) == pytest.approx(7 * 3.0 / (2 * 1.5**2), rel=1e-12)
    assert ec.adaptive_rdp(7, 2.0, 1.0, 2.0, 4.0) < ec.rdp_claim(7, 2.0, 1.0, 2.0, 4.0)


@pytest.mark.parametrize("T,q,sigma,delta", [(200, 0.05, 2.0, 1e-5), (50000, 2e-4, 6.0, 1e-5), (10, 0.3, 0.5, 1e-3)])
def test_eq16_expression_is_the_inf_over_alpha(T, q, sigma, delta):
    top = sigma**2 * math.log(1 / q)
    al = np.linspace(1e-6, top, 2_000_001)
    brute = float(np.min(T * q**2 / sigma**2 * (1 + al) + math.log(1 / delta) / al))
    assert ec.eq16_expression(T, q, sigma, delta) == pytest.approx(brute, rel=1e-8)
    assert ec.eq16_expression(T, q, sigma, delta) == pytest.approx(er.eq16(T, q, sigma, round(1 / q), delta), rel=1e-12)
    n = 1000
    assert ec.prop3_expression(2.0, 10, n, sigma, delta) == pytest.approx(ec.eq16_expression(2 * n, 0.01, sigma, delta))


def test_binomial_hockey_stick_matches_dp_accounting():
    T, pa, pb, E = 300, 0.04, 0.01, 1.3
    j = np.arange(T + 1)
    la, lb = binom.logpmf(j, T, pa), binom.logpmf(j, T, pb)
    ref = pld_lib.from_two_probability_mass_functions(dict(enumerate(lb)), dict(enumerate(la)),
                                                      value_discretization_interval=1e-5).get_delta_for_epsilon(E)
    assert ec._binomial_delta(la, lb, E) == pytest.approx(ref, rel=1e-3)


@pytest.mark.parametrize("a,b,sigma", [(1.0, -1.0, 2.0), (3.0, 1.0, 2.0)])
def test_count_bound_is_below_the_exact_epsilon(a, b, sigma):
    q, T, delta = 0.05, 200, 1e-5
    lower, _ = ec.count_lower_epsilon(q, sigma, T, delta, a, b)
    assert 0 < lower <= er.tight_epsilon(q, sigma, T, delta, a, b)


def test_unrestricted_k_bracket_second_method():
    """The K-free finding's two methods: an exact count-statistic bound at a finite witness pair (a post-processing of
    a realisable element pair) below, the labelled limit above; both stay near 4-6 as n grows while Eq. (16) falls."""
    lo_hi = []
    for n in (500, 5000):
        q, T = 10 / n, n
        u = cat._unrestricted(q, 6.0, T, 1e-5)
        assert u["lower"] <= u["upper"]
        lo_hi.append((u["lower"], u["upper"], ec.eq16_expression(T, q, 6.0, 1e-5)))
    (l1, h1, e1), (l2, h2, e2) = lo_hi
    assert l2 / e2 > 2 * h1 / e1


# ------------------------------------------------------------------------------------------------- planted faults

def test_group_claim_without_its_factor_is_caught_by_group_privacy(monkeypatch):
    pts = _points(cat.group_point, cat.GroupParams, "k", [1, 2, 5])
    assert ec.group_privacy(CHECK, "g", pts).verdict == "pass"
    monkeypatch.setattr(ec, "group_claim", lambda eps, delta, k: delta)          # k e^((k-1) eps) dropped
    res = ec.group_privacy(CHECK, "g", _points(cat.group_point, cat.GroupParams, "k", [1, 2, 5]))
    assert res.verdict == "fail" and res.claims == ("002 Cor 2.2",)


def _comp(values=(1, 10, 100), **kw):
    return _points(cat.composition_point, cat.CompositionParams, "k", list(values), n_eps=12, **kw)


def test_basic_delta_as_a_max_is_caught_by_basic_composition(monkeypatch):
    assert ec.basic_composition(CHECK, "c", _comp()).verdict == "pass"
    monkeypatch.setattr(ec, "basic_claim_delta", lambda ds: max(ds))
    assert ec.basic_composition(CHECK, "c", _comp()).verdict == "fail"


@pytest.mark.parametrize("c1,c2", [(0.0, 2.0), (1.5, 0.5)])
def test_a_smaller_advanced_epsilon_is_caught_by_advanced_composition(monkeypatch, c1, c2):
    pts = _comp((1, 100, 500, 1000))
    assert ec.advanced_composition(CHECK, "c", pts).verdict == "pass"
    real = ec.advanced_claim
    monkeypatch.setattr(ec, "advanced_claim", lambda eps, d0: real(eps, d0, c1, c2))
    assert ec.advanced_composition(CHECK, "c", _comp((1, 100, 500, 1000))).verdict == "fail"


def test_the_printed_delta_term_fails_and_dwork_rothblum_vadhans_passes(monkeypatch):
    """The printed delta0 + sum delta_i/(1 + e^eps_i) is below the truth (a claim tighter than the truth: fail);
    replaced by delta0 + sum delta_i the same points pass."""
    res = ec.advanced_composition_delta(CHECK, "c", _comp((1, 10, 100)))
    assert res.verdict == "fail" and res.measured > res.bound
    monkeypatch.setattr(ec, "advanced_claim_delta", lambda eps, ds, d0: d0 + sum(ds))
    assert ec.advanced_composition_delta(CHECK, "c", _comp((1, 10, 100))).verdict == "pass"
    assert ec.advanced_composition_delta(CHECK, "c", _comp((1, 10), delta_i=0.0)).verdict == "inapplicable"


def test_rdp_composition_as_one_step_is_caught_by_rdp_composition(monkeypatch):
    assert ec.rdp_composition(CHECK, "c", _comp()).verdict == "pass"
    real = ec.rdp_claim
    monkeypatch.setattr(ec, "rdp_claim", lambda k, al, d, lo, hi: real(1, al, d, lo, hi))   # max, not sum
    assert ec.rdp_composition(CHECK, "c", _comp()).verdict == "fail"


def _prop3(values=(100, 200, 400, 800), **kw):
    base = dict(m=5, gamma=1.0, sigma=2.0, delta=1e-5, K=1, M=1) | kw
    return _points(cat.prop3_point, cat.Prop3Params, "n", list(values), **base)


def test_a_sampling_rate_that_does_not_fall_with_n_is_caught_by_the_order_checks(monkeypatch):
    """Clean: K = 1 is consistent over the sweep at both levels; planted: the mechanism samples q = 0.05 whatever n
    (the claim's q = m/n), so its epsilon grows like sqrt(T) while the expressions fall: all three fail."""
    pts = _prop3()
    for fn in (ec.eq16_order, ec.prop3_element_order, ec.prop3_user_order):
        assert fn(CHECK, "p", pts).verdict == "pass"
    monkeypatch.setattr(cat, "sampling_rate", lambda m, n: 0.05)
    pts = _prop3()
    for fn, claim in ((ec.eq16_order, "002 Eq. (16)"), (ec.prop3_element_order, "002 Prop 3 (i)"),
                      (ec.prop3_user_order, "002 Prop 3 (ii)")):
        res = fn(CHECK, "p", pts)
        assert res.verdict == "fail" and res.claims == (claim,)


def test_order_rule_verdicts_and_conditions():
    assert ec.order_verdict([1, 2], [1, 1], [1, 1])[0] == "inapplicable"
    assert ec.order_verdict([1, 2, 3], [1, 1.5, 2.5], [1.1, 1.6, 2.6])[0] == "fail"
    assert ec.order_verdict([1, 2, 3], [1, 0.9, 0.8], [1.1, 1.5, 1.2])[0] == "pass"
    assert ec.order_verdict([1, 2, 3], [1, 0.9, 2.5], [1.1, 1.6, 2.6])[0] == "inconclusive"
    one = _prop3((40,), sigma=1.2)[0]              # sigma^2 < 2: Prop 3 (i), (ii) do not apply
    pts = [one | {"value": n, "params": one["params"] | {"n": n}} for n in (40, 80, 160)]
    assert ec.prop3_element_order(CHECK, "p", pts).verdict == "inapplicable"
    assert ec.prop3_user_order(CHECK, "p", pts).verdict == "inapplicable"


# ------------------------------------------------------------------------------------------------- bad parameters

@pytest.mark.parametrize("name,params,field", [
    ("element_group_privacy", {"k": 2, "eps_min": 1.0, "eps_max": 0.5}, "eps_min"),
    ("element_composition", {"k": 2, "sigma_lo": 3.0, "sigma_hi": 1.0}, "sigma_lo"),
    ("element_prop3_privacy", {"n": 100, "m": 100}, "m"),
    ("element_prop3_privacy", {"n": 10**6, "gamma": 1.0}, "gamma"),
])
def test_bad_params_are_refused_by_the_rules(name, params, field):
    entry = MECHANISMS.get(name)
    p = entry.params.model_validate(params).model_dump()
    with pytest.raises(RuleError) as e:
        entry.rules(p)
    assert e.value.field == field and "\n" not in str(e.value)


@pytest.mark.parametrize("model,params", [(cat.GroupParams, {"k": 0}), (cat.CompositionParams, {"k": 5, "delta0": 0}),
                                          (cat.Prop3Params, {"n": 500, "K": -1}), (cat.Prop3Params, {"n": 500, "x": 1})])
def test_bad_params_are_refused_by_the_models(model, params):
    with pytest.raises(ValidationError):
        model.model_validate(params)


def test_exact_helpers_refuse_bad_input():
    with pytest.raises(ValueError):
        ec.rr_delta(0.0, 3, 1.0)
    with pytest.raises(ValueError):
        ec.adaptive_rdp(3, 1.0, 1.0, 1.0, 2.0)
