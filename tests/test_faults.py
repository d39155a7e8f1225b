"""Planted faults inside the mechanisms and the code (not the spec), and which check catches each."""
from __future__ import annotations

import numpy as np

from algorithms import mechanisms, sampling
from catalog import isrl_004 as calibration
from engine.kinds.learning import runner
from tests.helpers import tiny_mbsgd, tiny_onepass, verdicts
from verifiers.theorems import isrl_004


def test_clean_runs_pass():
    assert verdicts(runner.run_spec(tiny_onepass()))["noise"] == "pass"
    v = verdicts(runner.run_spec(tiny_mbsgd()))
    assert v["noise"] == v["privacy"] == "pass"


def test_noise_scaled_inside_the_mechanism_is_caught_by_noise_calibration(monkeypatch):
    real = mechanisms.gaussian

    def too_little(clean, sigma, *, rng):
        return real(clean, sigma / 10, rng=rng)        # the fault: noise divided by 10 inside the mechanism

    monkeypatch.setattr(mechanisms, "gaussian", too_little)
    v = verdicts(runner.run_spec(tiny_onepass()))
    assert v["noise"] == "fail"
    assert v["privacy"] == "pass"      # the accountant sees the declared sigma: only the noise check can catch this


def test_wrong_sensitivity_in_the_calibration_is_caught(monkeypatch):
    def half_sensitivity(*, L, K, eps0, delta0):      # the fault: sensitivity L/K instead of 2L/K (seed L1036)
        return np.sqrt(8 * L**2 * np.log(1.25 / delta0) / (eps0**2 * K**2))

    clean = runner.run_spec(tiny_onepass())
    monkeypatch.setattr(calibration, "onepass_sigma", half_sensitivity)
    res = runner.run_spec(tiny_onepass())
    v = verdicts(res)
    assert v["noise"] == "fail"        # sigma no longer equals the SymPy calibration: only this check catches it
    noise = next(c for c in res["checks"] if c["id"] == "noise")
    assert not noise["rows"][0]["formula_matches"]
    # the accountant sees epsilon grow, but Thm 3.1's calibration (via zCDP) leaves about 2x slack in sigma,
    # so the halved noise is still within the target: the accounting check alone cannot see this fault
    eps = lambda r: next(c for c in r["checks"] if c["id"] == "privacy")["measured"]
    assert eps(res) > 1.8 * eps(clean)


def test_record_reused_in_the_one_pass_version_is_caught_by_accounting(monkeypatch):
    real = sampling.disjoint_batches

    def reuse(rng, shape, n, K, R, **k):              # the fault: every round reads the first batch again
        b = real(rng, shape, n, K, R, **k)
        return np.broadcast_to(b[:1], b.shape).copy()

    monkeypatch.setattr(sampling, "disjoint_batches", reuse)
    monkeypatch.setattr(runner, "STREAM_ONE_PASS", False)   # streamed records would refuse the reuse outright
    res = runner.run_spec(tiny_onepass())
    assert verdicts(res)["privacy"] == "fail"
    row = next(c for c in res["checks"] if c["id"] == "privacy")["rows"][0]
    assert row["max_record_uses"] == row["rounds"] > 1


def test_a_record_read_twice_raises_the_accounted_epsilon():
    from algorithms.events import GaussianRelease
    from verifiers import accountants

    once = GaussianRelease(sigma=1.0, batch_size=10, pool_size=100, sampling="disjoint", rounds=5, max_record_uses=1)
    twice = GaussianRelease(sigma=1.0, batch_size=10, pool_size=100, sampling="disjoint", rounds=5, max_record_uses=2)
    e1, _ = accountants.epsilon((once,), L=1.0, delta=1e-5)
    e2, _ = accountants.epsilon((twice,), L=1.0, delta=1e-5)
    assert e2 > 1.3 * e1


def test_streaming_records_refuse_a_second_read():
    import pytest

    from algorithms.data import Records, make_sphere_linear

    pop = make_sphere_linear(np.random.default_rng(0), d=3, N=2, radius=1, label_noise=0.1, w_norm=0.5,
                             heterogeneity=0, mu=0, diameter=2)
    rec = Records(pop, np.random.default_rng(1), trials=2, n=10, materialise=False)
    idx = np.zeros((2, 2, 1), dtype=np.int64)
    rec.take(idx)
    with pytest.raises(RuntimeError, match="read twice"):
        rec.take(idx)


def test_wrong_exponent_in_a_theorem_changes_the_derived_exponent():
    thm = isrl_004.THM31_CONVEX
    assert float(thm.exponent("n")) == -0.8
    import dataclasses

    import sympy as sp

    from verifiers.theorems.base import D, L, M, beta, d, delta0, eps0, n
    wrong = dataclasses.replace(thm, terms={**thm.terms, "privacy": (beta ** sp.Rational(1, 4) * L * D ** sp.Rational(3, 2)
                                                                      * sp.sqrt(d * sp.log(1 / delta0))
                                                                      / (eps0 * n * sp.sqrt(M))) ** sp.Rational(2, 5)})
    assert float(wrong.exponent("n")) == -0.4
    assert float(isrl_004.THM21_STRONG.exponent("n")) == -2.0
    assert float(isrl_004.THM21_CONVEX.exponent("eps0")) == -1.0


def test_a_biased_silo_gradient_is_caught_by_the_sampling_bound(monkeypatch):
    """The silos' gradient before the noise is biased (a wrong gradient formula inside the algorithm): the noise is
    still calibrated and accounted, but the oracle's sampling error exceeds Lemma E.3's sampling and silo terms, and
    the grad_sampling bound (the released noise removed by its control variate) fails."""
    from algorithms import data

    spec = tiny_onepass(checks=[{"id": "noise", "kind": "noise_calibration"},
                                {"id": "grad_sampling", "kind": "bound", "theorem": "isrl.lemma_e3.sampling"}])
    assert verdicts(runner.run_spec(spec)) == {"noise": "pass", "grad_sampling": "pass"}
    real = data.Records.batch_grad                 # the silos' gradient (fused kernel or numpy, algorithms/data.py)

    def biased(self, idx, loss, w):                # the fault: every silo's mean gradient shifted by 0.1 e_1
        g = real(self, idx, loss, w)
        g[..., 0] += 0.1
        return g

    monkeypatch.setattr(data.Records, "batch_grad", biased)
    assert verdicts(runner.run_spec(spec)) == {"noise": "pass", "grad_sampling": "fail"}
