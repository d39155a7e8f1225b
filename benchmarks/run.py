"""Benchmarks: the engine's vectorised trial loop against a per-trial, per-silo loop, against this machine's
roofline, and (when installed) against Opacus. Run with ``python -m benchmarks.run`` (``--quick`` for a
smaller version); prints a table and writes benchmarks/results.json. It reports; it asserts nothing and is
not part of CI.

Configurations (named in the README):
  a_overhead  many silos (N = 64), small per-silo batches (K = 4), small d (8): Python overhead dominates;
  b_agd       the default configuration of specs/agd_smooth.yaml (its middle sweep point, n = 14142);
  c_large     a large per-silo batch (K = 1024) and d = 256, so memory traffic dominates.
Every timing is a ratio against a baseline run in the same process on the same work, and the baseline's
outputs are checked against the engine's for the same seeds.
"""
from __future__ import annotations

import argparse
import functools
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

from algorithms import acsa, mechanisms, sampling
from algorithms.data import Records, make_sphere_linear
from algorithms.losses import Logistic, Squared
from algorithms.streams import streams_for
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
        batches = sampling.disjoint_batches(alg, (1, N), n, K, total)
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
        del batches
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
    return {"seconds": t, "roofline_seconds": bound, "fraction_of_roofline": bound / t, "bytes": moved,
            "flops": flops, "limited_by": "memory" if moved / limits["copy_gb_per_s"] > flops / limits["matmul_gflops"]
            else "compute"}


# --- Opacus (optional) ----------------------------------------------------------------------------------
def opacus_ratio(cfg: dict) -> dict:
    """DP-SGD on the same logistic-regression problem: Opacus (per-sample gradients, clipping, noise) against
    the engine's Algorithm 2 with the logistic loss, the same number of steps, batch size and d."""
    try:
        import torch
        from opacus import PrivacyEngine
    except ImportError:
        return {"status": "opacus not installed (pip install -e .[bench]); skipped"}
    N, K, d, R, T = cfg["N"], cfg["K"], cfg["d"], cfg["R"], cfg["T"]
    rng = np.random.default_rng(0)
    m = N * cfg["n"]
    X = rng.standard_normal((m, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    torch.set_num_threads(1)

    def run_opacus():
        for _ in range(T):
            model = torch.nn.Linear(d, 1, bias=False).double()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            data = torch.utils.data.TensorDataset(torch.tensor(X), torch.tensor((y + 1) / 2))
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

    def run_engine():
        pop = _population(N, d)
        ps = np.random.SeedSequence(1)
        rec = Records(pop, streams_for(ps, range(T), 0), T, cfg["n"], materialise=True)
        rec.y = np.sign(rec.y) + (rec.y == 0)
        ALGORITHMS.get("noisy_mbsgd").run(rec, Logistic(), R=R, K=K, sigma=0.5, eta=0.1, radius=1.0,
                                          M_range=(N, N), rng=streams_for(ps, range(T), 1))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # Opacus warns about secure RNG and hooks; not our concern here
        t_opacus = _timed(run_opacus)
    t_engine = _timed(run_engine)
    return {"status": "ok", "opacus_seconds": t_opacus, "engine_seconds": t_engine, "speedup": t_opacus / t_engine}


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
    with count T against composing it one event at a time, 10^3 times (20 with ``quick``: each event costs about
    0.3 s), scaled to 10^5."""
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant

    from verifiers.accountants import subsampled_shuffle
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

    def at_once():
        acc = rdp_privacy_accountant.RdpAccountant(list(RDP_ORDERS), dp_accounting.NeighboringRelation.REPLACE_ONE)
        acc.compose(event, T)
        return acc.get_epsilon(1e-5)

    reps = 20 if quick else 1000

    def one_by_one():
        acc = rdp_privacy_accountant.RdpAccountant(list(RDP_ORDERS), dp_accounting.NeighboringRelation.REPLACE_ONE)
        for _ in range(reps):
            acc.compose(event)
        return acc.get_epsilon(1e-5)
    t_once, t_each = _timed(at_once), _timed(one_by_one) * (T / reps)
    return {"shuffle_T1e5_s": t_ours, "shuffle_round_by_round_s": t_rounds, "shuffle_speedup": t_rounds / t_ours,
            "dp_accounting_T1e5_s": t_once, "dp_accounting_round_by_round_s_est": t_each,
            "dp_accounting_speedup": t_each / t_once}


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


# --- main ----------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a quarter of the rounds and trials")
    ap.add_argument("--out", default=str(HERE / "results.json"))
    args = ap.parse_args(argv)
    cfgs = configs(args.quick)
    limits = machine_limits()
    rows = []
    for name, cfg in cfgs.items():
        if cfg.get("agd"):
            kw, pop = _agd_kwargs(cfg["T"])
            pairs = [("accelerated_mbsgd", functools.partial(engine_onepass, kw, pop),
                      functools.partial(baseline_onepass, kw, pop))]
        else:
            one = {"n": cfg["n"], "T": cfg["T"], "K": cfg["K"], "sigma": cfg["sigma"], "radius": 1.0, "mu": 0.0,
                   "lam": 0.0, "stages": (acsa.Stage(cfg["R"], 1.0),), "one_pass": True,
                   "M_range": (cfg["N"], cfg["N"])}
            if one["K"] * cfg["R"] > cfg["n"]:
                one["n"] = one["K"] * cfg["R"]
            pop = _population(cfg["N"], cfg["d"])
            pairs = [("noisy_mbsgd", functools.partial(engine_mbsgd, cfg), functools.partial(baseline_mbsgd, cfg)),
                     ("accelerated_mbsgd", functools.partial(engine_onepass, one, pop),
                      functools.partial(baseline_onepass, one, pop))]
        for alg, eng, base in pairs:
            t0 = time.perf_counter()
            w_e = eng()
            t_e = time.perf_counter() - t0
            t0 = time.perf_counter()
            w_b = base()
            t_b = time.perf_counter() - t0
            diff = float(np.abs(w_e - w_b).max())
            rows.append({"config": name, "algorithm": alg, "engine_s": t_e, "baseline_s": t_b,
                         "speedup": t_b / t_e, "max_abs_diff": diff, "same_outputs": diff <= 1e-9})
    roof = gradient_roofline(cfgs["c_large"], limits)
    opac = opacus_ratio(cfgs["a_overhead"] | {"R": 50 if args.quick else 200})
    aud, acct = audit_throughput(args.quick), accountant_times(args.quick)
    sums = shuffle_sum_cost(args.quick)
    result = {"machine": {"python": platform.python_version(), "numpy": np.__version__, **limits},
              "quick": args.quick, "rows": rows, "roofline_c_large": roof, "opacus": opac,
              "audit": aud, "accountants": acct, "shuffle_sum": sums}
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"machine: {limits['matmul_gflops']:.1f} GFLOP/s matmul, {limits['copy_gb_per_s']:.1f} GB/s copy")
    print(f"{'config':<12} {'algorithm':<18} {'engine s':>9} {'baseline s':>11} {'speed-up':>9}  same outputs")
    for r in rows:
        print(f"{r['config']:<12} {r['algorithm']:<18} {r['engine_s']:>9.3f} {r['baseline_s']:>11.3f} "
              f"{r['speedup']:>8.1f}x  {'yes' if r['same_outputs'] else 'NO'} (max |diff| {r['max_abs_diff']:.1e})")
    print(f"c_large gradient work: {roof['seconds'] * 1e3:.2f} ms vs roofline {roof['roofline_seconds'] * 1e3:.2f} ms "
          f"({roof['limited_by']}-bound): {roof['fraction_of_roofline']:.0%} of the bound")
    if opac.get("status") == "ok":
        print(f"Opacus DP-SGD: {opac['opacus_seconds']:.2f} s vs engine {opac['engine_seconds']:.2f} s: "
              f"{opac['speedup']:.1f}x")
    else:
        print(f"Opacus: {opac['status']}")
    print(f"privacy audit: {aud['vectorised_per_s']:.3g} transcripts/s vectorised vs {aud['loop_per_s']:.3g}/s "
          f"one at a time ({aud['speedup']:.0f}x)")
    print(f"accountants at T = 1e5: seed 001 bound {acct['shuffle_T1e5_s']:.2f} s vs round by round "
          f"{acct['shuffle_round_by_round_s']:.2f} s ({acct['shuffle_speedup']:.1f}x); dp-accounting "
          f"{acct['dp_accounting_T1e5_s']:.3f} s vs round by round ~{acct['dp_accounting_round_by_round_s_est']:.1f} s "
          f"({acct['dp_accounting_speedup']:.0f}x)")
    print(f"P_VEC call (n = {sums['n']}, d = {sums['d']}), exact count sampler: "
          + ", ".join(f"b = {b:.0e} {t * 1e3:.3f} ms" for b, t in sums["count_s"].items())
          + f" (b = 1e9 / b = 1e2: {sums['count_1e9_over_1e2']:.2f}x); bit-level protocol: "
          + ", ".join(f"b = {b:.0e} {t * 1e3:.1f} ms" for b, t in sums["bits_s"].items())
          + f" ({sums['bits_over_count_at_1e3']:.0f}x the count sampler at b = 1e3)")
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
