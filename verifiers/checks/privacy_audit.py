"""``privacy_audit``: the audit's empirical epsilon lower bound against the claim and the accountant."""
from __future__ import annotations

from typing import Any, Mapping

from verifiers.checks.base import (
    CheckKind,
    CheckResult,
    CheckSpec,
    Context,
    Facts,
    Misfit,
    Point,
    Rule,
    compare,
    result,
)
from verifiers.theorems.base import Theorem


def privacy_audit(check: CheckSpec, thm: Theorem, points: list[Point], ctx: Context) -> CheckResult:
    """The audit's epsilon lower bound (a distinguishing attack on neighbouring data sets, Clopper-Pearson at
    the check's confidence) against the claimed epsilon and against the accountant's upper bound: a lower
    bound above either means the mechanism leaks more than claimed, or the accountant under-counts."""
    rows, verdict, reasons = [], "pass", []
    for p in points:
        a = p.audit
        if a is None:
            return result(check, thm, "inapplicable", "no audit was run for this point")
        # an audit of the whole algorithm is judged against the spec's claim and the accountant; an audit of the
        # local randomizer against the randomizer's own claim and its exact epsilon (engine/kinds/learning/audit.py says which)
        if "epsilon_claimed" in a:
            claimed, acc = a["epsilon_claimed"], a["epsilon_upper"]
        else:
            acc, _ = p.accounted()
            claimed = p.params["eps0"]
        lb = a["epsilon_lower"]
        if lb > claimed:
            verdict = "fail"
            reasons.append(f"lower bound {lb:.3g} > claimed {claimed:g} at {p.value}")
        if lb > acc * (1 + 1e-9):
            verdict = "fail"
            reasons.append(f"lower bound {lb:.3g} > the upper bound {acc:.3g} at {p.value}")
        rows.append({"point": p.value, "epsilon_audit_lower": lb, "epsilon_claimed": claimed,
                     "epsilon_upper": acc, "counted_per_side": a["trials_per_side"],
                     "false_positives": a["false_positives"], "false_negatives": a["false_negatives"],
                     "fpr_upper": a["fpr_upper"], "fnr_upper": a["fnr_upper"], "shift": a["shift"],
                     "rounds": a["rounds"]})
    worst = max(rows, key=lambda r: r["epsilon_audit_lower"] / r["epsilon_claimed"])
    attack = (points[0].audit or {}).get("attack", "")
    upper = (points[0].audit or {}).get("upper_name", "accountant")
    summary = (f"{attack}; epsilon lower bound at delta {points[0].params['delta0']:g} with "
               f"Clopper-Pearson limits at {check.level:g}: worst {worst['epsilon_audit_lower']:.3g} <= "
               f"claimed {worst['epsilon_claimed']:g} ({upper} {worst['epsilon_upper']:.3g})"
               + ("" if verdict == "pass" else "; FAILS: " + "; ".join(reasons)))
    return result(check, thm, verdict, summary, measured=worst["epsilon_audit_lower"], bound=worst["epsilon_claimed"],
                   rows=tuple(rows))


def _fits(facts: Facts) -> None:
    if not facts.auditable:
        raise Misfit("kind", f"no privacy audit is implemented for {facts.algorithm}'s mechanism yet; its privacy is "
                             f"checked by privacy_accounting")


def describe(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule | None:
    """The rule above, from a stored result's rows."""
    rows = r["rows"]
    if r["verdict"] == "inapplicable" or not rows:
        return None
    text = (f"fail iff the audit's epsilon lower bound (Clopper-Pearson at {r['confidence']:g}) exceeds the claimed "
            f"epsilon or the accountant's upper bound at some point; pass otherwise (one-sided: this attack found no "
            f"leak, which is not a proof of the claim)")
    w = max(rows, key=lambda row: max(row["epsilon_audit_lower"] / row["epsilon_claimed"],
                                      row["epsilon_audit_lower"] / row["epsilon_upper"]))
    leak = (w["epsilon_audit_lower"] > w["epsilon_claimed"]
            or w["epsilon_audit_lower"] > w["epsilon_upper"] * (1 + 1e-9))
    limit = min(w["epsilon_claimed"], w["epsilon_upper"])
    which = "the claim" if w["epsilon_claimed"] <= w["epsilon_upper"] else "the accountant's upper bound"
    return Rule(text, f"lower bound {compare(w['epsilon_audit_lower'], limit)[0]} ({which}; claimed "
                      f"{w['epsilon_claimed']:.4g}, accountant {w['epsilon_upper']:.4g})", "fail" if leak else "pass")


CHECK = CheckKind("privacy_audit", privacy_audit, fits=_fits, privacy=True, describe=describe)
