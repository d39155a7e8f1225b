"""Seed 002's element-level private SGD as a learning spec (catalog/element_learning_002.py): the element relation
is accepted only for algorithms that declare it; a clean run of users holding one element vector passes the privacy
accounting and the audit; users holding 3 vectors fail them (the finding on Cor 2.5 / Cor 3.1); and planted faults
(the curator's noise halved, the release reporting K = 1 element vector when users hold 3) are caught. Reference
values: Cor 2.5's pair at K = 1 is the pair (1, -1) of verifiers/accountants/element_rdp.py, pinned there against
its own tests; the event's fields are checked against the data the run drew."""
from __future__ import annotations

import copy
import dataclasses
import json

import numpy as np
import pytest
import yaml

from algorithms import element_sgd as es
from algorithms.data import Records
from algorithms.events import ElementGaussianRelease
from algorithms.streams import streams_for
from engine.cli import main
from engine.kinds.learning import runner
from engine.kinds.learning import spec as spec_mod
from engine.specbase import SpecError
from tests.helpers import raw
from verifiers.accountants import element_rdp as er
from verifiers.accountants import element_sgd as acc

# a small point where the audit has power: q = 0.02 of 500 users, T = 200 rounds, Cor 3.1 calibrated to eps = 2
SMALL = {"n": 500, "d": 3, "K": 5, "m": 6}


def _spec(k: int, *, eps: float = 2.0, audit: bool = True, trials: int = 2, **alg) -> spec_mod.Spec:
    r = copy.deepcopy(raw("element_sgd_learning"))
    r["data"].update(SMALL, k=k, eval_users=1000)
    r["threat_model"]["epsilon"] = eps
    r["trials"], r["sweep"], r["quick"], r["expect"], r["expect_quick"] = trials, None, None, {}, {}
    r["algorithm"].update(alg)
    r["checks"] = [{"id": "privacy", "kind": "privacy_accounting"}] + (
        [{"id": "audit", "kind": "privacy_audit", "audit_trials": 4000}] if audit else [])
    return spec_mod.parse(r, f"tiny_element_k{k}")


def _verdicts(spec: spec_mod.Spec) -> dict:
    """The checks' verdicts by id, and the point's event and resolved parameters."""
    res = runner.run_spec(spec)
    p = res["points"][0]
    return {c["id"]: c["verdict"] for c in res["checks"]} | {"_event": p["events"][0], "_params": p["params"]}


def test_validation_refuses_element_for_an_algorithm_that_does_not_declare_it(tmp_path, capsys):
    r = raw("central_sgd")
    r["threat_model"]["neighbouring"] = {"unit": "element", "change": "replace_one"}
    path = tmp_path / "central_element.yaml"
    path.write_text(yaml.safe_dump(r))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "threat_model.neighbouring" in err and "element/replace_one" in err and "element_sgd" in err


def test_element_sgd_needs_the_element_relation():
    r = raw("element_sgd_learning")
    del r["threat_model"]["neighbouring"]
    with pytest.raises(SpecError, match=r"threat_model.neighbouring: record/replace_one \(the central default\)"):
        spec_mod.parse(r, "no_relation")


def test_element_data_rules_are_one_line_errors():
    r = raw("element_sgd_learning")
    r["data"]["k"] = 11
    with pytest.raises(SpecError, match=r"data.k: k = 11 clusters per user > K = 10"):
        spec_mod.parse(r, "bad_k")


def test_the_run_reports_the_release_it_made():
    """The event's fields against what was drawn: the noise multiplier applied, the elements a user holds (every
    user of §4.2's split holds k non-empty clusters), the rounds and the most rounds one user was sampled in."""
    spec = _spec(3, audit=False)
    _, prob = runner._problem(json.dumps(spec.model_dump(mode="json"), sort_keys=True), spec.seed, None)
    consts, res = runner.resolve_point(spec, prob)
    ps = runner.point_seed(spec.seed, None)
    rec = Records(prob.population, streams_for(ps, (0, 1, 2), 0), 3, SMALL["n"], materialise=True)
    out = es.run_learning(rec, prob.loss, **res.run_kwargs, rng=streams_for(ps, (0, 1, 2), 1))
    (e,) = out.events
    assert isinstance(e, ElementGaussianRelease)
    assert e.elements == 3 and e.rounds == res.params["T"] == 200 and e.sampling == "poisson"
    assert e.sigma == pytest.approx(res.params["sigma"], rel=1e-15) and e.q == 0.02
    assert 1 <= e.max_record_uses == int(out.record_uses.max())
    # the released noise: sum of squares over T d coordinates, in units of rho, near sigma^2 per coordinate
    ratio = out.noise_sq.sum() / out.noise_coords.sum() / e.sigma**2
    assert abs(ratio - 1) < 5 * np.sqrt(2 / out.noise_coords.sum())
    # trials are independent of their batch: trial 1 alone gives the same model
    rec1 = Records(prob.population, streams_for(ps, (1,), 0), 1, SMALL["n"], materialise=True)
    one = es.run_learning(rec1, prob.loss, **res.run_kwargs, rng=streams_for(ps, (1,), 1))
    np.testing.assert_allclose(one.w[0], out.w[1], rtol=0, atol=1e-12)


def test_accountant_at_one_element_is_cor25s_pair_and_grows_with_elements():
    e1 = ElementGaussianRelease(sigma=1.5, rho=2.0, q=0.05, sampling="poisson", batch_size=25, pool_size=500,
                                elements=1, rounds=50, max_record_uses=9)
    e3 = dataclasses.replace(e1, elements=3)
    eps1, _ = acc.epsilon((e1,), 2.0, 1e-5)
    eps3, method = acc.epsilon((e3,), 2.0, 1e-5)
    assert eps1 == pytest.approx(er.tight_epsilon(0.05, 1.5, 50, 1e-5, 1.0, -1.0), rel=1e-12)
    assert eps1 <= er.paper_epsilon(0.05, 1.5, 50, 1e-5).epsilon          # the PLD is tighter than Mironov's RDP
    assert eps3 > eps1 and "(3, 1)" in method
    labelled, _ = acc.epsilon((dataclasses.replace(e3, sampling="fixed_size"),), 2.0, 1e-5)
    assert labelled >= eps3 * (1 - 1e-3)                                   # B_u revealed: an upper bound


@pytest.mark.slow
def test_users_with_one_element_pass_and_three_fail():
    clean = _verdicts(_spec(1))
    assert clean["privacy"] == "pass" and clean["audit"] == "pass"
    three = _verdicts(_spec(3))
    assert three["privacy"] == "fail"          # the finding: Cor 3.1's pair is that of one vector per user


def test_clean_one_element_run_passes_accounting():
    assert _verdicts(_spec(1, audit=False, overrides={"T": 50}))["privacy"] == "pass"


def test_halved_noise_is_caught(monkeypatch):
    """The curator's noise halved inside the algorithm: the release reports the multiplier it applied, and the
    accountant of users holding one element vector (where the clean run passes) then exceeds the claim."""
    monkeypatch.setattr(es, "noise_scale", lambda rho, sigma: rho * sigma / 2)
    got = _verdicts(_spec(1, audit=False, overrides={"T": 50}))
    assert got["_event"]["sigma"] == pytest.approx(got["_params"]["sigma"] / 2, rel=1e-12)
    assert got["privacy"] == "fail"


def test_release_reporting_one_element_when_users_hold_three_is_caught_by_the_audit(monkeypatch):
    """The release under-reports its users' elements (K = 1 for users holding 3): the accountant then uses Cor 2.5's
    pair and the accounting passes, but the audit's canary holds as many elements as the data's users, and its lower
    bound exceeds that accountant's epsilon."""
    real = es.ElementGaussianRelease
    monkeypatch.setattr(es, "ElementGaussianRelease", lambda **kw: real(**(kw | {"elements": 1})))
    got = _verdicts(_spec(3))
    assert got["_event"]["elements"] == 1
    assert got["privacy"] == "pass" and got["audit"] == "fail"


def test_fixed_size_sampling_runs_q_n_users_and_is_accounted_by_the_labelled_pair():
    spec = _spec(3, audit=False, trials=2, variant="fixed_size", overrides={"T": 20})
    _, prob = runner._problem(json.dumps(spec.model_dump(mode="json"), sort_keys=True), spec.seed, None)
    _, res = runner.resolve_point(spec, prob)
    ps = runner.point_seed(spec.seed, None)
    rec = Records(prob.population, streams_for(ps, (0, 1), 0), 2, SMALL["n"], materialise=True)
    out = es.run_learning(rec, prob.loss, **res.run_kwargs, rng=streams_for(ps, (0, 1), 1))
    (e,) = out.events
    assert e.sampling == "fixed_size" and e.batch_size == 10 and e.rounds == 20
    eps, method = acc.epsilon((e,), 2.0, float(res.params["delta0"]))
    assert "labelled" in method
    assert eps == pytest.approx(er.labelled_tight_epsilon(e.q, e.sigma, 20, float(res.params["delta0"])), rel=1e-12)
