"""Seed 002's composition and O()-level privacy claims (Asi, Duchi, Javidi; Lnnn = line of
../shared/seeds/002_d3919fba655c6f58.txt): the exact privacy computations they are checked against, and the checks
(numbers in, from the points of catalog/element_composition_002.py; verdicts out).

Exact privacy (all closed forms or finite sums in log space; no sampling; kept beside the checks that use them, as
no accountant of verifiers/accountants/ handles these releases):
- ``rr_delta(eps0, k, E)``: delta(E) of the k-fold composition of eps0-randomized response (one bit, replace), which
  is the optimal composition of k eps0-DP mechanisms (Kairouz, Oh & Viswanath 2015, Thm 3.3): the privacy loss is
  (k - 2i) eps0 with probability C(k, i) p^(k-i) (1-p)^i, p = e^eps0 / (1 + e^eps0), and
  delta(E) = sum_{i: (k-2i) eps0 > E} C(k,i) p^(k-i) (1-p)^i (1 - e^(E - (k-2i) eps0)).
  The same sum is the exact delta of RR on k element bits at element distance k (Cor 2.2).
- ``worst_delta(eps0, delta_i, k, E)``: Kairouz et al.'s worst (eps0, delta_i)-DP mechanism (mass delta_i on an
  output only one side can produce, RR on the rest), composed k times: 1 - (1 - delta_i)^k (1 - rr_delta(E)) (their
  Thm 3.4; exact: the revealing outputs have zero probability on the other side).
- ``adaptive_rdp``: D_alpha of the adaptive composition of k Gaussian mechanisms (sensitivity Delta) whose noise std
  is s_lo after a positive previous output and s_hi otherwise (the first round at s_lo): exact through a 2-state
  transfer matrix, since int_{z > 0} phi_s(z - Delta)^alpha phi_s(z)^(1-alpha) dz = e^(alpha(alpha-1)Delta^2/(2s^2))
  Phi(alpha Delta / s).
- ``count_lower_epsilon``: a lower bound on the epsilon of T rounds of mechanism (4)'s pair (a, b) (Poisson rate q,
  noise sigma): the number of rounds with a release above a threshold c is Bin(T, p_a) against Bin(T, p_b), a
  post-processing; its exact epsilon (max over both orders and a fixed family of thresholds) bounds the truth below.
- ``eq16_expression`` / ``prop3_expression``: Eq. (16)'s inf (L335) and Prop 3's eps(tau) (L351), exact minimisers.

Checks (each states its rule before anything runs):
- ``group_privacy`` (Cor 2.2, L109-111): at element distance k the exact delta at k eps of the Gaussian mechanism
  (element sensitivity 1, Balle & Wang) and of RR on element bits, against k e^((k-1) eps) delta(eps), the base
  mechanism's exact delta at eps. Any exact value above the claim fails; else pass (an upper bound, reported with its
  looseness).
- ``basic_composition`` (Cor 2.3, L119): k worst-case (eps0, delta_i) mechanisms at sum eps_i: exact delta against
  sum delta_i.
- ``advanced_composition`` (Cor 2.3, L121; note 5a item 4): k eps0-DP mechanisms (delta_i = 0, RR is the worst case),
  eps0 on a grid in [eps_min, eps_max]: exact delta at 3/2 k eps0^2 + sqrt(6 k eps0^2 log(1/delta0)) against delta0.
- ``advanced_composition_delta`` (Cor 2.3, L121, its delta term): the same with delta_i > 0: exact delta of k
  worst-case (eps0, delta_i) mechanisms at the claimed epsilon against delta0 + k delta_i / (1 + e^eps0).
- ``rdp_composition`` (Cor 2.3, L123, the Renyi clause): exact D_alpha of the adaptive Gaussian composition against
  the sum of the per-step (worst-case) RDP.
- ``eq16_order`` (L333-335), ``prop3_element_order`` (Prop 3 (i), L351-353), ``prop3_user_order`` (Prop 3 (ii),
  L351-354): O(1) claims on a sweep of n (q = m/n, m fixed, T = gamma n). r = true epsilon / the stated expression,
  bracketed by [r_lo, r_hi] from a lower and an upper bound on the true epsilon. Rule, with GROWTH = 2 and points
  ordered by n (at least 3 distinct n, else inapplicable):
    fail ("refuted over the sweep"): r_lo is non-decreasing along the sweep and r_lo at the largest n exceeds
      GROWTH x r_hi at the smallest n (the ratio provably more than doubles, with a monotone trend);
    pass ("consistent over the sweep", the strongest verdict an O() claim can get, not a proof): r_hi never exceeds
      GROWTH x r_hi at the smallest n;
    inconclusive otherwise. Points outside the statement's condition (sigma^2 >= 2, tau^2 >= 2) are not judged.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from scipy.special import gammaln, log_ndtr, logsumexp
from scipy.stats import binom

from algorithms.registry import Registry
from verifiers.checks.base import EXACT_REL_SLACK, CheckResult, Rule, compare, decided, exact_result

SEED = "seed 002 (Asi, Duchi, Javidi)"
GROWTH = 2.0                  # an O(1) ratio that more than doubles (monotone) over the sweep is refuted
BISECT_STEPS = 80


def exceeds(value: float, bound: float) -> bool:
    """An exact value above its bound by more than float rounding, relative only (the deltas compared here can be far
    below verifiers.checks.base's absolute slack of 1e-12)."""
    return value > bound * (1 + EXACT_REL_SLACK)


# ---------------------------------------------------------------------------------------------------------------------
# exact privacy


def _log_rr(eps0: float) -> tuple[float, float]:
    """log p, log(1 - p) of eps0-randomized response, p = e^eps0 / (1 + e^eps0)."""
    return -math.log1p(math.exp(-eps0)), -math.log1p(math.exp(eps0))


def rr_delta(eps0: float, k: int, E: float) -> float:
    """delta(E) of k-fold eps0-randomized response (Kairouz et al.'s optimal composition of k eps0-DP mechanisms)."""
    if eps0 <= 0 or k < 1:
        raise ValueError(f"eps0 = {eps0}, k = {k}: need eps0 > 0 and k >= 1")
    lp, lq = _log_rr(eps0)
    i = np.arange(k + 1)
    loss = (k - 2 * i) * eps0
    keep = loss > E
    if not keep.any():
        return 0.0
    la = gammaln(k + 1) - gammaln(i + 1) - gammaln(k - i + 1) + (k - i) * lp + i * lq
    return float(np.sum(np.exp(la[keep]) * -np.expm1(E - loss[keep])))


def rr_epsilon(eps0: float, k: int, delta: float) -> float:
    """The smallest E with rr_delta(eps0, k, E) <= delta (bisection; delta is non-increasing in E)."""
    lo, hi = 0.0, k * eps0
    if rr_delta(eps0, k, 0.0) <= delta:
        return 0.0
    for _ in range(BISECT_STEPS):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if rr_delta(eps0, k, mid) > delta else (lo, mid)
    return hi


def worst_delta(eps0: float, delta_i: float, k: int, E: float) -> float:
    """Exact delta(E) of k compositions of the worst (eps0, delta_i)-DP mechanism (Kairouz et al., Thm 3.4)."""
    return float(-math.expm1(k * math.log1p(-delta_i)) * (1 - rr_delta(eps0, k, E)) + rr_delta(eps0, k, E))


def basic_claim_delta(deltas: Sequence[float]) -> float:
    """Cor 2.3's basic delta (L119): sum delta_i (its epsilon is sum eps_i)."""
    return float(sum(deltas))


def advanced_claim(eps: Sequence[float], delta0: float, c1: float = 1.5, c2: float = 6.0) -> float:
    """Cor 2.3's advanced epsilon (L121): 3/2 sum eps_i^2 + sqrt(6 sum eps_i^2 log(1/delta0))."""
    s = float(sum(e * e for e in eps))
    return c1 * s + math.sqrt(c2 * s * math.log(1 / delta0))


def advanced_claim_delta(eps: Sequence[float], deltas: Sequence[float], delta0: float) -> float:
    """Cor 2.3's advanced delta (L121): delta0 + sum delta_i / (1 + e^eps_i)."""
    return delta0 + float(sum(d / (1 + math.exp(e)) for e, d in zip(eps, deltas)))


def group_claim(eps: float, delta: float, k: int) -> float:
    """Cor 2.2's additive term (L111): k e^((k-1) eps) delta."""
    return k * math.exp((k - 1) * eps) * delta


def rr_bit_delta(eps0: float, eps: float) -> float:
    """The exact delta(eps) of eps0-randomized response on one bit: (p - e^eps (1 - p))_+."""
    return rr_delta(eps0, 1, eps)


def gaussian_rdp(alpha: float, sensitivity: float, s: float) -> float:
    """D_alpha(N(Delta, s^2) || N(0, s^2)) = alpha Delta^2 / (2 s^2)."""
    return alpha * sensitivity**2 / (2 * s**2)


def adaptive_rdp(k: int, alpha: float, sensitivity: float, s_lo: float, s_hi: float) -> float:
    """Exact D_alpha of k adaptively composed Gaussian mechanisms (mean Delta vs 0; noise s_lo after a positive
    output, s_hi after a non-positive one, s_lo first): (1/(alpha-1)) log of the transfer-matrix product."""
    if not alpha > 1:
        raise ValueError(f"alpha = {alpha}: Renyi orders here are > 1")
    def row(s: float) -> np.ndarray:   # log int over {z > 0}, {z <= 0} of phi_s(z-D)^alpha phi_s(z)^(1-alpha)
        c = alpha * (alpha - 1) * sensitivity**2 / (2 * s**2)
        u = alpha * sensitivity / s
        return np.array([c + log_ndtr(u), c + log_ndtr(-u)])
    m = np.stack([row(s_lo), row(s_hi)])       # m[b, b']: from state b (sign of the previous output) to b'
    v = row(s_lo)
    for _ in range(k - 1):
        v = logsumexp(v[:, None] + m, axis=0)
    return float(logsumexp(v)) / (alpha - 1)


def rdp_claim(k: int, alpha: float, sensitivity: float, s_lo: float, s_hi: float) -> float:
    """Cor 2.3's Renyi clause (L123): sum of the per-step RDP, each step's worst case over its adaptive noise."""
    return k * max(gaussian_rdp(alpha, sensitivity, s_lo), gaussian_rdp(alpha, sensitivity, s_hi))


def eq16_expression(T: float, q: float, sigma: float, delta: float) -> float:
    """Eq. (16)'s middle expression (L335): inf over alpha in (0, sigma^2 log(1/q)] of T q^2/sigma^2 (1 + alpha) +
    log(1/delta)/alpha (convex in alpha: the unconstrained minimiser, clipped)."""
    L, top = math.log(1 / delta), sigma**2 * math.log(1 / q)
    if top <= 0:
        return math.inf
    c = T * q**2 / sigma**2
    al = min(math.sqrt(L / c), top)
    return c * (1 + al) + L / al


def prop3_expression(gamma: float, m: float, n: float, tau: float, delta: float) -> float:
    """Prop 3's eps(tau) (L351): inf over alpha <= tau^2 log(n/m) of gamma m^2 (1 + alpha)/(n tau^2) + log(1/delta)/alpha."""
    return eq16_expression(gamma * n, m / n, tau, delta)


def _binomial_delta(lp: np.ndarray, lq: np.ndarray, E: float, ep: np.ndarray | None = None) -> float:
    """sum over lp > E + lq of e^lp (1 - e^(E + lq - lp)); ``ep`` = exp(lp) when the caller has it (the bisection
    asks again at many E). The terms are formed on the summed entries only: the same numbers in the same order."""
    lqE = E + lq
    keep = lp > lqE
    d = (np.exp(lp) if ep is None else ep)[keep] * -np.expm1(np.minimum(lqE[keep] - lp[keep], 0.0))
    return float(np.sum(d))


def count_lower_epsilon(q: float, sigma: float, T: int, delta: float, a: float, b: float,
                        offsets: Sequence[float] = (-1.0, -0.5, 0.0, 0.5, 1.0, 1.5)) -> tuple[float, float]:
    """A lower bound on the epsilon (at delta) of T rounds of q N(a, sigma^2) + (1-q) N(0, sigma^2) against the same
    with b: the count of releases above c = (a + b)/2 + t sigma, Bin(T, p_a) vs Bin(T, p_b), exact, the largest over
    the thresholds and both orders. Returns (epsilon, the threshold c that gave it)."""
    j = np.arange(T + 1)
    best, best_c = 0.0, math.nan
    for t in offsets:
        c = (a + b) / 2 + t * sigma

        def above(mu: float, c: float = c) -> float:
            return float(np.exp(log_ndtr((mu - c) / sigma)))
        pa = q * above(a) + (1 - q) * above(0.0)
        pb = q * above(b) + (1 - q) * above(0.0)
        la, lb = binom.logpmf(j, T, pa), binom.logpmf(j, T, pb)
        for lp, lq in ((la, lb), (lb, la)):
            ep = np.exp(lp)
            if _binomial_delta(lp, lq, 0.0, ep) <= delta:
                continue
            lo, hi = 0.0, float(np.max(np.abs(la - lb)[np.isfinite(la - lb)]))
            for _ in range(BISECT_STEPS):
                mid = 0.5 * (lo + hi)
                lo, hi = (mid, hi) if _binomial_delta(lp, lq, mid, ep) > delta else (lo, mid)
            if lo > best:
                best, best_c = lo, c
    return best, best_c


# ---------------------------------------------------------------------------------------------------------------------
# checks

CITE_GROUP = (f"{SEED}: Cor 2.2 (group privacy, L109-111), against the exact delta at element distance k of the "
              f"Gaussian mechanism (Balle & Wang) and of randomized response on element bits")
CITE_BASIC = f"{SEED}: Cor 2.3, basic composition (L119), against k composed worst-case (eps0, delta_i) mechanisms"
CITE_ADV = (f"{SEED}: Cor 2.3, advanced composition (L119-121), against the optimal composition of k eps0-DP "
            f"mechanisms (k-fold randomized response, Kairouz et al.)")
CITE_ADV_D = (f"{SEED}: Cor 2.3, advanced composition's delta term (L121), against k composed worst-case (eps0, "
              f"delta_i) mechanisms (Kairouz et al., Thm 3.4)")
CITE_RDP = f"{SEED}: Cor 2.3, Renyi composition (L123), against the exact D_alpha of an adaptive Gaussian composition"
CITE_EQ16 = (f"{SEED}: Eq. (16) (L333-335): (O(1) eps, delta)-element DP of T rounds of (15) at q = m/n, against "
             f"bounds on the true epsilon of mechanism (4)'s worst element pair")
CITE_P3I = f"{SEED}: Prop 3 (i) (L351-353): sigma^2 >= 2 gives (O(1) eps(sigma), delta)-element DP"
CITE_P3II = (f"{SEED}: Prop 3 (ii) (L351-354): sigma^2 >= (K ^ M)^2 tau^2, tau^2 >= 2 gives (O(1) eps(tau), "
             f"delta)-user-level DP")
CLAIMS_GROUP = ("002 Cor 2.2",)
CLAIMS_COMP = ("002 Cor 2.3",)
CLAIMS_EQ16 = ("002 Eq. (16)",)
CLAIMS_P3I = ("002 Prop 3 (i)",)
CLAIMS_P3II = ("002 Prop 3 (ii)",)


def _rows_check(check: Any, theorem: str, citation: str, claims: tuple[str, ...], points: list[dict], key: str,
                what: str) -> CheckResult:
    """An exact upper-bound claim judged row by row: each point's ``key`` holds rows with 'exact' and 'claim'."""
    rows, why = [], []
    for pt in points:
        for r in pt[key]["rows"]:
            row = {"point": pt["value"]} | r | {"exact / claim": r["exact"] / r["claim"] if r["claim"] > 0 else
                                                (0.0 if r["exact"] <= 0 else math.inf)}
            if exceeds(r["exact"], r["claim"]):
                why.append(row)
            rows.append(row)
    if not rows:
        return exact_result(check, theorem, citation, claims, "inapplicable", f"no row to judge ({what})",
                            measured=None, bound=None, rows=[])
    worst = max(rows, key=lambda r: r["exact / claim"])
    label = ", ".join(f"{k} = {worst[k]}" if isinstance(worst[k], str) else f"{k} = {worst[k]:.4g}"
                      for k in worst if k in ("base", "case", "k", "eps", "eps0"))
    multi = [r for r in rows if r.get("k", 2) >= 2]
    loose = (f"; over k >= 2: worst {max(r['exact / claim'] for r in multi):.4g}, median "
             f"{float(np.median([r['exact / claim'] for r in multi])):.4g}" if multi and len(multi) < len(rows) else "")
    summary = (f"{what}: worst exact / claim {worst['exact / claim']:.4g} ({label}){loose}"
               + (f"; exceeded at {len(why)} of {len(rows)} rows, e.g. exact {why[0]['exact']:.4g} > claimed "
                  f"{why[0]['claim']:.4g}" if why else f"; all {len(rows)} rows within the claim"))
    return exact_result(check, theorem, citation, claims, decided(bool(why), len(rows) - len(why)), summary,
                        measured=worst["exact"], bound=worst["claim"], rows=rows)


def group_privacy(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    return _rows_check(check, "002 Cor 2.2", CITE_GROUP, CLAIMS_GROUP, points, "group",
                       "exact delta at element distance k (at k eps) against k e^((k-1) eps) delta(eps)")


def basic_composition(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    return _rows_check(check, "002 Cor 2.3", CITE_BASIC, CLAIMS_COMP, points, "basic",
                       "exact delta of k worst-case (eps0, delta_i) mechanisms at k eps0 against k delta_i")


def advanced_composition(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    res = _rows_check(check, "002 Cor 2.3", CITE_ADV, CLAIMS_COMP, points, "advanced",
                      "exact delta of k eps0-randomized responses at 3/2 k eps0^2 + sqrt(6 k eps0^2 log(1/delta0)) "
                      "against delta0")
    if res.rows:
        tight = max(r["exact eps at delta0"] / r["claimed eps"] for r in res.rows)
        res = dataclasses.replace(res, summary=res.summary + f"; exact epsilon at delta0 / claimed epsilon at most "
                                                                  f"{tight:.4g}")
    return res


def advanced_composition_delta(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    return _rows_check(check, "002 Cor 2.3", CITE_ADV_D, CLAIMS_COMP, points, "advanced_delta",
                       "exact delta of k worst-case (eps0, delta_i) mechanisms at the advanced epsilon against "
                       "delta0 + k delta_i / (1 + e^eps0)")


def rdp_composition(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    return _rows_check(check, "002 Cor 2.3", CITE_RDP, CLAIMS_COMP, points, "rdp",
                       "exact D_alpha of k adaptively composed Gaussian mechanisms against the sum of the per-step "
                       "worst-case RDP")


def order_verdict(ns: Sequence[float], r_lo: Sequence[float], r_hi: Sequence[float]) -> tuple[str, str]:
    """The O(1) rule of the module doc on ratios ordered by n: (verdict, reason)."""
    if len(set(ns)) < 3:
        return "inapplicable", "an O() claim needs a sweep of at least 3 values of n"
    r0 = r_hi[0]
    mono = all(b >= a * (1 - 1e-9) for a, b in zip(r_lo, r_lo[1:]))
    if mono and r_lo[-1] > GROWTH * r0:
        return "fail", (f"refuted over the sweep: the lower bound on the ratio rises monotonically to {r_lo[-1]:.4g} "
                        f"at n = {ns[-1]:g}, more than {GROWTH:g}x the upper bound {r0:.4g} at n = {ns[0]:g}")
    if max(r_hi) <= GROWTH * r0:
        return "pass", (f"consistent over the sweep (not a proof): the upper bound on the ratio stays within "
                        f"{GROWTH:g}x its value at n = {ns[0]:g} ({r0:.4g}; largest {max(r_hi):.4g})")
    return "inconclusive", (f"the ratio grows past {GROWTH:g}x (upper bound up to {max(r_hi):.4g} from {r0:.4g}) "
                            f"but the lower bound does not show a monotone growth past it")


def _order_check(check: Any, theorem: str, citation: str, claims: tuple[str, ...], points: list[dict],
                 key: str) -> CheckResult:
    judged = sorted((pt for pt in points if pt[key]["applies"]), key=lambda pt: pt["params"]["n"])
    skipped = len(points) - len(judged)
    rows = [{"point": pt["value"], "n": pt["params"]["n"], "q": pt["q"], "T": pt["T"]} | pt[key] for pt in judged]
    if not judged:
        return exact_result(check, theorem, citation, claims, "inapplicable",
                            f"no point satisfies the statement's condition ({points[0][key]['condition']})",
                            measured=None, bound=None, rows=rows)
    ns = [r["n"] for r in rows]
    lo = [r["lower"] / r["expression"] for r in rows]
    hi = [r["upper"] / r["expression"] for r in rows]
    verdict, why = order_verdict(ns, lo, hi)
    seq = ", ".join(f"{n:g}: [{a:.3g}, {b:.3g}]" for n, a, b in zip(ns, lo, hi))
    summary = (f"{rows[0]['what']}; true epsilon / stated expression, [lower, upper] by n: {seq}; {why}"
               + (f"; {skipped} point(s) outside the condition not judged" if skipped else ""))
    return exact_result(check, theorem, citation, claims, verdict, summary, measured=max(hi), bound=None, rows=rows)


def eq16_order(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    return _order_check(check, "002 Eq. (16)", CITE_EQ16, CLAIMS_EQ16, points, "eq16")


def prop3_element_order(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    return _order_check(check, "002 Prop 3 (i)", CITE_P3I, CLAIMS_P3I, points, "prop3_element")


def prop3_user_order(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    return _order_check(check, "002 Prop 3 (ii)", CITE_P3II, CLAIMS_P3II, points, "prop3_user")


CompositionCheckFn = Callable[[Any, str, list[dict]], CheckResult]
GROUP_CHECKS: Registry[CompositionCheckFn] = Registry("group-privacy check kind")
GROUP_CHECKS.add("group_privacy", group_privacy)
COMPOSITION_CHECKS: Registry[CompositionCheckFn] = Registry("composition check kind")
COMPOSITION_CHECKS.add("basic_composition", basic_composition)
COMPOSITION_CHECKS.add("advanced_composition", advanced_composition)
COMPOSITION_CHECKS.add("advanced_composition_delta", advanced_composition_delta)
COMPOSITION_CHECKS.add("rdp_composition", rdp_composition)
ORDER_CHECKS: Registry[CompositionCheckFn] = Registry("O(1)-privacy check kind")
ORDER_CHECKS.add("eq16_order", eq16_order)
ORDER_CHECKS.add("prop3_element_order", prop3_element_order)
ORDER_CHECKS.add("prop3_user_order", prop3_user_order)


def _rows_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = max(r["rows"], key=lambda x: x["exact / claim"])
    over = any(exceeds(x["exact"], x["claim"]) for x in r["rows"])
    return Rule(f"fail iff the exact value exceeds the corollary's claim in some row (rel. slack {EXACT_REL_SLACK:g}); "
                f"pass otherwise (exact)", f"worst: exact {compare(w['exact'], w['claim'])[0]} (the claim)",
                "fail" if over else "pass")


def _order_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    rows = sorted(r["rows"], key=lambda x: x["n"])
    ns = [x["n"] for x in rows]
    lo = [x["lower"] / x["expression"] for x in rows]
    hi = [x["upper"] / x["expression"] for x in rows]
    verdict, _ = order_verdict(ns, lo, hi)
    return Rule(f"the ratio true epsilon / the stated expression along n, bracketed [lower, upper]: fail iff its lower "
                f"end rises monotonically to more than {GROWTH:g}x its upper end at the smallest n; pass iff its upper "
                f"end stays within {GROWTH:g}x of that (consistent, not a proof); else inconclusive (exact bounds)",
                f"ratio [{lo[0]:.3g}, {hi[0]:.3g}] at n = {ns[0]:g} -> [{lo[-1]:.3g}, {hi[-1]:.3g}] at n = {ns[-1]:g}",
                {"pass": "pass", "fail": "fail"}.get(verdict, "undecided"))


# the decision rules in words, for the report's first table (verifiers/checks/base.py Rule)
COMPOSITION_RULES = {"group_privacy": _rows_rule, "basic_composition": _rows_rule, "advanced_composition": _rows_rule,
                     "advanced_composition_delta": _rows_rule, "rdp_composition": _rows_rule,
                     "eq16_order": _order_rule, "prop3_element_order": _order_rule, "prop3_user_order": _order_rule}
