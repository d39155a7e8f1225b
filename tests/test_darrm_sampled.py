"""DaRRM sampled (catalog/darrm_sampled_003.py, algorithms/darrm_sampler.py, verifiers/checks/darrm_sampled.py): the
sampler's output frequencies against a brute force over every vote vector, the audit's worst pair against the exact
loss, clean runs that pass, and planted faults: a larger subsample in gamma_Sub (caught by the exact darrm_privacy
check AND by the audit), a biased fair coin in the sampler (caught by the utility simulation)."""
from __future__ import annotations

import copy
import itertools
import math

import numpy as np
import pytest
from scipy.stats import binomtest

from algorithms import darrm, darrm_sampler
from catalog import darrm_sampled_003 as cat
from engine.kinds.mechanism import run as mechanism_run
from engine.kinds.mechanism.spec import parse_mechanism
from tests.helpers import raw, verdicts
from verifiers.accountants import darrm_privacy as dp


def _spec(name: str, values: list[int] | None, trials: int, **params):
    r = copy.deepcopy(raw(name))
    r["params"].update(params)
    r["trials"] = trials
    r["sweep"] = None if not values or len(values) == 1 else {"field": "m", "values": values}
    if values and len(values) == 1:
        r["params"]["m"] = values[0]
    r["expect"], r["expect_quick"] = {}, {}
    return parse_mechanism(r, "t.yaml")


def brute_one(p: tuple[float, ...], gamma: np.ndarray) -> float:
    """Pr[DaRRM_gamma = 1] over every vote vector (Algorithm 1, L865-880)."""
    K = len(p)
    tot = []
    for s in itertools.product((0, 1), repeat=K):
        pr = math.prod(pi if si else 1 - pi for pi, si in zip(p, s))
        L = sum(s)
        tot.append(pr * (gamma[L] * (2 * L >= K + 1) + (1 - gamma[L]) / 2))
    return math.fsum(tot)


@pytest.mark.parametrize("p", [(0.2, 0.9, 0.5), (0.1, 0.3, 0.6, 0.8, 0.95)])
def test_sampler_frequency_matches_every_vote_vector(p):
    """Two-sided exact binomial test at 1e-4 of the sampled Pr[out = 1] against the brute force."""
    K = len(p)
    gam = darrm.gamma_sub(K, 2)
    t = darrm_sampler.tally(darrm_sampler.fixed(np.array(p)), gam, 200_000, np.random.default_rng(5))
    assert binomtest(t.ones, t.n, brute_one(p, gam)).pvalue > 1e-4


def test_worst_pair_is_the_exact_maximum_and_its_probabilities():
    K, m, eps, Delta = 7, 2, 0.2, 1e-3
    laws = dp.corner_laws(K, eps, Delta)
    delta = 1 - (1 - Delta) ** m
    gam = darrm.gamma_sub(K, m)
    at = cat.worst_pair(laws, gam, delta)
    assert at["exact"] == pytest.approx(dp.exact_epsilon(laws, gam, delta).epsilon, rel=1e-12)
    P = brute_one(tuple(at["p_first"]), gam)
    Q = brute_one(tuple(at["p_second"]), gam)
    if at["output"] == 0:
        P, Q = 1 - P, 1 - Q
    assert (P, Q) == pytest.approx((at["prob_first"], at["prob_second"]), abs=1e-12)
    assert math.log((P - delta) / Q) == pytest.approx(at["exact"], rel=1e-9)


def test_clean_run_passes_and_cites_its_claims():
    res = mechanism_run.run(_spec("darrm_sampled", [1, 3], 400_000))
    assert verdicts(res) == {"audit": "pass", "utility_sim": "pass"}
    by_id = {c["id"]: c for c in res["checks"]}
    assert by_id["audit"]["claims"] == ["003 Lemma 3.4.4 / B.1.5"]
    assert by_id["utility_sim"]["claims"] == ["003 Eq. B.56"]
    for row in by_id["audit"]["rows"]:
        assert row["audit_lower"] <= row["exact"]
    bullets, body = cat.report(res)
    assert any("Clopper-Pearson" in b for b in bullets) and body[0].startswith("| m |")


def test_a_larger_subsample_in_gamma_sub_is_caught_by_the_exact_check_and_by_darrm_audit(monkeypatch):
    """The planted fault: gamma_Sub of 2m + 1 subsampled mechanisms claimed (m eps, delta)-DP. At K = 11, eps = 0.1,
    Delta = 1e-5, m = 3 its exact epsilon is 0.397 > 0.3 at the corner pair (7 x (0, Delta), 4 x (0.475, 0.525)),
    where Pr[out = 1] = 0.0081 vs 0.0054: 2e6 runs per side put the audit's bound well above 0.3."""
    real = darrm.gamma_sub
    clean = _spec("darrm_sampled", [3], 2_000_000, gamma="sub")
    assert verdicts(mechanism_run.run(clean))["audit"] == "pass"
    exact = copy.deepcopy(raw("darrm_fig32"))
    exact.update(sweep=None, trials=200, expect={}, expect_quick={},
                 checks=[{"id": "privacy", "kind": "darrm_privacy"}])
    exact["params"].update(m=3, lp=0)
    with monkeypatch.context() as mp:
        mp.setattr(darrm, "gamma_sub", lambda K, m: real(K, min(K, 2 * m + 1)))
        assert verdicts(mechanism_run.run(parse_mechanism(exact, "t.yaml")))["privacy"] == "fail"
        res = mechanism_run.run(clean)
        assert verdicts(res)["audit"] == "fail"
        row = res["checks"][0]["rows"][0]
        assert row["exact"] == pytest.approx(0.3968, abs=1e-3) and row["audit_lower"] > 0.33
        assert "claimed m eps" in res["checks"][0]["summary"]


def test_a_biased_fair_coin_in_the_sampler_is_caught_by_darrm_utility_sim(monkeypatch):
    spec = _spec("darrm_sampled", [3], 400_000)
    assert verdicts(mechanism_run.run(spec))["utility_sim"] == "pass"
    with monkeypatch.context() as mp:
        mp.setattr(darrm_sampler, "coin", lambda u: u < 0.53)
        res = mechanism_run.run(spec)
    assert verdicts(res)["utility_sim"] == "fail"
    assert "outside the simulated" in res["checks"][1]["summary"]


def test_utility_interval_with_no_nonzero_draw_is_the_clopper_pearson_limit():
    from verifiers.checks.darrm_sampled import interval

    lo, hi = interval(0.0, 0.0, 10_000, 0, 0.99)
    assert lo == -hi and hi == pytest.approx(1 - 0.005 ** (1 / 10_000), rel=1e-9)
