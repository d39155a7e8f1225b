"""Seed 003, §3.7.2 and B.4.1 (Jiang's thesis: private semi-supervised knowledge transfer; Lnnn = line of
../shared/seeds/003_56e8b1c3300cdeae.txt) as two mechanisms (``kind: mechanism``):

- ``darrm_teachers``: K DP-SGD teachers on equal disjoint shards vote on test queries; DaRRM with gamma_opt (the LP,
  uniform prior) and with gamma_Sub aggregates their votes at the per-query budget (m eps, 1-(1-Delta)^m), where
  (eps, Delta) is what a teacher's DP-SGD cost (dp-accounting, for what ran); GNMax aggregates K non-private teachers'
  votes with the noise B.4.1 calibrates to (m eps, m Delta). Label accuracy over Q in {20, 50, 100} queries (Table 3.1
  for m = 3, B.4 / B.6 / B.8 for m = 1 / 5 / 7). The totals over Q queries are the thesis's general composition of
  the per-query budget (Thm 3.3.3, delta' = 1e-4), the same for every method, as in Table 3.2.
  Data: MNIST / Fashion-MNIST classes 5 vs 8 are not available offline. ``digits58`` (scikit-learn's digits 5 and 8:
  356 images, ~23 per teacher) stands in for the images; ``mixture`` (two Gaussian classes at MNIST 5-vs-8's sizes,
  11272 train / 1866 test: ~1025 per teacher) stands in for the data size.
- ``darrm_pate_budget``: the thesis's printed budgets recomputed from its own per-query numbers: Tables 3.2, B.3,
  B.5, B.7 (general composition) and Table B.2 (GNMax's sigma_min and lambda, B.4.1's grid).

Neighbouring relation (the reading notes' [D] threat-model note): one training record added or removed. The shards are
disjoint, so the record moves one teacher. The per-query guarantees hold under it: DaRRM's gamma is calibrated over
every configuration of F^K (Problem 3.1.1: all K teachers may move), which contains the configurations where one
moves; GNMax's (lambda, lambda / sigma^2)-RDP is for one teacher's vote changing (L2 sensitivity sqrt 2). The totals
are the thesis's composition of per-query guarantees. (Under this relation DaRRM's whole transcript is a post-processing
of K models of which one depends on the record, so it is even (eps, Delta)-DP for any Q; that is not the thesis's
accounting and we do not use it.)

Numerics: algorithms/teachers.py; privacy: verifiers/accountants/darrm_teachers.py (DP-SGD, composition, GNMax) and
verifiers/accountants/darrm_lp.py (gamma_opt); checks: verifiers/checks/darrm_teachers.py.
"""
from __future__ import annotations

import math
import time
from typing import Any, Literal, Mapping

import numpy as np
from pydantic import Field

from algorithms import darrm, teachers
from catalog.base import MechanismEntry, MechanismParams, RuleError, fmt, mechanism_header
from verifiers.accountants import darrm_lp
from verifiers.accountants import darrm_teachers as acct
from verifiers.checks.darrm_teachers import BUDGET_CHECKS, TEACHER_CHECKS, TEACHER_RULES
from verifiers.threat_models import Neighbouring

QUERIES = (20, 50, 100)       # Q of Table 3.1 (L1028)
RECORD_ADD_REMOVE = Neighbouring("record", "add_remove")   # DP-SGD's relation (Poisson sampling); moves one teacher
METHODS = ("gnmax", "sub", "opt")

# The thesis's printed budgets: per-query (eps, delta) and totals over Q = 20 / 50 / 100 (general composition,
# delta' = 1e-4), per m and data set: Table B.3 (m = 1, L3680-3687), Table 3.2 (m = 3, L1034-1042), Table B.5
# (m = 5, L3700-3709), Table B.7 (m = 7, L3722-3729).
PRINTED_TOTALS: dict[int, dict[str, tuple[tuple[float, float], tuple[tuple[float, float], ...]]]] = {
    1: {"MNIST": ((0.0892, 0.0001), ((1.704, 0.002), (2.837, 0.005), (4.202, 0.010))),
        "Fashion-MNIST": ((0.0852, 0.0001), ((1.620, 0.002), (2.695, 0.005), (3.988, 0.010)))},
    3: {"MNIST": ((0.2676, 0.0003), ((5.352, 0.006), (9.901, 0.015), (15.044, 0.030))),
        "Fashion-MNIST": ((0.2556, 0.0003), ((5.112, 0.006), (9.382, 0.015), (14.219, 0.030)))},
    5: {"MNIST": ((0.4460, 0.0005), ((8.920, 0.010), (18.428, 0.025), (28.926, 0.049))),
        "Fashion-MNIST": ((0.4260, 0.0005), ((8.520, 0.010), (17.398, 0.025), (27.223, 0.049)))},
    7: {"MNIST": ((0.6244, 0.0007), ((12.488, 0.014), (28.392, 0.035), (45.683, 0.068))),
        "Fashion-MNIST": ((0.5964, 0.0007), ((11.928, 0.014), (26.738, 0.035), (42.873, 0.068)))},
}
TABLE_OF_M = {1: "Table B.3", 3: "Table 3.2", 5: "Table B.5", 7: "Table B.7"}
# Table B.2 (L3630-3635): GNMax at the per-query budget (m eps, m Delta) of m = 3: (lambda, sigma_min)
PRINTED_GNMAX = {"MNIST": ((0.2676, 0.0003), (34.31, 21.46)), "Fashion-MNIST": ((0.2556, 0.0003), (35.74, 22.46))}


class TeacherParams(MechanismParams):
    dataset: Literal["digits58", "mixture"] = Field(
        "digits58", description="digits58: scikit-learn's digits 5 vs 8 (stands in for MNIST 5 vs 8's images); "
                                "mixture: two Gaussian classes at MNIST 5 vs 8's sizes (stands in for its size)")
    K: int = Field(11, ge=3, le=51, description="teachers (odd; §3.7.2: 11)")
    m: int = Field(3, ge=1, le=51, description="privacy allowance per query (Table 3.1: 3)")
    sigma: float = Field(12.0, gt=0, le=100, description="DP-SGD noise multiplier (§3.7.2: 12)")
    clip: float = Field(1.0, gt=0, le=100, description="DP-SGD per-example clipping norm C (§3.7.2: 1)")
    epochs: float = Field(5.0, gt=0, le=50, description="passes: steps = round(epochs / q) (§3.7.2: 5)")
    q: float = Field(0.03, gt=0, le=1, description="Poisson sampling probability per step (OUR CHOICE; the thesis "
                                                   "gives no batch size)")
    lr: float = Field(0.5, gt=0, le=100, description="step size (OUR CHOICE), private and non-private alike")
    Delta: float = Field(1.0e-4, gt=0, le=0.01, description="each teacher's delta (§3.7.2: 1e-4)")
    delta_prime: float = Field(1.0e-4, gt=0, le=0.01, description="general composition's delta' (Table 3.2: 1e-4)")
    draws: int = Field(10, ge=1, le=1000, description="query draws per teacher set (Table 3.1: 10); the spec's "
                                                      "trials / draws teacher sets are trained")
    train_fraction: float = Field(0.7, gt=0.1, lt=0.95, description="digits58: share of the 356 images used for "
                                                                   "training (the rest are the queries)")
    n_train: int = Field(11272, ge=100, le=50_000, description="mixture: training records (MNIST 5 vs 8: 11272)")
    n_test: int = Field(1866, ge=100, le=10_000, description="mixture: test records (MNIST 5 vs 8: 1866)")
    d: int = Field(16, ge=1, le=256, description="mixture: dimension")
    separation: float = Field(3.0, gt=0, le=20, description="mixture: distance of the class means (Bayes accuracy "
                                                           "Phi(separation / 2))")


def teacher_rules(p: Mapping[str, Any]) -> None:
    if p["K"] % 2 == 0:
        raise RuleError(f"K = {p['K']} teachers: DaRRM needs an odd K (Problem 3.1.1, L728)", field="K")
    if p["m"] > p["K"]:
        raise RuleError(f"m = {p['m']} > K = {p['K']}: the privacy allowance is at most K", field="m")
    if round(p["epochs"] / p["q"]) > 5000:
        raise RuleError(f"epochs / q = {p['epochs'] / p['q']:.0f} steps (allowed: <= 5000)", field="q")
    test = 356 - int(p["train_fraction"] * 356) if p["dataset"] == "digits58" else p["n_test"]
    if test < max(QUERIES):
        raise RuleError(f"{test} test records cannot hold Q = {max(QUERIES)} distinct queries", field="train_fraction")
    train = int(p["train_fraction"] * 356) if p["dataset"] == "digits58" else p["n_train"]
    if train < p["K"]:
        raise RuleError(f"{train} training records cannot fill K = {p['K']} shards", field="K")


def _data(p: Mapping[str, Any], rng: np.random.Generator) -> teachers.Split:
    if p["dataset"] == "digits58":
        return teachers.digits58(rng, p["train_fraction"])
    return teachers.mixture(rng, p["n_train"], p["n_test"], p["d"], p["separation"])


def _one_set(p: Mapping[str, Any], steps: int, gam: dict[str, np.ndarray], sigma_g: float,
             rng: np.random.Generator) -> dict[str, Any]:
    """One teacher set: data split, shards, K private and K non-private teachers, the expected accuracy of each method
    over the whole test set, and ``draws`` sampled accuracies per Q."""
    K = p["K"]
    data = _data(p, rng)
    idx = teachers.shards(data.X_train.shape[0], K, rng)
    X, y = data.X_train[idx], data.y_train[idx]
    priv = teachers.train(X, y, q=p["q"], steps=steps, sigma=p["sigma"], clip=p["clip"], lr=p["lr"], rng=rng)
    plain = teachers.train(X, y, q=p["q"], steps=steps, sigma=0.0, clip=math.inf, lr=p["lr"], rng=rng)
    L, n1, yt = teachers.votes(priv.weights, data.X_test), teachers.votes(plain.weights, data.X_test), data.y_test
    acc = {"gnmax": teachers.gnmax_accuracy(n1, K, yt, sigma_g), "sub": teachers.darrm_accuracy(L, yt, gam["sub"]),
           "opt": teachers.darrm_accuracy(L, yt, gam["opt"])}
    sampled: dict[str, dict[str, list[float]]] = {str(Q): {k: [] for k in METHODS} for Q in QUERIES}
    for Q in QUERIES:
        for _ in range(p["draws"]):
            pick = rng.choice(yt.size, size=Q, replace=False)
            out = {"gnmax": teachers.gnmax_sample(n1[pick], K, sigma_g, rng),
                   "sub": teachers.darrm_sample(L[pick], gam["sub"], rng),
                   "opt": teachers.darrm_sample(L[pick], gam["opt"], rng)}
            for k in METHODS:
                sampled[str(Q)][k].append(float(np.mean(out[k] == (yt[pick] > 0))))
    own = (data.X_test @ priv.weights.T > 0) == (yt[:, None] > 0)
    own_plain = (data.X_test @ plain.weights.T > 0) == (yt[:, None] > 0)
    return {"expected": {k: float(v.mean()) for k, v in acc.items()}, "sampled": sampled,
            "teacher_private": float(own.mean()), "teacher_plain": float(own_plain.mean()),
            "majority_private": float(np.mean((L >= (K + 1) // 2) == (yt > 0))),
            "records_per_teacher": priv.records, "test": int(yt.size), "max_batch": priv.max_batch,
            "ran": {"q": priv.q, "steps": priv.steps, "sigma": priv.sigma, "clip": priv.clip}}


def run_teachers(p: dict, trials: int, seq: Any, relation: Neighbouring = RECORD_ADD_REMOVE) -> dict:
    """trials // draws teacher sets, each from its own stream; per set the expected accuracies and the sampled ones.
    ``relation``: the one the entry handles (one record added or removed), which the accounting is for."""
    t0 = time.perf_counter()
    K, m, Delta = p["K"], p["m"], p["Delta"]
    sets = max(2, trials // p["draws"])
    steps = int(round(p["epochs"] / p["q"]))
    eps_t = acct.dpsgd_epsilon(p["q"], steps, p["sigma"], Delta)
    delta_darrm = float(-np.expm1(m * np.log1p(-Delta)))       # m-fold composition's delta (Thm 3.3.3, k = m)
    sigma_g, lam = acct.gnmax_sigma(m * eps_t, m * Delta)       # B.4.1: GNMax at (m eps, m Delta)
    opt = darrm_lp.optimal_gamma_cg(K, m, eps_t, Delta, delta_darrm)
    gam = {"sub": darrm.gamma_sub(K, m), "opt": opt.gamma}
    runs = [_one_set(p, steps, gam, sigma_g, np.random.default_rng(s)) for s in seq.spawn(sets)]
    for r in runs:       # the accounting is of what ran: the same q, steps, sigma in every set
        if r["ran"] != {"q": p["q"], "steps": steps, "sigma": p["sigma"], "clip": p["clip"]}:
            raise ValueError(f"a teacher set ran {r['ran']}, not the accounted parameters")
    totals = {str(Q): acct.general_composition(m * eps_t, m * Delta, Q, p["delta_prime"]) for Q in QUERIES}
    return {"params": p, "sets": sets, "steps": steps, "eps_teacher": eps_t, "Delta": Delta,
            "per_query": {"darrm": [m * eps_t, delta_darrm], "gnmax": [m * eps_t, m * Delta]},
            "gnmax_sigma": sigma_g, "gnmax_lambda": lam,
            "gnmax_epsilon_check": acct.gnmax_epsilon(sigma_g, lam, m * Delta),
            "totals": {Q: list(v) for Q, v in totals.items()},
            "gamma_sub": gam["sub"].tolist(), "gamma_opt": opt.gamma.tolist(),
            "opt_lp": {"rounds": opt.rounds, "rows": opt.working_rows, "multisets": opt.multisets,
                       "max_f_over_rhs": opt.max_f / opt.rhs, "scaled": opt.scaled},
            "expected": {k: [r["expected"][k] for r in runs] for k in METHODS},
            "sampled": {str(Q): {k: [a for r in runs for a in r["sampled"][str(Q)][k]] for k in METHODS}
                        for Q in QUERIES},
            "teacher_private": float(np.mean([r["teacher_private"] for r in runs])),
            "teacher_plain": float(np.mean([r["teacher_plain"] for r in runs])),
            "majority_private": float(np.mean([r["majority_private"] for r in runs])),
            "records_per_teacher": runs[0]["records_per_teacher"], "test": runs[0]["test"],
            "max_batch": max(r["max_batch"] for r in runs), "seconds": time.perf_counter() - t0}


def report_teachers(r: dict) -> tuple[list[str], list[str]]:
    pts = r["points"]
    p0 = pts[0]
    skip = ("n_train", "n_test", "d", "separation") if p0["params"]["dataset"] == "digits58" else ("train_fraction",)
    bullets = [*mechanism_header(r, skip=skip),
               f"- Run: {p0['params']['dataset']} ({p0['records_per_teacher']} training records per teacher, "
               f"{p0['test']} test records to query); {p0['sets']} teacher sets (each: a new split, shards, DP-SGD "
               f"noise), {p0['params']['draws']} query draws per set and Q",
               f"- Teachers: logistic regression, DP-SGD with Poisson sampling q = {fmt(p0['params']['q'])}, "
               f"{p0['steps']} steps, noise multiplier {fmt(p0['params']['sigma'])}, clipping "
               f"{fmt(p0['params']['clip'])}; each is (eps, Delta) = ({p0['eps_teacher']:.4g}, "
               f"{fmt(p0['Delta'])})-DP (dp-accounting RDP, add/remove one record, for what ran)",
               "- Relation: one training record added or removed; the shards are disjoint, so it moves one teacher. "
               "DaRRM's gamma is private for every configuration of the K teachers (Problem 3.1.1), a fortiori for "
               "one; GNMax's RDP is for one vote changing. Totals: the thesis's general composition over Q of the "
               "per-query budget, the same for all three methods",
               "- Expected accuracy: per teacher set, the probability of the true label given the votes (the "
               "aggregator's coins integrated out), averaged over the whole test set; the ordering checks test it "
               "across teacher sets. Sampled: the accuracy of Q drawn queries with sampled outputs (Table 3.1's "
               "statistic), mean (std) over all draws",
               f"- Seconds per point: {min(p['seconds'] for p in pts):.1f} .. {max(p['seconds'] for p in pts):.1f}"]
    body = ["| m | eps_teacher | per query (eps, delta) | GNMax sigma | Q | total (eps, delta) | GNMax | DaRRM_Sub | "
            "DaRRM_opt |", "|---|---|---|---|---|---|---|---|---|"]
    for p in pts:
        for Q in QUERIES:
            s = p["sampled"][str(Q)]
            cell = {k: f"{np.mean(s[k]):.3f} ({np.std(s[k]):.3f})" for k in METHODS}
            tot = p["totals"][str(Q)]
            body.append(f"| {p['params']['m']} | {p['eps_teacher']:.4g} | ({p['per_query']['gnmax'][0]:.4g}, "
                        f"{fmt(p['per_query']['gnmax'][1])}) | {p['gnmax_sigma']:.4g} | {Q} | ({tot[0]:.4g}, "
                        f"{tot[1]:.3g}) | {cell['gnmax']} | {cell['sub']} | {cell['opt']} |")
    body += ["", "| m | expected GNMax | expected DaRRM_Sub | expected DaRRM_opt | private teacher | non-private teacher "
             "| private majority | gamma_opt |", "|---|---|---|---|---|---|---|---|"]
    for p in pts:
        e = {k: f"{np.mean(p['expected'][k]):.4f}" for k in METHODS}
        body.append(f"| {p['params']['m']} | {e['gnmax']} | {e['sub']} | {e['opt']} | {p['teacher_private']:.3f} | "
                    f"{p['teacher_plain']:.3f} | {p['majority_private']:.3f} | "
                    f"{' '.join(f'{g:.2f}' for g in p['gamma_opt'])} |")
    body += ["", "gamma_opt: the LP (3.2)-(3.3) at (K, m, eps_teacher, Delta, 1-(1-Delta)^m), uniform prior on "
             "[0.5, 1]^K, by constraint generation over every corner multiset (verifiers/accountants/darrm_lp.py).", ""]
    return bullets, body


class BudgetParams(MechanismParams):
    m: int = Field(3, ge=1, le=7, description="privacy allowance (the thesis prints m = 1, 3, 5, 7)")
    delta_prime: float = Field(1.0e-4, gt=0, le=0.01, description="general composition's delta' (Table 3.2: 1e-4)")


def budget_rules(p: Mapping[str, Any]) -> None:
    if p["m"] not in PRINTED_TOTALS:
        raise RuleError(f"m = {p['m']}: the thesis prints budgets for m in {sorted(PRINTED_TOTALS)}", field="m")


def run_budget(p: dict, trials: int, seq: Any) -> dict:
    """Nothing random: the printed totals of the point's m against Thm 3.3.3 at the printed per-query budget, and (at
    m = 3) Table B.2 against B.4.1's grid."""
    rows = []
    for data, ((e, d), printed) in PRINTED_TOTALS[p["m"]].items():
        for Q, (pe, pd) in zip(QUERIES, printed):
            ge, gd = acct.general_composition(e, d, Q, p["delta_prime"])
            rows.append({"data": data, "Q": Q, "per_query": [e, d], "printed": [pe, pd], "computed": [ge, gd]})
    gn = []
    if p["m"] == 3:
        for data, ((e, d), (lam_p, sig_p)) in PRINTED_GNMAX.items():
            sig, lam = acct.gnmax_sigma(e, d)
            gn.append({"data": data, "per_query": [e, d], "printed": [lam_p, sig_p], "computed": [lam, sig],
                       "epsilon_at_printed": acct.gnmax_epsilon(sig_p, lam_p, d),
                       "epsilon_at_computed": acct.gnmax_epsilon(sig, lam, d),
                       "sigma_at_printed_lambda": math.sqrt(lam_p / (e - math.log(1 / d) / (lam_p - 1)))})
    return {"params": p, "table": TABLE_OF_M[p["m"]], "totals": rows, "gnmax": gn}


def report_budget(r: dict) -> tuple[list[str], list[str]]:
    bullets = [*mechanism_header(r), "- Nothing sampled: the printed numbers against Thm 3.3.3 and B.4.1's grid"]
    body = ["| m | table | data | Q | per query | printed total | computed total |", "|---|---|---|---|---|---|---|"]
    for p in r["points"]:
        for row in p["totals"]:
            body.append(f"| {p['params']['m']} | {p['table']} | {row['data']} | {row['Q']} | "
                        f"({fmt(row['per_query'][0])}, {fmt(row['per_query'][1])}) | ({row['printed'][0]:.3f}, "
                        f"{row['printed'][1]:.3f}) | ({row['computed'][0]:.4f}, {row['computed'][1]:.4f}) |")
    gn = [g for p in r["points"] for g in p["gnmax"]]
    if gn:
        body += ["", "| Table B.2 | per query | printed (lambda, sigma_min) | computed (lambda, sigma_min) | eps at the "
                 "printed pair | sigma at the printed lambda |", "|---|---|---|---|---|---|"]
        for g in gn:
            body.append(f"| {g['data']} | ({fmt(g['per_query'][0])}, {fmt(g['per_query'][1])}) | ({g['printed'][0]}, "
                        f"{g['printed'][1]}) | ({g['computed'][0]:.2f}, {g['computed'][1]:.4f}) | "
                        f"{g['epsilon_at_printed']:.4f} | {g['sigma_at_printed_lambda']:.2f} |")
    body.append("")
    return bullets, body


MECHANISM_ENTRIES: tuple[MechanismEntry, ...] = (
    MechanismEntry(
        name="darrm_teachers",
        description="seed 003's private label prediction: DaRRM (gamma_opt, gamma_Sub) on DP-SGD teachers vs GNMax on "
                    "non-private teachers at the same per-query budget",
        citation="seed 003, §3.7.2 (L1000-1046): Table 3.1 (L1007-1012), the setup (L1018-1028), GNMax and its "
                 "calibration (B.4.1, L3608-3635), Tables B.4 / B.6 / B.8 (L3690-3737); DaRRM (Alg. 1, L865-880), "
                 "gamma_Sub (Lemma 3.4.1, L849-857), the LP (3.2)-(3.3) (L931-939)",
        params=TeacherParams, sweepable=("m", "sigma", "q", "epochs", "lr"), whole=("m",), rules=teacher_rules,
        run_point=run_teachers, checks=TEACHER_CHECKS, threat_model="central", report=report_teachers,
        check_rules=TEACHER_RULES,
        relations=(RECORD_ADD_REMOVE,),
        data="scikit-learn's digits 5 vs 8 (dataset digits58) or two Gaussian classes at MNIST 5-vs-8's sizes "
             "(dataset mixture), standing in for MNIST / Fashion-MNIST classes 5 vs 8 (§3.7.2, L1024-1026)"),
    MechanismEntry(
        name="darrm_pate_budget",
        description="seed 003's printed privacy budgets of §3.7.2 (Tables 3.2, B.3, B.5, B.7; Table B.2) recomputed",
        citation="seed 003: Thm 3.3.3 (L817-821), Table 3.2 (L1034-1042), Tables B.3 / B.5 / B.7 (L3680-3729), "
                 "B.4.1 and Table B.2 (L3616-3635)",
        params=BudgetParams, sweepable=("m",), whole=("m",), rules=budget_rules, run_point=run_budget,
        checks=BUDGET_CHECKS, check_rules=TEACHER_RULES, threat_model="central", report=report_budget),
)
