"""Issue 12, "no pass that cannot fail": claims fixed before the run, and checks that can fail against them.

A. CLDP-SGD's privacy claim is the paper's own statement, Thm 3 (1) Eq. (5) of seed 001 (L171-177), evaluated at each
   point's resolved n, k, T, eps_ldp and delta before the run (verifiers/theorems/cldp_001.py), not an epsilon in the
   spec; the privacy check judges the accountant's epsilon of what the mechanism reported against it. Planted faults:
   the mechanism runs the randomizer at twice the resolved eps_ldp, or more rounds than the resolved T.
B. noise_calibration at an overridden sigma says 'overridden' and judges only the released variance; a planted
   too-small noise there still fails, and a resolved sigma that differs from the formula still fails.
"""
from __future__ import annotations

import copy
import dataclasses
import math

import numpy as np
import pytest
import sympy as sp

from algorithms import mechanisms
from catalog import ALGORITHMS
from catalog import isrl_004 as calibration
from engine.kinds.learning import runner
from engine.kinds.learning import spec as spec_mod
from tests.helpers import _tiny, raw, tiny_onepass, verdicts
from verifiers.accountants import subsampled_shuffle
from verifiers.checks import CHECKS, CheckSpec, Context, Point
from verifiers.theorems import THEOREMS, cldp_001

SPEC_T = (1000, 2000, 4000, 8000, 16000)          # specs/cldp_sgd_digits.yaml's sweep
DIGITS = {"n": 1797.0, "k": 300.0, "eps_ldp": 1.5, "delta0": 1e-5}


def _check(results: dict, cid: str) -> dict:
    return next(c for c in results["checks"] if c["id"] == cid)


# --- A: the paper's claim, from the spec ------------------------------------------------------------------------
def _eq5_at_order_2_by_hand(n: float, k: float, T: float, e0: float, delta: float) -> float:
    """Eq. (5) (L175) at order 2, written out from the seed with math only: Thm 1 (L145-147) at lambda = 2 has no
    j-sum, C(2,2) = 1 and Upsilon = (1 + y)^2 - 1 - 2y = y^2 times e^{-(k-1)/(8 e^eps0)}, y = gamma (e^{2 eps0} - 1)/e^eps0;
    Lemma 1's term at lambda = 2 is log(1/delta) + log(1/2) - log 2."""
    g = k / n
    kbar = math.floor((k - 1) / (2 * math.exp(e0))) + 1
    y = g * (math.exp(2 * e0) - 1) / math.exp(e0)
    rdp2 = math.log(1 + 4 * g**2 * (math.exp(e0) - 1) ** 2 / (kbar * math.exp(e0))
                    + y**2 * math.exp(-(k - 1) / (8 * math.exp(e0))))
    return T * rdp2 + math.log(1 / delta) + math.log(0.5) - math.log(2)


@pytest.mark.parametrize("T", SPEC_T)
def test_claim_is_eq5_of_the_seed_at_each_point(T):
    eps, order = cldp_001.eq5(DIGITS | {"T": float(T)})
    by_hand = _eq5_at_order_2_by_hand(1797, 300, T, 1.5, 1e-5)
    assert eps <= by_hand * (1 + 1e-12)            # a minimum over orders is at most its value at order 2
    assert order == 2 and eps == pytest.approx(by_hand, rel=1e-12)
    # the accountant (float64 log space, its own order grid) certifies the same number for a run of these parameters
    acc = subsampled_shuffle.epsilon("upper", k=300, n=1797, eps0=1.5, T=T, delta=1e-5).epsilon
    assert acc == pytest.approx(eps, rel=1e-9)


def test_claim_depends_on_every_parameter_it_names():
    base = DIGITS | {"T": 1000.0}
    eps = cldp_001.eq5_epsilon(base)
    for key, value in (("T", 2000.0), ("eps_ldp", 3.0), ("k", 600.0), ("delta0", 1e-8)):
        assert cldp_001.eq5_epsilon(base | {key: value}) > eps, key
    assert cldp_001.eq5_epsilon(base | {"n": 3594.0}) < eps           # more clients, stronger amplification


def test_claim_away_from_order_2_matches_the_accountant():
    # the seed's Fig. 2a setting (L191): the optimum is an interior order, found by both evaluations
    p = {"n": 1e6, "k": 1000.0, "T": 1e5, "eps_ldp": 2.0, "delta0": 1e-8}
    eps, order = cldp_001.eq5(p)
    acc = subsampled_shuffle.epsilon("upper", k=1000, n=10**6, eps0=2.0, T=10**5, delta=1e-8)
    assert order > 2 and order == acc.order
    assert eps == pytest.approx(acc.epsilon, rel=1e-9)


def test_claim_refuses_parameters_outside_the_theorem():
    with pytest.raises(ValueError, match="Eq. \\(5\\) needs"):
        cldp_001.eq5_epsilon(DIGITS | {"T": 1000.0, "k": 2000.0})


def test_an_optimum_the_scan_cannot_settle_is_refused_not_guessed(monkeypatch):
    p = {"n": 1e6, "k": 1000.0, "T": 1e5, "eps_ldp": 2.0, "delta0": 1e-8}          # optimum at order 28
    monkeypatch.setattr(cldp_001, "EQ5_MAX_ORDER", 16)
    with pytest.raises(ValueError, match="up to 16 .best so far at order 16. cannot rule out a larger one"):
        cldp_001.eq5(p)
    monkeypatch.setattr(cldp_001, "EQ5_MAX_ORDER", 1)                              # and a run says so in one line
    with pytest.raises(spec_mod.SpecError, match="threat_model: shuffle.thm3.privacy states no epsilon here"):
        runner.run_spec(tiny_cldp())


def test_a_cldp_spec_states_no_epsilon_and_other_specs_must():
    r = raw("cldp_sgd_digits")
    assert "epsilon" not in r["threat_model"]
    bad = copy.deepcopy(r)
    bad["threat_model"]["epsilon"] = 160.0
    with pytest.raises(spec_mod.SpecError, match="threat_model.epsilon.*states epsilon at each point's parameters"):
        spec_mod.parse(bad, "x.yaml")
    bad = copy.deepcopy(raw("mbsgd_convex"))
    del bad["threat_model"]["epsilon"]
    with pytest.raises(spec_mod.SpecError, match="threat_model.epsilon.*required field is missing"):
        spec_mod.parse(bad, "x.yaml")
    bad = copy.deepcopy(r)
    del bad["threat_model"]["delta"]
    with pytest.raises(spec_mod.SpecError, match="threat_model.delta.*required field is missing"):
        spec_mod.parse(bad, "x.yaml")


def tiny_cldp(**sweep) -> spec_mod.Spec:
    s = _tiny("cldp_sgd_digits", "tiny_cldp", {"n": 400}, 4)
    r = s.model_dump(mode="json")
    r["algorithm"]["overrides"] = {"k": 100, "eps_ldp": 1.5, "T": 600}
    r["checks"] = [c for c in r["checks"] if c["kind"] in ("privacy_accounting", "ldp_exact", "unbiased")]
    if sweep:
        r["sweep"] = sweep
    return spec_mod.parse(r, "tiny_cldp")


def _faulty_mechanism(monkeypatch, **change):
    """The catalog resolves the spec as before (the claim's parameters), but the mechanism runs with ``change``
    applied to its arguments and reports what it ran in its event: the fault is inside the algorithm."""
    entry = ALGORITHMS.get("cldp_sgd")
    real = entry.run

    def run(records, loss, **kw):
        return real(records, loss, **{**kw, **{key: f(kw[key]) for key, f in change.items()}})

    monkeypatch.setitem(ALGORITHMS._entries, "cldp_sgd", dataclasses.replace(entry, run=run))


def test_clean_run_is_judged_against_eq5_at_each_point():
    res = runner.run_spec(tiny_cldp(field="algorithm.overrides.T", values=[300, 600]))
    assert verdicts(res)["privacy"] == "pass"
    rows = _check(res, "privacy")["rows"]
    for row, T in zip(rows, (300, 600)):
        claim = cldp_001.eq5_epsilon({"n": 400.0, "k": 100.0, "T": float(T), "eps_ldp": 1.5, "delta0": 1e-5})
        assert row["epsilon_target"] == claim and row["rounds"] == T
        assert row["epsilon_accountant"] == pytest.approx(claim, rel=1e-9)
    assert rows[1]["epsilon_target"] > 1.5 * rows[0]["epsilon_target"]        # a claim per point, not one number
    # the claim is a resolved parameter, recorded before the run with where it came from
    point = res["points"][0]
    assert point["params"]["eps0"] == rows[0]["epsilon_target"]
    assert "shuffle.thm3.privacy" in point["provenance"]["eps0"]


def test_randomizer_at_twice_the_resolved_eps_ldp_is_caught_by_privacy(monkeypatch):
    clean = _check(runner.run_spec(tiny_cldp()), "privacy")["rows"][0]
    _faulty_mechanism(monkeypatch, eps_ldp=lambda e: 2 * e)       # the fault: R_inf at 2 eps0 inside the mechanism
    res = runner.run_spec(tiny_cldp())
    v = verdicts(res)
    row = _check(res, "privacy")["rows"][0]
    assert v["privacy"] == "fail"
    assert row["epsilon_target"] == clean["epsilon_target"]           # the claim did not move with the fault
    assert row["eps_ldp"] == 3.0 and row["epsilon_accountant"] > 2 * row["epsilon_target"]
    # the randomizer is exactly the 3.0-LDP randomizer its event names: the exact test has nothing to object to
    assert v["ldp"] == "pass"


def test_more_rounds_than_the_resolved_T_is_caught_by_privacy(monkeypatch):
    clean = _check(runner.run_spec(tiny_cldp()), "privacy")["rows"][0]
    _faulty_mechanism(monkeypatch, T=lambda T: T + T // 2)          # the fault: 900 rounds where the spec says 600
    res = runner.run_spec(tiny_cldp())
    row = _check(res, "privacy")["rows"][0]
    assert verdicts(res)["privacy"] == "fail"
    assert row["rounds"] == 900 and row["epsilon_target"] == clean["epsilon_target"]
    assert row["epsilon_accountant"] > row["epsilon_target"]


# --- B: noise_calibration at an overridden sigma ------------------------------------------------------------------
def tiny_lemma_d6() -> spec_mod.Spec:
    r = raw("mbsgd_lemma_d6")
    r["trials"] = 4
    r["checks"] = [c for c in r["checks"] if c["kind"] == "noise_calibration"]
    r["expect"], r.pop("quick", None), r.pop("expect_quick", None)
    r["expect"] = {}
    return spec_mod.parse(r, "tiny_lemma_d6")


def test_overridden_sigma_shows_overridden_and_judges_only_the_released_noise():
    res = runner.run_spec(tiny_lemma_d6())
    noise = _check(res, "noise")
    assert noise["verdict"] == "pass"
    row = noise["rows"][0]
    assert row["formula_matches"] == "overridden" and row["sigma_theorem"] is None
    assert "NOT verified" in noise["summary"] and "only the released noise is judged" in noise["summary"]


def test_too_little_noise_at_an_overridden_sigma_still_fails(monkeypatch):
    real = mechanisms.gaussian

    def too_little(clean, sigma, *, rng):
        return real(clean, sigma / 2, rng=rng)          # the fault: half the overridden sigma inside the mechanism

    monkeypatch.setattr(mechanisms, "gaussian", too_little)
    noise = _check(runner.run_spec(tiny_lemma_d6()), "noise")
    assert noise["verdict"] == "fail"
    assert noise["rows"][0]["formula_matches"] == "overridden"
    assert noise["rows"][0]["released_var_ratio"] == pytest.approx(0.25, rel=0.05)


def test_a_resolved_sigma_off_the_formula_still_fails(monkeypatch):
    def half_sensitivity(*, L, K, eps0, delta0):        # the fault: sensitivity L/K instead of 2L/K (seed 004 L1036)
        return np.sqrt(8 * L**2 * np.log(1.25 / delta0) / (eps0**2 * K**2))

    monkeypatch.setattr(calibration, "onepass_sigma", half_sensitivity)
    noise = _check(runner.run_spec(tiny_onepass()), "noise")
    assert noise["verdict"] == "fail"
    assert noise["rows"][0]["formula_matches"] is False            # judged, and wrong: not 'overridden'
    assert "NOT verified" not in noise["summary"]


# the check on hand-made points: a calibrated point and an overridden one side by side
def _points(*specs: tuple[float, bool, float]) -> list[Point]:
    """(sigma, overridden, released variance / sigma^2) per point; 10^6 noise values each."""
    m = 10**6
    return [Point(value=float(i), params={"sigma": s}, overridden=frozenset({"sigma"} if ov else ()), measurements={},
                  events=(), noise_sq_sum=ratio * s * s * m, noise_coords=m)
            for i, (s, ov, ratio) in enumerate(specs)]


def _judge(points: list[Point]) -> dict:
    thm = dataclasses.replace(THEOREMS.get(ALGORITHMS.get("noisy_mbsgd").privacy_theorem),
                              terms={"sigma": sp.Float(0.3)}, conditions=())     # a calibration of sigma = 0.3
    check = CheckSpec(id="noise", kind="noise_calibration", confidence=0.999)
    res = CHECKS.get("noise_calibration").evaluate(check, thm, points, Context("noisy_mbsgd", None, thm))
    return {"verdict": res.verdict, "summary": res.summary, "matches": [r["formula_matches"] for r in res.rows]}


def test_mixed_points_say_where_the_calibration_was_not_judged():
    out = _judge(_points((0.3, False, 1.0), (0.7, True, 1.0)))
    assert out["verdict"] == "pass" and out["matches"] == [True, "overridden"]
    assert "at 1 point(s)" in out["summary"] and "not judged at the 1 point(s) where sigma is overridden" in out["summary"]
    assert _judge(_points((0.31, False, 1.0), (0.7, True, 1.0)))["verdict"] == "fail"    # calibrated point off
    assert _judge(_points((0.3, False, 1.0), (0.7, True, 0.9)))["verdict"] == "fail"     # overridden point's noise short
