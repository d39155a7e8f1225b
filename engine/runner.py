"""Run a spec: build the problem, resolve the calibration, run the seeded trials (vectorised, in
memory-bounded chunks), measure, and hand the sweep points to the verifiers."""
from __future__ import annotations

import datetime as dt
import math
import platform
import shlex
import subprocess
import sys
import time
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Callable

import numpy as np

import engine
from algorithms import optimum
from algorithms.catalog import ALGORITHMS, ResolutionError
from algorithms.data import Records
from algorithms.events import GaussianRelease
from engine import problem
from engine.spec import SWEEPABLE, Spec, SpecError, with_value
from verifiers.catalog import THEOREMS
from verifiers.checks import CHECKS, VERDICTS, CheckSpec, Context, Point

# noise tests see 10^5-10^6 values and have power to spare: a stricter level keeps false alarms rare
DEFAULT_CONFIDENCE = {"noise_calibration": 0.999}
MEMORY_BUDGET = 256 * 2**20        # bytes of record data held at once per chunk of trials
QUICK_TRIALS_DEFAULT = 8
# one-pass algorithms read each record once, so their records can be drawn as they are read (exact for
# i.i.d. data, and a second read raises); set False to materialise them as the multi-pass ones are
STREAM_ONE_PASS = True


class NumericalError(RuntimeError):
    pass


def effective_M(spec: Spec) -> tuple[float, tuple[int, int]]:
    """(M with 1/M = E[1/M_r], the range of M_r) -- Assumption 1.4 of seed 004."""
    part = spec.data.participation
    lo, hi = (spec.data.N, spec.data.N) if part is None else (part.low, part.high)
    return 1.0 / float(np.mean([1.0 / m for m in range(lo, hi + 1)])), (lo, hi)


def run_point(spec: Spec, trials: int, point_ss: np.random.SeedSequence, problem_seed: int,
              needs: set[str], tick: Callable[[int], None]) -> dict:
    entry = ALGORITHMS.get(spec.algorithm.kind)
    variant = spec.algorithm.variant or entry.variants[0]
    one_pass = entry.one_pass(variant)
    data_ss, chunks_ss = point_ss.spawn(2)
    prob = problem.build(spec, problem_seed, np.random.default_rng(data_ss))
    data, lspec = spec.data, spec.loss
    M, M_range = effective_M(spec)
    consts = prob.consts | {"N": data.N, "M": M, "eps0": spec.threat_model.epsilon, "delta0": spec.threat_model.delta}
    try:
        res = entry.resolve(consts, variant, dict(spec.algorithm.overrides))
    except ResolutionError as e:
        raise SpecError("spec", e.field, str(e)) from None
    n, d = int(consts["n"]), int(consts["d"])
    train_loss = prob.loss if prob.loss.smooth else prob.loss.envelope(res.params["beta_s"])
    per_trial = 0 if prob.fixed is not None else data.N * n * (9 if one_pass else d * 8)
    chunk = max(1, min(trials, MEMORY_BUDGET // max(per_trial, 1)))
    materialise = not (one_pass and STREAM_ONE_PASS) or "empirical_excess_risk" in needs
    meas: dict[str, list[np.ndarray]] = {k: [] for k in ("excess_risk", "excess_risk_se", "grad_variance",
                                                         "empirical_excess_risk")}
    events: list[GaussianRelease] = []
    sq, coords, t0 = 0.0, 0, time.perf_counter()
    chunks = math.ceil(trials / chunk)
    for i, ss in enumerate(chunks_ss.spawn(chunks)):
        size = min(chunk, trials - i * chunk)
        data_rng, alg_rng = (np.random.default_rng(s) for s in ss.spawn(2))
        records = Records(prob.population, data_rng, size, n, materialise=materialise, fixed=prob.fixed)
        out = entry.run(records, train_loss, **res.run_kwargs, M_range=M_range, rng=alg_rng,
                        grad_F=prob.grad_F if prob.fixed is None else None)
        if not np.all(np.isfinite(out.w)):
            raise NumericalError(f"non-finite model after {out.rounds} rounds (chunk {i})")
        if prob.population_risk is not None:
            value, se = prob.population_risk(out.w)
            meas["excess_risk"].append(value)
            meas["excess_risk_se"].append(se)
        if out.grad_err is not None:
            meas["grad_variance"].append(out.grad_err)
        if "empirical_excess_risk" in needs:
            meas["empirical_excess_risk"].append(_empirical(prob, records, out.w, lspec))
        events.extend(out.events)
        sq += out.noise_sq_sum
        coords += out.noise_coords
        tick(size)
    merged = GaussianRelease(sigma=events[0].sigma, batch_size=events[0].batch_size, pool_size=events[0].pool_size,
                             sampling=events[0].sampling, rounds=max(e.rounds for e in events),
                             max_record_uses=max(e.max_record_uses for e in events))
    systematic = {k: dict(v) for k, v in prob.systematic.items()}
    if meas["excess_risk_se"]:
        systematic.setdefault("excess_risk", {})["mc_se"] = float(np.concatenate(meas["excess_risk_se"]).mean())
    return {"params": {k: float(v) for k, v in res.params.items()}, "provenance": prob.provenance | res.provenance,
            "overridden": sorted(res.overridden), "events": [asdict(merged)], "noise_sq_sum": sq,
            "noise_coords": coords, "seconds": time.perf_counter() - t0, "materialised": materialise,
            "data_mode": prob.note, "systematic": systematic,
            "measurements": {k: np.concatenate(v).tolist() for k, v in meas.items() if v and k != "excess_risk_se"}}


def _empirical(prob: problem.Problem, records: Records, w: np.ndarray, lspec) -> np.ndarray:
    """Excess empirical risk of each trial's model on the data set it was trained on."""
    if prob.empirical is not None:
        return prob.empirical.excess(w)[0]
    # mode sco, squared loss: each trial has its own data set; its optimum in closed form
    T, d = w.shape
    X, y = records.X.reshape(T, -1, d), records.y.reshape(T, -1)
    w_hat = optimum.ball_ridge(X, y, lspec.mu, lspec.diameter / 2)
    return prob.loss.value(w, records.X, records.y) - prob.loss.value(w_hat, records.X, records.y)


def sweep_values(spec: Spec) -> list[float | None]:
    return list(spec.sweep.values) if spec.sweep else [None]


def run_spec(spec: Spec, *, trials: int | None = None, seed: int | None = None, quick: bool = False,
             progress: Callable[[int, int], Callable[[int], None]] | None = None) -> dict:
    seed = spec.seed if seed is None else seed
    if trials is None:
        trials = (spec.quick.trials if spec.quick else QUICK_TRIALS_DEFAULT) if quick else spec.trials
    entry = ALGORITHMS.get(spec.algorithm.kind)
    needs = {THEOREMS.get(c.theorem).measures for c in spec.checks if c.theorem}
    values = sweep_values(spec)
    root = np.random.SeedSequence(seed)
    problem_seed = int(root.spawn(1)[0].generate_state(1)[0])
    point_seqs = np.random.SeedSequence([seed, 1]).spawn(len(values))
    tick = progress(len(values), trials) if progress else (lambda k: None)
    started = dt.datetime.now(dt.timezone.utc)
    points = []
    for value, ss in zip(values, point_seqs):
        pspec = with_value(spec, spec.sweep.field, value) if spec.sweep and value is not None else spec
        result = run_point(pspec, trials, ss, problem_seed, needs, tick)
        points.append({"value": value, **result})
    checks = evaluate_checks(spec, points)
    counts = {v: sum(c["verdict"] == v for c in checks) for v in VERDICTS}
    return {
        "schema": 1, "name": spec.name, "description": spec.description,
        "spec": spec.model_dump(mode="json"), "seed": seed, "trials": trials, "quick": quick,
        "algorithm": {"kind": entry.name, "description": entry.description, "citation": entry.citation},
        "data_mode": points[0]["data_mode"] + ("; empirical excess risk against the exact non-private optimum "
                                               "of each trial's data set" if "empirical_excess_risk" in needs
                                               and spec.data.mode == "sco" else ""),
        "sweep": None if spec.sweep is None else {"field": spec.sweep.field, "symbol": SWEEPABLE[spec.sweep.field]},
        "points": points, "checks": checks, "verdict_counts": counts,
        "started": started.isoformat(timespec="seconds"),
        "seconds": (dt.datetime.now(dt.timezone.utc) - started).total_seconds(),
        "code_version": code_version(), "packages": package_versions(), "python": platform.python_version(),
        "command": " ".join(shlex.quote(a) for a in ["python", "-m", "engine"] + sys.argv[1:]),
    }


def evaluate_checks(spec: Spec, points: list[dict]) -> list[dict]:
    entry = ALGORITHMS.get(spec.algorithm.kind)
    pts = [Point(value=p["value"], params=p["params"], overridden=frozenset(p["overridden"]),
                 measurements={k: np.asarray(v) for k, v in p["measurements"].items()},
                 events=tuple(GaussianRelease(**e) for e in p["events"]),
                 noise_sq_sum=p["noise_sq_sum"], noise_coords=p["noise_coords"],
                 systematic=p.get("systematic", {})) for p in points]
    ctx = Context(algorithm=entry.name, sweep_symbol=SWEEPABLE[spec.sweep.field] if spec.sweep else None,
                  privacy_theorem=THEOREMS.get(entry.privacy_theorem))
    out = []
    for c in spec.checks:
        thm = THEOREMS.get(c.theorem or entry.privacy_theorem)
        cs = CheckSpec(id=c.id, kind=c.kind, theorem=thm.name, variable=c.variable, term=c.term, tol=c.tol,
                       confidence=c.confidence or DEFAULT_CONFIDENCE.get(c.kind, 0.95), min_rounds=c.min_rounds)
        out.append(_jsonable(asdict(CHECKS.get(c.kind)(cs, thm, pts, ctx))))
    return out


def _jsonable(x):
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.floating, float)):
        return float(x) if math.isfinite(x) else str(float(x))
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def code_version() -> str:
    here = Path(__file__).resolve().parent.parent
    try:
        out = subprocess.run(["git", "describe", "--always", "--abbrev=12"], cwd=here,
                             capture_output=True, text=True, timeout=10)
        if out.returncode == 0 and out.stdout.strip():
            # changes to the committed reports (which runs rewrite) do not make the code dirty
            status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                     ":(exclude)reports"], cwd=here, capture_output=True, text=True, timeout=10)
            dirty = "-dirty" if status.stdout.strip() else ""
            return f"{engine.__version__}+git.{out.stdout.strip()}{dirty}"
    except (OSError, subprocess.SubprocessError):
        pass
    return engine.__version__


def package_versions() -> dict[str, str]:
    names = ["numpy", "scipy", "sympy", "pandas", "pyyaml", "pydantic", "dp-accounting", "matplotlib"]
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out
