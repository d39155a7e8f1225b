"""Seed 003, chapter 3 (Jiang's thesis; Lnnn = line of ../shared/seeds/003_56e8b1c3300cdeae.txt): DaRRM SAMPLED, as
a mechanism (``kind: mechanism``, ``darrm_sampled``): the K mechanisms' bits, the gamma coin and the fair coin drawn
(algorithms/darrm_sampler.py), never the exact laws. Two views of the exact computation of catalog/darrm_003.py:

- the audit: at the corner configuration where the exact epsilon of the audited gamma is largest (the multiset of
  Lemma 3.6.1's corners, the output and the order ``dp.exact_epsilon``'s maximum is at, chosen before any run),
  ``trials`` runs on each of the two neighbouring configurations; the test "say the first when the output is o" gives
  a Clopper-Pearson lower bound on epsilon at the claimed delta (verifiers/audit.py), compared with the claimed
  m eps (and with the exact epsilon at that corner, which it must not exceed either);
- the utility: for each named gamma, DaRRM's error Pr[g(S) = 1] - Pr[out = 1] simulated (the mean of g(S) - out
  over ``trials // 10`` runs, on the same runs' bits) at i.i.d. and random configurations and under the LP's prior
  (p_i i.i.d. U[0.5, 1], drawn afresh each run), beside the exact value of Eq. B.56 (L3358).

gamma_opt is the LP's (verifiers/accountants/darrm_privacy.optimal_gamma, uniform prior on [0.5, 1]^K)."""
from __future__ import annotations

import math
import time
from typing import Any, Literal, Mapping

import numpy as np
from pydantic import Field

from algorithms import darrm, darrm_sampler
from catalog import darrm_003
from catalog.base import MechanismEntry, MechanismParams, fmt, mechanism_header
from verifiers.accountants import darrm_privacy as dp
from verifiers.checks.darrm_sampled import DARRM_SAMPLED_CHECKS, DARRM_SAMPLED_RULES

MAX_MULTISETS = 50_000           # corner multisets of one point (K = 11 with Delta > 0: 31824)
IID_P = (0.3, 0.45, 0.5, 0.55, 0.7)      # OUR CHOICE: i.i.d. configurations of the utility simulation
RANDOM_CONFIGS = 2                # OUR CHOICE: configurations with p_i i.i.d. U[0, 1], drawn once from the seed
PRIOR = (0.5, 1.0)                # the LP's prior (B.61, L3404): p_i i.i.d. U[0.5, 1]
UTILITY_GAMMAS = ("sub", "dsub", "const", "opt")


class SampledParams(MechanismParams):
    K: int = Field(ge=3, le=21, description="mechanisms (odd, Problem 3.1.1)")
    m: int = Field(ge=1, le=21, description="privacy allowance: the output is claimed (m eps, delta)-DP")
    eps: float = Field(gt=0, le=2, description="each mechanism's epsilon")
    Delta: float = Field(0.0, ge=0, le=0.01, description="each mechanism's delta (0: pure DP)")
    gamma: Literal["sub", "const", "opt"] = Field(
        "opt", description="the audited noise function: sub (Lemma 3.4.1), const (RR, Lemma B.1.1) or opt (the LP); "
                           "each claimed (m eps, 1-(1-Delta)^m)-DP for every neighbouring pair")


def rules(p: Mapping[str, Any]) -> None:
    darrm_003.rules(p, MAX_MULTISETS)


def named_gammas(p: Mapping[str, Any], laws: dp.CornerLaws) -> dict[str, dict[str, Any]]:
    """The chapter's noise functions at this point with their claims (catalog/darrm_003.gammas), and the LP's."""
    named = {k: v for k, v in darrm_003.gammas(p).items() if k in UTILITY_GAMMAS}
    delta = darrm_003.claimed_delta(p)
    opt = dp.optimal_gamma(laws, p["K"], p["m"], p["eps"], delta)
    named["opt"] = {"gamma": opt.gamma, "delta": delta, "claim": p["m"] * p["eps"], "scope": "every pair",
                    "source": "the LP (3.2)-(3.3) (L931-939) over Lemma 3.6.1's corner rows, prior U[0.5, 1]^K"}
    return named


def worst_pair(laws: dp.CornerLaws, gamma: np.ndarray, delta: float) -> dict[str, Any]:
    """Where the exact epsilon of DaRRM_gamma at delta is largest: the corner multiset, the output o and the order
    (which of D, D' is 'first'), with the exact probabilities of o on both and the K mechanisms' p on both."""
    worst = dp.exact_epsilon(laws, gamma, delta)
    i = int(np.flatnonzero((laws.counts == np.array(worst.counts)).all(axis=1))[0])
    w1, w0 = darrm.output_weights(gamma)
    cand = []
    for o, w in ((1, w1), (0, w0)):
        P, Q = float(laws.alpha[i] @ w), float(laws.alpha_p[i] @ w)
        cand += [(o, False, P, Q), (o, True, Q, P)]
    loss = [(math.log((a - delta) / b) if b > 0 else math.inf) if a - delta > 0 else -math.inf
            for _, _, a, b in cand]
    o, swapped, first, second = cand[int(np.argmax(loss))]
    p_d = np.repeat(laws.corners[:, 0], worst.counts)
    p_dp = np.repeat(laws.corners[:, 1], worst.counts)
    if swapped:
        p_d, p_dp = p_dp, p_d
    return {"exact": worst.epsilon, "counts": list(worst.counts), "output": o, "swapped": swapped,
            "prob_first": first, "prob_second": second, "p_first": p_d.tolist(), "p_second": p_dp.tolist()}


def audit(p: Mapping[str, Any], g: Mapping[str, Any], laws: dp.CornerLaws, n: int,
          rng: np.random.Generator) -> dict[str, Any]:
    """The audit of the spec's gamma at its worst corner pair: n runs on each side, the test fixed in advance."""
    gam, delta = g["gamma"], g["delta"]
    at = worst_pair(laws, gam, delta)
    first = darrm_sampler.tally(darrm_sampler.fixed(np.array(at["p_first"])), gam, n, rng)
    second = darrm_sampler.tally(darrm_sampler.fixed(np.array(at["p_second"])), gam, n, rng)
    o = at["output"]
    hits_first = first.ones if o == 1 else n - first.ones
    hits_second = second.ones if o == 1 else n - second.ones
    return at | {"gamma_name": p["gamma"], "claim": g["claim"], "delta": delta, "runs_per_side": n,
                 "hits_first": hits_first, "hits_second": hits_second}


def b56(alpha: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """Eq. B.56 (L3358) inside its absolute value: (1/2) sum_{l >= (K+1)/2} (alpha_l - alpha_{K-l}) (1 - gamma(l)),
    which is Pr[g(S) = 1] - Pr[out = 1] for a symmetric gamma (rows of ``alpha``: laws of L)."""
    K = alpha.shape[-1] - 1
    up = np.arange((K + 1) // 2, K + 1)
    return 0.5 * (alpha[..., up] - alpha[..., K - up]) @ (1 - np.asarray(gamma)[up])


def utility(p: Mapping[str, Any], named: Mapping[str, Mapping[str, Any]], n: int,
            rng: np.random.Generator) -> list[dict[str, Any]]:
    """Per configuration and gamma: the simulated mean and variance of g(S) - out over n runs, the exact value by
    Eq. B.56 and the exact |error| of algorithms/darrm.error."""
    K = p["K"]
    configs: list[tuple[str, Any, np.ndarray]] = [
        (f"iid p = {q:g}", darrm_sampler.fixed(np.full(K, q)), darrm.poisson_binomial(np.full((1, K), q))[0])
        for q in IID_P]
    for j in range(RANDOM_CONFIGS):
        v = rng.random(K)
        configs.append((f"random p #{j + 1} ({', '.join(f'{x:.2f}' for x in v)})", darrm_sampler.fixed(v),
                        darrm.poisson_binomial(v[None, :])[0]))
    # under the prior each S_i is marginally Bernoulli((lo + hi)/2), independently: E[alpha] = Bin(K, 0.75)
    configs.append((f"prior p_i ~ U[{PRIOR[0]:g}, {PRIOR[1]:g}]", darrm_sampler.uniform_prior(K, *PRIOR),
                    dp.binomial_laws(K, np.array([sum(PRIOR) / 2]))[0]))
    rows = []
    for label, draw, alpha in configs:
        for name in UTILITY_GAMMAS:
            gam = named[name]["gamma"]
            t = darrm_sampler.tally(draw, gam, n, rng)
            mean = t.diff_sum / n
            rows.append({"config": label, "gamma": name, "runs": n, "sim_mean": mean,
                         "sim_var": max(t.diff_sq / n - mean * mean, 0.0) * n / (n - 1), "nonzero": t.diff_sq,
                         "exact_b56": float(b56(alpha, gam)), "exact_abs_error": float(darrm.error(alpha[None, :], gam)[0])})
    return rows


def run_point(p: dict, trials: int, seq: Any) -> dict:
    t0 = time.perf_counter()
    s_audit, s_util = (np.random.default_rng(s) for s in seq.spawn(2))
    laws = dp.corner_laws(p["K"], p["eps"], p["Delta"])
    named = named_gammas(p, laws)
    a = audit(p, named[p["gamma"]], laws, trials, s_audit)
    u = utility(p, named, max(trials // 10, 1000), s_util)
    return {"params": p, "audit": a, "utility": u, "gammas": {k: v["gamma"].tolist() for k, v in named.items()},
            "privacy": {"epsilon": a["exact"], "claim": a["claim"]}, "seconds": time.perf_counter() - t0}


def report(r: dict) -> tuple[list[str], list[str]]:
    field = r["sweep"]["field"] if r["sweep"] else None
    pts = r["points"]
    a0 = pts[0]["audit"]
    bullets = [*mechanism_header(r),
               "- Sampled: every run draws the K mechanisms' bits, the count L, the gamma coin and the fair coin "
               "(algorithms/darrm_sampler.py); no exact law enters the runs",
               f"- Audit: the audited gamma ({a0['gamma_name']}) at the corner multiset, output and order where its "
               f"exact epsilon is largest (fixed before the runs); {a0['runs_per_side']} runs per side; the test 'say "
               "the first data set when the output is o' with one-sided Clopper-Pearson limits (Bonferroni over the "
               "two rates) at the check's confidence; fails if the lower bound exceeds the claimed m eps or the exact "
               "epsilon",
               "- Utility: g(S) - out simulated on the same runs; the interval is two-sided (normal approximation, "
               "the check's confidence, Bonferroni over every configuration and gamma) and must contain Eq. B.56's "
               "exact value",
               f"- Seconds per point: {min(p['seconds'] for p in pts):.2f} .. {max(p['seconds'] for p in pts):.2f}"]
    body = [f"| {field or 'point'} | gamma | delta | claimed eps | exact eps (worst corner) | corner counts | output | "
            "exact Pr[o] first / second | sampled Pr[o] first / second |", "|---|---|---|---|---|---|---|---|---|"]
    for p in pts:
        a = p["audit"]
        n = a["runs_per_side"]
        body.append(f"| {fmt(p['value'])} | {a['gamma_name']} | {fmt(a['delta'])} | {fmt(a['claim'])} | "
                    f"{fmt(a['exact'])} | {tuple(a['counts'])} | {a['output']} | {fmt(a['prob_first'])} / "
                    f"{fmt(a['prob_second'])} | {fmt(a['hits_first'] / n)} / {fmt(a['hits_second'] / n)} |")
    body += ["", "Corner counts: how many mechanisms sit at each of Lemma 3.6.1's corners (p, p') = " +
             ", ".join(f"({fmt(c0)}, {fmt(c1)})" for c0, c1 in dp.corners(pts[0]['params']['eps'],
                                                                             pts[0]['params']['Delta'])) + ".", ""]
    return bullets, body


MECHANISM_ENTRIES: tuple[MechanismEntry, ...] = (
    MechanismEntry(
        name="darrm_sampled",
        description="seed 003's DaRRM sampled: a Clopper-Pearson audit at the exact worst corner pair, and the error "
                    "simulated beside Eq. B.56",
        citation="seed 003, chapter 3: Algorithm 1 (DaRRM, L865-880) sampled; Lemma 3.6.1's corners (L961-967) for the "
                 "audited pair; Def 3.3.4 (L826-830) and Eq. B.56 (L3358) for the error; gamma_Sub (Lemma 3.4.1, "
                 "L849-857), RR (Lemma B.1.1, L2364-2368), gamma_opt (the LP, L931-939)",
        params=SampledParams, sweepable=("K", "m", "eps", "Delta"), whole=("K", "m"), rules=rules, run_point=run_point,
        checks=DARRM_SAMPLED_CHECKS, threat_model="central", report=report, check_rules=DARRM_SAMPLED_RULES),
)
