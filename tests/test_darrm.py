"""Seed 003's DaRRM (catalog/darrm_003.py): the laws and output probabilities (algorithms/darrm.py) against a brute force
over every vote vector, gamma_Sub and gamma_DSub against a brute force over every subsample (Lemma 3.4.1, Thm 3.5.1's
reading), Lemma 3.6.1's corners against the vertices of the feasible region found by intersecting its boundary lines,
the exact epsilon over corner multisets against a brute force over every ordered corner tuple, a closed-form tight
case, the three checks (verifiers/checks/darrm.py) on clean runs, and planted faults in the mechanism and in the
privacy computation."""
from __future__ import annotations

import copy
import itertools
import math

import numpy as np
import pytest
import scipy.optimize

from algorithms import darrm
from catalog import MECHANISMS
from catalog import darrm_003 as cat
from engine.kinds.mechanism import run as mechanism_run
from engine.kinds.mechanism.spec import parse_mechanism
from tests.helpers import raw, verdicts
from verifiers.accountants import darrm_privacy as dp
from verifiers.checks import darrm as checks

TOL = 1e-12


# --------------------------------------------------------------------------------------------------------------
# independent references: every vote vector, every subsample


def brute_vote_law(p: tuple[float, ...]) -> list[float]:
    """Pr[L = l] by summing Pr[S] over every S in {0, 1}^K (independent mechanisms, Problem 3.1.1)."""
    K = len(p)
    terms: list[list[float]] = [[] for _ in range(K + 1)]
    for s in itertools.product((0, 1), repeat=K):
        terms[sum(s)].append(math.prod(pi if si else 1 - pi for pi, si in zip(p, s)))
    return [math.fsum(t) for t in terms]


def brute_darrm_one(p: tuple[float, ...], gamma: np.ndarray) -> float:
    """Pr[DaRRM_gamma = 1] from Algorithm 1 (L865-880) over every vote vector: w.p. gamma(L) the majority, else a coin."""
    K = len(p)
    out = []
    for s in itertools.product((0, 1), repeat=K):
        pr = math.prod(pi if si else 1 - pi for pi, si in zip(p, s))
        L = sum(s)
        out.append(pr * (gamma[L] * (1.0 if 2 * L >= K + 1 else 0.0) + (1 - gamma[L]) / 2))
    return math.fsum(out)


def brute_submaj_one(s: tuple[int, ...], m: int) -> float:
    """Algorithm 8 (SubMaj, L2400-2408) given the votes: a uniform m-subset without replacement, its majority, a tie
    (even m) broken by a fair coin. Pr[output 1]."""
    subsets = list(itertools.combinations(range(len(s)), m))
    tot = []
    for J in subsets:
        ones = sum(s[j] for j in J)
        tot.append(1.0 if 2 * ones > m else 0.5 if 2 * ones == m else 0.0)
    return math.fsum(tot) / len(subsets)


@pytest.mark.parametrize("p", [(0.3,), (0.1, 0.7, 0.55), (0.0, 1.0, 0.2, 0.9, 0.5), (1e-5, 0.2, 0.999, 0.4, 0.6, 0.01, 0.8)])
def test_poisson_binomial_and_output_match_every_vote_vector(p):
    K = len(p)
    law = darrm.poisson_binomial(np.array([p]))[0]
    ref = brute_vote_law(p)
    assert law == pytest.approx(ref, rel=1e-12, abs=1e-300)
    for gam in (darrm.gamma_sub(K, max(1, K // 2)), darrm.gamma_dsub(K, 1), darrm.gamma_const(K, 0.3),
                np.linspace(0, 1, K + 1)):
        assert darrm.prob_one(law[None, :], gam)[0] == pytest.approx(brute_darrm_one(p, gam), abs=TOL)
        err = abs(brute_darrm_one(p, gam) - math.fsum(ref[(K + 1) // 2:]))
        assert darrm.error(law[None, :], gam)[0] == pytest.approx(err, abs=TOL)


def test_count_laws_match_every_vote_vector():
    cs = dp.corners(0.3, 0.01)
    counts = dp.multisets(5, len(cs))
    laws = dp.count_laws(counts, cs[:, 0])
    for row, law in zip(counts[::37], laws[::37]):
        p = tuple(float(cs[j, 0]) for j, c in enumerate(row) for _ in range(c))
        assert law == pytest.approx(brute_vote_law(p), abs=TOL)
    assert counts.shape[0] == math.comb(5 + 7, 7) == dp.n_multisets(5, 0.01)


@pytest.mark.parametrize("K,m", [(5, 1), (5, 2), (5, 3), (7, 4), (7, 5), (7, 7), (3, 2)])
def test_gamma_sub_is_the_majority_of_m_subsampled(K, m):
    """Lemma 3.4.1 (L849-857): DaRRM_gamma_Sub outputs 1 w.p. gamma(l) 1{l > K/2} + (1 - gamma(l))/2 given L = l, which
    must equal SubMaj's probability of 1 given any votes with l ones."""
    w1 = darrm.output_weights(darrm.gamma_sub(K, m))[0]
    for s in itertools.product((0, 1), repeat=K):
        assert w1[sum(s)] == pytest.approx(brute_submaj_one(s, m), abs=TOL)


@pytest.mark.parametrize("K,m", [(5, 1), (5, 2), (7, 2), (7, 3), (9, 3), (5, 3), (7, 6)])
def test_gamma_dsub_is_the_majority_of_2m_minus_1_subsampled(K, m):
    """Thm 3.5.1 (L909-915, read at L919): gamma_DSub is gamma_Sub at 2m - 1 (m <= (K-1)/2), else gamma = 1."""
    w1 = darrm.output_weights(darrm.gamma_dsub(K, m))[0]
    for s in itertools.product((0, 1), repeat=K):
        ref = brute_submaj_one(s, 2 * m - 1) if 2 * m <= K - 1 else (1.0 if 2 * sum(s) > K else 0.0)
        assert w1[sum(s)] == pytest.approx(ref, abs=TOL)


def test_gammas_are_symmetric_in_unit_range_and_refuse_bad_input():
    for g in (darrm.gamma_sub(11, 4), darrm.gamma_dsub(11, 3), darrm.gamma_const(11, 0.2), darrm.gamma_majority(11)):
        assert np.allclose(g, g[::-1], atol=0) and g.min() >= 0 and g.max() <= 1
    with pytest.raises(ValueError):
        darrm.gamma_sub(10, 1)
    with pytest.raises(ValueError):
        darrm.gamma_sub(5, 6)
    with pytest.raises(ValueError):
        darrm.gamma_const(5, 1.5)


# --------------------------------------------------------------------------------------------------------------
# the feasible region's corners and the exact epsilon


def brute_vertices(eps: float, Delta: float) -> set[tuple[float, float]]:
    """The vertices of F: every intersection of two of its 8 boundary lines a p + b p' = c that satisfies all 8."""
    e = math.exp(eps)
    lines = [(1, -e, Delta), (-e, 1, Delta),                           # p <= e p' + D, p' <= e p + D
             (-1, e, e - 1 + Delta), (e, -1, e - 1 + Delta),           # 1-p <= e(1-p') + D, 1-p' <= e(1-p) + D
             (1, 0, 1), (0, 1, 1), (-1, 0, 0), (0, -1, 0)]             # 0 <= p, p' <= 1
    out: set[tuple[float, float]] = set()
    for (a1, b1, c1), (a2, b2, c2) in itertools.combinations(lines, 2):
        det = a1 * b2 - a2 * b1
        if abs(det) < 1e-14:
            continue
        x, y = (c1 * b2 - c2 * b1) / det, (a1 * c2 - a2 * c1) / det
        if all(a * x + b * y <= c + 1e-12 for a, b, c in lines):
            out.add((round(x, 12), round(y, 12)))
    return out


@pytest.mark.parametrize("eps,Delta", [(0.1, 1e-5), (1.0, 0.05), (0.5, 0.0), (2.0, 0.1), (0.1, 0.0)])
def test_corners_are_the_vertices_of_the_feasible_region(eps, Delta):
    mine = {(round(float(a), 12), round(float(b), 12)) for a, b in dp.corners(eps, Delta)}
    assert mine == brute_vertices(eps, Delta)
    assert len(mine) == (8 if Delta > 0 else 4)


@pytest.mark.parametrize("K,eps,Delta,m", [(3, 0.5, 0.02, 1), (3, 1.0, 0.0, 2), (5, 0.3, 0.01, 2), (5, 0.7, 0.0, 3)])
def test_exact_epsilon_is_the_brute_force_maximum_over_every_ordered_corner_tuple(K, eps, Delta, m):
    """Every assignment of a corner to each mechanism (8^K tuples, no multisets), every output and order, the laws by
    brute force over the vote vectors: the largest log((P - delta)/Q) equals exact_epsilon."""
    cs = [tuple(map(float, c)) for c in dp.corners(eps, Delta)]
    delta = 1 - (1 - Delta) ** m
    for gam in (darrm.gamma_sub(K, m), darrm.gamma_dsub(K, m), darrm.gamma_const(K, 0.4)):
        best = 0.0
        for tup in itertools.product(cs, repeat=K):
            P1 = brute_darrm_one(tuple(c[0] for c in tup), gam)
            Q1 = brute_darrm_one(tuple(c[1] for c in tup), gam)
            for P, Q in ((P1, Q1), (Q1, P1), (1 - P1, 1 - Q1), (1 - Q1, 1 - P1)):
                if P - delta > 1e-11 * max(P, delta):
                    best = max(best, math.inf if Q <= 0 else math.log((P - delta) / Q))
        got = dp.exact_epsilon(dp.corner_laws(K, eps, Delta), gam, delta).epsilon
        assert got == pytest.approx(best, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("K,eps,Delta", [(11, 0.1, 1e-5), (7, 1.0, 0.0), (5, 0.5, 0.01)])
def test_gamma_sub_at_m_1_is_exactly_eps(K, eps, Delta):
    """m = 1: DaRRM_gamma_Sub outputs mechanism J's bit, J uniform (Lemma 3.4.1), so Pr[1] = mean p_i; with every
    mechanism at the corner ((e^eps + Delta)/(e^eps + 1), (1 - Delta)/(e^eps + 1)) the loss at delta = Delta is
    log((a - Delta)/b) = eps exactly, and no pair does worse (one (eps, Delta)-DP bit)."""
    got = dp.exact_epsilon(dp.corner_laws(K, eps, Delta), darrm.gamma_sub(K, 1), Delta).epsilon
    assert got == pytest.approx(eps, rel=1e-12)


def test_rr_p_const_is_lemma_b11():
    """Lemma B.1.1 (L2364-2368) written out at Delta = 0 (tau = K, lambda = 0) and at Delta > 0 (lambda = K Delta)."""
    K, m, eps = 11, 3, 0.1
    et, em = math.exp(K * eps), math.exp(m * eps)
    assert dp.rr_p_const(K, m, eps, 0.0, 0.0)[0] == pytest.approx((em - 1) / (2 * (et - em) / (et + 1) + em - 1))
    D, d = 1e-5, 3e-5
    lam = K * D
    ref = (em - 1 + 2 * d) / (2 * (et - em + (1 + em) * lam) / (et + 1) + em - 1)
    assert dp.rr_p_const(K, m, eps, D, d) == pytest.approx((ref, K, lam))
    assert dp.rr_p_const(3, 3, 0.5, 0.0, 0.0)[0] == 1.0               # m = K: no noise needed


def test_random_configurations_lie_in_the_feasible_region_and_never_beat_the_corners():
    rng = np.random.default_rng(np.random.SeedSequence(5))
    p, q = dp.random_configurations(7, 0.4, 0.02, 500, rng)
    assert dp.feasible(p, q, 0.4, 0.02).all()
    laws = dp.corner_laws(7, 0.4, 0.02)
    for gam in (darrm.gamma_sub(7, 2), darrm.gamma_dsub(7, 2), np.linspace(1, 0, 8) ** 2):
        assert dp.interior_epsilon(p, q, gam, 0.03).max() <= dp.exact_epsilon(laws, gam, 0.03).epsilon + 1e-12


def test_iid_grid_is_feasible_and_reaches_thm_3_5_1s_supremum():
    p, q, n_edge = dp.iid_grid(0.2, 0.0, 1000)
    assert dp.feasible(p, q, 0.2, 0.0).all() and 0 < n_edge < p.size
    v, _, _ = dp.iid_epsilon(9, 0.2, 0.0, darrm.gamma_dsub(9, 2), 0.0, 1000)
    assert v == pytest.approx(0.4, rel=1e-6) and v <= 0.4 * (1 + 1e-12)


# --------------------------------------------------------------------------------------------------------------
# the mechanism, its spec and its checks


def _spec(name: str, values: list[int] | None = None, field: str = "m", trials: int = 200, **params):
    r = copy.deepcopy(raw(name))
    r["params"].update(params)
    r["trials"] = trials
    if values is None or len(values) == 1:
        r["sweep"] = None
        if values:
            r["params"][field] = values[0]
    else:
        r["sweep"] = {"field": field, "values": values}
    r["expect"], r["expect_quick"] = {}, {}
    return parse_mechanism(r, "t.yaml")


def _by_id(res: dict) -> dict[str, dict]:
    return {c["id"]: c for c in res["checks"]}


def test_clean_runs_pass_and_cite_their_claims():
    res = mechanism_run.run(_spec("darrm_pure", [1, 3, 6], K=7, iid_points=400))
    assert verdicts(res) == {"privacy": "pass", "thm3_5_1": "pass", "dsub_vs_sub": "pass", "gamma_opt": "pass"}
    by_id = _by_id(res)
    assert by_id["privacy"]["claims"] == list(checks.CLAIMS_PRIVACY)
    assert by_id["thm3_5_1"]["claims"] == ["003 Thm 3.5.1 / B.2.4", "003 Lemma B.2.5", "003 Lemma B.2.10"]
    assert by_id["dsub_vs_sub"]["claims"] == ["003 Lemma B.2.11"]
    assert "L909-915" in by_id["thm3_5_1"]["citation"] and "L849-857" in by_id["privacy"]["citation"]
    bullets, body = cat.report(res)
    assert any("corner" in b for b in bullets) and len([ln for ln in body if ln.startswith("| 1 |")]) == 5
    approx = mechanism_run.run(_spec("darrm_fig32", [1, 4], K=5))
    assert verdicts(approx) == {"privacy": "pass", "dsub_vs_sub": "pass", "gamma_opt": "pass"}


def test_the_amplification_check_is_inapplicable_with_delta_above_zero():
    res = mechanism_run.run(_spec("darrm_pure", [2, 3], K=5, Delta=1e-4, iid_points=200))
    assert verdicts(res)["thm3_5_1"] == "inapplicable"


def test_the_spec_refuses_even_k_m_above_k_and_too_many_multisets():
    with pytest.raises(Exception, match="odd"):
        _spec("darrm_pure", K=10)
    with pytest.raises(Exception, match="at most K"):
        _spec("darrm_pure", K=5, m=7)
    with pytest.raises(Exception, match="corner multisets"):
        _spec("darrm_fig32", K=31)
    assert MECHANISMS.get("darrm").checks is checks.DARRM_CHECKS


def test_plain_majority_in_place_of_gamma_sub_is_caught_by_darrm_privacy(monkeypatch):
    """The fault in the mechanism: gamma_Sub replaced by gamma = 1 (the plain majority of all K, no noise)."""
    spec = _spec("darrm_pure", [2, 3], K=7, iid_points=200)
    assert verdicts(mechanism_run.run(spec))["privacy"] == "pass"
    monkeypatch.setattr(darrm, "gamma_sub", lambda K, m: np.ones(K + 1))
    res = mechanism_run.run(spec)
    assert verdicts(res)["privacy"] == "fail"
    assert "exact epsilon" in _by_id(res)["privacy"]["summary"] and "> claimed" in _by_id(res)["privacy"]["summary"]
    approx = mechanism_run.run(_spec("darrm_fig32", [3], K=7))       # Delta > 0: the majority is not even (., delta)-DP
    assert verdicts(approx)["privacy"] == "fail"


def test_randomized_response_at_the_majority_is_caught_by_darrm_privacy(monkeypatch):
    """The fault in the calibration: RR's p_const = 1 instead of Lemma B.1.1's."""
    monkeypatch.setattr(dp, "rr_p_const", lambda K, m, eps, Delta, delta: (1.0, float(K), K * Delta))
    res = mechanism_run.run(_spec("darrm_pure", [2], K=7, iid_points=200))
    assert verdicts(res)["privacy"] == "fail" and "const: exact epsilon" in _by_id(res)["privacy"]["summary"]


def test_a_corner_set_missing_the_worst_corners_is_caught_by_the_cross_check(monkeypatch):
    """The fault in the privacy computation: Lemma 3.6.1's corners without the two interior ones
    ((e^eps + Delta)/(e^eps + 1), (1 - Delta)/(e^eps + 1)) and its swap: the random configurations then beat the
    corner maximum, which darrm_privacy reports as a failure (the claims themselves still look met)."""
    real = dp.corners
    monkeypatch.setattr(dp, "corners", lambda eps, Delta: real(eps, Delta)[:-2])
    res = mechanism_run.run(_spec("darrm_fig32", [1, 3], K=5, trials=300))
    assert verdicts(res)["privacy"] == "fail"
    assert "the corners miss a worse configuration" in _by_id(res)["privacy"]["summary"]


def test_a_larger_subsample_in_gamma_dsub_is_caught_by_darrm_amplification(monkeypatch):
    """The fault in the mechanism: gamma_DSub built from 2m + 1 subsampled mechanisms instead of 2m - 1."""
    spec = _spec("darrm_pure", [1, 2], K=9, iid_points=400)
    assert verdicts(mechanism_run.run(spec))["thm3_5_1"] == "pass"
    real = darrm.gamma_dsub
    monkeypatch.setattr(darrm, "gamma_dsub", lambda K, m: real(K, m + 1))
    res = mechanism_run.run(spec)
    assert verdicts(res)["thm3_5_1"] == "fail"
    assert "i.i.d. epsilon" in _by_id(res)["thm3_5_1"]["summary"]


def test_a_shrunk_gamma_dsub_is_caught_by_darrm_utility(monkeypatch):
    """The fault in the mechanism: gamma_DSub at 0.9 of its value (more noise: more private, but below gamma_Sub in
    places, so its error exceeds gamma_Sub's at some p)."""
    spec = _spec("darrm_pure", [2, 3], K=7, iid_points=200)
    real = darrm.gamma_dsub
    monkeypatch.setattr(darrm, "gamma_dsub", lambda K, m: 0.9 * real(K, m))
    res = mechanism_run.run(spec)
    assert verdicts(res)["dsub_vs_sub"] == "fail"
    assert "gamma_DSub below gamma_Sub" in _by_id(res)["dsub_vs_sub"]["summary"]


# --------------------------------------------------------------------------------------------------------------
# the LP's gamma_opt


def test_lp_rows_are_lemma_3_4_4s_privacy_cost_of_the_output_law():
    """Each LP row times gamma's upper half equals f = 2 (Pr[1 | D] - e^{m eps} Pr[1 | D']) + e^{m eps} - 1 (Lemma
    3.4.4's privacy cost, rewritten through Algorithm 1's output law), at every corner multiset."""
    K, m, eps, Delta = 7, 2, 0.3, 0.01
    laws = dp.corner_laws(K, eps, Delta)
    em = math.exp(m * eps)
    rows = dp.constraint_rows(laws, K, em)
    rng = np.random.default_rng(0)
    for _ in range(3):
        half = rng.random((K + 1) // 2)
        gam = np.concatenate([half, half[::-1]])
        f = 2 * (darrm.prob_one(laws.alpha, gam) - em * darrm.prob_one(laws.alpha_p, gam)) + em - 1
        assert rows @ gam[(K + 1) // 2:] == pytest.approx(f, abs=1e-13)


def test_prior_weights_are_the_integral_over_the_uniform_prior():
    """E over p_i i.i.d. U[0.5, 1] of alpha_l, by numerical integration of the Poisson binomial law (K = 3: a
    tensor-product midpoint rule on 60^3 points), against Bin(K, 0.75)."""
    K, n = 3, 60
    grid = 0.5 + (np.arange(n) + 0.5) * 0.5 / n
    P = np.stack(np.meshgrid(grid, grid, grid, indexing="ij"), axis=-1).reshape(-1, K)
    mean = darrm.poisson_binomial(P).mean(axis=0)
    c = dp.prior_weights(K)
    assert c == pytest.approx([mean[2] - mean[1], mean[3] - mean[0]], abs=1e-4)


def test_gamma_opt_is_private_and_beats_the_baselines_and_is_gamma_sub_at_m_1():
    K, eps, Delta = 9, 0.2, 1e-4
    laws = dp.corner_laws(K, eps, Delta)
    c = dp.prior_weights(K)
    for m in (1, 2, 3):
        delta = 1 - (1 - Delta) ** m
        opt = dp.optimal_gamma(laws, K, m, eps, delta)
        assert dp.exact_epsilon(laws, opt.gamma, delta).epsilon <= m * eps * (1 + 1e-9)
        sub = dp.prior_error(darrm.gamma_sub(K, m), c)
        assert dp.prior_error(opt.gamma, c) <= sub + 1e-9
        if m == 1:
            assert dp.prior_error(opt.gamma, c) == pytest.approx(sub, abs=1e-9)
            assert opt.gamma == pytest.approx(darrm.gamma_sub(K, 1), abs=1e-6)


def test_an_lp_with_half_its_rows_or_a_flipped_objective_is_caught_by_darrm_optimal(monkeypatch):
    """Faults in the LP: every other corner row dropped (gamma_opt is then not private), or the objective's sign
    flipped (gamma_opt then maximises the error)."""
    spec = _spec("darrm_fig32", [2, 3], K=7)
    assert verdicts(mechanism_run.run(spec))["gamma_opt"] == "pass"
    real_rows = dp.constraint_rows
    with monkeypatch.context() as m:
        m.setattr(dp, "constraint_rows", lambda laws, K, em: real_rows(laws, K, em)[::2])
        res = mechanism_run.run(spec)
        assert verdicts(res)["gamma_opt"] == "fail"
        assert "gamma_opt's exact epsilon" in _by_id(res)["gamma_opt"]["summary"]
    real_lp = scipy.optimize.linprog
    with monkeypatch.context() as m:
        m.setattr(scipy.optimize, "linprog", lambda c, *a, **kw: real_lp(-np.asarray(c), *a, **kw))
        res = mechanism_run.run(spec)
        assert verdicts(res)["gamma_opt"] == "fail"
        assert "prior error" in _by_id(res)["gamma_opt"]["summary"]


def test_the_optimal_check_is_inapplicable_without_an_lp():
    res = mechanism_run.run(_spec("darrm_fig32", [2, 3], K=5, lp=0))
    assert verdicts(res)["gamma_opt"] == "inapplicable"
