"""The strongly convex parameter rules of seed 004's resolvers (catalog/isrl_004.py, catalog/sdp_004.py): with mu > 0
each algorithm takes the seed's strongly convex rule, written out here independently from the seed's text (Lnnn =
line of ../shared/seeds/004_66f3b713b54f102e.txt), and phi^2 = 0 (no within-silo variance: d = 1, no label noise)
reads nM/phi^2 as +inf instead of dividing by zero."""
from __future__ import annotations

import math

import pytest

from catalog import ALGORITHMS


def consts(**kw) -> dict:
    c = {"n": 4000, "d": 5, "N": 20, "M": 20.0, "L": 2.5, "beta": 1.05, "mu": 0.05, "D": 3.0, "phi2": 0.9,
         "v2": 0.01, "Delta": 0.08, "risk_max": 1.0, "eps0": 0.5, "delta0": 1e-5}
    return c | kw


def _resolve(name: str, c: dict, variant: str | None = None):
    entry = ALGORITHMS.get(name)
    return entry.resolve(c, variant or entry.variants[0], {})


def test_one_pass_strongly_convex_batch_is_thm_e1s():
    c = consts()
    res = _resolve("accelerated_mbsgd", c)
    # L1048: K = n / (sqrt(kappa) ln(mu Delta min{eps0^2 n^2 M/(L^2 d ln(1/delta0)), nM/phi^2}))
    inner = c["mu"] * c["Delta"] * min(c["eps0"] ** 2 * c["n"] ** 2 * c["M"] / (c["L"] ** 2 * c["d"] * math.log(1e5)),
                                       c["n"] * c["M"] / c["phi2"])
    K = math.ceil(c["n"] / (math.sqrt(c["beta"] / c["mu"]) * math.log(inner)))
    assert res.params["K"] == K and res.params["R"] == c["n"] // K                       # R = floor(n/K), L176
    assert "strongly convex" in res.provenance["K"] and "multi-stage" in res.provenance["stages"]
    assert res.run_kwargs["mu"] == c["mu"] and res.params["lam"] == 0.0                  # no regulariser: f itself


def test_erm_strongly_convex_rounds_are_thm_f1s():
    c = consts(n=300, N=1000, M=1000.0, d=2, mu=1.0, beta=2.0, eps0=1.0)
    res = _resolve("accelerated_mbsgd_erm", c)
    K = res.params["K"]
    # L1062: R = max{sqrt(beta/mu) ln(Delta_X mu M eps0^2 n^2/(L^2 d)), 1{MK<Nn} eps0^2 n^2/(K d ln(1/delta0))}
    first = math.sqrt(c["beta"] / c["mu"]) * math.log(c["Delta"] * c["mu"] * c["M"] * c["n"] ** 2 / (c["L"] ** 2 * 2))
    second = c["n"] ** 2 / (K * 2 * math.log(1e5))
    assert res.params["R"] == math.ceil(max(first, second) - 1e-9)
    # L1056: K >= eps0 n / (4 sqrt(2 R ln(2/delta0))), the smallest such K
    assert K == max(1, math.ceil(c["n"] / (4 * math.sqrt(2 * res.params["R"] * math.log(2e5))) - 1e-9))
    assert "F.1(2)" in res.provenance["R"] and "multi-stage" in res.provenance["stages"]


def test_shuffled_mbsgd_strongly_convex_rounds_are_thm_g1s():
    c = consts(n=50, N=600, M=600.0, d=1, mu=1.0, beta=2.0, eps0=0.01, D=1.5, L=2.55)
    res = _resolve("shuffled_mbsgd", c)
    n, N, M, eps, d = 50, 600, 600, 0.01, 1
    # L1170, strongly convex: max(n^2 N^2 eps^2/M, N/M, (8 beta/mu) ln(beta D^2 mu eps^2 n^2 N^2/(d L^2)), min{n, ...})
    rule = max(n**2 * N**2 * eps**2 / M, N / M, 8 * 2.0 / 1.0 * math.log(2.0 * 1.5**2 * eps**2 * n**2 * N**2 / (d * 2.55**2)),
               min(n, eps**2 * n**2 * N**2 / (d * M)))
    assert res.params["R"] == math.ceil(rule - 1e-9)
    assert res.params["stich_mu"] == 1.0 and "Stich" in res.provenance["eta"]


def test_sdp_accelerated_strongly_convex_batch_is_thm_g2s():
    c = consts(n=4000, N=10, M=10.0, d=1, mu=0.1, beta=1.1, eps0=15.0, delta0=1e-4, phi2=1e-4)
    res = _resolve("sdp_accelerated_mbsgd", c)
    # L1311: K = n / (sqrt(kappa) ln(mu Delta min{eps^2 n^2 M^2/(L^2 d ln(1/delta)), nM/phi^2}))
    inner = 0.1 * c["Delta"] * min(15.0**2 * 4000**2 * 10**2 / (c["L"] ** 2 * math.log(1e4)), 4000 * 10 / 1e-4)
    K = math.ceil(4000 / (math.sqrt(11.0) * math.log(inner)))
    assert res.params["K"] == K and res.params["R"] == 4000 // K
    assert res.params["g2_K"] == 1.0 and "multi-stage" in res.provenance["stages"]


@pytest.mark.parametrize("name,kw", [
    ("accelerated_mbsgd", {}),
    ("sdp_accelerated_mbsgd", {"N": 10, "M": 10.0, "eps0": 15.0, "delta0": 1e-4}),
])
def test_no_within_silo_variance_reads_the_statistical_entry_as_infinite(name, kw):
    # phi^2 = 0 (d = 1 and no label noise): min{privacy entry, nM/0} is the privacy entry; no ZeroDivisionError
    zero = _resolve(name, consts(d=1, phi2=0.0, **kw)).params["K"]
    tiny = _resolve(name, consts(d=1, phi2=1e-300, **kw)).params["K"]
    assert zero == tiny
