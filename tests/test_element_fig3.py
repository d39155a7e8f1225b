"""Seed 002's §4.2 / Fig. 3 (catalog/element_fig3_002.py; numerics algorithms/element_sgd.py run_many / audit_run /
audit_scores; checks verifiers/checks/element_fig3.py): the calibration pinned against the paper's accountant, the
many-configuration SGD against the one-configuration one, the orderings on hand-built inputs, a planted fault for
every check kind that makes it fail, and bad parameters refused in one line."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from algorithms import element_sgd as es
from catalog import MECHANISMS
from catalog import element_fig3_002 as cat
from engine.kinds.mechanism.spec import parse_mechanism
from engine.specbase import SpecError
from tests.helpers import raw
from verifiers.accountants import element_rdp as er
from verifiers.checks import element_fig3 as ck

DELTA = 1000**-1.1
EPS = [0.5, 1.0, 2.0]


def _check(kind: str, confidence: float = 0.99) -> SimpleNamespace:
    return SimpleNamespace(id=kind, kind=kind, confidence=confidence)


def _params(**kw) -> dict:
    return cat.Fig3Params.model_validate(kw).model_dump()


# --------------------------------------------------------------------------------------------------------------
# calibration and the numerics


@pytest.mark.parametrize("eps,q", [(0.5, 0.02), (1.0, 0.05), (8.0, 0.02), (4.0, 0.1), (16.0, 0.02), (0.05, 0.2)])
def test_calibrated_sigma_gives_the_papers_epsilon_back(eps, q):
    """Pinned against er.paper_epsilon itself (the full order grid), not the capped copy the search uses."""
    s = cat.calibrate(eps, q, 200, DELTA)
    assert er.paper_epsilon(q, s, 200, DELTA).epsilon == pytest.approx(eps, rel=1e-6)
    assert cat.noise_multiplier("user", eps, q, _params()) == pytest.approx(10 * s)
    assert cat.noise_multiplier("nonprivate", None, q, _params()) == 0.0


@pytest.mark.parametrize("sigma", [0.6, 1.5, 11.0, 45.0])
def test_capped_order_grid_is_the_papers_accountant(sigma):
    full = er.paper_epsilon(0.05, sigma, 200, DELTA)
    capped = cat.paper_conversion(0.05, sigma, 200, DELTA)
    assert capped.epsilon == full.epsilon and capped.alpha == full.alpha


def test_run_many_is_the_one_configuration_run():
    """Full batches (q = 1), no noise: (15) is deterministic, and run_many (two step sizes at once, matrix products)
    must give es.run's iterates (Alg. 1 through sgd_el / batch_sum) on the same data."""
    prob = es.make_problem(4, 5, 6, 3, 1)
    child = np.random.SeedSequence(9).spawn(1)[0]
    z = es.sample_z(prob, np.random.default_rng(child), (3, 30))
    ref = es.run(prob, n=30, T=16, batch=30, alpha0=0.4, beta=0.5, rho=2.0, sigma=0.0, radius=1e9, poisson=False,
                 trials=3, seq=np.random.SeedSequence(9))
    out = es.run_many(z, prob.sizes, updates=15, q=1.0, alpha0=np.array([0.4, 0.1]), sigma=np.zeros(2), rho=2.0,
                      rng=np.random.default_rng(0))
    np.testing.assert_allclose(out.last[0], ref.theta_last, atol=1e-12)
    np.testing.assert_allclose(out.average[0], ref.theta_bar, atol=1e-12)
    assert es.sample_users(prob, np.random.default_rng(child), (3, 30)) == pytest.approx(z, abs=1e-12)


def test_run_many_noise_is_rho_sigma_per_configuration():
    """With no users sampled (zero data) each step is -alpha_i rho sigma N(0, I) / (q n): the final iterate's variance
    is (rho sigma / (q n))^2 sum_i alpha_i^2, per configuration."""
    z = np.zeros((4000, 5, 2, 3))
    q, rho, alpha0 = 0.4, 2.0, np.array([0.3, 1.0])
    sig = np.array([1.0, 3.0])
    out = es.run_many(z, (1, 1), updates=6, q=q, alpha0=alpha0, sigma=sig, rho=rho, rng=np.random.default_rng(2))
    a2 = (es.step_sizes(alpha0, 6) ** 2).sum(axis=0)
    want = (rho * sig / (q * 5)) ** 2 * a2
    got = out.last.var(axis=(1, 2))
    np.testing.assert_allclose(got, want, rtol=0.05)


def test_run_many_refuses_active_clipping():
    z = np.full((1, 3, 2, 2), 3.0)
    with pytest.raises(ValueError, match="clipping"):
        es.run_many(z, (1, 1), updates=2, q=0.5, alpha0=np.ones(1), sigma=np.ones(1), rho=2.0,
                    rng=np.random.default_rng(0))


# --------------------------------------------------------------------------------------------------------------
# the orderings on hand-built points


def _point(k: int, el: list[float], us: list[float], npv: float, *, trials: int = 400, seed: int = 0,
           acc: list[dict] | None = None, audit: dict | None = None, unit: str = "element") -> dict:
    """A point as run_point makes it: errors scattered by 10 % around the given means (element and user paired:
    they share the scatter of the trial's data set)."""
    rng = np.random.default_rng(seed + k)
    common = 1 + 0.1 * rng.standard_normal(trials)

    def errs(mean: float) -> list[float]:
        return (mean * (common + 0.03 * rng.standard_normal(trials))).tolist()

    return {"k": k, "eps": EPS, "params": {"T": 200}, "relation": {"label": unit, "unit": unit},
            "methods": {"element": [{"eps": e, "errors": errs(v)} for e, v in zip(EPS, el)],
                        "user": [{"eps": e, "errors": errs(v)} for e, v in zip(EPS, us)],
                        "nonprivate": [{"eps": None, "errors": errs(npv)}]},
            "accounting": acc or [], "audit": audit}


def _fig3_like() -> list[dict]:
    """Fig. 3's picture: the element level falls with k towards the non-private error, which falls too; the user
    level high and flat."""
    return [_point(2, [0.8, 0.5, 0.35], [1.0, 0.98, 0.95], 0.10),
            _point(5, [0.45, 0.28, 0.17], [0.99, 0.97, 0.93], 0.08),
            _point(8, [0.32, 0.19, 0.12], [0.98, 0.96, 0.92], 0.07)]


@pytest.mark.parametrize("kind", ["el_error_falls_with_k", "nonprivate_falls_with_k", "user_flat_in_k",
                                  "faster_convergence_with_k", "element_below_user"])
def test_orderings_pass_on_the_figure_and_cite_it(kind):
    r = ck.FIG3_CHECKS.get(kind)(_check(kind), "element_sgd_fig3", _fig3_like())
    assert r.verdict == "pass", r.summary
    assert r.claims == ("002 §4.2 / Fig. 3",)


def test_orderings_need_two_values_of_k():
    r = ck.el_error_falls_with_k(_check("x"), "m", _fig3_like()[:1])
    assert r.verdict == "inapplicable"


def test_no_noise_reduction_with_k_is_caught_by_el_error_falls_with_k():
    """Planted: the element-level noise grows with k (sigma k instead of sigma): its error rises with k."""
    pts = _fig3_like()
    pts[2] = _point(8, [0.9, 0.6, 0.4], [0.98, 0.96, 0.92], 0.07)
    assert ck.el_error_falls_with_k(_check("x"), "m", pts).verdict == "fail"
    pts[2] = _point(8, [0.45, 0.28, 0.17], [0.98, 0.96, 0.92], 0.07, seed=5)   # flat from k = 5: undecided
    assert ck.el_error_falls_with_k(_check("x"), "m", pts).verdict == "inconclusive"


def test_nonprivate_error_rising_with_k_is_caught_by_nonprivate_falls_with_k():
    pts = _fig3_like()
    pts[2] = _point(8, [0.32, 0.19, 0.12], [0.98, 0.96, 0.92], 0.12)
    assert ck.nonprivate_falls_with_k(_check("x"), "m", pts).verdict == "fail"


def test_user_level_falling_like_the_element_level_is_caught_by_user_flat_in_k():
    """Planted: the user level's noise divided by k (a user-level run that gains from k as much as the element
    level): its relative fall exceeds the element level's."""
    pts = _fig3_like()
    pts[0] = _point(2, [0.8, 0.5, 0.35], [2.0, 1.6, 1.2], 0.10)
    pts[2] = _point(8, [0.32, 0.19, 0.12], [0.5, 0.4, 0.3], 0.07)
    r = ck.user_flat_in_k(_check("x"), "m", pts)
    assert r.verdict == "fail", r.summary


def test_slower_convergence_with_more_clusters_is_caught_by_faster_convergence_with_k():
    pts = _fig3_like()
    pts[2] = _point(8, [0.6, 0.4, 0.3], [0.98, 0.96, 0.92], 0.07)
    assert ck.faster_convergence_with_k(_check("x"), "m", pts).verdict == "fail"


def test_user_level_noise_on_the_element_level_is_caught_by_element_below_user():
    """Planted: the element level run with the user level's noise and the user level with the element level's (the
    multipliers swapped): the element level's error is then above the user level's."""
    pts = _fig3_like()
    pts[1] = _point(5, [0.99, 0.97, 0.93], [0.45, 0.28, 0.17], 0.08)
    assert ck.element_below_user(_check("x"), "m", pts).verdict == "fail"


# --------------------------------------------------------------------------------------------------------------
# privacy of the runs


def _chosen(q: float, eps: float, user_factor: float = 10.0) -> dict:
    s = cat.calibrate(eps, q, 200, DELTA)
    return {"element": {"q": q, "sigma": s, "alpha0": 0.5}, "user": {"q": q, "sigma": user_factor * s, "alpha0": 0.1}}


def test_cor31_accountant_where_users_hold_k_clusters_is_caught_by_sgd_accounting():
    """Cor 3.1 reasons with the pair (1, -1); users holding k >= 2 clusters make the worst element pair (k, k - 2).
    At k = 1 the claim holds (pass), at k = 5 our exact epsilon exceeds it (fail); Cor 3.2's user level passes."""
    p = _params()
    one = _point(1, [0.5] * 3, [1.0] * 3, 0.1, acc=[cat.accounting(p, 1, 1.0, _chosen(0.05, 1.0))])
    five = _point(5, [0.5] * 3, [1.0] * 3, 0.1, acc=[cat.accounting(p, 5, 1.0, _chosen(0.05, 1.0))])
    assert ck.sgd_accounting(_check("a"), "m", [one]).verdict == "pass"
    r = ck.sgd_accounting(_check("a"), "m", [one, five])
    assert r.verdict == "fail" and r.claims == ("002 Cor 3.1",)
    assert five["accounting"][0]["element"]["claim"] == pytest.approx(1.0, rel=1e-6)
    assert five["accounting"][0]["element"]["exact_lower"] > 1.2          # exact, pair (5, 3): 1.21 .. 1.24
    for pt in (one, five):
        pt["relation"] = {"label": "user", "unit": "user"}
    r = ck.sgd_accounting(_check("a"), "m", [one, five])
    assert r.verdict == "pass" and r.claims == ("002 Cor 3.2",)


def test_user_noise_not_scaled_by_k_wedge_m_is_caught_by_sgd_accounting():
    p = _params()
    pt = _point(5, [0.5] * 3, [1.0] * 3, 0.1, unit="user",
                acc=[cat.accounting(p, 5, 1.0, _chosen(0.05, 1.0, user_factor=1.0))])
    assert ck.sgd_accounting(_check("a"), "m", [pt]).verdict == "fail"


def _audit(p: dict, k: int, eps: float, q: float) -> dict:
    prob = es.make_problem(p["d"], p["K"], p["m"], k, 0)
    chosen = {"q": q, "sigma": cat.calibrate(eps, q, p["T"], cat.delta_of(p)), "alpha0": 0.3}
    return cat.audit(p, prob, cat.ELEMENT, chosen, np.random.SeedSequence(4))


def test_noise_too_small_inside_the_sgd_is_caught_by_sgd_audit(monkeypatch):
    """Users of one cluster (k = 1: the pair (1, -1) is Cor 3.1's own, so the claim holds): the audit of (15) does not
    refute it; with the SGD's noise divided by 10 (planted in es.noise_scale, which run_many and audit_run use) it
    does."""
    p = _params(n=100, m=4, d=3, K=4, k=1, T=20, audit_trials=3000, audit_users=3, audit_eps=1.0, q_lo=0.1, q_hi=0.2)
    clean = _audit(p, 1, 1.0, 0.1)
    pt = _point(1, [0.5] * 3, [1.0] * 3, 0.1, audit=clean)
    r = ck.sgd_audit(_check("au"), "m", [pt])
    assert r.verdict == "pass" and clean["epsilon_lower"] < 1.0 and r.claims == ("002 Cor 3.1",)
    monkeypatch.setattr(es, "noise_scale", lambda rho, sigma: rho * sigma / 10)
    pt["audit"] = _audit(p, 1, 1.0, 0.1)
    r = ck.sgd_audit(_check("au"), "m", [pt])
    assert r.verdict == "fail" and pt["audit"]["epsilon_lower"] > 2.0, r.summary


def test_audit_scores_reconstruct_the_releases():
    """Without noise the residual the auditor reconstructs is exactly the canary's B_c a rho e_1: the scores then
    separate the two sides perfectly whenever the canary was sampled."""
    prob = es.make_problem(3, 4, 4, 2, 0)
    z = es.sample_z(prob, np.random.default_rng(1), (2,))
    e1 = np.array([1.0, 0.0, 0.0])
    run = es.audit_run(z, prob.sizes, canary_step=4.0 * e1, canary_elements=2, updates=10, q=0.3, alpha0=0.5,
                       sigma=1e-9, rho=2.0, trials=50, rng=np.random.default_rng(3))
    q, n = 0.3, 3
    th = run.thetas
    steps = es.sgd_el(th[:, 0, None, :], z[None], es.membership(prob.sizes), alpha=0.5, rho=2.0, radius=np.inf)
    M = (th[:, 0] - th[:, 1]) * q * n / 0.5
    resid = M - (steps * run.others[:, 0, :, None]).sum(axis=1)
    np.testing.assert_allclose(resid, run.canary[:, 0, None] * 4.0 * e1, atol=1e-6)


# --------------------------------------------------------------------------------------------------------------
# the entry and its parameters


def test_entry_is_registered_with_both_relations():
    e = MECHANISMS.get("element_sgd_fig3")
    assert [r.unit for r in e.relations] == ["element", "user"] and e.data
    assert set(e.checks.names()) == {"el_error_falls_with_k", "nonprivate_falls_with_k", "user_flat_in_k",
                                     "faster_convergence_with_k", "element_below_user", "sgd_accounting", "sgd_audit"}


def test_tiny_run_point_has_what_the_checks_read():
    p = _params(n=40, m=6, d=3, K=4, k=2, T=10, eps_count=2, q_lo=0.1, q_hi=0.2, alpha_count=2, val_trials=2,
                audit_trials=100, audit_users=2)
    pt = {"value": 2} | cat.run_point(p, 6, np.random.SeedSequence(1))
    assert {m: len(v) for m, v in pt["methods"].items()} == {"element": 2, "user": 2, "nonprivate": 1}
    assert all(len(r["errors"]) == 6 for v in pt["methods"].values() for r in v)
    assert pt["accounting"][0]["element"]["pair"] == [2.0, 0.0] and pt["audit"]["trials_per_side"] == 50
    assert ck.element_below_user(_check("x"), "m", [pt]).verdict in {"pass", "fail", "inconclusive"}
    bullets, body = cat.report({"points": [pt], "trials": 6, "citation": "c", "sweep": {"field": "k"},
                                "spec": {"params": p}})
    assert any("Tuning" in b for b in bullets) and len(body) > 5


@pytest.mark.parametrize("change, where, words", [
    ({"k": 11}, "params.k", "K = 10"),
    ({"k": 5, "m": 4}, "params.k", "empty"),
    ({"q_hi": 0.01}, "params.q_hi", "q grid"),
    ({"audit_eps": 3.0}, "params.audit_eps", "not in the eps grid"),
    ({"rho": 1.0}, "params.rho", "2"),
    ({"audit_trials": 50}, "params.audit_trials", "at least 100"),
    ({"eps_count": 7}, "params.eps_lo", "outside"),
    ({"surprise": 1}, "params.surprise", ""),
])
def test_bad_params_are_refused_in_one_line(change, where, words):
    r = raw("element_sgd_fig3")
    r["params"] = r["params"] | change
    r["sweep"] = None
    with pytest.raises(SpecError) as e:
        parse_mechanism(r, "bad.yaml")
    msg = str(e.value)
    assert "\n" not in msg and where in msg and words in msg


def test_the_shipped_spec_runs_the_papers_sizes():
    p = parse_mechanism(raw("element_sgd_fig3"), "s.yaml").params
    assert (p["n"], p["m"], p["d"], p["K"], p["T"]) == (1000, 50, 10, 10, 200)
    assert cat.eps_grid(p) == [0.5, 1.0, 2.0, 4.0, 8.0] and math.isclose(cat.delta_of(p), 1000**-1.1)


def test_the_report_draws_fig3(tmp_path):
    """The entry's own figure (MechanismEntry.figure): error against eps per k and method, referenced by the report."""
    import json as _json
    import shutil
    from pathlib import Path as _Path

    from engine.cli import main

    src = _Path(__file__).resolve().parents[1] / "reports" / "element_sgd_fig3.json"
    shutil.copy(src, tmp_path / "element_sgd_fig3.json")
    assert main(["report", str(tmp_path / "element_sgd_fig3.json")]) == 0
    assert (tmp_path / "element_sgd_fig3_fig3.png").stat().st_size > 5000
    assert "![element_sgd_fig3](element_sgd_fig3_fig3.png)" in (tmp_path / "element_sgd_fig3.md").read_text()
    assert _json.loads(src.read_text())["mechanism"] == "element_sgd_fig3"
