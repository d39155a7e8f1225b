"""Seed 003 ch. 2's distributed mean estimators (algorithms/dme.py, catalog/dme_003.py, verifiers/checks/dme.py):
closed forms against the runs, and planted faults (a Hadamard transform without its scaling, a wrong normalisation
constant, a biased rounding, a decoder that ignores the spectrum) each caught by a named check."""
from __future__ import annotations

import numpy as np
import pytest

from algorithms import dme
from catalog import dme_003 as cat
from engine.kinds.mechanism.spec import MechanismCheck


def point(trials: int = 400, **kw) -> dict:
    p = cat.DmeParams.model_validate({"d": 64, "n": 4, "k": 3, "vectors": "identical"} | kw).model_dump()
    cat.rules(p)
    return {"value": p["n"]} | cat.run_point(p, trials, np.random.SeedSequence(3))


def verdict(kind: str, pts: list[dict]) -> str:
    c = MechanismCheck(id="c", kind=kind, confidence=0.99)
    return cat.DME_CHECKS.get(kind)(c, "dme", pts).verdict


def test_hadamard_is_orthogonal_up_to_d():
    H = dme.hadamard(32)
    assert np.allclose(H.T @ H, 32 * np.eye(32))
    with pytest.raises(ValueError):
        dme.hadamard(24)


def test_spatial_with_t_one_is_rand_k_and_its_closed_form_is_eq_2_1():
    X = np.random.default_rng(0).normal(size=(5, 16))
    T = dme.transform("one", 5)
    beta = dme.spatial_beta(T, 5, 16, 2)
    assert beta == pytest.approx(8.0)
    assert dme.spatial_closed_form(X, T, beta, 2) == pytest.approx((16 / 2 - 1) * np.sum(X**2) / 25)


def test_a_hadamard_without_its_scaling_is_caught_by_mse_identity(monkeypatch):
    assert verdict("mse_identity", [point(vectors="orthogonal")]) == "pass"
    real = dme.srht_rows
    monkeypatch.setattr(dme, "srht_rows", lambda rng, H, n, k, scale=None: real(rng, H, n, k, 1.0))
    assert verdict("mse_identity", [point(vectors="orthogonal")]) == "fail"


def test_a_wrong_normalisation_constant_is_caught_by_thm243(monkeypatch):
    assert verdict("thm243", [point()]) == "pass"
    real = dme.rps_multi

    def wrong_trace(*a, **kw):
        out, ranks = real(*a, **kw)
        return {k: (e, 0.8 * tr) for k, (e, tr) in out.items()}, ranks

    monkeypatch.setattr(dme, "rps_multi", wrong_trace)
    assert verdict("thm243", [point()]) == "fail"


def test_a_biased_rounding_is_caught_by_unbiased_estimators(monkeypatch):
    assert verdict("unbiased_estimators", [point(trials=2000)]) == "pass"
    real = dme.rand_k
    monkeypatch.setattr(dme, "rand_k", lambda X, idx: real(np.ceil(X * 8) / 8, idx))
    assert verdict("unbiased_estimators", [point(trials=2000)]) == "fail"


def test_a_decoder_that_ignores_the_spectrum_is_caught_by_mse_ordering(monkeypatch):
    assert verdict("mse_ordering", [point(trials=1000)]) == "pass"
    real = dme.rps_multi

    def flat(X, H, k, Ts, trials, rng, scale=None):
        return real(X, H, k, Ts | {"max": dme.transform("one", X.shape[0])}, trials, rng, scale)

    monkeypatch.setattr(dme, "rps_multi", flat)
    assert verdict("mse_ordering", [point(trials=1000)]) == "fail"


def test_a32_sufficient_condition_fails_exactly():
    assert verdict("a32_condition", [point(trials=100)]) == "fail"


def test_a_transform_applied_to_singular_values_is_caught_by_lemma241(monkeypatch):
    assert verdict("lemma241", [point(trials=60)]) == "pass"

    def on_singular_values(B, y, T, tol=1e-9):
        U, s, Vt = np.linalg.svd(B, full_matrices=False)
        keep = s > tol
        w = s[keep] / T(s[keep])              # T of s, not of s^2: a wrong spectrum
        return Vt[keep].T @ (w * (U[:, keep].T @ y)), int(keep.sum()), float(np.sum(s[keep] ** 2 / T(s[keep])))

    monkeypatch.setattr(dme, "rps_once", on_singular_values)
    assert verdict("lemma241", [point(trials=60)]) == "fail"
