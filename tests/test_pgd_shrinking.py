"""P_GD under Lemma B.7's reduction with the proof's shrinking domains (variants ``fkt_shrinking`` /
``fkt_accountant_shrinking`` of seed 000's shuffle_gd, catalog/shuffle_000_gd._shrinking_groups): the D_i recursion
(constants 1), each group's step and projection (Theta intersected with the ball of radius D_i around the group's
start, algorithms/shuffle_gd.project_ball_pair), the groups' disjoint users, the old variants' unchanged path, and
two planted faults (domains that do not shrink leave Thm 4.9's strongly convex rate check inapplicable; a noise too
small fails the privacy check)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from algorithms import losses, shuffle_gd, shuffle_sum
from algorithms.data import Records, make_sphere_linear
from catalog import ALGORITHMS, pvec_calibration
from catalog import shuffle_000_gd as cat
from catalog.base import ResolutionError
from engine.kinds.learning import runner
from tests.helpers import _tiny, plant_noise_twice_too_small, verdicts
from verifiers.theorems.shuffle_000_agd import SHRINKING
from verifiers.theorems.shuffle_000_gd import THM49_SC

DELTA = 1e-6


def _c(n=6000.0, d=2.0, mu=0.5, eps=0.6, L=2.1):
    return {"n": n, "d": d, "L": L, "D": 2.0, "beta": 1.0 + mu, "mu": mu, "eps0": eps, "delta0": DELTA}


def test_the_groups_follow_the_proofs_recursion_with_constants_one():
    c = _c()
    res = ALGORITHMS.get("shuffle_gd").resolve(c, "fkt_shrinking", {})
    p, kw = res.params, res.run_kwargs
    k, n_i, T = int(p["groups"]), int(p["K"]), int(p["T"])
    # k = ceil(log2 log2 6000) = ceil(log2 12.55) = 4 groups of 1500; T = floor(0.36 * 1500^2/(2 ln^2(3e9))) = 850
    assert (k, n_i, T) == (4, 1500, 850)
    # Thm 4.9's convex bound per unit of D at n_i (L277): L (1/sqrt(n_i) + sqrt(d) ln^(3/2)(d/delta)/(eps n_i))
    per_D = 2.1 * (1 / math.sqrt(1500) + math.sqrt(2) * math.log(2e6) ** 1.5 / (0.6 * 1500))
    want = [2.0]
    for _ in range(3):
        want.append(min(2.0, math.sqrt(2 * want[-1] * per_D / 0.5)))
    np.testing.assert_allclose(kw["group_radius"], want, rtol=1e-12)
    np.testing.assert_allclose(kw["group_eta"], [Di / (2.1 * math.sqrt(T)) for Di in want], rtol=1e-12)
    assert want[0] > want[1] > want[2] > want[3] and kw["group_radius"][0] == c["D"]
    assert p["shrinking_domain"] == 1 and p["D_last_group"] == pytest.approx(want[-1])
    assert p["D2_over_D"] == pytest.approx(want[1] / 2)
    assert "OUR CHOICE" in res.provenance["group_rule"] and SHRINKING.holds(p)
    assert not THM49_SC.failed_conditions(p)
    # T, P_VEC and the groups are variant fkt's: only the domains and steps differ
    fkt = ALGORITHMS.get("shuffle_gd").resolve(c, "fkt", {})
    for key in ("T", "K", "groups", "R", "g", "b_binom", "p", "eta"):
        assert fkt.params[key] == p[key], key
    assert "group_radius" not in fkt.run_kwargs and not SHRINKING.holds(fkt.params)


def test_the_accountant_variant_calibrates_for_one_groups_calls():
    res = ALGORITHMS.get("shuffle_gd").resolve(_c(), "fkt_accountant_shrinking", {})
    pv = res.run_kwargs["pvec"]
    assert pv.calibrated_by == pvec_calibration.CALIBRATOR and pv.calibrated_calls == int(res.params["T"])
    assert res.params["pvec_accountant_calibrated"] == 1 and res.params["fkt_reduction"] == 1


def test_without_strong_convexity_nothing_shrinks_and_eta_is_not_overridable():
    entry = ALGORITHMS.get("shuffle_gd")
    flat = entry.resolve(_c(mu=0.0), "fkt_shrinking", {})
    assert flat.run_kwargs["group_radius"] == (2.0,) * 4 and flat.params["shrinking_domain"] == 0
    assert not SHRINKING.holds(flat.params)
    with pytest.raises(ResolutionError, match="eta"):
        entry.resolve(_c(), "fkt_shrinking", {"eta": 0.1})


def test_projection_onto_the_two_balls_is_the_nearest_feasible_point():
    rng = np.random.default_rng(7)
    for _ in range(60):
        c = rng.normal(size=3)
        c *= rng.uniform(0, 1) / np.linalg.norm(c)
        r = rng.uniform(0.05, 2.5)
        x = rng.normal(size=3) * rng.uniform(0.1, 3)
        got = shuffle_gd.project_ball_pair(x[None], 1.0, c[None], r)[0]
        assert np.linalg.norm(got) <= 1 + 1e-9 and np.linalg.norm(got - c) <= r + 1e-9
        cons = [{"type": "ineq", "fun": lambda v: 1 - v @ v},
                {"type": "ineq", "fun": lambda v, c=c, r=r: r * r - (v - c) @ (v - c)}]
        ref = minimize(lambda v, x=x: (v - x) @ (v - x), c, constraints=cons, method="SLSQP",
                       options={"ftol": 1e-14, "maxiter": 500})
        assert np.linalg.norm(ref.x - got) < 1e-5


def _records(n=400, d=3, trials=4, seed=0, mu=0.0):
    pop = make_sphere_linear(np.random.default_rng(seed), d=d, N=1, radius=1.0, label_noise=0.1, w_norm=0.5,
                             heterogeneity=0.0, mu=mu, diameter=2.0)
    return pop, Records(pop, np.random.default_rng(seed + 1), trials, n, materialise=True)


def _run(group_radius=None, group_eta=None, release=None, seed=2):
    pop, rec = _records()
    pv = shuffle_sum.thm32(n=100, d=3, eps=0.5, delta=DELTA, Delta2=pop.L)
    return shuffle_gd.run(rec, losses.Squared(), T=9, eta=0.2, L=pop.L, radius=1.0, pvec=pv,
                          rng=np.random.default_rng(seed), groups=4, group_radius=group_radius, group_eta=group_eta,
                          release=release)


def test_domains_equal_to_theta_give_variant_fkts_run_bit_for_bit():
    """With D_i = D in every group the ball of radius D around any point of Theta holds Theta: the projection is the
    plain one and the run is variant fkt's exactly (the old variants take the unchanged path, group_radius=None)."""
    a, b = _run(), _run(group_radius=(2.0,) * 4, group_eta=(0.2,) * 4)
    assert np.array_equal(a.w, b.w) and np.array_equal(a.noise_sq, b.noise_sq) and a.events == b.events


def test_each_group_projects_onto_its_own_ball_and_its_users_join_its_calls_only():
    calls = []

    def exact(g):
        calls.append(g.shape)
        return g.sum(axis=1)

    free = _run(release=exact)
    calls.clear()
    tight = _run(group_radius=(1e-3,) * 4, group_eta=(0.2,) * 4, release=exact)
    # every group's iterates stay within 1e-3 of its start (the previous output, 0 for the first): the output
    # is within 4e-3 of w0 = 0, while the unconstrained groups move far from it
    assert np.linalg.norm(tight.w, axis=1).max() <= 4e-3 * (1 + 1e-9)
    assert np.linalg.norm(free.w, axis=1).min() > 0.05
    # 4 groups x 9 calls of the 100 users of one group; every one of the 400 users in exactly 9 calls: 36 x 100 =
    # 400 x 9 user-calls, so no user is in two groups' calls (disjoint groups, parallel composition)
    assert calls == [(4, 100, 3)] * 36
    assert (tight.record_uses == 9).all() and (tight.extra["min_record_uses"] == 9).all()
    assert tight.events[0].max_record_uses == 9 and tight.events[0].rounds == 36


def _tiny_sc():
    return _tiny("shuffle_gd_sc_acc_eps", "tiny_pgd_sc", {"n": 1200}, 2)


def test_domains_that_do_not_shrink_leave_the_rate_check_inapplicable(monkeypatch):
    """Planted fault: a recursion that keeps D_i = D (variant fkt's domains under the shrinking variant's name) must
    not let the strongly convex rate check judge the run."""
    c = _c()
    good = ALGORITHMS.get("shuffle_gd").resolve(c, "fkt_accountant_shrinking", {})
    assert not THM49_SC.failed_conditions(good.params)
    real = cat._shrinking_groups

    def no_shrink(c, ov, res):                    # the fault: lambda so small that sqrt(2 Delta/lambda) > D
        return real({**c, "mu": 1e-9}, ov, res)

    monkeypatch.setattr(cat, "_shrinking_groups", no_shrink)
    bad = ALGORITHMS.get("shuffle_gd").resolve(c, "fkt_accountant_shrinking", {})
    assert bad.run_kwargs["group_radius"] == (c["D"],) * int(bad.params["groups"])
    assert bad.params["shrinking_domain"] == 0
    assert any("shrinking" in why for why in THM49_SC.failed_conditions(bad.params))
    # the engine's rate check: inapplicable, naming the condition
    spec = _tiny_sc()
    raw = spec.model_dump(mode="json")
    raw.update(sweep={"field": "threat_model.epsilon", "values": [0.3, 0.424, 0.6]},
               checks=[{"id": "rate_eps", "kind": "rate", "theorem": "shuffle.thm4_9.strongly_convex",
                        "variable": "eps0", "saturation": "measured"}])
    from engine.kinds.learning import spec as spec_mod
    res = runner.run_spec(spec_mod.parse(raw, "tiny_pgd_sc_rate"))
    rate = next(c for c in res["checks"] if c["id"] == "rate_eps")
    assert rate["verdict"] == "inapplicable" and "shrinking" in rate["summary"]


def test_a_noise_twice_too_small_is_caught_by_the_privacy_check(monkeypatch):
    clean = runner.run_spec(_tiny_sc())
    assert verdicts(clean)["privacy"] == "pass"
    plant_noise_twice_too_small(monkeypatch)                       # the fault: eps_c 2x the calibrated one
    res = runner.run_spec(_tiny_sc())
    assert verdicts(res)["privacy"] == "fail"
