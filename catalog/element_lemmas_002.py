"""Seed 002's supporting lemmas (Lnnn = line of ../shared/seeds/002_d3919fba655c6f58.txt) as a mechanism entry
(``kind: mechanism``): Lemma B.1 (indicator moments of a multinomial) against a Monte Carlo of the multinomial,
Lemma B.2 (the mis-ordering probability of heavy hitters (7)) against its exact value, and Lemmas C.1 and C.2
(binomial tails, Prop. 2's proof) exactly over grids. The data model is algorithms/element.py's Zipf-like
multinomial; sigma is Lemma 3.1 (ii)'s at the point's (eps, delta). Checks: verifiers/checks/element_lemmas.py."""
from __future__ import annotations

import math
import time
from typing import Any, Mapping

import numpy as np
from pydantic import Field
from scipy import stats

from algorithms import element as el
from catalog.base import MechanismEntry, MechanismParams, RuleError, fmt, mechanism_header
from verifiers.accountants import element_privacy as ep
from verifiers.checks.element_lemmas import LEMMA_CHECKS, LEMMA_RULES

C_M = (3, 5, 10, 30, 100, 300, 1000)
C_P = (0.001, 0.01, 0.05, 0.1, 0.2, 0.25)
C1_OFFSETS = (0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0)
C2_T = (0.0, 0.5, 1.0, 2.0, 5.0, 10.0)


class LemmaParams(MechanismParams):
    d: int = Field(50, ge=2, le=2000, description="items")
    s: float = Field(1.0, ge=0, le=3, description="Zipf exponent of p")
    m: int = Field(20, ge=1, le=2000, description="items per user")
    n: int = Field(500, ge=1, le=20000, description="users (Lemma B.2)")
    eps: float = Field(1.0, gt=0, le=20, description="Lemma 3.1 (ii)'s sigma at (eps, delta) for Lemma B.2")
    delta: float = Field(1e-5, gt=0, lt=0.5, description="see eps")
    pairs: int = Field(30, ge=1, le=500, description="item pairs (i < j) at which Lemma B.2 is evaluated")


def rules(p: Mapping[str, Any]) -> None:
    if p["n"] > 10_000:
        raise RuleError(f"n = {p['n']}: Lemma B.2's exact law holds n^2 numbers per pair (allowed: n <= 10000, "
                        f"n^2 <= 1e8)", field="n")


def _null_se(mean: float, draws: int) -> float:
    """The standard error of the mean of ``draws`` indicators whose mean is ``mean`` (the claim's value: a z-test
    under the claim, valid where the sample's own spread is 0, e.g. q = 1 - 1e-17)."""
    return float(math.sqrt(max(mean * (1 - mean), 1e-300) / draws))


def _b1(p: Mapping[str, Any], mdl: el.Multinomial, draws: int, rng: np.random.Generator) -> dict:
    """The identities' formulas against the Monte Carlo means of draws multinomial users."""
    m, pr = mdl.m, mdl.p
    Y = el.indicators(el.draw_users(rng, mdl, draws))
    items = sorted({0, 1, 2, mdl.d // 4, mdl.d // 2, mdl.d - 1})
    q = 1 - (1 - pr) ** m
    moments = []
    for j in items:
        for what, sample, formula in ((f"E Y_{j}", Y[:, j], q[j]), (f"E Y_{j}^2", Y[:, j] ** 2, q[j])):
            moments.append({"what": what, "formula": float(formula), "monte_carlo": float(sample.mean()),
                            "se": _null_se(formula, draws)})
    variance = []
    for a, b in zip(items, items[1:]):
        qab = 1 - (1 - pr[a] - pr[b]) ** m
        cross = q[a] + q[b] - qab
        sample = Y[:, a] * Y[:, b]
        moments.append({"what": f"E Y_{a} Y_{b}", "formula": float(cross), "monte_carlo": float(sample.mean()),
                        "se": _null_se(cross, draws)})
        var = q[a] + q[b] - 2 * cross - (q[a] - q[b]) ** 2
        variance.append({"pair": [a, b], "var": float(var), "bound": float(q[a] + q[b])})
    return {"draws": draws, "moments": moments, "variance": variance}


def misorder_probability(n: int, a: float, b: float, sigma: float) -> float:
    """P(S + N(0, 2 sigma^2) < 0) exactly, S the sum of n i.i.d. variables that are +1 w.p. a, -1 w.p. b, else 0:
    K ~ Bin(n, a + b) non-zero terms, of which Bin(K, a / (a + b)) are +1, S = 2 plus - K."""
    if a + b == 0:
        return 0.5
    K = np.arange(n + 1)[:, None]
    plus = np.arange(n + 1)[None, :]
    w = stats.binom.pmf(K, n, a + b) * stats.binom.pmf(plus, K, a / (a + b))
    S = 2 * plus - K
    return float(np.sum(w * stats.norm.cdf(-S / (sigma * math.sqrt(2)))))


def _b2(p: Mapping[str, Any], mdl: el.Multinomial, sigma: float) -> list[dict]:
    m, n, pr = mdl.m, p["n"], mdl.p
    q = 1 - (1 - pr) ** m
    d = mdl.d
    cands = sorted({(i, j) for i in (0, 1, 2, d // 10, d // 4) for j in
                    np.unique(np.linspace(i + 1, d - 1, 8).astype(int)).tolist() if i < j})[: p["pairs"]]
    out = []
    for i, j in cands:
        both0 = (1 - pr[i] - pr[j]) ** m
        a = (1 - pr[j]) ** m - both0            # P(Y_i = 1, Y_j = 0)
        b = (1 - pr[i]) ** m - both0            # P(Y_i = 0, Y_j = 1)
        v = a + b - (a - b) ** 2                # Var(Y_i - Y_j)
        gap = q[i] - q[j]
        bound = math.exp(-min(5 * n * gap**2 / (12 * v + 20 * sigma**2 / n), n * gap / 8))
        out.append({"case": f"(i, j) = ({i}, {j})", "q_gap": float(gap), "v": float(v),
                    "exact": misorder_probability(n, float(a), float(b), sigma), "bound": float(bound)})
    return out


def _c1() -> list[dict]:
    out = []
    for m in C_M:
        x = np.arange(m + 1)
        for pp in C_P:
            sf = stats.binom.sf(x - 1, m, pp)                    # P(X >= i), i = 0..m
            pmf = stats.binom.pmf(x, m, pp)
            for off in C1_OFFSETS:
                L = math.ceil(3 * m * pp + off)
                if L > m:
                    continue
                lhs, mid, rhs = float(sf[L:].sum()), float(2 * sf[L]), float(4 * pmf[L])
                out.append({"case": f"m {m}, p {pp}, l = 3mp + {off}: sum >= ..", "exact": lhs, "bound": mid})
                out.append({"case": f"m {m}, p {pp}, l = 3mp + {off}: 2P(X >= l) <= 4P(X = l)", "exact": mid,
                            "bound": rhs})
    return out


def _c2(log) -> list[dict]:
    out = []
    for m in C_M:
        for pp in C_P:
            for t in C2_T:
                L = math.ceil(3 * m * pp + 3 * log(m) + t)
                if L > m:
                    continue
                out.append({"case": f"m {m}, p {pp}, t {t}", "exact": float(stats.binom.pmf(L, m, pp)),
                            "bound": pp * 2.0**-t})
    return out


def run_point(p: dict, trials: int, seq: Any) -> dict:
    t0 = time.perf_counter()
    rng = np.random.default_rng(seq)
    mdl = el.model(d=p["d"], K=p["d"], s=p["s"], m=p["m"], contiguous=True)
    sigma = math.sqrt(ep.lemma_sigma2(p["eps"], p["delta"]))
    return {"params": p, "sigma": sigma, "b1": _b1(p, mdl, trials, rng), "b2": _b2(p, mdl, sigma), "c1": _c1(),
            "c2": _c2(math.log2), "c2_natural": _c2(math.log), "seconds": time.perf_counter() - t0}


def report(r: dict) -> tuple[list[str], list[str]]:
    pts = r["points"]
    bullets = [*mechanism_header(r),
               f"- Lemma B.1 against {pts[0]['b1']['draws']} multinomial draws per point; Lemma B.2 exactly (the law "
               "of the indicator differences' sum convolved with the noise); Lemmas C.1-C.2 exactly over m in "
               f"{list(C_M)}, p in {list(C_P)}",
               f"- Seconds per point: {min(p['seconds'] for p in pts):.1f} .. {max(p['seconds'] for p in pts):.1f}"]
    field = r["sweep"]["field"] if r["sweep"] else "point"
    body = [f"| {field} | sigma | Lemma B.2: worst exact / bound | pairs |", "|---|---|---|---|"]
    for p in pts:
        worst = max(x["exact"] / x["bound"] for x in p["b2"]) if p["b2"] else float("nan")
        body.append(f"| {fmt(p['value'])} | {fmt(p['sigma'])} | {fmt(worst)} | {len(p['b2'])} |")
    return bullets, body + [""]


MECHANISM_ENTRIES: tuple[MechanismEntry, ...] = (
    MechanismEntry(
        name="element_lemmas",
        description="seed 002's Lemmas B.1, B.2, C.1, C.2 (the proofs of Props. 1 and 2), exactly",
        citation="seed 002, App. B (Lemma B.1, L438; Lemma B.2, L454-458) and App. C (Lemma C.1, L498-500; Lemma C.2, "
                 "L502-504)",
        params=LemmaParams, sweepable=("m", "n", "eps", "d", "s"), whole=("m", "n", "d"), rules=rules,
        run_point=run_point, checks=LEMMA_CHECKS, threat_model="central", report=report, check_rules=LEMMA_RULES),
)
