"""Seed 004 (Lowy & Razaviyayn; Lnnn = line of ../shared/seeds/004_66f3b713b54f102e.txt): the experiments of Sec. 6
and App. I, on stand-in data, with App. I's calibration accounted.

One sweep point per claimed epsilon (the paper's grids: MNIST 0.75 .. 18, L1500; insurance 0.125 .. 3, L1524):
1. App. I's calibration (L1507, L1534, L1558) at the point: MB-SGD K = n sqrt(eps)/(2 sqrt(R)) (rounded to the
   nearest integer, at least 1) and sigma^2 = 8 L^2 ln(1/delta) R/(n^2 eps^2); Local SGD (L1491) sigma^2 =
   8 L^2 ln(1/delta) R K/(n^2 eps^2) with the same K as its number of local steps (our reading: "the sensitivity and
   number of gradient evaluations are both larger by a factor of K", L1558); delta = 1/n^2.
2. Its privacy by dp-accounting's PLD (verifiers/accountants/appendix_i.py) under Def. 2's replace-one adjacency
   (sensitivity 2L/K for the calibration's L-Lipschitz loss) with the sampling the runs use (a uniform K-subset per
   round; one uniform record per local step), and under add/remove with Poisson sampling (Abadi et al.'s setting,
   which App. I cites) beside it; at the paper's setting (its n; its R where printed) and at the stand-in's.
3. The four algorithms of App. I (algorithms/fl_experiments.py) on the stand-in, tuned as App. I tunes them: every
   configuration of the step grid (and the clip grid for the regression) run ``reps`` times, the one with the lowest
   mean training loss kept, its test error averaged over the reps; repeated over ``trials // trials_per_run`` fresh
   80/20 train/test splits (L1505, L1532).
Stand-ins: scikit-learn's 8x8 digits (PCA to d, odd vs even, 25 silos by (odd, even) digit pair, each digit's records
dealt evenly to its 5 pairs) for MNIST; scikit-learn's diabetes (10 features + intercept, target sorted into N silos
as L1526 sorts the insurance charges) for the insurance data. No bundled data set stands in for the Obesity data
(7-class, 17 mixed attributes, 2111 records): not run."""
from __future__ import annotations

import functools
import math
import time
from typing import Any, Mapping

import numpy as np
from pydantic import Field

from algorithms import fl_experiments as fl
from catalog.base import MechanismEntry, MechanismParams, RuleError, fmt, mechanism_header
from verifiers.accountants import appendix_i
from verifiers.checks.isrl_experiments import ALGS, ISRL_EXP_CHECKS, ISRL_EXP_RULES
from verifiers.stats import mean_ci

TASKS = {"digits": "logistic", "diabetes": "squared"}


class IsrlExperimentParams(MechanismParams):
    task: str = Field("digits", description="digits (MNIST stand-in, logistic) or diabetes (insurance stand-in, "
                                            "linear regression)")
    eps: float = Field(1.0, gt=0, le=100, description="the claimed ISRL-DP epsilon of the point")
    R: int = Field(35, ge=1, le=2000, description="rounds (App. I.2: 35; App. I.1 prints none)")
    N: int = Field(25, ge=2, le=100, description="silos (digits: 25 (odd, even) pairs; diabetes: sorted by target)")
    M: int = Field(25, ge=1, le=100, description="silos taking part each round (a uniform M-subset)")
    d: int = Field(50, ge=2, le=64, description="digits: PCA dimension (App. I.1: 50); diabetes: ignored (11)")
    paper_n: int = Field(1238, ge=2, le=10**6, description="records per silo of the paper's run, for the accounting "
                                                           "at the paper's setting (MNIST: 1238, L1500)")
    paper_R: int = Field(35, ge=1, le=10**5, description="rounds of the paper's run for that accounting")
    reps: int = Field(3, ge=1, le=20, description="runs per configuration in the tuning (App. I: 3)")
    steps: int = Field(10, ge=1, le=50, description="step sizes per grid (App. I: 10)")
    mb_step_lo: float = Field(-6.0, ge=-30, le=5, description="MB-SGD's step grid: ln of its smallest step")
    mb_step_hi: float = Field(0.0, ge=-30, le=5, description="MB-SGD's step grid: ln of its largest step")
    local_step_lo: float = Field(-8.0, ge=-30, le=5, description="Local SGD's step grid: ln of its smallest step")
    local_step_hi: float = Field(-1.0, ge=-30, le=5, description="Local SGD's step grid: ln of its largest step")
    clips: str = Field("inf", description="gradient clip thresholds, comma-separated ('inf': none; then L = 2 "
                                          "max ||x||, App. I.1); with clipping L is the threshold (App. I.2)")
    order_eps_max: float = Field(100.0, gt=0, description="order_vs_local_dp judges the points with eps <= this")
    nonprivate_eps_min: float = Field(12.0, gt=0, description="order_vs_local_np judges the points with eps >= this")
    naive_eps: float = Field(1.0, gt=0, description="below_naive judges the point with this eps")
    split_seed: int = Field(0, ge=0, le=2**31, description="fixes the digits' deal to silos")
    trials_per_run: int = Field(100, ge=1, le=10**6, description="the spec's trials per train/test split: splits = "
                                "trials // trials_per_run (quick mode divides trials by 10, at least 100)")


def rules(p: Mapping[str, Any]) -> None:
    if p["task"] not in TASKS:
        raise RuleError(f"task {p['task']!r}; allowed: {', '.join(TASKS)}", field="task")
    if p["task"] == "digits" and p["N"] != 25:
        raise RuleError("the digits stand-in has exactly 25 (odd, even) silos: N must be 25", field="N")
    if p["M"] > p["N"]:
        raise RuleError(f"M = {p['M']} exceeds N = {p['N']}", field="M")
    try:
        clips = clip_grid(p)
    except ValueError:
        raise RuleError(f"clips {p['clips']!r}: comma-separated positive numbers or 'inf'", field="clips") from None
    if any(not c > 0 for c in clips):
        raise RuleError(f"clips {p['clips']!r}: thresholds must be positive", field="clips")
    if p["mb_step_lo"] > p["mb_step_hi"] or p["local_step_lo"] > p["local_step_hi"]:
        raise RuleError("a step grid's lower end exceeds its upper end", field="mb_step_lo")


def clip_grid(p: Mapping[str, Any]) -> list[float]:
    return [float(c) for c in str(p["clips"]).split(",")]


# --- the stand-in data -------------------------------------------------------------------------------------------
@functools.cache
def digits_silos(d: int, split_seed: int) -> tuple[list[np.ndarray], list[np.ndarray], float]:
    """scikit-learn's digits / 16, PCA to d (fit on all records, not privately, as App. I.1's preprocessing), label +1
    odd, -1 even; 25 silos, one per (odd, even) pair, each digit's records dealt in a fixed random order evenly to its
    5 pairs. Returns the silos' X, y and max ||x|| over all records."""
    from sklearn.datasets import load_digits

    X, digit = load_digits(return_X_y=True)
    X = X.astype(np.float64) / 16.0
    Xc = X - X.mean(axis=0)
    _, _, Vt = np.linalg.svd(Xc, full_matrices=False)
    Z = Xc @ Vt[:d].T
    y = np.where(digit % 2 == 1, 1.0, -1.0)
    rng = np.random.default_rng(np.random.SeedSequence([split_seed, 4, 1797]))
    parts: dict[tuple[int, int], list[int]] = {(o, e): [] for o in (1, 3, 5, 7, 9) for e in (0, 2, 4, 6, 8)}
    for k in range(10):
        idx = rng.permutation(np.flatnonzero(digit == k))
        pairs = [pr for pr in parts if k in pr]
        for j, i in enumerate(idx):
            parts[pairs[j % 5]].append(int(i))
    Xs = [Z[np.array(v)] for v in parts.values()]
    ys = [y[np.array(v)] for v in parts.values()]
    return Xs, ys, float(np.linalg.norm(Z, axis=1).max())


@functools.cache
def diabetes_silos(N: int) -> tuple[list[np.ndarray], list[np.ndarray], float]:
    """scikit-learn's diabetes: its 10 features standardised to mean 0 and variance 1 (as App. I.2 standardises age
    and BMI, L1528) and a column of ones, d = 11; the target unscaled (as the charges); sorted by the target and cut
    into N silos, the first N - 1 of size ceil(442/N) (as L1526 cuts the insurance data)."""
    from sklearn.datasets import load_diabetes

    X, t = load_diabetes(return_X_y=True)
    X = np.hstack([(X - X.mean(axis=0)) / X.std(axis=0), np.ones((len(t), 1))])
    order = np.argsort(t, kind="stable")
    size = math.ceil(len(t) / N)
    cuts = [order[i * size:(i + 1) * size] for i in range(N - 1)] + [order[(N - 1) * size:]]
    return [X[c] for c in cuts], [t[c].astype(np.float64) for c in cuts], float(np.linalg.norm(X, axis=1).max())


def silos(p: Mapping[str, Any]) -> tuple[list[np.ndarray], list[np.ndarray], float]:
    return digits_silos(p["d"], p["split_seed"]) if p["task"] == "digits" else diabetes_silos(p["N"])


def train_size(Xs: list[np.ndarray]) -> int:
    """Records per silo for training: 80% of the smallest silo (silos balanced for the noisy methods, as L1554)."""
    return int(0.8 * min(len(x) for x in Xs))


def split(Xs: list[np.ndarray], ys: list[np.ndarray], n: int, rng: np.random.Generator):
    """A fresh split: n training records per silo (N, n, d), the silos' other records pooled as the test set."""
    tr_X, tr_y, te_X, te_y = [], [], [], []
    for X, y in zip(Xs, ys):
        perm = rng.permutation(len(y))
        tr_X.append(X[perm[:n]])
        tr_y.append(y[perm[:n]])
        te_X.append(X[perm[n:]])
        te_y.append(y[perm[n:]])
    return np.stack(tr_X), np.stack(tr_y), np.concatenate(te_X), np.concatenate(te_y)


# --- App. I's calibration ------------------------------------------------------------------------------------------
def calibration(*, n: int, R: int, eps: float, L: float) -> dict[str, float]:
    """App. I (L1507, L1534, L1558): delta = 1/n^2; MB-SGD K = n sqrt(eps)/(2 sqrt(R)) (nearest integer in [1, n]),
    sigma^2 = 8 L^2 ln(1/delta) R/(n^2 eps^2); Local SGD sigma^2 = 8 L^2 ln(1/delta) R K/(n^2 eps^2)."""
    delta = 1.0 / n**2
    K = int(min(n, max(1, round(n * math.sqrt(eps) / (2 * math.sqrt(R))))))
    s2 = 8 * L**2 * math.log(1 / delta) * R / (n**2 * eps**2)
    return {"delta": delta, "K": K, "sigma_mb": math.sqrt(s2), "sigma_local": math.sqrt(s2 * K)}


def accounting(*, n: int, R: int, eps: float, G_over_L: float) -> dict[str, Any]:
    """The calibration's epsilon at (n, R, eps) for both algorithms, in units of L: replace-one (Def. 2) bracketed,
    add/remove beside it, and replace-one with the runs' own gradient bound G = G_over_L * L."""
    c = calibration(n=n, R=R, eps=eps, L=1.0)
    K, delta = int(c["K"]), c["delta"]
    out: dict[str, Any] = {"n": n, "R": R, "K": K, "delta": delta, "q_mb": K / n, "G_over_L": G_over_L}
    for alg, z, q, steps in (("mbsgd", c["sigma_mb"] * K, K / n, R), ("local", c["sigma_local"], 1 / n, R * K)):
        step_count = int(steps)
        interval = max(1e-4, 1e-3 * eps)
        if alg == "mbsgd":
            ro = appendix_i.bracket(z=z, q=q, steps=step_count, delta=delta, relation="replace_one", claim=eps)
        else:
            # the all-steps composition bounds what ran from above only (each silo sends its K-th iterate): the
            # lower estimate is the attained linear-loss round pair, composed over the R rounds (computed, as in
            # bracket, only where the upper value exceeds the claim)
            hi = appendix_i.epsilon(z=z, q=q, steps=step_count, delta=delta, relation="replace_one", interval=interval)
            ro = {"upper": hi, "lower": appendix_i.local_round_lower(z=z, K=K, q=q, rounds=R, delta=delta,
                                                                     interval=3 * interval) if hi > eps else None}
        ar = appendix_i.epsilon(z=z, q=q, steps=step_count, delta=delta, relation="add_remove", interval=interval)
        if G_over_L == 1.0:
            as_run = ro["upper"]
        elif G_over_L == 0.5:
            # replace-one's shift 2 at noise z / 0.5 = 2 z is add/remove's pair (shift 1, noise z) scaled by 2, exact in
            # binary floating point: dp-accounting builds the same PLD bit for bit (tests/test_isrl_experiments.py
            # pins it), so its epsilon is ``ar`` (issue 17)
            as_run = ar
        else:
            as_run = appendix_i.epsilon(z=z / G_over_L, q=q, steps=step_count, delta=delta, relation="replace_one",
                                        interval=interval)
        out[alg] = {"z": z, "steps": step_count, "q": q, "replace_one": ro["upper"],
                    "replace_one_lower": ro["lower"], "add_remove": ar, "replace_one_as_run": as_run}
    return out


# --- the runs -------------------------------------------------------------------------------------------------------
def tune_and_test(task: str, alg: str, Xtr, ytr, Xte, yte, *, R: int, K: int, M: int, sigma_per_L: float,
                  L_fixed: float | None, clips: list[float], steps: np.ndarray, reps: int,
                  rng: np.random.Generator) -> dict[str, float]:
    """Every (step, clip) configuration ``reps`` times; the one with the lowest mean training loss (configurations
    that diverged excluded and counted); its mean test error. sigma = sigma_per_L * L, with L the clip threshold, or
    L_fixed (2 max ||x||) without clipping."""
    grid = [(s, c) for c in clips for s in steps]
    eta = np.repeat(np.array([s for s, _ in grid]), reps)
    clip = np.repeat(np.array([c for _, c in grid]), reps)
    L = clip if L_fixed is None else np.full_like(clip, L_fixed)
    sigma = sigma_per_L * L if alg.endswith("_dp") else np.zeros_like(eta)
    run = fl.mbsgd if alg.startswith("mbsgd") else fl.local_sgd
    with np.errstate(over="ignore", invalid="ignore"):
        w, _ = run(TASKS[task], Xtr, ytr, R=R, K=K, M=M, sigma=sigma, eta=eta, clip=clip, rng=rng)
        ok = np.isfinite(w).all(axis=1)
        w = np.where(ok[:, None], w, 0.0)
        tr = fl.loss(TASKS[task], w, Xtr.reshape(-1, Xtr.shape[-1]), ytr.reshape(-1))
    tr = np.where(ok & np.isfinite(tr), tr, np.inf).reshape(len(grid), reps)
    err = test_error(task, w, Xte, yte, ytr).reshape(len(grid), reps)
    mean_tr = tr.mean(axis=1)
    if not np.isfinite(mean_tr).any():
        raise ValueError(f"{alg}: every configuration diverged")
    best = int(np.argmin(mean_tr))
    return {"error": float(err[best].mean()), "train_loss": float(mean_tr[best]), "step": float(grid[best][0]),
            "clip": float(grid[best][1]), "diverged": int((~ok).sum())}


def test_error(task: str, w: np.ndarray, Xte: np.ndarray, yte: np.ndarray, ytr: np.ndarray) -> np.ndarray:
    """digits: misclassification rate (sign(<w, x>), sign(0) read as +1); diabetes: relative RMSE
    sqrt(sum (y - yhat)^2 / sum (y - mean(y_train))^2) (App. I.2, L1536)."""
    m = np.einsum("cd,md->cm", w, Xte)          # einsum without BLAS: no threads spinning on small products
    if task == "digits":
        return (np.where(m >= 0, 1.0, -1.0) != yte[None, :]).mean(axis=1)
    return np.sqrt(((m - yte[None, :]) ** 2).sum(axis=1) / ((yte - ytr.mean()) ** 2).sum())


def run_point(p: dict, trials: int, seq: Any) -> dict:
    t0 = time.perf_counter()
    Xs, ys, xmax = silos(p)
    n = train_size(Xs)
    clipped = clip_grid(p) != [math.inf]
    G_over_L = 1.0 if clipped else 0.5           # logistic: ||grad|| <= ||x|| <= max ||x|| = L/2 (App. I.1's L)
    acct = {"paper": accounting(n=p["paper_n"], R=p["paper_R"], eps=p["eps"], G_over_L=G_over_L),
            "stand_in": accounting(n=n, R=p["R"], eps=p["eps"], G_over_L=G_over_L)}
    t_acc = time.perf_counter() - t0
    cal = calibration(n=n, R=p["R"], eps=p["eps"], L=1.0)
    K = int(cal["K"])
    splits = max(2, trials // p["trials_per_run"])
    grids = {"mbsgd": np.exp(np.linspace(p["mb_step_lo"], p["mb_step_hi"], p["steps"])),
             "local": np.exp(np.linspace(p["local_step_lo"], p["local_step_hi"], p["steps"]))}
    res: dict[str, list[dict]] = {a: [] for a in ALGS}
    for child in seq.spawn(splits):
        rng = np.random.Generator(np.random.PCG64(child))
        Xtr, ytr, Xte, yte = split(Xs, ys, n, rng)
        for alg in ALGS:
            res[alg].append(tune_and_test(
                p["task"], alg, Xtr, ytr, Xte, yte, R=p["R"], K=K, M=p["M"],
                sigma_per_L=cal["sigma_mb"] if alg.startswith("mbsgd") else cal["sigma_local"],
                L_fixed=None if clipped else 2 * xmax, clips=clip_grid(p),
                steps=grids["mbsgd" if alg.startswith("mbsgd") else "local"], reps=p["reps"], rng=rng))
    return {"params": p, "eps": p["eps"], "task": p["task"], "n": n, "N": len(Xs), "K": K, "delta": cal["delta"],
            "L": (None if clipped else 2 * xmax), "sigma_mb_per_L": cal["sigma_mb"],
            "sigma_local_per_L": cal["sigma_local"], "accounting": acct, "splits": splits,
            "errors": {a: [r["error"] for r in res[a]] for a in ALGS},
            "chosen": {a: [{k: r[k] for k in ("step", "clip", "train_loss", "diverged")} for r in res[a]]
                       for a in ALGS},
            "seconds": time.perf_counter() - t0, "seconds_accountant": t_acc}


# --- the report -----------------------------------------------------------------------------------------------------
def report(r: dict) -> tuple[list[str], list[str]]:
    pts = r["points"]
    p0 = pts[0]
    prm = p0["params"]
    metric = "test misclassification rate" if p0["task"] == "digits" else "relative test RMSE (App. I.2)"
    data = ("scikit-learn's digits, PCA to d = {d}, odd vs even, 25 silos by (odd, even) pair".format(d=prm["d"])
            if p0["task"] == "digits" else f"scikit-learn's diabetes (10 standardised features and an intercept, d = 11), "
                                            f"{p0['N']} silos by sorted target")
    bullets = [*mechanism_header(r),
               f"- Stand-in: {data}; n = {p0['n']} training records per silo (80% of the smallest silo), the rest "
               f"pooled as the test set; M = {prm['M']} of N = {p0['N']} silos per round, R = {prm['R']}; "
               f"{p0['splits']} fresh train/test splits per point",
               "- Calibration (App. I, L1507/L1534/L1558): delta = 1/n^2, K = n sqrt(eps)/(2 sqrt(R)), MB-SGD sigma^2 = "
               "8 L^2 ln(1/delta) R/(n^2 eps^2), Local SGD sigma^2 times K (K local steps; our reading: the same K as "
               "MB-SGD's batch). L = " + ("2 max ||x|| (App. I.1)" if p0["L"] else "the clip threshold (App. I.2)"),
               "- Accounting: dp-accounting PLD of the worst pair for the sampling the runs use (a uniform K-subset a "
               "round; one uniform record a local step), replace-one (Def. 2, sensitivity 2L/K; 'upper' pessimistic, "
               "'lower' optimistic where needed) and add/remove with Poisson sampling (Abadi et al.'s setting) beside "
               "it; 'as run' uses the runs' own gradient bound (" + (
                   "max ||x|| = L/2 for the logistic loss" if p0["L"] else "the clip threshold = L") + ")",
               f"- Metric: {metric}; tuning as App. I: {prm['steps']} log-spaced steps per grid"
               + (f" x clips {{{prm['clips']}}}" if p0["L"] is None else "") + f", {prm['reps']} runs each, the lowest "
               "mean training loss kept (tuning and L are not private, as in the paper, L1516)",
               "- Seconds per point: " + ", ".join(f"{p['seconds']:.1f} (accountant {p['seconds_accountant']:.1f})"
                                                   for p in pts)]
    body = ["| eps | setting | n | K | MB-SGD eps: replace-one (upper / lower) | add/remove | as run | "
            "Local SGD eps: replace-one (upper / lower) | add/remove | as run |", "|---|---|---|---|---|---|---|---|---|---|"]
    for pt in pts:
        for name, a in pt["accounting"].items():
            mb, lo = a["mbsgd"], a["local"]
            body.append(f"| {fmt(pt['eps'])} | {name} (R = {a['R']}) | {a['n']} | {a['K']} | {fmt(mb['replace_one'])} / "
                        f"{fmt(mb['replace_one_lower'])} | {fmt(mb['add_remove'])} | {fmt(mb['replace_one_as_run'])} | "
                        f"{fmt(lo['replace_one'])} / {fmt(lo['replace_one_lower'])} | {fmt(lo['add_remove'])} | "
                        f"{fmt(lo['replace_one_as_run'])} |")
    body += ["", f"{metric.capitalize()} (mean over splits +- 90% Student half-width, as the paper's 90% error bars):",
             "", "| eps | K | " + " | ".join(ALGS) + " | chosen steps (median) |", "|---|---|" + "---|" * len(ALGS) + "---|"]
    for pt in pts:
        cells = []
        for a in ALGS:
            ci = mean_ci(np.asarray(pt["errors"][a]), 0.90)
            cells.append(f"{ci.mean:.4f} +- {ci.mean - ci.lower:.4f}")
        steps = ", ".join(f"{a}: {fmt(float(np.median([c['step'] for c in pt['chosen'][a]])))}" for a in ALGS)
        body.append(f"| {fmt(pt['eps'])} | {pt['K']} | " + " | ".join(cells) + f" | {steps} |")
    body.append("")
    return bullets, body


MECHANISM_ENTRIES: tuple[MechanismEntry, ...] = (
    MechanismEntry(
        name="isrl_experiments",
        description="seed 004's experiments (Sec. 6, App. I): ISRL-DP MB-SGD, ISRL-DP Local SGD and their non-private "
                    "versions on stand-in data, with App. I's calibration accounted under both conventions",
        citation="seed 004: Sec. 6 (L268-278), App. I (L1491-1558): Local SGD (L1491), calibration (L1507, L1534, "
                 "L1558), MNIST setup (L1497-1507), insurance setup (L1522-1536)",
        params=IsrlExperimentParams, sweepable=("eps",), whole=(), rules=rules, run_point=run_point,
        checks=ISRL_EXP_CHECKS, threat_model="isrl", report=report, check_rules=ISRL_EXP_RULES,
        data="scikit-learn's 8x8 digits (PCA, odd vs even, 25 silos by digit pair) stand in for MNIST, scikit-learn's "
             "diabetes (silos by sorted target) for the health-insurance data; the calibration is also accounted at "
             "the paper's n"),
)
