"""Thm 4.8's smooth case with the proof's shrinking phases (variant ``accountant_shrinking`` of shuffle_agd_sc on a
smooth loss; catalog/shuffle_000_agd.py ``_smooth_shrinking_phases``, algorithms/shuffle_agd.py ``_agd_phases``):
every phase's b_i, T_i, P_VEC and L_t are Thm 4.3's at the proof's D_i, the phases read disjoint groups of users
(each user in one P_VEC call), the privacy check composes the phases in parallel and catches a user reused across
phases and a phase whose noise is too small."""
from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms import shuffle_agd
from algorithms.losses import Squared
from catalog import ALGORITHMS, pvec_calibration
from engine.kinds.learning import runner
from tests.helpers import _tiny, verdicts
from verifiers.theorems.shuffle_000_agd import EQ5, PAPER, SHRINKING

C = {"n": 40000.0, "d": 2.0, "L": 2.0, "D": 1.2, "beta": 1.5, "mu": 0.5, "eps0": 0.5, "delta0": 1e-6}


def _smooth(c=C, ov=None):
    return ALGORITHMS.get("shuffle_agd_sc").resolve(c, "accountant_shrinking", dict(ov or {"k": 4}))


def test_smooth_phases_use_the_proofs_d_i_in_b_t_pvec_and_lt():
    res = _smooth()
    kw, p = res.run_kwargs, res.params
    k, n_i = 4, int(C["n"]) // 4
    bs, Ts, Ks, pvs = kw["phase_b"], kw["phase_T"], kw["phase_K"], kw["phase_pvec"]
    assert len(bs) == len(Ts) == len(Ks) == len(pvs) == k and p["n_phase"] == n_i
    # the proof's recursion (eq. (6), L652, C = 1), written out here: D_1 = D, D_{i+1} = min(D, sqrt(2 Delta/lambda))
    L, D, d, lam, beta, eps = C["L"], C["D"], 2, C["mu"], C["beta"], C["eps0"]
    lg = math.log(d / C["delta0"])
    A = d ** 0.4 * beta ** 0.2 * L ** 0.8 * lg ** 0.8 / eps ** 0.8
    Ds = [D]
    for _ in range(k - 1):
        Ds.append(min(D, math.sqrt(2 * (A * Ds[-1] ** 1.2 / n_i ** 0.8 + L * Ds[-1] / math.sqrt(n_i)) / lam)))
    assert Ds[-1] < D / 2 and p["D_last_phase"] == pytest.approx(Ds[-1])
    for i, Di in enumerate(Ds):
        b = math.ceil(n_i ** 0.6 * d ** 0.2 * L ** 0.4 * lg ** 0.4 / (eps ** 0.4 * beta ** 0.4 * Di ** 0.4))
        assert bs[i] == b and Ts[i] == n_i // b          # Thm 4.3's b at D_i (L199), T_i = floor(n_i/b_i)
        assert pvs[i] == pvec_calibration.calibrate(b, d, eps, C["delta0"], L)      # P_VEC for b_i users
        sigma = math.sqrt(L ** 2 / b + shuffle_agd_mse(b, pvs[i]) / b ** 2)
        assert Ks[i] == pytest.approx((Ts[i] + 2) ** 1.5 * sigma / Di + beta)
    assert all(a < b for a, b in zip(bs, bs[1:]))      # the batch grows as D_i shrinks
    assert max(b * T for b, T in zip(bs, Ts)) <= n_i and sum(b * T for b, T in zip(bs, Ts)) <= C["n"]
    assert p["R"] == sum(Ts) and p["shrinking_domain"] == 1 and p["phase_batches"] == 1
    assert SHRINKING.holds(p) and PAPER.holds(p)
    # eq. (5)'s bound is per round at one b: the oracle check does not apply to phases of different batches
    assert "one batch size" in " ".join(EQ5.failed_conditions(p))
    assert "OUR CHOICE" in res.provenance["phase_rule"] and "L652" in res.provenance["phase_rule"]
    with pytest.raises(Exception, match="no override"):
        _smooth(ov={"k": 4, "b": 100})


def shuffle_agd_mse(b, pv):
    from algorithms import shuffle_sum
    return shuffle_sum.pvec_mse_bound(b, 2, pv)


class _Recording:
    """Trials of n users with x = e_1/2, y = 1/4; records which users each round reads."""

    def __init__(self, trials, n, d=2):
        self.trials, self.n, self.d, self.N, self.seen = trials, n, d, 1, []
        self.fresh = False

    def take(self, idx):
        self.seen.append(idx.copy())
        X = np.zeros(idx.shape + (self.d,))
        X[..., 0] = 0.5
        return X, np.full(idx.shape, 0.25)


def test_phases_read_disjoint_groups_each_user_in_one_call(monkeypatch):
    res = _smooth()
    kw = res.run_kwargs
    orders = []
    real = shuffle_agd.user_order
    monkeypatch.setattr(shuffle_agd, "user_order", lambda *a, **k: orders.append(real(*a, **k)) or orders[-1])
    rec = _Recording(trials=3, n=int(C["n"]))
    out = shuffle_agd.run(rec, Squared(mu=0.5), rng=np.random.default_rng(3), **kw)
    n_i, bs, Ts = int(C["n"]) // 4, kw["phase_b"], kw["phase_T"]
    assert [s.shape[-1] for s in rec.seen] == [b for b, T in zip(bs, Ts) for _ in range(T)]
    used = np.concatenate([s.reshape(3, -1) for s in rec.seen], axis=1)
    assert used.shape[1] == sum(b * T for b, T in zip(bs, Ts)) <= C["n"]
    for t in range(3):
        assert len(set(used[t].tolist())) == used.shape[1]          # every user at most once, in any phase
    assert out.rounds == sum(Ts) and int(out.record_uses.max()) == 1
    assert [e.users_per_call for e in out.events] == list(bs) and [e.rounds for e in out.events] == list(Ts)
    assert all(e.max_record_uses == 1 and e.calibrated_by for e in out.events)
    # phase j's users all come from its own group of n/k of the trial's random order
    (order,) = orders
    start = 0
    for j, T in enumerate(Ts):
        block = np.concatenate([s.reshape(3, -1) for s in rec.seen[start:start + T]], axis=1)
        start += T
        for t in range(3):
            assert set(block[t].tolist()) <= set(order[t, 0, j * n_i:(j + 1) * n_i].tolist())
    assert np.all(np.isfinite(out.w)) and out.w[:, 0].min() > 0      # moved from w0 = 0 toward w* > 0


def _tiny_smooth(**over):
    """shuffle_agd_strongly_convex's ridge regression at C's constants (d = 2, diameter 1.2, lambda = 0.5, w_norm 1:
    L = 2, beta = 1.5), 8000 users, 3 smooth shrinking phases with the accountant-calibrated P_VEC, eps = 1."""
    return _tiny("shuffle_agd_strongly_convex", "tiny_smooth", {"n": 8000, "d": 2, "w_norm": 1.0}, 2,
                 threat_model={"kind": "shuffle", "epsilon": 1.0, "delta": 1e-6},
                 loss={"kind": "squared", "diameter": 1.2, "mu": 0.5},
                 algorithm={"kind": "shuffle_agd_sc", "variant": "accountant_shrinking", "overrides": {"k": 3}}, **over)


def test_clean_smooth_phases_pass_privacy_and_a_reused_user_fails(monkeypatch):
    clean = runner.run_spec(_tiny_smooth())
    assert verdicts(clean) == {"privacy": "pass", "oracle": "inapplicable"}      # eq. (5) is per batch size
    (composed,) = clean["points"][0]["events"]                      # the run's releases, one per phase
    assert [e["kind"] for e in composed["events"]] == ["shuffle_sum"] * 3
    real = shuffle_agd.user_order

    def reuse(rng, trials, n, **k):      # the fault: phase 2's group is phase 1's users again
        out = real(rng, trials, n, **k)
        g = n // 3
        out[..., g:2 * g] = out[..., :g]
        return out

    monkeypatch.setattr(shuffle_agd, "user_order", reuse)
    monkeypatch.setattr(runner, "STREAM_ONE_PASS", False)   # streamed records would refuse the reuse outright
    res = runner.run_spec(_tiny_smooth())
    assert verdicts(res)["privacy"] == "fail"
    row = next(c for c in res["checks"] if c["id"] == "privacy")["rows"][0]
    assert row["max_record_uses"] == 2 and "joined 2" in row["calibration_failed"]


def test_one_phase_with_too_little_noise_fails_privacy(monkeypatch):
    """The fault: the last phase's P_VEC calibrated for 3 eps (the others right): the parallel composition takes
    the worst phase, so the check sees it (a check of the first phase alone would not)."""
    real = pvec_calibration.calibrate
    first = _smooth(dict(C, n=8000.0, eps0=1.0, L=2.0), {"k": 3}).run_kwargs["phase_b"]
    last = first[-1]

    def wrong_last(n, d, eps, delta, Delta2):
        return real(n, d, 3 * eps if n == last else eps, delta, Delta2)

    monkeypatch.setattr(pvec_calibration, "calibrate", wrong_last)
    res = runner.run_spec(_tiny_smooth())
    priv = next(c for c in res["checks"] if c["id"] == "privacy")
    assert priv["verdict"] == "fail" and priv["rows"][0]["epsilon_accountant"] > 2 * priv["rows"][0]["epsilon_target"]


def test_phases_that_do_not_shrink_leave_the_rate_checks_inapplicable():
    """Planted fault (reviewer): at a tiny lambda the recursion keeps D_i = D in every phase, smooth or not; then
    shrinking_domain is 0 and Thm 4.8's SHRINKING condition fails, so neither rate check applies."""
    import math

    from catalog import ALGORITHMS
    from verifiers.theorems.shuffle_000_agd import SHRINKING

    entry = ALGORITHMS.get("shuffle_agd_sc")
    c = {"n": 50000.0, "d": 10.0, "L": 1.0, "D": 4.0, "mu": 1e-6, "eps0": 0.5, "delta0": 1e-6}
    for beta in (1.0, math.inf):
        res = entry.resolve(dict(c, beta=beta), "accountant_shrinking", {"k": 4})
        assert res.params["D_last_phase"] == c["D"] and res.params["shrinking_domain"] == 0
        assert not SHRINKING.holds(res.params)
        shrinking = entry.resolve(dict(c, beta=beta, mu=0.1), "accountant_shrinking", {"k": 4})
        assert shrinking.params["shrinking_domain"] == 1 and SHRINKING.holds(shrinking.params)
