"""Seed 002 (Asi, Duchi, Javidi, "Element Level Differential Privacy"; Lnnn = line of
../shared/seeds/002_d3919fba655c6f58.txt): element-level private SGD (Alg. 1 + iteration (15), L303-325) on the
simulated logistic regression of §4.2 (L385-391), as a mechanism (``kind: mechanism``), for the asymptotic normality
of its averaged iterate (Thm 1, L293-297; Prop 3, L345-349) and Example 3's theta_el* = theta* (L360-364). At each
point, ``trials`` independent runs (each its own sample of n users and its own SGD randomness) give
sqrt(n)(theta_bar - theta*), and a Monte Carlo computation gives the predicted covariance. The relation is element
replacement (the seed's d_element, (3) at L85, Def. 2.3 at L89), stated for the privacy checks this entry will get; its privacy
(Cor 3.1, Prop 3 (i)) is not checked here yet. Numerics: algorithms/element_sgd.py; checks:
verifiers/checks/element_sgd.py."""
from __future__ import annotations

import time
from typing import Any, Mapping

import numpy as np
from pydantic import Field

from algorithms import element_sgd as es
from catalog.base import MechanismEntry, MechanismParams, RuleError, fmt, mechanism_header
from verifiers.checks.element_sgd import ELEMENT_SGD_CHECKS, ELEMENT_SGD_RULES
from verifiers.threat_models import Neighbouring

MAX_WORK = 4 * 10**8          # T * batch * m * d per trial (the cost of one run's gradient evaluations)
ELEMENT_REPLACED = Neighbouring("element", "replace_one", True)


class ElementSgdParams(MechanismParams):
    n: int = Field(ge=10, le=100_000, description="users (the sample size of Thm 1 / Prop 3)")
    gamma: float = Field(1.0, gt=0, le=20, description="iterations per user: T = round(gamma n) iterates (k/n -> "
                                                         "gamma, L293, L347)")
    d: int = Field(3, ge=1, le=20, description="dimension (§4.2 uses d = 10; OUR default 3 keeps the runs cheap)")
    K: int = Field(10, ge=1, le=1000, description="clusters (elements; §4.2: K = 10, L385)")
    m: int = Field(6, ge=1, le=500, description="points per user (§4.2: m = 50, L389; OUR default 6 for cost)")
    k: int = Field(2, ge=1, le=1000, description="clusters each user holds (§4.2: k in {2, 5, 8}, L391), drawn "
                                                 "uniformly without replacement, the m points split as evenly as "
                                                 "possible (OUR CHOICE: the seed does not say)")
    batch: int = Field(10, ge=1, le=100_000, description="users per step m_b = q n (Prop 3's fixed m with q = m/n, "
                                                         "L345); the step divides by q n = batch as (15) does")
    poisson: int = Field(0, ge=0, le=1, description="1: Bernoulli(q) user sampling; 0: batch users uniformly "
                                                    "without replacement (both allowed at L319)")
    sigma: float = Field(1.5, ge=0, le=1000, description="noise multiplier: the curator adds N(0, rho^2 sigma^2 I) "
                                                         "(L321; Prop 3 (i) wants sigma^2 >= 2)")
    rho: float = Field(2.0, gt=0, le=1000, description="clipping level of each element's step (Prop 3 wants rho >= "
                                                       "L0 = 2 = sup ||x||: no clipping, L343)")
    alpha0: float = Field(1.5, gt=0, le=100, description="step alpha_i = alpha0 i^-beta (L293; unstated in the seed)")
    beta: float = Field(0.55, ge=0.5, le=1.0, description="step decay; Thm 1 needs beta in (1/2, 1) (§4.2 used 1/2)")
    radius: float = Field(10.0, gt=0, le=10_000, description="Theta = the ball of this radius around 0 (OUR CHOICE; "
                                                             "A1/A2 want Theta compact with theta* inside)")
    problem_seed: int = Field(0, ge=0, le=2**31, description="draws the centres and theta* (fixed over the points)")
    mc_points: int = Field(400_000, ge=20_000, le=10**7, description="data drawn for the Monte Carlo Fisher "
                                                                     "information J behind H_el and Sigma_el")
    mc_users: int = Field(100_000, ge=1000, le=10**6, description="users drawn for Example 3's minimiser and for "
                                                                  "the direct Monte Carlo of Sigma_el")


def rules(p: Mapping[str, Any]) -> None:
    if p["k"] > p["K"]:
        raise RuleError(f"k = {p['k']} clusters per user > K = {p['K']} clusters", field="k")
    if p["k"] > p["m"]:
        raise RuleError(f"k = {p['k']} clusters per user > m = {p['m']} points: some cluster would be empty", field="k")
    if p["batch"] > p["n"]:
        raise RuleError(f"batch = {p['batch']} users per step > n = {p['n']} users", field="batch")
    if iterations(p) < 2:
        raise RuleError(f"gamma n = {p['gamma'] * p['n']:g}: fewer than 2 iterates", field="gamma")
    if p["n"] * p["m"] * p["d"] * 8 > es.CHUNK_BYTES:
        raise RuleError(f"one data set (n m d = {p['n'] * p['m'] * p['d']} floats) exceeds the memory budget of "
                        f"{es.CHUNK_BYTES // 2**20} MB", field="n")
    work = iterations(p) * p["batch"] * p["m"] * p["d"]
    if work > MAX_WORK:
        raise RuleError(f"T batch m d = {work:.3g} per trial > {MAX_WORK:.0e}; lower n, gamma, batch or m", field="n")


def iterations(p: Mapping[str, Any]) -> int:
    return int(round(p["gamma"] * p["n"]))


def example3(prob: es.Problem, users: int, s_min: np.random.SeedSequence,
             s_grad: np.random.SeedSequence) -> tuple[dict, np.ndarray]:
    """Example 3's quantities: Newton's minimiser of the empirical element risk of ``users`` fresh users with its
    sandwich covariance, and the mean element gradient at theta* of another ``users`` with its covariance; also the
    direct Monte Carlo of Sigma_el (the gradients' covariance)."""
    mn = es.el_minimiser(prob, np.random.default_rng(s_min), users)
    Hi = np.linalg.inv(mn["H"])
    g = es.user_gradients(prob, prob.theta_star, np.random.default_rng(s_grad), users)
    Sig = np.atleast_2d(np.cov(g.T, ddof=1))
    return {"users": users, "theta_star": prob.theta_star.tolist(), "theta_hat": mn["theta"].tolist(),
            "theta_hat_cov": (Hi @ mn["Sigma"] @ Hi / users).tolist(), "grad_mean": g.mean(axis=0).tolist(),
            "grad_mean_cov": (Sig / users).tolist()}, Sig


def run_point(p: dict, trials: int, seq: Any, relation: Neighbouring | None = None) -> dict:
    """``trials`` runs of (15) at this point; the predicted covariances; Example 3's minimiser and mean gradient."""
    t0 = time.perf_counter()
    prob = es.make_problem(p["d"], p["K"], p["m"], p["k"], p["problem_seed"])
    T = iterations(p)
    n, batch = p["n"], p["batch"]
    s_run, s_pred, s_min, s_grad = seq.spawn(4)
    out = es.run(prob, n=n, T=T, batch=batch, alpha0=p["alpha0"], beta=p["beta"], rho=p["rho"], sigma=p["sigma"],
                 radius=p["radius"], poisson=bool(p["poisson"]), trials=trials, seq=s_run)
    t_run = time.perf_counter() - t0
    Y = np.sqrt(n) * (out.theta_bar - prob.theta_star)
    Yl = np.sqrt(n) * (out.theta_last - prob.theta_star)
    pred = es.predict(prob, gamma=T / n, batch=batch, rho=p["rho"], sigma=p["sigma"], q=batch / n,
                      points=p["mc_points"], rng=np.random.default_rng(s_pred))
    ex3, Sig_direct = example3(prob, p["mc_users"], s_min, s_grad)
    S = np.atleast_2d(np.cov(Y.T, ddof=1))
    P = pred.paper
    return {
        "params": p, "iterations": T, "q": batch / n, "trials": trials,
        "relation": None if relation is None else relation.label,
        "theta_star": prob.theta_star.tolist(), "centres": prob.centres.tolist(), "sizes": list(prob.sizes),
        "sqrt_n_error": Y.tolist(),
        "mean": Y.mean(axis=0).tolist(), "covariance": S.tolist(),
        "last_iterate": {"mean": Yl.mean(axis=0).tolist(), "trace_covariance": float(np.trace(np.cov(Yl.T, ddof=1)))},
        "trace_ratio": float(np.trace(S) / np.trace(P)),
        "max_batch": out.max_batch,
        "prediction": {"J": pred.J.tolist(), "H_el": pred.H_el.tolist(), "Sigma_el": pred.Sigma_el.tolist(),
                       "paper": P.tolist(), "literal": pred.literal.tolist(), "finite_q": pred.finite_q.tolist(),
                       "efficient": pred.efficient.tolist(), "rel_se": pred.rel_se, "mc_points": pred.mc_points,
                       "trace": float(np.trace(P))},
        "sigma_el_direct": {"users": p["mc_users"], "matrix": Sig_direct.tolist(),
                            "max_rel_diff": float(np.abs(Sig_direct - pred.Sigma_el).max()
                                                  / np.abs(pred.Sigma_el).max())},
        "example3": ex3,
        "seconds": time.perf_counter() - t0, "seconds_sgd": t_run}


def report(r: dict) -> tuple[list[str], list[str]]:
    field = r["sweep"]["field"] if r["sweep"] else None
    pts = r["points"]
    p0 = pts[0]
    bullets = [*mechanism_header(r),
               "- Each trial: a fresh sample of n users from §4.2's model (centres and theta* fixed by problem_seed), "
               "then T = round(gamma n) iterates of (15) from theta_1 = 0 with Alg. 1 read as a descent step (the "
               "printed sign ascends, the notes' P1); Y = sqrt(n)(theta_bar - theta*). The prediction: H_el = k J, "
               "Sigma_el = (sum_j 1/s_j) J with J the Fisher information of one datum by Monte Carlo "
               f"({p0['prediction']['mc_points']} data; relative error of tr P {p0['prediction']['rel_se']['trace']:.2g}), "
               f"cross-checked against a direct Monte Carlo of Cov grad l_el(theta*) over {p0['sigma_el_direct']['users']} "
               f"users (largest relative difference {max(p['sigma_el_direct']['max_rel_diff'] for p in pts):.2g})",
               "- Privacy accounting of this entry is not yet checked here (Cor 3.1 / Prop 3 (i)); the neighbouring "
               "relation below is the one its privacy checks will decide",
               f"- Seconds per point: {min(p['seconds'] for p in pts):.1f} .. {max(p['seconds'] for p in pts):.1f}"]
    lead = [] if field == "n" else [field or "point"]
    body = ["| " + " | ".join([*lead, "n", "T", "q", "tr S", "tr P (paper)", "tr S / tr P", "tr S / tr P (literal L349)",
                               "tr P efficient", "||mean Y||", "tr Cov last iterate"]) + " |",
            "|" + "---|" * (len(lead) + 10)]
    for p in pts:
        S = np.asarray(p["covariance"])
        pr = p["prediction"]
        first = "" if field == "n" else f"| {fmt(p['value'])} "
        body.append(f"{first}| {p['params']['n']} | {p['iterations']} | {fmt(p['q'])} | "
                    f"{fmt(float(np.trace(S)))} | {fmt(pr['trace'])} | {fmt(p['trace_ratio'])} | "
                    f"{fmt(float(np.trace(S) / np.trace(np.asarray(pr['literal']))))} | "
                    f"{fmt(float(np.trace(np.asarray(pr['efficient']))))} | {fmt(float(np.linalg.norm(p['mean'])))} | "
                    f"{fmt(p['last_iterate']['trace_covariance'])} |")
    body += ["", "S: the covariance of Y over the trials; P: Prop 3's prediction H^-1(Sigma + (Sigma/m_b + rho^2 "
             "sigma^2 I/m_b^2)/gamma)H^-1 (m_b = batch); literal: the bracket of L349 as printed, H^-1 Sigma + "
             "H^-1 V H^-1/gamma; efficient: H^-1 Sigma H^-1 (L297). The last iterate is not averaged, so its "
             "covariance is not Prop 3's.", ""]
    return bullets, body


MECHANISM_ENTRIES: tuple[MechanismEntry, ...] = (
    MechanismEntry(
        name="element_sgd",
        description="seed 002's element-level private SGD (Alg. 1 + (15)) on §4.2's logistic model: asymptotic "
                    "normality of the averaged iterate (Thm 1 / Prop 3), Example 3's theta_el* = theta*",
        citation="seed 002: Alg. 1 (L303-315), iteration (15) (L319-325), Thm 1 (L293-297), Prop 3 (L345-349), "
                 "Example 3 (L360-364), §4.2's data model (L385-391)",
        params=ElementSgdParams, sweepable=("n", "gamma", "k", "batch", "sigma", "alpha0"), whole=("n", "k", "batch"),
        rules=rules, run_point=run_point, checks=ELEMENT_SGD_CHECKS, threat_model="central", report=report,
        check_rules=ELEMENT_SGD_RULES,
        relations=(ELEMENT_REPLACED,)),
)
