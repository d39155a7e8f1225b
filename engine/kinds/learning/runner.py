"""Run a spec: split its sweep into units (a point and some of its trials), run them (vectorised, on an
executor, skipping what the store already holds), store each finished unit, assemble the sweep points in
trial order and hand them to the verifiers."""
from __future__ import annotations

import datetime as dt
import functools
import json
import os
import time
from dataclasses import asdict, dataclass, replace
from importlib import metadata
from typing import Callable, Sequence

import numpy as np

from algorithms import events as ev_
from algorithms import optimum
from algorithms.data import Records
from algorithms.streams import streams_for
from catalog import ALGORITHMS, ResolutionError, Resolved
from engine import allocator, executors
from engine.kinds.learning import audit, problem
from engine.kinds.learning.data import DATA_KINDS
from engine.kinds.learning.provenance import spec_provenance
from engine.kinds.learning.spec import PACKAGED, SWEEPABLE, Spec, validated, with_value
from engine.specbase import RESULTS_SCHEMA, SpecError
from engine.stamp import jsonable, run_stamp, value_key, verdict_counts
from engine.store import Store, code_hash, run_key
from verifiers.checks import CHECKS, Context, Point
from verifiers.theorems import THEOREMS

MEMORY_BUDGET = 256 * 2**20        # bytes of record data held at once per unit of trials
WORKSET = 16 * 2**20               # bytes of one round's gathered batches per sub-batch of trials
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


@dataclass(frozen=True)
class Unit:
    """A piece of work: some trials of one sweep point. Its result depends on nothing else."""

    spec: dict                  # the point's spec (model_dump), re-validated where the unit runs
    point: int                  # index of the sweep point (where the result goes)
    value: float | None         # the swept value (what the point's random streams derive from)
    trials: tuple[int, ...]
    seed: int
    needs: tuple[str, ...]      # the measured quantities the checks need


def point_seed(seed: int, value: float | None) -> np.random.SeedSequence:
    """The SeedSequence of the sweep point with this value; trial t's streams derive from it."""
    return np.random.SeedSequence([seed, 1], spawn_key=(value_key(value),))


def problem_seed(seed: int) -> int:
    """The seed of the problem instance (silo optima, evaluation sample): the same at every sweep point."""
    return int(np.random.SeedSequence(seed).spawn(1)[0].generate_state(1)[0])


def data_seed(spec: Spec, seed: int, value: float | None) -> np.random.SeedSequence:
    """The SeedSequence a point's synthetic ERM data set is drawn from: the point's own when the sweep changes the
    data (a ``data.*`` field: n, d, N), else one for the whole sweep (the stream of the spec without a sweep), so
    that points differing only in the privacy parameters or the algorithm see the same data set X and only the
    algorithm's randomness differs between them (the ERM theorems are about one fixed X)."""
    per_point = problem.data_per_point(spec)
    return np.random.SeedSequence([seed, 2], spawn_key=(value_key(value if per_point else None),))


@functools.lru_cache(maxsize=8)
def _problem(spec_json: str, seed: int, value: float | None) -> tuple[Spec, problem.Problem]:
    """The learning problem of a point, built once per process (its optimum can take seconds)."""
    spec = validated(json.loads(spec_json))
    data_rng = np.random.default_rng(data_seed(spec, seed, value))
    return spec, problem.build(spec, problem_seed(seed), data_rng)


def resolve_point(spec: Spec, prob: problem.Problem) -> tuple[dict, Resolved]:
    """The problem's constants and the algorithm's resolved parameters at a point (the claim included: the spec's
    epsilon, or the one the paper states at the point's parameters, computed before the run)."""
    entry = ALGORITHMS.get(spec.algorithm.kind)
    variant = spec.algorithm.variant or entry.variants[0]
    M, _ = effective_M(spec)
    tm = spec.threat_model
    claim = {key: v for key, v in (("eps0", tm.epsilon), ("delta0", tm.delta)) if v is not None}
    consts = prob.consts | {"N": spec.data.N, "M": M} | claim
    try:
        res = entry.resolve(consts, variant, dict(spec.algorithm.overrides))
    except ResolutionError as e:
        raise SpecError("spec", e.field, str(e)) from None
    privacy = THEOREMS.get(entry.privacy_theorem)
    if privacy.stated_epsilon is not None and "delta0" in res.params:
        # the paper states epsilon at the run's parameters (the spec states none): the claim, before the run
        try:
            stated = privacy.stated_epsilon(res.params)
        except ValueError as e:
            raise SpecError("spec", "threat_model", f"{privacy.name} states no epsilon here: {e}") from None
        res = replace(res, params={**res.params, "eps0": stated},
                      provenance={**res.provenance, "eps0": f"the claim: {privacy.name} at this point's parameters "
                                                            f"({privacy.citation}), computed before the run"})
    return consts, res


def point_provenance(spec: dict, prob: problem.Problem, res: Resolved) -> dict[str, str]:
    """Where each of a point's parameters came from: the spec (its own fields), the problem (its constants), the
    resolver (the calibration; its "problem constant" placeholders give way to the problem's own words)."""
    return (spec_provenance(spec) | prob.provenance
            | {k: v for k, v in res.provenance.items() if v != "problem constant"})


def run_unit(unit: Unit) -> dict:
    """Run the unit's trials, vectorised: per-trial measurements and the point's resolved parameters."""
    allocator.release_freed_memory()                # the previous units' freed heap: never more than one unit's peak
    t0 = time.perf_counter()
    spec, prob = _problem(json.dumps(unit.spec, sort_keys=True), unit.seed, unit.value)
    entry = ALGORITHMS.get(spec.algorithm.kind)
    one_pass = entry.one_pass(spec.algorithm.variant or entry.variants[0])
    _, M_range = effective_M(spec)
    consts, res = resolve_point(spec, prob)
    n = int(consts["n"])
    train_loss = prob.loss if prob.loss.smooth else prob.loss.envelope(res.params["beta_s"])
    needs = set(unit.needs)
    materialise = not (one_pass and STREAM_ONE_PASS) or "empirical_excess_risk" in needs
    ps = point_seed(unit.seed, unit.value)
    size = len(unit.trials)
    cols: dict[str, list[np.ndarray]] = {}
    step = sub_batch(spec.data.N, int(res.params["K"]), int(consts["d"]))
    for lo in range(0, size, step):
        trials = unit.trials[lo:lo + step]
        records = Records(prob.population, streams_for(ps, trials, 0), len(trials), n, materialise=materialise,
                          fixed=prob.fixed)
        out = entry.run(records, train_loss, **res.run_kwargs, M_range=M_range, rng=streams_for(ps, trials, 1),
                        grad_F=prob.grad_F if prob.fixed is None else None)
        if not np.all(np.isfinite(out.w)):
            bad = [trials[k] for k in np.flatnonzero(~np.isfinite(out.w).all(axis=1))]
            raise NumericalError(f"{spec.name}: non-finite model after {out.rounds} rounds at sweep point "
                                 f"{unit.point}, trials {bad[:5]}")
        part = {"noise_sq": out.noise_sq, "noise_coords": out.noise_coords, "silo_rounds": out.silo_rounds,
                "record_uses": out.record_uses}
        if prob.population_risk is not None:
            part["excess_risk"], part["excess_risk_se"] = prob.population_risk(out.w)
        if out.grad_err is not None:
            part["grad_variance"] = out.grad_err
        if "empirical_excess_risk" in needs:
            part["empirical_excess_risk"] = _empirical(prob, records, out.w, spec.loss)
        if "model" in needs:                     # a vector per trial: the released model
            part["model"] = out.w
        part.update(out.extra)
        for k, v in part.items():
            cols.setdefault(k, []).append(np.asarray(v))
    col = {k: np.concatenate(v) for k, v in cols.items()}
    meas = {k: v for k, v in col.items() if k not in ("noise_sq", "noise_coords", "silo_rounds", "record_uses")}
    # every event the run reported, as one tree; a single release's counts are the trials' largest (assemble_point)
    root = out.events[0] if len(out.events) == 1 else ev_.ComposedEvent(tuple(out.events))
    event = {k: v for k, v in ev_.to_dict(root).items() if k not in ("rounds", "max_record_uses")}
    seconds = time.perf_counter() - t0
    # the problem says where its constants come from; the resolver, where the algorithm's parameters do
    provenance = point_provenance(unit.spec, prob, res)
    info = {"params": {k: float(v) for k, v in res.params.items()}, "provenance": provenance,
            "overridden": sorted(res.overridden), "event": event,
            "systematic": prob.systematic, "data_mode": prob.note, "materialised": materialise}
    rows = {t: {"m": {k: _per_trial(v[k_]) for k, v in meas.items()}, "noise_sq": float(col["noise_sq"][k_]),
                "noise_coords": int(col["noise_coords"][k_]), "silo_rounds": int(col["silo_rounds"][k_]),
                "record_uses": int(col["record_uses"][k_]), "seconds": seconds / size}
            for k_, t in enumerate(unit.trials)}
    return {"point": unit.point, "info": info, "trials": rows, "code": code_identity()}


def _per_trial(value: np.ndarray) -> float | list[float]:
    """One trial's measurement as stored: a number, or a vector (a list of floats; JSON keeps float64 exactly)."""
    return float(value) if np.ndim(value) == 0 else [float(x) for x in np.ravel(value)]


def sub_batch(N: int, K: int, d: int) -> int:
    """Trials that advance together inside a unit: as many as keep one round's gathered batches (T N K d
    doubles) within WORKSET bytes. Small per-silo work: all of them (Python overhead is shared); large
    per-silo work: few (big temporaries cost page faults and cache misses, and there is no overhead to
    share). Results do not depend on it (algorithms/streams.py)."""
    return max(1, WORKSET // max(N * K * d * 8, 1))


def _empirical(prob: problem.Problem, records: Records, w: np.ndarray, lspec) -> np.ndarray:
    """Excess empirical risk of each trial's model on the data set it was trained on."""
    if prob.empirical is not None:
        return prob.empirical.excess(w)[0]
    # mode sco, squared loss: each trial has its own data set; its optimum in closed form
    T, d = w.shape
    X, y = records.X.reshape(T, -1, d), records.y.reshape(T, -1)
    w_hat = optimum.ball_ridge(X, y, lspec.mu, lspec.diameter / 2)
    return prob.loss.value(w, records.X, records.y) - prob.loss.value(w_hat, records.X, records.y)


def assemble_point(value: float | None, info: dict, trials: list[dict]) -> dict:
    """Per-trial rows (in trial order) -> the sweep point the verifiers see. Sums run over the trial-ordered
    arrays, so they do not depend on how the trials were batched or where they ran."""
    names = [k for k in trials[0]["m"] if k != "excess_risk_se"]
    systematic = {k: dict(v) for k, v in info["systematic"].items()}
    if "excess_risk_se" in trials[0]["m"]:
        se = np.array([t["m"]["excess_risk_se"] for t in trials])
        if se.any():
            systematic.setdefault("excess_risk", {})["mc_se"] = float(se.mean())
    event = dict(info["event"])
    if event.get("kind", "gaussian") not in ev_.NODE_KINDS:      # a tree states its own counts
        event |= {"rounds": max(t["silo_rounds"] for t in trials), "max_record_uses": max(t["record_uses"] for t in trials)}
    return {"value": value, "params": info["params"], "provenance": info["provenance"],
            "overridden": info["overridden"], "events": [event],
            "noise_sq_sum": float(np.sum(np.array([t["noise_sq"] for t in trials]))),
            "noise_coords": int(sum(t["noise_coords"] for t in trials)),
            "seconds": float(sum(t["seconds"] for t in trials)), "materialised": info["materialised"],
            "data_mode": info["data_mode"], "systematic": systematic,
            "measurements": {k: [t["m"][k] for t in trials] for k in names}}


def _point_spec(spec: Spec, value: float | None) -> Spec:
    return with_value(spec, spec.sweep.field, value) if spec.sweep and value is not None else spec


def point_key(spec: Spec, value: float | None, seed: int, needs: tuple[str, ...], code: str) -> str:
    """The store key of one sweep point: its own spec (with the swept field set, without the sweep list, the
    checks, prose and expected verdicts), the measurements the checks need, the seed and the code."""
    dump = _point_spec(spec, value).model_dump(mode="json")
    dump.pop("sweep", None)
    dump.pop("checks", None)
    # the swept field decides whether a synthetic ERM data set is the point's own or the sweep's (data_seed)
    return run_key(dump | {"needs": list(needs), "point_value": value,
                           "data_per_point": problem.data_per_point(spec)}, seed, code)


@functools.lru_cache(maxsize=1)
def code_identity() -> str:
    """What a stored trial's numbers depend on besides its spec and seed: our source code and the versions
    of the numerical libraries (numba compiles the gradient kernels; scikit-learn ships the bundled data set the
    breast cancer runs use)."""
    versions = {}
    for name in ("numpy", "scipy", "scikit-learn", "numba"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "-"
    return code_hash() + json.dumps(versions, sort_keys=True)


def sweep_values(spec: Spec) -> list[float | None]:
    return list(spec.sweep.values) if spec.sweep else [None]


def chunk_size(spec: Spec, trials: int, needs: set[str]) -> int:
    """Trials per unit: as many as the memory budget allows (records are the big arrays)."""
    entry = ALGORITHMS.get(spec.algorithm.kind)
    one_pass = entry.one_pass(spec.algorithm.variant or entry.variants[0])
    if spec.data.kind in PACKAGED or spec.data.mode == "erm":
        return trials
    n, floats = spec.data.n, DATA_KINDS.get(spec.data.kind).record_floats(spec.data)
    streamed = one_pass and STREAM_ONE_PASS and "empirical_excess_risk" not in needs
    per_trial = spec.data.N * n * (9 if streamed else floats * 8)
    return max(1, min(trials, MEMORY_BUDGET // max(per_trial, 1)))


ROW_BYTES = 600                    # one trial's stored row as the run holds it (dicts of floats): measured ~400-500
EVAL_FLOATS = 3                    # a logistic evaluation sample: X, y and the risk computation's temporaries (x d)


def memory_limit() -> int:
    """Bytes a run may use: PRIVBENCH_MEMORY_LIMIT (GiB; the CLI's --memory-limit sets it), else half this
    machine's memory."""
    env = os.environ.get("PRIVBENCH_MEMORY_LIMIT")
    if env:
        return int(float(env) * 2**30)
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2


def memory_estimate(spec: Spec, trials: int, workers: int | None = None) -> tuple[int, str, str]:
    """(bytes, the field that drives it, what) of a run's peak, from the spec alone, before anything is allocated:
    the records every worker holds for its unit (units are cut to MEMORY_BUDGET, but never below one trial, so a
    single trial's data set sets the floor), a population's evaluation sample, and the per-trial rows the run keeps
    (trials x sweep points)."""
    workers = workers or os.cpu_count() or 1
    data, points = spec.data, len(sweep_values(spec))
    swept_n = spec.sweep is not None and spec.sweep.field == "data.n"
    n = 0 if data.kind in PACKAGED else int(max(spec.sweep.values) if swept_n and spec.sweep else data.n or 0)
    d = getattr(data, "d", 0) or 0
    entry = ALGORITHMS.get(spec.algorithm.kind)
    one_pass = entry.one_pass(spec.algorithm.variant or entry.variants[0])
    materialised = not (one_pass and STREAM_ONE_PASS) or data.mode == "erm"
    floats = DATA_KINDS.get(data.kind).record_floats(data)
    per_trial = data.N * n * (floats * 8 if materialised else 9)
    unit = per_trial if data.mode == "erm" else max(per_trial, min(trials, MEMORY_BUDGET // max(per_trial, 1))
                                                                    * per_trial)
    evaluation = getattr(data, "eval_records", 0) * d * 8 * EVAL_FLOATS
    rows = trials * points * ROW_BYTES
    parts = [(workers * unit, "data.n", f"{workers} worker(s) x the records of one unit ({data.N} x {n} x {d})"),
             (evaluation, "data.eval_records", "the population risk's evaluation sample"),
             (rows, "trials", f"{trials} trials x {points} point(s) of stored rows")]
    total = sum(p[0] for p in parts)
    field, what = max(parts)[1:]
    return total, field, what


def check_memory(spec: Spec, trials: int, file: str = "spec") -> None:
    """Refuse, before computing, a run whose estimated peak exceeds the limit (one line: the field, the estimate,
    the limit)."""
    need, field, what = memory_estimate(spec, trials)
    limit = memory_limit()
    if need > limit:
        raise SpecError(file, field, f"the run would need about {need / 2**30:.3g} GiB (mostly {what}); the limit "
                                     f"is {limit / 2**30:.3g} GiB (--memory-limit or PRIVBENCH_MEMORY_LIMIT, in GiB)")


# A lower bound on the cost of one gradient coordinate (a record's gradient in one dimension, with its share of
# sampling, noise and bookkeeping) on one core: the shipped specs' default runs measured 7 ns (cldp_sgd_digits) to
# 1.4 us (erm_breast_cancer) per coordinate on this 2-core machine. A time estimate at this rate is a lower bound.
SECONDS_PER_COORDINATE = 5e-9
TIME_LIMIT_HOURS = 24.0


def time_limit() -> float:
    """Seconds a run may be estimated to take at least: PRIVBENCH_TIME_LIMIT (hours; the CLI's --time-limit sets
    it), else TIME_LIMIT_HOURS."""
    env = os.environ.get("PRIVBENCH_TIME_LIMIT")
    if not env:
        return TIME_LIMIT_HOURS * 3600
    try:
        hours = float(env)
    except ValueError:
        hours = float("nan")
    if not 0 < hours < float("inf"):
        raise SpecError("environment", "PRIVBENCH_TIME_LIMIT", f"{env!r}: a number of hours > 0")
    return hours * 3600


def work_estimate(spec: Spec, trials: int | Sequence[int], seed: int | None = None,
                  workers: int | None = None) -> tuple[float, float, float | None]:
    """(gradient coordinates, seconds at least, the sweep value of the costliest point) of a run, before any trial
    is computed: each point's problem is built and its parameters resolved as the workers will (R rounds of M silos'
    K records in d dimensions per trial; the problem is cached in this process, and forked workers inherit it).
    ``trials``: per run, or per sweep point (the trials still to compute: a point with none is not resolved)."""
    values = sweep_values(spec)
    per_point = [trials] * len(values) if isinstance(trials, int) else list(trials)
    workers = workers or os.cpu_count() or 1
    works = point_work(spec, per_point, seed)
    total = float(sum(works))
    worst = int(np.argmax(works)) if works else 0
    worst_value = values[worst] if works and works[worst] > 0 else None
    return total, total * SECONDS_PER_COORDINATE / max(1, min(workers, sum(per_point))), worst_value


def point_work(spec: Spec, trials: Sequence[int], seed: int | None = None) -> list[float]:
    """Gradient coordinates of each sweep point's trials (R rounds of M silos' K records in d dimensions per trial;
    0 for a point with no trials, which is not resolved)."""
    seed = spec.seed if seed is None else seed
    out = []
    for v, t in zip(sweep_values(spec), trials):
        if t == 0:
            out.append(0.0)
            continue
        pspec, prob = _problem(json.dumps(_point_spec(spec, v).model_dump(mode="json"), sort_keys=True), seed, v)
        consts, res = resolve_point(pspec, prob)
        p = res.params
        out.append(float(p["R"]) * float(p.get("M", consts["M"])) * float(p["K"]) * float(consts["d"]) * t)
    return out


def workers_of(executor) -> int | None:
    """The processes an executor computes on: 1 in this process, its pool's size, None where it does not say."""
    return 1 if executor is None or isinstance(executor, executors.Sequential) else getattr(executor, "workers", None)


def effective_trials(spec: Spec, trials: int | None, quick: bool) -> int:
    """The trials per point a run computes: the command line's, else the spec's (its quick.trials with --quick)."""
    if trials is not None:
        return trials
    return (spec.quick.trials if spec.quick else QUICK_TRIALS_DEFAULT) if quick else spec.trials


def refuse_work(file: str, coords: float, seconds: float, where: str = "") -> None:
    """The one-line refusal of a run estimated above the time limit."""
    limit = time_limit()
    if seconds > limit:
        raise SpecError(file, "algorithm", f"the run would compute about {coords:.3g} gradient coordinates{where}: "
                                           f"at least {seconds / 3600:.3g} h on this machine at "
                                           f"{SECONDS_PER_COORDINATE * 1e9:g} ns each (below the fastest measured, "
                                           f"7 ns); the limit is {limit / 3600:.3g} h (--time-limit or "
                                           f"PRIVBENCH_TIME_LIMIT, in hours); lower the trials, the sweep or the "
                                           f"rounds (algorithm.overrides)")


def check_work(spec: Spec, trials: int | Sequence[int], seed: int | None = None, file: str = "spec",
               workers: int | None = None) -> float:
    """Refuse, before computing, a run estimated to take longer than the limit even at a rate below the fastest
    measured (one line: the field that drives it, the estimate, the limit). Returns the estimate in seconds."""
    coords, seconds, value = work_estimate(spec, trials, seed, workers)
    refuse_work(file, coords, seconds,
                f" (mostly the point {spec.sweep.field} = {value:g})" if spec.sweep and value is not None else "")
    return seconds


def run_spec(spec: Spec, *, trials: int | None = None, seed: int | None = None, quick: bool = False,
             progress: Callable[..., Callable[[int], None]] | None = None, store: Store | None = None,
             executor=None, chunk: int | None = None, log: Callable[[str], None] | None = None) -> dict:
    """Run every sweep point's trials (skipping those ``store`` already holds for this spec, seed and code),
    evaluate the checks and return the results. ``executor``: engine.executors (default: this process);
    ``chunk``: trials per unit (default: from the memory budget). Results do not depend on either."""
    seed = spec.seed if seed is None else seed
    trials = effective_trials(spec, trials, quick)
    check_memory(spec, trials)
    entry = ALGORITHMS.get(spec.algorithm.kind)
    needs = tuple(sorted({THEOREMS.get(c.theorem).measures for c in spec.checks if c.theorem}))
    values = sweep_values(spec)
    code = code_identity()
    keys = [point_key(spec, v, seed, needs, code) for v in values] if store is not None else []
    started = dt.datetime.now(dt.timezone.utc)
    infos: dict[int, dict] = {}
    rows: dict[int, dict[int, dict]] = {i: {} for i in range(len(values))}
    for i in range(len(values)):
        if store is not None:
            rows[i] = store.trials(keys[i], range(trials))
            info = store.point(keys[i])
            if info is not None and rows[i]:
                infos[i] = info
    todo = {i: [t for t in range(trials) if t not in rows[i]] for i in range(len(values))}
    # the work still to do, before any of it: refused above the time limit, announced when long
    seconds = check_work(spec, [len(todo[i]) for i in range(len(values))], seed, workers=workers_of(executor))
    if log and seconds > 60:
        log(f"{spec.name}: estimated at least {seconds / 60:.3g} min of computing")
    tick = progress(len(values), trials) if progress else (lambda k: None)
    units = []
    for i, value in enumerate(values):
        pspec = _point_spec(spec, value)
        tick(len(rows[i]))
        missing = todo[i]
        size = chunk or chunk_size(pspec, trials, set(needs))
        units += [Unit(pspec.model_dump(mode="json"), i, value, tuple(missing[k:k + size]), seed, needs)
                  for k in range(0, len(missing), size)]
    # the largest units first (gradient coordinates per trial x trials), so a pool's last unit is a small one;
    # results go to their point and trial whatever the order
    per_trial = point_work(spec, [1 if todo[i] else 0 for i in range(len(values))], seed)
    units.sort(key=lambda u: -per_trial[u.point] * len(u.trials))
    runner_ = executor or executors.Sequential()
    for result in runner_.run(run_unit, units):
        if result["code"] != code:
            raise executors.ExecutorError("a worker runs other code than this process (a changed or different "
                                          "installation): its results are not stored")
        i = result["point"]
        infos[i] = result["info"]
        rows[i].update(result["trials"])
        if store is not None:
            store.put(keys[i], result["info"], result["trials"])
        tick(len(result["trials"]))
    points = [assemble_point(v, infos[i], [rows[i][t] for t in range(trials)]) for i, v in enumerate(values)]
    audits = [c for c in spec.checks if c.kind == "privacy_audit"]
    if audits:
        asked = max(c.audit_trials for c in audits)
        if quick:                                   # a smoke test still runs the audit, on a tenth of the trials
            asked = max(2000, asked // 10)
        level = max(c.confidence or CHECKS.get(c.kind).confidence for c in audits)
        budget = audit.WORK_BUDGET / (10 if quick else 1)
        atick = progress(len(points), 1, "audit points") if progress else (lambda k: None)
        for i, (p, v) in enumerate(zip(points, values)):
            akey = run_key({"audit_of": keys[i], "trials": asked, "confidence": level, "budget": budget}, seed, code
                           ) if store is not None else ""
            stored = store.point(akey) if store is not None else None
            if stored is not None:                     # the audit of this very point, trial count and level
                p["audit"] = stored
                atick(1)
                continue
            pspec, prob = _problem(json.dumps(_point_spec(spec, v).model_dump(mode="json"), sort_keys=True), seed, v)
            p["audit"] = audit.run(pspec, prob, p["params"], p["events"][0], seed=seed, value_key=value_key(v),
                                   trials=asked, confidence=level, budget=budget)
            if store is not None:
                store.put(akey, p["audit"], {})
            atick(1)
    checks = evaluate_checks(spec, points)
    counts = verdict_counts(checks)
    return {
        "schema": RESULTS_SCHEMA, "kind": "learning", "name": spec.name, "description": spec.description,
        "spec": spec.model_dump(mode="json"), "seed": seed, "trials": trials, "quick": quick,
        "algorithm": {"kind": entry.name, "description": entry.description, "citation": entry.citation},
        "data_mode": points[0]["data_mode"] + ("; empirical excess risk against the exact non-private optimum "
                                               "of each trial's data set" if "empirical_excess_risk" in needs
                                               and spec.data.mode == "sco" else ""),
        "sweep": None if spec.sweep is None else {"field": spec.sweep.field, "symbol": SWEEPABLE[spec.sweep.field]},
        "neighbouring": _relation(spec),
        "points": points, "checks": checks, "verdict_counts": counts,
        "started": started.isoformat(timespec="seconds"),
        "seconds": (dt.datetime.now(dt.timezone.utc) - started).total_seconds(),
        "reused_trials": sum(len(r) for r in rows.values()) - sum(len(u.trials) for u in units),
        **run_stamp(),
    }


def _relation(spec: Spec) -> dict | None:
    """The neighbouring relation the privacy claim is about, as the results and the report show it."""
    rel = spec.threat_model.relation
    return None if rel is None else rel.as_dict() | {"text": rel.text}


def evaluate_checks(spec: Spec, points: list[dict]) -> list[dict]:
    entry = ALGORITHMS.get(spec.algorithm.kind)
    pts = [Point(value=p["value"], params=p["params"], overridden=frozenset(p["overridden"]),
                 measurements={k: np.asarray(v) for k, v in p["measurements"].items()},
                 events=tuple(ev_.from_dict(e) for e in p["events"]),
                 noise_sq_sum=p["noise_sq_sum"], noise_coords=p["noise_coords"],
                 systematic=p.get("systematic", {}), audit=p.get("audit")) for p in points]
    ctx = Context(algorithm=entry.name, sweep_symbol=SWEEPABLE[spec.sweep.field] if spec.sweep else None,
                  privacy_theorem=THEOREMS.get(entry.privacy_theorem))
    out = []
    for c in spec.checks:
        thm = THEOREMS.get(c.theorem or entry.privacy_theorem)
        kind = CHECKS.get(c.kind)
        cs = c.model_copy(update={"theorem": thm.name, "confidence": c.confidence or kind.confidence})
        out.append(jsonable(asdict(kind.evaluate(cs, thm, pts, ctx))))
    return out
