"""Seed 003, chapter 2 (Jiang's thesis; Lnnn = line of ../shared/seeds/003_56e8b1c3300cdeae.txt; notes
../shared/notes/003a_thesis_ch2_ch3.md §1): correlated distributed mean estimation, no privacy (threat model none),
as the mechanism ``dme``: at each point the clients' vectors (identical, orthogonal basis vectors, or basis vectors
shared by groups, which sets the correlation R of Eq. 2.7), ``trials`` runs of Rand-k, Rand-k after one shared
rotation (App. A.1.1), Rand-k-Spatial (Max, Opt =
Eq. 2.11 with the true R, Avg) and Rand-Proj-Spatial with SRHT (Max, Opt, Avg, and T = 1), their squared errors and
the closed forms. Rand-Proj-Spatial's betabar comes from ``trials`` independent runs (the thesis's procedure, §2.4.3:
estimated by Monte Carlo, then the MSE on other runs). Numerics: algorithms/dme.py; checks: verifiers/checks/dme.py."""
from __future__ import annotations

import time
from typing import Any, Literal, Mapping

import numpy as np
from pydantic import Field
from scipy.stats import ortho_group
from threadpoolctl import threadpool_limits

from algorithms import dme
from catalog.base import MechanismEntry, MechanismParams, RuleError, fmt, mechanism_header
from verifiers.checks.dme import DME_CHECKS, DME_RULES
from verifiers.checks.dme_tasks import DME_TASK_RULES

SPATIAL = ("max", "opt", "avg")
LEMMA_RUNS = 50               # Lemma 2.4.1: runs decoded both ways


class DmeParams(MechanismParams):
    d: int = Field(256, ge=2, le=2048, description="dimension, a power of two (the Hadamard transform; the thesis: "
                                                    "1024, OUR default 256 for the SVD's cost)")
    n: int = Field(8, ge=2, le=256, description="clients")
    k: int = Field(4, ge=1, le=2048, description="numbers each client sends (n k <= d, the chapter's regime)")
    vectors: Literal["identical", "orthogonal", "groups"] = Field(
        "identical", description="identical: x_i = x (R = n - 1); orthogonal: distinct canonical basis vectors (R = "
                                 "0); groups: clients in groups of `group` sharing a basis vector (R = group - 1, §2.4.3)")
    group: int = Field(1, ge=1, le=256, description="groups: the group size (it must divide n)")
    data_seed: int = Field(0, ge=0, le=2**31, description="draws x for identical vectors (N(0, I_d) / sqrt d) and "
                                                          "which basis vectors")
    rotate: int = Field(0, ge=0, le=1, description="1: the vectors multiplied by one uniformly random orthogonal "
                                                   "matrix (drawn from data_seed): R, the norms and every closed form "
                                                   "unchanged, the coordinates dense (basis vectors' squared errors "
                                                   "spread widely: a coordinate is sent or not)")


def rules(p: Mapping[str, Any]) -> None:
    d, n, k = p["d"], p["n"], p["k"]
    if d & (d - 1):
        raise RuleError(f"d = {d} is not a power of two (the Hadamard transform)", field="d")
    if n * k > d:
        raise RuleError(f"n k = {n * k} > d = {d}: the chapter's results are for n k <= d", field="k")
    if p["vectors"] in ("orthogonal", "groups") and n > d:
        raise RuleError(f"n = {n} clients need {n} distinct basis vectors, d = {d}", field="n")
    if p["vectors"] == "groups" and n % p["group"]:
        raise RuleError(f"group = {p['group']} does not divide n = {n}", field="group")


def vectors(p: Mapping[str, Any]) -> np.ndarray:
    d, n = p["d"], p["n"]
    rng = np.random.default_rng(np.random.SeedSequence([p["data_seed"], 2003]))
    if p["vectors"] == "identical":
        return np.tile(rng.standard_normal(d) / np.sqrt(d), (n, 1))
    g = p["group"] if p["vectors"] == "groups" else 1
    basis = rng.choice(d, size=n // g, replace=False)
    X = np.eye(d)[np.repeat(basis, g)]
    return X @ ortho_group.rvs(d, random_state=rng) if p.get("rotate", 0) else X


def correlation(X: np.ndarray) -> float:
    """R of Eq. 2.7: sum_{i != l} <x_i, x_l> / sum_i ||x_i||^2."""
    G = X @ X.T
    return float((G.sum() - np.trace(G)) / np.trace(G))


def run_point(p: dict, trials: int, seq: Any) -> dict:
    """One point, BLAS held to one thread: the runs are many small SVDs, which OpenBLAS's threads slow down on a
    shared machine (dme_spatial_randk's quick run: 391 s with its default threads against 22 s with one, at a load of
    about 7 on 2 cores)."""
    with threadpool_limits(1):
        return _run_point(p, trials, seq)


def _run_point(p: dict, trials: int, seq: Any) -> dict:
    t0 = time.perf_counter()
    X = vectors(p)
    n, d, k = X.shape[0], X.shape[1], p["k"]
    R = correlation(X)
    xbar = X.mean(axis=0)
    s_idx, s_beta, s_rps, s_rot = (np.random.default_rng(s) for s in seq.spawn(4))
    out: dict = {"params": p, "trials": trials, "R": R, "norm2_sum": float(np.sum(X**2)),
                 "xbar_norm2": float(xbar @ xbar), "estimators": {}}

    def record(name: str, est: np.ndarray, closed: float | None, note: str) -> None:
        err = est - xbar
        out["estimators"][name] = {"sq_error": np.einsum("ij,ij->i", err, err).tolist(),
                                   "bias": err.mean(axis=0).tolist(), "bias_se": (err.std(axis=0, ddof=1) /
                                                                                  np.sqrt(len(err))).tolist(),
                                   "closed_form": closed, "closed_form_source": note}

    idx = dme.subsets(s_idx, trials, n, d, k)
    record("rand_k", dme.rand_k(X, idx), (d / k - 1) * float(np.sum(X**2)) / n**2, "Eq. 2.1")
    H = dme.hadamard(d)
    record("rand_k_rotated", dme.rand_k_rotated(X, idx, H, s_rot), (d / k - 1) * float(np.sum(X**2)) / n**2,
           "App. A.1.1: Eq. 2.1 unchanged by a shared rotation")
    for name in SPATIAL:
        T = dme.transform(name, n, R)
        beta = dme.spatial_beta(T, n, d, k)
        record(f"rand_k_spatial_{name}", dme.rand_k_spatial(X, idx, T, beta), dme.spatial_closed_form(X, T, beta, k),
               "Eq. 2.3 with its c1, c2 derived (notes 003a §1.3)")
    Ts = {name: dme.transform(name, n, R) for name in SPATIAL}
    cal, ranks_cal = dme.rps_multi(X, H, k, Ts, trials, s_beta)          # betabar's runs
    run, ranks = dme.rps_multi(X, H, k, Ts, trials, s_rps)                # the measured runs
    betas = {}
    for name in SPATIAL:
        beta = d / float(np.mean(cal[name][1]))
        betas[name] = beta
        closed = None
        if name == "max" and p["vectors"] == "identical":
            closed = (beta - 1) * float(X[0] @ X[0])
        record(f"rps_{name}", beta * run[name][0], closed, "A.12: (betabar - 1)||x||^2 (identical vectors)")
    record("rps_one", dme.rps_t_one(X, H, k, trials, s_rps), (d / k - 1) * float(np.sum(X**2)) / n**2, "Eq. 2.10")
    out["lemma241"] = lemma241(X, idx[:LEMMA_RUNS], R)
    all_ranks = np.concatenate([ranks_cal, ranks])
    out["rank"] = {"runs": int(all_ranks.size), "deficient": int(np.sum(all_ranks < n * k)),
                   "mean": float(all_ranks.mean()), "min": int(all_ranks.min()), "nk": n * k,
                   "distribution": {str(int(r)): int(c) for r, c in zip(*np.unique(all_ranks, return_counts=True))}}
    out["betabar"] = betas
    out["seconds"] = time.perf_counter() - t0
    return out


def lemma241(X: np.ndarray, idx: np.ndarray, R: float) -> dict:
    """Lemma 2.4.1: Eq. 2.5's decoder with G_i = E_i (the rows of I_d a client sends) is Rand-k-Spatial. The same
    runs decoded both ways, without betabar (the two conventions' betabar differ by the factor n): Eq. 2.5 through
    the generic SVD decoder of algorithms/dme.py (T on the eigenvalues of S = diag(M_j)), Eq. 2.2 per coordinate,
    sum_i x_i(j) / T(M_j). Returns the largest difference relative to the largest entry, per T."""
    n, d = X.shape
    k = idx.shape[2]
    eye = np.eye(d)
    worst = {}
    for name in ("one", *SPATIAL):
        T = dme.transform(name, n, R)
        diff = 0.0
        for t in range(idx.shape[0]):
            B = np.vstack([eye[idx[t, i]] for i in range(n)])
            y = np.concatenate([X[i, idx[t, i]] for i in range(n)])
            generic, _, _ = dme.rps_once(B, y, T)
            per_coord = dme.rand_k_spatial(X, idx[t:t + 1], T, float(n))[0]      # beta = n undoes its 1/n
            diff = max(diff, float(np.max(np.abs(generic - per_coord)) / max(np.max(np.abs(per_coord)), 1e-300)))
        worst[name] = diff
    return {"runs": int(idx.shape[0]), "k": k, "max_rel_diff": worst}


def report(r: dict) -> tuple[list[str], list[str]]:
    pts = r["points"]
    p0 = pts[0]
    bullets = [*mechanism_header(r),
               f"- Each point: {p0['trials']} runs of every estimator on the same vectors; Rand-Proj-Spatial's betabar "
               f"from {p0['trials']} independent runs (d / mean of sum_j lam_j / T(lam_j), A.9 for T = Max); the "
               "rank of S over both sets of runs",
               f"- Seconds per point: {min(p['seconds'] for p in pts):.1f} .. {max(p['seconds'] for p in pts):.1f}"]
    names = list(p0["estimators"])
    body = ["| point | R | rank deficient / runs | " + " | ".join(names) + " |", "|" + "---|" * (3 + len(names))]
    for pt in pts:
        cells = []
        for nm in names:
            e = pt["estimators"][nm]
            m = float(np.mean(e["sq_error"]))
            cells.append(fmt(m) + ("" if e["closed_form"] is None else f" ({fmt(e['closed_form'])})"))
        body.append(f"| {fmt(pt['value'])} | {fmt(pt['R'])} | {pt['rank']['deficient']} / {pt['rank']['runs']} | "
                    + " | ".join(cells) + " |")
    body += ["", "Each cell: the mean squared error over the runs (the closed form in brackets, where there is one).", ""]
    return bullets, body


MECHANISM_ENTRIES: tuple[MechanismEntry, ...] = (
    MechanismEntry(
        name="dme",
        description="seed 003 ch. 2: correlated distributed mean estimation, Rand-k, Rand-k-Spatial and "
                    "Rand-Proj-Spatial (SRHT), their MSE against the closed forms and each other (no privacy)",
        citation="seed 003 (Jiang's thesis) ch. 2: Eqs. 2.1-2.3, 2.5-2.11, Thm 2.4.3, Thm 2.4.4, §2.4.1 / Fig. 2.2, "
                 "§2.4.3 / Fig. 2.3, App. A.3.2",
        params=DmeParams, sweepable=("n", "k", "group", "d"), whole=("n", "k", "group", "d"),
        rules=rules, run_point=run_point, checks=DME_CHECKS, threat_model="none", report=report,
        check_rules=DME_RULES | DME_TASK_RULES),
)
