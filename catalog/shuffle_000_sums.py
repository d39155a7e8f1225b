"""Seed 000's summation protocols as mechanisms (``kind: mechanism``): P_1D (Algorithm 1, Lemma 3.1) and P_VEC
(Algorithm 2, Thm 3.2) with the paper's parameters, run many times on fixed inputs drawn from the spec's seed: the
runs' error (vectorised, in chunks), the exact variance of the estimate on those inputs, the rounding-only and
noise-only tests of unbiasedness, and the privacy computed from the parameters as run. Their checks are
verifiers/checks/mechanism.py's."""
from __future__ import annotations

import math
import time
from typing import Any, Mapping

import numpy as np
from pydantic import Field

from algorithms import shuffle_sum
from catalog.base import MechanismEntry, MechanismParams, RuleError, fmt, mechanism_header
from verifiers.accountants import binomial_privacy
from verifiers.checks.mechanism import PROTOCOL_CHECKS, PROTOCOL_RULES

MAX_VALUES = 10**6                # n d input values per run
CHUNK_VALUES = 2_000_000          # input values (runs x users x coordinates) rounded per chunk
ROUNDING_VALUES = 10_000_000      # input values rounded for the rounding-only test of every point
NOISE_DRAWS_MIN, NOISE_DRAWS_MAX = 10**7, 3 * 10**7     # draws of the users' summed noise for the noise-only test


class ProtocolParams(MechanismParams):
    n: int = Field(ge=1, le=10**6, description="users")
    eps: float = Field(gt=0, le=15, description="the claimed epsilon (the paper's results need eps <= 15)")
    delta: float = Field(ge=1e-12, lt=0.5, description="the claimed delta (the paper's results need delta < 1/2)")
    Delta: float = Field(1.0, gt=0, description="p1d: inputs in [0, Delta]; pvec: Delta_2, inputs of norm <= Delta_2")
    d: int = Field(1, ge=1, le=10_000, description="pvec: dimension")


def _max_values(p: Mapping[str, Any]) -> None:
    if p["n"] * p["d"] > MAX_VALUES:
        raise RuleError(f"n d = {p['n'] * p['d']:.0f} inputs per run (allowed: <= {MAX_VALUES})")


def p1d_rules(p: Mapping[str, Any]) -> None:
    if p["d"] != 1:
        raise RuleError("p1d sums scalars: d must be 1 (and cannot be swept)", field="d")
    _max_values(p)


def inputs(protocol: str, n: int, d: int, Delta: float, rng: np.random.Generator) -> np.ndarray:
    """The point's fixed inputs: P_1D, n scalars uniform on [0, Delta]; P_VEC, n vectors with uniform directions
    and norms Delta_2 U^(1/d) (uniform in the ball)."""
    if protocol == "p1d":
        return rng.uniform(0.0, Delta, size=n)
    v = rng.standard_normal((n, d))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v * (Delta * rng.random(n) ** (1 / d))[:, None]


def _run_point(protocol: str, p: dict, trials: int, seq: np.random.SeedSequence) -> dict:
    n, d, eps, delta, Delta = p["n"], p["d"], p["eps"], p["delta"], p["Delta"]
    data_rng, run_rng = (np.random.default_rng(s) for s in seq.spawn(2))
    x = inputs(protocol, n, d, Delta, data_rng)
    t0 = time.perf_counter()
    if protocol == "p1d":
        one = shuffle_sum.lemma31(n=n, eps=eps, delta=delta, Delta=Delta)
        truth = np.array([x.sum()])
        exact_var = np.atleast_1d(shuffle_sum.p1d_variance(x, one))
        run = lambda k: shuffle_sum.p1d(np.broadcast_to(x, (k, n)), one, run_rng)[:, None]   # noqa: E731
        analyzer_error = float(abs(shuffle_sum.p1d_estimate(shuffle_sum.expected_count(x, one), n, one) - x.sum()))
        rounded = x
        extra: dict = {}
        bound = shuffle_sum.p1d_variance_bound(n, one)
    else:
        pv = shuffle_sum.thm32(n=n, d=d, eps=eps, delta=delta, Delta2=Delta)
        one = pv.one_d
        truth = x.sum(axis=0)
        rounded = (x + Delta).T                                                         # (d, n): the P_1D inputs
        exact_var = shuffle_sum.p1d_variance(rounded, one)
        run = lambda k: shuffle_sum.pvec(np.broadcast_to(x, (k, n, d)), pv, run_rng)   # noqa: E731
        exact_mean = shuffle_sum.pvec_analyzer(shuffle_sum.expected_count(rounded, one), n, pv)
        analyzer_error = float(np.abs(exact_mean - truth).max())
        extra = {"eps_hat": pv.eps_hat, "delta_hat": pv.delta_hat}
        bound = shuffle_sum.pvec_mse_bound(n, d, pv)
    err_sum, sq1, sq2 = np.zeros(d), 0.0, 0.0
    chunk = max(1, CHUNK_VALUES // (n * d))
    done = 0
    while done < trials:
        k = min(chunk, trials - done)
        err = run(k) - truth
        se = (err * err).sum(axis=1)
        err_sum += err.sum(axis=0)
        sq1, sq2 = sq1 + float(se.sum()), sq2 + float((se * se).sum())
        done += k
    z_round, round_resolution = shuffle_sum.rounding_z(rounded, one, max(1, ROUNDING_VALUES // rounded.size), run_rng)
    # enough noise draws to resolve a grid step at z = 5 when the budget allows: (5 sd)^2 draws
    sd = math.sqrt(n * one.b * one.p * (1 - one.p))
    draws = int(min(NOISE_DRAWS_MAX, max(NOISE_DRAWS_MIN, math.ceil((5 * sd) ** 2))))
    z_noise, noise_resolution = shuffle_sum.noise_z(n, one, draws, run_rng)
    seconds_runs = time.perf_counter() - t0
    t1 = time.perf_counter()
    m = n * one.b
    if protocol == "p1d":
        pair = binomial_privacy.p1d_worst_pair(one.g)
        privacy = {"epsilon": binomial_privacy.exact_epsilon(m, one.p, pair, delta),
                   "claim": eps * (2 / one.g + 1.0), "pair": "x_u = 0 vs x'_u = Delta",
                   "method": "exact hockey-stick divergence of the analyzer's count on x_u = 0 vs Delta (other users on "
                             "the grid), both directions, against Lemma 3.1's eps (2/g + |x_u - x'_u|/Delta)"}
    else:
        acc, canary = binomial_privacy.pvec_epsilon(m, one.p, d, one.g, delta)
        privacy = {"epsilon": acc, "claim": eps, "pair": canary,
                   "method": "the largest epsilon over two canary pairs (no canary exceeds it; not a search of every "
                             "pair): Delta_2 e_1 vs -Delta_2 e_1 (one count moves by g: exact hockey-stick) and "
                             "(Delta_2/sqrt d) 1 vs its negation (every count moves: dp-accounting's PLD over the d "
                             "coordinates, pessimistic), against Thm 3.2's eps"}
    privacy["seconds"] = time.perf_counter() - t1
    return {"params": p, "protocol": {"g": one.g, "b": one.b, "p": one.p, "Delta": one.Delta} | extra,
            "trials": trials, "mean_error": (err_sum / trials).tolist(), "exact_variance": exact_var.tolist(),
            "sq_error_moments": [sq1 / trials, sq2 / trials], "mse_bound": bound, "privacy": privacy,
            "analyzer_error": analyzer_error, "rounding_z": z_round, "truth_scale": float(np.abs(truth).max()),
            "noise_z": z_noise, "noise_resolution": noise_resolution, "rounding_resolution": round_resolution,
            "count_scale": float(n * one.b * one.p + one.g * n),
            "seconds_runs": seconds_runs}


def run_p1d(p: dict, trials: int, seq: np.random.SeedSequence) -> dict:
    return _run_point("p1d", p, trials, seq)


def run_pvec(p: dict, trials: int, seq: np.random.SeedSequence) -> dict:
    return _run_point("pvec", p, trials, seq)


def slack_summary(points: list[dict]) -> str:
    """One line for the report: how far the computed epsilon is below the claim."""
    s = [p["privacy"]["claim"] / p["privacy"]["epsilon"] for p in points if p["privacy"]["epsilon"] > 0]
    return f"claimed / computed epsilon: {min(s):.3g} .. {max(s):.3g}" if s else "computed epsilon 0"


def report(r: dict) -> tuple[list[str], list[str]]:
    """The report's bullets (the protocol, the fixed parameters, the runs, the privacy) and its table of points."""
    field = r["sweep"]["field"] if r["sweep"] else None
    bullets = [*mechanism_header(r, label="Protocol", skip=("d",) if r["mechanism"] == "p1d" else ()),
               f"- Runs per point: {r['trials']}{' (quick mode)' if r['quick'] else ''} on fixed inputs drawn from seed "
               f"{r['seed']}; the analyzer's count is sampled exactly (one binomial draw of n b trials, rounding user by "
               f"user), never bit by bit",
               f"- Privacy: {r['points'][0]['privacy']['method']}; {slack_summary(r['points'])}"]
    body = [f"| {field or 'point'} | g | b | p | epsilon computed | epsilon claimed | MSE (runs) | MSE (exact) | "
            f"MSE bound | seconds (runs / privacy) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for p in r["points"]:
        pr, pc = p["privacy"], p["protocol"]
        mse_exact = sum(p["exact_variance"])
        body.append(f"| {fmt(p['value'])} | {pc['g']} | {pc['b']} | {pc['p']:.10f} | {fmt(pr['epsilon'])} | "
                    f"{fmt(pr['claim'])} | {fmt(p['sq_error_moments'][0])} | {fmt(mse_exact)} | "
                    f"{fmt(p['mse_bound'])} | {p['seconds_runs']:.2f} / {pr['seconds']:.2f} |")
    return bullets, body


MECHANISM_ENTRIES: tuple[MechanismEntry, ...] = (
    MechanismEntry(
        name="p1d", description="P_1D: shuffle sum of n scalars in [0, Delta] (one binomial count)",
        citation="seed 000, Algorithm 1 (P_1D, L105-128): shuffle sum of scalars in [0, Delta], Lemma 3.1",
        params=ProtocolParams, sweepable=("n", "eps", "delta"), whole=("n",), rules=p1d_rules, run_point=run_p1d,
        checks=PROTOCOL_CHECKS, threat_model="shuffle", report=report,
        check_rules=PROTOCOL_RULES),
    MechanismEntry(
        name="pvec", description="P_VEC: shuffle sum of n vectors of norm <= Delta_2 in d dimensions (P_1D per coordinate)",
        citation="seed 000, Algorithm 2 (P_VEC, L142-149): shuffle sum of vectors of norm <= Delta_2, Thm 3.2",
        params=ProtocolParams, sweepable=("n", "eps", "delta", "d"), whole=("n", "d"), rules=_max_values,
        run_point=run_pvec, checks=PROTOCOL_CHECKS, threat_model="shuffle", report=report,
        check_rules=PROTOCOL_RULES),
)
