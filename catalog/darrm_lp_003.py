"""Seed 003, chapter 3 and appendix B (Jiang's thesis; Lnnn = line of ../shared/seeds/003_56e8b1c3300cdeae.txt): DaRRM's
LP (3.2)-(3.3) for gamma_opt at large K (``kind: mechanism``, ``mechanism: darrm_lp``), solved by constraint generation
over every multiset of Lemma 3.6.1's corners (verifiers/accountants/darrm_lp.py): C(K+3, 3) multisets under pure DP
(182,104 at K = 101, Fig. B.6's second setting, L3560-3586), C(K+7, 7) with Delta > 0 (1,184,040 at K = 21; 26,978,328
at K = 35, Table B.1's setting).

At each point: gamma_opt with its solve time, rounds and working rows; its largest row over every multiset (the
scan); two judges that do not use the scan's code: the largest exact loss on a dense grid of i.i.d. pairs and at
``trials`` random configurations of F^K (darrm_privacy's binomial and Poisson-binomial laws), both lower bounds of the
exact epsilon that must stay at most m eps; the private baselines' prior errors (gamma_Sub, randomized response at
Lemma B.1.1's p_const, and gamma_DSub where the scan finds it private for every pair); and, where the multisets are
few enough (``full_lp_cap``), the full LP (darrm_privacy.optimal_gamma) for comparison.
"""
from __future__ import annotations

import math
import time
from typing import Any, Mapping

import numpy as np
from pydantic import Field

from algorithms import darrm
from catalog.base import MechanismEntry, MechanismParams, RuleError, fmt, mechanism_header
from verifiers.accountants import darrm_lp
from verifiers.accountants import darrm_privacy as dp
from verifiers.checks.darrm_lp import LP_CHECKS, LP_RULES


class LpParams(MechanismParams):
    K: int = Field(101, ge=1, le=201, description="mechanisms (odd)")
    m: int = Field(10, ge=1, le=201, description="privacy allowance: gamma_opt is (m eps, delta)-DP")
    eps: float = Field(0.1, gt=0, le=5, description="each mechanism's epsilon")
    Delta: float = Field(0.0, ge=0, le=0.1, description="each mechanism's delta")
    iid_points: int = Field(4000, ge=100, le=10**6, description="i.i.d. pairs per edge of F for the i.i.d. judge")
    full_lp_cap: int = Field(40_000, ge=0, le=400_000, description="solve the full LP too when the multisets are at "
                                                                   "most this many (K = 11 with Delta > 0: 31,824)")


def rules(p: Mapping[str, Any]) -> None:
    if p["K"] % 2 == 0:
        raise RuleError(f"K = {p['K']}: DaRRM needs an odd K (Problem 3.1.1, L728)", field="K")
    if p["m"] > p["K"]:
        raise RuleError(f"m = {p['m']} > K = {p['K']}", field="m")
    C = 8 if p["Delta"] > 0 else 4
    need = darrm_lp.cache_entries(p["K"], C)
    if need > darrm_lp.MAX_CACHE:
        raise RuleError(f"K = {p['K']} needs {need} cached law entries (allowed: {darrm_lp.MAX_CACHE}); lower K",
                        field="K")


def run_point(p: dict, trials: int, seq: Any) -> dict:
    K, m, eps, Delta = p["K"], p["m"], p["eps"], p["Delta"]
    delta = float(-np.expm1(m * np.log1p(-Delta)))         # the m-fold composition's delta (Fig. 3.2's setting, L982)
    t0 = time.perf_counter()
    cs = darrm_lp.corners(eps, Delta)                         # the LP's corners (the judges below use their own)
    gr = darrm_lp.groups(cs, K)
    opt = darrm_lp.optimal_gamma_cg(K, m, eps, Delta, delta, gr=gr)
    solve_s = time.perf_counter() - t0
    em = math.exp(m * eps)
    weights = dp.prior_weights(K)
    p_const = dp.rr_p_const(K, m, eps, Delta, delta)[0]
    named = {"opt": opt.gamma, "sub": darrm.gamma_sub(K, m), "const": darrm.gamma_const(K, p_const),
             "dsub": darrm.gamma_dsub(K, m)}
    out: dict[str, Any] = {}
    for name, g in named.items():
        sc = darrm_lp.scan(gr, g, em, math.inf, 0)
        out[name] = {"gamma": g.tolist(), "max_f_over_rhs": sc.worst.value / opt.rhs, "worst_counts": list(sc.worst.counts),
                     "prior_error": dp.prior_error(g, weights)}
    rng = np.random.default_rng(seq)                        # the judges that do not use the scan's code: gamma_opt
    cp, cq = dp.random_configurations(K, eps, Delta, trials, rng)
    out["opt"] |= {"iid": dp.iid_epsilon(K, eps, Delta, opt.gamma, delta, p["iid_points"])[0],
                   "interior_max": float(dp.interior_epsilon(cp, cq, opt.gamma, delta).max())}
    full = None
    n = math.comb(K + cs.shape[0] - 1, cs.shape[0] - 1)
    if n <= p["full_lp_cap"]:
        t1 = time.perf_counter()
        laws = dp.corner_laws(K, eps, Delta)
        f = dp.optimal_gamma(laws, K, m, eps, delta)
        full = {"prior_error": dp.prior_error(f.gamma, weights), "seconds": time.perf_counter() - t1, "rows": f.rows,
                "exact_epsilon_of_cg": dp.exact_epsilon(laws, opt.gamma, delta).epsilon}
    return {"params": p, "delta": delta, "claim": m * eps, "multisets": opt.multisets, "corners": int(cs.shape[0]),
            "solve_seconds": solve_s, "scan_seconds": opt.scan_seconds, "rounds": opt.rounds,
            "working_rows": opt.working_rows, "scaled": opt.scaled, "history": opt.history, "gammas": out,
            "full_lp": full, "interior_configurations": trials, "seconds": time.perf_counter() - t0}


def report(r: dict) -> tuple[list[str], list[str]]:
    pts = r["points"]
    bullets = [*mechanism_header(r),
               "- gamma_opt: the LP (3.2)-(3.3) (L931-939) over every corner multiset of Lemma 3.6.1, uniform prior on "
               "[0.5, 1]^K, by constraint generation: HiGHS on a working set of rows, an exact blocked scan of every "
               "multiset for the most violated, repeated until none violates; then scaled onto every row",
               "- Judges of its privacy: the scan's largest row (max f / (e^{m eps} - 1 + 2 delta) <= 1: Lemma 3.4.4's "
               "iff), and two that do not use the scan's code: the largest exact loss on a dense grid of i.i.d. pairs "
               f"and at {pts[0]['interior_configurations']} random configurations of F^K (lower bounds of the exact "
               "epsilon, at most m eps)",
               f"- Seconds per point: {min(p['seconds'] for p in pts):.1f} .. {max(p['seconds'] for p in pts):.1f}"]
    body = ["| point | multisets | solve s | rounds | rows used | max f / rhs | i.i.d. eps | interior eps | m eps | "
            "prior error opt | sub | const | dsub (private?) | full LP |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for p in pts:
        g = p["gammas"]
        ds = g["dsub"]
        full = "-" if p["full_lp"] is None else f"{p['full_lp']['prior_error']:.6g} ({p['full_lp']['seconds']:.1f} s)"
        body.append(f"| {fmt(p['value'])} | {p['multisets']} | {p['solve_seconds']:.2f} | {p['rounds']} | "
                    f"{p['working_rows']} | {g['opt']['max_f_over_rhs']:.12f} | {fmt(g['opt']['iid'])} | "
                    f"{fmt(g['opt']['interior_max'])} | {fmt(p['claim'])} | {g['opt']['prior_error']:.6g} | "
                    f"{g['sub']['prior_error']:.6g} | {g['const']['prior_error']:.6g} | {ds['prior_error']:.6g} "
                    f"({'yes' if ds['max_f_over_rhs'] <= 1 + 1e-9 else 'no'}) | {full} |")
    body.append("")
    return bullets, body


MECHANISM_ENTRIES: tuple[MechanismEntry, ...] = (
    MechanismEntry(
        name="darrm_lp",
        description="seed 003's DaRRM LP for gamma_opt at large K by constraint generation over every corner multiset",
        citation="seed 003, chapter 3: the LP (3.2)-(3.3) (L931-939), Lemma 3.4.4 (L897-903), Lemma 3.6.1 (L961-967); "
                 "Fig. B.5 / B.6 (L3542-3586)",
        params=LpParams, sweepable=("K", "m", "eps", "Delta"), whole=("K", "m"), rules=rules, run_point=run_point,
        checks=LP_CHECKS, threat_model="central", report=report, check_rules=LP_RULES),
)
