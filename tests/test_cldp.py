"""CLDP-SGD (seed 001, Algorithm 1): the R_inf randomizer against its stated distribution and an independent
formula, the shuffler's view, the accountant, spec rules, and planted faults with the check that catches each."""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from scipy import stats

from algorithms import ldp
from algorithms.events import ShuffledLDPRelease
from engine.kinds.learning import runner
from engine.kinds.learning import spec as spec_mod
from tests.helpers import _tiny, raw, verdicts
from verifiers import accountants
from verifiers.accountants import subsampled_shuffle

R = ldp.RANDOMIZERS.get("r_inf")


def tiny_cldp(audit: bool = True, **over):
    s = _tiny("cldp_sgd_digits", "tiny_cldp", {"n": 400}, 6, audit, **over)
    r = s.model_dump(mode="json")
    r["algorithm"]["overrides"] = {"k": 100, "eps_ldp": 1.5, "T": 1200}
    r["checks"] = [c for c in r["checks"] if c["kind"] != "bound" or c["theorem"] == "shuffle.remark1.r_inf"]
    return spec_mod.parse(r, "tiny_cldp")


def _independent_probs(x: np.ndarray, eps: float, C: float) -> np.ndarray:
    """Girgis et al. 2021 (AISTATS), eq. (11): output +-C d sqrt(kappa) e_j, j uniform, with
    P(+ | j) = 1/2 + x_j/(2C) (e^eps - 1)/(e^eps + 1); written out here, not taken from algorithms/ldp.py."""
    d = x.shape[-1]
    plus = 0.5 + x / (2 * C) * (math.exp(eps) - 1) / (math.exp(eps) + 1)
    return np.concatenate([plus / d, (1 - plus) / d], axis=-1)


def test_stated_distribution_matches_the_paper_formula():
    rng = np.random.default_rng(0)
    for eps, C, d in [(0.5, 1.0, 3), (1.5, 0.2, 8), (4.0, 3.0, 5)]:
        x = rng.uniform(-C, C, size=(20, d))
        np.testing.assert_allclose(R.probabilities(x, eps, C), _independent_probs(x, eps, C), rtol=1e-14)


@pytest.mark.parametrize("eps", [0.3, 1.5, 5.0])
def test_exact_ldp_unbiasedness_and_variance(eps):
    d, C = 4, 0.7
    # a grid of the box including its corners: the worst ratio is e^eps exactly, reached at the corners
    g = np.linspace(-C, C, 5)
    X = np.array(np.meshgrid(*[g] * d)).reshape(d, -1).T
    P = _independent_probs(X, eps, C)
    ratio = np.log(P.max(axis=0) / P.min(axis=0)).max()
    assert ratio == pytest.approx(eps, rel=1e-12)
    V = R.values(d, eps, C)
    np.testing.assert_allclose(P @ V, X, atol=1e-12)                       # condition (ii): unbiased
    var = (P * ((V[None, :, :] - X[:, None, :]) ** 2).sum(-1)).sum(1)
    kappa = ((math.exp(eps) + 1) / math.expm1(eps)) ** 2
    np.testing.assert_allclose(var, C**2 * d**2 * kappa - (X * X).sum(1), rtol=1e-12)
    assert var.max() <= R.variance_bound(d, eps, C)                         # Remark 1: C^2 d^2 kappa


def test_sampler_has_the_stated_distribution():
    rng = np.random.default_rng(1)
    d, C, eps = 4, 1.0, 1.2
    x = np.array([0.9, -0.3, 0.0, -1.0])
    m = R.sample(np.broadcast_to(x, (200_000, d)), eps, C, rng)
    counts = np.bincount(m.coord + d * (m.bit < 0), minlength=2 * d)
    expected = 200_000 * _independent_probs(x[None], eps, C)[0]
    keep = expected > 0
    assert stats.chisquare(counts[keep], expected[keep]).pvalue > 1e-4


def test_server_sees_the_multiset_only():
    rng = np.random.default_rng(2)
    d, C, eps = 6, 0.5, 1.0
    x = rng.uniform(-C, C, size=(3, 50, d))
    m = R.sample(x, eps, C, rng)
    total = R.decode_sum(m, d, eps, C)
    one_by_one = np.zeros((3, d))
    for t in range(3):
        for j in range(50):
            one_by_one[t] += R.values(d, eps, C)[m.coord[t, j] + d * (m.bit[t, j] < 0)]
    np.testing.assert_allclose(total, one_by_one, rtol=1e-12, atol=1e-12)
    perm = rng.permutation(50)
    shuffled = ldp.Messages(m.coord[:, perm], m.bit[:, perm])
    np.testing.assert_array_equal(R.decode_sum(shuffled, d, eps, C), total)


def test_inputs_outside_the_ball_are_refused():
    with pytest.raises(ValueError, match="clip before randomizing"):
        R.sample(np.array([[0.5, 1.5]]), 1.0, 1.0, np.random.default_rng(0))
    np.testing.assert_allclose(np.abs(ldp.clip_inf(np.array([[0.5, -3.0]]), 1.0)).max(), 1.0)


def test_accountant_is_thm1_with_lemma1():
    ev = ShuffledLDPRelease(eps_ldp=1.5, batch_size=300, pool_size=1797, randomizer="r_inf", clip=0.2, dimension=64,
                            rounds=1000, max_record_uses=1)
    eps, name = accountants.epsilon((ev,), L=1.0, delta=1e-5)
    assert "Thm 1" in name
    assert eps == subsampled_shuffle.epsilon("upper", k=300, n=1797, eps0=1.5, T=1000, delta=1e-5).epsilon
    assert accountants.describe(ev, 1.0, 1e-5)["epsilon_thm2_lower"] < eps


def test_clean_tiny_run_passes():
    v = verdicts(runner.run_spec(tiny_cldp()))
    assert v == {"ldp": "pass", "unbiased": "pass", "variance": "pass", "privacy": "pass", "audit": "pass"}


def test_too_little_randomization_is_caught_by_ldp_exact_and_audit(monkeypatch):
    real = ldp.keep_probability
    monkeypatch.setattr(ldp, "keep_probability", lambda eps: real(2 * eps))   # the fault: RR at 2 eps
    v = verdicts(runner.run_spec(tiny_cldp()))
    assert v["ldp"] == "fail" and v["audit"] == "fail"
    assert v["privacy"] == "pass"      # the accountant sees the declared eps_ldp: only the exact test and audit catch it


def test_biased_sampler_is_caught_by_unbiased(monkeypatch):
    real = R.sample

    def biased(x, eps, C, rng):                                                  # the fault: rounding shrinks x by 20%
        return real(0.8 * x, eps, C, rng)

    monkeypatch.setattr(type(R), "sample", lambda self, x, eps, C, rng: biased(x, eps, C, rng))
    v = verdicts(runner.run_spec(tiny_cldp(audit=False)))
    assert v["unbiased"] == "fail"
    assert v["ldp"] == "pass"          # the stated distribution is still right: only the test on the messages sees it


def test_a_sampler_leaking_more_than_its_table_is_caught_by_the_audit(monkeypatch):
    real = R.sample

    def leaky(x, eps, C, rng):                                                   # the fault: RR at 3 eps in the sampler only
        return real(x, 3 * eps, C, rng)

    monkeypatch.setattr(type(R), "sample", lambda self, x, eps, C, rng: leaky(x, eps, C, rng))
    v = verdicts(runner.run_spec(tiny_cldp()))
    assert v["audit"] == "fail" and v["ldp"] == "pass"


def test_spec_rules():
    r = raw("cldp_sgd_digits")
    bad = copy.deepcopy(r)
    bad["threat_model"]["kind"] = "isrl"
    with pytest.raises(spec_mod.SpecError, match="threat_model.kind.*analysed under 'shuffle'"):
        spec_mod.parse(bad, "x.yaml")
    bad = copy.deepcopy(r)
    bad["data"]["N"] = 2
    with pytest.raises(spec_mod.SpecError, match="data.N.*set N = 1"):
        spec_mod.parse(bad, "x.yaml")
    bad = copy.deepcopy(raw("mbsgd_convex"))
    bad["sweep"] = {"field": "algorithm.overrides.T", "values": [10, 20]}
    with pytest.raises(spec_mod.SpecError, match="sweep.field.*no parameter 'T'"):
        spec_mod.parse(bad, "x.yaml")
    bad = copy.deepcopy(r)
    bad["sweep"]["values"] = [100, 150.5]
    with pytest.raises(spec_mod.SpecError, match="whole number"):
        spec_mod.parse(bad, "x.yaml")
    for check, msg in [({"id": "u", "kind": "unbiased", "theorem": "shuffle.remark1.r_inf"}, "unbiased tests"),
                       ({"id": "b", "kind": "bound", "theorem": "shuffle.thm3.privacy"}, "states no bound"),
                       ({"id": "r", "kind": "rate", "theorem": "shuffle.thm3.privacy"}, "states no bound"),
                       ({"id": "n", "kind": "noise_calibration"}, "checks a mechanism of the isrl")]:
        bad = copy.deepcopy(r)
        bad["checks"] = [check]
        bad["expect"] = {}
        bad.pop("expect_quick", None)
        with pytest.raises(spec_mod.SpecError, match=msg):
            spec_mod.parse(bad, "x.yaml")


# --- the compiled rounds (kernels.cldp_rounds, issue 17) against the numpy rounds ---------------------------------

def _fused_and_numpy(monkeypatch, loss, *, n, k, d, T, C, trials=3, materialised=False):
    """(the run through kernels.cldp_rounds, the same run through cldp._run_numpy) on random records, with snapshots
    and BLOCK_UNIFORMS made small (several blocks, the last one short)."""
    from algorithms import cldp
    from algorithms.data import Records
    from algorithms.streams import TrialStreams

    rng = np.random.default_rng(11)
    X, y = rng.uniform(-1, 1, (trials if materialised else 1, 1, n, d)), np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y = np.broadcast_to(y, X.shape[:3]).copy()
    monkeypatch.setattr(cldp, "BLOCK_UNIFORMS", trials * (cldp.sampling.subset_uniforms(n, k) + 3 * k) * 7)
    out = []
    for fused in (True, False):
        if materialised:
            pop = type("Held", (), {"N": 1, "d": d, "sample": lambda self, rng, shape: (X, y)})()
            rec = Records(pop, None, trials, n, True)
        else:
            rec = Records(None, None, trials, n, True, fixed=(X[0], y[0]))
        with monkeypatch.context() as m:
            if not fused:
                m.setattr(cldp, "_fused", lambda *a: False)
            else:
                calls = []
                real = cldp.kernels.cldp_rounds
                m.setattr(cldp.kernels, "cldp_rounds", lambda *a: calls.append(1) or real(*a))
            out.append(cldp.run(rec, loss, T=T, k=k, eps_ldp=1.5, C=C, G=1.0, radius=1.0, randomizer="r_inf",
                                rng=TrialStreams(np.random.SeedSequence(5).spawn(trials)), snapshots=(1, T // 2, T)))
        if fused:
            assert len(calls) == -(-T // 7)                                  # the blocks of 7 rounds, the last short
    return out


@pytest.mark.parametrize("loss", ["logistic", "squared", "moreau_hinge"])
@pytest.mark.parametrize("n,k,d,T,C,materialised", [(40, 8, 5, 30, 0.1, False), (60, 5, 3, 23, 10.0, True),
                                                     (300, 30, 16, 20, 0.3, False)])
def test_the_compiled_rounds_are_numpys(monkeypatch, loss, n, k, d, T, C, materialised):
    """cldp.run through kernels.cldp_rounds against the same run through numpy's rounds: the same subsets (record
    uses), messages and clipped counts, the same iterates and instrumentation up to the order of the sums over
    coordinates and messages (1e-12). Both subset samplers (k^2 > n: keys; k^2 <= n: Floyd), fixed and materialised
    records, clipping everywhere, nowhere and in between."""
    from algorithms.losses import Logistic, MoreauHinge, Squared

    f = {"logistic": Logistic(), "squared": Squared(mu=0.1), "moreau_hinge": MoreauHinge(beta_s=2.0)}[loss]
    got, want = _fused_and_numpy(monkeypatch, f, n=n, k=k, d=d, T=T, C=C, materialised=materialised)
    assert np.array_equal(got.record_uses, want.record_uses) and got.events == want.events
    assert np.array_equal(got.extra["clipped_fraction"], want.extra["clipped_fraction"])
    frac = got.extra["clipped_fraction"]
    assert {10.0: (frac == 0).all(), 0.1: (frac > 0.9).all(), 0.3: ((frac > 0) & (frac < 1)).all()}[C]
    for key in ("snapshots", "ldp_variance", "ldp_bias", "ldp_bias_sq"):
        np.testing.assert_allclose(got.extra[key], want.extra[key], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got.w, want.w, rtol=1e-12, atol=1e-15)
    assert np.array_equal(got.extra["snapshots"][:, -1], got.w)


@pytest.mark.parametrize("fault", ["response kept 1% too often", "messages scaled 1% small", "clip 10% high"])
def test_a_fault_planted_in_the_compiled_rounds_is_caught_by_the_comparison(monkeypatch, fault):
    from algorithms import kernels
    from algorithms.losses import Logistic

    real = kernels._cldp_rounds

    def planted(X, y, flat, U, w, t0, code, p, mu, C, s, keep, D, G, radius, snap, kept, stats):
        if fault.startswith("response"):
            keep = keep * 1.01
        elif fault.startswith("messages"):
            s = s * 0.99
        else:
            C = C * 1.1
        return real(X, y, flat, U, w, t0, code, p, mu, C, s, keep, D, G, radius, snap, kept, stats)

    monkeypatch.setattr(kernels, "_cldp_rounds", planted)
    got, want = _fused_and_numpy(monkeypatch, Logistic(), n=300, k=30, d=16, T=20, C=0.3)    # some rows clipped
    assert (not np.array_equal(got.extra["clipped_fraction"], want.extra["clipped_fraction"])
            or not np.allclose(got.w, want.w, rtol=1e-9))


@pytest.mark.parametrize("patch", ["sample", "decode_sum", "dphi", "record_grads", "record_grads on the base",
                                   "clip", "projection", "subsets"])
def test_planted_randomizer_and_loss_faults_run_through_numpy(monkeypatch, patch):
    """The compiled rounds encode R_inf, the losses, the clip, the projection and the subset sampler as written: a
    patched one turns them off (so a fault planted in any of them runs as written, as the planted-fault tests above
    need)."""
    from algorithms import cldp, mechanisms, sampling
    from algorithms.data import Records
    from algorithms.losses import LinearModelLoss, Logistic

    rec = Records(None, None, 2, 10, True, fixed=(np.zeros((1, 10, 3)), np.ones((1, 10))))
    assert cldp._fused(rec, Logistic(), R)
    target, name = {"sample": (type(R), "sample"), "decode_sum": (type(R), "decode_sum"), "dphi": (Logistic, "dphi"),
                    "record_grads": (Logistic, "record_grads"),
                    "record_grads on the base": (LinearModelLoss, "record_grads"),
                    "clip": (cldp, "clip_inf_norms"), "projection": (mechanisms, "project_ball"),
                    "subsets": (sampling, "k_subsets")}[patch]
    monkeypatch.setattr(target, name, lambda *a, **k: None)
    assert not cldp._fused(rec, Logistic(), R)


def test_a_clip_fault_planted_in_a_cldp_run_is_computed_as_written(monkeypatch):
    """A clip that lets rows 10% past C, planted in CLDP-SGD's module, reaches the randomizer, which refuses them."""
    from algorithms import cldp

    real = cldp.clip_inf_norms
    monkeypatch.setattr(cldp, "clip_inf_norms", lambda g, C: real(g, 1.1 * C))
    with pytest.raises(ValueError, match="clip before randomizing"):
        _fused_and_numpy(monkeypatch, __import__("algorithms.losses", fromlist=["Logistic"]).Logistic(), n=40, k=8,
                         d=5, T=3, C=0.1)


def test_a_clipping_bound_that_is_not_positive_and_finite_is_refused():
    from algorithms import cldp
    from algorithms.data import Records
    from algorithms.losses import Logistic
    from algorithms.streams import TrialStreams

    rec = Records(None, None, 1, 10, True, fixed=(np.zeros((1, 10, 3)), np.ones((1, 10))))
    for C in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="clipping bound C"):
            cldp.run(rec, Logistic(), T=2, k=3, eps_ldp=1.0, C=C, G=1.0, radius=1.0, randomizer="r_inf",
                     rng=TrialStreams(np.random.SeedSequence(0).spawn(1)))


def test_the_compiled_rounds_refuse_what_does_not_fit():
    from algorithms import kernels

    X, y, w = np.ones((4, 2)), np.ones(4), np.zeros((1, 2))
    ok = dict(flat=np.zeros((1, 2, 3), dtype=np.int64), U=np.full((1, 2, 9), 0.5), w=w, snap=np.zeros(0, np.int64),
              kept=np.zeros((1, 0, 2)), stats=np.zeros((1, 4)))

    def call(**over):
        a = ok | over
        kernels.cldp_rounds(X, y, a["flat"], a["U"], a["w"], over.get("t0", 1), over.get("code", 1), 0.0, 0.0, 1.0,
                            1.0, 0.8, 2.0, 1.0, 1.0, a["snap"], a["kept"], a["stats"])

    call()
    for bad in [dict(U=np.full((1, 2, 8), 0.5)), dict(flat=np.full((1, 2, 3), 4)), dict(w=np.zeros((1, 3))),
                dict(w=np.zeros((1, 2), dtype=np.float32)), dict(stats=np.zeros((1, 3))), dict(t0=0),
                dict(kept=np.zeros((1, 1, 2))), dict(code=7), dict(flat=np.zeros((1, 2, 3))),
                dict(snap=np.zeros(1))]:
        with pytest.raises(ValueError):
            call(**bad)


def test_a_trials_compiled_rounds_do_not_depend_on_what_shares_the_call(monkeypatch):
    """A trial run alone and among three, hence in blocks of another number of rounds (BLOCK_UNIFORMS made small:
    blocks of 21 rounds alone, 7 among three), gets the same bits."""
    from algorithms import cldp
    from algorithms.data import Records
    from algorithms.losses import Logistic
    from algorithms.streams import TrialStreams

    rng = np.random.default_rng(3)
    X, y = rng.uniform(-1, 1, (1, 50, 6)), np.where(rng.random((1, 50)) < 0.5, 1.0, -1.0)
    seeds = np.random.SeedSequence(8).spawn(3)
    monkeypatch.setattr(cldp, "BLOCK_UNIFORMS", 21 * (50 + 3 * 9))          # 50 keys (81 > 50) and 3 x 9 per round

    def go(which):
        return cldp.run(Records(None, None, len(which), 50, True, fixed=(X, y)), Logistic(), T=40, k=9, eps_ldp=1.0,
                        C=0.2, G=1.0, radius=1.0, randomizer="r_inf", rng=TrialStreams([seeds[i] for i in which]))
    together, alone = go([0, 1, 2]), go([1])
    assert np.array_equal(together.w[1], alone.w[0])
    for key in ("ldp_variance", "ldp_bias", "ldp_bias_sq", "clipped_fraction"):
        assert together.extra[key][1] == alone.extra[key][0]


def test_nan_and_inf_records_give_numpys_nans():
    """A record with an inf or a NaN coordinate: the compiled rounds give NaN exactly where numpy's rounds do, and
    the same values elsewhere (to the sums' rounding)."""
    from algorithms import cldp
    from algorithms.data import Records
    from algorithms.losses import Logistic, MoreauHinge
    from algorithms.streams import TrialStreams

    rng = np.random.default_rng(9)
    X, y = rng.uniform(-1, 1, (1, 30, 4)), np.where(rng.random((1, 30)) < 0.5, 1.0, -1.0)
    X[0, 3, 1], X[0, 11] = np.inf, 0.0
    X2 = X.copy()
    X2[0, 5, 2] = np.nan
    for loss in (Logistic(), MoreauHinge(beta_s=2.0)):
        for data in (X, X2):
            outs = []
            for fused in (True, False):
                real = cldp._fused
                cldp._fused = real if fused else (lambda *a: False)
                try:
                    with np.errstate(all="ignore"):
                        outs.append(cldp.run(Records(None, None, 2, 30, True, fixed=(data, y)), loss, T=25, k=6,
                                             eps_ldp=1.0, C=0.3, G=1.0, radius=1.0, randomizer="r_inf",
                                             rng=TrialStreams(np.random.SeedSequence(1).spawn(2))))
                finally:
                    cldp._fused = real
            got, want = outs
            assert np.array_equal(np.isnan(got.w), np.isnan(want.w))
            np.testing.assert_allclose(got.w, want.w, rtol=1e-12, atol=1e-15)
            for key in ("ldp_variance", "ldp_bias", "clipped_fraction"):
                np.testing.assert_allclose(got.extra[key], want.extra[key], rtol=1e-12, atol=1e-15)
