"""Seed 002's element-level heavy hitters and clipped histogram (algorithms/element.py, verifiers/accountants/
element_privacy.py, verifiers/checks/element.py, catalog/element_002.py): the numerics against brute force, the
exact Gaussian figures against dp-accounting, sensitivities on hand-built pairs, and planted faults each caught by a
named check."""
from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld

from algorithms import element as el
from catalog import MECHANISMS
from catalog import element_002 as cat
from engine import kinds
from engine.specbase import SpecError
from verifiers.accountants import element_privacy as ep
from verifiers.checks import element as checks
from verifiers.threat_models import Neighbouring


class Check:
    def __init__(self, kind: str, confidence: float = 0.999):
        self.id, self.kind, self.confidence = kind, kind, confidence


def test_clip_blocks_matches_a_loop():
    rng = np.random.default_rng(0)
    cluster = el.partition(23, 5, contiguous=False)
    x = rng.integers(0, 9, size=(7, 23)).astype(float)
    got = el.clip_blocks(x, cluster, 4.0)
    for row, g in zip(x, got):
        for k in range(5):
            block = row[cluster == k]
            norm = np.linalg.norm(block)
            want = block * min(1.0, 4.0 / norm) if norm > 0 else block
            assert np.allclose(g[cluster == k], want)
            assert np.linalg.norm(g[cluster == k]) <= 4.0 + 1e-12


def test_draw_users_totals_and_law():
    mdl = el.model(d=50, K=5, s=1.0, m=30, contiguous=True)
    x = el.draw_users(np.random.default_rng(1), mdl, 20000)
    assert np.all(x.sum(axis=1) == 30)
    se = np.sqrt(30 * mdl.p * (1 - mdl.p) / 20000)
    assert np.all(np.abs(x.mean(axis=0) - 30 * mdl.p) < 5 * se)


def test_misordered_matches_brute_force():
    rng = np.random.default_rng(2)
    p = np.sort(rng.dirichlet(np.ones(9)))[::-1]
    h = rng.normal(size=(4, 9))
    for gamma in (0.0, 0.02, 0.1):
        want = [sum(1 for j, k in itertools.combinations(range(9), 2) if p[j] - p[k] >= gamma and row[j] < row[k])
                for row in h]
        assert el.misordered(h, p, gamma).tolist() == want
        assert el.separated_pairs(p, gamma) == sum(1 for j, k in itertools.combinations(range(9), 2)
                                                   if p[j] - p[k] >= gamma)


def test_max_block_energy_brute_force():
    for m, K, rho in ((7, 3, 2.5), (6, 2, 10.0), (9, 4, 1.5), (5, 1, 3.0)):
        best = 0.0
        for a in itertools.product(range(m + 1), repeat=K):
            if sum(a) == m:
                best = max(best, sum(min(rho, v) ** 2 for v in a))
        assert ep.max_block_energy(m, K, rho) == pytest.approx(best)


@pytest.mark.parametrize("eps,delta", [(0.3, 1e-5), (1.0, 1e-5), (3.0, 1e-6), (8.0, 1e-3)])
def test_exact_gaussian_epsilon_against_dp_accounting(eps, delta):
    """The exact eps(delta) of the Gaussian release the checks use, against dp-accounting's PLD (an independent
    computation): reference values for Lemma 3.2's finding (mu = sqrt 2 / sigma)."""
    mu = math.sqrt(2) / math.sqrt(ep.lemma_sigma2(eps, delta))
    ref = pld.from_gaussian_mechanism(standard_deviation=1 / mu, sensitivity=1.0,
                                      value_discretization_interval=1e-5).get_epsilon_for_delta(delta)
    assert ep.epsilon_at(delta, mu) == pytest.approx(ref, abs=2e-4)


def test_appendix_a_calibration_algebra():
    """App. A: at sigma^2 = (1 + 2L/eps)/eps, alpha = 1 + 2L/eps, D_alpha + L/(alpha - 1) = eps for sensitivity 1
    (the Renyi route of Eq. (1)); with sensitivity sqrt 2 the same route gives more than eps."""
    for eps, delta in ((0.5, 1e-5), (2.0, 1e-6)):
        L = math.log(1 / delta)
        alpha, s2 = 1 + 2 * L / eps, (1 + 2 * L / eps) / eps
        assert ep.renyi(alpha, 1 / math.sqrt(s2)) + L / (alpha - 1) == pytest.approx(eps)
        assert ep.renyi(alpha, math.sqrt(2 / s2)) + L / (alpha - 1) > eps


def _hist_mdl():
    return el.model(d=12, K=3, s=0.5, m=10, contiguous=True)


def test_histogram_sensitivity_hand_built_pairs():
    """A block of m = 10 counts moved from one item of a cluster to another: ||pi(x) - pi(x')|| = sqrt 2 min(rho,
    m), the derived element sensitivity; the search finds it; a singleton partition keeping the count has none."""
    mdl, rho = _hist_mdl(), 4.0
    x, y = np.zeros(12), np.zeros(12)
    x[0], y[1] = 10, 10                         # items 0 and 1 share cluster 0 (contiguous blocks of 4)
    f = lambda v: el.clip_blocks(v, mdl.cluster, rho)        # noqa: E731
    assert np.linalg.norm(f(x) - f(y)) == pytest.approx(math.sqrt(2) * rho)
    derived = ep.sensitivity("element_histogram", "element", True, m=10, d=12, K=3, max_cluster=4, rho=rho)
    assert derived == pytest.approx(math.sqrt(2) * rho)
    found = el.search_pair(mdl, "element", True, f, rng=np.random.default_rng(0))
    assert found.distance == pytest.approx(derived)
    assert found.x.sum() == found.x_prime.sum() == 10
    assert np.count_nonzero(mdl.cluster[np.nonzero(found.x != found.x_prime)[0]] != mdl.cluster[
        np.nonzero(found.x != found.x_prime)[0][0]]) == 0          # one cluster changed
    single = el.model(d=6, K=6, s=0.5, m=10, contiguous=True)
    g = lambda v: el.clip_blocks(v, single.cluster, rho)       # noqa: E731
    assert el.search_pair(single, "element", True, g, rng=np.random.default_rng(0)).distance == 0
    assert el.search_pair(single, "element", False, g, rng=np.random.default_rng(0)).distance == pytest.approx(rho)


def test_heavy_hitters_sensitivities():
    mdl = el.model(d=40, K=40, s=1.0, m=50, contiguous=True)
    rng = np.random.default_rng(0)
    for unit, keep, want in (("element", False, 1.0), ("element", True, 0.0), ("user", True, math.sqrt(40)),
                             ("record", None, math.sqrt(2))):
        derived = ep.sensitivity("heavy_hitters", unit, keep, m=50, d=40, K=40, max_cluster=1, rho=0.0)
        found = el.search_pair(mdl, unit, keep, el.indicators, rng=rng).distance
        assert derived == pytest.approx(want)
        assert found == pytest.approx(want)


def test_user_sensitivity_is_an_upper_bound_the_search_reaches():
    mdl, rho = el.model(d=40, K=8, s=1.0, m=50, contiguous=True), 5.0
    derived = ep.sensitivity("element_histogram", "user", True, m=50, d=40, K=8, max_cluster=5, rho=rho)
    found = el.search_pair(mdl, "user", True, lambda v: el.clip_blocks(v, mdl.cluster, rho),
                           rng=np.random.default_rng(0)).distance
    assert derived == pytest.approx(20.0)             # 8 clusters at rho: 2 * 8 * 25 = 400
    assert found == pytest.approx(derived)


# --- the entries, at small sizes -------------------------------------------------------------------------------

SMALL_HIST = {"d": 60, "K": 6, "s": 0.5, "contiguous": 0, "m": 40, "n": 200, "eps": 1.0, "delta": 1e-5,
              "alpha": 8.0, "audit_trials": 40000, "rho": 0.0}
SMALL_HH = {"d": 200, "s": 0.5, "m": 10, "n": 400, "eps": 1.0, "delta": 1e-5, "alpha": 8.0, "audit_trials": 40000,
            "t": 32.0}
KEEP, FREE = Neighbouring("element", "replace_one", True), Neighbouring("element", "replace_one", False)


def _hist_point(seed=0, trials=30, **kw):
    p = cat.HistogramParams.model_validate(SMALL_HIST | kw).model_dump()
    return {"value": None} | cat.run_histogram(p, trials, np.random.SeedSequence(seed), KEEP)


def _hh_point(seed=0, trials=30, **kw):
    p = cat.HeavyHittersParams.model_validate(SMALL_HH | kw).model_dump()
    return {"value": None} | cat.run_heavy_hitters(p, trials, np.random.SeedSequence(seed), FREE)


def test_histogram_point_reproducible():
    a, b = _hist_point(seed=5, trials=5), _hist_point(seed=5, trials=5)
    assert a["mse_element"] == b["mse_element"] and a["audit"] == b["audit"]


def test_lemma_3_2_ii_fails_and_heavy_hitters_lemma_3_1_passes():
    """The finding: at the derived (and found) element sensitivity sqrt 2 rho, Lemma 3.2 (ii)'s sigma gives delta(1)
    above 1e-5; Lemma 3.1 at sensitivity 1 holds."""
    hist = checks.element_privacy(Check("element_privacy"), "element_histogram", [_hist_point(trials=5)])
    assert hist.verdict == "fail" and "(ii)" in hist.summary
    assert hist.claims == ("002 Lemma 3.2",)
    hh = checks.element_privacy(Check("element_privacy"), "heavy_hitters", [_hh_point(trials=5)])
    assert hh.verdict == "pass"


def test_planted_halved_sensitivity_caught_by_element_privacy(monkeypatch):
    """A derivation that halves the sensitivity: the search finds a pair beyond it."""
    real = ep.sensitivity
    monkeypatch.setattr(ep, "sensitivity", lambda *a, **k: real(*a, **k) / 2)
    pt = _hh_point(trials=5)
    res = checks.element_privacy(Check("element_privacy"), "heavy_hitters", [pt])
    assert res.verdict == "fail" and "search finds a pair" in res.summary


def test_planted_noise_on_the_wrong_scale_caught_by_the_audit(monkeypatch):
    """Heavy hitters releasing with a tenth of its noise: the audit's lower bound exceeds the claimed epsilon."""
    real = el.heavy_hitters_release
    monkeypatch.setattr(el, "heavy_hitters_release", lambda rng, users, *, sigma, reps=1: real(rng, users,
                                                                                             sigma=sigma / 10, reps=reps))
    res = checks.element_audit(Check("element_audit"), "heavy_hitters", [_hh_point(trials=3)])
    assert res.verdict == "fail"


def test_honest_audit_does_not_refute():
    res = checks.element_audit(Check("element_audit"), "heavy_hitters", [_hh_point(trials=3)])
    assert res.verdict == "pass" and res.measured < 1.0


def test_planted_record_reused_caught_by_the_audit(monkeypatch):
    """The histogram counting every user's clipped block three times (a record reused): the audit sees it."""
    real = el.histogram_release
    monkeypatch.setattr(el, "histogram_release", lambda rng, users, cluster, *, rho, noise_std, reps=1:
                        3 * real(rng, users, cluster, rho=rho, noise_std=noise_std / 3, reps=reps))
    res = checks.element_audit(Check("element_audit"), "element_histogram", [_hist_point(trials=3, eps=2.0)])
    assert res.verdict == "fail"


def test_planted_noise_too_large_caught_by_prop1(monkeypatch):
    """Heavy hitters with 30 times its noise (a utility fault): mis-orderings at Prop. 1's gamma exceed t^2 (the
    bound is loose: ten times the noise still stays under it at t = 30)."""
    real = el.heavy_hitters_release
    monkeypatch.setattr(el, "heavy_hitters_release", lambda rng, users, *, sigma, reps=1: real(rng, users,
                                                                                             sigma=30 * sigma, reps=reps))
    res = checks.ordering_loss(Check("ordering_loss"), "heavy_hitters", [_hh_point(trials=40, t=2.0, n=2000)])
    assert res.verdict == "fail"


def test_prop1_passes_on_the_honest_mechanism():
    res = checks.ordering_loss(Check("ordering_loss"), "heavy_hitters", [_hh_point(trials=100, t=30.0, n=2000)])
    assert res.verdict == "pass"


def test_planted_noise_without_one_over_n_caught_by_mse_rate(monkeypatch):
    """The histogram's noise not divided by n (a biased calibration of the mean's noise): the MSE stops falling
    like Prop. 2's bracket in n."""
    real = el.histogram_release
    monkeypatch.setattr(el, "histogram_release", lambda rng, users, cluster, *, rho, noise_std, reps=1:
                        real(rng, users, cluster, rho=rho, noise_std=noise_std * users.shape[0], reps=reps))
    def points():
        return [dict(_hist_point(trials=40, n=n, audit_trials=1000, d=300, K=30), value=float(n))
                for n in (100, 200, 400, 800)]

    res = checks.mse_rate(Check("mse_rate", 0.95), "element_histogram", points())
    assert res.verdict == "fail"
    monkeypatch.setattr(el, "histogram_release", real)
    assert checks.mse_rate(Check("mse_rate", 0.95), "element_histogram", points()).verdict == "pass"


def test_planted_element_noise_too_large_caught_by_element_vs_user(monkeypatch):
    """The element-level release with ten times its noise (noise on the wrong scale): the user level wins."""
    real = el.histogram_release

    def release(rng, users, cluster, *, rho, noise_std, reps=1):
        scale = 10.0 if rho < 200 else 1.0          # the element level clips below m = 200, the user level at m
        return real(rng, users, cluster, rho=rho, noise_std=noise_std * scale, reps=reps)

    monkeypatch.setattr(el, "histogram_release", release)
    pt = _hist_point(trials=30, d=400, K=100, m=200, n=300)
    assert checks.element_vs_user(Check("element_vs_user"), "element_histogram", [pt]).verdict == "fail"


def test_planted_noise_growing_with_k_caught_by_finer_partition(monkeypatch):
    """A release whose noise grows with the number of clusters: finer partitions get worse."""
    real = el.histogram_release
    monkeypatch.setattr(el, "histogram_release", lambda rng, users, cluster, *, rho, noise_std, reps=1: real(
        rng, users, cluster, rho=rho, noise_std=noise_std * (1 + int(cluster.max())), reps=reps))
    pts = [dict(_hist_point(trials=30, K=K, audit_trials=1000), value=float(K)) for K in (1, 6, 30)]
    assert checks.finer_partition(Check("finer_partition"), "element_histogram", pts).verdict == "fail"


def test_finer_partition_passes_on_the_honest_mechanism():
    pts = [dict(_hist_point(trials=30, K=K, audit_trials=1000, d=400, m=200), value=float(K)) for K in (1, 10, 100)]
    assert checks.finer_partition(Check("finer_partition"), "element_histogram", pts).verdict == "pass"


def test_element_beats_user_level_on_a_fine_partition():
    pt = _hist_point(trials=30, d=400, K=100, m=200, n=300)
    assert pt["rho_element"] < pt["rho_user"]
    assert checks.element_vs_user(Check("element_vs_user"), "element_histogram", [pt]).verdict == "pass"


# --- specs ----------------------------------------------------------------------------------------------------

def _spec(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return path


BASE = """name: s
kind: mechanism
description: x
mechanism: element_histogram
params: {d: 60, K: 6, s: 0.5, contiguous: 0, m: 40, n: 200, eps: 1.0, delta: 1.0e-5}
trials: 100
seed: 1
checks:
  - {id: privacy, kind: element_privacy}
"""


def test_spec_refuses_a_relation_the_mechanism_does_not_handle(tmp_path):
    with pytest.raises(SpecError) as e:
        kinds.load(_spec(tmp_path, BASE + "neighbouring: {unit: record, change: replace_one}\n"))
    assert "neighbouring" in str(e.value) and "element/replace_one/keep_count" in str(e.value)


def test_spec_refuses_keep_count_on_records(tmp_path):
    with pytest.raises(SpecError) as e:
        kinds.load(_spec(tmp_path, BASE + "neighbouring: {unit: record, change: replace_one, keep_count: true}\n"))
    assert "keep_count" in str(e.value)


def test_spec_default_relation_is_the_entrys_first(tmp_path):
    spec = kinds.load(_spec(tmp_path, BASE))
    assert spec.relation == MECHANISMS.get("element_histogram").relations[0] == KEEP


def test_mechanisms_without_relations_refuse_one(tmp_path):
    text = Path("specs/darrm_pure.yaml").read_text() + "neighbouring: {unit: user, change: replace_one}\n"
    with pytest.raises(SpecError) as e:
        kinds.load(_spec(tmp_path, text))
    assert "default" in str(e.value)


def test_searchsorted_unit_is_numpys_searchsorted():
    """draw_users' bucket-table search (issue 17) against np.searchsorted(side="right"), edge values included."""
    rng = np.random.default_rng(3)
    for d in (1, 2, 3, 100, 1000, 70000):
        for s in (0.0, 0.5, 3.0):
            c = np.cumsum(el.zipf(d, s))
            u = rng.random((50, 77))
            edge = [0.0, 1 - 2**-53] + [x for x in c[:3] if x < 1] + [x for x in c[-3:] if x < 1]
            edge += [np.nextafter(x, 0) for x in c[:3]]
            u.flat[:len(edge)] = edge
            assert np.array_equal(el.searchsorted_unit(c, u), np.searchsorted(c, u, side="right"))


def test_clip_blocks_without_clipping_is_a_float_copy():
    mdl = el.model(d=30, K=7, s=0.5, m=20, contiguous=False)
    x = el.draw_users(np.random.default_rng(0), mdl, 5)
    y = el.clip_blocks(x, mdl.cluster, 1e9)
    assert y is not x and y.dtype == np.float64 and np.array_equal(y, x)
    assert np.array_equal(el.clip_blocks(x.astype(np.int64), mdl.cluster, 1e9), x)
