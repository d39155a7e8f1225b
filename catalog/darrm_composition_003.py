"""Seed 003, chapter 3 (Jiang's thesis; Lnnn = line of ../shared/seeds/003_56e8b1c3300cdeae.txt): the privacy
parameters the chapter sets with the general composition of Thm 3.3.3 (L817-819), as two mechanisms of the
``mechanism`` spec kind. Nothing is sampled (the spec's trials are unused): every number is a closed form, the exact
optimal composition (Kairouz, Oh & Viswanath) or dp-accounting's PLD (verifiers/accountants/darrm_composition.py).

``darrm_table_b1`` (App. B.4, "Comparison Using General Composition", L3500-3533): K = 35 mechanisms, each
(eps, Delta) = (0.1, 1e-5)-DP, delta' = 0.1; the majority of M subsampled mechanisms (M swept) is
(m eps, delta)-DP with m eps = eps'(M) and delta = 1 - (1 - Delta)^M (1 - delta'); randomized response's tau =
eps'(K)/eps and lambda = 1 - (1 - Delta)^K (1 - delta') (L3514-3520). The thesis prints delta as
1 - (1 - delta)^M (1 - delta') (L3512, L3516): delta on both sides, whose only solution in [0, 1] is delta = 1 (for
M >= 2), so we read Delta, as Thm 3.3.3 (L817) has it; the table's printed deltas agree with that reading.

``darrm_query_totals`` (§3.7.2, L1000-1042; Tables 3.2, B.3, B.5, B.7): each query answered by DaRRM with privacy
allowance m is (m eps_t, m Delta_t)-DP (eps_t, Delta_t: one teacher's, printed per data set); Q queries composed by
Thm 3.3.3 with delta' = 1e-4 give the printed totals for Q = 20, 50, 100.

At each point: our evaluation of the chapter's formulas beside the printed numbers (``darrm_printed_numbers``), and,
for every composition the point uses, Thm 3.3.3's eps' beside the exact optimum and the PLD
(``darrm_general_composition``).
"""
from __future__ import annotations

import time
from typing import Any, Mapping

from pydantic import Field

from catalog.base import MechanismEntry, MechanismParams, RuleError, fmt, mechanism_header
from verifiers.accountants import darrm_composition as dc
from verifiers.checks.darrm_composition import DARRM_COMPOSITION_CHECKS, DARRM_COMPOSITION_RULES

# Table B.1 (L3525-3533), as printed: M -> (m, m eps, delta); tau and lambda are the same in every column
TABLE_B1_SETTING = {"K": 35, "eps": 0.1, "Delta": 1e-5, "delta_prime": 0.1}       # L3533
TABLE_B1 = {10: (6.4521, 0.6452, 0.1001), 13: (7.5742, 0.7574, 0.1001), 15: (8.2708, 0.8271, 0.1001),
            20: (9.8823, 0.9882, 0.1002)}
TABLE_B1_TAU, TABLE_B1_LAMBDA = 14.0328, 0.1003
UNIT_B1 = 1e-4              # one unit in the last printed digit (every entry has 4 decimals), fixed before the run

# §3.7.2 (L1026) and Tables 3.2 / B.3 / B.5 / B.7: one teacher's (eps, Delta) per data set; per query
# (m eps_t, m Delta_t); totals over Q queries (eps_total, delta_total), 3 decimals
TEACHERS = {"MNIST": 0.0892, "Fashion-MNIST": 0.0852}
TEACHER_DELTA, QUERY_DELTA_PRIME = 1e-4, 1e-4
QUERIES = (20, 50, 100)
TOTALS = {   # m -> (table, {data set: per-query (eps, delta) as printed, {Q: (eps_total, delta_total)}})
    1: ("003 Table B.3", {"MNIST": ((0.0892, 0.0001), {20: (1.704, 0.002), 50: (2.837, 0.005), 100: (4.202, 0.010)}),
                          "Fashion-MNIST": ((0.0852, 0.0001), {20: (1.620, 0.002), 50: (2.695, 0.005),
                                                               100: (3.988, 0.010)})}),
    3: ("003 Table 3.2", {"MNIST": ((0.2676, 0.0003), {20: (5.352, 0.006), 50: (9.901, 0.015), 100: (15.044, 0.030)}),
                          "Fashion-MNIST": ((0.2556, 0.0003), {20: (5.112, 0.006), 50: (9.382, 0.015),
                                                               100: (14.219, 0.030)})}),
    5: ("003 Table B.5", {"MNIST": ((0.4460, 0.0005), {20: (8.920, 0.010), 50: (18.428, 0.025), 100: (28.926, 0.049)}),
                          "Fashion-MNIST": ((0.4260, 0.0005), {20: (8.520, 0.010), 50: (17.398, 0.025),
                                                               100: (27.223, 0.049)})}),
    7: ("003 Table B.7", {"MNIST": ((0.6244, 0.0007), {20: (12.488, 0.014), 50: (28.392, 0.035), 100: (45.683, 0.068)}),
                          "Fashion-MNIST": ((0.5964, 0.0007), {20: (11.928, 0.014), 50: (26.738, 0.035),
                                                               100: (42.873, 0.068)})}),
}
TOTALS_LINES = {1: "L3679-3687", 3: "L1035-1042", 5: "L3701-3709", 7: "L3721-3729"}
UNIT_TOTALS = 1e-3           # totals: 3 decimals; one unit in the last printed digit, fixed before the run
UNIT_PER_QUERY = 1e-4        # per-query (eps, delta): 4 decimals


def composition_row(what: str, eps: float, Delta: float, k: int, delta_prime: float) -> dict[str, Any]:
    """One k-fold composition of (eps, Delta)-DP: Thm 3.3.3's (eps', delta), the exact optimum and the PLD there."""
    e, term = dc.general_epsilon(eps, k, delta_prime)
    d = dc.general_delta(Delta, k, delta_prime)
    return {"composition": what, "eps": eps, "Delta": Delta, "k": k, "delta_prime": delta_prime, "theorem_eps": e,
            "theorem_term": ("k eps", "log(e + sqrt(k eps^2)/delta')", "log(1/delta')")[term], "delta": d,
            "exact_eps": dc.exact_epsilon(eps, k, delta_prime), "pld_eps": dc.pld_epsilon(eps, Delta, k, d),
            "pld_interval": dc.PLD_INTERVAL}


# ---------------------------------------------------------------------------------------------------------------------
# Table B.1


class TableB1Params(MechanismParams):
    K: int = Field(35, ge=3, le=1001, description="mechanisms (randomized response's tau, lambda: K-fold)")
    M: int = Field(10, ge=1, le=1001, description="subsampled mechanisms whose majority is composed (M-fold)")
    eps: float = Field(0.1, gt=0, le=5, description="each mechanism's epsilon")
    Delta: float = Field(1e-5, ge=0, lt=0.1, description="each mechanism's delta")
    delta_prime: float = Field(0.1, gt=0, le=1, description="Thm 3.3.3's delta'")


def b1_rules(p: Mapping[str, Any]) -> None:
    if p["M"] >= p["K"]:
        raise RuleError(f"M = {p['M']} >= K = {p['K']}: the thesis subsamples M < K mechanisms (L3510)", field="M")


def b1_point(p: dict, trials: int, seq: Any) -> dict:
    t0 = time.perf_counter()
    K, M, eps, Delta, dpr = p["K"], p["M"], p["eps"], p["Delta"], p["delta_prime"]
    m_eps, _ = dc.general_epsilon(eps, M, dpr)
    tau_eps, _ = dc.general_epsilon(eps, K, dpr)
    ours = {"m": m_eps / eps, "m eps": m_eps, "delta": dc.general_delta(Delta, M, dpr), "tau": tau_eps / eps,
            "lambda": dc.general_delta(Delta, K, dpr)}
    setting = all(p[k] == v for k, v in TABLE_B1_SETTING.items())
    printed = TABLE_B1.get(M) if setting else None
    why = ("" if printed else f"M = {M} is not a column of Table B.1" if setting else
           "the point is not Table B.1's setting (K = 35, eps = 0.1, Delta = 1e-5, delta' = 0.1)")
    rows = []
    for q, v in ours.items():
        pv = (None if printed is None else {"m": printed[0], "m eps": printed[1], "delta": printed[2],
                                             "tau": TABLE_B1_TAU, "lambda": TABLE_B1_LAMBDA}[q])
        rows.append({"quantity": q, "ours": v, "printed": pv, "unit": UNIT_B1, "claim": "003 Table B.1 / Fig. B.4",
                     "source": "Table B.1 (L3525-3533)", "unprinted": why})
    comps = [composition_row(f"M = {M} subsampled (m eps, delta)", eps, Delta, M, dpr),
             composition_row(f"K = {K} (RR's tau eps, lambda)", eps, Delta, K, dpr)]
    return {"params": p, "printed_rows": rows, "compositions": comps, "seconds": time.perf_counter() - t0}


def _comp_table(pts: list[dict], field: str | None) -> list[str]:
    body = [f"| {field or 'point'} | composition | eps' (Thm 3.3.3) | its term | delta | exact optimum | PLD | "
            "exact / eps' |", "|---|---|---|---|---|---|---|---|"]
    for pt in pts:
        for c in pt["compositions"]:
            body.append(f"| {fmt(pt['value'])} | {c['composition']} | {fmt(c['theorem_eps'])} | {c['theorem_term']} | "
                        f"{fmt(c['delta'])} | {fmt(c['exact_eps'])} | {fmt(c['pld_eps'])} | "
                        f"{fmt(c['exact_eps'] / c['theorem_eps'])} |")
    return body


def _printed_table(pts: list[dict], field: str | None) -> list[str]:
    body = [f"| {field or 'point'} | quantity | ours | printed | ours - printed | tolerance |", "|---|---|---|---|---|---|"]
    for pt in pts:
        for r in pt["printed_rows"]:
            diff = None if r["printed"] is None else r["ours"] - r["printed"]
            printed = "-" if r["printed"] is None else f"{r['printed']:g}"
            body.append(f"| {fmt(pt['value'])} | {r['quantity']} | {r['ours']:.7g} | {printed} | "
                        f"{'-' if diff is None else f'{diff:+.2e}'} | {fmt(r['unit'])} |")
    return body


def b1_report(r: dict) -> tuple[list[str], list[str]]:
    field = r["sweep"]["field"] if r["sweep"] else None
    bullets = [*mechanism_header(r),
               "- Nothing is sampled. Ours: Thm 3.3.3's formulas at the point (m = eps'(M)/eps, delta = "
               "1-(1-Delta)^M(1-delta'), tau = eps'(K)/eps, lambda = 1-(1-Delta)^K(1-delta'); the printed delta formula "
               "has delta for Delta, read as Delta); printed: Table B.1 (L3525-3533); tolerance one unit in the last "
               "printed digit, fixed before the run",
               "- Independent view of Thm 3.3.3: the exact optimal composition (Kairouz, Oh & Viswanath; binomial sum "
               "in log space) and dp-accounting's PLD of the (eps, Delta)-DP worst case, at the theorem's total delta"]
    return bullets, [*_printed_table(r["points"], field), "", *_comp_table(r["points"], field), ""]


# ---------------------------------------------------------------------------------------------------------------------
# Tables 3.2 / B.3 / B.5 / B.7


class TotalsParams(MechanismParams):
    m: int = Field(3, ge=1, le=11, description="privacy allowance per query (m-fold simple composition of a teacher)")
    eps_mnist: float = Field(TEACHERS["MNIST"], gt=0, le=5, description="one teacher's epsilon, MNIST (L1026)")
    eps_fmnist: float = Field(TEACHERS["Fashion-MNIST"], gt=0, le=5,
                              description="one teacher's epsilon, Fashion-MNIST (L1026)")
    Delta: float = Field(TEACHER_DELTA, ge=0, lt=0.01, description="one teacher's delta (L1026)")
    delta_prime: float = Field(QUERY_DELTA_PRIME, gt=0, le=1, description="Thm 3.3.3's delta' over the queries")


def totals_point(p: dict, trials: int, seq: Any) -> dict:
    t0 = time.perf_counter()
    m, dpr = p["m"], p["delta_prime"]
    setting = (p["eps_mnist"], p["eps_fmnist"], p["Delta"], dpr) == (TEACHERS["MNIST"], TEACHERS["Fashion-MNIST"],
                                                                     TEACHER_DELTA, QUERY_DELTA_PRIME)
    table = TOTALS.get(m) if setting else None
    why = ("" if table else f"m = {m} has no table" if setting else "the point is not §3.7.2's setting")
    rows, comps = [], []
    for data, e_t in (("MNIST", p["eps_mnist"]), ("Fashion-MNIST", p["eps_fmnist"])):
        # per query, m-fold: m eps_t (Thm 3.3.3's first term, "the same privacy loss in the high privacy regime",
        # L1026) and m Delta_t, as the tables print it (simple composition, Thm 3.3.2, L815)
        eq, dq = m * e_t, m * p["Delta"]
        pq = None if table is None else table[1][data][0]
        claim = table[0] if table else ""
        src = f"{claim[4:]} ({TOTALS_LINES[m]})" if table else ""
        rows += [{"quantity": f"{data}: per-query eps", "ours": eq, "printed": None if pq is None else pq[0],
                  "unit": UNIT_PER_QUERY, "claim": claim, "source": src, "unprinted": why},
                 {"quantity": f"{data}: per-query delta", "ours": dq, "printed": None if pq is None else pq[1],
                  "unit": UNIT_PER_QUERY, "claim": claim, "source": src, "unprinted": why}]
        for Q in QUERIES:
            e, _ = dc.general_epsilon(eq, Q, dpr)
            tot = None if table is None else table[1][data][1][Q]
            rows += [{"quantity": f"{data}, Q = {Q}: eps_total", "ours": e, "printed": None if tot is None else tot[0],
                      "unit": UNIT_TOTALS, "claim": claim, "source": src, "unprinted": why},
                     {"quantity": f"{data}, Q = {Q}: delta_total", "ours": dc.general_delta(dq, Q, dpr),
                      "printed": None if tot is None else tot[1], "unit": UNIT_TOTALS, "claim": claim, "source": src,
                      "unprinted": why}]
            comps.append(composition_row(f"{data}, Q = {Q} queries", eq, dq, Q, dpr))
    return {"params": p, "printed_rows": rows, "compositions": comps, "seconds": time.perf_counter() - t0}


def totals_report(r: dict) -> tuple[list[str], list[str]]:
    field = r["sweep"]["field"] if r["sweep"] else None
    bullets = [*mechanism_header(r),
               "- Nothing is sampled. Ours: per query (m eps_t, m Delta_t) (m-fold simple composition, Thm 3.3.2); "
               "Q queries by Thm 3.3.3 with delta' = 1e-4: eps' and 1-(1-m Delta_t)^Q (1-delta'); printed: Tables 3.2 "
               "(m = 3), B.3 (m = 1), B.5 (m = 5), B.7 (m = 7); tolerance one unit in the last printed digit (1e-3 for "
               "totals, 1e-4 per query), fixed before the run",
               "- Independent view of Thm 3.3.3: the exact optimal composition (Kairouz, Oh & Viswanath) and "
               "dp-accounting's PLD, at the theorem's total delta"]
    return bullets, [*_printed_table(r["points"], field), "", *_comp_table(r["points"], field), ""]


MECHANISM_ENTRIES: tuple[MechanismEntry, ...] = (
    MechanismEntry(
        name="darrm_table_b1",
        description="seed 003's Table B.1: DaRRM's privacy parameters by Thm 3.3.3 (K = 35, delta' = 0.1), against "
                    "the printed numbers and the exact optimal composition",
        citation="seed 003, App. B.4 'Comparison Using General Composition' (L3500-3533): Table B.1 with Thm 3.3.3 "
                 "(L817-819)",
        params=TableB1Params, sweepable=("M", "K", "eps", "Delta", "delta_prime"), whole=("M", "K"), rules=b1_rules,
        run_point=b1_point, checks=DARRM_COMPOSITION_CHECKS, threat_model="central", report=b1_report,
        check_rules=DARRM_COMPOSITION_RULES),
    MechanismEntry(
        name="darrm_query_totals",
        description="seed 003's total privacy over Q teacher queries (Tables 3.2 / B.3 / B.5 / B.7) by Thm 3.3.3, "
                    "against the printed numbers and the exact optimal composition",
        citation="seed 003, §3.7.2 (L1000-1042) and App. B.4.1 (L3606-3729): per-query (m eps_t, m Delta_t), Q queries by Thm "
                 "3.3.3 (L817-819) with delta' = 1e-4; Tables 3.2, B.3, B.5, B.7",
        params=TotalsParams, sweepable=("m", "delta_prime"), whole=("m",), rules=lambda p: None,
        run_point=totals_point, checks=DARRM_COMPOSITION_CHECKS, threat_model="central", report=totals_report,
        check_rules=DARRM_COMPOSITION_RULES),
)
