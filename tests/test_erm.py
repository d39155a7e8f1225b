"""The ERM path: Algorithm 1 for ERM (Thm F.1), fixed data sets shared by the trials, real packaged data,
the Moreau-envelope path of Algorithm 2, and the checks' refusal to pass a vacuous bound."""
from __future__ import annotations

import copy
import dataclasses
import math

import numpy as np
import pytest

from catalog import isrl_004 as calibration
from engine.kinds.learning import problem, runner
from engine.kinds.learning import spec as spec_mod
from tests.helpers import raw, verdicts
from verifiers import checks
from verifiers.checks import bound
from verifiers.theorems import isrl_004


def _spec(name: str, **over) -> spec_mod.Spec:
    r = copy.deepcopy(raw(name))
    r["sweep"] = None
    r["checks"] = [c for c in r["checks"] if c["kind"] != "rate"]
    r["expect"], r["expect_quick"] = {}, {}
    for key, value in over.items():
        if isinstance(value, dict):
            r[key] = {**r.get(key, {}), **value}
        else:
            r[key] = value
    return spec_mod.parse(r, name)


@pytest.mark.parametrize("n,eps,d", [(284, 1.0, 30), (2000, 2.0, 10), (50, 0.5, 5)])
def test_erm_rounds_and_batch_are_a_fixed_point_of_thm_f1(n, eps, d):
    delta, M, N = 1e-4, 2.0, 2
    R1 = calibration.erm_convex_R1(beta=0.25, D=2.0, L=1.0, M=M, eps0=eps, n=n, d=d, delta0=delta)
    R, K = calibration.erm_rounds_and_batch(R1=R1, n=n, N=N, M=M, eps0=eps, delta0=delta, d=d, K_fixed=None)
    k_min = eps * n / (4 * math.sqrt(2 * R * math.log(2 / delta)))          # Thm F.1 (L1056), by hand
    assert K >= k_min - 1e-9 and (K == 1 or K - 1 < k_min)
    second = eps**2 * n**2 / (K * d * math.log(1 / delta)) if M * K < N * n else 0.0
    assert R == math.ceil(max(R1, second) - 1e-9)


def test_erm_mode_shares_one_data_set_across_trials():
    spec = _spec("mbsgd_convex", data={"mode": "erm", "n": 50, "d": 4}, checks=[
        {"id": "noise", "kind": "noise_calibration"}, {"id": "empirical_bound", "kind": "bound", "theorem": "isrl.lemma_d6_1"}])
    p = problem.build(spec, 1, np.random.default_rng(2))
    assert p.fixed is not None and p.fixed[0].shape == (10, 50, 4)
    q = problem.build(spec, 1, np.random.default_rng(3))
    assert not np.allclose(p.fixed[0], q.fixed[0])          # a new data set per sweep point, shared by its trials
    res = runner.run_spec(spec, trials=4)
    assert "ERM" in res["data_mode"]


def test_breast_cancer_is_dealt_to_silos_and_scaled():
    spec = _spec("erm_breast_cancer")
    p = problem.build(spec, 5, np.random.default_rng(0))
    X, y = p.fixed
    assert X.shape == (2, 284, 30) and set(np.unique(y)) == {-1.0, 1.0}
    assert np.linalg.norm(X, axis=-1).max() == pytest.approx(1.0)
    assert p.consts["L"] == pytest.approx(1.0) and p.consts["beta"] == pytest.approx(0.25)   # logistic, r = 1
    assert p.empirical.minimum.gap < 1e-6


def test_erm_optimiser_converges_without_noise():
    """The same ERM schedule with the noise switched off (override) must approach the optimum: the
    saturation of erm_breast_cancer is the calibration's noise, not the optimiser."""
    spec = _spec("erm_breast_cancer", algorithm={"kind": "accelerated_mbsgd_erm", "overrides": {"sigma": 1e-9}},
                 threat_model={"kind": "isrl", "epsilon": 8.0, "delta": 1e-4},
                 checks=[{"id": "noise", "kind": "noise_calibration"}])
    r = spec.model_dump(mode="json")
    r["checks"] = [{"id": "rate", "kind": "rate", "theorem": "isrl.thm4_1.convex"}]
    r["sweep"] = {"field": "threat_model.epsilon", "values": [8.0, 8.5, 9.0]}     # a rate check needs a sweep
    res = runner.run_spec(spec_mod.parse(r, "np.yaml"), trials=3)
    pt = res["points"][0]
    assert np.mean(pt["measurements"]["empirical_excess_risk"]) < 0.15 * pt["params"]["Delta"]


def test_hinge_runs_on_its_moreau_envelope_with_thm_d2_beta():
    spec = _spec("mbsgd_hinge")
    res = runner.run_spec(spec, trials=3)
    p = res["points"][0]["params"]
    want = calibration.alg2_moreau_beta(L=p["L"], D=p["D"], M=p["M"], n=int(p["n"]), d=int(p["d"]),
                                        eps0=p["eps0"], delta0=p["delta0"], mu=p["mu"])
    assert p["beta_s"] == pytest.approx(want) and p["beta"] == pytest.approx(want + p["mu"])
    assert verdicts(res)["noise"] == "pass"


@pytest.mark.parametrize("change,field", [
    ({"algorithm": {"kind": "accelerated_mbsgd", "variant": "one_pass"}}, "loss.kind"),    # one-pass: smooth only
    ({"checks": [{"id": "b", "kind": "bound", "theorem": "isrl.lemma_d6_1"}]}, "checks.0.theorem"),  # needs smooth
    ({"checks": [{"id": "b", "kind": "bound", "theorem": "isrl.alg2.population_explicit"}]}, "checks.0.theorem"),
    ({"data": {"kind": "breast_cancer", "N": 600}}, "data.N"),
    ({"data": {"kind": "breast_cancer", "N": 4, "n": 200}}, "data.n"),
    ({"sweep": {"field": "data.d", "values": [5, 10, 20]}}, "sweep.field"),
])
def test_inconsistent_erm_and_nonsmooth_specs_are_refused(change, field):
    r = copy.deepcopy(raw("mbsgd_hinge"))
    r["expect"] = {}
    r.update(change)
    with pytest.raises(spec_mod.SpecError) as info:
        spec_mod.parse(r, "f.yaml")
    assert str(info.value).startswith(f"f.yaml: {field}:"), str(info.value)


def test_a_vacuous_bound_is_inapplicable_never_pass():
    """A bound above sup_W F - F* cannot be exceeded by any model: it must not count as a pass."""
    params = {"D": 2.0, "eta": 0.1, "R": 10, "d": 5, "sigma": 50.0, "M": 2.0, "L": 1.0, "beta": 1.0,
              "risk_max": 0.2, "stich_mu": 0.0}
    pt = checks.Point(value=None, params=params, overridden=frozenset(), measurements={
        "empirical_excess_risk": np.full(10, 0.19)}, events=(), noise_sq_sum=0.0, noise_coords=0)
    spec = checks.CheckSpec(id="b", kind="bound", confidence=0.95)
    res = bound.bound(spec, isrl_004.LEMMA_D6_1, [pt], None)
    assert res.verdict == "inapplicable" and "vacuous" in res.summary
    small = {**params, "sigma": 0.01, "eta": 0.05, "R": 4000}          # bound 0.035 < sup_W F - F* = 0.2
    below = dataclasses.replace(pt, params=small, measurements={"empirical_excess_risk": np.full(10, 0.01)})
    assert bound.bound(spec, isrl_004.LEMMA_D6_1, [below], None).verdict == "pass"
    above = dataclasses.replace(pt, params=small)             # measured 0.19 > 0.035
    assert bound.bound(spec, isrl_004.LEMMA_D6_1, [above], None).verdict == "fail"


def test_erm_strongly_convex_uses_the_multistage_schedule_and_stays_private():
    r = copy.deepcopy(raw("erm_breast_cancer"))
    r.update(sweep=None, expect={}, expect_quick={}, trials=3)
    r["loss"]["mu"] = 0.05
    r["checks"] = [{"id": "noise", "kind": "noise_calibration"}, {"id": "privacy", "kind": "privacy_accounting"}]
    res = runner.run_spec(spec_mod.parse(r, "strong.yaml"), trials=3)
    p = res["points"][0]["params"]
    assert p["stages"] >= 1 and "multi-stage AC-SA of App. E.1" in res["points"][0]["provenance"]["stages"]
    assert p["lam"] == 0.0 and p["mu"] == 0.05           # no extra regulariser: the strong convexity is the loss's
    assert verdicts(res) == {"noise": "pass", "privacy": "pass"}
