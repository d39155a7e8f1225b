"""Seed 001's subsampled shuffle mechanism (Girgis, Data & Diggavi, eq. 3, L128-130) with k-ary randomized response
as a mechanism (``kind: mechanism``): its exact RDP at small sizes, every neighbouring pair searched, against Thm 1's
upper bound (L143-147) and, for the binary alphabet at Thm 2's pair, Thm 2's lower bound (L149-153). Nothing is
sampled: the laws of the server's histogram are computed exactly (verifiers/accountants/exact_shuffle_rdp.py), so
the spec's ``trials`` are not used. Its checks are verifiers/checks/exact_rdp.py's."""
from __future__ import annotations

import math
import time
from typing import Any, Mapping

from pydantic import Field

from catalog.base import MechanismEntry, MechanismParams, RuleError, fmt, mechanism_header
from verifiers.accountants import exact_shuffle_rdp, subsampled_shuffle
from verifiers.checks.exact_rdp import EXACT_RDP_CHECKS, EXACT_RDP_RULES

MAX_WORK = 5 * 10**8          # exact_shuffle_rdp.work summed over the alphabets of one point (~10 s)
REPORT_ORDERS = (2, 4, 16, 64, 256)       # the report's table shows these orders (<= lam_max) and lam_max


class ExactShuffleParams(MechanismParams):
    n: int = Field(ge=1, le=400, description="clients")
    k: int = Field(ge=1, le=400, description="clients sampled per round, without replacement (k <= n)")
    eps0: float = Field(ge=0, le=10, description="the randomizer's LDP epsilon (k-ary randomized response)")
    A_max: int = Field(4, ge=2, le=4, description="alphabet sizes 2..A_max are all computed (k-ary RR on A symbols)")
    lam_max: int = Field(32, ge=2, le=256, description="Renyi orders 2..lam_max (integers: Thm 1 and 2's domain)")


def rules(p: Mapping[str, Any]) -> None:
    if p["k"] > p["n"]:
        raise RuleError(f"k = {p['k']} clients sampled of n = {p['n']}: need k <= n", field="k")
    w = sum(exact_shuffle_rdp.work(p["n"], p["k"], A) for A in range(2, p["A_max"] + 1))
    if w > MAX_WORK:
        raise RuleError(f"the exact computation at n = {p['n']}, k = {p['k']}, A_max = {p['A_max']} needs ~{w:.2g} "
                        f"state updates (allowed: <= {MAX_WORK:.0e}); lower n, k or A_max")


def run_point(p: dict, trials: int, seq: Any) -> dict:
    """The exact RDP of every alphabet 2..A_max (the largest D_lambda over every neighbouring pair, both orders),
    Thm 2's pair's exact divergence (A = 2), and Thm 1's and Thm 2's values, at the orders 2..lam_max."""
    n, k, eps0 = p["n"], p["k"], p["eps0"]
    orders = list(range(2, p["lam_max"] + 1))
    t0 = time.perf_counter()
    alphabets: list[dict[str, Any]] = []
    for A in range(2, p["A_max"] + 1):
        t1 = time.perf_counter()
        ex = exact_shuffle_rdp.exact_rdp(n, k, eps0, A, orders)
        alphabets.append({"A": A, "exact": list(ex.worst), "worst_others": [list(c) for c in ex.worst_others],
                          "worst_forward": list(ex.worst_forward), "named": ex.named, "pairs": ex.pairs,
                          "ldp_epsilon": ex.ldp_epsilon, "seconds": time.perf_counter() - t1})
    binary = alphabets[0]["named"]["others = old"]["forward"]
    thm1 = [subsampled_shuffle.rdp_upper(lam, k=k, n=n, eps0=eps0) for lam in orders]
    thm2 = [subsampled_shuffle.rdp_lower(lam, k=k, n=n, eps0=eps0) for lam in orders]
    return {"params": p, "gamma": k / n, "kbar": math.floor((k - 1) / (2 * math.exp(eps0))) + 1,
            "upsilon_factor": math.exp(-(k - 1) / (8 * math.exp(eps0))), "orders": orders, "thm1": thm1,
            "thm2": thm2, "alphabets": alphabets,
            "thm2_pair": {"A": 2, "others": [n - 1, 0], "old": 0, "new": 1, "order": "D_lambda(M(D1) || M(D0))",
                          "exact": binary},
            "seconds": time.perf_counter() - t0}


def report(r: dict) -> tuple[list[str], list[str]]:
    """The bullets (the mechanism, the fixed parameters, how the exact RDP is computed) and the table of points."""
    field = r["sweep"]["field"] if r["sweep"] else None
    pts = r["points"]
    bullets = [*mechanism_header(r),
               "- Exact, nothing sampled (the spec's trials are not used): the law of the server's histogram on each "
               "side of a pair, in log space, from a dynamic programme over the other clients (the changed client is "
               "sampled w.p. k/n); D_lambda = log sum_h P^lambda Q^(1-lambda) / (lambda - 1) by logsumexp. Every "
               "replace-one pair is searched: up to relabelling the changed client goes 0 -> 1 and the other clients "
               "are a count vector over the A symbols (symbols 2.. exchangeable), both orders; "
               f"{', '.join(str(al['pairs']) for al in pts[0]['alphabets'])} count vectors for A = "
               f"{', '.join(str(al['A']) for al in pts[0]['alphabets'])} at the first point",
               "- Thm 2's pair: binary RR, D0 = every client holds 0, D1 = one client holds 1; Thm 2's value is "
               "D_lambda(M(D1) || M(D0)) (the closed form in verifiers/accountants/subsampled_shuffle.py)",
               f"- Seconds per point: {min(p['seconds'] for p in pts):.2f} .. {max(p['seconds'] for p in pts):.2f}"]
    body = [f"| {field or 'point'} | A | lambda | exact RDP (every pair) | worst pair | Thm 1 | exact / Thm 1 | "
            f"Thm 2 | Thm 2's pair exact | exact / Thm 2 (A = 2) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for p in pts:
        for al in p["alphabets"]:
            for lam in sorted({o for o in REPORT_ORDERS if o in p["orders"]} | {p["orders"][-1]}):
                i = p["orders"].index(lam)
                ex, t1, t2 = al["exact"][i], p["thm1"][i], p["thm2"][i]
                two = al["A"] == 2
                side = "D\\|\\|D'" if al["worst_forward"][i] else "D'\\|\\|D"
                body.append(
                    f"| {fmt(p['value'])} | {al['A']} | {lam} | {fmt(ex)} | {tuple(al['worst_others'][i])}, {side} | "
                    f"{fmt(t1)} | {fmt(ex / t1) if t1 > 0 else '-'} | {fmt(t2) if two else '-'} | "
                    f"{fmt(p['thm2_pair']['exact'][i]) if two else '-'} | "
                    f"{fmt(ex / t2) if two and t2 > 0 else '-'} |")
    body += ["", "A pair (c_0, .., c_{A-1}), D||D': the other clients' counts per symbol, the changed client holds 1 in D "
             "and 0 in D', divergence D_lambda(M(D) || M(D')); D'||D the other order.", ""]
    return bullets, body


MECHANISM_ENTRIES: tuple[MechanismEntry, ...] = (
    MechanismEntry(
        name="subsampled_shuffle_krr",
        description="seed 001's subsampled shuffle mechanism with k-ary randomized response: exact RDP, every pair",
        citation="seed 001, eq. (3) (L128-130): k of n clients sampled without replacement, each applies an eps0-LDP "
                 "randomizer (here k-ary randomized response on A symbols), the server sees the histogram (L135-137); "
                 "replace-one neighbours (L61); Thm 1 (L143-147) and Thm 2 (L149-153)",
        params=ExactShuffleParams, sweepable=("n", "k", "eps0", "A_max", "lam_max"),
        whole=("n", "k", "A_max", "lam_max"), rules=rules, run_point=run_point, checks=EXACT_RDP_CHECKS,
        check_rules=EXACT_RDP_RULES,
        threat_model="shuffle", report=report),
)
