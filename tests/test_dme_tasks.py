"""Seed 003 ch. 2's distributed tasks and orderings (algorithms/dme_tasks.py, catalog/dme_tasks_003.py,
verifiers/checks/dme_tasks.py): the codecs against independent references (unbiasedness by simulation, the batched
Rand-Proj-Spatial decoder against algorithms/dme.py's SVD decoder, Wangni's probabilities against the closed form
p_j = min(lambda |x_j|, 1) solved by bisection), and planted faults each caught by a named check."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq

from algorithms import dme, dme_tasks
from catalog import dme_003
from catalog import dme_tasks_003 as cat
from engine.kinds.mechanism.spec import MechanismCheck
from verifiers.checks.dme_tasks import DME_TASK_CHECKS, rank_deficiency, spatial_vs_randk


def task_point(task: str = "power", trials: int = 40, **kw) -> dict:
    p = cat.DmeTaskParams.model_validate({"task": task, "rounds": 15, "tail_from": 5, "beta_draws": 300} | kw
                                         ).model_dump()
    cat.rules(p)
    return {"value": p["k"]} | cat.run_point(p, trials, np.random.SeedSequence(11))


def verdict(kind: str, pts: list[dict]) -> str:
    c = MechanismCheck(id="c", kind=kind, confidence=0.99)
    return DME_TASK_CHECKS.get(kind)(c, "dme_tasks", pts).verdict


@pytest.mark.parametrize("name", dme_tasks.CODECS)
def test_every_codec_is_unbiased(name):
    rng = np.random.default_rng(1)
    n, d, k, R = 6, 32, 3, 6000
    X = rng.standard_normal((1, n, d)) + rng.standard_normal(d)        # correlated clients
    beta = dme_tasks.rps_beta(n, d, k, 4000, np.random.default_rng(2))
    codec = dme_tasks.make_codecs(n, d, k, beta)[name]
    est = codec.decode(codec.encode(np.repeat(X, R, axis=0), rng))
    err = est - X[0].mean(axis=0)
    W = np.sum(err.mean(axis=0) ** 2) / np.sum(err.var(axis=0, ddof=1) / R)     # about 1 without bias
    assert W < 1.6, (name, W)


def test_batched_rps_decoder_equals_the_svd_decoder_of_dme():
    rng = np.random.default_rng(3)
    codec = dme_tasks.RandProjSpatial(5, 32, 4, 1.0)
    B, y = codec.encode(rng.standard_normal((7, 5, 32)), rng)
    est, trace = dme_tasks.rps_decode(B, y, codec.T)
    for i in range(7):
        ref, _, tr = dme.rps_once(B[i], y[i], codec.T)
        assert np.allclose(est[i], ref, atol=1e-12) and trace[i] == pytest.approx(tr, rel=1e-12)


def test_wangni_probabilities_solve_the_budgeted_closed_form():
    rng = np.random.default_rng(4)
    x = rng.standard_normal(64)
    x[:3] *= 100.0                                                      # a few large entries: their p_j saturate at 1
    codec = dme_tasks.RandKWangni(1, 64, 8)
    P = codec.probabilities(x[None, None])[0, 0]
    lam = brentq(lambda t: np.minimum(t * np.abs(x), 1).sum() - 8, 1e-9, 1e9, xtol=1e-14)
    assert np.allclose(P, np.minimum(lam * np.abs(x), 1), atol=1e-9)
    assert P.sum() == pytest.approx(8) and np.any(P == 1.0)


def test_induced_with_k_one_is_rand_k():
    """L2340: 'when k = 1, the Induced estimator is the same as Rand-k' (our split k1 = floor(k/2))."""
    X = np.random.default_rng(5).standard_normal((1, 4, 16))
    a = dme_tasks.Induced(4, 16, 1)
    b = dme_tasks.RandK(4, 16, 1)
    assert np.allclose(a.decode(a.encode(X, np.random.default_rng(6))), b.decode(b.encode(X, np.random.default_rng(6))))


def test_rps_avg_beats_rand_k_on_power_iteration():
    pt = task_point(trials=100, rounds=30, tail_from=10)
    assert pt["finite"]
    assert verdict("task_ordering", [pt]) == "pass"
    assert verdict("codec_time", [pt]) == "pass"


def test_a_betabar_as_theorem_243_prints_it_is_caught_by_task_ordering(monkeypatch):
    """L607's 'betabar = d/k' in place of the unbiasedness constant (about 1.4 here): RPS(Avg) overshoots."""
    monkeypatch.setattr(dme_tasks, "rps_beta", lambda n, d, k, draws, rng, H=None: d / k)
    assert verdict("task_ordering", [task_point()]) == "fail"


def test_a_decoder_timed_without_its_eigendecomposition_is_caught_by_codec_time(monkeypatch):
    """The planted fault moves the eigendecomposition out of the decoder's timing (into an untimed step): the
    decoder then only multiplies, faster than Rand-k's scatter, and the timing claim must fail."""
    real = dme_tasks.compress

    def untimed(codec, X, rng):
        if codec.name != "rps_avg":
            return real(codec, X, rng)
        est, te, _ = real(codec, X, rng)           # the real work, its decode time dropped
        B, y = codec.encode(X, rng)
        import time
        t0 = time.process_time()
        (y[:, None, :] @ B)[:, 0]
        return est, te, time.process_time() - t0

    monkeypatch.setattr(dme_tasks, "compress", untimed)
    assert verdict("codec_time", [task_point()]) == "fail"


def _spatial_points(trials: int = 1500) -> list[dict]:
    pts = []
    for g in (1, 4):
        p = dme_003.DmeParams.model_validate({"d": 64, "n": 8, "k": 2, "vectors": "groups", "group": g,
                                              "rotate": 1}).model_dump()
        pts.append({"value": g} | dme_003.run_point(p, trials, np.random.SeedSequence(9)))
    return pts


def test_spatial_vs_randk_passes_and_a_wrong_spatial_normalisation_fails(monkeypatch):
    c = MechanismCheck(id="c", kind="spatial_vs_randk", confidence=0.99)
    assert spatial_vs_randk(c, "dme", _spatial_points()).verdict == "pass"
    real = dme.spatial_beta
    monkeypatch.setattr(dme, "spatial_beta", lambda T, n, d, k: 1.15 * real(T, n, d, k))
    assert spatial_vs_randk(c, "dme", _spatial_points()).verdict == "fail"


def test_a_shared_rotation_that_is_not_orthogonal_is_caught_by_mse_identity(monkeypatch):
    """App. A.1.1: a shared orthogonal rotation leaves Rand-k's MSE at Eq. 2.1 (the rand_k_rotated estimator, judged by
    mse_identity with the claim 003 App. A.1.1); G scaled by 1.1 (not orthogonal) moves it off."""
    c = MechanismCheck(id="c", kind="mse_identity", confidence=0.99)

    def pt() -> dict:
        p = dme_003.DmeParams.model_validate({"d": 64, "n": 4, "k": 3, "vectors": "identical"}).model_dump()
        return {"value": 4} | dme_003.run_point(p, 1500, np.random.SeedSequence(8))

    ok = dme_003.DME_CHECKS.get("mse_identity")(c, "dme", [pt()])
    assert ok.verdict == "pass" and "003 App. A.1.1" in ok.claims
    real = dme.rand_k_rotated
    monkeypatch.setattr(dme, "rand_k_rotated", lambda X, idx, H, rng: real(X, idx, 1.1 * H, rng))
    bad = dme_003.DME_CHECKS.get("mse_identity")(c, "dme", [pt()])
    assert bad.verdict == "fail" and any(r["estimator"] == "rand_k_rotated" and r["verdict"] == "fail" for r in bad.rows)


def test_srht_ranks_match_numpy_and_clients_sharing_their_signs_are_caught_by_rank_deficiency(monkeypatch):
    """The Gram-eigenvalue rank against numpy's matrix_rank of the same stacks; then App. A.3.3's check passes on
    n k < d and fails when every client uses the same D (a planted fault: two clients picking the same Hadamard row
    send the same row, so S loses rank in most draws)."""
    rng = np.random.default_rng(12)
    codec = dme_tasks.RandProjSpatial(4, 32, 8, 1.0)
    B, _ = codec.encode(np.zeros((300, 4, 32)), rng)
    ours = dme_tasks.srht_ranks(4, 32, 8, 300, np.random.default_rng(12))
    assert np.array_equal(ours, np.linalg.matrix_rank(B)) and np.any(ours < 32)
    c = MechanismCheck(id="c", kind="rank_deficiency", confidence=0.99)

    def pts() -> list[dict]:
        return [{"value": d} | cat.rank_point({"d": d, "n": 4, "k": 8}, 8000, np.random.SeedSequence(d))
                for d in (64, 128)]

    assert rank_deficiency(c, "srht_rank", pts()).verdict == "pass"
    real = dme_tasks.srht_ranks
    monkeypatch.setattr(dme_tasks, "srht_ranks", lambda n, d, k, draws, rng: real(n, d, k, draws, rng, True))
    assert rank_deficiency(c, "srht_rank", pts()).verdict == "fail"
