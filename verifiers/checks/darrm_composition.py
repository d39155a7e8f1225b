"""Checks of the privacy parameters seed 003's chapter 3 sets by general composition (catalog/darrm_composition_003.py:
``darrm_table_b1``, ``darrm_query_totals``). Nothing is sampled: confidence 1. Lnnn = line of
../shared/seeds/003_56e8b1c3300cdeae.txt.

- ``darrm_printed_numbers``: each number the thesis prints (Table B.1's m, m eps, delta, tau, lambda; the totals of
  Tables 3.2 / B.3 / B.5 / B.7 and their per-query parameters) against our evaluation of the formulas it states, with
  a tolerance of one unit in the last printed digit, fixed before the run. A number outside fails; a point that is not
  the table's setting (or a column it does not print) is not judged.
- ``darrm_general_composition``: Thm 3.3.3 (L817-819) bounds the k-fold composition of (eps, Delta)-DP mechanisms;
  its eps' must be at least the exact optimum at the same total delta (Kairouz, Oh & Viswanath's optimal
  composition). Below it, the theorem (as stated, as we evaluate it) fails. The exact optimum must also agree with
  dp-accounting's PLD of the same composition to within the PLD's discretisation (k times its interval, on the
  pessimistic side): otherwise one of the two computations is wrong, and the check fails too.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from algorithms.registry import Registry
from verifiers.accountants.darrm_composition import PLD_INTERVAL
from verifiers.checks.base import (
    EXACT_ABS_SLACK,
    EXACT_REL_SLACK,
    CheckResult,
    Rule,
    compare,
    decided,
    exact_result,
    exceeds,
)

SEED = "seed 003 (Jiang, thesis ch. 3)"
CITE_PRINTED = (f"{SEED}: the numbers printed in Table B.1 (L3525-3533) or Tables 3.2 / B.3 / B.5 / B.7 (L1035-1042, "
                f"L3679-3729), against Thm 3.3.3's formulas (L817-819, L3508-3520) evaluated at their settings")
CITE_GENERAL = (f"{SEED}: Thm 3.3.3 (general composition, L817-819) against the optimal composition (Kairouz, Oh & "
                f"Viswanath 2015, Thm 3.3) and dp-accounting's PLD of the (eps, Delta)-DP worst case")
CLAIMS_GENERAL = ("003 Thm 3.3.3",)


def darrm_printed_numbers(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """Every printed number within one unit of its last digit of our evaluation."""
    rows, why, skipped, claims = [], [], [], []
    passed = 0
    for pt in points:
        for r in pt["printed_rows"]:
            if r["printed"] is None:
                skipped.append(f"{pt['value']}: {r['unprinted']}")
                continue
            diff = r["ours"] - r["printed"]
            ok = abs(diff) <= r["unit"] * (1 + EXACT_REL_SLACK)
            if ok:
                passed += 1
            else:
                why.append(f"{pt['value']}, {r['quantity']}: ours {r['ours']:.6g}, printed {r['printed']:g} "
                           f"({r['source']}), off by {diff:+.3g} > {r['unit']:g}")
            if r["claim"] not in claims:
                claims.append(r["claim"])
            rows.append({"point": pt["value"], "quantity": r["quantity"], "ours": r["ours"], "printed": r["printed"],
                         "difference": diff, "tolerance": r["unit"], "within": ok, "claim": r["claim"]})
    worst = max(rows, key=lambda x: abs(x["difference"]) / x["tolerance"]) if rows else None
    summary = (f"{passed} of {len(rows)} printed numbers within one unit of their last printed digit of the formulas' "
               f"values" + (f" (largest |ours - printed| / unit = {abs(worst['difference']) / worst['tolerance']:.3g}, "
                            f"{worst['quantity']} at {worst['point']})" if worst else "")
               + (f"; not judged: {'; '.join(sorted(set(skipped)))}" if skipped else "")
               + (f"; FAILS: {'; '.join(why)}" if why else ""))
    return exact_result(check, "darrm.printed_numbers", CITE_PRINTED, tuple(claims), decided(bool(why), passed),
                        summary, measured=None if worst is None else abs(worst["difference"]),
                        bound=None if worst is None else worst["tolerance"], rows=rows)


def darrm_general_composition(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """Every composition of every point: Thm 3.3.3's eps' >= the exact optimum, and the exact optimum = the PLD."""
    rows, why = [], []
    for pt in points:
        for c in pt["compositions"]:
            bad = []
            if exceeds(c["exact_eps"], c["theorem_eps"]):
                bad.append(f"Thm 3.3.3's eps' = {c['theorem_eps']:.6g} below the optimal {c['exact_eps']:.6g}")
            gap = c["pld_eps"] - c["exact_eps"]
            slack = c["k"] * c["pld_interval"] + EXACT_REL_SLACK * c["exact_eps"] + EXACT_ABS_SLACK
            if not -EXACT_REL_SLACK * c["exact_eps"] - EXACT_ABS_SLACK <= gap <= slack:
                bad.append(f"PLD {c['pld_eps']:.6g} and exact {c['exact_eps']:.6g} disagree (allowed: 0 .. "
                           f"{slack:.3g} above)")
            if bad:
                why.append(f"{pt['value']}, {c['composition']}: {'; '.join(bad)}")
            rows.append({"point": pt["value"], "composition": c["composition"], "k": c["k"], "eps": c["eps"],
                         "Delta": c["Delta"], "delta": c["delta"], "theorem_eps": c["theorem_eps"],
                         "theorem_term": c["theorem_term"], "exact_eps": c["exact_eps"], "pld_eps": c["pld_eps"],
                         "exact_over_theorem": c["exact_eps"] / c["theorem_eps"]})
    span = (f"optimal / Thm 3.3.3's eps' from {min(r['exact_over_theorem'] for r in rows):.3g} to "
            f"{max(r['exact_over_theorem'] for r in rows):.3g} over {len(rows)} compositions" if rows else "none")
    worst = max(rows, key=lambda r: r["exact_over_theorem"]) if rows else None
    summary = (f"Thm 3.3.3's eps' at least the exact optimal composition at the same total delta (exact optimum = "
               f"dp-accounting's PLD within its discretisation): {span}" + (f"; FAILS: {'; '.join(why)}" if why else ""))
    return exact_result(check, "darrm.thm3_3_3", CITE_GENERAL, CLAIMS_GENERAL, decided(bool(why), len(rows)), summary,
                        measured=None if worst is None else worst["exact_eps"],
                        bound=None if worst is None else worst["theorem_eps"], rows=rows)


DarrmCompositionCheckFn = Callable[[Any, str, list[dict]], CheckResult]
DARRM_COMPOSITION_CHECKS: Registry[DarrmCompositionCheckFn] = Registry("DaRRM composition check kind")
DARRM_COMPOSITION_CHECKS.add("darrm_printed_numbers", darrm_printed_numbers)
DARRM_COMPOSITION_CHECKS.add("darrm_general_composition", darrm_general_composition)


def _printed_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = max(r["rows"], key=lambda x: abs(x["difference"]) / x["tolerance"])
    return Rule("fail iff some printed number differs from our evaluation of its formula by more than one unit of its "
                "last printed digit; pass otherwise (exact)",
                f"largest |ours - printed| = {abs(w['difference']) / w['tolerance']:.3g} units ({w['quantity']} at "
                f"{w['point']})", "fail" if any(not x["within"] for x in r["rows"]) else "pass")


def _general_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = max(r["rows"], key=lambda x: x["exact_over_theorem"])
    below = any(exceeds(x["exact_eps"], x["theorem_eps"]) for x in r["rows"])
    apart = any(not -EXACT_REL_SLACK * x["exact_eps"] - EXACT_ABS_SLACK <= x["pld_eps"] - x["exact_eps"]
                <= x["k"] * PLD_INTERVAL + EXACT_REL_SLACK * x["exact_eps"] + EXACT_ABS_SLACK for x in r["rows"])
    side = "fail" if below or apart else "pass"
    return Rule("fail iff Thm 3.3.3's eps' is below the exact optimal composition at the same total delta (or the exact "
                "optimum and dp-accounting's PLD disagree beyond its discretisation); pass otherwise (exact)",
                f"largest optimum / eps' {w['exact_over_theorem']:.3g} ({compare(w['exact_eps'], w['theorem_eps'])[0]})",
                side)


# the decision rules in words, for the report's first table (verifiers/checks/base.py Rule)
DARRM_COMPOSITION_RULES = {"darrm_printed_numbers": _printed_rule, "darrm_general_composition": _general_rule}
