"""Seed 003, App. B.4 "Comparison Using Different Prior Distributions" (Fig. B.7, L3557-3604; Jiang's thesis; Lnnn =
line of ../shared/seeds/003_56e8b1c3300cdeae.txt) as a mechanism (``kind: mechanism``, ``darrm_priors``): K = 11,
eps = 0.1, delta = Delta = 0, m in {3, 5} (L3574). gamma_opt-U is the LP's gamma under T_U (its objective integrated
over [0.5, 1]^K, B.61), gamma_opt-P under T_P = U([0, 0.3] u [0.7, 1]) (integrated over [0.7, 1]^K, B.62); beside
them gamma_Sub and RR (Lemma B.1.1's p_const). Each is evaluated under an actual distribution of the p_i, i.i.d.
U[lo, hi] (a point mass when lo = hi): the thesis's three are U[0, 1], p_i = 0.5 and U[0, 0.1] (L3588-3597).

The expected error E_p |B.56| is exact where B.56's sign cannot change (all p_i on one side of 1/2, or a point mass;
verifiers/accountants/darrm_priors.py), otherwise a Monte Carlo over ``trials`` draws of p (each draw's error exact;
the same draws for every gamma, so differences are paired).

The thesis's expectation (L3599), which the check ``darrm_prior_choice`` judges: T_P is closer to U[0, 0.1], so
E(opt-P) < E(opt-U) there, and E(opt-P) > E(opt-U) under U[0, 1] and p_i = 0.5; and (caption, L3604) with either
prior the optimised gamma has a lower error than the baselines (gamma_Sub and RR)."""
from __future__ import annotations

import time
from typing import Any, Mapping

import numpy as np
from pydantic import Field

from catalog import darrm_003
from catalog.base import MechanismEntry, MechanismParams, RuleError, fmt, mechanism_header
from verifiers.accountants import darrm_priors as pr
from verifiers.accountants import darrm_privacy as dp
from verifiers.checks.darrm_priors import DARRM_PRIOR_CHECKS, DARRM_PRIOR_RULES

PRIOR_U = (0.5, 1.0)         # B.61 (L3406): T_U's objective integrates p_i over [0.5, 1]
PRIOR_P = (0.7, 1.0)         # B.62 (L3572): T_P's objective integrates p_i over [0.7, 1]
# L3599: the thesis expects gamma_opt-P's error below gamma_opt-U's under U[0, 0.1], above it under U[0, 1], p = 0.5
THESIS_EXPECTS = {(0.0, 0.1): "lower", (0.0, 1.0): "higher", (0.5, 0.5): "higher"}
GAMMAS = ("opt_U", "opt_P", "sub", "const")


class PriorParams(MechanismParams):
    K: int = Field(11, ge=3, le=41, description="mechanisms (odd)")
    m: int = Field(3, ge=1, le=41, description="privacy allowance (m eps)-DP, pure")
    eps: float = Field(0.1, gt=0, le=2, description="each mechanism's epsilon (pure DP: Delta = delta = 0)")
    lo: float = Field(ge=0, le=1, description="the actual p_i: i.i.d. U[lo, hi] (lo = hi: every p_i = lo)")
    hi: float = Field(ge=0, le=1, description="the actual p_i: i.i.d. U[lo, hi]")


def rules(p: Mapping[str, Any]) -> None:
    if p["K"] % 2 == 0:
        raise RuleError(f"K = {p['K']} mechanisms: DaRRM needs an odd K (Problem 3.1.1, L728)", field="K")
    if p["m"] > p["K"]:
        raise RuleError(f"m = {p['m']} > K = {p['K']}: the privacy allowance is at most K", field="m")
    if p["lo"] > p["hi"]:
        raise RuleError(f"lo = {p['lo']:g} > hi = {p['hi']:g}: U[lo, hi] needs lo <= hi", field="lo")


def gammas(p: Mapping[str, Any]) -> tuple[dict[str, np.ndarray], dp.CornerLaws]:
    K, m, eps = p["K"], p["m"], p["eps"]
    laws = dp.corner_laws(K, eps, 0.0)
    base = darrm_003.gammas({"K": K, "m": m, "eps": eps, "Delta": 0.0})
    out = {name: pr.optimal_gamma_under(laws, K, m, eps, 0.0, dp.prior_weights(K, sum(prior) / 2)).gamma
           for name, prior in (("opt_U", PRIOR_U), ("opt_P", PRIOR_P))}
    return out | {"sub": base["sub"]["gamma"], "const": base["const"]["gamma"]}, laws


def run_point(p: dict, trials: int, seq: Any) -> dict:
    t0 = time.perf_counter()
    K, lo, hi = p["K"], p["lo"], p["hi"]
    named, laws = gammas(p)
    exact = pr.one_signed(lo, hi)
    out: dict[str, Any] = {name: {"gamma": g.tolist(), "exact_epsilon": dp.exact_epsilon(laws, g, 0.0).epsilon}
                           for name, g in named.items()}
    if exact:
        for name, g in named.items():
            out[name] |= {"error": pr.exact_error(K, lo, hi, g), "se": 0.0}
        diffs: dict[str, dict[str, float]] = {}
    else:
        e = pr.mc_errors(K, lo, hi, [named[n] for n in GAMMAS], trials, np.random.default_rng(seq))
        for name, row in zip(GAMMAS, e):
            out[name] |= {"error": float(row.mean()), "se": float(row.std(ddof=1) / np.sqrt(trials))}
        idx = {n: i for i, n in enumerate(GAMMAS)}
        diffs = {}
        for a, b in (("opt_P", "opt_U"), ("opt_U", "sub"), ("opt_U", "const"), ("opt_P", "sub"), ("opt_P", "const")):
            d = e[idx[a]] - e[idx[b]]
            diffs[f"{a}-{b}"] = {"mean": float(d.mean()), "se": float(d.std(ddof=1) / np.sqrt(trials))}
    return {"params": p, "actual": f"p_i = {lo:g}" if lo == hi else f"U[{lo:g}, {hi:g}]", "exact": exact,
            "draws": 0 if exact else trials, "thesis_expects": THESIS_EXPECTS.get((lo, hi)), "gammas": out,
            "paired": diffs, "seconds": time.perf_counter() - t0}


def report(r: dict) -> tuple[list[str], list[str]]:
    field = r["sweep"]["field"] if r["sweep"] else None
    pts = r["points"]
    p0 = pts[0]
    how = ("exact (B.56's sign is fixed on the support: the expectation goes inside)" if p0["exact"] else
           f"Monte Carlo over {p0['draws']} draws of p, each draw's error exact; the same draws for every gamma")
    bullets = [*mechanism_header(r),
               f"- Actual distribution of the p_i: {p0['actual']}; expected error E_p |B.56|: {how}",
               f"- gamma_opt-U: the LP under T_U (objective over [{PRIOR_U[0]:g}, {PRIOR_U[1]:g}]^K, B.61); gamma_opt-P: "
               f"under T_P (objective over [{PRIOR_P[0]:g}, {PRIOR_P[1]:g}]^K, B.62); both solved by HiGHS over "
               "Lemma 3.6.1's corner rows at delta = 0",
               f"- The thesis expects (L3599) gamma_opt-P's error {p0['thesis_expects'] or '(no statement)'} than "
               "gamma_opt-U's here, and either optimised gamma below gamma_Sub and RR (L3604)"]
    body = [f"| {field or 'point'} | gamma | exact epsilon | expected error | standard error | gamma(0..K) |",
            "|---|---|---|---|---|---|"]
    for pt in pts:
        for name, g in pt["gammas"].items():
            body.append(f"| {fmt(pt['value'])} | {name} | {fmt(g['exact_epsilon'])} | {g['error']:.6g} | "
                        f"{fmt(g['se'])} | {', '.join(f'{x:.3f}' for x in g['gamma'])} |")
    return bullets, body + [""]


MECHANISM_ENTRIES: tuple[MechanismEntry, ...] = (
    MechanismEntry(
        name="darrm_priors",
        description="seed 003's Fig. B.7: DaRRM's gamma optimised under the priors T_U and T_P, errors under an actual "
                    "distribution of the p_i",
        citation="seed 003, App. B.4 'Comparison Using Different Prior Distributions' (L3557-3604): B.61 (L3406), B.62 "
                 "(L3572), setting L3574, actual distributions L3588-3597, expectation L3599, Fig. B.7 (L3604)",
        params=PriorParams, sweepable=("m", "K", "eps", "lo", "hi"), whole=("m", "K"), rules=rules,
        run_point=run_point, checks=DARRM_PRIOR_CHECKS, threat_model="central", report=report, check_rules=DARRM_PRIOR_RULES),
)
