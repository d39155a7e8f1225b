"""Seed 004's shuffle-DP variants: the accountant of Shuffled Noisy MB-SGD (verifiers/accountants/shuffled_gaussian.py) against
the seed's closed form (21), FMT's published example and an independent mpmath recomputation; the search for Thm
G.1's constant C; and planted faults in both algorithms (algorithms/sdp_fl.py)."""
from __future__ import annotations

import dataclasses
import math

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from algorithms import mechanisms, shuffle_sum
from catalog import ALGORITHMS
from engine.kinds.learning import runner
from tests.helpers import _tiny, verdicts
from verifiers.accountants import shuffle_baselines as sb
from verifiers.accountants import shuffled_gaussian as sg
from verifiers.theorems import THEOREMS


def seed_eq21(eps0r: float, n: int, N: int, delta_r: float) -> float:
    """Seed 004's (21) (L806), written out independently: the single-round amplification of N silos' reports."""
    a = (math.exp(eps0r) - 1) / (math.exp(eps0r) + 1)
    return math.log(1 + a * (8 * math.sqrt(math.exp(n * eps0r) * math.log(4 / delta_r)) / math.sqrt(N)
                             + 8 * math.exp(n * eps0r) / N))


@pytest.mark.parametrize("M,eps0,delta", [(500, 0.05, 1e-7), (2000, 0.5, 1e-6), (10**4, 1.0, 1e-8)])
def test_amplification_against_the_seeds_closed_form(M, eps0, delta):
    closed = sb.fmt_closed_form(M, eps0, delta)
    assert closed is not None and closed == pytest.approx(seed_eq21(eps0, 1, M, delta), rel=1e-12)   # (21), n = 1
    numerical = sb.fmt_epsilon(M, eps0, delta)
    assert numerical <= closed                       # the numerical bound is the tighter of FMT's two
    assert numerical >= 0.05 * closed                # and not absurdly below it


def test_account_reports_the_closed_form_where_its_condition_holds():
    a = sg.account(sigma=60.0, L=1.0, M=4000, N=4000, n=10, R=100, delta=1e-4)
    assert a.eps_shuffle_closed is not None
    assert a.eps_shuffle <= a.eps_shuffle_closed == pytest.approx(seed_eq21(a.eps0, 1, 4000, a.delta_shuffle))


def test_amplification_step_matches_the_fmt_authors_published_example():
    # apple/ml-shuffling-amplification README: 10^5 reports, eps0 = 4, delta = 1e-6 -> eps in [0.16754, 0.17279]
    assert 0.16754 <= sb.fmt_epsilon(10**5, 4.0, 1e-6) <= 0.17279


def _mp_fmt_delta(m: int, eps0: float, eps: float) -> mp.mpf:
    """FMT's dominating pair enumerated outcome by outcome in mpmath (independent of shuffle_baselines.fmt_delta)."""
    e0, E = mp.mpf(eps0), mp.e ** mp.mpf(eps)
    a, pc = mp.e**e0 / (mp.e**e0 + 1), mp.e ** (-e0)
    P: dict = {}
    Q: dict = {}
    for c in range(m):
        wc = mp.binomial(m - 1, c) * pc**c * (1 - pc) ** (m - 1 - c)
        for A in range(c + 1):
            wa = wc * mp.binomial(c, A) / mp.mpf(2) ** c
            for B, wb in ((1, a), (0, 1 - a)):
                kp, kq = (A + B, c - A + 1 - B), (A + 1 - B, c - A + B)
                P[kp] = P.get(kp, 0) + wa * wb
                Q[kq] = Q.get(kq, 0) + wa * wb
    return mp.fsum(max(mp.mpf(0), P.get(o, 0) - E * Q.get(o, 0)) for o in set(P) | set(Q))


def _mp_gaussian_delta(eps: float, mu: float) -> mp.mpf:
    Phi = lambda x: mp.erfc(-x / mp.sqrt(2)) / 2     # noqa: E731
    e, m = mp.mpf(eps), mp.mpf(mu)
    return Phi(m / 2 - e / m) - mp.e**e * Phi(-m / 2 - e / m)


def test_account_against_an_independent_mpmath_recomputation():
    """Every step the accountant certifies, re-derived in mpmath for a small case (M = 12 silos)."""
    L, M, N, n, R, delta, sigma = 1.0, 12, 12, 5, 40, 1e-3, 3.0
    a = sg.account(sigma=sigma, L=L, M=M, N=N, n=n, R=R, delta=delta)
    q = M / (N * n)
    assert a.q == q
    budget = delta / (2 * R) / (2 * q)
    # the local randomizer: its exact Gaussian delta at eps0, and the clones' term within its budget
    assert a.delta0 == pytest.approx(float(_mp_gaussian_delta(a.eps0, 2 * L / sigma)), rel=1e-9)
    assert float((mp.e ** a.eps0 + 1) * (1 + mp.e ** (-a.eps0) / 2) * M * _mp_gaussian_delta(a.eps0, 2 * L / sigma)) \
        <= budget * (1 + 1e-9)
    # eps0 is the smallest that fits (bisection resolution)
    e_less = a.eps0 * (1 - 1e-6)
    assert float((mp.e**e_less + 1) * (1 + mp.e ** (-e_less) / 2) * M * _mp_gaussian_delta(e_less, 2 * L / sigma)) > budget
    # FMT's divergence at the reported eps_shuffle is within delta_s, and just below it is not
    assert _mp_fmt_delta(M, a.eps0, a.eps_shuffle) <= a.delta_shuffle * (1 + 1e-9)
    assert _mp_fmt_delta(M, a.eps0, a.eps_shuffle * (1 - 1e-6)) > a.delta_shuffle
    # subsampling and KOV's composition, by hand
    eps1 = mp.log(1 + q * (mp.e**a.eps_shuffle - 1))
    assert a.eps_round == pytest.approx(float(eps1), rel=1e-12)
    dt = 1 - (1 - mp.mpf(delta)) / (1 - mp.mpf(delta) / (2 * R)) ** R
    drift = R * eps1 * (mp.e**eps1 - 1) / (mp.e**eps1 + 1)
    kov = min(R * eps1, drift + eps1 * mp.sqrt(2 * R * mp.log(mp.e + mp.sqrt(R * eps1**2) / dt)),
              drift + eps1 * mp.sqrt(2 * R * mp.log(1 / dt)))
    assert a.epsilon_kov == pytest.approx(float(kov), rel=1e-9)       # the calibration's composition
    assert a.epsilon_kov <= a.epsilon_advanced      # KOV is never above advanced composition
    assert a.epsilon <= a.epsilon_kov               # nor the judge's PLD above KOV (tests/test_sdp_privacy_view.py)


@settings(max_examples=25, deadline=None)
@given(M=st.integers(5, 300), e1=st.floats(0.02, 3.0), e2=st.floats(0.02, 3.0), lg=st.floats(-9.0, -3.0))
def test_shuffled_epsilon_is_monotone_in_the_local_epsilon(M, e1, e2, lg):
    lo, hi = sorted((e1, e2))
    delta = 10.0**lg
    assert sb.fmt_epsilon(M, lo, delta) <= sb.fmt_epsilon(M, hi, delta) + 1e-12
    assert sb.fmt_epsilon(M, hi, delta) <= hi + 1e-12                   # shuffling never hurts


@settings(max_examples=10, deadline=None)
@given(s1=st.floats(3.0, 80.0), s2=st.floats(3.0, 80.0))
def test_accounted_epsilon_falls_as_sigma_grows(s1, s2):
    lo, hi = sorted((s1, s2))
    f = lambda s: sg.account(sigma=s, L=1.0, M=200, N=200, n=10, R=100, delta=1e-4).epsilon   # noqa: E731 (PLD)
    assert f(hi) <= f(lo) + 1e-9


def test_the_c_search_returns_the_smallest_certified_sigma():
    kw = dict(eps=2.0, L=1.6, M=400, N=400, n=10, R=200, delta=1e-3)
    s = sg.min_sigma(**kw)
    acc = lambda x: sg.account(sigma=x, L=1.6, M=400, N=400, n=10, R=200, delta=1e-3).epsilon_kov   # noqa: E731
    assert acc(s) <= 2.0
    assert acc(s * (1 - 2 * sg.SIGMA_REL_RES)) > 2.0            # any visibly smaller sigma is not certified
    assert s == pytest.approx(sg.min_sigma_inverse(**kw), rel=1e-3)   # second method: the chain inverted step by step
    # the resolver reports C = sigma^2 / (Thm G.1's expression) and says the paper leaves C open
    c = {"n": 10, "d": 3, "N": 400, "M": 400.0, "L": 1.6, "beta": 1.0, "mu": 0.0, "D": 2.0, "eps0": 2.0,
         "delta0": 1e-3, "phi2": 1.0, "v2": 0.0, "Delta": 0.1, "risk_max": 0.3}
    res = ALGORITHMS.get("shuffled_mbsgd").resolve(c, "standard", {"R": 200})
    assert res.params["sigma"] == s
    assert res.params["C_thm51"] == pytest.approx(s**2 / sg.thm51_base(L=1.6, R=200, M=400, N=400, n=10, eps=2.0,
                                                                         delta=1e-3))
    assert "LEAVES THE ABSOLUTE CONSTANT C OPEN" in res.provenance["sigma"]
    assert float(THEOREMS.get("sdp.thm5_1.privacy").evaluate(res.params)) == pytest.approx(s, rel=1e-12)


def test_one_c_for_the_sweep_sets_sigma_by_thm_g1s_formula():
    """The C_thm51 override: sigma^2 = C x (Thm G.1's expression) with the spec's C (one absolute constant, as Thm G.1
    states it), R and eta still Thm G.1's (so its rate checks apply); with sigma too it is refused."""
    c = {"n": 10, "d": 3, "N": 400, "M": 400.0, "L": 1.6, "beta": 1.0, "mu": 0.0, "D": 2.0, "eps0": 2.0,
         "delta0": 1e-3, "phi2": 1.0, "v2": 0.0, "Delta": 0.1, "risk_max": 0.3}
    entry = ALGORITHMS.get("shuffled_mbsgd")
    paper = entry.resolve(c, "standard", {})
    res = entry.resolve(c, "standard", {"C_thm51": 3.0})
    base = sg.thm51_base(L=1.6, R=paper.params["R"], M=400, N=400, n=10, eps=2.0, delta=1e-3)
    assert res.params["sigma"] == pytest.approx(math.sqrt(3.0 * base), rel=1e-12)
    assert res.params["C_thm51"] == pytest.approx(3.0)
    assert res.params["C_min_chain"] == pytest.approx(paper.params["C_thm51"], rel=1e-12)
    assert res.params["thm_g1_parameters"] == 1.0 and res.params["R"] == paper.params["R"]
    assert res.params["eta"] == paper.params["eta"]
    assert float(THEOREMS.get("sdp.thm5_1.privacy").evaluate(res.params)) == pytest.approx(res.params["sigma"])
    with pytest.raises(Exception, match="set one"):
        entry.resolve(c, "standard", {"C_thm51": 3.0, "sigma": 50.0})


def test_one_c_below_the_certified_one_is_caught_by_privacy_accounting():
    res = runner.run_spec(tiny_shuffled())
    c_min = res["points"][0]["params"]["C_thm51"]
    v = verdicts(runner.run_spec(tiny_shuffled({"C_thm51": 0.5 * c_min})))     # the fault: half the certified C
    assert v["privacy"] == "fail"


# --- the algorithms, end to end ---------------------------------------------------------------------------------------
def tiny_shuffled(overrides: dict | None = None, **over):
    """sdp_mbsgd shrunk: 400 silos (Thm G.1's M condition holds at R = 200, delta = 1e-3), 10 records, d = 3."""
    return _tiny("sdp_mbsgd", "tiny_shuffled", {"N": 400, "n": 10, "d": 3}, 6,
                 threat_model={"kind": "shuffle", "epsilon": 4.0, "delta": 1e-3},
                 algorithm={"kind": "shuffled_mbsgd", "overrides": {"R": 200} | (overrides or {})}, **over)


def tiny_sdp_acsa(data: dict | None = None, **over):
    return _tiny("sdp_accelerated", "tiny_sdp_acsa", data or {"N": 4, "n": 3000, "d": 3}, 6, **over)


def test_registered():
    assert {"shuffled_mbsgd", "sdp_accelerated_mbsgd"} <= set(ALGORITHMS.names())
    assert ALGORITHMS.get("shuffled_mbsgd").threat_model == ALGORITHMS.get("sdp_accelerated_mbsgd").threat_model == "shuffle"
    for name in ("sdp.thm5_1.privacy", "sdp.thm5_1.convex", "sdp.thm5_1.strongly_convex", "sdp.thm5_2.privacy",
                 "sdp.thm5_2.convex", "sdp.thm5_2.strongly_convex", "sdp.lemma_e3_pvec",
                 "sdp.shuffled_mbsgd.lemma_d6_1", "sdp.shuffled_mbsgd.population_explicit"):
        assert THEOREMS.get(name).threat_model == "shuffle"
    assert float(THEOREMS.get("sdp.thm5_1.convex").exponent("eps0")) == -1.0
    assert float(THEOREMS.get("sdp.thm5_2.convex").exponent("n")) == -0.8


def test_clean_shuffled_run_passes():
    v = verdicts(runner.run_spec(tiny_shuffled()))
    assert v["noise"] == v["privacy"] == "pass"


def test_noise_scaled_inside_the_shuffled_mechanism_is_caught_by_noise_calibration(monkeypatch):
    real = mechanisms.gaussian
    monkeypatch.setattr(mechanisms, "gaussian", lambda clean, sigma, *, rng: real(clean, 0.8 * sigma, rng=rng))
    v = verdicts(runner.run_spec(tiny_shuffled()))
    assert v["noise"] == "fail"
    assert v["privacy"] == "pass"      # the accountant sees the declared sigma


def test_sigma_below_the_certified_one_is_caught_by_privacy_accounting(monkeypatch):
    real = sg.min_sigma
    monkeypatch.setattr(sg, "min_sigma", lambda **kw: 0.8 * real(**kw))     # the fault: 20% less noise than certified
    res = runner.run_spec(tiny_shuffled())
    assert verdicts(res)["privacy"] == "fail"
    row = next(c for c in res["checks"] if c["id"] == "privacy")["rows"][0]
    assert row["epsilon_accountant"] > 4.0


def test_clean_sdp_acsa_passes_its_variance_bound():
    v = verdicts(runner.run_spec(tiny_sdp_acsa(checks=[{"id": "grad_variance", "kind": "bound",
                                                        "theorem": "sdp.lemma_e3_pvec"}])))
    assert v == {"grad_variance": "pass"}


def test_biased_pvec_analyzer_is_caught_by_the_variance_bound(monkeypatch):
    real = shuffle_sum.pvec_analyzer
    # the fault: the analyzer subtracts p b (n - 1) instead of p b n (Alg. 5's "p b n" read with the wrong count,
    # note 004 section 6 item 12): every coordinate of the sum is shifted by (2L/g) p b - L
    monkeypatch.setattr(shuffle_sum, "pvec_analyzer", lambda counts, n, prm: real(counts, n - 1, prm))
    v = verdicts(runner.run_spec(tiny_sdp_acsa(checks=[{"id": "grad_variance", "kind": "bound",
                                                        "theorem": "sdp.lemma_e3_pvec"}])))
    assert v == {"grad_variance": "fail"}


def test_sdp_acsa_privacy_is_accounted_from_the_counts_as_run():
    res = runner.run_spec(tiny_sdp_acsa(data={"N": 4, "n": 1000, "d": 2},
                                        checks=[{"id": "privacy", "kind": "privacy_accounting"}]))
    assert verdicts(res) == {"privacy": "pass"}
    row = next(c for c in res["checks"] if c["id"] == "privacy")["rows"][0]
    assert row["max_record_uses"] == 1 and 0 < row["epsilon_accountant"] < 8.0


def test_pvec_noise_below_the_calibration_in_alg6_is_caught_by_privacy(monkeypatch):
    """The fault: P_vec's p cut to a third in Alg. 6's resolution. The canaries' epsilon still meets the claim (P_vec's
    slack); the privacy check fails because the parameters as run are not Thm 3.2's at the declared target."""
    real = shuffle_sum.thm32

    def less_noise(**kw):
        pv = real(**kw)
        return dataclasses.replace(pv, one_d=dataclasses.replace(pv.one_d, p=pv.one_d.p / 3))

    monkeypatch.setattr(shuffle_sum, "thm32", less_noise)
    res = runner.run_spec(tiny_sdp_acsa(data={"N": 4, "n": 1000, "d": 2},
                                        checks=[{"id": "privacy", "kind": "privacy_accounting"}]))
    row = next(c for c in res["checks"] if c["id"] == "privacy")["rows"][0]
    assert verdicts(res) == {"privacy": "fail"} and "p = " in row["calibration_failed"]

