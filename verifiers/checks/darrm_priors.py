"""The check of Fig. B.7 (seed 003, App. B.4, L3557-3604; the ``darrm_priors`` mechanism, catalog/darrm_priors_003.py).
Lnnn = line of ../shared/seeds/003_56e8b1c3300cdeae.txt.

``darrm_prior_choice``, at each point (an actual distribution of the p_i, a privacy allowance m):
- both optimised gammas are m eps-DP exactly (their exact epsilon over Lemma 3.6.1's corners at delta = 0);
- the thesis's expectation (L3599): gamma_opt-P's expected error below gamma_opt-U's under U[0, 0.1] ("a prior closer
  to the actual distribution gives additional utility gain"), above it under U[0, 1] and p_i = 0.5 ("otherwise we
  slightly suffer a utility loss");
- the caption (L3604): with either prior, the optimised gamma's error below gamma_Sub's and RR's.
Each comparison is strict, as stated. Exact errors: the inequality must hold beyond float rounding, else fail. Monte
Carlo errors (paired draws): a one-sided z-test of the mean difference at the check's confidence, Bonferroni over the
point's comparisons: pass if the claimed direction is significant, fail if the opposite one is, else inconclusive.
A point whose actual distribution is none of the thesis's three is not judged (inapplicable).
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from scipy.stats import norm

from algorithms.registry import Registry
from verifiers.checks.base import (
    EXACT_ABS_SLACK,
    EXACT_REL_SLACK,
    CheckResult,
    Rule,
    cited_result,
    combine_verdicts,
    exceeds,
    side_of,
)

SEED = "seed 003 (Jiang, thesis ch. 3)"
CITE = (f"{SEED}: App. B.4 'Comparison Using Different Prior Distributions' (L3557-3604): gamma optimised under T_U "
        f"(B.61) and T_P (B.62), errors under the actual p_i (L3588-3597), the expectation at L3599 and Fig. B.7's "
        f"caption (L3604)")
CLAIMS = ("003 Fig. B.7",)
COMPARISONS = (("opt_P", "opt_U", None), ("opt_U", "sub", "lower"), ("opt_U", "const", "lower"),
               ("opt_P", "sub", "lower"), ("opt_P", "const", "lower"))


def _judge_exact(a: float, b: float, want: str) -> str:
    lower, upper = (a, b) if want == "lower" else (b, a)          # the claim: lower < upper, strictly
    return "pass" if lower < upper * (1 - EXACT_REL_SLACK) - EXACT_ABS_SLACK else "fail"


def _judge_mc(mean: float, se: float, want: str, z: float) -> str:
    d = mean if want == "lower" else -mean                        # the claim: d < 0
    if d + z * se < 0:
        return "pass"
    return "fail" if d - z * se > 0 else "inconclusive"


def darrm_prior_choice(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    conf = check.confidence
    z = float(norm.ppf(1 - (1 - conf) / len(COMPARISONS)))
    rows, why, verdicts, skipped = [], [], [], []
    for pt in points:
        gs, m, eps = pt["gammas"], pt["params"]["m"], pt["params"]["eps"]
        for name in ("opt_U", "opt_P"):
            if exceeds(gs[name]["exact_epsilon"], m * eps):
                verdicts.append("fail")
                why.append(f"{pt['value']}: gamma_{name}'s exact epsilon {gs[name]['exact_epsilon']:.6g} > m eps")
        expects = pt["thesis_expects"]
        if expects is None:
            skipped.append(f"{pt['value']}: {pt['actual']} is none of the thesis's actual distributions")
            verdicts.append("inapplicable")
            continue
        if pt["exact"] and max(g["error"] for g in gs.values()) <= EXACT_ABS_SLACK:
            why.append(f"{pt['value']} ({pt['actual']}): every gamma's error is 0 to rounding (Pr[g(S) = 1] = "
                       f"Pr[out = 1] for every symmetric gamma when the votes' law is symmetric), so no strict "
                       f"comparison can hold")
        for a, b, want in COMPARISONS:
            want = want or expects
            ea, eb = gs[a]["error"], gs[b]["error"]
            if pt["exact"]:
                v, se = _judge_exact(ea, eb, want), 0.0
            else:
                pair = pt["paired"][f"{a}-{b}"]
                v, se = _judge_mc(pair["mean"], pair["se"], want, z), pair["se"]
            verdicts.append(v)
            if v != "pass":
                why.append(f"{pt['value']} ({pt['actual']}): E({a}) = {ea:.6g} {'<' if want == 'lower' else '>'} "
                           f"E({b}) = {eb:.6g} claimed; {v}")
            rows.append({"point": pt["value"], "actual": pt["actual"], "claim": f"E({a}) {want} than E({b})",
                         "prior_claim": b == "opt_U", "want": want,
                         "error_a": ea, "error_b": eb, "difference": ea - eb, "paired_se": se,
                         "method": "exact" if pt["exact"] else f"Monte Carlo, {pt['draws']} draws", "verdict": v})
    verdict = combine_verdicts(verdicts)
    main = [r for r in rows if r["prior_claim"]]
    rest = [r for r in rows if not r["prior_claim"]]
    span = "; ".join(f"m = {r['point']} ({r['actual']}): E(opt-P) - E(opt-U) = {r['difference']:+.3g} ({r['want']} "
                     f"claimed, {r['method']}: {r['verdict']})" for r in main)
    summary = (f"Fig. B.7: {span}; optimised gamma below gamma_Sub and RR: "
               f"{sum(r['verdict'] == 'pass' for r in rest)} of {len(rest)} comparisons pass"
               + (f"; not judged: {'; '.join(skipped)}" if skipped else "")
               + (f"; NOT PASSING: {'; '.join(why)}" if why else ""))
    return cited_result(check, CITE, CLAIMS, verdict, summary, confidence=conf, rows=rows, theorem="darrm.fig_b7")


DarrmPriorCheckFn = Callable[[Any, str, list[dict]], CheckResult]
DARRM_PRIOR_CHECKS: Registry[DarrmPriorCheckFn] = Registry("DaRRM prior check kind")
DARRM_PRIOR_CHECKS.add("darrm_prior_choice", darrm_prior_choice)


def _prior_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    main = [x for x in r["rows"] if x["prior_claim"]] or r["rows"]
    w = main[0]
    return Rule(f"per comparison: the claimed strict order of the two errors (exact where Eq. B.56 keeps one sign, else "
                f"a paired Monte Carlo difference with Bonferroni over the comparisons at {r['confidence']:g}): pass iff "
                f"it holds, fail iff the reverse (or equality, exactly) holds; and both optimised gammas exactly m "
                f"eps-private", f"E(opt-P) - E(opt-U) = {w['difference']:+.3g} ({w['want']} claimed, {w['method']}, "
                f"{w['actual']})", side_of(r["rows"]))


# the decision rules in words, for the report's first table (verifiers/checks/base.py Rule)
DARRM_PRIOR_RULES = {"darrm_prior_choice": _prior_rule}
