"""The ``ordering`` check: do two threat models' measured excess risks line up the way their cited rates say?

The rates are the threat models' Theta(.) rates as the seeds quote them, with hidden constants (set to 1 here) and
omitted logs, so an order is predicted only where the worse run's rate is at least ``margin`` times the better
run's, each evaluated at its own run's resolved parameters and capped at the instance's trivial level
min(L D, sup_W F - F*, F(w0) - F*) (the risk of the initial point w0, the worst point of the domain, or L D; the
same ceiling the rate check uses). A prediction is a reading of the rates, not a theorem about this instance: a
`fail` means the hidden constants reverse the order at these sizes. At every predicted point, a one-sided Welch
t-test on the difference of the mean excess risks (the trials' variances with Satterthwaite's degrees of freedom;
any Monte Carlo error of the population risk added as a known variance), Bonferroni over the predicted points at
the stated level:
- pass: the worse run's risk is significantly above the better run's at every predicted point;
- fail: it is significantly below at some predicted point (the order is reversed);
- inconclusive: neither (the intervals overlap somewhere);
- inapplicable: the rates predict no order at any swept point (ratio below the margin everywhere).
Pure: it takes numbers and returns a CheckResult."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
from scipy import stats

from verifiers.checks.base import CheckResult, Rule
from verifiers.theorems.base import Theorem

NOT_INVENTORIED = ("the order of two threat models' quoted rates, a reading of a rate table the inventory does not list "
                   "as a claim")


@dataclass(frozen=True)
class Side:
    """One run at one sweep point: its resolved parameters and its trials' excess risks."""

    params: Mapping[str, float]
    risks: np.ndarray
    mc_se: float = 0.0          # the shared Monte Carlo error of its population risk (0 for closed forms)


def ceiling(params: Mapping[str, float]) -> float:
    """The instance's trivial level: min(L D, sup_W F - F*, F(w0) - F*) (whichever the parameters know)."""
    return min(params["L"] * params["D"], params.get("risk_max", math.inf), params.get("Delta", math.inf))


def capped_rate(thm: Theorem, params: Mapping[str, float]) -> float:
    return min(thm.evaluate(params), ceiling(params))


def welch(b: Side, w: Side) -> tuple[float, float, float]:
    """(difference of means worse - better, its standard error, Satterthwaite's degrees of freedom)."""
    vb, vw = float(np.var(b.risks, ddof=1)) / b.risks.size, float(np.var(w.risks, ddof=1)) / w.risks.size
    known = b.mc_se**2 + w.mc_se**2
    se = math.sqrt(vb + vw + known)
    denom = (vb**2 / (b.risks.size - 1) if vb else 0.0) + (vw**2 / (w.risks.size - 1) if vw else 0.0)
    df = (vb + vw + known) ** 2 / denom if denom > 0 else math.inf
    return float(np.mean(w.risks) - np.mean(b.risks)), se, df


def ordering(*, check_id: str, better: str, worse: str, better_thm: Theorem, worse_thm: Theorem,
             points: Sequence[tuple[str, Side, Side]], margin: float, confidence: float,
             variable: str) -> CheckResult:
    """``points``: (the point's label, e.g. 'n = 1e4'; better run; worse run) per sweep point."""
    rows: list[dict[str, Any]] = []
    predicted: list[dict[str, Any]] = []
    for value, b, w in points:
        rb, rw = capped_rate(better_thm, b.params), capped_rate(worse_thm, w.params)
        ratio = rw / rb
        diff, se, df = welch(b, w)
        t = diff / se if se > 0 else math.copysign(math.inf, diff) if diff else 0.0
        row: dict[str, Any] = {"point": value, "rate_better": rb, "rate_worse": rw, "cap": ceiling(w.params),
                               "rate_ratio": ratio, "predicted": ratio >= margin,
                               f"risk_{better}": float(np.mean(b.risks)), f"risk_{worse}": float(np.mean(w.risks)),
                               "difference": diff, "se": se, "df": df, "t": t}
        rows.append(row)
        if ratio >= margin:
            predicted.append(row)
    # an order between two threat models' quoted rates is a reading of a rate table (seed 004 Fig. 3, seed 000 Sec. 1),
    # whose cells the inventory maps to theorem rows without listing the comparison as a claim: a pass here decides
    # no theorem's upper bound (the runs' algorithms need not be the theorems' either), so it cites none
    claims: tuple[str, ...] = ()
    citation = (f"{better}: {better_thm.name} ({better_thm.citation}); {worse}: {worse_thm.name} "
                f"({worse_thm.citation}) [not inventoried: {NOT_INVENTORIED}]")
    head = (f"{worse} above {better} where the rates {worse_thm.name} / {better_thm.name} (constants 1, capped at the "
            f"trivial level) differ by >= {margin:g}x")
    if not predicted:
        top = max(r["rate_ratio"] for r in rows)
        return _res(check_id, "inapplicable", citation, claims, confidence,
                    f"{head}: no swept {variable} has such a gap (largest ratio {top:.3g}), so the rates predict no "
                    f"order here", rows)
    level = (1 - confidence) / len(predicted)
    for r in predicted:
        r["critical_t"] = crit = float(stats.t.ppf(1 - level, r["df"])) if math.isfinite(r["df"]) else float(
            stats.norm.ppf(1 - level))
        r["outcome"] = "agrees" if r["t"] > crit else "reversed" if r["t"] < -crit else "undecided"
    for r in rows:
        r.setdefault("outcome", "no order predicted")
    outcomes = [r["outcome"] for r in predicted]
    verdict = "fail" if "reversed" in outcomes else "pass" if all(o == "agrees" for o in outcomes) else "inconclusive"
    where = [r["point"] for r in predicted]
    summary = (f"{head}: predicted at {variable} = {where}; one-sided Welch t-tests of risk({worse}) - risk({better}) "
               f"at level {1 - confidence:g} (Bonferroni over {len(predicted)} point(s)): "
               f"{outcomes.count('agrees')} agree, {outcomes.count('reversed')} reversed, "
               f"{outcomes.count('undecided')} undecided")
    worst = min(predicted, key=lambda r: r["t"] - r["critical_t"])
    return _res(check_id, verdict, citation, claims, confidence, summary, rows, measured=worst["t"],
                bound=worst["critical_t"])


def describe(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule | None:
    """The rule above, from a stored result's rows (each predicted row holds its t and critical value)."""
    predicted = [row for row in r["rows"] if row.get("predicted")]
    if r["verdict"] == "inapplicable" or not predicted:
        return None
    better, worse = spec.get("better", "the better run"), spec.get("worse", "the worse run")
    text = (f"at each point where the rates differ by >= {spec.get('margin', 0):g}x: a one-sided Welch t-test of "
            f"risk({worse}) - risk({better}) at level {1 - r['confidence']:g} / {len(predicted)} (Bonferroni); pass "
            f"iff every one finds {worse} above, fail iff one finds it significantly below")
    outcomes = [row["outcome"] for row in predicted]
    worst = min(predicted, key=lambda row: row["t"] - row["critical_t"])
    margin = f"weakest point {worst['point']}: t = {worst['t']:.3g} against the critical {worst['critical_t']:.3g}"
    side = "fail" if "reversed" in outcomes else "pass" if all(o == "agrees" for o in outcomes) else "undecided"
    return Rule(text, margin, side)


def _res(check_id: str, verdict: str, citation: str, claims: tuple[str, ...], confidence: float, summary: str,
         rows: list, measured: float | None = None, bound: float | None = None) -> CheckResult:
    return CheckResult(id=check_id, kind="ordering", theorem=None, citation=citation, verdict=verdict,
                       measured=measured, bound=bound, confidence=confidence, summary=summary, rows=tuple(rows),
                       claims=claims)
