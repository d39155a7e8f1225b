"""DaRRM's LP by constraint generation (verifiers/accountants/darrm_lp.py) against the full LP over every corner
multiset (verifiers/accountants/darrm_privacy.py's ``optimal_gamma``, HiGHS) at K = 11 with Delta > 0 and under pure
DP: the same prior error, and exactly private over every multiset (the exact epsilon of darrm_privacy, an independent
computation of the output law); the blocked scan against the rows built explicitly; the compositions against
itertools; the memory guard."""
from __future__ import annotations

import copy
import itertools
import math
import time

import numpy as np
import pytest

from algorithms import darrm
from engine.kinds.mechanism import run as mechanism_run
from engine.kinds.mechanism.spec import parse_mechanism
from tests.helpers import raw, verdicts
from verifiers.accountants import darrm_lp as cg
from verifiers.accountants import darrm_privacy as dp
from verifiers.checks.base import EXACT_REL_SLACK

REL = 1e-7          # HiGHS's feasibility tolerance: two LP solutions of one problem agree in objective to this


def _delta(m: int, Delta: float) -> float:
    return float(-math.expm1(m * math.log1p(-Delta)))


@pytest.mark.parametrize("n,g", [(0, 3), (5, 1), (6, 4), (7, 3)])
def test_compositions_are_every_vector_summing_to_n(n, g):
    got = {tuple(r) for r in cg.compositions(n, g)}
    ref = {c for c in itertools.product(range(n + 1), repeat=g) if sum(c) == n}
    assert got == ref and len(cg.compositions(n, g)) == math.comb(n + g - 1, g - 1)


def test_group_laws_are_the_count_laws():
    cs = dp.corners(0.3, 1e-3)
    counts = dp.multisets(5, cs.shape[0])
    np.testing.assert_allclose(cg.group_laws(counts, cs[:, 0]), dp.count_laws(counts, cs[:, 0]), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("Delta", [1e-5, 0.0])
def test_the_scan_finds_the_maximum_of_the_explicit_rows(Delta):
    K, m, eps = 9, 2, 0.2
    laws = dp.corner_laws(K, eps, Delta)
    em = math.exp(m * eps)
    gamma = np.random.default_rng(1).random((K + 1) // 2)
    full = np.concatenate([gamma[::-1], gamma])
    rows = dp.constraint_rows(laws, K, em) @ gamma
    threshold = float(np.quantile(rows, 0.98))
    sc = cg.scan(cg.groups(dp.corners(eps, Delta), K), full, em, threshold, 5)
    assert sc.multisets == laws.counts.shape[0]
    assert sc.worst.value == pytest.approx(rows.max(), rel=1e-12)
    top = np.sort(rows[rows > threshold])[::-1][:5]
    np.testing.assert_allclose([v.value for v in sc.top], top, rtol=1e-12)
    i = int(np.argmax(rows))
    assert sc.worst.counts == tuple(int(c) for c in laws.counts[i]) or rows[i] == pytest.approx(sc.worst.value)


@pytest.mark.parametrize("m,Delta", [(1, 1e-5), (3, 1e-5), (5, 1e-5), (3, 0.0), (7, 0.0)])
def test_constraint_generation_equals_the_full_lp_at_k_11(m, Delta):
    K, eps = 11, 0.1
    delta = _delta(m, Delta)
    laws = dp.corner_laws(K, eps, Delta)
    full = dp.optimal_gamma(laws, K, m, eps, delta)
    got = cg.optimal_gamma_cg(K, m, eps, Delta, delta)
    w = dp.prior_weights(K)
    assert dp.prior_error(got.gamma, w) == pytest.approx(dp.prior_error(full.gamma, w), rel=REL, abs=1e-12)
    exact = dp.exact_epsilon(laws, got.gamma, delta).epsilon
    assert exact <= m * eps * (1 + EXACT_REL_SLACK)      # the two computations round differently (~1e-11)
    assert got.max_f <= got.rhs * (1 + 1e-12) and got.working_rows < laws.counts.shape[0]
    np.testing.assert_allclose(got.gamma, got.gamma[::-1])


def test_a_working_set_left_incomplete_is_not_private():
    """Stopping after the first round (one batch of rows) leaves rows violated: the scan sees it, and the exact
    epsilon of darrm_privacy confirms it (the guard that the loop's stopping rule is what makes it private)."""
    K, m, eps, Delta = 11, 3, 0.1, 1e-5
    delta = _delta(m, Delta)
    cs = dp.corners(eps, Delta)
    gr = cg.groups(cs, K)
    em = math.exp(m * eps)
    rhs = em - 1 + 2 * delta
    first = cg.scan(gr, np.ones(K + 1), em, rhs, 3)
    A = cg.rows_of(cs, K, em, [v.counts for v in first.top])
    x, _ = cg._solve(A, rhs, dp.prior_weights(K))
    gamma = cg.full_gamma(x, K)
    assert cg.scan(gr, gamma, em, rhs, 1).worst.value > rhs * (1 + 1e-6)
    assert dp.exact_epsilon(dp.corner_laws(K, eps, Delta), gamma, delta).epsilon > m * eps * (1 + 1e-6)


def test_the_cache_is_refused_before_allocation():
    with pytest.raises(ValueError, match="cached law entries"):
        cg.groups(dp.corners(0.1, 1e-5), 61)          # 135 M entries
    assert cg.cache_entries(35, 8) < cg.MAX_CACHE


def test_a_scan_missing_the_middle_corners_is_caught_by_lp_large_k(monkeypatch):
    """Constraint generation over a corner set without Lemma 3.6.1's two middle corners ((e^eps + Delta)/(e^eps + 1),
    ...) finds gamma = 1 feasible; the i.i.d. and random-configuration judges (darrm_privacy's own corners and laws)
    see the plain majority's loss above m eps."""
    real = dp.corners
    monkeypatch.setattr(cg, "corners", lambda eps, Delta: real(eps, Delta)[:-2])
    r = copy.deepcopy(raw("darrm_lp_k101"))
    r["params"].update({"K": 21, "m": 3})
    r.pop("sweep")
    r["trials"] = 200
    r.pop("expect")
    res = mechanism_run.run(parse_mechanism(r, "darrm_lp_k101.yaml"))
    assert verdicts(res) == {"gamma_opt": "fail"} and "loss" in res["checks"][0]["summary"]


@pytest.mark.slow
def test_k35_with_delta_is_solved_and_private_in_minutes():
    """Table B.1's K = 35 with Delta > 0 (26,978,328 multisets): solved, every row within the budget (the scan), the
    i.i.d. judge within m eps, no worse than gamma_Sub."""
    K, m, eps, Delta = 35, 3, 0.1, 1e-5
    delta = _delta(m, Delta)
    t0 = time.perf_counter()
    got = cg.optimal_gamma_cg(K, m, eps, Delta, delta)
    assert time.perf_counter() - t0 < 600 and got.multisets == math.comb(K + 7, 7)
    assert got.max_f <= got.rhs * (1 + 1e-12)
    assert dp.iid_epsilon(K, eps, Delta, got.gamma, delta, 2000)[0] <= m * eps * (1 + EXACT_REL_SLACK)
    w = dp.prior_weights(K)
    assert dp.prior_error(got.gamma, w) <= dp.prior_error(darrm.gamma_sub(K, m), w)
