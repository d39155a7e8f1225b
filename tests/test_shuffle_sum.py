"""Seed 000's P_1D and P_VEC: the exact count sampler against the bit-level protocol and the exact distribution,
the parameters against the paper, the privacy computation against brute force, and planted faults."""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import yaml
from scipy import stats
from scipy.stats import binom

from algorithms import shuffle_sum as ss
from engine.kinds.learning import spec as spec_mod
from engine.kinds.mechanism import run as mechanism_run
from engine.kinds.mechanism.spec import parse_mechanism
from tests.helpers import ROOT, verdicts
from verifiers.accountants import binomial_privacy as bp


def _exact_count_pmf(x: np.ndarray, prm: ss.P1DParams) -> np.ndarray:
    """pmf of sum_i xhat_i + Bin(n b, p) on 0..n(g + b): the rounding Bernoullis convolved one by one, then the
    binomial (written out here from Algorithm 1, L105-128)."""
    n = len(x)
    pmf = np.zeros(n * prm.g + 1)
    pmf[0] = 1.0
    for xi in x:
        c = xi * prm.g / prm.Delta
        f, q = math.floor(c), c - math.floor(c)
        new = np.zeros_like(pmf)
        new[f:] += (1 - q) * pmf[: len(pmf) - f]
        if q > 0:
            new[f + 1:] += q * pmf[: len(pmf) - f - 1]
        pmf = new
    return np.convolve(pmf, binom.pmf(np.arange(n * prm.b + 1), n * prm.b, prm.p))


def test_count_sampler_and_bit_level_protocol_have_the_exact_distribution():
    prm = ss.P1DParams(g=4, b=6, p=0.3, Delta=1.0)
    x = np.array([0.0, 0.1, 0.55, 0.9, 1.0])
    pmf = _exact_count_pmf(x, prm)
    rng = np.random.default_rng(0)
    T = 100_000
    for sampler in (ss.p1d_count, ss.p1d_bits):
        z = sampler(np.broadcast_to(x, (T, len(x))), prm, rng).astype(np.int64)
        counts = np.bincount(z, minlength=len(pmf))
        keep = pmf * T > 5                                  # pool the sparse tails
        obs = np.append(counts[keep], counts[~keep].sum())
        exp = np.append(pmf[keep] * T, pmf[~keep].sum() * T)
        assert stats.chisquare(obs, exp).pvalue > 1e-4, sampler.__name__


def test_lemma31_and_thm32_parameters():
    prm = ss.lemma31(n=100, eps=1.0, delta=1e-6, Delta=1.0)
    need = 180 * prm.g**2 * math.log(2 / 1e-6) / (1.0 * 100)
    assert prm.g >= math.sqrt(100) and need < prm.b <= need + 1 and 0 < prm.p < 0.5
    assert prm.p == pytest.approx(90 * prm.g**2 * math.log(2e6) / (prm.b * 100))
    pv = ss.thm32(n=50, d=10, eps=1.0, delta=1e-6, Delta2=1.0)
    assert pv.one_d.g >= max(2 * math.sqrt(50), math.sqrt(10), 4) and pv.one_d.Delta == 2.0
    # the proof's last step: 18 eps_hat^2 + 6 eps_hat sqrt(ln(1/gamma)) <= eps (L498-510)
    gamma = 1e-6 / 11
    assert 18 * pv.eps_hat**2 + 6 * pv.eps_hat * math.sqrt(math.log(1 / gamma)) <= 1.0


def test_estimates_are_unbiased_with_the_exact_variance():
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 2.0, size=40)
    prm = ss.lemma31(n=40, eps=2.0, delta=1e-5, Delta=2.0)
    est = ss.p1d(np.broadcast_to(x, (200_000, 40)), prm, rng)
    var = ss.p1d_variance(x, prm)
    assert abs(est.mean() - x.sum()) < 4 * math.sqrt(var / len(est))
    assert est.var() == pytest.approx(var, rel=0.02)
    assert var <= ss.p1d_variance_bound(40, prm)
    v = rng.standard_normal((30, 5))
    v /= np.linalg.norm(v, axis=1, keepdims=True) * 1.5
    pv = ss.thm32(n=30, d=5, eps=8.0, delta=1e-5, Delta2=1.0)
    out = ss.pvec(np.broadcast_to(v, (4000, 30, 5)), pv, rng)
    err = out - v.sum(axis=0)
    sd = np.sqrt([ss.p1d_variance(v[:, j] + 1.0, pv.one_d) for j in range(5)])
    assert np.all(np.abs(err.mean(axis=0)) < 4.5 * sd / math.sqrt(4000))


def test_inputs_outside_the_domain_are_refused():
    prm = ss.lemma31(n=3, eps=1.0, delta=1e-5, Delta=1.0)
    with pytest.raises(ValueError, match=r"\[0, Delta = 1\]"):
        ss.p1d(np.array([[0.5, 1.2, 0.0]]), prm, np.random.default_rng(0))
    pv = ss.thm32(n=2, d=2, eps=1.0, delta=1e-5, Delta2=1.0)
    with pytest.raises(ValueError, match="clip first"):
        ss.pvec(np.array([[[1.0, 1.0], [0.0, 0.0]]]), pv, np.random.default_rng(0))


@pytest.mark.parametrize("pair", [bp.Pair(0.0, 5.0), bp.Pair(1.3, 3.7), bp.Pair(2.5, 2.0)])
def test_exact_epsilon_against_brute_force(pair):
    m, p, delta = 300, 0.4, 1e-3
    k = np.arange(-10, m + 20)

    def mix(c):
        f, q = math.floor(c), c - math.floor(c)
        return (1 - q) * binom.pmf(k - f, m, p) + q * binom.pmf(k - f - 1, m, p)

    P, Q = mix(pair.c), mix(pair.c_prime)

    def hs(eps):
        return max(np.maximum(P - math.exp(eps) * Q, 0).sum(), np.maximum(Q - math.exp(eps) * P, 0).sum())

    eps = bp.exact_epsilon(m, p, pair, delta)
    assert hs(eps) <= delta * (1 + 1e-9) and hs(eps * (1 - 1e-4)) > delta
    # the PLD accountant is pessimistic and close
    pld_eps = bp.pld_epsilon(m, p, [pair], delta)
    assert eps <= pld_eps <= eps * 1.02


def test_hockey_stick_with_its_exponentials_given_is_the_same_sum():
    """exact_epsilon's bisection hands hockey_stick np.exp(logP) computed once: the same float as computing it."""
    t = bp._pair_logpmfs(5000, 0.3, bp.Pair(0.4, 6.0))
    for logP, logQ in ((t.logP, t.logQ), (t.logQ, t.logP)):
        for eps in (0.0, 0.05, 0.7, 30.0):
            assert bp.hockey_stick(logP, logQ, eps, np.exp(logP)) == bp.hockey_stick(logP, logQ, eps)
            with np.errstate(invalid="ignore"):
                want = float(np.sum(np.maximum(np.exp(logP) - np.exp(logQ + eps), 0.0)))
            assert bp.hockey_stick(logP, logQ, eps) == want
    with pytest.raises(ValueError):
        bp.hockey_stick(t.logP, t.logQ, 0.1, np.exp(t.logP[1:]))


def _spec(name: str, **change) -> dict:
    raw = yaml.safe_load((ROOT / "specs" / f"{name}.yaml").read_text())
    raw = copy.deepcopy(raw) | change
    raw["expect"] = {}
    return raw


def _tiny_p1d():
    return parse_mechanism(_spec("p1d_sum", trials=20000, sweep={"field": "eps", "values": [1.0, 4.0]}), "t.yaml")


def test_clean_protocol_runs_pass():
    assert verdicts(mechanism_run.run(_tiny_p1d())) == {"privacy": "pass", "unbiased": "pass", "mse": "pass"}


def test_noise_below_the_calibration_is_caught_by_privacy(monkeypatch):
    real = ss.lemma31

    def less_noise(**kw):                           # the fault: p a third of Lemma 3.1's
        prm = real(**kw)
        return ss.P1DParams(g=prm.g, b=prm.b, p=prm.p / 3, Delta=prm.Delta)

    monkeypatch.setattr(ss, "lemma31", less_noise)
    v = verdicts(mechanism_run.run(_tiny_p1d()))
    assert v["privacy"] == "fail"
    assert v["mse"] == "pass"           # the runs have the noise the (wrong) parameters declare


def test_noise_reduced_inside_the_sampler_is_caught_by_mse(monkeypatch):
    real = ss.p1d_count

    def leaky(x, prm, rng):                         # the fault: the binomial drawn with p/3, parameters unchanged
        return real(x, ss.P1DParams(g=prm.g, b=prm.b, p=prm.p / 3, Delta=prm.Delta), rng) + prm.b * x.shape[-1] * prm.p * 2 / 3

    monkeypatch.setattr(ss, "p1d_count", leaky)
    v = verdicts(mechanism_run.run(_tiny_p1d()))
    assert v["mse"] == "fail"
    assert v["privacy"] == "pass"       # computed from the declared parameters: only the runs show it


def test_biased_rounding_is_caught_by_unbiased(monkeypatch):
    def floor_only(x, shift, prm, rng, max_norm=None):   # the fault: the rounding forgets its Bernoulli (biased down)
        rng.random(x.shape)
        return np.floor(np.clip(x + shift, 0.0, prm.Delta) * (prm.g / prm.Delta)).sum(axis=-2)

    monkeypatch.setattr(ss, "_rounded_sum", floor_only)
    raw = _spec("pvec_sum", trials=400, sweep={"field": "eps", "values": [4.0, 8.0]})
    assert verdicts(mechanism_run.run(parse_mechanism(raw, "t.yaml")))["unbiased"] == "fail"


def test_biased_estimator_is_caught_by_unbiased(monkeypatch):
    real = ss.p1d_estimate
    monkeypatch.setattr(ss, "p1d_estimate", lambda count, n, prm: real(count, n, prm) + prm.Delta / prm.g * 2)
    v = verdicts(mechanism_run.run(_tiny_p1d()))
    assert v["unbiased"] == "fail"


def test_protocol_spec_errors():
    raw = _spec("p1d_sum")
    raw["params"] = dict(raw["params"], eps=20)
    with pytest.raises(spec_mod.SpecError, match="params.eps"):
        parse_mechanism(raw, "x.yaml")
    raw = _spec("p1d_sum")
    raw["params"] = dict(raw["params"], d=3)
    with pytest.raises(spec_mod.SpecError, match="params.d: p1d sums scalars"):
        parse_mechanism(raw, "x.yaml")
    raw = _spec("pvec_sum", sweep={"field": "n", "values": [10, 12.5]})
    with pytest.raises(spec_mod.SpecError, match="sweep.values: 12.5"):
        parse_mechanism(raw, "x.yaml")
    raw = _spec("pvec_sum")
    raw["checks"] = [{"id": "a", "kind": "protocol_privcy"}]
    with pytest.raises(spec_mod.SpecError, match="did you mean 'protocol_privacy'"):
        parse_mechanism(raw, "x.yaml")
    # the entry decides: the mechanism's name, what may be swept, its parameters' keys and every point's rules
    with pytest.raises(spec_mod.SpecError, match=r"mechanism: .*unknown mechanism 'pvc' \(did you mean 'pvec'\?\)"):
        parse_mechanism(_spec("pvec_sum", mechanism="pvc"), "x.yaml")
    with pytest.raises(spec_mod.SpecError, match="sweep.field: p1d cannot sweep 'd'; sweepable: n, eps, delta"):
        parse_mechanism(_spec("p1d_sum", sweep={"field": "d", "values": [1, 2]}), "x.yaml")
    raw = _spec("p1d_sum")
    raw["params"] = dict(raw["params"], Detla=1.0)
    with pytest.raises(spec_mod.SpecError, match=r"params.Detla: unknown key \(did you mean 'Delta'\?\)"):
        parse_mechanism(raw, "x.yaml")
    with pytest.raises(spec_mod.SpecError, match=r"sweep.values: n d = 2000000 inputs per run \(allowed: <= 1000000\)"):
        parse_mechanism(_spec("pvec_sum", sweep={"field": "n", "values": [10, 200_000]}), "x.yaml")


def test_mechanism_spec_points_keep_the_parameter_models_types():
    """The stored parameters are the entry's model dump (defaults filled in, whole numbers as int), and a sweep
    point casts the swept whole-number parameter to int: the results' JSON types depend on it."""
    spec = parse_mechanism(_spec("pvec_sum", sweep={"field": "n", "values": [10, 20]}), "t.yaml")
    assert spec.model_dump(mode="json")["params"] == {"n": 50, "eps": 1.0, "delta": 1e-6, "Delta": 1.0, "d": 10}
    p = spec.point(20.0)
    assert p == {"n": 20, "eps": 1.0, "delta": 1e-6, "Delta": 1.0, "d": 10} and type(p["n"]) is int
    spec = parse_mechanism(_spec("p1d_sum"), "t.yaml")
    assert spec.params["d"] == 1 and type(spec.point(0.5)["eps"]) is float


def _tiny_sgd(**over):
    from tests.helpers import _tiny

    return _tiny("shuffle_sgd", "tiny_sgd", {"n": 600, "d": 4}, 4, False, **over)


def test_shuffle_sgd_runs_privately_and_deterministically():
    from engine.kinds.learning import runner

    spec = _tiny_sgd()
    res = runner.run_spec(spec)
    assert verdicts(res)["privacy"] == "pass"
    point = res["points"][0]
    assert point["events"][0]["kind"] == "shuffle_sum" and point["events"][0]["max_record_uses"] == 1
    again = runner.run_spec(spec, chunk=1)                   # one trial per unit: the same numbers
    assert again["points"][0]["measurements"] == point["measurements"]


def test_p_sgd_with_noise_below_the_calibration_fails_privacy(monkeypatch):
    """The fault: P_VEC's p cut to a third inside P_SGD's resolution. The accountant's epsilon still meets the claim
    (P_VEC's ~800x slack); the check fails because the parameters as run are not Thm 3.2's at the declared target."""
    import dataclasses

    from engine.kinds.learning import runner

    real = ss.thm32

    def less_noise(**kw):
        pv = real(**kw)
        return dataclasses.replace(pv, one_d=dataclasses.replace(pv.one_d, p=pv.one_d.p / 3))

    monkeypatch.setattr(ss, "thm32", less_noise)
    res = runner.run_spec(_tiny_sgd())
    check = next(c for c in res["checks"] if c["id"] == "privacy")
    assert check["verdict"] == "fail" and "p = " in check["rows"][0]["calibration_failed"]
    assert check["rows"][0]["epsilon_accountant"] < check["rows"][0]["epsilon_target"]


def test_a_user_in_two_rounds_is_charged_twice():
    from algorithms.events import ShuffleSumRelease
    from verifiers import accountants

    once = ShuffleSumRelease(users_per_call=20, dimension=3, grid=9, trials_per_user=20000, p=0.49, Delta2=1.0,
                             rounds=10, max_record_uses=1)
    twice = ShuffleSumRelease(**{**once.__dict__, "max_record_uses": 2})
    e1, _ = accountants.epsilon((once,), L=1.0, delta=1e-6)
    e2, _ = accountants.epsilon((twice,), L=1.0, delta=1e-6)
    assert e2 > 1.3 * e1


def test_biased_noise_is_caught_by_unbiased(monkeypatch):
    real = ss._noise

    def more_ones(n, prm, shape, rng):              # the fault: 0.1% more noise trials than declared, analyzer unchanged
        return real(n, ss.P1DParams(g=prm.g, b=int(prm.b * 1.001) + 1, p=prm.p, Delta=prm.Delta), shape, rng)

    monkeypatch.setattr(ss, "_noise", more_ones)
    assert verdicts(mechanism_run.run(_tiny_p1d()))["unbiased"] == "fail"


def test_spec_errors_survive_worker_processes_and_counts_are_whole():
    import pickle

    err = spec_mod.SpecError("f.yaml", "algorithm.overrides.b", "too large")
    back = pickle.loads(pickle.dumps(err))
    assert str(back) == str(err)
    raw = yaml.safe_load((ROOT / "specs" / "shuffle_sgd.yaml").read_text())
    raw["algorithm"]["overrides"] = {"b": 0.5}
    with pytest.raises(spec_mod.SpecError, match="algorithm.overrides.b: value = 0.5: must be a whole number"):
        spec_mod.parse(raw, "x.yaml")


def _tiny_central(audit: bool = False, data: dict | None = None, **over):
    from tests.helpers import _tiny

    return _tiny("central_sgd", "tiny_central", data or {"n": 40000, "d": 4}, 6, audit, **over)


def test_central_baseline_passes_and_catches_noise_reduced_in_the_mechanism(monkeypatch):
    from algorithms import mechanisms
    from engine.kinds.learning import runner

    v = verdicts(runner.run_spec(_tiny_central()))
    assert v["noise"] == "pass" and v["privacy"] == "pass"
    real = mechanisms.gaussian
    monkeypatch.setattr(mechanisms, "gaussian", lambda clean, sigma, *, rng: real(clean, sigma / 10, rng=rng))
    v = verdicts(runner.run_spec(_tiny_central(audit=True)))
    assert v["noise"] == "fail" and v["privacy"] == "pass" and v["audit"] == "fail"


def test_noise_on_the_sum_instead_of_the_mean_is_caught_by_noise_calibration(monkeypatch):
    from algorithms import mechanisms, shuffle_sgd
    from engine.kinds.learning import runner

    real = shuffle_sgd._sgd

    def sum_noise(records, loss, *, release, **kw):     # the fault: sigma on the sum, i.e. sigma/b on the mean
        return real(records, loss, release=lambda g, exact: mechanisms.gaussian(exact, 0.5, rng=kw["rng"]), **kw)

    monkeypatch.setattr(shuffle_sgd, "_sgd", sum_noise)
    assert verdicts(runner.run_spec(_tiny_central()))["noise"] == "fail"


def test_a_biased_curator_is_caught_by_lemma42(monkeypatch):
    """The fault: the curator's release of the batch's gradient sum is shifted by b/2 e_1 (its mean gradient biased
    by e_1/2), so the iterates settle away from the optimum and Lemma 4.2's explicit bound fails."""
    from algorithms import shuffle_sgd
    from engine.kinds.learning import runner

    real = shuffle_sgd._sgd

    def biased(records, loss, *, release, **kw):
        def rel(g, exact):
            shift = np.zeros(g.shape[-1])
            shift[0] = 0.5 * g.shape[1]
            return release(g, exact) + shift
        return real(records, loss, release=rel, **kw)

    monkeypatch.setattr(shuffle_sgd, "_sgd", biased)
    assert verdicts(runner.run_spec(_tiny_central(data={"n": 400000, "d": 4})))["lemma42"] == "fail"


@pytest.mark.parametrize("lead", [(), (3,), (2, 4)])
def test_fused_rounding_is_numpys_elementwise_rounding_bit_for_bit(lead):
    """P_1D / P_VEC round and sum in one numba pass (kernels.round_counts); the reference is numpy's elementwise
    ``_round`` on the transposed shifted inputs, summed over the users, from the same generator state: equal counts,
    bit for bit, on inputs off and on the grid, at both ends of [0, Delta] and just outside them (within the
    tolerance the guard allows), on broadcast views (as catalog/shuffle_000_sums.py passes them) and empty shapes."""
    rng = np.random.default_rng(7)
    for n, d in ((1, 1), (37, 1), (200, 10), (5, 33), (0, 3), (4, 0)):
        pv = ss.thm32(n=max(n, 1), d=max(d, 1), eps=2.0, delta=1e-6, Delta2=1.5)
        one = pv.one_d
        x = rng.standard_normal(lead + (n, d))
        x *= 1.5 * rng.uniform(0, 1, size=lead + (n, 1)) / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-9)
        if x.size and d == 1:
            x.reshape(-1)[:4] = [0.0, 1.5, -1.5, -1.5 * (1 + 1e-13)][:x.size]   # shifted: mid, Delta, 0, below 0
        elif x.size:
            x.reshape(-1, d)[:1] = 0.0                                      # shifted: mid-range
        seed = int(rng.integers(1 << 30))
        ref = ss._round(np.ascontiguousarray(np.swapaxes(x + 1.5, -1, -2)), one, np.random.default_rng(seed))
        got = ss._rounded_sum(x, 1.5, one, np.random.default_rng(seed))
        assert got.shape == lead + (d,)
        assert np.array_equal(got, ref.sum(axis=-1))
        w = np.ascontiguousarray(np.swapaxes(x + 1.5, -1, -2))             # P_1D on each coordinate's inputs
        r = np.random.default_rng(seed)
        want = ss._round(w, one, r).sum(axis=-1) + ss._noise(n, one, w.shape[:-1], r)
        assert np.array_equal(ss.p1d_count(w, one, np.random.default_rng(seed)), want)
        if x.size:                                                          # a broadcast view of one trial's inputs
            view = np.broadcast_to(x.reshape((-1,) + x.shape[-2:])[0], (3,) + x.shape[-2:])
            ref = ss._round(np.ascontiguousarray(np.swapaxes(view + 1.5, -1, -2)), one, np.random.default_rng(seed))
            assert np.array_equal(ss._rounded_sum(view, 1.5, one, np.random.default_rng(seed)), ref.sum(axis=-1))


def test_fused_rounding_refuses_inputs_outside_the_range():
    one = ss.lemma31(n=10, eps=1.0, delta=1e-6, Delta=2.0)
    with pytest.raises(ValueError, match=r"P_1D inputs must lie in \[0, Delta = 2\] \(got -0.5 "):
        ss.p1d_count(np.full((2, 10), -0.5), one, np.random.default_rng(0))
    with pytest.raises(ValueError, match="P_1D inputs must lie in"):
        ss._rounded_sum(np.full((4, 3), 1.1), 1.0, one, np.random.default_rng(0))
