"""``ldp_exact``: the local randomizer's output distribution computed exactly, against its claimed eps_ldp and its
input (unbiasedness)."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from algorithms import ldp
from algorithms.events import ShuffledLDPRelease
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

LDP_EXACT_TOL = 1e-9          # exact computations: equal up to float rounding


def ldp_exact(check: CheckSpec, thm: Theorem, points: list[Point], ctx: Context) -> CheckResult:
    """The local randomizer's output distribution, computed exactly (no sampling): its worst-case privacy loss
    max_o max_{x,x'} log P(o|x)/P(o|x') over the input ball against the claimed eps_ldp (condition (i)), and
    its mean sum_o P(o|x) value(o) against x (condition (ii)), on the inputs where every output's probability
    is extremal plus 64 random inputs of the ball."""
    rows: list[dict[str, Any]] = []
    verdict = "pass"
    for p in points:
        e = p.events[0]
        if not isinstance(e, ShuffledLDPRelease):
            return result(check, thm, "inapplicable", "the algorithm runs no local randomizer", confidence=1.0)
        R = ldp.RANDOMIZERS.get(e.randomizer)
        d, C = e.dimension, e.clip
        extreme = R.extreme_inputs(d, C)
        inner = np.random.default_rng(0).uniform(-C, C, size=(64, d))
        X = np.vstack([extreme, inner])
        P = R.probabilities(X, e.eps_ldp, C)
        valid = bool((P >= 0).all() and np.allclose(P.sum(axis=1), 1.0, rtol=0, atol=LDP_EXACT_TOL))
        with np.errstate(divide="ignore"):
            eps_exact = float(np.max(np.log(P.max(axis=0)) - np.log(P.min(axis=0))))
        bias = float(np.abs(P @ R.values(d, e.eps_ldp, C) - X).max() / C)
        ok = valid and eps_exact <= e.eps_ldp * (1 + LDP_EXACT_TOL) and bias <= LDP_EXACT_TOL
        verdict = verdict if ok else "fail"
        rows.append({"point": p.value, "randomizer": e.randomizer, "eps_ldp_claimed": e.eps_ldp,
                     "eps_ldp_exact": eps_exact, "max_bias_over_C": bias, "distribution_valid": valid,
                     "outputs": int(P.shape[1]), "inputs_checked": int(X.shape[0])})
    worst = max(rows, key=lambda r: r["eps_ldp_exact"] / r["eps_ldp_claimed"])
    src = ldp.RANDOMIZERS.get(points[0].events[0].randomizer).source  # type: ignore[union-attr]
    summary = (f"{src}. Exact output distribution on the ball's extreme inputs (where each output's probability is "
               f"largest and smallest) and 64 random ones: worst-case log-ratio {worst['eps_ldp_exact']:.6g} vs "
               f"claimed {worst['eps_ldp_claimed']:g}; largest |E R(x) - x| / C = "
               f"{max(r['max_bias_over_C'] for r in rows):.2g} (must be <= {LDP_EXACT_TOL:g})")
    return result(check, thm, verdict, summary, measured=worst["eps_ldp_exact"], bound=worst["eps_ldp_claimed"],
                   rows=tuple(rows), confidence=1.0)
KIND = "ldp_exact"


def _fits(facts: Facts) -> None:
    if facts.threat_model != "shuffle":
        raise Misfit("kind", f"{KIND} checks a mechanism of the shuffle threat model (the Gaussian noise of a silo, "
                             f"curator or user, or a client's local randomizer); this spec's is {facts.threat_model}")


def describe(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule | None:
    """The rule above, from a stored result's rows."""
    rows = r["rows"]
    if r["verdict"] == "inapplicable" or not rows:
        return None
    w = max(rows, key=lambda x: x["eps_ldp_exact"] / x["eps_ldp_claimed"])
    bad = [x for x in rows if not x["distribution_valid"] or x["max_bias_over_C"] > LDP_EXACT_TOL
           or x["eps_ldp_exact"] > x["eps_ldp_claimed"] * (1 + LDP_EXACT_TOL)]
    return Rule(f"pass iff the randomizer's exact output distribution is a distribution, its worst log-ratio over the "
                f"inputs checked is at most the claimed eps_ldp and its mean is the input (both to {LDP_EXACT_TOL:g}); "
                f"fail otherwise (exact)", f"worst log-ratio {compare(w['eps_ldp_exact'], w['eps_ldp_claimed'])[0]} "
                f"(claimed); largest bias / C {max(x['max_bias_over_C'] for x in rows):.2g}", "fail" if bad else "pass")


CHECK = CheckKind(KIND, ldp_exact, fits=_fits, privacy=True, describe=describe)
