"""Run a mechanism spec (engine/kinds/mechanism/spec.py): at every sweep point, the paper's parameters, fixed inputs
drawn from the spec's seed, ``trials`` runs of the protocol (vectorised, in chunks), the exact variance of the
estimate on those inputs, and the privacy computed from the parameters as run; then the checks."""
from __future__ import annotations

import datetime as dt
import math
import time
from dataclasses import asdict
from typing import Callable

import numpy as np

from algorithms import shuffle_sum
from engine.kinds.learning.runner import _jsonable, _value_key, run_stamp
from engine.kinds.mechanism.spec import MECHANISMS, ProtocolSpec
from engine.specbase import RESULTS_SCHEMA
from verifiers.accountants import binomial_privacy
from verifiers.checks.mechanism import PROTOCOL_CHECKS

CHUNK_VALUES = 2_000_000          # input values (runs x users x coordinates) rounded per chunk
ROUNDING_VALUES = 10_000_000      # input values rounded for the rounding-only test of every point
NOISE_DRAWS_MIN, NOISE_DRAWS_MAX = 10**7, 3 * 10**7     # draws of the users' summed noise for the noise-only test


def inputs(protocol: str, n: int, d: int, Delta: float, rng: np.random.Generator) -> np.ndarray:
    """The point's fixed inputs: P_1D, n scalars uniform on [0, Delta]; P_VEC, n vectors with uniform directions
    and norms Delta_2 U^(1/d) (uniform in the ball)."""
    if protocol == "p1d":
        return rng.uniform(0.0, Delta, size=n)
    v = rng.standard_normal((n, d))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v * (Delta * rng.random(n) ** (1 / d))[:, None]


def run_point(spec: ProtocolSpec, value: float | None, trials: int) -> dict:
    p = spec.point(value)
    n, d, eps, delta, Delta = p["n"], p["d"], p["eps"], p["delta"], p["Delta"]
    seq = np.random.SeedSequence([spec.seed, 7], spawn_key=(_value_key(value),))
    data_rng, run_rng = (np.random.default_rng(s) for s in seq.spawn(2))
    x = inputs(spec.mechanism, n, d, Delta, data_rng)
    t0 = time.perf_counter()
    if spec.mechanism == "p1d":
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
    if spec.mechanism == "p1d":
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
    return {"value": value, "params": p, "protocol": {"g": one.g, "b": one.b, "p": one.p, "Delta": one.Delta} | extra,
            "trials": trials, "mean_error": (err_sum / trials).tolist(), "exact_variance": exact_var.tolist(),
            "sq_error_moments": [sq1 / trials, sq2 / trials], "mse_bound": bound, "privacy": privacy,
            "analyzer_error": analyzer_error, "rounding_z": z_round, "truth_scale": float(np.abs(truth).max()),
            "noise_z": z_noise, "noise_resolution": noise_resolution, "rounding_resolution": round_resolution,
            "count_scale": float(n * one.b * one.p + one.g * n),
            "seconds_runs": seconds_runs}


def run(spec: ProtocolSpec, *, quick: bool = False,
        progress: Callable[[int, int], Callable[[int], None]] | None = None) -> dict:
    started = dt.datetime.now(dt.timezone.utc)
    trials = max(100, spec.trials // 10) if quick else spec.trials
    values = spec.values()
    tick = progress(len(values), 1) if progress else (lambda k: None)
    points = []
    for v in values:
        points.append(run_point(spec, v, trials))
        tick(1)
    checks = [_jsonable(asdict(PROTOCOL_CHECKS.get(c.kind)(c, spec.mechanism, points))) for c in spec.checks]
    counts = {k: sum(c["verdict"] == k for c in checks) for k in ("pass", "fail", "inconclusive", "inapplicable")}
    return {"schema": RESULTS_SCHEMA, "kind": "mechanism", "name": spec.name, "description": spec.description,
            "spec": spec.model_dump(mode="json"), "mechanism": spec.mechanism, "citation": MECHANISMS[spec.mechanism],
            "sweep": None if spec.sweep is None else {"field": spec.sweep.field}, "points": _jsonable(points),
            "checks": checks, "verdict_counts": counts, "seed": spec.seed, "trials": trials, "quick": quick,
            "started": started.isoformat(timespec="seconds"),
            "seconds": (dt.datetime.now(dt.timezone.utc) - started).total_seconds(), "reused_trials": 0,
            **run_stamp()}


def slack_summary(points: list[dict]) -> str:
    """One line for the report: how far the computed epsilon is below the claim."""
    s = [p["privacy"]["claim"] / p["privacy"]["epsilon"] for p in points if p["privacy"]["epsilon"] > 0]
    return f"claimed / computed epsilon: {min(s):.3g} .. {max(s):.3g}" if s else "computed epsilon 0"

