"""Checks on seed 000's summation protocols (engine/kinds/mechanism/run.py runs them): data in, verdicts out.

A point holds the protocol's parameters as run (g, b, p), the inputs' exact per-coordinate variance of the
estimate (from the protocol's definition, not from the runs), the runs' per-coordinate mean error and mean
squared error, and the privacy computed from the parameters as run (verifiers/accountants/binomial_privacy.py)."""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping

import numpy as np

from algorithms.registry import Registry
from verifiers import stats
from verifiers.checks import CheckResult
from verifiers.checks.base import Rule, at, cite, compare

SEED = "seed 000 (Cheu, Joseph, Mao & Peng)"
CITE = {"p1d": f"{SEED}, Lemma 3.1 / A.2 (L130, L372-412)", "pvec": f"{SEED}, Thm 3.2 / A.6 (L150, L473-510)"}
INVENTORY = {("p1d", True): ("000 Lemma 3.1/A.2 (1)",), ("p1d", False): ("000 Lemma 3.1/A.2 (2)",),
             ("pvec", True): ("000 Thm 3.2/A.6 (privacy)", "000 Eq. (2)"), ("pvec", False): ("000 Thm 3.2/A.6 (MSE)",)}
REL_SLACK = 1e-9


def _result(check: Any, protocol: str, verdict: str, summary: str, *, measured, bound, rows, confidence) -> CheckResult:
    claims = INVENTORY[protocol, check.kind == "protocol_privacy"]
    return CheckResult(id=check.id, kind=check.kind, theorem=f"shuffle_sum.{protocol}",
                       citation=cite(CITE[protocol], claims), verdict=verdict, measured=measured, bound=bound,
                       confidence=confidence, summary=summary, rows=tuple(rows), claims=claims)


def protocol_privacy(check: Any, protocol: str, points: list[dict]) -> CheckResult:
    """P_1D: the exact epsilon at delta of the worst neighbouring pair (x_u = 0 vs Delta) against Lemma 3.1's
    eps (2/g + |x_u - x'_u|/Delta). P_VEC: the PLD accountant's epsilon over the canaries against Thm 3.2's eps.
    Both from the parameters as run; a value above the claim fails."""
    rows, verdict, broken = [], "pass", []
    for p in points:
        pr = p["privacy"]
        failed = lemma31_conditions(p)
        ok = pr["epsilon"] <= pr["claim"] * (1 + REL_SLACK) and not failed
        verdict = verdict if ok else "fail"
        broken += [f"{p['value']}: {c}" for c in failed]
        rows.append({"point": p["value"], "epsilon_computed": pr["epsilon"], "epsilon_claimed": pr["claim"],
                     "epsilon_target": p["params"]["eps"], "slack": pr["claim"] / pr["epsilon"] if pr["epsilon"] > 0
                     else math.inf, "delta": p["params"]["delta"], "g": p["protocol"]["g"], "b": p["protocol"]["b"],
                     "p": p["protocol"]["p"], "pair": pr["pair"]})
    worst = max(rows, key=lambda r: r["epsilon_computed"] / r["epsilon_claimed"])
    how = (points[0]["privacy"]["method"])
    summary = (f"{how}; the parameters as run must satisfy Lemma 3.1's conditions; worst computed/claimed = "
               f"{worst['epsilon_computed'] / worst['epsilon_claimed']:.3g} (slack {min(r['slack'] for r in rows):.3g}"
               f" .. {max(r['slack'] for r in rows):.3g})" + ("; FAILS: " + "; ".join(broken) if broken else ""))
    return _result(check, protocol, verdict, summary, measured=worst["epsilon_computed"],
                   bound=worst["epsilon_claimed"], rows=rows, confidence=1.0)


def lemma31_conditions(point: dict) -> list[str]:
    """Lemma 3.1's conditions (L130) on the parameters as run, at the (eps, delta) the lemma is applied with
    (P_VEC: eps_hat, delta_hat per coordinate, Thm A.6's proof L490) and Delta (P_VEC: 2 Delta_2)."""
    pc, prm = point["protocol"], point["params"]
    eps, delta = pc.get("eps_hat", prm["eps"]), pc.get("delta_hat", prm["delta"])
    g, b, p, Delta, n = pc["g"], pc["b"], pc["p"], pc["Delta"], prm["n"]
    need = 90 * g * g * math.log(2 / delta) / (eps * eps * n)
    out = []
    if "eps_hat" in pc and g < max(math.sqrt(prm["d"]), 4) * (1 - REL_SLACK):
        out.append(f"g = {g} < max(sqrt(d), 4) (Thm A.6's proof, L477)")
    if g < Delta * math.sqrt(n) * (1 - REL_SLACK):
        out.append(f"g = {g} < Delta sqrt(n) = {Delta * math.sqrt(n):.4g}")
    if not b > 2 * need:
        out.append(f"b = {b} is not > 180 g^2 ln(2/delta)/(eps^2 n) = {2 * need:.6g}")
    if abs(p - need / b) > REL_SLACK * need / b:
        out.append(f"p = {p:.6g} is not 90 g^2 ln(2/delta)/(b eps^2 n) = {need / b:.6g}")
    return out


def protocol_unbiased(check: Any, protocol: str, points: list[dict]) -> CheckResult:
    """Unbiasedness, part by part, since the runs alone cannot see a small bias under the paper's noise:
    (1) the analyzer (and P_VEC's re-centring) applied to the expected count returns the true sum, exactly up to
    float rounding of numbers of the size of the count; (2) the randomized rounding alone, 10^7 roundings of the
    point's inputs, z-test with its exact variance; (3) the privacy noise alone, 10^7 draws of the users' summed
    binomial, z-test against n b p with its exact variance; (4) the runs, every coordinate's mean error, z-test with
    the exact variance (reported with the bias it resolves; it catches gross errors). Two-sided tests at the
    check's level, Bonferroni over all of them. Fails when any part does; inconclusive when parts (2) or (3) cannot
    resolve a bias of one grid step (Delta/g) per count, i.e. the evidence could not see a fault that size."""
    cells = sum(len(p["mean_error"]) + 2 for p in points)
    alpha = (1 - check.confidence) / cells
    zq = stats.z_quantile(1 - alpha / 2)
    rows, verdict, why, weak = [], "pass", [], []
    for p in points:
        T = p["trials"]
        z = np.array(p["mean_error"]) / np.sqrt(np.array(p["exact_variance"]) / T)
        worst = int(np.argmax(np.abs(z)))
        step = p["protocol"]["Delta"] / p["protocol"]["g"]
        tol = 1e-12 * step * p["count_scale"] * max(1, len(p["mean_error"]))
        if p["analyzer_error"] > tol:
            verdict = "fail"
            why.append(f"{p['value']}: the analyzer at the expected count is off by {p['analyzer_error']:.3g}")
        for name in ("rounding_z", "noise_z"):
            if math.isfinite(p[name]) and abs(p[name]) > zq:
                verdict = "fail"
                why.append(f"{p['value']}: {name.split('_')[0]} biased (z = {p[name]:.2f})")
        if abs(z[worst]) > zq:
            verdict = "fail"
            why.append(f"{p['value']}: runs biased at coordinate {worst} (z = {z[worst]:.2f})")
        if (not math.isfinite(p["rounding_z"]) or zq * p["noise_resolution"] > 1.0
                or zq * p.get("rounding_resolution", 0.0) > 1.0):
            weak.append(p["value"])
        rows.append({"point": p["value"], "analyzer_error": p["analyzer_error"], "rounding_z": p["rounding_z"],
                     "noise_z": p["noise_z"], "noise_resolves_counts": zq * p["noise_resolution"],
                     "runs_worst_z": float(z[worst]),
                     "runs_resolve_grid_steps": zq * math.sqrt(p["exact_variance"][worst] / T) / step, "trials": T})
    if verdict == "pass" and weak:
        verdict = "inconclusive"
    summary = (f"exact analyzer at the expected count; rounding-only, noise-only and runs z-tests, two-sided at level "
               f"{1 - check.confidence:g} (Bonferroni over {cells} tests, |z| <= {zq:.2f}); the noise test resolves "
               f"{min(r['noise_resolves_counts'] for r in rows):.3g} .. {max(r['noise_resolves_counts'] for r in rows):.3g}"
               f" counts (grid steps), the runs {min(r['runs_resolve_grid_steps'] for r in rows):.3g} .. "
               f"{max(r['runs_resolve_grid_steps'] for r in rows):.3g}"
               + (f"; inconclusive at {weak}: a bias of one grid step would go unseen" if verdict == "inconclusive" else "")
               + ("; FAILS: " + "; ".join(why) if why else ""))
    zs = [abs(r[k]) for r in rows for k in ("rounding_z", "noise_z", "runs_worst_z") if math.isfinite(r[k])]
    return _result(check, protocol, verdict, summary, measured=max(zs, default=0.0), bound=zq, rows=rows,
                   confidence=check.confidence)


def protocol_mse(check: Any, protocol: str, points: list[dict]) -> CheckResult:
    """The runs' mean squared error ||estimate - sum||^2 against the explicit bound of Lemma A.2's proof,
    d (Delta/g)^2 (n/4 + b n p) (Delta = 2 Delta_2 for P_VEC): one-sided CLT limits at the check's level
    (Bonferroni over points). The exact MSE (from the protocol's definition) is shown next to the runs'."""
    conf = 1 - (1 - check.confidence) / len(points)
    zq, z2 = stats.z_quantile(conf), stats.z_quantile(1 - (1 - conf) / 2)
    rows, verdict = [], "pass"
    for p in points:
        x = np.array(p["sq_error_moments"])               # (mean, mean of squares) of the per-run squared error
        T = p["trials"]
        mean, sd = float(x[0]), math.sqrt(max(float(x[1]) - float(x[0]) ** 2, 0.0))
        se = sd / math.sqrt(T)
        bound = p["mse_bound"]
        exact = float(np.sum(p["exact_variance"]))
        z = (mean - exact) / se if se > 0 else math.inf    # identical runs: no noise at all, though exact > 0
        if mean - zq * se > bound or abs(z) > z2:         # above the bound, or not the noise the parameters declare
            verdict = "fail"
        elif mean + zq * se > bound and verdict == "pass":
            verdict = "inconclusive"
        rows.append({"point": p["value"], "mse_runs": mean, "ucl": mean + zq * se, "mse_exact": exact,
                     "z_runs_vs_exact": z, "bound": bound, "exact_over_bound": exact / bound, "trials": T})
    worst = max(rows, key=lambda r: r["ucl"] / r["bound"])
    summary = (f"mean squared error of the sum over the runs: one-sided {conf:.4f} upper limit vs the explicit bound "
               f"d (Delta/g)^2 (n/4 + b n p) (Lemma A.2, L412), worst UCL/bound = {worst['ucl'] / worst['bound']:.3g}; "
               f"and equal to the exact MSE of the declared parameters (two-sided z-test, |z| <= {z2:.2f}: the noise "
               f"released is the noise declared), largest |z| = {max(abs(r['z_runs_vs_exact']) for r in rows):.2f}")
    return _result(check, protocol, verdict, summary, measured=worst["ucl"], bound=worst["bound"], rows=rows,
                   confidence=check.confidence)


ProtocolCheckFn = Callable[[Any, str, list[dict]], CheckResult]
PROTOCOL_CHECKS: Registry[ProtocolCheckFn] = Registry("protocol check kind")
PROTOCOL_CHECKS.add("protocol_privacy", protocol_privacy)
PROTOCOL_CHECKS.add("protocol_unbiased", protocol_unbiased)
PROTOCOL_CHECKS.add("protocol_mse", protocol_mse)


def _privacy_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = max(r["rows"], key=lambda x: x["epsilon_computed"] / x["epsilon_claimed"])
    over = any(x["epsilon_computed"] > x["epsilon_claimed"] * (1 + REL_SLACK) for x in r["rows"])
    return Rule("fail iff the epsilon computed from the parameters as run (exact for P_1D's worst pair, the PLD of "
                "the canaries for P_VEC) exceeds the lemma's claim at some point, or the parameters break Lemma 3.1's "
                "conditions; pass otherwise (exact)",
                f"computed epsilon {compare(w['epsilon_computed'], w['epsilon_claimed'])[0]} (claimed){at(w['point'])}",
                "fail" if over else "pass")


def _unbiased_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    zq = float(r["bound"])
    weak = [x["point"] for x in r["rows"] if not math.isfinite(float(x["rounding_z"])) or x["noise_resolves_counts"] > 1]
    side = "fail" if float(r["measured"]) > zq else "undecided" if weak else "pass"
    return Rule(f"two-sided z-tests (|z| <= {zq:.2f}, Bonferroni) of the rounding alone, the noise alone and the runs, "
                f"and the analyzer exact at the expected count: fail iff one is off; pass iff none is and the tests "
                f"resolve a bias of one grid step per count; else inconclusive",
                f"largest |z| {float(r['measured']):.2f} against {zq:.2f}; the noise test resolves "
                f"{max(x['noise_resolves_counts'] for x in r['rows']):.3g} counts", side)


def _mse_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    rows = r["rows"]
    conf = 1 - (1 - r["confidence"]) / len(rows)
    z2 = stats.z_quantile(1 - (1 - conf) / 2)
    w = max(rows, key=lambda x: x["ucl"] / x["bound"])
    lower = [2 * x["mse_runs"] - x["ucl"] for x in rows]
    side = ("fail" if any(lo > x["bound"] or abs(float(x["z_runs_vs_exact"])) > z2 for lo, x in zip(lower, rows))
            else "undecided" if any(x["ucl"] > x["bound"] for x in rows) else "pass")
    return Rule(f"pass iff the runs' mean squared error has its one-sided {conf:.4g} upper limit at or below Lemma A.2's "
                f"explicit bound at every point and equals the exact MSE of the declared noise (|z| <= {z2:.2f}); fail "
                f"iff a lower limit is above the bound or the z-test rejects", f"worst upper limit "
                f"{compare(w['ucl'], w['bound'])[0]} (the bound){at(w['point'])}", side)


# the decision rules in words, for the report's first table (verifiers/checks/base.py Rule)
PROTOCOL_RULES = {"protocol_privacy": _privacy_rule, "protocol_unbiased": _unbiased_rule, "protocol_mse": _mse_rule}
