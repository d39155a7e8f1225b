"""Seed 001's Figure 2 baselines (verifiers/accountants/shuffle_baselines.py) against independent evaluations: brute-force
enumeration, mpmath, the FMT authors' published example, and the exact optimal composition."""
from __future__ import annotations

import copy
import math

import mpmath as mp
import numpy as np
import pytest
from scipy.stats import binom

from engine.kinds.curve import run as curves
from engine.kinds.curve.spec import parse_curve
from engine.kinds.learning import spec as spec_mod
from tests.helpers import ROOT
from verifiers.accountants import shuffle_baselines as sb


def test_fmt_numerical_bound_matches_the_authors_example():
    # apple/ml-shuffling-amplification README: n = 1e5, eps0 = 4, delta = 1e-6 -> eps in [0.16754, 0.17279]
    assert 0.16754 <= sb.fmt_epsilon(10**5, 4.0, 1e-6) <= 0.17279


@pytest.mark.parametrize("m,eps0,eps", [(5, 1.0, 0.2), (12, 2.0, 0.5), (30, 0.5, 0.05)])
def test_fmt_divergence_by_enumeration(m, eps0, eps):
    """HS_{e^eps}(P || Q) summed over the joint outcome (x, y) of FMT's pair, enumerated outcome by outcome."""
    a = math.exp(eps0) / (math.exp(eps0) + 1)
    P, Q = {}, {}
    for c in range(m):
        wc = binom.pmf(c, m - 1, math.exp(-eps0))
        for A in range(c + 1):
            wa = wc * binom.pmf(A, c, 0.5)
            for B, wb in ((1, a), (0, 1 - a)):
                kp, kq = (A + B, c - A + 1 - B), (A + 1 - B, c - A + B)
                P[kp] = P.get(kp, 0.0) + wa * wb
                Q[kq] = Q.get(kq, 0.0) + wa * wb
    hs = sum(max(0.0, P.get(o, 0.0) - math.exp(eps) * Q.get(o, 0.0)) for o in set(P) | set(Q))
    assert sb.fmt_delta(m, eps0, eps) == pytest.approx(hs, rel=1e-9, abs=1e-15)


def _mp_shuffle_rdp(lam, m, eps0):
    e0 = mp.mpf(eps0)
    mbar = mp.floor((m - 1) / (2 * mp.e**e0)) + 1
    s = 1 + mp.binomial(lam, 2) * (mp.e**e0 - 1) ** 2 / (mbar * mp.e**e0)
    for i in range(3, lam + 1):
        s += mp.binomial(lam, i) * i * mp.gamma(mp.mpf(i) / 2) * ((mp.e**(2 * e0) - 1) ** 2 / (2 * mp.e**(2 * e0) * mbar)) ** (mp.mpf(i) / 2)
    s += mp.e ** (e0 * lam - (m - 1) / (8 * mp.e**e0))
    return mp.log(s) / (lam - 1)


def _mp_thm9(lam, eps, gamma, eps_inf):
    g = mp.mpf(gamma)
    s = 1 + g**2 * mp.binomial(lam, 2) * min(4 * (mp.e ** eps[2] - 1), mp.e ** eps[2] * min(2, (mp.e**eps_inf - 1) ** 2))
    for j in range(3, lam + 1):
        s += g**j * mp.binomial(lam, j) * mp.e ** ((j - 1) * eps[j]) * min(2, (mp.e**eps_inf - 1) ** j)
    return mp.log(s) / (lam - 1)


@pytest.mark.parametrize("m,eps0", [(1000, 2.0), (10**4, 1.0), (50, 0.3)])
def test_rdp_baseline_against_mpmath(m, eps0):
    mp.mp.dps = 40
    ours = sb.shuffle_rdp(12, m=m, eps0=eps0)
    for lam in range(2, 13):
        assert ours[lam] == pytest.approx(float(_mp_shuffle_rdp(lam, m, eps0)), rel=1e-10)
    sub = sb.subsampled_rdp(ours, gamma=0.01, eps_inf=eps0, convention="as_stated")
    mp_eps = [mp.mpf(x) for x in ours]
    for lam in range(2, 13):
        assert sub[lam] == pytest.approx(float(_mp_thm9(lam, mp_eps, 0.01, eps0)), rel=1e-10)
    script = sb.subsampled_rdp(ours, gamma=0.01, eps_inf=eps0, convention="authors_script")
    assert (script[2:] >= sub[2:] * (1 - 1e-12)).all()    # 2 e^{eps(2)} >= Thm 9's min


def _exact_rr_composition_delta(eps: float, T: int, eps_total: float) -> float:
    """KOV's Thm 3.3: delta of the T-fold composition of eps-randomized response at eps_total (exact)."""
    ls = np.arange(T + 1)
    w = binom.pmf(ls, T, 1 / (1 + math.exp(eps)))
    return float(np.sum(w * np.maximum(0.0, 1 - np.exp(eps_total - (T - 2 * ls) * eps))))


@pytest.mark.parametrize("eps,T", [(0.1, 100), (0.01, 2000), (0.5, 20)])
def test_kov_simplified_is_an_upper_bound_on_the_optimal_composition(eps, T):
    dt = 1e-6
    assert _exact_rr_composition_delta(eps, T, sb.kov(eps, T, dt)) <= dt
    assert sb.kov(eps, 1, dt) == pytest.approx(eps)


def test_paper_ratios_come_from_the_script_conventions():
    at = dict(k=1000, n=10**6, eps0=2.0, T=10**5, delta=1e-8)
    from verifiers.accountants import subsampled_shuffle
    thm1 = subsampled_shuffle.epsilon("upper", **at).epsilon
    assert sb.fmt_kov_epsilon(**at, convention="authors_script") / thm1 == pytest.approx(14, rel=0.05)
    assert sb.rdp_shuffle_epsilon(**at, convention="authors_script")[0] / thm1 == pytest.approx(2.5, rel=0.05)
    assert sb.fmt_kov_epsilon(**at) / thm1 < 3
    assert sb.rdp_shuffle_epsilon(**at)[0] / thm1 < 1


def _fig2a(**change) -> dict:
    import yaml

    raw = yaml.safe_load((ROOT / "specs" / "shuffle_fig2a.yaml").read_text())
    raw = copy.deepcopy(raw) | change
    return raw


def test_curve_checks_decide_and_can_fail():
    raw = _fig2a(sweep={"field": "T", "values": [1000, 100000]})
    raw["checks"] = [{"id": "r", "kind": "ratio_claim", "curve": "fmt_kov:authors_script", "at": 100000, "ratio": 14,
                      "claims": ["001 Fig. 2a (14×)"]},
                     {"id": "wrong", "kind": "ratio_claim", "curve": "fmt_kov:authors_script", "at": 100000, "ratio": 5,
                      "claims": ["001 Fig. 2a (14×)"]},
                     {"id": "o", "kind": "curves_ordered", "order": ["thm2", "thm1", "fmt_kov:authors_script"],
                      "claims": ["001 Fig. 2b (ordering)"]},
                     {"id": "o_bad", "kind": "curves_ordered", "order": ["fmt_kov:authors_script", "thm1"],
                      "claims": ["001 Fig. 2b (ordering)"]}]
    raw["expect"] = {}
    res = curves.run(parse_curve(raw, "x.yaml"))
    assert {c["id"]: c["verdict"] for c in res["checks"]} == {"r": "pass", "wrong": "fail", "o": "pass", "o_bad": "fail"}


def test_curve_spec_rules_for_baselines():
    raw = _fig2a(expect={})
    raw["checks"] = [{"id": "r", "kind": "ratio_claim", "curve": "fmt_kov:exact", "at": 100000, "ratio": 14, "claims": ["001 Fig. 2a (14×)"]}]
    with pytest.raises(spec_mod.SpecError, match="checks.0: unknown curve 'fmt_kov:exact'"):
        parse_curve(raw, "x.yaml")
    raw["checks"] = [{"id": "r", "kind": "ratio_claim", "curve": "fmt_kov:as_stated", "at": 99, "ratio": 14, "claims": ["001 Fig. 2a (14×)"]}]
    with pytest.raises(spec_mod.SpecError, match="checks.0.at: 99.0 is not one of the sweep values"):
        parse_curve(raw, "x.yaml")
    raw["checks"] = [{"id": "r", "kind": "ratio_claim", "curve": "fmt_kov:as_stated", "claims": ["001 Fig. 2a (14×)"]}]
    with pytest.raises(spec_mod.SpecError, match="needs curve, at and ratio"):
        parse_curve(raw, "x.yaml")
