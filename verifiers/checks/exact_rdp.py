"""Checks of seed 001's RDP bounds for the subsampled shuffle mechanism against its exact RDP with k-ary randomized
response (the ``subsampled_shuffle_krr`` mechanism; verifiers/accountants/exact_shuffle_rdp.py computes the exact
divergences): numbers in, verdicts out. Lnnn = line of ../shared/seeds/001_b39a6850360fb784.txt.

A point holds its parameters (n, k, eps0), the Renyi orders, Thm 1's and Thm 2's values there (evaluated by
verifiers/accountants/subsampled_shuffle.py), and per alphabet size A the exact RDP (the largest D_lambda over every
neighbouring pair, both orders), the randomizer's LDP level as used, and for A = 2 the exact divergence of Thm 2's
pair.

- ``rdp_upper``: Thm 1 (L143-147) bounds the RDP of the mechanism for every eps0-LDP randomizer with a discrete
  range; k-ary RR is one, so an exact value above the bound at any order is a violation: fail. So is a randomizer
  that is not eps0-LDP (the mechanism run is not the one the theorem is evaluated for).
- ``rdp_lower``: Thm 2 (L149-153) lower-bounds the mechanism's RDP; its value is the divergence D_lambda(M(D1) ||
  M(D0)) of binary RR with D0 all clients equal and D1 one client changed (the closed form of
  verifiers/accountants/subsampled_shuffle.py; the proof, App. D, is not in the seed). The exact divergence of that
  pair below Thm 2's value fails.
Both: the theorems' domain (integer lambda >= 2, 1 <= k <= n, eps0 >= 0; L143, L149) is checked on every point;
where it fails the row is inapplicable, never pass.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from algorithms.registry import Registry
from verifiers.checks.base import (
    EXACT_ABS_SLACK,
    EXACT_REL_SLACK,
    CheckResult,
    Rule,
    at,
    decided,
    exact_result,
    exceeds,
)

SEED = "seed 001 (Girgis, Data & Diggavi)"
CITE_UPPER = (f"{SEED}, Thm 1 (L143-147) against the exact RDP (Def 1, L63-65) of the subsampled shuffle mechanism "
              f"(eq. 3: k of n sampled without replacement, L128-130; histogram view, L135-137) with k-ary randomized "
              f"response, every replace-one pair (L61)")
CITE_LOWER = (f"{SEED}, Thm 2 (L149-153) against the exact D_lambda(M(D1) || M(D0)) of binary randomized response, "
              f"D0 all clients equal, D1 one client changed")
CLAIMS_UPPER = ("001 Thm 1",)
CLAIMS_LOWER = ("001 Thm 2",)


def conditions(point: dict) -> list[str]:
    """Where the point is outside Thm 1's and Thm 2's domain (L143, L149): 1 <= k <= n, eps0 >= 0."""
    p = point["params"]
    out = []
    if not (1 <= p["k"] <= p["n"]):
        out.append(f"k = {p['k']} is not in 1..n = {p['n']}")
    if not p["eps0"] >= 0:
        out.append(f"eps0 = {p['eps0']} < 0")
    return out


def order_ok(lam: float) -> bool:
    """The theorems hold for integer orders lambda >= 2 (L143, L149)."""
    return lam >= 2 and float(lam) == int(lam)





def rdp_upper(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """Every point, alphabet and order: the exact RDP (the largest D_lambda over every neighbouring pair, both
    orders) <= Thm 1's bound, and the randomizer as used is eps0-LDP. One row per point and alphabet, at the order
    where exact / Thm 1 is largest."""
    rows, why, skipped, passed, failed = [], [], [], 0, False
    worst: tuple[float, float, float] | None = None           # (ratio, exact, bound)
    for pt in points:
        eps0, broken = pt["params"]["eps0"], conditions(pt)
        if broken:
            skipped += [f"{pt['value']}: {c}" for c in broken]
            continue
        good = [i for i, lam in enumerate(pt["orders"]) if order_ok(lam)]
        skipped += [f"{pt['value']}: order {lam} is not an integer >= 2" for lam in pt["orders"] if not order_ok(lam)]
        for al in pt["alphabets"]:
            A = al["A"]
            if exceeds(al["ldp_epsilon"], eps0):
                failed = True
                why.append(f"{pt['value']}, A = {A}: the randomizer as used is {al['ldp_epsilon']:.6g}-LDP, not "
                           f"eps0 = {eps0:g}")
            if not good:
                continue
            ratios = [(al["exact"][i] / pt["thm1"][i] if pt["thm1"][i] > 0 else
                       (math.inf if al["exact"][i] > EXACT_ABS_SLACK else 0.0), i) for i in good]
            r, i = max(ratios)
            over = [pt["orders"][j] for j in good if exceeds(al["exact"][j], pt["thm1"][j])]
            if over:
                failed = True
                why.append(f"{pt['value']}, A = {A}: exact > Thm 1 at lambda = {over} (at {pt['orders'][i]}: "
                           f"{al['exact'][i]:.6g} > {pt['thm1'][i]:.6g})")
            else:
                passed += 1
            if worst is None or r > worst[0]:
                worst = (r, al["exact"][i], pt["thm1"][i])
            rows.append({"point": pt["value"], "A": A, "order": pt["orders"][i], "exact": al["exact"][i],
                         "thm1": pt["thm1"][i], "exact_over_thm1": r,
                         "worst_pair": _pair_text(al["worst_others"][i], al["worst_forward"][i]),
                         "pairs": al["pairs"], "ldp_epsilon": al["ldp_epsilon"], "orders_above": len(over)})
    verdict = decided(failed, passed)
    span = (f"exact / Thm 1 up to {max(r['exact_over_thm1'] for r in rows):.3g} (at the worst order of each point and "
            f"alphabet; smallest of those {min(r['exact_over_thm1'] for r in rows):.3g})") if rows else "no order checked"
    summary = (f"the exact RDP of the subsampled shuffled k-ary RR (the largest D_lambda over every replace-one pair, "
               f"both orders) against Thm 1 at every integer order and alphabet: {span}"
               + (f"; inapplicable: {'; '.join(skipped)}" if skipped else "")
               + (f"; FAILS: {'; '.join(why)}" if why else ""))
    return exact_result(check, "subsampled_shuffle.thm1", CITE_UPPER, CLAIMS_UPPER, verdict, summary,
                   measured=None if worst is None else worst[1], bound=None if worst is None else worst[2], rows=rows)


def rdp_lower(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """Every point and order: the exact divergence of Thm 2's pair (binary RR, D_lambda(M(D1) || M(D0))) >= Thm 2's
    value; the binary alphabet's exact RDP (every pair) is shown next to it. One row per point."""
    rows, why, skipped, passed, failed = [], [], [], 0, False
    lowest: tuple[float, float, float] | None = None           # (ratio, exact, bound)
    for pt in points:
        broken = conditions(pt)
        if broken:
            skipped += [f"{pt['value']}: {c}" for c in broken]
            continue
        pair = pt.get("thm2_pair")
        if pair is None:
            skipped.append(f"{pt['value']}: no binary alphabet was computed")
            continue
        good = [i for i, lam in enumerate(pt["orders"]) if order_ok(lam)]
        skipped += [f"{pt['value']}: order {lam} is not an integer >= 2" for lam in pt["orders"] if not order_ok(lam)]
        if not good:
            continue
        ratios = [(pair["exact"][i] / pt["thm2"][i] if pt["thm2"][i] > 0 else
                   (1.0 if pair["exact"][i] >= -EXACT_ABS_SLACK else 0.0), i) for i in good]
        r, i = min(ratios)
        under = [pt["orders"][j] for j in good if exceeds(pt["thm2"][j], pair["exact"][j])]
        if under:
            failed = True
            why.append(f"{pt['value']}: exact < Thm 2 at lambda = {under} (at {pt['orders'][i]}: "
                       f"{pair['exact'][i]:.6g} < {pt['thm2'][i]:.6g})")
        else:
            passed += 1
        if lowest is None or r < lowest[0]:
            lowest = (r, pair["exact"][i], pt["thm2"][i])
        binary = next(al for al in pt["alphabets"] if al["A"] == 2)
        every, j = max((binary["exact"][j] / pt["thm2"][j] if pt["thm2"][j] > 0 else 1.0, j) for j in good)
        rows.append({"point": pt["value"], "order": pt["orders"][i], "exact_pair": pair["exact"][i],
                     "thm2": pt["thm2"][i], "exact_pair_over_thm2_minus_1": r - 1,
                     "largest_minus_1": max(q for q, _ in ratios) - 1,
                     "every_pair_over_thm2": every, "at_order": pt["orders"][j],
                     "ldp_epsilon": binary["ldp_epsilon"], "orders_below": len(under)})
    verdict = decided(failed, passed)
    span = (f"exact / Thm 2 - 1 at the pair from {min(r['exact_pair_over_thm2_minus_1'] for r in rows):.3g} to "
            f"{max(r['largest_minus_1'] for r in rows):.3g} (Thm 2 is that pair's divergence: equal up to rounding); "
            f"the binary alphabet's exact RDP (every pair, both orders) / Thm 2 up to "
            f"{max(r['every_pair_over_thm2'] for r in rows):.3g}") if rows else "no order checked"
    summary = (f"binary RR, D0 = all clients equal, D1 = one client changed: the exact D_lambda(M(D1) || M(D0)) against "
               f"Thm 2 at every integer order (tolerance {EXACT_REL_SLACK:g} relative): {span}"
               + (f"; inapplicable: {'; '.join(skipped)}" if skipped else "")
               + (f"; FAILS: {'; '.join(why)}" if why else ""))
    return exact_result(check, "subsampled_shuffle.thm2", CITE_LOWER, CLAIMS_LOWER, verdict, summary,
                   measured=None if lowest is None else lowest[1], bound=None if lowest is None else lowest[2],
                   rows=rows)


def _pair_text(others: list[int] | tuple[int, ...], forward: bool) -> str:
    side = "D||D'" if forward else "D'||D"
    return f"u: 0 -> 1, others {tuple(others)}, {side}"


def _upper_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = max(r["rows"], key=lambda row: row["exact_over_thm1"])
    above = sum(row["orders_above"] for row in r["rows"])
    return Rule(f"fail iff the exact RDP (every replace-one pair, both orders) exceeds Thm 1 at some integer order >= 2 "
                f"of some point and alphabet (rel. slack {EXACT_REL_SLACK:g}), or the randomizer is not eps0-LDP; pass "
                f"otherwise (exact)", f"largest exact / Thm 1 = {w['exact_over_thm1']:.3g} (A = {w['A']}, order "
                f"{w['order']:g}{at(w['point'])})", "fail" if above else "pass")


def _lower_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = min(r["rows"], key=lambda row: row["exact_pair_over_thm2_minus_1"])
    below = sum(row["orders_below"] for row in r["rows"])
    return Rule(f"fail iff the exact divergence of Thm 2's pair is below Thm 2 at some integer order >= 2 (rel. "
                f"slack {EXACT_REL_SLACK:g}); pass otherwise (exact)",
                f"smallest exact / Thm 2 - 1 = {w['exact_pair_over_thm2_minus_1']:.2g} (order {w['order']:g}"
                f"{at(w['point'])})", "fail" if below else "pass")


# the decision rules in words, for the report's first table (verifiers/checks/base.py Rule)
EXACT_RDP_RULES = {"rdp_upper": _upper_rule, "rdp_lower": _lower_rule}

ExactCheckFn = Callable[[Any, str, list[dict]], CheckResult]
EXACT_RDP_CHECKS: Registry[ExactCheckFn] = Registry("exact RDP check kind")
EXACT_RDP_CHECKS.add("rdp_upper", rdp_upper)
EXACT_RDP_CHECKS.add("rdp_lower", rdp_lower)
