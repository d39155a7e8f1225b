"""Seed 003, chapter 3 (Jiang's thesis, DaRRM: the private majority of K (eps, Delta)-DP mechanisms' bits; Lnnn = line
of ../shared/seeds/003_56e8b1c3300cdeae.txt) as a mechanism (``kind: mechanism``): at each point the closed-form noise
functions of the chapter (gamma_Sub, Lemma 3.4.1; gamma_DSub, Thm 3.5.1; randomized response's constant, Lemma
B.1.1; and the plain majority gamma = 1), the exact epsilon of DaRRM's output over every corner multiset of Lemma
3.6.1, its cross-check at random configurations of the feasible region, the i.i.d. epsilon Theorem 3.5.1 is about,
and the exact errors. Nothing is sampled except the cross-check's configurations (``trials`` of them, from the
point's SeedSequence), at each of which the computation is exact. Numerics: algorithms/darrm.py; privacy:
verifiers/accountants/darrm_privacy.py; checks: verifiers/checks/darrm.py."""
from __future__ import annotations

import time
from typing import Any, Mapping

import numpy as np
from pydantic import Field

from algorithms import darrm
from catalog.base import MechanismEntry, MechanismParams, RuleError, fmt, mechanism_header
from verifiers.accountants import darrm_privacy as dp
from verifiers.checks.darrm import DARRM_CHECKS, DARRM_RULES

MAX_MULTISETS = 400_000       # corner multisets of one point (K = 17 with Delta > 0; ~5 s)
UTILITY_GRID = 201            # i.i.d. p in [0, 1] at which the errors are computed


class DarrmParams(MechanismParams):
    K: int = Field(ge=1, le=201, description="mechanisms (odd, Problem 3.1.1)")
    m: int = Field(ge=1, le=201, description="privacy allowance: the output is claimed (m eps, delta)-DP (1 <= m <= K)")
    eps: float = Field(gt=0, le=5, description="each mechanism's epsilon")
    Delta: float = Field(0.0, ge=0, le=0.1, description="each mechanism's delta (0: pure DP, Thm 3.5.1's setting)")
    iid_points: int = Field(4000, ge=100, le=10**6, description="i.i.d. pairs (p, p') per edge of F scanned for Thm 3.5.1")
    lp: int = Field(0, ge=0, le=1, description="1: also solve the chapter's LP (3.2)-(3.3) for gamma_opt (HiGHS)")


def rules(p: Mapping[str, Any], max_multisets: int = MAX_MULTISETS) -> None:
    """An odd K, m <= K, and at most ``max_multisets`` corner multisets (the exact privacy enumerates them)."""
    if p["K"] % 2 == 0:
        raise RuleError(f"K = {p['K']} mechanisms: DaRRM needs an odd K (Problem 3.1.1, L728)", field="K")
    if p["m"] > p["K"]:
        raise RuleError(f"m = {p['m']} > K = {p['K']}: the privacy allowance is at most K", field="m")
    n = dp.n_multisets(p["K"], p["Delta"])
    if n > max_multisets:
        raise RuleError(f"K = {p['K']} needs {n} corner multisets (allowed: <= {max_multisets}); lower K", field="K")


def claimed_delta(p: Mapping[str, Any]) -> float:
    """The delta of the claims for gamma_Sub and randomized response: 1 - (1 - Delta)^m, the m-fold general
    composition's delta the chapter uses for them (Fig. 3.2's setting, L982, L994-996)."""
    return float(-np.expm1(p["m"] * np.log1p(-p["Delta"])))


def gammas(p: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The named noise functions at this point, each with the (epsilon, delta) the chapter claims for it and where."""
    K, m, eps, Delta = p["K"], p["m"], p["eps"], p["Delta"]
    delta = claimed_delta(p)
    p_const, tau, lam = dp.rr_p_const(K, m, eps, Delta, delta)
    pure = Delta == 0
    return {
        "sub": {"gamma": darrm.gamma_sub(K, m), "delta": delta, "claim": m * eps, "scope": "every pair",
                "source": "Lemma 3.4.1 (L849-857: DaRRM_gamma_Sub is the majority of m subsampled) with m-fold "
                          "composition (L843-845; Thm 3.3.3's delta 1-(1-Delta)^m, L982)"},
        "const": {"gamma": darrm.gamma_const(K, p_const), "delta": delta, "claim": m * eps, "scope": "every pair",
                  "p_const": p_const, "tau": tau, "lambda": lam,
                  "source": "Lemma B.1.1 (L2364-2368), tau = K, lambda = K Delta (simple composition, L2370)"},
        "dsub": {"gamma": darrm.gamma_dsub(K, m), "delta": 0.0 if pure else delta,
                 "claim": m * eps if pure else None, "scope": "i.i.d. pairs",
                 "source": "Thm 3.5.1 (L909-915): i.i.d. mechanisms, delta = Delta = 0"},
        "majority": {"gamma": darrm.gamma_majority(K), "delta": 0.0 if pure else delta,
                     "claim": m * eps if pure and 2 * m >= K + 1 else None, "scope": "i.i.d. pairs",
                     "source": "Lemma B.2.5 (L2851): gamma = 1, m >= (K+1)/2, i.i.d., pure DP"},
    }


def run_point(p: dict, trials: int, seq: Any) -> dict:
    """Every named gamma: the exact epsilon over the corner multisets at its claimed delta, the largest exact loss at
    ``trials`` random configurations of F^K, the largest i.i.d. loss on the grid, and the exact errors over i.i.d. p."""
    K, eps, Delta = p["K"], p["eps"], p["Delta"]
    t0 = time.perf_counter()
    rng = np.random.default_rng(seq)
    laws = dp.corner_laws(K, eps, Delta)
    cp, cq = dp.random_configurations(K, eps, Delta, trials, rng)
    pin, qin = darrm.poisson_binomial(cp), darrm.poisson_binomial(cq)
    grid = np.linspace(0, 1, UTILITY_GRID)
    grid_laws = dp.binomial_laws(K, grid)
    named = gammas(p)
    if p["lp"]:
        opt = dp.optimal_gamma(laws, K, p["m"], eps, claimed_delta(p))
        named["opt"] = {"gamma": opt.gamma, "delta": claimed_delta(p), "claim": p["m"] * eps, "scope": "every pair",
                        "lp_status": opt.status, "lp_scaled": opt.scaled, "lp_rows": opt.rows,
                        "source": "the LP (3.2)-(3.3) (L931-939) over Lemma 3.6.1's corner rows, uniform prior on "
                                  "[0.5, 1]^K (B.61, L3404), solved by HiGHS"}
    weights = dp.prior_weights(K)
    out: dict[str, Any] = {}
    for name, g in named.items():
        gam, delta = g["gamma"], g["delta"]
        worst = dp.exact_epsilon(laws, gam, delta)
        inner = dp.losses(pin, qin, gam, delta)
        i = int(np.argmax(inner))
        iid, ip, iq = dp.iid_epsilon(K, eps, Delta, gam, delta, p["iid_points"])
        err = darrm.error(grid_laws, gam)
        out[name] = {k: v for k, v in g.items() if k != "gamma"} | {
            "gamma": gam.tolist(), "exact": worst.epsilon, "worst_counts": list(worst.counts),
            "interior_max": float(inner[i]), "interior_worst": [[float(a), float(b)] for a, b in zip(cp[i], cq[i])],
            "iid": iid, "iid_at": [ip, iq], "error_max": float(err.max()), "error_mean": float(err.mean()),
            "errors": err.tolist(), "prior_error": dp.prior_error(gam, weights)}
    return {"params": p, "corners": laws.corners.tolist(), "multisets": int(laws.counts.shape[0]),
            "interior_configurations": trials, "utility_grid": grid.tolist(), "gammas": out,
            "privacy": {"epsilon": out["sub"]["exact"], "claim": out["sub"]["claim"]},
            "seconds": time.perf_counter() - t0}


def report(r: dict) -> tuple[list[str], list[str]]:
    field = r["sweep"]["field"] if r["sweep"] else None
    pts = r["points"]
    bullets = [*mechanism_header(r),
               "- Exact: the epsilon of DaRRM's output bit at the claimed delta is the largest log((Pr[o|D] - delta) / "
               "Pr[o|D']) over both outputs, both orders and every multiset of Lemma 3.6.1's corners of F (the "
               "(eps, Delta)-DP region of one mechanism's (p, p')); the slack is affine in each (p_i, p'_i), so the "
               f"corners are exact. {pts[0]['multisets']} multisets at the first point. Cross-check: the same loss, "
               f"exact, at {pts[0]['interior_configurations']} random configurations of F^K (the spec's trials)",
               "- gamma_Sub and RR: claimed (m eps, 1-(1-Delta)^m)-DP for every pair; gamma_DSub and gamma = 1: "
               "claimed m eps-DP for i.i.d. mechanisms when Delta = 0 (Thm 3.5.1; Lemma B.2.5), judged on a grid of "
               "i.i.d. pairs; their exact epsilon over every (non-i.i.d.) pair is shown, and is no claim of the thesis",
               f"- Seconds per point: {min(p['seconds'] for p in pts):.2f} .. {max(p['seconds'] for p in pts):.2f}"]
    body = [f"| {field or 'point'} | gamma | delta | claimed eps | exact eps (every pair) | interior max | i.i.d. max | "
            "max error (i.i.d. p) | mean error | prior error |", "|---|---|---|---|---|---|---|---|---|---|"]
    for p in pts:
        for name, g in p["gammas"].items():
            body.append(f"| {fmt(p['value'])} | {name} | {fmt(g['delta'])} | {fmt(g['claim'])} | {fmt(g['exact'])} | "
                        f"{fmt(g['interior_max'])} | {fmt(g['iid'])} | {fmt(g['error_max'])} | {fmt(g['error_mean'])} | "
                        f"{fmt(g['prior_error'])} |")
    body += ["", "const: randomized response with Lemma B.1.1's p_const; opt: the LP's gamma (when the spec asks for it); "
             f"errors over i.i.d. p on a grid of {UTILITY_GRID} points in [0, 1] (Def 3.3.4); prior error: the expected "
             "error under the uniform prior on [0.5, 1]^K that the LP minimises (B.58, exact: Bin(K, 0.75)).", ""]
    return bullets, body


MECHANISM_ENTRIES: tuple[MechanismEntry, ...] = (
    MechanismEntry(
        name="darrm",
        description="seed 003's DaRRM (private majority of K (eps, Delta)-DP bits): exact epsilon of the named gammas",
        citation="seed 003, chapter 3: Problem 3.1.1 (L728-735), Algorithm 1 (DaRRM, L865-880), Lemma 3.4.1 (L849-857), "
                 "Lemma 3.4.4 (L897-903), Thm 3.5.1 (L909-915), Lemma 3.6.1 (L961-967), Lemma B.1.1 (L2364-2368), "
                 "Lemma B.2.11 (L3305, L3341), the LP (3.2)-(3.3) (L931-939)",
        params=DarrmParams, sweepable=("K", "m", "eps", "Delta"), whole=("K", "m"), rules=rules, run_point=run_point,
        checks=DARRM_CHECKS, threat_model="central", report=report, check_rules=DARRM_RULES),
)
