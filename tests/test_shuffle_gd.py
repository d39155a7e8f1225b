"""Seed 000's P_GD (Algorithm 5, algorithms/shuffle_gd.py): its schedule, every user in every round, the descent
and output corrections, the accounting over T calls (verifiers/accountants/binomial_bucketed.py), Lemma B.6's advanced
composition, and two planted faults with the check that catches each."""
from __future__ import annotations

import copy
import dataclasses
import math
import time

import mpmath
import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from algorithms import losses, mechanisms, shuffle_gd, shuffle_sum
from algorithms.data import Records, make_sphere_linear
from algorithms.events import ShuffleSumRelease
from catalog import ALGORITHMS
from engine.kinds.learning import problem, runner
from engine.kinds.learning import spec as spec_mod
from tests.helpers import raw, verdicts
from verifiers.accountants import binomial_bucketed, binomial_privacy, composition, pvec
from verifiers.theorems import shuffle_000_gd


def _consts(n=2000, d=10, eps=1.0, delta=1e-6, L=1.5, D=2.0, beta=0.1):
    return {"n": n, "d": d, "eps0": eps, "delta0": delta, "L": L, "D": D, "beta": beta, "mu": 0.0, "N": 1, "M": 1.0,
            "Delta": 0.0125, "risk_max": 0.1125}


# --- the schedule -------------------------------------------------------------------------------------------
def test_schedule_matches_hand_values():
    # n = 2000, d = 10, eps = 1, delta = 1e-6: ln(nd/delta) = ln(2e10) = 23.718998, squared 562.5909;
    # eps^2 n^2 / (d ln^2) = 4e6 / 5625.909 = 710.99 -> T = 710 (< n)
    res = ALGORITHMS.get("shuffle_gd").resolve(_consts(), "standard", {})
    p = res.params
    assert p["T"] == p["R"] == 710
    # eps/(2 sqrt(2 T ln(1/delta))) = 1/(2 sqrt(2 * 710 * 13.815511)) = 1/(2 * 140.0644) = 0.00356979
    assert p["eps_round"] == pytest.approx(0.00356979, rel=1e-5)
    assert p["delta_round"] == pytest.approx(1e-6 / 711, rel=1e-12)
    # eta = D/(L sqrt T) = 2/(1.5 * 26.645825) = 0.0500394
    assert p["eta"] == pytest.approx(0.0500394, rel=1e-5)
    assert p["K"] == 2000 and p["thm49_parameters"] == 1
    # P_VEC on all n users at the per-round target: g = ceil(2 L sqrt(n)) = ceil(134.16) = 135
    assert p["g"] == 135
    assert p["sigma2"] == pytest.approx(10 * (3 / 135) ** 2 * (2000 / 4 + 2000 * p["b_binom"] * p["p"]) / 2000**2)
    # eps = 4: eps^2 n^2/(d ln^2) = 11376 > n, so T = n
    assert ALGORITHMS.get("shuffle_gd").resolve(_consts(eps=4.0), "standard", {}).params["T"] == 2000
    # the corrections are in the provenance, so the report shows them
    assert p["update_sign"] == -1 and res.provenance["update_sign"].startswith("CORRECTION")
    assert p["output_first_index"] == 0 and res.provenance["output_first_index"].startswith("CORRECTION")


def test_thm49_moreau_beta_for_a_nonsmooth_loss():
    c = _consts(beta=math.inf)
    p = ALGORITHMS.get("shuffle_gd").resolve(c, "standard", {}).params
    want = 1.5 / 2.0 * min(math.sqrt(2000), 2000 / (math.sqrt(10) * math.log(2e10) ** 1.5))
    assert p["beta_s"] == pytest.approx(want) and p["beta"] == pytest.approx(want)


# --- the run --------------------------------------------------------------------------------------------------
def _records(n=50, d=4, trials=3, seed=0):
    pop = make_sphere_linear(np.random.default_rng(seed), d=d, N=1, radius=1.0, label_noise=0.1, w_norm=0.5,
                             heterogeneity=0.0, mu=0.0, diameter=2.0)
    return pop, Records(pop, np.random.default_rng(seed + 1), trials, n, materialise=True)


def test_every_user_joins_every_round_with_its_clipped_gradient_at_the_current_point(monkeypatch):
    pop, rec = _records()
    T, n, L = 7, 50, 0.8 * pop.L                 # L below the loss's constant: the clip acts on some gradients
    pv = shuffle_sum.thm32(n=n, d=4, eps=0.01, delta=1e-7, Delta2=L)
    calls, points = [], []
    real_project = mechanisms.project_ball

    def spy_project(w, radius):
        out = real_project(w, radius)
        points.append(out.copy())
        return out

    def spy_release(g):
        calls.append(g.copy())
        return g.sum(axis=1)

    monkeypatch.setattr(mechanisms, "project_ball", spy_project)
    out = shuffle_gd.run(rec, losses.Squared(), T=T, eta=0.1, L=L, radius=1.0, pvec=pv, rng=np.random.default_rng(2),
                         release=spy_release)
    assert len(calls) == T
    queried = [np.zeros((3, 4))] + points[:-1]            # theta_0 = 0, then each round's projected step
    X, y = rec.X[:, 0], rec.y[:, 0]
    for g, w in zip(calls, queried):
        assert g.shape == (3, n, 4)                         # all n users, every round
        full = (np.einsum("tnd,td->tn", X, w) - y)[..., None] * X
        norms = np.linalg.norm(full, axis=-1, keepdims=True)
        np.testing.assert_allclose(g, full * np.minimum(1, L / norms), atol=1e-12)
    assert np.linalg.norm(calls[0], axis=-1).max() <= L * (1 + 1e-12)
    # the output is the average of the T queried points theta_0 .. theta_{T-1} (the index correction)
    np.testing.assert_allclose(out.w, np.mean(queried, axis=0), atol=1e-12)
    assert (out.record_uses == T).all() and (out.extra["min_record_uses"] == T).all()
    ev = out.events[0]
    assert ev.max_record_uses == ev.rounds == T and ev.users_per_call == n
    assert ev.call_epsilon is None


def test_noiseless_steps_descend():
    """The sign correction: with an exact sum in place of P_VEC the iterates descend to the empirical optimum."""
    pop, rec = _records(n=200, trials=2)
    pv = shuffle_sum.thm32(n=200, d=4, eps=0.01, delta=1e-7, Delta2=pop.L)
    out = shuffle_gd.run(rec, losses.Squared(), T=400, eta=2.0, L=pop.L, radius=1.0, pvec=pv,
                         rng=np.random.default_rng(3), release=lambda g: g.sum(axis=1))
    w0 = pop.excess_risk(np.zeros(4))
    assert (pop.excess_risk(out.w) < 0.1 * w0).all()


# --- accounting over T calls ------------------------------------------------------------------------------
def _event(n, d, eps, delta, L, uses):
    T = shuffle_gd.rounds(n=n, d=d, eps=eps, delta=delta)
    er, dr = shuffle_gd.per_round(eps=eps, delta=delta, T=T)
    pv = shuffle_sum.thm32(n=n, d=d, eps=er, delta=dr, Delta2=L)
    return ShuffleSumRelease(users_per_call=n, dimension=d, grid=pv.one_d.g, trials_per_user=pv.one_d.b,
                             p=pv.one_d.p, Delta2=L, rounds=uses, max_record_uses=uses, call_epsilon=er,
                             call_delta=dr), T


def test_bucketed_pld_matches_the_tabulated_one_and_stays_above_the_exact_epsilon():
    pv = shuffle_sum.thm32(n=10, d=10, eps=2.0, delta=1e-6, Delta2=1.0)
    m, p, g = 10 * pv.one_d.b, pv.one_d.p, pv.one_d.g
    pair = binomial_privacy.Pair(0.0, float(g))
    exact = binomial_privacy.exact_epsilon(m, p, pair, 1e-6)
    one = binomial_bucketed.epsilon(m, p, {pair: 1}, 1e-6)
    assert exact <= one <= 1.06 * exact                    # pessimistic, and within its 5% rounding allowance
    for coarse in (0.2, 0.5, 1.0):                           # however coarse the buckets, never below the exact value
        assert exact <= binomial_bucketed.epsilon(m, p, {pair: 1}, 1e-6, rel_error=coarse)
    big = binomial_privacy.Pair(0.0, 100.0)                  # a case a sign error in the losses put below the truth
    assert binomial_privacy.exact_epsilon(10**6, 0.3, big, 1e-6) <= binomial_bucketed.epsilon(
        10**6, 0.3, {big: 1}, 1e-6, rel_error=0.5)
    for pairs in binomial_privacy.pvec_canaries(10, g).values():
        tab = binomial_privacy.pld_epsilon(m, p, pairs * 3, 1e-6)
        new = binomial_bucketed.epsilon(m, p, {pairs[0]: 3 * len(pairs)}, 1e-6)
        assert 0.99 * tab <= new <= 1.06 * tab


def test_accounting_grows_with_the_calls_each_user_joins_and_is_fast():
    eps = []
    for uses in (1, 10, 100):
        e, _ = _event(1000, 10, 1.0, 1e-6, 1.5, uses)
        eps.append(pvec.shuffle_sum_epsilon(e, 1e-6))
    assert eps[0] < eps[1] < eps[2]
    # n b ~ 6 x 10^15 trials: the counts are Gaussian to high accuracy, so the composition must match the Gaussian
    # mechanism with mu = sqrt(T) g / sd (exact hockey-stick); eps grows faster than sqrt(T) here because at
    # mu ~ 1e-5 the delta = 1e-6 is not yet in its tail
    sd = math.sqrt(e.users_per_call * e.trials_per_user * e.p * (1 - e.p))
    for uses, got in zip((1, 10, 100), eps):
        mu = math.sqrt(uses) * e.grid / sd
        want = brentq(lambda x: norm.cdf(-x / mu + mu / 2) - math.exp(x) * norm.cdf(-x / mu - mu / 2) - 1e-6, 0, 1)
        assert want * (1 - 5e-3) <= got <= want * 1.06    # pessimistic rounding: at most 5% above (rel_error)
    # at the shipped spec's size: n = 2000, T = 710 calls of binomials with 5 x 10^16 trials
    e, T = _event(2000, 10, 1.0, 1e-6, 1.5, 0)
    e = ShuffleSumRelease(**{**e.__dict__, "rounds": T, "max_record_uses": T})
    t0 = time.perf_counter()
    composed = pvec.shuffle_sum_epsilon(e, 1e-6)
    assert time.perf_counter() - t0 < 30
    assert 0 < composed < 1e-3
    table = pvec.per_call_table(e, 1e-6)
    assert table["eps_per_call_accountant"] < composed < table["eps_adv_composition_of_accountant_per_call"]
    assert table["eps_adv_composition_of_paper_per_call"] <= 1.0


# --- Lemma B.6's advanced composition ---------------------------------------------------------------------
def test_advanced_composition_is_drv_thm_iii_3():
    mpmath.mp.dps = 40
    for eps, delta, k, dp in ((0.01, 1e-9, 100, 1e-6), (0.5, 0.0, 7, 0.1), (1e-4, 1e-12, 10**6, 1e-8)):
        want = mpmath.sqrt(2 * k * mpmath.log(1 / mpmath.mpf(dp))) * eps + k * eps * (mpmath.e ** mpmath.mpf(eps) - 1)
        got, d_tot = composition.advanced_composition(eps, delta, k, dp)
        assert got == pytest.approx(float(want), rel=1e-12)
        assert d_tot == pytest.approx(k * delta + dp, rel=1e-12)


def test_lemma_b6_composition_claim():
    for eps in (0.1, 1.0, 4.0, 15.0):
        for T in (1, 10, 710, 10**4, 10**6):
            e_tot, d_tot = shuffle_000_gd.lemma_b6_composition(eps, 1e-6, T)
            assert e_tot <= eps and d_tot == pytest.approx(1e-6, rel=1e-12)
    # the claim needs ln((T+1)/delta) <~ 4 ln(1/delta): with a large delta and many rounds it breaks
    e_tot, _ = shuffle_000_gd.lemma_b6_composition(1.0, 0.4, 1000)
    assert e_tot > 1.0


# --- planted faults -------------------------------------------------------------------------------------
def _tiny(**over) -> spec_mod.Spec:
    r = copy.deepcopy(raw("shuffle_gd"))
    r["data"].update({"n": 300, "d": 5})
    r.update(trials=3, sweep=None, expect={}, expect_quick={})
    r["checks"] = [c for c in r["checks"] if c["kind"] != "rate"]
    r.update(over)
    return spec_mod.parse(r, "tiny_shuffle_gd")


def test_clean_tiny_run_passes_privacy():
    res = runner.run_spec(_tiny())
    assert verdicts(res)["privacy"] == "pass"
    row = next(c for c in res["checks"] if c["id"] == "privacy")["rows"][0]
    assert row["max_record_uses"] == row["rounds"] == 40          # T = min(300, 9e4/(5 ln^2(1.5e9))) = 40


def test_noise_below_calibration_is_caught_by_the_privacy_check(monkeypatch):
    real = shuffle_sum.thm32

    def thinner(**kw):                                  # the fault: P_VEC's p divided by 3
        pv = real(**kw)
        one = pv.one_d
        return shuffle_sum.PVecParams(shuffle_sum.P1DParams(g=one.g, b=one.b, p=one.p / 3, Delta=one.Delta),
                                      pv.Delta2, pv.eps_hat, pv.delta_hat)

    monkeypatch.setattr(shuffle_sum, "thm32", thinner)
    res = runner.run_spec(_tiny())
    chk = next(c for c in res["checks"] if c["id"] == "privacy")
    assert chk["verdict"] == "fail"
    row = chk["rows"][0]
    assert "p = " in row["calibration_failed"]
    # the canaries alone stay far below the claim (P_VEC's ~1000x slack): the calibration is what catches it
    assert row["epsilon_accountant"] < 0.01 * row["epsilon_target"]


def _lemma_b4_tiny(**over) -> spec_mod.Spec:
    r = copy.deepcopy(raw("shuffle_gd_lemma_b4"))
    r["data"].update({"n": 1000})
    r["algorithm"]["overrides"]["T"] = 2000
    r.update(trials=3, sweep=None, expect={}, expect_quick={})
    r.update(over)
    return spec_mod.parse(r, "tiny_shuffle_gd_lemma_b4")


def test_biased_estimator_is_caught_by_lemma_b4(monkeypatch):
    spec = _lemma_b4_tiny()
    clean = runner.run_spec(spec)
    assert verdicts(clean)["lemma_b4"] == "pass"
    prob = problem.build(spec, runner.problem_seed(spec.seed), np.random.default_rng(0))
    u = prob.population.w_opt / np.linalg.norm(prob.population.w_opt)
    real = shuffle_sum.pvec

    def biased(x, prm, rng):                            # the fault: E[estimate] = sum + n * 2L u, pointing uphill
        return real(x, prm, rng) + x.shape[-2] * 2 * prm.Delta2 * u

    monkeypatch.setattr(shuffle_sum, "pvec", biased)
    res = runner.run_spec(spec)
    chk = next(c for c in res["checks"] if c["id"] == "lemma_b4")
    assert chk["verdict"] == "fail"
    assert chk["rows"][0]["lcl"] > chk["rows"][0]["bound"]


def test_fkt_groups_are_disjoint_and_chained():
    """Lemma B.7's reduction (variant fkt): k disjoint groups in turn, each group's T calls see only its members,
    each group starts at the previous group's output, and a user joins only its own group's T calls."""
    pop, rec = _records()
    n, T, k = 50, 3, 2
    size = n // k
    pv = shuffle_sum.thm32(n=size, d=4, eps=0.01, delta=1e-7, Delta2=pop.L)
    calls = []

    def spy_release(g):
        calls.append(g.copy())
        return g.sum(axis=1)

    out = shuffle_gd.run(rec, losses.Squared(), T=T, eta=0.1, L=pop.L, radius=1.0, pvec=pv,
                         rng=np.random.default_rng(2), release=spy_release, groups=k)
    assert len(calls) == k * T and all(g.shape == (3, size, 4) for g in calls)
    X = rec.X[:, 0]
    for j, g in enumerate(calls[1:], start=1):               # the gradients of group j // T's members only: a squared
        members = X[:, (j // T) * size:(j // T + 1) * size]  # loss's gradient (<w,x> - y) x is parallel to its x
        cos = np.abs(np.einsum("tnd,tnd->tn", g, members)) / (np.linalg.norm(g, axis=-1) * np.linalg.norm(members, axis=-1))
        np.testing.assert_allclose(cos, 1.0, atol=1e-9)
    # group 2 starts where group 1 ended: run group 1 alone, then group 2 from its output
    first = shuffle_gd.run(rec, losses.Squared(), T=T, eta=0.1, L=pop.L, radius=1.0, pvec=pv,
                           rng=np.random.default_rng(2), release=lambda g: g.sum(axis=1), groups=1)
    assert not np.allclose(first.w, out.w)
    assert (out.record_uses == T).all() and (out.extra["min_record_uses"] == T).all()
    ev = out.events[0]
    assert ev.users_per_call == size and ev.max_record_uses == T and ev.rounds == k * T
    c = {"n": 2000.0, "d": 10.0, "L": 2.6, "D": 2.0, "beta": 1.0, "eps0": 1.0, "delta0": 1e-6, "mu": 0.1}
    res = ALGORITHMS.get("shuffle_gd").resolve(c, "fkt", {})
    assert res.params["groups"] == math.ceil(math.log2(math.log2(2000))) == 4 and res.params["K"] == 500
    assert res.params["T"] == shuffle_gd.rounds(n=500, d=10, eps=1.0, delta=1e-6)


def test_a_single_call_calibrated_above_the_claim_is_not_covered():
    """P_VEC calibrated for eps = 20 where the run claims 1 (e.g. the eps_round override at T = 1): the canary
    accountant still gives a small epsilon (the canaries are lower bounds), so the calibration must catch it; a run
    that declares no calibration target is not covered either."""
    pv = shuffle_sum.thm32(n=2000, d=10, eps=20.0, delta=1e-6, Delta2=1.0)
    one = pv.one_d
    e = ShuffleSumRelease(users_per_call=2000, dimension=10, grid=one.g, trials_per_user=one.b, p=one.p, Delta2=1.0,
                          rounds=1, max_record_uses=1, call_epsilon=20.0, call_delta=1e-6)
    assert any("> the claim" in f for f in pvec.calibration_failures(e, 1.0, 1e-6))
    assert pvec.calibration_failures(dataclasses.replace(e, call_epsilon=1.0), 1.0, 1e-6) != []  # p is eps 20's
    bare = dataclasses.replace(e, call_epsilon=None, call_delta=None)
    assert pvec.calibration_failures(bare, 1.0, 1e-6)
