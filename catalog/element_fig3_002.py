"""Seed 002 (Asi, Duchi, Javidi, "Element Level Differential Privacy"; Lnnn = line of
../shared/seeds/002_d3919fba655c6f58.txt): §4.2 / Fig. 3 (L383-402), element-level against user-level private SGD
on the simulated logistic regression, and the privacy of that SGD as it ran (Cor 3.1, Cor 3.2, L327-331).

One sweep point per k (the clusters each user holds; §4.2: k = 2, 5, 8 of K = 10, L391). At each point, three methods
on the same data sets: element level (Alg. 1 + (15), noise multiplier sigma calibrated so that the paper's own
accountant, Cor 2.5's eps_alpha composed T times with Mironov's conversion (Cor 3.1, L329), gives eps at delta),
user level (Cor 3.2, L331: the same run with sigma_std = sigma / (K ^ M), i.e. noise multiplier (K ^ M) sigma with M =
card(x) = m, K ^ M = 10 here, for the same accounting) and non-private (no noise; with rho >= L0 nothing is clipped).
The paper tunes q and alpha0 per eps and method (L398): we do it on an explicit grid (q: ``q_count`` values from
``q_lo`` to ``q_hi``, geometric; alpha0 likewise), choose the configuration with the least mean error on
``val_trials`` validation trials (their own data sets and randomness), then report the error of the chosen one on
``trials`` fresh test trials, so the selection does not bias the reported error. Error: ||theta_hat - theta*||_2 of
the final iterate (Fig. 3's caption and L400 say "final estimated theta_hat"; the average of the iterates is shown too).

Privacy of the run as it happened, at the chosen (q, sigma) of each (k, eps): the paper's epsilon (Cor 3.1 with Cor
2.5's pair a = 1, b = -1; Cor 3.2 at sigma_std for the user level) and our exact epsilon of the worst realisable pair
(verifiers/accountants/element_rdp.py's PLD, [optimistic, pessimistic]): for users holding k clusters each user's
update is a sum of k clipped element steps, so the worst element pair is a = k, b = k - 2 (units of rho); the user
pair is a = K ^ M, b = -(K ^ M) (a user's update is at most (K ^ M) rho, L327). Sampling is Poisson (B_u ~
Bernoulli(q), allowed at L319), for which the exact accountant is the accountant of the pair. An audit runs (15)
itself with a canary (``audit_*``). Numerics: algorithms/element_sgd.py (run_many, audit_run, audit_scores); checks:
verifiers/checks/element_fig3.py.
"""
from __future__ import annotations

import math
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

import numpy as np
from pydantic import Field

from algorithms import element_sgd as es
from catalog.base import MechanismEntry, MechanismParams, RuleError, fmt, log_scale, mechanism_header, save_figure
from verifiers.accountants import element_rdp as er
from verifiers.audit import lower_bound
from verifiers.checks.element_fig3 import FIG3_CHECKS, FIG3_RULES
from verifiers.threat_models import Neighbouring

ELEMENT = Neighbouring("element", "replace_one", True)
USER = Neighbouring("user", "replace_one")
METHODS = ("element", "user", "nonprivate")
CALIBRATION_TOL = 1e-7         # |log(paper eps / eps)| at the calibrated sigma
MIN_EPS, MAX_EPS = 0.05, 16.0   # the eps grid's range (the calibration is tested at both ends)
ORDER_CAP = 256.0              # Renyi orders the calibration's accountant evaluates (see paper_conversion)
MAX_WORK = 6 * 10**11          # (val + test trials) x configurations x T x q n x m x d of one point


class Fig3Params(MechanismParams):
    n: int = Field(1000, ge=10, le=100_000, description="users (§4.2: n = 1000, L389)")
    m: int = Field(50, ge=1, le=500, description="points per user (§4.2: m = 50, L389)")
    d: int = Field(10, ge=1, le=50, description="dimension (Fig. 3: d = 10)")
    K: int = Field(10, ge=1, le=100, description="clusters (elements; §4.2: K = 10, L385)")
    k: int = Field(2, ge=1, le=100, description="clusters each user holds (§4.2: 2, 5, 8, L391), drawn uniformly "
                                                "without replacement, the m points split as evenly as possible (OUR "
                                                "CHOICE: the seed does not say)")
    T: int = Field(200, ge=1, le=5000, description="updates of (15) (§4.2: T = 200, L393), composed by the accountant")
    delta_power: float = Field(1.1, ge=0.5, le=5, description="delta = n^-delta_power (§4: n^-1.1)")
    eps_lo: float = Field(0.5, gt=0, le=100, description="smallest eps of the grid eps_lo 2^j, j < eps_count")
    eps_count: int = Field(5, ge=1, le=10, description="eps values (OUR grid: 0.5, 1, 2, 4, 8 by default)")
    q_lo: float = Field(0.02, gt=0, lt=1, description="smallest sampling rate of the tuning grid")
    q_hi: float = Field(0.05, gt=0, lt=1, description="largest sampling rate of the tuning grid")
    q_count: int = Field(2, ge=1, le=6, description="sampling rates of the grid (geometric from q_lo to q_hi)")
    alpha_lo: float = Field(0.005, gt=0, le=100, description="smallest alpha0 of the tuning grid (alpha_i = alpha0 "
                                                            "/ sqrt(i), L393)")
    alpha_hi: float = Field(6.0, gt=0, le=100, description="largest alpha0 of the tuning grid")
    alpha_count: int = Field(8, ge=1, le=12, description="alpha0 values of the grid (geometric)")
    val_trials: int = Field(10, ge=2, le=10_000, description="validation trials that choose (q, alpha0) per method and "
                                                             "eps (their own data sets and randomness)")
    rho: float = Field(2.0, ge=2.0, le=1000, description="clipping level of each element step; OUR CHOICE rho = L0 = "
                                                          "sup ||x|| = 2 (nothing is clipped; the seed does not say)")
    problem_seed: int = Field(0, ge=0, le=2**31, description="draws the centres and theta* (fixed over the points)")
    audit_trials: int = Field(1000, ge=0, le=10**6, description="runs of (15) per side of the canary pair (0: no "
                                                                "audit)")
    audit_users: int = Field(3, ge=1, le=1000, description="users of the audit's data set (the canary and "
                                                           "audit_users - 1 users of the model)")
    audit_eps: float = Field(1.0, gt=0, le=100, description="the eps (one of the grid) whose chosen (q, sigma) the "
                                                            "audit runs")
    audit_confidence: float = Field(0.999, gt=0.5, lt=1, description="each point's audit lower bound's confidence")


def eps_grid(p: Mapping[str, Any]) -> list[float]:
    return [p["eps_lo"] * 2.0**j for j in range(p["eps_count"])]


def geometric(lo: float, hi: float, count: int) -> list[float]:
    return [lo] if count == 1 else [float(v) for v in np.geomspace(lo, hi, count)]


def q_grid(p: Mapping[str, Any]) -> list[float]:
    return geometric(p["q_lo"], p["q_hi"], p["q_count"])


def alpha_grid(p: Mapping[str, Any]) -> list[float]:
    return geometric(p["alpha_lo"], p["alpha_hi"], p["alpha_count"])


def delta_of(p: Mapping[str, Any]) -> float:
    return float(p["n"]) ** -p["delta_power"]


def user_factor(p: Mapping[str, Any]) -> int:
    """K ^ M with M = card(x) = m (Cor 3.2, L327-331)."""
    return min(p["K"], p["m"])


def rules(p: Mapping[str, Any]) -> None:
    if p["k"] > p["K"]:
        raise RuleError(f"k = {p['k']} clusters per user > K = {p['K']} clusters", field="k")
    if p["k"] > p["m"]:
        raise RuleError(f"k = {p['k']} clusters per user > m = {p['m']} points: some cluster would be empty", field="k")
    if p["q_hi"] < p["q_lo"] or (p["q_count"] > 1 and p["q_hi"] == p["q_lo"]):
        raise RuleError(f"q grid from {p['q_lo']:g} to {p['q_hi']:g} with {p['q_count']} values", field="q_hi")
    if p["alpha_hi"] < p["alpha_lo"] or (p["alpha_count"] > 1 and p["alpha_hi"] == p["alpha_lo"]):
        raise RuleError(f"alpha0 grid from {p['alpha_lo']:g} to {p['alpha_hi']:g} with {p['alpha_count']} values",
                        field="alpha_hi")
    if max(eps_grid(p)) > MAX_EPS or min(eps_grid(p)) < MIN_EPS:
        raise RuleError(f"eps grid {p['eps_lo']:g} .. {max(eps_grid(p)):g} outside [{MIN_EPS:g}, {MAX_EPS:g}] (where the "
                        f"calibration is tested)", field="eps_lo")
    if p["q_lo"] * p["n"] < 1:
        raise RuleError(f"q_lo n = {p['q_lo'] * p['n']:g} < 1: fewer than one user sampled per round", field="q_lo")
    if not 0 < delta_of(p) < 0.1:
        raise RuleError(f"delta = n^-{p['delta_power']:g} = {delta_of(p):.3g} must be in (0, 0.1)", field="delta_power")
    if p["audit_trials"] and not any(abs(e - p["audit_eps"]) < 1e-12 for e in eps_grid(p)):
        raise RuleError(f"audit_eps = {p['audit_eps']:g} is not in the eps grid {eps_grid(p)}", field="audit_eps")
    if p["audit_trials"] and p["audit_trials"] < 100:
        raise RuleError(f"audit_trials = {p['audit_trials']}: at least 100 per side (or 0: no audit)",
                        field="audit_trials")
    if p["n"] * p["m"] * p["d"] * 8 > es.CHUNK_BYTES:
        raise RuleError(f"one data set (n m d = {p['n'] * p['m'] * p['d']} floats) exceeds the memory budget of "
                        f"{es.CHUNK_BYTES // 2**20} MB", field="n")
    configs = p["alpha_count"] * (2 * p["eps_count"] + 1)
    work = (p["val_trials"] * configs * p["q_count"] + 3 * p["eps_count"]) * p["T"] * p["q_hi"] * p["n"] * p["m"] * p["d"]
    if work > MAX_WORK:
        raise RuleError(f"about {work:.3g} flops per 100 test trials > {MAX_WORK:.0e}; shrink the grids, T or n",
                        field="val_trials")


# ---------------------------------------------------------------------------------------------------------------------
# calibration: the paper's accountant (Cor 2.5 + Cor 3.1) solved for sigma


def paper_eps(q: float, sigma: float, T: int, delta: float) -> float:
    return paper_conversion(q, sigma, T, delta).epsilon


@lru_cache(maxsize=1024)
def calibrate(eps: float, q: float, T: int, delta: float) -> float:
    """The sigma at which Cor 3.1's epsilon (pair (1, -1), T rounds, Mironov) is ``eps`` at ``delta``: secant steps on
    log eps(log sigma) (nearly linear: eps is about proportional to 1/sigma here) from sigma = 2 q sqrt(2 T log(1/delta))
    / eps (about the answer on §4.2's scale) until |log(eps(sigma)/eps)| <= CALIBRATION_TOL."""
    if not (eps > 0 and 0 < q < 1 and T >= 1 and 0 < delta < 1):
        raise ValueError(f"calibrate: eps = {eps}, q = {q}, T = {T}, delta = {delta} out of range")

    def f(x: float) -> float:
        return math.log(paper_eps(q, math.exp(x), T, delta)) - math.log(eps)

    x0 = math.log(max(2 * q * math.sqrt(2 * T * math.log(1 / delta)) / eps, 0.05))
    f0 = f(x0)
    x1 = x0 + f0                                     # a Newton step with eps ~ 1/sigma
    f1 = f(x1)
    for _ in range(60):
        if abs(f1) <= CALIBRATION_TOL:
            return math.exp(x1)
        if f1 == f0:
            break
        x2 = x1 - f1 * (x1 - x0) / (f1 - f0)
        x2 = min(max(x2, x1 - 2.0), x1 + 2.0)        # at most a factor e^2 per step
        x0, f0, x1, f1 = x1, f1, x2, f(x2)
    raise ValueError(f"calibrate: no sigma gives eps = {eps:g} at q = {q:g}, T = {T}, delta = {delta:.3g}")


def noise_multiplier(method: str, eps: float | None, q: float, p: Mapping[str, Any]) -> float:
    """The curator's noise multiplier of a method (its noise is rho times it): element, Cor 3.1's calibration; user,
    (K ^ M) times it (Cor 3.2's sigma_std = sigma / (K ^ M) then gives the same eps); non-private, 0."""
    if method == "nonprivate" or eps is None:
        return 0.0
    s = calibrate(eps, q, p["T"], delta_of(p))
    return s * user_factor(p) if method == "user" else s


# ---------------------------------------------------------------------------------------------------------------------
# the runs


def configurations(p: Mapping[str, Any]) -> list[tuple[str, float | None, float]]:
    """(method, eps, alpha0) of every tuned configuration (the q grid multiplies them)."""
    out: list[tuple[str, float | None, float]] = [("nonprivate", None, a) for a in alpha_grid(p)]
    for method in ("element", "user"):
        out += [(method, e, a) for e in eps_grid(p) for a in alpha_grid(p)]
    return out


def _errors(prob: es.Problem, z_seq: np.random.SeedSequence, run_seq: np.random.SeedSequence, trials: int,
            p: Mapping[str, Any], plan: dict[float, list[tuple[str, float | None, float]]]) -> dict:
    """Run every configuration of ``plan`` (q -> [(method, eps, alpha0)]) on ``trials`` data sets of the model (chunks
    of trials share data over all q and configurations; configurations of one q share the user sampling). Returns
    {(method, eps, q, alpha0): (final-iterate errors (trials,), averaged-iterate errors (trials,))}."""
    n, m, d = p["n"], p["m"], p["d"]
    c = es.chunk_size(n, m, d, trials)
    starts = list(range(0, trials, c))
    out: dict[tuple, tuple[list, list]] = {}
    for s0, zs, rs in zip(starts, z_seq.spawn(len(starts)), run_seq.spawn(len(starts))):
        tc = min(c, trials - s0)
        z = es.sample_users(prob, np.random.default_rng(zs), (tc, n))
        rng = np.random.default_rng(rs)
        for q, cfgs in plan.items():
            if not cfgs:
                continue
            a0 = np.array([cf[2] for cf in cfgs])
            sig = np.array([noise_multiplier(cf[0], cf[1], q, p) for cf in cfgs])
            res = es.run_many(z, prob.sizes, updates=p["T"], q=q, alpha0=a0, sigma=sig, rho=p["rho"], rng=rng)
            last = np.linalg.norm(res.last - prob.theta_star, axis=-1)
            avg = np.linalg.norm(res.average - prob.theta_star, axis=-1)
            for j, cf in enumerate(cfgs):
                key = (cf[0], cf[1], q, cf[2])
                acc = out.setdefault(key, ([], []))
                acc[0].extend(last[j].tolist())
                acc[1].extend(avg[j].tolist())
    return {key: (np.array(v[0]), np.array(v[1])) for key, v in out.items()}


def accounting(p: Mapping[str, Any], k: int, eps: float, chosen: Mapping[str, Mapping[str, Any]],
               unit: str = "element") -> dict:
    """The paper's and our exact epsilon of the element and user runs at their chosen (q, sigma). The judged relation's
    ``unit`` gets the whole bracket [optimistic, pessimistic]; the other relation (shown beside it) its pessimistic end,
    and the optimistic one only where that end is above the claim."""
    T, delta, KM = p["T"], delta_of(p), user_factor(p)
    out: dict[str, Any] = {"eps": eps}
    for method, (a, b), scale in (("element", (float(k), float(k - 2)), 1.0), ("user", (float(KM), float(-KM)), KM)):
        run = chosen[method]
        q, s = run["q"], run["sigma"] / scale          # the user pair (KM, -KM) at sigma is (1, -1) at sigma / KM
        pa, pb = (a, b) if method == "element" else (1.0, -1.0)
        claim = paper_conversion(q, s, T, delta)
        hi = tight(q, s, T, delta, pa, pb, True)
        lo = tight(q, s, T, delta, pa, pb, False) if method == unit or hi > min(eps, claim.epsilon) else None
        out[method] = {"q": q, "sigma": run["sigma"], "claim": claim.epsilon, "claim_alpha": claim.alpha,
                       "pair": [a, b], "exact_lower": lo, "exact_upper": hi}
    return out


@lru_cache(maxsize=4096)
def paper_conversion(q: float, sigma: float, T: int, delta: float) -> er.Conversion:
    """er.paper_epsilon (Cor 3.1's inf over alpha of T eps_alpha + log(1/delta)/(alpha - 1)) with the orders above
    ORDER_CAP left out of the same grid and refinement: the same number whenever the best order lies below
    ORDER_CAP / 2 (tests pin the equality), at a fraction of the cost (the quadrature of eps_alpha widens with alpha);
    otherwise the full er.paper_epsilon."""
    c = er.mironov(lambda al: er.eps_alpha(q, sigma, al) if al <= ORDER_CAP else math.inf, T, delta)
    return c if c.alpha <= ORDER_CAP / 2 else er.paper_epsilon(q, sigma, T, delta)


@lru_cache(maxsize=1024)
def tight(q: float, sigma: float, T: int, delta: float, a: float, b: float, pessimistic: bool) -> float:
    """Our PLD epsilon of the pair (a, b) at noise sigma (the user pair (K^M, -(K^M)) at sigma_user is the pair (1, -1)
    at sigma_user / (K^M), exactly: the privacy loss is invariant under scaling the pair and the noise together)."""
    return er.tight_epsilon(q, sigma, T, delta, a, b, pessimistic=pessimistic)


def audit(p: Mapping[str, Any], prob: es.Problem, relation: Neighbouring, chosen: Mapping[str, Any],
          seq: np.random.SeedSequence) -> dict:
    """(15) at the chosen (q, alpha0, sigma) of eps = audit_eps, on a data set of audit_users users: a canary whose
    per-user output is a rho e_1 (neighbour: b rho e_1), the others from the model; element relation: a = k, b = k - 2
    (the canary's k element steps at rho e_1, one of them flipped), user relation: a = K ^ M, b = -(K ^ M)."""
    k, rho, T = prob.k, p["rho"], p["T"]
    unit = relation.unit
    a, b = (float(k), float(k - 2)) if unit == "element" else (float(user_factor(p)), float(-user_factor(p)))
    s_data, s_d, s_dp = seq.spawn(3)
    z_others = es.sample_z(prob, np.random.default_rng(s_data), (p["audit_users"] - 1,))
    e1 = np.zeros(p["d"])
    e1[0] = 1.0
    q, sigma, a0 = chosen["q"], chosen["sigma"], chosen["alpha0"]
    scores = []
    for c, s in ((a, s_d), (b, s_dp)):
        run = es.audit_run(z_others, prob.sizes, canary_step=c * rho * e1, canary_elements=int(max(abs(a), abs(b))),
                           updates=T, q=q, alpha0=a0, sigma=sigma, rho=rho, trials=p["audit_trials"],
                           rng=np.random.default_rng(s))
        scores.append(es.audit_scores(run, z_others, prob.sizes, q=q, alpha0=a0, rho=rho, sigma=sigma, a=a, b=b))
    lb = lower_bound(scores[0], scores[1], delta=delta_of(p), confidence=p["audit_confidence"])
    paper = paper_conversion(q, sigma if unit == "element" else sigma / user_factor(p), T, delta_of(p)).epsilon
    return {"eps": p["audit_eps"], "method": "element" if unit == "element" else "user", "q": q, "sigma": sigma,
            "alpha0": a0, "pair": [a, b], "users": p["audit_users"], "claim": p["audit_eps"], "paper": paper,
            "epsilon_lower": lb.epsilon_lower, "false_positives": lb.false_positives,
            "false_negatives": lb.false_negatives, "trials_per_side": lb.trials_per_side, "confidence": lb.confidence,
            "threshold": lb.threshold}


def run_point(p: dict, trials: int, seq: Any, relation: Neighbouring = ELEMENT) -> dict:
    t0 = time.perf_counter()
    k = p["k"]
    prob = es.make_problem(p["d"], p["K"], p["m"], k, p["problem_seed"])
    qs, alphas, epss = q_grid(p), alpha_grid(p), eps_grid(p)
    s_vz, s_vr, s_tz, s_tr, s_audit = seq.spawn(5)
    cfgs = configurations(p)
    val = _errors(prob, s_vz, s_vr, p["val_trials"], p, {q: cfgs for q in qs})
    t_val = time.perf_counter() - t0
    chosen: dict[tuple[str, float | None], dict] = {}
    for method in METHODS:
        for e in ([None] if method == "nonprivate" else epss):
            grid = np.array([[float(val[(method, e, q, a)][0].mean()) for a in alphas] for q in qs])
            i, j = np.unravel_index(int(np.argmin(grid)), grid.shape)
            chosen[(method, e)] = {"q": qs[i], "alpha0": alphas[j], "sigma": noise_multiplier(method, e, qs[i], p),
                                   "validation": grid.tolist()}
    plan: dict[float, list] = {q: [] for q in qs}
    for (method, e), ch in chosen.items():
        plan[ch["q"]].append((method, e, ch["alpha0"]))
    test = _errors(prob, s_tz, s_tr, trials, p, plan)
    t_test = time.perf_counter() - t0 - t_val
    methods: dict[str, list[dict]] = {}
    for (method, e), ch in chosen.items():
        last, avg = test[(method, e, ch["q"], ch["alpha0"])]
        methods.setdefault(method, []).append(
            {"eps": e, **ch, "errors": last.tolist(), "mean": float(last.mean()),
             "se": float(last.std(ddof=1) / math.sqrt(last.size)) if last.size > 1 else math.inf,
             "average_iterate_mean": float(avg.mean())})
    acc = [accounting(p, k, e, {"element": chosen[("element", e)], "user": chosen[("user", e)]}, relation.unit)
           for e in epss]
    au = None
    if p["audit_trials"]:
        method = "element" if relation.unit == "element" else "user"
        au = audit(p, prob, relation, chosen[(method, p["audit_eps"])], s_audit)
    unit = relation.unit
    worst = max(acc, key=lambda r: r[unit]["exact_upper"] / r[unit]["claim"])
    return {"params": p, "k": k, "relation": {"label": relation.label, "unit": unit}, "eps": epss, "q_grid": qs,
            "alpha_grid": alphas, "delta": delta_of(p), "user_factor": user_factor(p), "trials": trials,
            "theta_star": prob.theta_star.tolist(), "sizes": list(prob.sizes), "methods": methods,
            "accounting": acc, "audit": au,
            "privacy_worst": {"eps": worst["eps"], "epsilon": worst[unit]["exact_upper"], "claim": worst[unit]["claim"]},
            "seconds": time.perf_counter() - t0, "seconds_validation": t_val, "seconds_test": t_test}


# ---------------------------------------------------------------------------------------------------------------------
# the report


def _by_eps(pt: dict, method: str) -> dict:
    return {r["eps"]: r for r in pt["methods"][method]}


def _bracket(a: Mapping[str, Any]) -> str:
    return ("<= " if a["exact_lower"] is None else f"{fmt(a['exact_lower'])} .. ") + fmt(a["exact_upper"])


def figure(r: dict, out_dir: Path) -> str | None:
    """Fig. 3's picture: test error ||theta_hat - theta*|| against eps, one colour per k, the element level solid,
    the user level dashed, the non-private error dotted; bars +- 1.64 se as in the paper's figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    colours = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple")
    for i, pt in enumerate(r["points"]):
        c = colours[i % len(colours)]
        for method, style in (("element", "-o"), ("user", "--s")):
            rows = pt["methods"][method]
            ax.errorbar([x["eps"] for x in rows], [x["mean"] for x in rows], yerr=[1.64 * x["se"] for x in rows],
                        fmt=style, color=c, ms=3, capsize=2, label=f"{method}, clusters {pt['k']}/{pt['params']['K']}")
        npv = pt["methods"]["nonprivate"]
        ax.axhline(npv[0]["mean"] if isinstance(npv, list) else npv["mean"], color=c, ls=":", lw=1)
    log_scale(ax, "x")
    ev = [x["eps"] for x in r["points"][0]["methods"]["element"]]
    ax.set_xticks(ev)
    ax.set_xticklabels([f"{e:g}" for e in ev])
    ax.minorticks_off()
    ax.set_xlabel("epsilon (the paper's accountant, Cor. 2.5 + Cor. 3.1)")
    ax.set_ylabel("||theta_hat - theta*||_2 (final iterate)")
    ax.set_title(f"{r['name']}: Fig. 3 (dotted: non-private)")
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    return save_figure(fig, out_dir, f"{r['name']}_fig3")


def report(r: dict) -> tuple[list[str], list[str]]:
    pts = r["points"]
    p0 = pts[0]
    prm = p0["params"]
    bullets = [*mechanism_header(r),
               f"- Per point (k clusters per user): three methods on the same {r['trials']} test data sets of n = "
               f"{prm['n']} users (m = {prm['m']} points each, d = {prm['d']}, K = {prm['K']}), T = {prm['T']} updates of "
               f"(15), alpha_i = alpha0/sqrt(i), Poisson sampling, rho = {fmt(prm['rho'])} (nothing clipped), Theta = "
               f"R^d; delta = n^-{fmt(prm['delta_power'])} = {p0['delta']:.4g}. Element level: sigma from Cor 3.1 "
               f"(Cor 2.5's pair, T-fold, Mironov) at eps; user level: (K ^ M) sigma = {p0['user_factor']} sigma (Cor "
               "3.2); non-private: no noise",
               f"- Tuning (L398): q in {{{', '.join(fmt(q) for q in p0['q_grid'])}}} x alpha0 in "
               f"{{{', '.join(fmt(a) for a in p0['alpha_grid'])}}}, the least mean final-iterate error on "
               f"{prm['val_trials']} validation trials (own data and randomness) per (method, eps); the chosen "
               "configuration's error is then measured on the fresh test trials",
               "- Error: ||theta_T - theta*||_2 of the final iterate (Fig. 3: the \"final estimated theta_hat\"), mean "
               "+- 1.64 standard errors (Fig. 3's intervals); the averaged iterate's mean error is in the table too",
               "- Privacy as run: the paper's epsilon (Cor 3.1 / Cor 3.2) at the chosen (q, sigma) against our exact "
               "epsilon of the worst realisable pair, Poisson sampling (element: a = k, b = k - 2 in units of rho, the "
               "changed user's other k - 1 element steps stay in its update; user: a = K ^ M, b = -(K ^ M))",
               f"- Audit (at eps = {fmt(prm['audit_eps'])}, the chosen (q, alpha0, sigma)): (15) on {prm['audit_users']} users, a "
               "canary whose per-user output is injected (its k element steps at rho e_1; neighbour: one of them flipped, "
               "a = k, b = k - 2; user relation: (K ^ M) rho e_1 against its negative) and the others from the model; "
               f"{prm['audit_trials']} runs per side. The auditor knows every user's data, the iterates and the other users' "
               "sampling (not the canary's, not the noise): it rebuilds each round's release from consecutive iterates, "
               "subtracts the other users' steps (recomputed by Alg. 1's own code) and scores the log-likelihood ratio of "
               "the pair; Clopper-Pearson lower bound (verifiers/audit.py). Knowing the others' sampling makes their sum a "
               "known shift: the privacy loss is that of a data set whose other users' steps vanish, which the claim covers",
               "- The figure: error against eps per k, element (solid) and user level (dashed), the non-private error "
               "dotted, bars +- 1.64 se as in Fig. 3; the table below holds its numbers",
               f"- Seconds per point: {min(p['seconds'] for p in pts):.1f} .. {max(p['seconds'] for p in pts):.1f}"]
    body = ["| k | eps | element: error (+-1.64 se) | q, alpha0, sigma | user: error | q, alpha0, sigma | "
            "non-private: error | (el - np)/np | averaged iterate el / user / np |",
            "|---|---|---|---|---|---|---|---|---|"]
    for pt in pts:
        el, us, npv = _by_eps(pt, "element"), _by_eps(pt, "user"), pt["methods"]["nonprivate"][0]
        for e in pt["eps"]:
            a, u = el[e], us[e]
            body.append(f"| {pt['k']} | {fmt(e)} | {fmt(a['mean'])} +- {fmt(1.64 * a['se'])} | {fmt(a['q'])}, "
                        f"{fmt(a['alpha0'])}, {fmt(a['sigma'])} | {fmt(u['mean'])} +- {fmt(1.64 * u['se'])} | "
                        f"{fmt(u['q'])}, {fmt(u['alpha0'])}, {fmt(u['sigma'])} | {fmt(npv['mean'])} +- "
                        f"{fmt(1.64 * npv['se'])} | {fmt((a['mean'] - npv['mean']) / npv['mean'])} | "
                        f"{fmt(a['average_iterate_mean'])} / {fmt(u['average_iterate_mean'])} / "
                        f"{fmt(npv['average_iterate_mean'])} |")
    body += ["", "Non-private (tuned per k): " + "; ".join(
        f"k = {pt['k']}: q = {fmt(pt['methods']['nonprivate'][0]['q'])}, alpha0 = "
        f"{fmt(pt['methods']['nonprivate'][0]['alpha0'])}" for pt in pts) + ". Where alpha0 sits at an end of its grid "
        "the grid bounds the tuning.",
             "", "| k | eps | element: paper eps (Cor 3.1) | exact, pair (k, k-2) | exact / paper | user: paper eps "
             "(Cor 3.2) | exact, pair (K^M, -(K^M)) | audit lower bound |", "|---|---|---|---|---|---|---|---|"]
    for pt in pts:
        au = pt["audit"]
        for row in pt["accounting"]:
            e, u = row["element"], row["user"]
            aud = (f"{fmt(au['epsilon_lower'])} ({au['method']}, claim {fmt(au['claim'])})"
                   if au and abs(au["eps"] - row["eps"]) < 1e-12 else "")
            body.append(f"| {pt['k']} | {fmt(row['eps'])} | {fmt(e['claim'])} | {_bracket(e)} | "
                        f"{fmt(e['exact_upper'] / e['claim'])} | {fmt(u['claim'])} | {_bracket(u)} | {aud} |")
    body += ["", "Exact: [optimistic .. pessimistic] discretisation of our privacy-loss distribution composed T times "
             "(verifiers/accountants/element_rdp.py; the other relation's optimistic end only where needed). Each row is at "
             "that (k, eps)'s chosen q (the tuning picks it), so the exact epsilon need not grow with eps. The audit: "
             "(15) on audit_users users with the canary, at audit_eps's chosen (q, alpha0, sigma).", ""]
    return bullets, body


MECHANISM_ENTRIES: tuple[MechanismEntry, ...] = (
    MechanismEntry(
        name="element_sgd_fig3",
        description="seed 002's §4.2 / Fig. 3: element-level, user-level and non-private SGD (Alg. 1 + (15)) on the "
                    "simulated logistic regression, tuned per eps, and the privacy of the runs (Cor 3.1 / 3.2) "
                    "against our exact accountant and an audit",
        citation="seed 002: §4.2 (L383-391), Fig. 3 and its discussion (L393-402), Alg. 1 (L303-315), (15) "
                 "(L319-325), Cor 3.1 (L329), Cor 3.2 (L331), Cor 2.5 (L138-142)",
        params=Fig3Params, sweepable=("k", "eps_lo", "n", "T"), whole=("k", "n", "T"), rules=rules,
        run_point=run_point, checks=FIG3_CHECKS, threat_model="central", report=report, figure=figure,
        check_rules=FIG3_RULES,
        relations=(ELEMENT, USER),
        data="§4.2's own simulated model (centres and theta* uniform on the sphere, x = c + Uni(S^{d-1}), logistic "
             "labels; n = 1000 users of m = 50 points, d = 10, K = 10), with the choices the seed leaves open filled "
             "in: how a user's points are spread over its k clusters (uniform clusters, an even split), Theta = R^d, "
             "rho = 2, Poisson sampling, the q and alpha0 grids, the eps grid; not the paper's random draws"),
)
