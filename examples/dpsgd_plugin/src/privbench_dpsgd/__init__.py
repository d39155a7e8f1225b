"""A privbench plugin (see privbench's catalog/plugins.py): textbook DP-SGD, as a user outside privbench would
bring it, with its own privacy claim, checked by privbench's machinery.

The algorithm (Abadi et al. 2016): logistic regression on n examples; each of T steps samples every example
independently with probability q (Poisson), clips each sampled example's gradient to l2 norm C, adds N(0, sigma^2 C^2
I) to their sum and steps by -eta (sum + noise) / (q n). Neighbours: one example added or removed.

The claim (this plugin's "theorem"): the run is (eps, delta)-DP with eps from the RDP of the Poisson-subsampled
Gaussian at integer orders (Mironov, Talwar & Zhang 2019, Sec. 3.3: the binomial expansion) composed T times and
converted by eps = min_alpha T rdp(alpha) + log(1/delta)/(alpha - 1). The plugin computes it itself, in its own
code, as a paper's authors would.

Its checks, each able to fail:
- ``accounting``: the claimed eps against dp-accounting's PLD accountant of what ran (its q, sigma and T): the claim
  below the PLD's figure less its discretisation error (T intervals of 1e-3) fails.
- ``audit``: a canary example whose clipped gradient is C e_1 in every step; the auditor knows every other example
  and reconstructs each step's noisy sum from consecutive iterates, scores the sum of their projections on e_1, and
  bounds eps from below (privbench's Clopper-Pearson audit); a bound above the claim fails.
- ``noise``: the variance of the noise in the released sums against sigma^2 C^2 (chi-square, two-sided).

``bug`` plants a fault for the demonstration: 1 adds noise sigma instead of sigma C; 2 skips the clipping.
"""
from __future__ import annotations

import math
import time
from typing import Any, Mapping

import numpy as np
from pydantic import Field
from scipy import stats

from algorithms.registry import Registry
from catalog.base import MechanismEntry, MechanismParams, RuleError, fmt, mechanism_header
from verifiers.audit import lower_bound
from verifiers.checks.base import CheckResult
from verifiers.threat_models import Neighbouring

ORDERS = tuple(range(2, 257))


class DpsgdParams(MechanismParams):
    n: int = Field(ge=10, le=100_000, description="examples")
    d: int = Field(5, ge=1, le=100, description="features")
    q: float = Field(gt=0, le=1, description="Poisson sampling rate")
    sigma: float = Field(gt=0, le=100, description="noise multiplier: N(0, sigma^2 C^2 I) on the clipped sum")
    C: float = Field(1.0, gt=0, le=100, description="clipping norm")
    T: int = Field(ge=1, le=10_000, description="steps")
    eta: float = Field(0.5, gt=0, le=10, description="step size")
    delta: float = Field(1e-5, gt=0, lt=0.1, description="delta of the claim")
    audit_trials: int = Field(2000, ge=200, le=10**6, description="runs on each side of the canary pair")
    bug: int = Field(0, ge=0, le=2, description="a planted fault: 0 none, 1 noise sigma (not sigma C), 2 no clipping")


def rules(p: Mapping[str, Any]) -> None:
    if p["n"] * p["d"] * p["T"] > 5 * 10**8:
        raise RuleError(f"n d T = {p['n'] * p['d'] * p['T']:.3g} (allowed: <= 5e8); lower T or n", field="T")


# --- the plugin's own claim -----------------------------------------------------------------------------------

def _log_rdp(q: float, sigma: float, alpha: int) -> float:
    """alpha-1 times the order-alpha RDP of the Poisson-subsampled Gaussian (add/remove), integer alpha:
    log sum_k binom(alpha, k) (1-q)^(alpha-k) q^k exp((k^2 - k)/(2 sigma^2)), in log space."""
    k = np.arange(alpha + 1)
    logb = (math.lgamma(alpha + 1) - np.array([math.lgamma(i + 1) + math.lgamma(alpha - i + 1) for i in k]))
    terms = logb + (alpha - k) * math.log1p(-q) + k * math.log(q) + (k * k - k) / (2 * sigma**2) if q < 1 else \
        np.where(k == alpha, (k * k - k) / (2 * sigma**2), -np.inf)
    top = float(np.max(terms))
    return top + math.log(float(np.sum(np.exp(terms - top))))


def claimed_epsilon(q: float, sigma: float, T: int, delta: float) -> float:
    return min(T * _log_rdp(q, sigma, a) / (a - 1) + math.log(1 / delta) / (a - 1) for a in ORDERS)


# --- the algorithm --------------------------------------------------------------------------------------------

def _data(rng: np.random.Generator, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    x = rng.normal(size=(n, d)) / math.sqrt(d)
    w = np.ones(d)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-x @ w)), 1.0, -1.0)
    return x, y


def _grads(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return (-y / (1 + np.exp(y * (x @ w))))[:, None] * x


def _clip(g: np.ndarray, C: float) -> np.ndarray:
    norms = np.linalg.norm(g, axis=1, keepdims=True)
    return g * np.minimum(1.0, C / np.maximum(norms, 1e-300))


def dpsgd(rng: np.random.Generator, x: np.ndarray, y: np.ndarray, p: Mapping[str, Any], *,
          canary: np.ndarray | None = None) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """One DP-SGD run; returns the final w and, per step, the released noisy sum, its noise, and the clipped sum of
    the sampled examples other than the canary. ``canary``: the raw gradient of one more example, drawn like the
    others (probability q per step)."""
    n, q, C, s = x.shape[0], p["q"], p["C"], p["sigma"]
    w = np.zeros(x.shape[1])
    sums, noises, others = [], [], []
    for _ in range(p["T"]):
        mask = rng.random(n) < q
        g = _grads(w, x[mask], y[mask])
        total = (g if p["bug"] == 2 else _clip(g, C)).sum(axis=0)
        others.append(total)
        if canary is not None and rng.random() < q:
            total = total + (canary if p["bug"] == 2 else _clip(canary[None, :], C)[0])
        noise = rng.normal(size=w.size) * s * (1.0 if p["bug"] == 1 else C)
        sums.append(total + noise)
        noises.append(noise)
        w = w - p["eta"] * (total + noise) / (q * n)
    return w, sums, noises, others


def _llr(r: np.ndarray, q: float, a: float, s: float) -> float:
    """log of prod_t (q N(r_t; a, s^2) + (1 - q) N(r_t; 0, s^2)) / N(r_t; 0, s^2): the likelihood ratio of the
    canary's presence given the residual of each step on e_1 (the optimal test of the add/remove pair)."""
    return float(np.sum(np.logaddexp(math.log(q) + (2 * r * a - a * a) / (2 * s * s), math.log1p(-q)))) if q < 1 \
        else float(np.sum((2 * r * a - a * a) / (2 * s * s)))


def run_point(p: dict, trials: int, seq: Any, relation: Neighbouring | None = None) -> dict:
    t0 = time.perf_counter()
    data_rng, run_rng, audit_rng = (np.random.default_rng(s) for s in seq.spawn(3))
    x, y = _data(data_rng, p["n"], p["d"])
    losses, noise_sq, noise_count = [], 0.0, 0
    for _ in range(trials):
        w, _, noises, _ = dpsgd(run_rng, x, y, p)
        losses.append(float(np.mean(np.log1p(np.exp(-y * (x @ w))))))
        arr = np.asarray(noises)
        noise_sq += float((arr * arr).sum())
        noise_count += arr.size
    # the audit: a white-box adversary that knows the data set and which other examples each step sampled (a
    # strong adversary, as audits assume), so each step's residual (released sum minus the others' clipped sum) is
    # the canary's clipped gradient, if drawn, plus the noise; it scores the residuals' e_1 coordinates by the
    # likelihood ratio of the claimed mechanism (canary gradient C e_1, noise sigma C). The canary's raw gradient is
    # 10 C e_1: clipping brings it to C e_1. The audit runs the implementation on 20 other examples, T <= 50 steps.
    e1 = np.zeros(p["d"])
    e1[0] = 10 * p["C"]
    small = {**p, "T": min(p["T"], 50)}
    xa, ya = x[:20], y[:20]
    scores: dict[str, list[float]] = {"in": [], "out": []}
    for side, canary in (("in", e1), ("out", None)):
        for _ in range(p["audit_trials"]):
            _, sums, _, others = dpsgd(audit_rng, xa, ya, small, canary=canary)
            r = np.array([(s_ - o)[0] for s_, o in zip(sums, others)])
            scores[side].append(_llr(r, p["q"], p["C"], p["sigma"] * p["C"]))
    return {"params": p, "loss_mean": float(np.mean(losses)), "loss_sd": float(np.std(losses)),
            "claimed_eps": claimed_epsilon(p["q"], p["sigma"], p["T"], p["delta"]),
            "noise_sq": noise_sq, "noise_count": noise_count, "audit_in": scores["in"], "audit_out": scores["out"],
            "audit_T": small["T"], "seconds": time.perf_counter() - t0}


# --- checks -----------------------------------------------------------------------------------------------------

CITE = "privbench example plugin: DP-SGD (Abadi et al. 2016) with its RDP claim (Mironov, Talwar & Zhang 2019)"


def _result(check: Any, verdict: str, summary: str, rows: list[dict], *, measured: float | None,
            bound: float | None, confidence: float) -> CheckResult:
    return CheckResult(id=check.id, kind=check.kind, theorem=None, citation=f"{CITE} [not inventoried: a user's "
                       "plugin, not one of privbench's papers]", verdict=verdict, measured=measured, bound=bound,
                       confidence=confidence, summary=summary, rows=tuple(rows))


def accounting(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """The claim against dp-accounting's PLD (pessimistic) of the run's q, sigma, T: below it fails."""
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    rows, bad = [], []
    for pt in points:
        p = pt["params"]
        acc = pld_privacy_accountant.PLDAccountant(dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
                                                   value_discretization_interval=1e-3)
        acc.compose(dp_accounting.PoissonSampledDpEvent(p["q"], dp_accounting.GaussianDpEvent(p["sigma"])), p["T"])
        pld = float(acc.get_epsilon(p["delta"]))      # pessimistic: at or above the truth
        # the truth is at least pld minus the discretisation's error (at most T intervals): fail only below that
        floor = pld - p["T"] * 1e-3
        rows.append({"point": pt["value"], "claimed_eps": pt["claimed_eps"], "pld_eps": pld, "pld_floor": floor})
        if pt["claimed_eps"] < floor:
            bad.append(f"{pt['value']}: claimed {pt['claimed_eps']:.4g} < PLD {pld:.4g} (at least {floor:.4g})")
    top = max(rows, key=lambda r: r["pld_eps"] / r["claimed_eps"])
    return _result(check, "fail" if bad else "pass", "; ".join(bad) or
                   f"the claimed epsilon is at or above dp-accounting's PLD at every point (PLD / claim up to "
                   f"{top['pld_eps'] / top['claimed_eps']:.3f})", rows, measured=top["pld_eps"],
                   bound=top["claimed_eps"], confidence=1.0)


def audit(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """privbench's Clopper-Pearson lower bound from the canary scores; above the claim at the audited T fails (the
    claim at the audit's T <= 50 steps is recomputed, so a shorter audit is compared with its own claim)."""
    rows, bad = [], []
    for pt in points:
        p = pt["params"]
        claim = claimed_epsilon(p["q"], p["sigma"], pt["audit_T"], p["delta"])
        b = lower_bound(np.asarray(pt["audit_in"]), np.asarray(pt["audit_out"]), delta=p["delta"],
                        confidence=check.confidence)
        rows.append({"point": pt["value"], "audit_T": pt["audit_T"], "claim_at_audit_T": claim,
                     "epsilon_lower": b.epsilon_lower})
        if b.epsilon_lower > claim:
            bad.append(f"{pt['value']}: audit lower bound {b.epsilon_lower:.4g} > claim {claim:.4g}")
    top = max(rows, key=lambda r: r["epsilon_lower"] - r["claim_at_audit_T"])
    return _result(check, "fail" if bad else "pass", "; ".join(bad) or
                   f"not refuted: the audit's lower bound is at most the claim (largest {top['epsilon_lower']:.3g} "
                   f"against {top['claim_at_audit_T']:.3g}); an audit can refute a claim, never confirm it", rows,
                   measured=top["epsilon_lower"], bound=top["claim_at_audit_T"], confidence=check.confidence)


def noise(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """The noise added to the released sums: sum of squares / (sigma C)^2 ~ chi-square(count), two-sided."""
    rows, bad = [], []
    alpha = (1 - check.confidence) / len(points)
    for pt in points:
        p = pt["params"]
        stat = pt["noise_sq"] / (p["sigma"] * p["C"]) ** 2
        k = pt["noise_count"]
        lo, hi = stats.chi2.ppf(alpha / 2, k), stats.chi2.ppf(1 - alpha / 2, k)
        rows.append({"point": pt["value"], "variance_ratio": stat / k, "lower": lo / k, "upper": hi / k})
        if not lo <= stat <= hi:
            bad.append(f"{pt['value']}: noise variance {stat / k:.4g} x (sigma C)^2")
    return _result(check, "fail" if bad else "pass", "; ".join(bad) or "the released noise has variance "
                   "(sigma C)^2 at every point (chi-square, two-sided)", rows,
                   measured=max(r["variance_ratio"] for r in rows), bound=1.0, confidence=check.confidence)


CHECKS: Registry = Registry("DP-SGD example check kind")
CHECKS.add("accounting", accounting)
CHECKS.add("audit", audit)
CHECKS.add("noise", noise)


def report(r: dict) -> tuple[list[str], list[str]]:
    field = r["sweep"]["field"] if r["sweep"] else "point"
    bullets = [*mechanism_header(r), f"- {r['trials']} DP-SGD runs per point; the audit: "
               f"{r['points'][0]['params']['audit_trials']} runs per side of the canary pair"]
    body = [f"| {field} | claimed eps | final loss (mean) | seconds |", "|---|---|---|---|"]
    body += [f"| {fmt(p['value'])} | {fmt(p['claimed_eps'])} | {fmt(p['loss_mean'])} | {p['seconds']:.1f} |"
             for p in r["points"]]
    return bullets, body + [""]


MECHANISM_ENTRIES = (
    MechanismEntry(
        name="dpsgd_example",
        description="example plugin: textbook DP-SGD with Poisson sampling and its RDP claim",
        citation="Abadi et al. 2016 (DP-SGD); the claim by Mironov, Talwar & Zhang 2019 (integer-order RDP)",
        params=DpsgdParams, sweepable=("sigma", "q", "T"), whole=("T",), rules=rules, run_point=run_point,
        checks=CHECKS, threat_model="central", report=report,
        relations=(Neighbouring("record", "add_remove"),)),
)
