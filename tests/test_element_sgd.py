"""Seed 002's element-level private SGD (catalog/element_sgd_002.py; numerics algorithms/element_sgd.py; checks
verifiers/checks/element_sgd.py): the descent reading of Alg. 1 against finite differences of the element loss,
clipping, the fast batch path against Alg. 1, reproducible seeds, the sampling of distinct users, Example 3's minimiser,
the predicted covariance against closed forms, the three checks on clean and planted-fault inputs, and the parameter
rules. References come from closed forms or independent computations (finite differences, exact Gaussian samples)."""
from __future__ import annotations

import copy
import math
from types import SimpleNamespace

import numpy as np
import pytest

from algorithms import element_sgd as es
from catalog import MECHANISMS
from catalog import element_sgd_002 as cat
from engine.kinds.mechanism.spec import parse_mechanism
from engine.specbase import SpecError
from tests.helpers import raw
from verifiers.checks import element_sgd as ck


def _check(kind: str, confidence: float = 0.95) -> SimpleNamespace:
    return SimpleNamespace(id=kind, kind=kind, confidence=confidence)


def _sig(t: float) -> float:
    return 1.0 / (1.0 + math.exp(-t))


# --------------------------------------------------------------------------------------------------------------
# Algorithm 1, the update (15)


def test_alg1_step_is_the_element_gradient_descent_reading():
    """Alg. 1 read as Delta = (theta0 - theta+)/alpha (P1): without projection or clipping the user's step is the
    gradient of its element loss (10), here against central finite differences of the loss itself."""
    prob = es.make_problem(3, 5, 7, 3, 4)
    W = es.membership(prob.sizes)
    z = es.sample_z(prob, np.random.default_rng(0), (6,))                             # 6 users
    theta = np.array([0.3, -0.2, 0.5])
    step = es.sgd_el(theta[None, :], z, W, alpha=0.01, rho=100.0, radius=100.0)     # (6, d)
    h = 1e-6
    for u in range(6):
        fd = [(es.element_losses(theta + h * e, z[u][None], W)[0] - es.element_losses(theta - h * e, z[u][None], W)[0])
              / (2 * h) for e in np.eye(3)]
        np.testing.assert_allclose(step[u], fd, rtol=1e-6, atol=1e-9)
    # a small step along -step lowers every user's element loss (descent, not the printed ascent)
    before = es.element_losses(theta, z, W)
    after = es.element_losses(theta[None, :] - 1e-3 * step, z, W).diagonal()
    assert np.all(after < before)


def test_element_sizes_and_membership():
    assert es.split_sizes(7, 3) == (3, 2, 2) and es.split_sizes(4, 2) == (2, 2)
    W = es.membership((3, 2, 2))
    np.testing.assert_allclose(W.sum(axis=0), 1.0)
    with pytest.raises(ValueError):
        es.split_sizes(2, 3)


def test_clipping_bounds_each_element_and_each_user():
    prob = es.make_problem(4, 6, 9, 3, 1)
    W = es.membership(prob.sizes)
    z = 25.0 * es.sample_z(prob, np.random.default_rng(2), (50,))                    # large gradients: clipping bites
    theta = np.full(4, -0.3)
    rho = 0.3
    steps = es.element_steps(theta[None, :], z, W, alpha=0.1, rho=rho, radius=100.0)
    norms = np.linalg.norm(steps, axis=-1)
    assert norms.max() <= rho * (1 + 1e-12) and np.isclose(norms.max(), rho)
    user = es.sgd_el(theta[None, :], z, W, alpha=0.1, rho=rho, radius=100.0)
    assert np.linalg.norm(user, axis=-1).max() <= prob.k * rho * (1 + 1e-12) <= prob.K * rho


def test_projection_onto_theta():
    """Near the boundary of Theta the element step is (theta0 - proj(theta0 - alpha g))/alpha."""
    prob = es.make_problem(2, 3, 2, 1, 0)
    W = es.membership(prob.sizes)
    z = np.array([[[3.0, 0.0], [3.0, 0.0]]])                                           # one user, gradient along -x
    theta0 = np.array([0.9, 0.0])
    g = es.element_grads(theta0, z, W)[0, 0]
    alpha, R = 1.0, 1.0
    plus = theta0 - alpha * g
    plus = plus * min(1.0, R / np.linalg.norm(plus))
    want = (theta0 - plus) / alpha
    got = es.sgd_el(theta0[None, :], z, W, alpha=alpha, rho=100.0, radius=R)[0]
    np.testing.assert_allclose(got, want)
    assert np.linalg.norm(theta0 - alpha * got) <= R + 1e-12


def test_fast_batch_path_equals_alg1():
    prob = es.make_problem(3, 6, 5, 2, 3)
    W = es.membership(prob.sizes)
    rng = np.random.default_rng(5)
    z = es.sample_z(prob, rng, (4, 7))                                                 # (trials, users, m, d)
    theta = rng.standard_normal((4, 3)) * 0.5
    mask = rng.random((4, 7)) < 0.5
    for rho, scale in ((10.0, 1.0), (0.2, 1.0), (0.5, 5.0)):
        zs = scale * z
        want = (es.sgd_el(theta[:, None, :], zs, W, alpha=0.1, rho=rho, radius=50.0) * mask[..., None]).sum(axis=1)
        zt = np.ascontiguousarray(zs.swapaxes(-1, -2))
        zmax = float(np.linalg.norm(zs, axis=-1).max())
        got = es.batch_sum(theta, zt, W, alpha=0.1, rho=rho, radius=50.0, mask=mask, zmax=zmax)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_distinct_batches_are_uniform_subsets():
    rng = np.random.default_rng(0)
    idx = es.distinct_batches(rng, 20000, 5, 2)
    assert np.all(idx[:, 0] != idx[:, 1])
    pairs = np.sort(idx, axis=1)
    counts = np.bincount(pairs[:, 0] * 5 + pairs[:, 1], minlength=25)
    counts = counts[counts > 0]
    assert counts.size == 10                                                            # C(5, 2) subsets
    chi2 = float(((counts - 2000) ** 2 / 2000).sum())
    assert chi2 < 27.9                                                                  # chi2_9 at 0.999
    big = es.distinct_batches(rng, 10, 6, 5)                                            # the permutation route
    assert all(len(set(r)) == 5 for r in big.tolist())


def _small_run(seed: int, sigma: float = 0.0, poisson: bool = False, trials: int = 6) -> es.RunOutput:
    prob = es.make_problem(3, 10, 4, 2, 0)
    return es.run(prob, n=60, T=120, batch=6, alpha0=2.0, beta=0.6, rho=2.0, sigma=sigma, radius=10.0,
                  poisson=poisson, trials=trials, seq=np.random.SeedSequence(seed))


def test_noiseless_run_descends_and_seeds_reproduce():
    prob = es.make_problem(3, 10, 4, 2, 0)
    out = _small_run(1)
    W = es.membership(prob.sizes)
    z = es.sample_z(prob, np.random.default_rng(99), (20000,))                          # fresh users: the risk L_el
    risk0 = es.element_losses(np.zeros(3), z, W).mean()
    risk_bar = np.array([es.element_losses(t, z, W).mean() for t in out.theta_bar])
    risk_last = np.array([es.element_losses(t, z, W).mean() for t in out.theta_last])
    assert np.all(risk_bar < risk0) and np.all(risk_last < risk0)
    again = _small_run(1)
    np.testing.assert_array_equal(out.theta_bar, again.theta_bar)
    np.testing.assert_array_equal(out.theta_last, again.theta_last)
    assert not np.array_equal(out.theta_bar, _small_run(2).theta_bar)
    noisy = _small_run(1, sigma=1.0, poisson=True)
    assert np.all(np.isfinite(noisy.theta_bar)) and noisy.max_batch >= 1
    np.testing.assert_array_equal(noisy.theta_bar, _small_run(1, sigma=1.0, poisson=True).theta_bar)


# --------------------------------------------------------------------------------------------------------------
# the prediction


def test_fisher_information_in_one_dimension_has_a_closed_form():
    """d = 1: S^0 = {-1, +1}, so x = c + u with u = +-1 has |x| = 2 w.p. 1/2 and x = 0 otherwise whatever the
    centres: J = E[s(x theta*) s(-x theta*) x^2] = 2 s(2) s(-2) exactly (theta* = +-1)."""
    prob = es.make_problem(1, 3, 2, 1, 7)
    J, Jb = es.fisher(prob, np.random.default_rng(0), 400_000)
    exact = 2 * _sig(2) * _sig(-2)
    se = Jb.std(ddof=1) / math.sqrt(len(Jb))
    assert abs(J[0, 0] - exact) < 5 * se + 1e-12


def test_predicted_covariance_by_hand_in_one_dimension():
    """H = k J, Sigma = (sum_j 1/s_j) J, P = (Sigma + (Sigma/m_b + rho^2 sigma^2/m_b^2)/gamma)/H^2, and the printed
    bracket of L349 read literally, Sigma/H + (Sigma/m_b + rho^2 sigma^2/m_b^2)/(gamma H^2), at numbers worked by hand."""
    J = 2 * _sig(2) * _sig(-2)                                    # 0.20999...
    sizes = (2, 1)                                                # m = 3 points over k = 2 clusters: h = 1/2 + 1 = 1.5
    out = es.covariances(np.array([[J]]), sizes, gamma=2.0, batch=4, rho=2.0, sigma=3.0, q=0.1)
    H, S = 2 * J, 1.5 * J
    V = S / 4 + 36.0 / 16
    assert out["H_el"][0, 0] == pytest.approx(H)
    assert out["Sigma_el"][0, 0] == pytest.approx(S)
    assert out["paper"][0, 0] == pytest.approx((S + V / 2) / H**2)
    assert out["literal"][0, 0] == pytest.approx(S / H + V / (2 * H**2))
    assert out["finite_q"][0, 0] == pytest.approx((S + (0.9 * S / 4 + 36.0 / 16) / 2) / H**2)
    assert out["efficient"][0, 0] == pytest.approx(S / H**2)
    # the non-private Thm 1 case (m_b = 1, sigma = 0): the efficiency loss is exactly 1 + 1/gamma (L297)
    thm1 = es.covariances(np.array([[J]]), sizes, gamma=2.0, batch=1, rho=2.0, sigma=0.0, q=0.0)
    assert thm1["paper"][0, 0] == pytest.approx(1.5 * thm1["efficient"][0, 0])


def test_sigma_el_identity_against_a_direct_monte_carlo():
    """Cov grad l_el(theta*) from users' gradients (no J involved) matches (sum_j 1/s_j) J, and grad L_el(theta*) = 0."""
    prob = es.make_problem(3, 10, 5, 2, 3)                       # sizes (3, 2): h = 1/3 + 1/2
    J, _ = es.fisher(prob, np.random.default_rng(1), 400_000)
    g = es.user_gradients(prob, prob.theta_star, np.random.default_rng(2), 200_000)
    direct = np.cov(g.T)
    np.testing.assert_allclose(direct, (1 / 3 + 1 / 2) * J, atol=0.03 * np.abs(direct).max())
    assert np.all(np.abs(g.mean(axis=0)) < 5 * g.std(axis=0) / math.sqrt(len(g)))


def test_example3_minimiser_is_theta_star():
    prob = es.make_problem(3, 10, 4, 2, 0)
    r = es.el_minimiser(prob, np.random.default_rng(3), 50_000)
    Hi = np.linalg.inv(r["H"])
    C = Hi @ r["Sigma"] @ Hi / 50_000
    diff = r["theta"] - prob.theta_star
    assert float(diff @ np.linalg.solve(C, diff)) < 16.3          # chi2_3 at 0.999
    assert np.linalg.norm(diff) < 0.05


# --------------------------------------------------------------------------------------------------------------
# the checks


def _gaussian_point(P: np.ndarray, n: int, trials: int, seed: int, shift: np.ndarray | None = None) -> dict:
    """A point whose Y are exact N(shift, P) samples and whose prediction is P (what a correct mechanism at n =
    infinity would give)."""
    rng = np.random.default_rng(seed)
    Y = rng.multivariate_normal(np.zeros(P.shape[0]) if shift is None else shift, P, size=trials)
    return {"value": n, "params": {"n": n, "rho": 2.0, "beta": 0.6, "batch": 10, "poisson": 0},
            "sqrt_n_error": Y.tolist(),
            "prediction": {"paper": P.tolist(), "literal": (2 * P).tolist(), "finite_q": P.tolist(),
                           "rel_se": {"trace": 0.001, "top": 0.002}}}


P3 = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 0.5], [0.0, 0.5, 2.0]])


def test_a_wrong_covariance_or_noise_on_the_wrong_scale_is_caught_by_covariance(monkeypatch):
    pts = [_gaussian_point(P3, 500, 2000, 1), _gaussian_point(P3, 4000, 2000, 2)]
    clean = ck.covariance(_check("covariance"), "element_sgd", pts)
    assert clean.verdict == "pass" and clean.claims == ("002 Prop 3 (asymptotic)",)
    for factor in (1.5, 2.0):                                     # the prediction off by a factor
        bad = copy.deepcopy(pts)
        for pt in bad:
            pt["prediction"]["paper"] = (factor * P3).tolist()
        assert ck.covariance(_check("covariance"), "element_sgd", bad).verdict == "fail"
    # the mechanism's noise sigma instead of rho sigma (rho = 2: a quarter of the variance), noise-dominated point
    p = cat.ElementSgdParams(n=800, d=2, K=4, m=20, k=1, batch=5, sigma=0.75, alpha0=3.0, beta=0.55, mc_users=5000,
                             mc_points=50_000).model_dump()
    honest = ck.covariance(_check("covariance"), "element_sgd",
                           [{"value": None} | cat.run_point(p, 1000, np.random.SeedSequence(11))])
    assert honest.verdict != "fail"
    monkeypatch.setattr(es, "noise_scale", lambda rho, sigma: sigma)
    faulty = ck.covariance(_check("covariance"), "element_sgd",
                           [{"value": None} | cat.run_point(p, 1000, np.random.SeedSequence(11))])
    assert faulty.verdict == "fail"


def test_covariance_cites_thm1_at_one_user_per_step_and_skips_points_outside_the_hypotheses():
    pt = _gaussian_point(P3, 1000, 500, 3)
    pt["params"]["batch"] = 1
    r = ck.covariance(_check("covariance"), "element_sgd", [pt])
    assert r.claims == ("002 Thm 1", "002 Prop 3 (asymptotic)") and "L293" in r.citation
    clipped = copy.deepcopy(pt)
    clipped["params"]["rho"] = 1.0
    skipped = ck.covariance(_check("covariance"), "element_sgd", [clipped])
    assert skipped.verdict == "inapplicable" and skipped.claims == () and "not inventoried" in skipped.citation
    small_beta = copy.deepcopy(pt)
    small_beta["params"]["beta"] = 0.5
    assert ck.covariance(_check("covariance"), "element_sgd", [small_beta]).verdict == "inapplicable"


def test_a_shifted_centre_is_caught_by_centred():
    pts = [_gaussian_point(P3, 500, 2000, 4), _gaussian_point(P3, 4000, 2000, 5)]
    assert ck.centred(_check("centred", 0.99), "element_sgd", pts).verdict == "pass"
    spread = math.sqrt(np.trace(P3))
    shifted = [_gaussian_point(P3, 500, 2000, 4), _gaussian_point(P3, 4000, 2000, 5, np.array([0.6 * spread, 0, 0]))]
    assert ck.centred(_check("centred", 0.99), "element_sgd", shifted).verdict == "fail"


def _example3_point(p: dict) -> dict:
    prob = es.make_problem(p["d"], p["K"], p["m"], p["k"], p["problem_seed"])
    ex, _ = cat.example3(prob, p["mc_users"], np.random.SeedSequence(1), np.random.SeedSequence(2))
    return {"value": None, "params": p, "example3": ex}


def test_a_misspecified_label_model_is_caught_by_el_minimiser(monkeypatch):
    p = cat.ElementSgdParams(n=100, mc_users=50_000).model_dump()
    good = ck.el_minimiser(_check("el_minimiser", 0.999), "element_sgd", [_example3_point(p)])
    assert good.verdict == "pass" and good.claims == ("002 Example 3",)
    monkeypatch.setattr(es, "label_prob", lambda s: es.logistic(2 * s))   # the data follow 2 theta*, not theta*
    bad = ck.el_minimiser(_check("el_minimiser", 0.999), "element_sgd", [_example3_point(p)])
    assert bad.verdict == "fail"


# --------------------------------------------------------------------------------------------------------------
# the entry and its spec


def test_entry_is_registered_with_the_element_relation():
    e = MECHANISMS.get("element_sgd")
    assert e.threat_model == "central" and e.relations[0].label == "element/replace_one/keep_count"
    assert set(e.checks.names()) == {"covariance", "centred", "el_minimiser"}


@pytest.mark.parametrize("change, where, words", [
    ({"k": 11}, "params.k", "K = 10"),
    ({"k": 5, "m": 4}, "params.k", "empty"),
    ({"batch": 2000}, "params.batch", "n = 1000"),
    ({"beta": 0.4}, "params.beta", "0.5"),
    ({"sigma": -1.0}, "params.sigma", "0"),
    ({"n": 100_000, "m": 50, "d": 10}, "params.n", "memory"),
    ({"surprise": 1}, "params.surprise", ""),
])
def test_bad_params_are_refused_in_one_line(change, where, words):
    r = raw("element_sgd_normality")
    r["params"] = r["params"] | change
    r["sweep"] = None
    with pytest.raises(SpecError) as e:
        parse_mechanism(r, "bad.yaml")
    msg = str(e.value)
    assert "\n" not in msg and where in msg and words in msg
