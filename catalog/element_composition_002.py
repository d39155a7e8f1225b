"""Seed 002's group privacy, composition and O()-level privacy claims (Asi, Duchi, Javidi; Lnnn = line of
../shared/seeds/002_d3919fba655c6f58.txt) as three mechanisms of the ``mechanism`` spec kind. Nothing is sampled:
every number is exact (closed forms, finite sums) or a rigorous bracket; the spec's trials are unused.

``element_group_privacy`` (Cor 2.2, L109-111): two base mechanisms at element distance k: the Gaussian mechanism of
element sensitivity 1 with noise std sigma (k changes move the mean by at most k: the exact delta at k eps is Balle &
Wang's at mu = k/sigma), and eps0-randomized response on each element bit (k bits changed: the exact delta at k eps
is the k-fold RR sum). At each base eps of a grid, the base mechanism's exact delta(eps) enters the claim
k e^((k-1) eps) delta(eps).

``element_composition`` (Cor 2.3, L113-123): k mechanisms composed. Basic and advanced clauses against the optimal
composition (Kairouz, Oh & Viswanath 2015): k eps0-randomized responses (pure, delta_i = 0) and k copies of the worst
(eps0, delta_i) mechanism, eps0 on a grid; the Renyi clause against an adaptive Gaussian composition (noise s_lo or
s_hi chosen by the sign of the previous output), exact.

``element_prop3_privacy`` (Eq. (16), L333-335; Prop 3 (i)-(ii), L351-354): T = gamma n rounds of mechanism (4) / the
update (15) at q = m/n, m fixed. The true epsilon is bracketed for:
- the element level, users holding at most K element vectors (K = 1: the pair N(+-1); K >= 2: N(K) vs N(K-2), the
  worst collinear element pair, README finding on Cor 2.5; K = 0: no bound on K, the supremum over K, which is the
  labelled limit, B_u revealed): upper = the smaller of Mironov's conversion of the pair's exact eps_alpha and our
  pessimistic PLD (verifiers/accountants/element_rdp.py; for K = 0 the labelled pair's), lower = the larger of our
  optimistic PLD (K >= 1) and an exact post-processing bound (counts of releases above a threshold, binomial; for
  K = 0 at a finite witness K_w large enough that the unsampled rounds almost never cross it);
- the user level (Prop 3 (ii)): a user's whole sum of K ^ M vectors replaced, the pair (K^M, -(K^M)) at sigma, i.e.
  N(+-1) at tau = sigma / (K ^ M).
Each is divided by the stated expression (Eq. (16)'s inf at T; Prop 3's eps(sigma) or eps(tau) with gamma).
The sampling rate the mechanism runs with comes from ``sampling_rate`` (the planted-fault tests replace it).
"""
from __future__ import annotations

import functools
import math
import time
from typing import Any, Mapping

import numpy as np
from pydantic import Field

from catalog.base import MechanismEntry, MechanismParams, RuleError, fmt, mechanism_header
from verifiers.accountants import element_rdp as er
from verifiers.accountants.shuffled_gaussian import gaussian_delta
from verifiers.checks import element_composition as ec
from verifiers.checks.element_composition import COMPOSITION_CHECKS, COMPOSITION_RULES, GROUP_CHECKS, ORDER_CHECKS
from verifiers.threat_models import Neighbouring

ELEMENT = Neighbouring("element", "replace_one")
USER = Neighbouring("user", "replace_one")
MIN_BASE_DELTA = 1e-12      # group privacy: rows whose base delta is below this are not judged (float cancellation)
MAX_ROUNDS = 200_000        # element_prop3_privacy: T = gamma n at most this (run time)


def _grid(p: Mapping[str, Any]) -> np.ndarray:
    return np.geomspace(p["eps_min"], p["eps_max"], p["n_eps"])


def _grid_rules(p: Mapping[str, Any]) -> None:
    if not p["eps_min"] < p["eps_max"]:
        raise RuleError(f"eps_min = {p['eps_min']:g} must be below eps_max = {p['eps_max']:g}", field="eps_min")


# ---------------------------------------------------------------------------------------------------------------------
# Cor 2.2


class GroupParams(MechanismParams):
    k: int = Field(ge=1, le=1000, description="element distance of the two data sets (Cor 2.2's d_element)")
    sigma: float = Field(1.0, gt=0.05, le=100, description="Gaussian base mechanism: noise std over the element "
                                                           "sensitivity")
    eps0: float = Field(1.0, gt=0, le=10, description="randomized-response base mechanism: eps0 per element bit")
    eps_min: float = Field(0.01, gt=0, le=10, description="smallest base eps of the grid")
    eps_max: float = Field(2.0, gt=0, le=20, description="largest base eps of the grid")
    n_eps: int = Field(40, ge=2, le=400, description="base eps values (geometric grid)")


def group_point(p: dict, trials: int, seq: Any, relation: Neighbouring = ELEMENT) -> dict:
    t0 = time.perf_counter()
    k, s, eps0 = p["k"], p["sigma"], p["eps0"]
    rows = []
    for eps in _grid(p):
        eps = float(eps)
        for base, d1, dk in (("gaussian", gaussian_delta(eps, 1 / s), gaussian_delta(k * eps, k / s)),
                             ("randomized response", ec.rr_bit_delta(eps0, eps), ec.rr_delta(eps0, k, k * eps))):
            if d1 >= MIN_BASE_DELTA:
                rows.append({"base": base, "k": k, "eps": eps, "base delta": d1, "exact": dk,
                             "claim": ec.group_claim(eps, d1, k)})
    return {"params": p, "relation": {"label": relation.label}, "group": {"rows": rows},
            "seconds": time.perf_counter() - t0}


def group_report(r: dict) -> tuple[list[str], list[str]]:
    field = r["sweep"]["field"] if r["sweep"] else None
    bullets = [*mechanism_header(r),
               "- Base mechanisms: the Gaussian mechanism (element sensitivity 1, noise std sigma: at element distance "
               "k the means differ by at most k, exact delta by Balle & Wang's formula) and eps0-randomized response on "
               "each element bit (k bits differ: exact delta by the binomial sum); each base mechanism is (eps, "
               "delta(eps))-DP with its exact delta(eps) at every eps of the grid (rows with delta(eps) < "
               f"{MIN_BASE_DELTA:g} not judged). Nothing is sampled"]
    body = [f"| {field or 'point'} | base | rows | worst exact / claim | at eps | median exact / claim |",
            "|---|---|---|---|---|---|"]
    for pt in r["points"]:
        for base in ("gaussian", "randomized response"):
            rows = [x for x in pt["group"]["rows"] if x["base"] == base]
            if not rows:
                continue
            ratios = [x["exact"] / x["claim"] for x in rows]
            i = int(np.argmax(ratios))
            body.append(f"| {fmt(pt['value'])} | {base} | {len(rows)} | {fmt(ratios[i])} | {fmt(rows[i]['eps'])} | "
                        f"{fmt(float(np.median(ratios)))} |")
    return bullets, body + [""]


# ---------------------------------------------------------------------------------------------------------------------
# Cor 2.3


class CompositionParams(MechanismParams):
    k: int = Field(ge=1, le=1000, description="mechanisms composed")
    delta0: float = Field(1e-5, gt=0, lt=1, description="the advanced clause's delta0")
    delta_i: float = Field(1e-6, ge=0, lt=0.01, description="each mechanism's delta (basic clause and the advanced "
                                                             "clause's delta term; 0: pure)")
    eps_min: float = Field(0.01, gt=0, le=10, description="smallest eps0 of the grid (note 5a item 4: 0.01)")
    eps_max: float = Field(2.0, gt=0, le=10, description="largest eps0 of the grid (note 5a item 4: 2)")
    n_eps: int = Field(40, ge=2, le=400, description="eps0 values (geometric grid)")
    alpha: float = Field(8.0, gt=1, le=1000, description="Renyi order of the RDP clause")
    sigma_lo: float = Field(1.0, gt=0.05, le=100, description="RDP clause: noise std after a positive output (and "
                                                              "first); the sensitivity is 1")
    sigma_hi: float = Field(3.0, gt=0.05, le=100, description="RDP clause: noise std after a non-positive output")


def composition_rules(p: Mapping[str, Any]) -> None:
    _grid_rules(p)
    if p["sigma_lo"] > p["sigma_hi"]:
        raise RuleError(f"sigma_lo = {p['sigma_lo']:g} must not exceed sigma_hi = {p['sigma_hi']:g}", field="sigma_lo")


def composition_point(p: dict, trials: int, seq: Any, relation: Neighbouring = ELEMENT) -> dict:
    t0 = time.perf_counter()
    k, d0, di, al = p["k"], p["delta0"], p["delta_i"], p["alpha"]
    basic, adv, adv_d = [], [], []
    for e in _grid(p):
        e = float(e)
        basic.append({"k": k, "eps0": e, "exact": ec.worst_delta(e, di, k, k * e),
                      "claim": ec.basic_claim_delta([di] * k)})
        E = ec.advanced_claim([e] * k, d0)
        adv.append({"k": k, "eps0": e, "claimed eps": E, "exact": ec.rr_delta(e, k, E), "claim": d0,
                    "exact eps at delta0": ec.rr_epsilon(e, k, d0), "basic eps": k * e})
        if di > 0:
            adv_d.append({"k": k, "eps0": e, "claimed eps": E, "exact": ec.worst_delta(e, di, k, E),
                          "claim": ec.advanced_claim_delta([e] * k, [di] * k, d0),
                          "delta0 + k delta_i": d0 + k * di})
    lo, hi = p["sigma_lo"], p["sigma_hi"]
    rdp = [{"k": k, "case": "adaptive (s_lo after a positive output, else s_hi)",
            "exact": ec.adaptive_rdp(k, al, 1.0, lo, hi), "claim": ec.rdp_claim(k, al, 1.0, lo, hi)},
           {"k": k, "case": "non-adaptive (s_lo every round)",
            "exact": ec.adaptive_rdp(k, al, 1.0, lo, lo), "claim": ec.rdp_claim(k, al, 1.0, lo, lo)}]
    return {"params": p, "relation": {"label": relation.label}, "basic": {"rows": basic}, "advanced": {"rows": adv},
            "advanced_delta": {"rows": adv_d}, "rdp": {"rows": rdp}, "seconds": time.perf_counter() - t0}


def composition_report(r: dict) -> tuple[list[str], list[str]]:
    field = r["sweep"]["field"] if r["sweep"] else None
    bullets = [*mechanism_header(r),
               "- Exact: k-fold eps0-randomized response is the optimal composition of k eps0-DP mechanisms (Kairouz, Oh "
               "& Viswanath 2015); k copies of their worst (eps0, delta_i) mechanism give 1 - (1-delta_i)^k (1 - "
               "delta_RR); the Renyi clause on Gaussian mechanisms (sensitivity 1) whose noise std depends on the sign "
               "of the previous output (2-state transfer matrix, exact). Nothing is sampled"]
    body = [f"| {field or 'point'} | advanced: worst exact delta / delta0 | exact eps at delta0 / claimed eps (max) | "
            f"delta term: worst exact / claim | basic: worst exact / claim | RDP adaptive exact / claim |",
            "|---|---|---|---|---|---|"]
    for pt in r["points"]:
        adv = pt["advanced"]["rows"]
        ad = pt["advanced_delta"]["rows"]
        bas = [x["exact"] / x["claim"] for x in pt["basic"]["rows"] if x["claim"] > 0]
        rd = pt["rdp"]["rows"][0]
        body.append(f"| {fmt(pt['value'])} | {fmt(max(x['exact'] / x['claim'] for x in adv))} | "
                    f"{fmt(max(x['exact eps at delta0'] / x['claimed eps'] for x in adv))} | "
                    f"{fmt(max((x['exact'] / x['claim'] for x in ad), default=None))} | "
                    f"{fmt(max(bas, default=None))} | {fmt(rd['exact'] / rd['claim'])} |")
    return bullets, body + [""]


# ---------------------------------------------------------------------------------------------------------------------
# Eq. (16) and Prop 3 (i)-(ii)


class Prop3Params(MechanismParams):
    n: int = Field(ge=10, le=10**6, description="users (q = m/n)")
    m: int = Field(10, ge=1, le=10**4, description="users sampled per round on average (fixed as n grows)")
    gamma: float = Field(1.0, gt=0, le=100, description="rounds per user: T = round(gamma n) (Prop 3's k(n)/n -> gamma)")
    sigma: float = Field(2.0, ge=0.3, le=100, description="noise multiplier of (15) (std rho sigma)")
    delta: float = Field(1e-5, gt=0, lt=0.1, description="the delta of the (eps, delta) claim")
    K: int = Field(1, ge=0, le=1000, description="element vectors per user, at most (0: no bound, the supremum over K)")
    M: int = Field(1, ge=1, le=10**6, description="Prop 3 (ii): records per user, at most (user level: K ^ M vectors)")


def prop3_rules(p: Mapping[str, Any]) -> None:
    if p["m"] >= p["n"]:
        raise RuleError(f"m = {p['m']} must be below n = {p['n']} (q = m/n < 1)", field="m")
    T = round(p["gamma"] * p["n"])
    if not 1 <= T <= MAX_ROUNDS:
        raise RuleError(f"T = gamma n = {T} rounds: must be in [1, {MAX_ROUNDS}]", field="gamma")


def sampling_rate(m: int, n: int) -> float:
    """The rate mechanism (4) samples users with: q = m/n (L333)."""
    return m / n


def witness_K(q: float, sigma: float, T: int) -> int:
    """A finite K whose element pair (K, K-2) nearly reveals the sampling: the unsampled releases N(0, sigma^2) cross
    K - 3 sigma with probability below q 1e-3 / T per round."""
    z = math.sqrt(2 * math.log(1e3 * max(T, 2) / q))
    return int(math.ceil(sigma * (z + 3))) + 2


@functools.lru_cache(maxsize=64)
def _bracket(q: float, sigma: float, T: int, delta: float, a: float, b: float) -> dict:
    upper = min(er.mironov(lambda al: er.eps_alpha(q, sigma, al, a, b), T, delta).epsilon,
                er.tight_epsilon(q, sigma, T, delta, a, b))
    count, _ = ec.count_lower_epsilon(q, sigma, T, delta, a, b)
    lower = max(er.tight_epsilon(q, sigma, T, delta, a, b, pessimistic=False), count)
    return {"upper": upper, "lower": lower, "count lower": count}


def _unrestricted(q: float, sigma: float, T: int, delta: float) -> dict:
    Kw = witness_K(q, sigma, T)
    upper = min(er.labelled_tight_epsilon(q, sigma, T, delta),
                er.mironov(lambda al: er.labelled_eps_alpha(q, sigma, al), T, delta).epsilon)
    count, _ = ec.count_lower_epsilon(q, sigma, T, delta, float(Kw), float(Kw - 2))
    return {"upper": upper, "lower": count, "count lower": count, "witness K": Kw}


def prop3_point(p: dict, trials: int, seq: Any, relation: Neighbouring = ELEMENT) -> dict:
    t0 = time.perf_counter()
    n, m, g, s, delta, K, M = p["n"], p["m"], p["gamma"], p["sigma"], p["delta"], p["K"], p["M"]
    q, T = m / n, round(g * n)
    q_run = sampling_rate(m, n)
    if K == 0:
        el = _unrestricted(q_run, s, T, delta) | {"pair": "sup over K (labelled limit)"}
    else:
        a, b = (1.0, -1.0) if K == 1 else (float(K), float(K - 2))
        el = dict(_bracket(q_run, s, T, delta, a, b)) | {"pair": f"({a:g}, {b:g})"}
    c = min(K, M) if K else M
    tau = s / c
    us = dict(_bracket(q_run, tau, T, delta, 1.0, -1.0)) | {"pair": f"({c}, {-c}) at sigma"}
    e16 = ec.eq16_expression(T, q, s, delta)
    p3 = ec.prop3_expression(g, m, n, s, delta)
    pu = ec.prop3_expression(g, m, n, tau, delta)
    what_el = (f"element level, users with {'any number of' if K == 0 else f'at most {K}'} element vector(s): "
               f"pair {el['pair']}")
    return {"params": p, "relation": {"label": relation.label}, "q": q, "T": T, "q_run": q_run,
            "eq16": {"applies": True, "condition": "none", "expression": e16, "what": what_el} | el,
            "prop3_element": {"applies": s**2 >= 2, "condition": "sigma^2 >= 2", "expression": p3,
                              "what": what_el} | el,
            "prop3_user": {"applies": tau**2 >= 2, "condition": f"tau^2 = (sigma / (K ^ M))^2 = {tau**2:.4g} >= 2",
                           "expression": pu, "tau": tau,
                           "what": f"user level (K ^ M = {c}), pair N(+-1) at tau = sigma / {c} = {tau:.4g}"} | us,
            "privacy": {"epsilon": el["upper"], "claim": e16},
            "seconds": time.perf_counter() - t0}


def prop3_report(r: dict) -> tuple[list[str], list[str]]:
    pts = sorted(r["points"], key=lambda pt: pt["params"]["n"])
    bullets = [*mechanism_header(r),
               "- Sweep of n with m fixed (q = m/n -> 0) and T = round(gamma n): the true epsilon of T rounds of "
               "mechanism (4)'s worst pair, bracketed [lower, upper] (upper: min of Mironov's conversion of the exact "
               "eps_alpha and our pessimistic PLD; lower: max of our optimistic PLD and an exact count-statistic "
               "bound; unrestricted K: the labelled limit above, a finite witness K below), divided by the stated "
               "O(1) expression (Eq. (16)'s inf at T; Prop 3's eps(sigma), eps(tau))",
               f"- Rule (stated before the run): fail if the lower ratio rises monotonically to more than "
               f"{ec.GROWTH:g}x the upper ratio at the smallest n; pass (consistent over the sweep, the strongest "
               f"verdict an O() claim can get) if the upper ratio stays within {ec.GROWTH:g}x its first value",
               f"- Seconds per point: {min(p['seconds'] for p in pts):.2f} .. {max(p['seconds'] for p in pts):.2f}"]
    body = ["| n | q | T | Eq. (16) inf | element eps [lower, upper] | ratio | Prop 3 eps(sigma) | user tau | "
            "user eps [lower, upper] | Prop 3 eps(tau) | user ratio |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for pt in pts:
        e, u = pt["eq16"], pt["prop3_user"]
        body.append(f"| {pt['params']['n']} | {fmt(pt['q'])} | {pt['T']} | {fmt(e['expression'])} | "
                    f"[{fmt(e['lower'])}, {fmt(e['upper'])}] | [{fmt(e['lower'] / e['expression'])}, "
                    f"{fmt(e['upper'] / e['expression'])}] | {fmt(pt['prop3_element']['expression'])} | "
                    f"{fmt(u['tau'])} | [{fmt(u['lower'])}, {fmt(u['upper'])}] | {fmt(u['expression'])} | "
                    f"[{fmt(u['lower'] / u['expression'])}, {fmt(u['upper'] / u['expression'])}] |")
    return bullets, body + [""]


MECHANISM_ENTRIES: tuple[MechanismEntry, ...] = (
    MechanismEntry(
        name="element_group_privacy",
        description="seed 002's Cor 2.2 (group privacy) against the exact delta at element distance k of the Gaussian "
                    "mechanism and of randomized response on element bits",
        citation="seed 002: Cor 2.2 (L109-111)",
        params=GroupParams, sweepable=("k", "sigma", "eps0"), whole=("k",), rules=_grid_rules, run_point=group_point,
        checks=GROUP_CHECKS, threat_model="central", report=group_report, relations=(ELEMENT,),
        check_rules=COMPOSITION_RULES),
    MechanismEntry(
        name="element_composition",
        description="seed 002's Cor 2.3 (basic, advanced and Renyi composition) against the exact optimal composition "
                    "(Kairouz et al.) and an exact adaptive Gaussian composition",
        citation="seed 002: Cor 2.3 (L113-123)",
        params=CompositionParams, sweepable=("k", "delta0", "delta_i", "alpha"), whole=("k",),
        rules=composition_rules, run_point=composition_point, checks=COMPOSITION_CHECKS, threat_model="central",
        check_rules=COMPOSITION_RULES,
        report=composition_report, relations=(ELEMENT,)),
    MechanismEntry(
        name="element_prop3_privacy",
        description="seed 002's O(1) privacy statements, Eq. (16) and Prop 3 (i)-(ii): the true epsilon of T = gamma n "
                    "rounds of mechanism (4) at q = m/n against the stated expression as n grows",
        citation="seed 002: mechanism (4) (L132-134), (15) (L321-325), Eq. (16) (L333-335), Prop 3 (i)-(ii) (L351-354)",
        params=Prop3Params, sweepable=("n",), whole=("n",), rules=prop3_rules, run_point=prop3_point,
        checks=ORDER_CHECKS, threat_model="central", report=prop3_report, relations=(ELEMENT, USER),
        check_rules=COMPOSITION_RULES),
)
