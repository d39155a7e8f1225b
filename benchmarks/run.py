"""Benchmarks: the engine's vectorised trial loop against a per-trial, per-silo loop and against this machine's
bound, and (when installed) DP-SGD against Opacus. Run with ``python -m benchmarks.run``; prints a table and writes
benchmarks/results.json, from which ``python -m benchmarks.readme`` (or ``--readme`` here) regenerates the README's
tables. ``--quick`` runs a smaller version in under a minute and writes benchmarks/results_quick.json instead. It
reports; it asserts nothing and is not part of CI.

Configurations (named in the README):
  a_overhead  many silos (N = 64), small per-silo batches (K = 4), small d (8): Python overhead dominates;
  b_agd       the default configuration of specs/agd_smooth.yaml (its middle sweep point, n = 14142);
  c_large     a large per-silo batch (K = 1024) and d = 256, so memory traffic dominates.
Every timing is a ratio against a baseline run in the same process on the same work (best wall-clock and best
CPU time of the repeats, after a warm-up run), and the baseline's outputs are checked against the engine's for
the same seeds. Each row's bound is the machine's (``work_bound``): its draws, counted while it runs, at the
rate measured now of the generator algorithms/streams.py uses, plus its gradient pass at the roofline.
DP-SGD against Opacus clips per sample on both sides and gives two figures: the engine's runs batched (how
the harness runs trials) and one run at a time; Opacus runs them one after another. Without opacus and torch
it is skipped with a message naming what is missing.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from algorithms import acsa, kernels, mechanisms, sampling
from algorithms.data import Records, make_sphere_linear
from algorithms.losses import Logistic, Squared
from algorithms.streams import TrialStreams, streams_for
from catalog import ALGORITHMS
from engine import kinds
from engine.kinds.learning import runner
from engine.kinds.learning import spec as spec_mod

HERE = Path(__file__).resolve().parent


# --- the work ------------------------------------------------------------------------------------------
def configs(quick: bool) -> dict[str, dict]:
    scale = 0.25 if quick else 1.0
    return {
        "a_overhead": dict(N=64, n=200, d=8, K=4, R=int(400 * scale), T=16, sigma=0.5),
        "b_agd": dict(agd=True, T=int(30 * scale) or 2),
        "c_large": dict(N=8, n=4096, d=256, K=1024, R=int(40 * scale), T=4, sigma=0.05),
    }


def _population(N: int, d: int):
    return make_sphere_linear(np.random.default_rng(0), d=d, N=N, radius=1.0, label_noise=0.1, w_norm=0.5,
                              heterogeneity=0.5, mu=0.0, diameter=2.0)


def _agd_kwargs(T: int) -> tuple[dict, object]:
    """The resolved one-pass run of agd_smooth's middle sweep point."""
    spec = kinds.load(HERE.parent / "specs" / "agd_smooth.yaml")
    spec = spec_mod.with_value(spec, "data.n", spec.sweep.values[len(spec.sweep.values) // 2])
    _, prob = runner._problem(json.dumps(spec.model_dump(mode="json"), sort_keys=True), spec.seed, 0)
    M, M_range = runner.effective_M(spec)
    res = ALGORITHMS.get("accelerated_mbsgd").resolve(
        prob.consts | {"N": spec.data.N, "M": M, "eps0": spec.threat_model.epsilon, "delta0": spec.threat_model.delta},
        "one_pass", {})
    return dict(res.run_kwargs, M_range=M_range, n=spec.data.n, T=T), prob.population


# --- engine runs -------------------------------------------------------------------------------------
def _batched(T: int, N: int, K: int, d: int, run_some) -> np.ndarray:
    """The engine's way: trials advance together in sub-batches sized as engine/kinds/learning/runner.py sizes them."""
    step = runner.sub_batch(N, K, d)
    return np.concatenate([run_some(list(range(lo, min(T, lo + step)))) for lo in range(0, T, step)])


def engine_mbsgd(cfg: dict, seed: int = 1) -> np.ndarray:
    pop = _population(cfg["N"], cfg["d"])
    ps = np.random.SeedSequence(seed)

    def run_some(trials):
        records = Records(pop, streams_for(ps, trials, 0), len(trials), cfg["n"], materialise=True)
        return ALGORITHMS.get("noisy_mbsgd").run(records, Squared(), R=cfg["R"], K=cfg["K"], sigma=cfg["sigma"],
                                                 eta=0.1, radius=1.0, M_range=(cfg["N"], cfg["N"]),
                                                 rng=streams_for(ps, trials, 1)).w
    return _batched(cfg["T"], cfg["N"], cfg["K"], cfg["d"], run_some)


def engine_onepass(kw: dict, pop, seed: int = 1) -> np.ndarray:
    ps = np.random.SeedSequence(seed)
    run_kw = {k: v for k, v in kw.items() if k not in ("n", "T")}

    def run_some(trials):
        records = Records(pop, streams_for(ps, trials, 0), len(trials), kw["n"], materialise=False)
        return acsa.run(records, Squared(), rng=streams_for(ps, trials, 1), **run_kw).w
    return _batched(kw["T"], pop.N, kw["K"], pop.d, run_some)


# --- the baseline: one trial at a time, one silo at a time ----------------------------------------------
def baseline_mbsgd(cfg: dict, seed: int = 1) -> np.ndarray:
    """Alg. 2 written the straightforward way. Random draws come from the same per-trial streams in the
    same order (so the outputs must agree); the gradient, noise and aggregation work loops over silos, in plain
    numpy (the engine's gradient is algorithms/kernels.py's fused kernel; the baseline does the same work unfused)."""
    pop = _population(cfg["N"], cfg["d"])
    ps = np.random.SeedSequence(seed)
    N, n, d, K = cfg["N"], cfg["n"], cfg["d"], cfg["K"]
    outs = []
    for t in range(cfg["T"]):
        data, alg = streams_for(ps, [t], 0), streams_for(ps, [t], 1)
        X, y = pop.sample(data, (1, N, n))
        w, avg = np.zeros(d), np.zeros(d)
        for r in range(cfg["R"]):
            sampling.participating(alg, 1, N, np.array([N]))          # consumes the same draws as the engine
            idx = sampling.k_subsets(alg, (1, N), n, K)[0]
            g = np.zeros(d)
            for i in range(N):
                Xb, yb = X[0, i, idx[i]], y[0, i, idx[i]]
                grad = Xb.T @ (Xb @ w - yb) / K
                g += grad + cfg["sigma"] * alg.standard_normal((1, d))[0]
            g /= N
            avg += (w - avg) / (r + 1)
            w = mechanisms.project_ball(w - 0.1 * g, 1.0)
        outs.append(avg)
    return np.array(outs)


def baseline_onepass(kw: dict, pop, seed: int = 1) -> np.ndarray:
    ps = np.random.SeedSequence(seed)
    N, n, K, d = pop.N, kw["n"], kw["K"], pop.d
    total = sum(s.rounds for s in kw["stages"])
    outs = []
    for t in range(kw["T"]):
        data, alg = streams_for(ps, [t], 0), streams_for(ps, [t], 1)
        sampling.disjoint_batches(alg, (1, N), n, K, total, fresh=True)   # keeps the streams aligned; records fresh
        w_ag = np.zeros(d)
        rr = 0
        for stage in kw["stages"]:
            w = w_ag.copy()
            for r in range(1, stage.rounds + 1):
                a, eta, mu, lam = 2.0 / (r + 1), 4.0 * stage.v / (r * (r + 1)), kw["mu"], kw["lam"]
                w_md = ((1 - a) * (mu + eta) * w_ag + a * ((1 - a) * mu + eta) * w) / (eta + (1 - a * a) * mu)
                sampling.participating(alg, 1, N, np.array([N]))
                # each silo draws its own fresh batch (x on the sphere, y = <w*_i, x> + noise), in silo order
                Xs = [data.standard_normal((1, K, d))[0] for i in range(N)]
                ys = [data.uniform(-pop.label_noise, pop.label_noise, (1, K))[0] for i in range(N)]
                g = np.zeros(d)
                for i in range(N):
                    Xb = Xs[i] * (pop.radius / np.sqrt(np.einsum("kd,kd->k", Xs[i], Xs[i])))[:, None]
                    yb = Xb @ pop.w_star[i] + ys[i]
                    grad = Xb.T @ (Xb @ w_md - yb) / K
                    g += grad + kw["sigma"] * alg.standard_normal((1, d))[0]
                g = g / N + lam * w_md
                z = (a * mu * w_md + ((1 - a) * mu + eta) * w - a * g) / (mu + eta)
                w = mechanisms.project_ball(z, kw["radius"])
                w_ag = a * w + (1 - a) * w_ag
                rr += 1
        outs.append(w_ag)
    return np.array(outs)


# --- the machine's limits -------------------------------------------------------------------------------
def machine_limits() -> dict:
    """Peak double-precision matrix-multiply rate and STREAM-like copy bandwidth, measured now."""
    n = 2048
    A, B = np.random.default_rng(0).standard_normal((2, n, n))
    A @ B
    t = min(_timed(lambda: A @ B) for _ in range(3))
    flops = 2 * n**3 / t
    src = np.random.default_rng(1).standard_normal(2**25)        # 256 MiB
    dst = np.empty_like(src)
    t = min(_timed(lambda: np.copyto(dst, src)) for _ in range(5))
    return {"matmul_gflops": flops / 1e9, "copy_gb_per_s": 2 * src.nbytes / t / 1e9}


def gradient_roofline(cfg: dict, limits: dict) -> dict:
    """Time the engine's gradient work of config c (for each trial and silo, a minibatch of K of n records and the
    GLM gradient X^T (X w - y) / K: Records.batch_grad, the fused kernel of algorithms/kernels.py) against its
    roofline: the bytes it must move (each gathered record read once, plus the indices) at the copy bandwidth,
    and its FLOPs at the matmul rate. (The unfused numpy path must move 4x the batch: gather read + write, two
    gradient reads.)"""
    pop = _population(cfg["N"], cfg["d"])
    T, N, n, d, K = cfg["T"], cfg["N"], cfg["n"], cfg["d"], cfg["K"]
    ps = np.random.SeedSequence(5)
    records = Records(pop, streams_for(ps, range(T), 0), T, n, materialise=True)
    idx = sampling.k_subsets(np.random.default_rng(2), (T, N), n, K)
    w = np.random.default_rng(3).standard_normal((T, d)) * 0.1
    loss = Squared()

    def step():
        records.batch_grad(idx, loss, w)
    step()
    t = min(_timed(step) for _ in range(5))
    batch = T * N * K * d * 8
    moved = batch + T * N * K * 16          # every gathered record read once, its label and index
    flops = 4 * T * N * K * d
    bound = max(moved / (limits["copy_gb_per_s"] * 1e9), flops / (limits["matmul_gflops"] * 1e9))
    # where the gap to the bound lies (a profile, not part of the bound), all on one thread as the kernel is: the
    # same kernel on the same number of records laid out one after another (no scatter: the gather's share), and
    # two libraries reading a batch of the same bytes once (OpenBLAS's matrix-vector product, numpy's sum)
    rows = np.random.default_rng(4).standard_normal((T * N * K, d))      # as many records as the batches hold
    labels = np.random.default_rng(6).standard_normal(T * N * K)
    contiguous = np.arange(T * N * K, dtype=np.int64).reshape(T, N, K)
    code, p = loss.kernel
    with _one_thread():
        kernels.gather_grad(rows, labels, contiguous, w, code, p, 0.0)
        t_contig = min(_timed(lambda: kernels.gather_grad(rows, labels, contiguous, w, code, p, 0.0))
                       for _ in range(5))
        rows @ w[0]
        t_blas = min(_timed(lambda: rows @ w[0]) for _ in range(5))
        rows.sum()
        t_sum = min(_timed(rows.sum) for _ in range(5))
    return {"seconds": t, "roofline_seconds": bound, "fraction_of_roofline": bound / t, "bytes": moved,
            "flops": flops, "limited_by": "memory" if moved / limits["copy_gb_per_s"] > flops / limits["matmul_gflops"]
            else "compute", "contiguous_seconds": t_contig, "blas_read_seconds": t_blas, "sum_read_seconds": t_sum}


# --- the machine's bound for a row: draws at the generator's rate, the gradient pass at the roofline ---------
def _generators(obj, seen: set | None = None) -> list[np.random.Generator]:
    """Every numpy Generator reachable from ``obj``'s attributes (objects, lists, tuples, dicts), depth first: how
    the streams' generators are found without assuming how algorithms/streams.py stores them."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, np.random.Generator):
        return [obj]
    if isinstance(obj, (list, tuple)):
        items = list(obj)
    elif isinstance(obj, dict):
        items = list(obj.values())
    elif hasattr(obj, "__dict__") and not isinstance(obj, (type, np.ndarray)):
        items = list(vars(obj).values())
    else:
        return []
    return [g for item in items for g in _generators(item, seen)]


def generator_rates(m: int = 2**22) -> dict:
    """The time per value of the generator algorithms/streams.py gives a trial (found by introspection, so it is
    whatever bit generator streams.py uses now): m standard normals and m uniforms drawn into place, best of 5; and
    the same m values asked through TrialStreams (its block buffer's copies included), best of 3."""
    ts = streams_for(np.random.SeedSequence(0), [0], 1)
    gens = _generators(ts)
    if not gens:
        raise RuntimeError("algorithms/streams.py: no numpy Generator found in a TrialStreams")
    g = gens[0]
    buf = np.empty(m)
    g.standard_normal(out=buf)
    normal = min(_timed(lambda: g.standard_normal(out=buf)) for _ in range(5)) / m
    uniform = min(_timed(lambda: g.random(out=buf)) for _ in range(5)) / m
    ts.standard_normal((1, m)), ts.random((1, m))
    s_normal = min(_timed(lambda: ts.standard_normal((1, m))) for _ in range(3)) / m
    s_uniform = min(_timed(lambda: ts.random((1, m))) for _ in range(3)) / m
    kinds_ = sorted({type(x.bit_generator).__name__ for x in gens})
    return {"bit_generator": "/".join(kinds_), "normal_ns": normal * 1e9, "uniform_ns": uniform * 1e9,
            "streams_normal_ns": s_normal * 1e9, "streams_uniform_ns": s_uniform * 1e9}


@contextlib.contextmanager
def counting_draws():
    """Counts the normals and uniforms the code run inside asks of TrialStreams (the values it uses, not the
    block buffer's read-ahead). ``uniform`` and ``integers`` are counted through ``random``, which they call."""
    counts = {"normal": 0, "uniform": 0}
    orig = {"standard_normal": TrialStreams.standard_normal, "random": TrialStreams.random}

    def wrap(name, kind):
        def draw(self, *args, **kw):
            out = orig[name](self, *args, **kw)
            counts[kind] += int(np.size(out))
            return out
        return draw
    TrialStreams.standard_normal = wrap("standard_normal", "normal")      # type: ignore[method-assign]
    TrialStreams.random = wrap("random", "uniform")                       # type: ignore[method-assign]
    try:
        yield counts
    finally:
        TrialStreams.standard_normal = orig["standard_normal"]          # type: ignore[method-assign]
        TrialStreams.random = orig["random"]                            # type: ignore[method-assign]


def work_bound(draws: dict, grad_elems: int, limits: dict, rates: dict) -> dict:
    """The machine's bound on a run's time: its draws at the streams' generator rate (normals and uniforms,
    counted), plus its gradient pass at the roofline: every batch coordinate (grad_elems = rounds x trials x
    silos x batch x d) read once from memory (8 bytes) at the copy bandwidth, or its 4 FLOPs (X w and X^T s) at
    the matmul rate, whichever is slower. The draws and the gradient pass are separate passes in numpy, one
    thread each, hence the sum. A lower bound: no Python, no gather, no projection, no second pass."""
    draw_s = (draws["normal"] * rates["normal_ns"] + draws["uniform"] * rates["uniform_ns"]) * 1e-9
    mem_s = 8 * grad_elems / (limits["copy_gb_per_s"] * 1e9)
    flop_s = 4 * grad_elems / (limits["matmul_gflops"] * 1e9)
    parts = {"draws": draw_s, "memory": mem_s, "compute": flop_s}
    return {"bound_s": draw_s + max(mem_s, flop_s), "draws_s": draw_s, "memory_s": mem_s, "compute_s": flop_s,
            "normals": draws["normal"], "uniforms": draws["uniform"], "grad_elems": grad_elems,
            "limited_by": max(parts, key=lambda k: parts[k])}


def _measure(fn, repeats: int) -> dict:
    """Best wall-clock and best CPU time (this process, every thread) of ``repeats`` calls, and the last output."""
    walls, cpus, out = [], [], None
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return {"wall_s": min(walls), "cpu_s": min(cpus), "repeats": repeats, "out": out}


# --- DP-SGD against Opacus (optional) ---------------------------------------------------------------------
_TINY = np.finfo(np.float64).tiny


class PerSampleClipped:
    """DP-SGD's per-sample clipping (Opacus's ``max_grad_norm``) on a linear-model loss: ``batch_grad`` forms every
    record's gradient, takes its l2 norm and scales it to at most C before averaging, the generic way Opacus does
    it (not through the linear model's shortcut |phi'| ||x||): in one pass through the engine's clipped-gradient
    kernel (``kernels.clipped_grads``, the one the shuffle model's P_SGD uses) when the wrapped loss has a kernel
    code, else in numpy. It has no ``kernel`` of its own: the rounds' fused gradient kernel (Records.batch_grad)
    would skip the clipping, so the rounds call ``batch_grad``; anything else is the wrapped loss's."""

    kernel = None

    def __init__(self, loss, C: float):
        self.loss, self.C = loss, C

    def batch_grad(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """w (T, d), X (T, N, K, d), y (T, N, K) -> the mean clipped gradient of each silo's batch, (T, N, d)."""
        T, N, K, d = X.shape
        code = self.loss.kernel
        if code is not None:                   # each (trial, silo) batch as one cell of the kernel, at its trial's w
            _, total = kernels.clipped_grads(X.reshape(T * N, K, d), y.reshape(T * N, K), np.repeat(w, N, axis=0),
                                             code[0], code[1], float(self.loss.mu), float(self.C))
            return (total / K).reshape(T, N, d)
        # every record's gradient phi'(<w, x>) x + mu w, as loss.record_grads forms it, with fixed einsum subscripts
        # (record_grads' "t...d" ones cost twice as much at these sizes)
        z, xsq = np.einsum("tnkd,td->tnk", X, w), np.einsum("tnkd,tnkd->tnk", X, X)
        g = self.loss.dphi(z, y, xsq)[..., None] * X                          # (T, N, K, d)
        if self.loss.mu:
            g += self.loss.mu * w[:, None, None, :]
        norm = np.sqrt(np.einsum("tnkd,tnkd->tnk", g, g))
        scale = np.minimum(1.0 / K, (self.C / K) / np.maximum(norm, _TINY))  # min(1, C / ||g||) / K
        return np.einsum("tnk,tnkd->tnd", scale, g)

    def __getattr__(self, name: str):
        if name == "loss":
            raise AttributeError(name)
        return getattr(self.loss, name)


def engine_dpsgd(cfg: dict, trials, clip: float | None = 1.0, seed: int = 1) -> np.ndarray:
    """The engine's Algorithm 2 (noisy_mbsgd) as DP-SGD on a logistic regression: labels +-1 from the sphere
    population, per-sample clipping to ``clip`` (None: none), the given trials advancing together."""
    trials = list(trials)
    ps = np.random.SeedSequence(seed)
    rec = Records(_population(cfg["N"], cfg["d"]), streams_for(ps, trials, 0), len(trials), cfg["n"], materialise=True)
    rec.y = np.sign(rec.y) + (rec.y == 0)
    loss = Logistic() if clip is None else PerSampleClipped(Logistic(), clip)
    return ALGORITHMS.get("noisy_mbsgd").run(rec, loss, R=cfg["R"], K=cfg["K"], sigma=0.5, eta=0.1, radius=1.0,
                                             M_range=(cfg["N"], cfg["N"]), rng=streams_for(ps, trials, 1)).w


def opacus_dpsgd(cfg: dict, runs: int) -> None:
    """Opacus DP-SGD (Poisson sampling at expected batch N K, per-sample gradients, clipping to 1, noise
    multiplier 1) on a logistic regression of the same size (N n records on the unit sphere in R^d, float64),
    ``runs`` runs of R steps one after another, each with its own model, optimiser and PrivacyEngine."""
    import torch
    from opacus import PrivacyEngine

    N, K, d, R = cfg["N"], cfg["K"], cfg["d"], cfg["R"]
    rng = np.random.default_rng(0)
    m = N * cfg["n"]
    X = rng.standard_normal((m, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(rng.random(m) < 0.5, 1.0, 0.0)
    torch.manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.tensor(X), torch.tensor(y))
    for _ in range(runs):
        model = torch.nn.Linear(d, 1, bias=False).double()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        loader = torch.utils.data.DataLoader(data, batch_size=N * K, shuffle=True)
        model, opt, loader = PrivacyEngine().make_private(module=model, optimizer=opt, data_loader=loader,
                                                          noise_multiplier=1.0, max_grad_norm=1.0)
        steps = 0
        while steps < R:
            for xb, yb in loader:
                opt.zero_grad()
                torch.nn.functional.binary_cross_entropy_with_logits(model(xb)[:, 0], yb).backward()
                opt.step()
                steps += 1
                if steps >= R:
                    break


def opacus_comparison(cfg: dict, limits: dict, rates: dict, repeats: int) -> dict:
    """DP-SGD with per-sample clipping on both sides, on one thread each: Opacus's T runs one after another against
    the engine's Algorithm 2 (clipped) with the T runs advancing together (``batched``, how the harness runs trials)
    and one run at a time (``run_by_run``). The unclipped engine (Algorithm 2 as the specs run it) is timed too. The
    engine's batched and run-by-run outputs must agree (a trial's numbers depend only on its seed)."""
    T, N, K, d, R = cfg["T"], cfg["N"], cfg["K"], cfg["d"], cfg["R"]
    out: dict = {"runs": T, "steps": R, "batch": N * K, "d": d, "clip": 1.0, "threads": 1}
    with _one_thread():
        with counting_draws() as draws:
            w_b = engine_dpsgd(cfg, range(T))                      # also the warm-up
        out["bound"] = work_bound(draws, R * T * N * K * d, limits, rates)
        batched = _measure(lambda: engine_dpsgd(cfg, range(T)), repeats)
        by_run = _measure(lambda: np.concatenate([engine_dpsgd(cfg, [t]) for t in range(T)]), repeats)
        unclipped = _measure(lambda: engine_dpsgd(cfg, range(T), clip=None), repeats)
    out["batched_equals_run_by_run"] = bool(np.array_equal(w_b, by_run["out"]))
    for key, m in (("engine_batched", batched), ("engine_run_by_run", by_run), ("engine_batched_unclipped", unclipped)):
        out[key] = {k: v for k, v in m.items() if k != "out"}
    try:
        import opacus
        import torch
    except ImportError as exc:
        out["status"] = (f"skipped: {exc.name} is not installed. Install opacus and a CPU build of torch in their own "
                         f"venv (README, Performance) and run the benchmark from it")
        return out
    import warnings

    torch.set_num_threads(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # Opacus warns about secure RNG and hooks; not our concern here
        opacus_dpsgd(cfg, 1)                     # warm-up
        op = _measure(lambda: opacus_dpsgd(cfg, T), repeats)
    out["opacus"] = {k: v for k, v in op.items() if k != "out"}
    out["versions"] = {"opacus": opacus.__version__, "torch": torch.__version__}
    for key in ("engine_batched", "engine_run_by_run", "engine_batched_unclipped"):
        out[f"ratio_{key.removeprefix('engine_')}"] = op["wall_s"] / out[key]["wall_s"]
        out[f"cpu_ratio_{key.removeprefix('engine_')}"] = op["cpu_s"] / out[key]["cpu_s"]
    out["status"] = "ok"
    return out


@contextlib.contextmanager
def _one_thread():
    """numpy's BLAS on one thread (threadpoolctl, when installed), as torch is set for Opacus."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(1):
        yield


# --- privacy: the audit's throughput and the accountants at T = 10^5 ------------------------------------
def audit_throughput(quick: bool) -> dict:
    """Audit transcripts per second: the vectorised audit (algorithms/audit.py) against a loop that releases
    and scores one transcript at a time, on the one-pass Gaussian release of agd_smooth's size."""
    from algorithms import audit as mech_audit

    reads = mech_audit.canary_reads("disjoint", n=1, K=1, rounds=1)
    trials = 20_000 if quick else 100_000
    t_vec = _timed(lambda: mech_audit.scores(reads, rounds=1, shift=0.03, sigma=0.13, q=1.0, trials=trials,
                                             rng=np.random.default_rng(0)))
    loop_trials = trials // 20

    def loop():
        rng = np.random.default_rng(0)
        for sign in (1.0, -1.0):
            for _ in range(loop_trials):
                y = mechanisms.gaussian(np.array([[sign * 0.015]]), 0.13, rng=rng)
                float(((0.015 * y - 0.015**2 / 2) - (-0.015 * y - 0.015**2 / 2)).sum() / 0.13**2)
    t_loop = _timed(loop)
    per_s_vec, per_s_loop = 2 * trials / t_vec, 2 * loop_trials / t_loop
    return {"vectorised_per_s": per_s_vec, "loop_per_s": per_s_loop, "speedup": per_s_vec / per_s_loop}


def accountant_times(quick: bool = False) -> dict:
    """T = 10^5 rounds: seed 001's subsampled-shuffle bound (composition is T times one round's RDP) against
    adding the rounds one by one; dp-accounting's RDP accountant composing the k-of-n subsampled Gaussian once
    with count T against composing it one event at a time. Each single composition recomputes the event's RDP
    at every order (its cost does not depend on how many were composed before), so the round-by-round time is
    measured on ``reps`` single compositions (3 with ``quick``, 10 otherwise; the mean per event is reported)
    and scaled to 10^5; the accountant's epsilon after them is checked against composing them with count reps."""
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant

    from verifiers.accountants import rdp_wor, subsampled_shuffle
    from verifiers.accountants.gaussian import RDP_ORDERS

    T = 10**5
    kw = dict(k=1000, n=10**6, eps0=2.0)
    t_ours = _timed(lambda: subsampled_shuffle.epsilon("upper", T=T, delta=1e-8, **kw))
    orders = subsampled_shuffle._grid(1024)

    def by_rounds():
        one = np.array([subsampled_shuffle.rdp_upper(int(o), **kw) for o in orders])
        total = np.zeros_like(one)
        for _ in range(T):
            total += one
        return subsampled_shuffle.rdp_to_dp(total, orders, 1e-8)
    t_rounds = _timed(by_rounds)
    event = dp_accounting.SampledWithoutReplacementDpEvent(10**4, 10, dp_accounting.GaussianDpEvent(1.0))

    def accountant():
        return rdp_privacy_accountant.RdpAccountant(list(RDP_ORDERS), dp_accounting.NeighboringRelation.REPLACE_ONE)

    def at_once(count):
        acc = accountant()
        acc.compose(event, count)
        return acc.get_epsilon(1e-5)

    reps = 3 if quick else 10

    def one_by_one():
        acc = accountant()
        for _ in range(reps):
            acc.compose(event)
        return acc.get_epsilon(1e-5)
    t_once = _timed(lambda: at_once(T))
    t0 = time.perf_counter()
    eps_each = one_by_one()
    per_event = (time.perf_counter() - t0) / reps
    t_each = per_event * T

    def engine_event():                                 # the engine's accountant, its cache emptied: computed
        rdp_wor._cached.cache_clear()
        acc = rdp_wor.RdpAccountant(list(RDP_ORDERS), dp_accounting.NeighboringRelation.REPLACE_ONE)
        acc.compose(event)
        return acc.get_epsilon(1e-5)
    t0 = time.perf_counter()
    eps_engine = [engine_event() for _ in range(reps)][-1]
    engine_per_event = (time.perf_counter() - t0) / reps
    return {"shuffle_T1e5_s": t_ours, "shuffle_round_by_round_s": t_rounds, "shuffle_speedup": t_rounds / t_ours,
            "dp_accounting_T1e5_s": t_once, "dp_accounting_single_compositions": reps,
            "dp_accounting_per_event_s": per_event, "dp_accounting_round_by_round_s_est": t_each,
            "dp_accounting_speedup": t_each / t_once,
            "dp_accounting_same_epsilon": bool(abs(eps_each - at_once(reps)) <= 1e-9 * max(1.0, abs(eps_each))),
            "engine_rdp_per_event_s": engine_per_event, "engine_rdp_speedup": per_event / engine_per_event,
            "engine_rdp_same_epsilon": bool(eps_engine == at_once(1))}


def shuffle_sum_cost(quick: bool) -> dict:
    """Seed 000's P_VEC: one call (n users, d coordinates) with the exact count sampler at binomial sizes b from
    10^2 to 10^9 per user, against the bit-level protocol (every user's g + b bits) at the small b's. The count
    sampler's time must not grow with b; the bit-level one grows linearly."""
    from algorithms import shuffle_sum

    n, d, reps = 50, 10, (20 if quick else 100)        # reps calls, vectorised; times are per call
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 2.0, size=(reps, d, n))
    out: dict = {"n": n, "d": d, "calls": reps, "count_s": {}, "bits_s": {}}
    shuffle_sum.p1d_count(x, shuffle_sum.P1DParams(g=15, b=100, p=0.49, Delta=2.0), rng)      # warm-up
    for b in (100, 1000, 10**6, 10**9):
        prm = shuffle_sum.P1DParams(g=15, b=b, p=0.49, Delta=2.0)
        count = functools.partial(shuffle_sum.p1d_count, x, prm, rng)
        out["count_s"][b] = min(_timed(count) for _ in range(5)) / reps
        if b <= 1000:
            bits = functools.partial(shuffle_sum.p1d_bits, x[:2], prm, rng)
            out["bits_s"][b] = min(_timed(bits) for _ in range(3)) / 2
    c = out["count_s"]
    out["count_1e9_over_1e2"] = c[10**9] / c[100]
    out["bits_over_count_at_1e3"] = out["bits_s"][1000] / c[1000]
    return out


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


# --- the configurations' rows -----------------------------------------------------------------------------
def row_pairs(cfgs: dict) -> list[dict]:
    """Every (configuration, algorithm) row: the engine's run, the baseline's run and the number of batch
    coordinates its gradient pass reads (rounds x trials x silos x K x d), for the bound."""
    rows = []
    for name, cfg in cfgs.items():
        if cfg.get("agd"):
            kw, pop = _agd_kwargs(cfg["T"])
            elems = sum(s.rounds for s in kw["stages"]) * kw["T"] * pop.N * kw["K"] * pop.d
            rows.append(dict(config=name, algorithm="accelerated_mbsgd", engine=functools.partial(engine_onepass, kw, pop),
                             baseline=functools.partial(baseline_onepass, kw, pop), grad_elems=elems))
            continue
        one = {"n": cfg["n"], "T": cfg["T"], "K": cfg["K"], "sigma": cfg["sigma"], "radius": 1.0, "mu": 0.0,
               "lam": 0.0, "stages": (acsa.Stage(cfg["R"], 1.0),), "one_pass": True, "M_range": (cfg["N"], cfg["N"])}
        if one["K"] * cfg["R"] > cfg["n"]:
            one["n"] = one["K"] * cfg["R"]
        pop = _population(cfg["N"], cfg["d"])
        elems = cfg["R"] * cfg["T"] * cfg["N"] * cfg["K"] * cfg["d"]
        rows.append(dict(config=name, algorithm="noisy_mbsgd", engine=functools.partial(engine_mbsgd, cfg),
                         baseline=functools.partial(baseline_mbsgd, cfg), grad_elems=elems))
        rows.append(dict(config=name, algorithm="accelerated_mbsgd", engine=functools.partial(engine_onepass, one, pop),
                         baseline=functools.partial(baseline_onepass, one, pop), grad_elems=elems))
    return rows


def time_rows(cfgs: dict, limits: dict, rates: dict, repeats: int) -> list[dict]:
    """Each row: one engine run counting its draws (and warming up), then the engine and the baseline timed
    ``repeats`` times each (best wall and best CPU time), their outputs compared, and the row's bound."""
    out = []
    for row in row_pairs(cfgs):
        with counting_draws() as draws:
            row["engine"]()
        bound = work_bound(draws, row["grad_elems"], limits, rates)
        eng, base = _measure(row["engine"], repeats), _measure(row["baseline"], repeats)
        diff = float(np.abs(eng["out"] - base["out"]).max())
        out.append({"config": row["config"], "algorithm": row["algorithm"], "engine_s": eng["wall_s"],
                    "engine_cpu_s": eng["cpu_s"], "baseline_s": base["wall_s"], "baseline_cpu_s": base["cpu_s"],
                    "repeats": repeats, "speedup": base["wall_s"] / eng["wall_s"],
                    "cpu_speedup": base["cpu_s"] / eng["cpu_s"], "bound_s": bound["bound_s"],
                    "engine_over_bound": eng["wall_s"] / bound["bound_s"], "bound": bound,
                    "max_abs_diff": diff, "same_outputs": diff <= 1e-9})
    return out


# --- main ----------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a quarter of the rounds and trials, one repeat")
    ap.add_argument("--repeats", type=int, default=None, help="timed repeats of each run (default 3, --quick 1)")
    ap.add_argument("--out", default=None,
                    help="where to write the results (default benchmarks/results.json, the README's source; with "
                         "--quick benchmarks/results_quick.json, so a quick look never replaces the full results)")
    ap.add_argument("--readme", nargs="?", const=str(HERE.parent / "README.md"), default=None, metavar="PATH",
                    help="then rewrite PATH's generated benchmark section (default README.md) from the results")
    args = ap.parse_args(argv)
    repeats = args.repeats if args.repeats is not None else (1 if args.quick else 3)
    if args.quick and args.readme:
        print("--quick with --readme is not allowed: the README's benchmark section is generated from a full run "
              "(benchmarks/results.json)", file=sys.stderr)
        return 2
    if args.out is None:
        args.out = str(HERE / ("results_quick.json" if args.quick else "results.json"))
    if repeats < 1:
        print(f"--repeats: {repeats} is not allowed: at least 1", file=sys.stderr)
        return 2
    t_start, c_start, load_start = time.perf_counter(), time.process_time(), os.getloadavg()
    cfgs = configs(args.quick)
    limits, rates = machine_limits(), generator_rates()
    rows = time_rows(cfgs, limits, rates, repeats)
    roof = gradient_roofline(cfgs["c_large"], limits)
    opac = opacus_comparison(cfgs["a_overhead"] | {"R": 50 if args.quick else 200}, limits, rates, repeats)
    aud, acct = audit_throughput(args.quick), accountant_times(args.quick)
    sums = shuffle_sum_cost(args.quick)
    run = {"wall_s": time.perf_counter() - t_start, "cpu_s": time.process_time() - c_start, "repeats": repeats,
           "load_average_start": load_start[0], "load_average_end": os.getloadavg()[0], "cpus": os.cpu_count(),
           "command": "python -m benchmarks.run" + (" --quick" if args.quick else "")}
    result = {"machine": {"python": platform.python_version(), "numpy": np.__version__, **limits},
              "generator": rates, "run": run, "quick": args.quick, "rows": rows, "roofline_c_large": roof,
              "opacus": opac, "audit": aud, "accountants": acct, "shuffle_sum": sums}
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    report(result)
    print(f"written: {args.out}")
    if args.readme:
        from benchmarks import readme
        return readme.main(["--results", args.out, "--readme", args.readme])
    return 0


def report(res: dict) -> None:
    """The results as text on stdout."""
    limits, rates, run = res["machine"], res["generator"], res["run"]
    print(f"machine: {limits['matmul_gflops']:.1f} GFLOP/s matmul, {limits['copy_gb_per_s']:.1f} GB/s copy; "
          f"{rates['bit_generator']}: {rates['normal_ns']:.2f} ns per normal, {rates['uniform_ns']:.2f} ns per uniform")
    print(f"{'config':<12} {'algorithm':<18} {'engine s':>9} {'(CPU s)':>8} {'baseline s':>11} {'bound s':>8} "
          f"{'eng/bound':>9} {'speed-up':>9} {'ceiling':>8}  same outputs")
    for r in res["rows"]:
        print(f"{r['config']:<12} {r['algorithm']:<18} {r['engine_s']:>9.3f} {r['engine_cpu_s']:>8.3f} "
              f"{r['baseline_s']:>11.3f} {r['bound_s']:>8.3f} {r['engine_over_bound']:>8.1f}x {r['speedup']:>8.1f}x "
              f"{r['baseline_s'] / r['bound_s']:>7.2f}x  "
              f"{'yes' if r['same_outputs'] else 'NO'} (max |diff| {r['max_abs_diff']:.1e})")
    roof = res["roofline_c_large"]
    print(f"c_large gradient work: {roof['seconds'] * 1e3:.2f} ms vs roofline {roof['roofline_seconds'] * 1e3:.2f} ms "
          f"({roof['limited_by']}-bound): {roof['fraction_of_roofline']:.0%} of the bound; on contiguous records "
          f"{roof['contiguous_seconds'] * 1e3:.2f} ms; one thread reading the same bytes: OpenBLAS "
          f"{roof['blas_read_seconds'] * 1e3:.2f} ms, numpy's sum {roof['sum_read_seconds'] * 1e3:.2f} ms")
    op = res["opacus"]
    eng = f"engine (clipped) batched {op['engine_batched']['wall_s']:.3f} s, run by run " \
          f"{op['engine_run_by_run']['wall_s']:.3f} s, unclipped batched {op['engine_batched_unclipped']['wall_s']:.3f} s"
    if op.get("status") == "ok":
        print(f"DP-SGD ({op['runs']} runs x {op['steps']} steps, batch {op['batch']}, d = {op['d']}, clipping both): "
              f"Opacus {op['opacus']['wall_s']:.2f} s; {eng}: Opacus / engine {op['ratio_batched']:.1f}x batched, "
              f"{op['ratio_run_by_run']:.1f}x run by run (CPU time: {op['cpu_ratio_batched']:.1f}x, "
              f"{op['cpu_ratio_run_by_run']:.1f}x)")
    else:
        print(f"DP-SGD: {eng}; Opacus {op['status']}")
    aud, acct, sums = res["audit"], res["accountants"], res["shuffle_sum"]
    print(f"privacy audit: {aud['vectorised_per_s']:.3g} transcripts/s vectorised vs {aud['loop_per_s']:.3g}/s "
          f"one at a time ({aud['speedup']:.0f}x)")
    print(f"accountants at T = 1e5: seed 001 bound {acct['shuffle_T1e5_s']:.2f} s vs round by round "
          f"{acct['shuffle_round_by_round_s']:.2f} s ({acct['shuffle_speedup']:.1f}x); dp-accounting "
          f"{acct['dp_accounting_T1e5_s']:.3f} s vs round by round ~{acct['dp_accounting_round_by_round_s_est']:.0f} s "
          f"({acct['dp_accounting_per_event_s']:.3f} s per event, mean of {acct['dp_accounting_single_compositions']}; "
          f"{acct['dp_accounting_speedup']:.0f}x); the engine's curve (rdp_wor) {acct['engine_rdp_per_event_s']:.4f} s "
          f"per event ({acct['engine_rdp_speedup']:.0f}x faster, the same epsilon: {acct['engine_rdp_same_epsilon']})")
    print(f"P_VEC call (n = {sums['n']}, d = {sums['d']}), exact count sampler: "
          + ", ".join(f"b = {float(b):.0e} {t * 1e3:.3f} ms" for b, t in sums["count_s"].items())
          + f" (b = 1e9 / b = 1e2: {sums['count_1e9_over_1e2']:.2f}x); bit-level protocol: "
          + ", ".join(f"b = {float(b):.0e} {t * 1e3:.1f} ms" for b, t in sums["bits_s"].items())
          + f" ({sums['bits_over_count_at_1e3']:.0f}x the count sampler at b = 1e3)")
    print(f"total: {run['wall_s']:.0f} s wall, {run['cpu_s']:.0f} s CPU, {run['repeats']} repeat(s), load average "
          f"{run['load_average_start']:.1f} -> {run['load_average_end']:.1f} on {run['cpus']} CPUs")


if __name__ == "__main__":
    sys.exit(main())
