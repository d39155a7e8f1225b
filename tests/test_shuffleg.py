"""Seed 003 ch. 4's private shuffled gradient methods (algorithms/shuffleg.py, catalog/shuffleg_003.py,
verifiers/accountants/shuffleg_privacy.py, verifiers/checks/shuffleg.py): the accountant against dp-accounting and
direct sums, the numerics against independent solvers and closed forms, and planted faults inside the mechanism,
each caught by a named check."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from algorithms import shuffleg as sg
from catalog import shuffleg_003 as cat
from engine.kinds.mechanism.spec import MechanismCheck
from verifiers.accountants import shuffleg_privacy as acc
from verifiers.checks import shuffleg as chk


def point(trials: int = 400, **kw) -> dict:
    p = cat.ShuffleGParams.model_validate({"instance": "dp_shuffleg"} | kw).model_dump()
    cat.rules(p)
    return {"value": None} | cat.run_point(p, trials, np.random.SeedSequence(7))


def verdict(kind: str, pts: list[dict], confidence: float = 0.99) -> str:
    c = MechanismCheck(id="c", kind=kind, confidence=confidence)
    return cat.SHUFFLEG_CHECKS.get(kind)(c, "shuffleg", pts).verdict


# --- the accountant ---------------------------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(eps=st.floats(0.1, 20), delta=st.floats(1e-10, 1e-2), G=st.floats(0.1, 100), inv_m=st.floats(0.01, 500))
def test_sigma_for_inverts_the_optimal_conversion(eps, delta, G, inv_m):
    sigma = acc.sigma_for(eps, delta, G, inv_m)
    a = 2 * G**2 * inv_m / sigma**2
    e, alpha = acc.epsilon(a, delta)
    assert e == pytest.approx(eps, rel=1e-9)
    # the optimum over alpha: no order on a fine grid does better (Prop 4.3.4 is convex in alpha)
    grid = 1 + np.geomspace(1e-4, 1e5, 20001)
    assert np.min(a * grid + math.log(1 / delta) / (grid - 1)) >= e * (1 - 1e-9)


def test_one_epoch_is_a_gaussian_mechanism_of_sensitivity_2G_by_dp_accounting():
    view = acc.dp_accounting_view(10.0, 161.0, 50, 1, 1e-6)
    assert view["max_rel_rdp_difference"] < 1e-12
    ours, _ = acc.epsilon(2 * 100 * 50 / 161.0**2, 1e-6)
    assert view["epsilon"] < ours <= view["prop434_on_its_grid"] <= ours * 1.01


def test_rr_refinement_is_the_worst_case_at_n_1_and_below_it_otherwise():
    G, sigma, K, delta = 1.0, 5.0, 10, 1e-5
    worst, _ = acc.epsilon(2 * G**2 * K / sigma**2, delta)
    one, _ = acc.rr_epsilon(G, sigma, 1, K, delta)
    assert one == pytest.approx(worst, rel=1e-6)
    many, _ = acc.rr_epsilon(G, sigma, 100, K, delta)
    assert many < worst
    # the epoch RDP against a direct sum at one order
    al = 3.0
    direct = math.log(np.mean([math.exp((al - 1) * 2 * al * G**2 / (sigma**2 * j)) for j in range(1, 101)])) / (al - 1)
    assert acc.rr_epoch_rdp(al, G, sigma, 100) == pytest.approx(direct, rel=1e-12)


# --- the numerics -----------------------------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(reg=st.sampled_from(["ridge", "l1", "ball", "none"]), t=st.floats(0.01, 3), lam=st.floats(0.0, 2),
       seed=st.integers(0, 10**6))
def test_prox_is_the_argmin_of_its_problem(reg, t, lam, seed):
    v = np.random.default_rng(seed).normal(size=3) * 3
    x = sg.prox(reg, v[None, :], t, lam, 2.0)[0]

    def obj(z: np.ndarray) -> float:
        pen = {"ridge": lam / 2 * z @ z, "l1": lam * np.abs(z).sum(), "none": 0.0,
               "ball": 0.0 if np.linalg.norm(z) <= 2.0 + 1e-12 else 1e6 * (np.linalg.norm(z) - 2.0)}[reg]
        return t * pen + 0.5 * np.sum((z - v) ** 2)

    assert obj(x) <= min(obj(x + 1e-4 * e) for e in np.vstack([np.eye(3), -np.eye(3)])) + 1e-9


def test_lasso_logistic_optimum_matches_scipy():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(80, 4))
    y = (rng.random(80) < 1 / (1 + np.exp(-A @ np.array([1.0, -2.0, 0.0, 0.5])))).astype(float)
    prob = sg.Problem("logistic", A, y, A, y, "l1", 0.05)
    x, res = sg.optimum(prob)
    assert res < 1e-9

    def G(z: np.ndarray) -> float:
        r = A @ z
        return float(np.mean(np.logaddexp(0, r) - y * r) + 0.05 * np.abs(z).sum())

    ref = minimize(G, np.zeros(4), method="Powell", options={"xtol": 1e-10, "ftol": 1e-14, "maxfev": 200000})
    assert G(x) <= ref.fun + 1e-9


def test_huberised_objective_has_the_clipped_gradient():
    rng = np.random.default_rng(2)
    prob = sg.Problem("ridge", rng.normal(size=(30, 3)), rng.normal(size=30) * 5, np.zeros((1, 3)), np.zeros(1))
    x, h = rng.normal(size=3) * 2, 1e-6
    num = np.array([(sg.objective(prob, (x + h * e)[None, :], 1.0)[0] - sg.objective(prob, (x - h * e)[None, :], 1.0)[0])
                    / (2 * h) for e in np.eye(3)])
    assert np.allclose(num, sg.full_gradient(prob, x, 1.0), atol=1e-6)


def test_exact_noise_excess_matches_simulation():
    n, d = 20, 3
    prob = sg.Problem("mean", np.zeros((n, d)), np.zeros(n), np.zeros((n, d)), np.zeros(n), "ridge", 0.5)
    sched = sg.schedule("interleaved", n=n, K=6, sigma=2.0, n_d=7)
    out = sg.run(prob, sched, eta=0.01, order="rr", x1=np.zeros(d), clip=np.inf, trials=40000,
                 seq=np.random.SeedSequence(3))
    ex = sg.objective(prob, out.last)
    assert ex.mean() == pytest.approx(sg.exact_noise_excess(prob, sched, 0.01), rel=0.03)


def test_theorem_447_is_no_larger_than_its_corollary():
    pt = point(trials=100, n=30, K=20, epsilon=2.0, shift=0.0)
    t, _ = chk._bound_terms(pt, "theorem_bound")
    c, _ = chk._bound_terms(pt, "bound")
    assert t is not None and c is not None and t.total <= c.total


def test_a_spec_outside_the_instance_rules_is_refused():
    with pytest.raises(ValueError, match="S in 1..K-1"):
        cat.rules(cat.ShuffleGParams.model_validate({"instance": "priv_pub", "p": 1.0}).model_dump())


# --- planted faults ---------------------------------------------------------------------------------------------

def test_noise_missing_on_public_steps_is_caught_by_injected_noise(monkeypatch):
    good = point(instance="interleaved", n=20, K=5, p=0.5, audit_trials=0)
    assert verdict("injected_noise", [good]) == "pass"
    real = sg._run_chunk

    def quiet_public(prob, sched, **kw):
        return real(prob, dataclasses.replace(sched, noisy_public=False), **kw)

    monkeypatch.setattr(sg, "_run_chunk", quiet_public)
    bad = point(instance="interleaved", n=20, K=5, p=0.5, audit_trials=0)
    assert verdict("injected_noise", [bad]) == "fail"


def test_sigma_from_the_wrong_alpha_is_caught_by_shuffleg_accounting_and_the_audit(monkeypatch):
    good = point(n=10, K=4, epsilon=2.0, audit_trials=100_000)
    assert verdict("shuffleg_accounting", [good]) == "pass"
    assert verdict("last_iterate_audit", [good]) == "pass"
    real = acc.sigma_for
    # the noise of the wrong order: sigma for a 5x larger epsilon
    monkeypatch.setattr(acc, "sigma_for", lambda eps, delta, G, inv_m: real(5 * eps, delta, G, inv_m))
    bad = point(n=10, K=4, epsilon=2.0, audit_trials=100_000)
    assert verdict("shuffleg_accounting", [bad]) == "fail"
    assert verdict("last_iterate_audit", [bad]) == "fail"


def test_a_step_larger_than_declared_is_caught_by_injected_noise(monkeypatch):
    real = sg._run_chunk

    def double_step(prob, sched, *, eta, **kw):
        return real(prob, sched, eta=2 * eta, **kw)

    monkeypatch.setattr(sg, "_run_chunk", double_step)
    bad = point(n=20, K=5, audit_trials=0)
    assert verdict("injected_noise", [bad]) == "fail"


def test_a_wrong_prox_step_is_caught_by_corollary_bound(monkeypatch):
    kw = dict(data="constant", centre=5.0, n=20, K=200, x1_offset=0.0, eta_frac=1.0, lam=1.0, sigma=0.0,
              audit_trials=0)
    assert verdict("corollary_bound", [point(trials=100, **kw)]) == "pass"
    real = sg.prox
    # the prox taken with step eta instead of n eta: the epochs shrink 1/(1 + eta lam), not 1/(1 + n eta lam)
    monkeypatch.setattr(sg, "prox", lambda reg, v, t, lam, radius: real(reg, v, t / 20, lam, radius))
    monkeypatch.setattr(sg, "optimum", lambda prob, clip=np.inf: (prob.A.mean(axis=0) / (1 + prob.lam), 0.0))
    assert verdict("corollary_bound", [point(trials=100, **kw)]) == "fail"


def test_the_noise_term_of_cor_451_fails_exactly_at_small_steps():
    """The finding of specs/dp_shuffleg_noise_term.yaml on a small instance: all records 0, start at x* = 0, a
    step 1000x below the cap; the exact expected excess alone is above the whole bound."""
    pt = point(trials=100, data="constant", n=20, d=2, K=300, x1_offset=0.0, eta_frac=0.001, audit_trials=0)
    terms, _ = chk._bound_terms(pt, "bound")
    assert terms is not None and pt["exact_noise_excess"] > 1.5 * terms.total
    assert verdict("corollary_bound", [pt]) == "fail"
    assert verdict("theorem_bound", [pt]) == "fail"


# --- the comparisons and the rate ---------------------------------------------------------------------------------

def grid(**kw) -> dict:
    p = cat.ShuffleGGridParams.model_validate({"data": "gaussian", "loss": "mean", "regulariser": "ridge", "lam": 1.0,
                                               "n": 100, "d": 2, "K": 10, "tune_trials": 3,
                                               "permutations": 200} | kw).model_dump()
    cat.grid_rules(p)
    return {"value": p["epsilon"]} | cat.grid_point(p, 100, np.random.SeedSequence(11))


def grid_verdict(kind: str, pts: list[dict]) -> str:
    c = MechanismCheck(id="c", kind=kind, confidence=0.99)
    return cat.SHUFFLEG_GRID_CHECKS.get(kind)(c, "shuffleg_grid", pts).verdict


def test_interleaved_noise_without_its_amplification_is_caught_by_interleaved_best(monkeypatch):
    kw = dict(shift=1.0, centre=2.0, epsilon=5.0, n=500, K=20)
    assert grid_verdict("interleaved_best", [grid(**kw)]) == "pass"
    real = cat.inverse_m
    # Interleaved calibrated as if its public steps carried no noise (m = 1 per epoch instead of n + 1 - n_d)
    monkeypatch.setattr(cat, "inverse_m", lambda inst, n, K, S, nd: K if inst == "interleaved" else real(inst, n, K, S, nd))
    assert grid_verdict("interleaved_best", [grid(**kw)]) == "fail"


def test_public_only_on_unshifted_public_data_makes_public_only_suboptimal_fail():
    assert grid_verdict("public_only_suboptimal", [grid(shift=0.0, centre=2.0, epsilon=0.5)]) == "fail"


def test_a_wrong_factorisation_is_caught_by_privacy_term_order(monkeypatch):
    pt = grid(shift=1.0, epsilon=5.0)
    assert grid_verdict("privacy_term_order", [pt]) == "pass"
    from verifiers.checks import shuffleg_grid as sgc
    monkeypatch.setattr(sgc.sp, "factor", lambda e: e + 1)
    assert grid_verdict("privacy_term_order", [pt]) == "fail"


def test_a_permuted_public_copy_makes_dissimilarity_order_fail():
    assert grid_verdict("dissimilarity_order", [grid(data="mirror", shift=0.0)]) == "fail"


def rate(n: int, trials: int = 200) -> dict:
    p = cat.ShuffleGRateParams.model_validate({"n": n}).model_dump()
    return {"value": n} | cat.rate_point(p, trials, np.random.SeedSequence(n))


def rate_verdict(kind: str, pts: list[dict]) -> str:
    c = MechanismCheck(id="c", kind=kind, confidence=0.99)
    return cat.SHUFFLEG_RATE_CHECKS.get(kind)(c, "shuffleg_rate", pts).verdict


def test_eq413_rate_and_exact_bound_fail_at_the_thesis_schedule():
    pts = [rate(n) for n in (10**6, 10**7, 10**8)]
    assert rate_verdict("eq413_rate", pts) == "fail"
    assert rate_verdict("exact_bound", pts) == "fail"
    assert rate_verdict("exact_bound", pts[:2]) == "pass"


def test_a_step_off_the_closed_form_is_caught_by_exact_vs_simulation(monkeypatch):
    assert rate_verdict("exact_vs_simulation", [rate(100, 2000)]) == "pass"
    real = sg._run_chunk

    def double_step(prob, sched, *, eta, **kw):
        return real(prob, sched, eta=1.5 * eta, **kw)

    monkeypatch.setattr(sg, "_run_chunk", double_step)
    assert rate_verdict("exact_vs_simulation", [rate(100, 2000)]) == "fail"


def test_exact_constant_excess_agrees_with_the_noise_recursion():
    n, d, K, eta, sig, lam = 30, 3, 40, 0.004, 3.0, 0.5
    prob = sg.Problem("mean", np.zeros((n, d)), np.zeros(n), np.zeros((n, d)), np.zeros(n), "ridge", lam)
    ex = sg.exact_constant_excess(n=n, d=d, K=K, eta=eta, sigma=sig, lam=lam, offset=0.0)
    assert ex["total"] == pytest.approx(sg.exact_noise_excess(prob, sg.schedule("dp_shuffleg", n=n, K=K, sigma=sig),
                                                              eta), rel=1e-10)


def test_exact_dpsgd_excess_matches_a_simulation():
    n, d, q, T, eta, z, G, lam, off = 20, 2, 0.1, 300, 0.05, 2.0, 1.0, 0.1, 1.5
    rng = np.random.default_rng(5)
    trials = 40000
    x = np.zeros((trials, d))
    x[:, 0] = off
    for _ in range(T):
        b = rng.binomial(n, q, size=trials)[:, None]
        x = x - eta * (b * x / (q * n) + lam * x + z * G * rng.standard_normal((trials, d)) / (q * n))
    sim = (1 + lam) / 2 * np.sum(x**2, axis=1)
    exact = sg.exact_dpsgd_constant_excess(n=n, d=d, q=q, T=T, eta=eta, z=z, G=G, lam=lam, offset=off)
    assert sim.mean() == pytest.approx(exact, rel=4 * sim.std() / math.sqrt(trials) / exact)


def test_dpsgd_noise_multiplier_meets_its_epsilon():
    z = acc.dpsgd_noise_multiplier(0.01, 1000, 2.0, 1e-6)
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant as rdp
    a = rdp.RdpAccountant(list(acc.DPSGD_ORDERS))
    a.compose(dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(z)), 1000)
    b = rdp.RdpAccountant(list(acc.DPSGD_ORDERS))
    b.compose(dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(z * 0.999)), 1000)
    assert a.get_epsilon(1e-6) <= 2.0 < b.get_epsilon(1e-6)


@pytest.mark.parametrize("args", [(0.01, 1000, 2.0, 1e-6), (0.05, 200, 0.5, 1e-5), (0.3, 30, 8.0, 1e-5),
                                  (1 / 64, 5000, 1.0, 1e-5)])
def test_dpsgd_noise_multiplier_is_the_whole_accountants_bisection(args):
    """The order-by-order decision (dp-accounting's private per-order RDP function) gives exactly the z of the same
    bisection on the library's whole RDP accountant."""
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    q, steps, eps, delta = args

    def above(z: float) -> bool:
        a = rdp.RdpAccountant(list(acc.DPSGD_ORDERS))
        a.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), steps)
        return a.get_epsilon(delta) > eps

    assert acc.dpsgd_noise_multiplier(*args) == acc._bisect(above, eps)


def test_too_much_dpsgd_noise_is_caught_by_dpsgd_order(monkeypatch):
    pts = [rate(n, 100) for n in (10**4, 10**5)]
    assert rate_verdict("dpsgd_order", pts) == "pass"
    real = acc.dpsgd_noise_multiplier
    monkeypatch.setattr(acc, "dpsgd_noise_multiplier", lambda q, steps, eps, delta: 1000 * real(q, steps, eps, delta))
    assert rate_verdict("dpsgd_order", [rate(n, 100) for n in (10**4, 10**5)]) == "fail"


def test_interleaved_noise_without_its_amplification_is_caught_by_table44_rate(monkeypatch):
    def point_at(n: int) -> dict:
        p = cat.ShuffleGRateParams.model_validate({"instance": "interleaved", "n": n}).model_dump()
        return {"value": n} | cat.rate_point(p, 100, np.random.SeedSequence(n))

    ns = (10**5, 10**6)
    assert rate_verdict("table44_rate", [point_at(n) for n in ns]) == "pass"
    real = acc.sigma_for
    bad = []
    for n in ns:
        # the noise of a schedule without Lemma 4.6.2's amplification: sum_k 1/m_k = K, not K / (n + 1 - n_d)
        monkeypatch.setattr(acc, "sigma_for", lambda e, dl, G, inv, n=n: real(e, dl, G, inv * (n + 1 - n // 2)))
        bad.append(point_at(n))
    assert rate_verdict("table44_rate", bad) == "fail"


def test_run_dpsgd_matches_its_closed_form():
    n, d, q, T, eta, z, G, off = 20, 2, 0.1, 300, 0.05, 0.1, 50.0, 1.5
    prob = sg.Problem("mean", np.zeros((n, d)), np.zeros(n), np.zeros((n, d)), np.zeros(n))
    x1 = np.array([off, 0.0])
    last, _ = sg.run_dpsgd(prob, q=q, steps=T, eta=eta, z=z, clip=G, x1=x1, trials=40000,
                           seq=np.random.SeedSequence(8))
    sim = sg.objective(prob, last)
    exact = sg.exact_dpsgd_constant_excess(n=n, d=d, q=q, T=T, eta=eta, z=z, G=2 * G, lam=0.0, offset=off)
    assert sim.mean() == pytest.approx(exact, rel=4 * sim.std() / math.sqrt(sim.size) / exact)


def test_too_much_dpsgd_noise_is_caught_by_dpsgd_below_dp_shuffleg(monkeypatch):
    kw = dict(shift=1.0, centre=2.0, epsilon=5.0, n=200, K=10)
    assert grid_verdict("dpsgd_below_dp_shuffleg", [grid(**kw)]) == "pass"
    real = acc.dpsgd_noise_multiplier
    monkeypatch.setattr(acc, "dpsgd_noise_multiplier", lambda q, steps, eps, delta: 300 * real(q, steps, eps, delta))
    assert grid_verdict("dpsgd_below_dp_shuffleg", [grid(**kw)]) == "fail"


# --- the compiled steps against numpy's ---------------------------------------------------------------------------

def _numpy_chunk(prob, sched, *, eta, order, x1, clip, T, rng, trace=False):
    """The steps as numpy writes them, one call per operation as _run_chunk did before kernels.shuffle_steps: per
    step the gradient (sg.gradients), the clip (sg.clip_rows, which compares the norm with G where the old steps and
    the kernel compare the squared norm with G^2: the same decisions away from the boundary), the noise of the same
    blocks, x -= eta g; the proximal step per epoch."""
    n, d = prob.n, prob.d
    x = np.repeat(np.asarray(x1, dtype=np.float64)[None, :], T, axis=0)
    perm = np.tile(np.arange(n), (T, 1))
    if order == "so":
        perm = rng.permuted(perm, axis=1)
    clipped = 0
    kept = np.empty((sched.K, T, d)) if trace else None
    block = max(1, sg.CHUNK_FLOATS // (T * d))
    for k in range(sched.K):
        if order == "rr":
            perm = rng.permuted(np.tile(np.arange(n), (T, 1)), axis=1)
        nd, sig = sched.private_steps[k], sched.sigma[k]
        noisy = (nd + (n - nd if sched.noisy_public else 0)) if sig > 0 else 0
        A_ep, y_ep = prob.A[perm[:, :nd].T], prob.y[perm[:, :nd].T]
        for i in range(n):
            if i < noisy and i % block == 0:
                Z = rng.standard_normal((min(block, noisy - i), T, d)) * sig
            a, yi = (A_ep[i], y_ep[i]) if i < nd else (prob.P[i - nd], prob.yp[i - nd])
            g, c = sg.clip_rows(sg.gradients(prob.loss, x, a, yi), clip)
            clipped += c
            if i < noisy:
                g = g + Z[i % block]
            x = x - eta * g
        x = sg.prox(prob.regulariser, x, n * eta, prob.lam, prob.radius)
        if kept is not None:
            kept[k] = x
    return x, clipped, n * T * sched.K, kept


def _compiled_and_numpy(monkeypatch, loss, reg, clip, instance):
    """[(run through kernels.shuffle_steps, the same run through _numpy_chunk)] for a scalar and a per-trial eta, on
    a problem with private and public records, with CHUNK_FLOATS made small (10 steps per noise block at 7 trials)."""
    rng = np.random.default_rng(5)
    n, m, d = 23, 30, 3
    A = rng.normal(size=(n, d))
    y = (rng.random(n) < 0.5).astype(float) if loss == "logistic" else rng.normal(size=n)
    P = rng.normal(size=(m, d)) + 0.3
    yp = (rng.random(m) < 0.5).astype(float) if loss == "logistic" else rng.normal(size=m)
    prob = sg.Problem(loss, A, y, P, yp, reg, lam=0.1, radius=1.5)
    sched = sg.schedule(instance, n=n, K=4, sigma=0.7, S=2, n_d=9)
    monkeypatch.setattr(sg, "CHUNK_FLOATS", 7 * 3 * 10)
    out = []
    for eta, order in ((0.05, "rr"), (np.linspace(0.01, 0.08, 7), "so")):
        kw = dict(eta=eta, order=order, x1=np.full(d, 0.4), clip=clip, trials=7, trace=True)
        got = sg.run(prob, sched, seq=np.random.SeedSequence(3), **kw)
        real, sg._run_chunk = sg._run_chunk, _numpy_chunk
        try:
            want = sg.run(prob, sched, seq=np.random.SeedSequence(3), **kw)
        finally:
            sg._run_chunk = real
        out.append((got, want))
    return out


@pytest.mark.parametrize("loss,reg,clip", [("mean", "ball", np.inf), ("mean", "ridge", 10.0), ("mean", "none", 1.7),
                                           ("linear", "none", np.inf), ("ridge", "ridge", np.inf),
                                           ("ridge", "none", 0.5), ("logistic", "l1", np.inf),
                                           ("logistic", "none", 0.6)])
@pytest.mark.parametrize("instance", ["dp_shuffleg", "interleaved", "pub_priv"])
def test_the_compiled_steps_are_numpys(monkeypatch, loss, reg, clip, instance):
    """sg.run through kernels.shuffle_steps against the same run through numpy's steps: the same noise, orders and
    clipped count; the same iterates to the bit where no sum over coordinates decides anything (the mean and linear
    losses when no gradient is clipped), to 1e-12 otherwise. Per-trial step sizes, traces, and chunks of
    trials whose noise comes in several blocks are included."""
    for got, want in _compiled_and_numpy(monkeypatch, loss, reg, clip, instance):
        assert got.clipped_fraction == want.clipped_fraction
        if clip < 2:
            assert 0 < got.clipped_fraction < 1                              # the clip is exercised both ways
        assert got.trace is not None and want.trace is not None
        if loss in ("mean", "linear") and got.clipped_fraction == 0:       # nothing clipped: nothing summed
            assert np.array_equal(got.last, want.last) and np.array_equal(got.trace, want.trace)
        else:
            np.testing.assert_allclose(got.trace, want.trace, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("fault", ["noise 1% small", "clip threshold 10% high"])
def test_a_fault_planted_in_the_compiled_steps_is_caught_by_the_comparison(monkeypatch, fault):
    from algorithms import kernels

    real = kernels._shuffle_steps

    def planted(x, R, Y, loss, G2, clip, Z, eta):
        if fault == "noise 1% small":
            Z = Z * 0.99
        else:
            G2 = G2 * 1.21
        return real(x, R, Y, loss, G2, clip, Z, eta)

    monkeypatch.setattr(kernels, "_shuffle_steps", planted)
    pairs = _compiled_and_numpy(monkeypatch, "mean", "none", 1.7, "dp_shuffleg")
    assert any(got.clipped_fraction != want.clipped_fraction or not np.allclose(got.trace, want.trace, rtol=1e-9)
               for got, want in pairs)


def test_the_compiled_steps_refuse_what_does_not_fit():
    from algorithms import kernels

    x, R, Y, eta = np.zeros((2, 3)), np.ones((4, 2, 3)), np.zeros((4, 2)), np.ones(2)
    assert kernels.shuffle_steps(x, R, Y, "mean", np.inf, None, eta) == 0
    for args in [(x.T, R, Y), (x, R[:, :, :2], Y), (x, R, Y[:, :1]), (x, np.ones((4, 3, 3)), np.zeros((4, 3)))]:
        with pytest.raises(ValueError):
            kernels.shuffle_steps(*args, "mean", np.inf, None, eta)
    with pytest.raises(ValueError):
        kernels.shuffle_steps(x, R, Y, "mean", np.inf, np.ones((3, 2, 3)), eta)
    with pytest.raises(ValueError):
        kernels.shuffle_steps(x, R, Y, "mean", np.inf, None, np.ones(3))
    with pytest.raises(ValueError, match="unknown loss"):
        kernels.shuffle_steps(x, R, Y, "hinge", np.inf, None, eta)


@pytest.mark.parametrize("instance", ["public_only", "interleaved"])
def test_too_few_public_records_are_refused(instance):
    """An epoch's public steps read one public record each: fewer records than steps is an error, never a shorter
    epoch."""
    n, d = 5, 2
    prob = sg.Problem("mean", np.zeros((n, d)), np.zeros(n), np.zeros((2, d)), np.zeros(2))
    sched = sg.schedule(instance, n=n, K=2, sigma=1.0, n_d=1)
    with pytest.raises(ValueError, match="public records"):
        sg.run(prob, sched, eta=0.1, order="rr", x1=np.zeros(d), clip=np.inf, trials=3, seq=np.random.SeedSequence(0))
