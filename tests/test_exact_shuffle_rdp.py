"""Seed 001's subsampled shuffle mechanism with k-ary randomized response (catalog/shuffle_001_exact.py): the exact
histogram laws and Renyi divergences (verifiers/accountants/exact_shuffle_rdp.py) against a brute force over every
client sample and every randomizer output (n <= 5), the search over every neighbouring pair against a brute force
over every pair of data sets, Thm 2's closed form against the brute force at its pair, the two checks
(verifiers/checks/exact_rdp.py) on clean runs, and planted faults in the bounds and in the mechanism."""
from __future__ import annotations

import copy
import itertools
import math

import numpy as np
import pytest

from catalog import MECHANISMS
from catalog import shuffle_001_exact as cat
from engine.kinds.mechanism import run as mechanism_run
from engine.kinds.mechanism.spec import MechanismCheck, parse_mechanism
from tests.helpers import raw, verdicts
from verifiers.accountants import exact_shuffle_rdp as E
from verifiers.accountants import subsampled_shuffle as S
from verifiers.checks import exact_rdp

TOL = 1e-10


# --------------------------------------------------------------------------------------------------------------
# the independent reference: every k-subset of the n clients, every output of each sampled client


def brute_law(data: tuple[int, ...], k: int, eps0: float, A: int) -> dict[tuple[int, ...], float]:
    """The server's histogram law, written out from eq. (3) (L128-130): a uniform k-subset of the clients (without
    replacement), k-ary RR on each (keep w.p. e^eps0/(e^eps0 + A - 1)), the histogram of the outputs."""
    keep, other = math.exp(eps0) / (math.exp(eps0) + A - 1), 1 / (math.exp(eps0) + A - 1)
    subsets = list(itertools.combinations(range(len(data)), k))
    terms: dict[tuple[int, ...], list[float]] = {}
    for sub in subsets:
        for ys in itertools.product(range(A), repeat=k):
            pr = 1 / len(subsets)
            for i, y in zip(sub, ys):
                pr *= keep if data[i] == y else other
            terms.setdefault(tuple(ys.count(a) for a in range(A)), []).append(pr)
    return {h: math.fsum(v) for h, v in terms.items()}


def brute_renyi(P: dict, Q: dict, lam: int) -> float:
    return math.log(math.fsum(P[h] ** lam * Q[h] ** (1 - lam) for h in P)) / (lam - 1)


def _as_dict(hists: np.ndarray, log_pmf: np.ndarray) -> dict[tuple[int, ...], float]:
    return {tuple(int(v) for v in h): float(math.exp(lp)) for h, lp in zip(hists, log_pmf)}


def _data(others: tuple[int, ...], u: int) -> tuple[int, ...]:
    return (u, *[a for a, c in enumerate(others) for _ in range(c)])


ORDERS = [2, 3, 5, 8, 13]


@pytest.mark.parametrize("n,k,A,eps0,others", [
    (5, 3, 2, 1.0, (4, 0)), (5, 3, 2, 0.4, (2, 2)), (5, 5, 2, 2.0, (0, 4)), (4, 1, 2, 1.5, (1, 2)),
    (5, 2, 3, 1.3, (1, 1, 2)), (4, 3, 3, 0.7, (0, 0, 3)), (5, 4, 3, 2.5, (2, 0, 2)), (4, 2, 4, 1.0, (0, 1, 1, 1)),
    (3, 3, 4, 3.0, (0, 0, 0, 2)), (1, 1, 3, 1.0, (0, 0, 0)),
])
def test_histogram_laws_and_divergences_match_the_brute_force(n, k, A, eps0, others):
    laws = E.pair_laws(n, k, eps0, A, others)
    P, Q = brute_law(_data(others, 1), k, eps0, A), brute_law(_data(others, 0), k, eps0, A)
    assert set(P) == {tuple(int(v) for v in h) for h in laws.hists}
    for mine, ref in ((_as_dict(laws.hists, laws.log_new), P), (_as_dict(laws.hists, laws.log_old), Q)):
        assert all(mine[h] == pytest.approx(ref[h], rel=TOL) for h in ref)
        assert math.fsum(mine.values()) == pytest.approx(1.0, abs=1e-13)
    fwd = E.renyi(laws.log_new, laws.log_old, np.array(ORDERS))
    rev = E.renyi(laws.log_old, laws.log_new, np.array(ORDERS))
    for i, lam in enumerate(ORDERS):
        assert fwd[i] == pytest.approx(brute_renyi(P, Q, lam), rel=TOL)
        assert rev[i] == pytest.approx(brute_renyi(Q, P, lam), rel=TOL)


@pytest.mark.parametrize("n,k,A,eps0", [(4, 2, 2, 1.0), (5, 3, 2, 2.0), (5, 5, 2, 0.5), (4, 3, 3, 1.2),
                                        (5, 2, 3, 2.0), (4, 2, 4, 1.5)])
def test_the_search_over_pairs_finds_the_brute_force_maximum_over_every_pair_of_data_sets(n, k, A, eps0):
    """Every data set in [A]^n, every replacement of client 0's value: the largest D_lambda (the RDP of the
    mechanism with this randomizer), against the search over count vectors with symbols relabelled."""
    laws = {}
    for d in itertools.product(range(A), repeat=n):
        key = tuple(sorted(d[1:])) + (d[0],)      # the law depends on client 0's value and the others' multiset
        if key not in laws:
            laws[key] = brute_law(d, k, eps0, A)
    best = [0.0] * len(ORDERS)
    for d in itertools.product(range(A), repeat=n):
        for new in range(A):
            if new != d[0]:
                P = laws[tuple(sorted(d[1:])) + (new,)]
                Q = laws[tuple(sorted(d[1:])) + (d[0],)]
                best = [max(b, brute_renyi(P, Q, lam)) for b, lam in zip(best, ORDERS)]
    ex = E.exact_rdp(n, k, eps0, A, ORDERS)
    assert ex.worst == pytest.approx(best, rel=TOL)
    assert ex.pairs == E.pairs_searched(n, A)
    assert ex.ldp_epsilon == pytest.approx(eps0, rel=1e-12)


@pytest.mark.parametrize("n,k,eps0", [(5, 3, 1.0), (5, 5, 2.0), (4, 1, 0.5), (5, 2, 3.0)])
def test_thm2_is_the_divergence_of_its_pair_by_brute_force(n, k, eps0):
    """Thm 2's closed form (subsampled_shuffle.rdp_lower, L149-153) equals the brute-force D_lambda(M(D1) || M(D0)) of
    binary RR with D0 = all zeros and D1 = one client changed to 1: the pair rdp_lower compares with."""
    P, Q = brute_law((1,) + (0,) * (n - 1), k, eps0, 2), brute_law((0,) * n, k, eps0, 2)
    for lam in ORDERS:
        assert S.rdp_lower(lam, k=k, n=n, eps0=eps0) == pytest.approx(brute_renyi(P, Q, lam), rel=TOL)
    ex = E.exact_rdp(n, k, eps0, 2, ORDERS)
    assert ex.named["others = old"]["forward"] == pytest.approx([brute_renyi(P, Q, lam) for lam in ORDERS], rel=TOL)


def test_the_randomizer_is_k_ary_rr_and_exactly_eps0_ldp():
    r = np.exp(E.randomizer(4, 1.0))
    e = math.e
    assert np.allclose(r.sum(axis=1), 1.0)
    assert np.allclose(np.diag(r), e / (e + 3)) and r[0, 1] == pytest.approx(1 / (e + 3))
    assert E.ldp_epsilon(E.randomizer(3, 0.7)) == pytest.approx(0.7)
    with pytest.raises(ValueError):
        E.randomizer(1, 1.0)


def test_named_pairs_count_the_other_clients():
    for n, A in ((16, 4), (7, 3), (2, 2)):
        for c in E.named_pairs(n, A).values():
            assert len(c) == A and sum(c) == n - 1 and min(c) >= 0


def test_work_and_pair_counts():
    assert E.pairs_searched(16, 2) == 16                           # c_0 = 0..15
    assert E.pairs_searched(5, 3) == sum(1 for _ in itertools.product(range(5), repeat=3) if sum(_) == 4)
    # A = 4: count vectors of 4 with c_2 >= c_3
    assert E.pairs_searched(5, 4) == sum(1 for c in itertools.product(range(5), repeat=4) if sum(c) == 4 and c[2] >= c[3])
    assert E.work(16, 8, 4) > E.work(16, 8, 3) > E.work(16, 8, 2) > 0


# --------------------------------------------------------------------------------------------------------------
# the mechanism, its spec and its checks


def _spec(values: list[float], field: str = "eps0", **params):
    """The shipped spec at small sizes (n = 8, k = 4, A = 2, 3, orders 2..16), over ``values`` of ``field``."""
    r = copy.deepcopy(raw("shuffle_exact_rdp"))
    r["params"].update({"n": 8, "k": 4, "A_max": 3, "lam_max": 16} | params)
    if len(values) > 1:
        r["sweep"] = {"field": field, "values": values}
    else:
        r["sweep"] = None
        r["params"][field] = int(values[0]) if field in ("n", "k", "A_max", "lam_max") else values[0]
    r["expect"], r["expect_quick"] = {}, {}
    return parse_mechanism(r, "t.yaml")


def _checks(points: list[dict]) -> dict[str, str]:
    return {kind: fn(MechanismCheck(id=kind, kind=kind), "subsampled_shuffle_krr", points).verdict
            for kind, fn in exact_rdp.EXACT_RDP_CHECKS.items()}


def test_clean_runs_pass_and_cite_their_theorems():
    res = mechanism_run.run(_spec([0.5, 2.0]))
    assert verdicts(res) == {"thm1_upper": "pass", "thm2_lower": "pass"}
    by_id = {c["id"]: c for c in res["checks"]}
    assert by_id["thm1_upper"]["claims"] == ["001 Thm 1"] and by_id["thm2_lower"]["claims"] == ["001 Thm 2"]
    assert "L143-147" in by_id["thm1_upper"]["citation"] and "L149-153" in by_id["thm2_lower"]["citation"]
    for p in res["points"]:
        assert [a["A"] for a in p["alphabets"]] == [2, 3]
        pair = p["thm2_pair"]["exact"]
        assert pair == pytest.approx(p["thm2"], rel=1e-11)           # Thm 2 is its pair's divergence
        assert all(e <= t for e, t in zip(p["alphabets"][0]["exact"], p["thm1"]))
    bullets, body = cat.report(res)
    assert any("trials are not used" in b for b in bullets)
    assert len([line for line in body if line.startswith("| 0.5 |")]) == 2 * 3       # A = 2, 3 at orders 2, 4, 16


def test_the_spec_refuses_k_above_n_and_too_much_work():
    with pytest.raises(Exception, match="k <= n"):
        _spec([9.0], field="k")
    with pytest.raises(Exception, match="state updates"):
        _spec([1.0], n=400, k=200, A_max=2)
    assert MECHANISMS.get("subsampled_shuffle_krr").checks is exact_rdp.EXACT_RDP_CHECKS


def test_thm1_halved_or_subsampling_forgotten_is_caught_by_rdp_upper(monkeypatch):
    tight = _spec([6.0], A_max=2)                # exact / Thm 1 = 0.64 at its worst order
    small = _spec([2.0], n=16, k=2, A_max=2)     # gamma = 1/8: exact / Thm 1 = 0.27
    assert verdicts(mechanism_run.run(tight))["thm1_upper"] == verdicts(mechanism_run.run(small))["thm1_upper"] == "pass"
    real = S.rdp_upper
    with monkeypatch.context() as m:             # the fault in the bound: Thm 1 at half its value
        m.setattr(S, "rdp_upper", lambda lam, **kw: 0.5 * real(lam, **kw))
        assert verdicts(mechanism_run.run(tight))["thm1_upper"] == "fail"
    with monkeypatch.context() as m:             # the fault in the mechanism: the changed client is always sampled
        m.setattr(E, "inclusion_probability", lambda n, k: 1.0)
        res = mechanism_run.run(small)
        assert verdicts(res)["thm1_upper"] == "fail"
        assert "exact > Thm 1" in next(c for c in res["checks"] if c["id"] == "thm1_upper")["summary"]


def test_a_randomizer_leakier_than_eps0_is_caught_by_rdp_upper(monkeypatch):
    real = E.randomizer
    monkeypatch.setattr(E, "randomizer", lambda A, eps0: real(A, 2 * eps0))     # keeps with weight e^(2 eps0)
    res = mechanism_run.run(_spec([1.0]))
    assert verdicts(res)["thm1_upper"] == "fail"
    assert "-LDP, not eps0" in next(c for c in res["checks"] if c["id"] == "thm1_upper")["summary"]


def test_thm2_scaled_up_or_a_noisier_randomizer_is_caught_by_rdp_lower(monkeypatch):
    spec = _spec([0.5, 2.0])
    real_lower, real_r = S.rdp_lower, E.randomizer
    with monkeypatch.context() as m:             # the fault in the bound: Thm 2 one percent above its value
        m.setattr(S, "rdp_lower", lambda lam, **kw: 1.01 * real_lower(lam, **kw))
        assert verdicts(mechanism_run.run(spec)) == {"thm1_upper": "pass", "thm2_lower": "fail"}
    with monkeypatch.context() as m:             # the fault in the mechanism: RR at eps0 / 2
        m.setattr(E, "randomizer", lambda A, eps0: real_r(A, eps0 / 2))
        assert verdicts(mechanism_run.run(spec))["thm2_lower"] == "fail"


def test_points_outside_the_theorems_domain_are_inapplicable_never_pass():
    spec = _spec([1.0])
    (pt,) = mechanism_run.run(spec)["points"]
    assert _checks([pt]) == {"rdp_upper": "pass", "rdp_lower": "pass"}
    bad_k = copy.deepcopy(pt)
    bad_k["params"]["k"] = bad_k["params"]["n"] + 1
    assert _checks([bad_k]) == {"rdp_upper": "inapplicable", "rdp_lower": "inapplicable"}
    bad_order = copy.deepcopy(pt)
    bad_order["orders"] = [1.5] * len(pt["orders"])
    assert _checks([bad_order]) == {"rdp_upper": "inapplicable", "rdp_lower": "inapplicable"}
    assert _checks([pt, bad_k]) == {"rdp_upper": "pass", "rdp_lower": "pass"}      # the rest still decides
