"""Fused gradient kernels (numba) for the rounds' hot loop: one pass over a batch's records instead of numpy's
five (gather, margins, squared norms, the loss's derivative, the weighted sum), each record's row read once
while it is in cache.

Why numba (a hard dependency, issue 17): numpy cannot fuse these passes, and on memory-bound work (large
batches, e.g. K = 1024 records of d = 256) each extra pass over the batch costs as much as the gradient
itself; on one-pass runs the records are drawn, normalised, labelled and differentiated in one pass too.
The kernels compute in float64, single-threaded, cell by cell (trial, silo), records in batch order; a dot
product over the d coordinates may be reassociated (``fastmath={"reassoc"}`` only, so the compiler can use
vector registers: 4x faster on c_large's d = 256; no other IEEE rule is relaxed, NaN and inf propagate). The
arrays are made C-contiguous before the call, so one compiled version runs whatever the batch: a cell's
gradient does not depend on how many trials share the call, and results stay reproducible and independent of
batching (tests/test_kernels.py). As with numpy's own SIMD loops and BLAS, the last bits may differ on another
CPU family. They equal numpy's ``LinearModelLoss.batch_grad`` up to that summation order.

A round of seed 004's silos (algorithms/rounds.py) releases its Gaussian messages in one pass too
(``silo_release``: the noise, the masked sum over the silos and the masked squared noise, in numpy's own orders,
bit for bit, which rounds.py's self-check confirms once per shape).

Seed 000's summation protocols round and sum their users' inputs in one pass too (``round_counts``: whole-number
sums, so the counts equal numpy's elementwise rounding bit for bit).

Seed 002's Figure 3 rounds (``logistic_steps``: many configurations' steps over the same sampled users), seed
003's shuffled gradient steps (``shuffle_steps``: a run of steps on each trial's iterate) and seed 001's CLDP-SGD
rounds (``cldp_rounds``: gradient, clip, R_inf message, the server's sum and the step, a block of rounds per call)
replace numpy code that made ten to twenty calls per step or round, or passed over the batch several times. Their
elementwise operations are numpy's; only their sums are taken in another order than numpy's or BLAS's (in order:
coordinates, and the sampled points of a round; ``cldp_rounds``' dot products go through ``_dot``, whose sum may be
reassociated as in ``gather_grad``), so their numbers equal the code they replace up to that rounding. Their exp is
the C library's, as numpy's and scipy's here: numba would vectorise it with Intel's SVML if the ``icc_rt`` package
were installed (the project does not install it; tests/test_kernels.py's expit pin would fail).

A loss reaches the kernels through its ``kernel`` code (``losses.LinearModelLoss.kernel``): 0 squared,
1 logistic, 2 the Moreau envelope of the hinge (parameter beta_s); a loss without a code goes through numpy.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

SQUARED, LOGISTIC, MOREAU_HINGE = 0, 1, 2
PREFETCH_BYTES = 4096           # how far ahead (in records' bytes, at least one record) a gather asks for its rows
PREFETCH_MAX = 32               # ... and at most this many records ahead


def _c(a: np.ndarray) -> np.ndarray:
    """a as a C-contiguous float64 array (a no-op when it is one): the kernels are compiled for one layout only, so
    the same code, hence the same summation order, runs whatever the batch's shape."""
    return np.ascontiguousarray(a, dtype=np.float64)


def _prefetch_typing(typingctx, arr, idx):
    """LLVM's prefetch hint for the cache line of arr[idx] (read, keep in every cache level): the CPU starts loading
    it and goes on. It changes no value: a gather of rows scattered over a large data set (one record per silo and
    round, from gigabytes of records) otherwise waits for memory row after row. Measured on this machine (T = 40,
    N = 1000, K = 1, d = 1, 320 MB of records): 1.0 ms a round against 3.8-4.3 ms without."""
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False, boundscheck=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0i8")
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


_prefetch: Callable[[np.ndarray, int], None] = intrinsic(_prefetch_typing)  # type: ignore[assignment]


@njit(cache=True, inline="always")
def _prefetch_record(Xf: np.ndarray, y: np.ndarray, r: int, d: int) -> None:
    """Prefetch record r: every cache line of its row of X (flattened, d per row) and its label."""
    base = r * d
    for off in range(0, d, 8):
        _prefetch(Xf, base + off)
    _prefetch(Xf, base + d - 1)
    _prefetch(y, r)


@njit(cache=True, inline="always")
def _dphi(code: int, p: float, z: float, y: float, xsq: float) -> float:
    """d phi / d z of loss ``code`` (losses.py states each in numpy form)."""
    if code == SQUARED:
        return z - y
    if code == LOGISTIC:                       # -y expit(-y z), evaluated without overflow
        a = -y * z
        e = 1.0 / (1.0 + math.exp(-a)) if a >= 0 else math.exp(a) / (1.0 + math.exp(a))
        return -y * e
    c = p * (1.0 - y * z) / xsq                # MOREAU_HINGE: -y clip(beta_s (1 - y z) / ||x||^2, 0, 1)
    return -y * min(max(c, 0.0), 1.0)


@njit(cache=True, fastmath={"reassoc"}, error_model="numpy")
def _gather_grad(X: np.ndarray, y: np.ndarray, flat: np.ndarray, w: np.ndarray, code: int, p: float,
                 mu: float) -> np.ndarray:
    """Mean gradient over each cell's batch, the records gathered by row: X (P, d), y (P,), flat (T, N, K) rows
    of X, w (T, d) -> (T, N, d) = (1/K) sum_k dphi(<w_t, x>, y, ||x||^2) x + mu w_t. Four records at a time (in
    batch order; the rest one by one), so four rows are read from memory at once."""
    T, N, K = flat.shape
    d = X.shape[1]
    out = np.empty((T, N, d))
    acc = np.empty(d)
    hinge = code == MOREAU_HINGE
    Xf = X.reshape(-1)
    F = flat.reshape(-1)
    P = F.shape[0]
    ahead = max(1, min(PREFETCH_MAX, PREFETCH_BYTES // (8 * (d + 1))))
    for c in range(min(ahead, P)):
        _prefetch_record(Xf, y, F[c], d)
    for t in range(T):
        wt = w[t]
        for n in range(N):
            acc[:] = 0.0
            k = 0
            cell = (t * N + n) * K                 # the flat position of this cell's first record
            while k + 4 <= K:
                for q in range(cell + k + ahead, min(cell + k + ahead + 4, P)):
                    _prefetch_record(Xf, y, F[q], d)
                r0, r1, r2, r3 = flat[t, n, k], flat[t, n, k + 1], flat[t, n, k + 2], flat[t, n, k + 3]
                x0, x1, x2, x3 = X[r0], X[r1], X[r2], X[r3]
                z0 = z1 = z2 = z3 = 0.0
                for j in range(d):
                    z0 += x0[j] * wt[j]
                    z1 += x1[j] * wt[j]
                    z2 += x2[j] * wt[j]
                    z3 += x3[j] * wt[j]
                q0 = q1 = q2 = q3 = 0.0
                if hinge:
                    for j in range(d):
                        q0 += x0[j] * x0[j]
                        q1 += x1[j] * x1[j]
                        q2 += x2[j] * x2[j]
                        q3 += x3[j] * x3[j]
                s0 = _dphi(code, p, z0, y[r0], q0)
                s1 = _dphi(code, p, z1, y[r1], q1)
                s2 = _dphi(code, p, z2, y[r2], q2)
                s3 = _dphi(code, p, z3, y[r3], q3)
                for j in range(d):
                    acc[j] += (s0 * x0[j] + s1 * x1[j]) + (s2 * x2[j] + s3 * x3[j])
                k += 4
            while k < K:
                if cell + k + ahead < P:
                    _prefetch_record(Xf, y, F[cell + k + ahead], d)
                r0 = flat[t, n, k]
                x0 = X[r0]
                z0 = 0.0
                q0 = 0.0
                for j in range(d):
                    z0 += x0[j] * wt[j]
                if hinge:
                    for j in range(d):
                        q0 += x0[j] * x0[j]
                s0 = _dphi(code, p, z0, y[r0], q0)
                for j in range(d):
                    acc[j] += s0 * x0[j]
                k += 1
            for j in range(d):
                out[t, n, j] = acc[j] / K + mu * wt[j]
    return out


@njit(cache=True, fastmath={"reassoc"})
def _sphere_linear_grad(G: np.ndarray, U: np.ndarray, w_star: np.ndarray, radius: float, low: float, high: float,
                       w: np.ndarray, code: int, p: float, mu: float) -> np.ndarray:
    """algorithms.data.SphereLinear's records drawn and differentiated in one pass: from the standard normals
    G (T, N, K, d) and uniforms U (T, N, K) its ``sample`` would use, x = radius g / ||g||, y = <w*_n, x> + xi
    with xi = low + (high - low) u; returns the cells' mean gradients (T, N, d) as ``gather_grad`` does."""
    T, N, K, d = G.shape
    out = np.empty((T, N, d))
    acc = np.empty(d)
    for t in range(T):
        wt = w[t]
        for n in range(N):
            ws = w_star[n]
            acc[:] = 0.0
            for k in range(K):
                g = G[t, n, k]
                gsq = 0.0
                gw = 0.0
                gs = 0.0
                for j in range(d):
                    gsq += g[j] * g[j]
                    gw += g[j] * wt[j]
                    gs += g[j] * ws[j]
                scale = radius / math.sqrt(gsq)          # x = scale g
                z = scale * gw
                yk = scale * gs + (low + (high - low) * U[t, n, k])
                s = _dphi(code, p, z, yk, scale * scale * gsq) * scale
                for j in range(d):
                    acc[j] += s * g[j]
            for j in range(d):
                out[t, n, j] = acc[j] / K + mu * w[t, j]
    return out


def gather_grad(X: np.ndarray, y: np.ndarray, flat: np.ndarray, w: np.ndarray, code: int, p: float,
                mu: float) -> np.ndarray:
    """Mean gradient over each cell's batch, the records gathered by row (see ``_gather_grad``)."""
    return _gather_grad(_c(X), _c(y), np.ascontiguousarray(flat, dtype=np.int64), _c(w), int(code), float(p),
                        float(mu))


def sphere_linear_grad(G: np.ndarray, U: np.ndarray, w_star: np.ndarray, radius: float, low: float, high: float,
                       w: np.ndarray, code: int, p: float, mu: float) -> np.ndarray:
    """Sphere records drawn and differentiated in one pass (see ``_sphere_linear_grad``)."""
    return _sphere_linear_grad(_c(G), _c(U), _c(w_star), float(radius), float(low), float(high), _c(w), int(code),
                               float(p), float(mu))


@njit(cache=True)
def _mark_read(seen: np.ndarray, idx: np.ndarray) -> int:
    """Mark records idx (T, N, K) of seen (T, N, n) read: 0, 1 if one was read before (in an earlier call or
    earlier in this batch), 2 if an index lies outside [0, n) (nothing after it is marked)."""
    T, N, K = idx.shape
    n_ = seen.shape[2]
    again = 0
    for t in range(T):
        for n in range(N):
            for k in range(K):
                i = idx[t, n, k]
                if i < 0 or i >= n_:
                    return 2
                if seen[t, n, i]:
                    again = 1
                seen[t, n, i] = True
    return again


def mark_read(seen: np.ndarray, idx: np.ndarray) -> bool:
    """Mark the records idx (T, N, K) in seen (T, N, n) (bool) as read; whether any had been read already."""
    code = _mark_read(seen, np.ascontiguousarray(idx, dtype=np.int64))
    if code == 2:
        raise IndexError(f"record indices must lie in [0, {seen.shape[2]})")
    return bool(code)


@njit(cache=True)
def _round_counts(x: np.ndarray, U: np.ndarray, shift: float, top: float, scale: float, lo: float, hi: float,
                  max_sq: float) -> tuple[np.ndarray, int]:
    """P_VEC's users' rounding summed per coordinate (algorithms/shuffle_sum.py, lines 3-5 of Alg. 1 for every
    coordinate): for x (C, n, d) and uniforms U (C, d, n), counts[c, j] = sum_i floor(s) + [U[c, j, i] < s -
    floor(s)] with s = clip(x[c, i, j] + shift, 0, top) scale. The same operations as numpy's elementwise ones on
    the transposed shifted inputs, with no fastmath; every term is a whole number and so is every partial sum (far
    below 2^53), so the sum is exact in any order: the counts are numpy's bit for bit. Returns (counts, 0; or 1 if an
    input + shift lies outside [lo, hi], 2 if a user's squared norm ||x[c, i]||^2 exceeds max_sq, and nothing is
    summed after it)."""
    C, n, d = x.shape
    out = np.zeros((C, d))
    acc = np.empty(d)
    for c in range(C):
        acc[:] = 0.0
        for i in range(n):
            sq = 0.0
            for j in range(d):
                sq += x[c, i, j] * x[c, i, j]
            if sq > max_sq:
                return out, 2
            for j in range(d):
                v = x[c, i, j] + shift
                if v < lo or v > hi:
                    return out, 1
                if v < 0.0:                          # np.clip's result (a NaN stays NaN)
                    v = 0.0
                elif v > top:
                    v = top
                s = v * scale
                low = np.floor(s)
                acc[j] += low + (1.0 if U[c, j, i] < s - low else 0.0)
        for j in range(d):
            out[c, j] = acc[j]
    return out, 0


def round_counts(x: np.ndarray, U: np.ndarray, shift: float, top: float, scale: float, lo: float, hi: float,
                 max_sq: float = math.inf) -> tuple[np.ndarray, int]:
    """(counts (C, d), 0 or the first violated condition: 1 a shifted input outside [lo, hi], 2 a row's squared norm
    above max_sq) -- see ``_round_counts``."""
    return _round_counts(_c(x), _c(U), float(shift), float(top), float(scale), float(lo), float(hi), float(max_sq))


@njit(cache=True, fastmath={"reassoc"}, error_model="numpy")
def _clipped_grads(X: np.ndarray, y: np.ndarray, w: np.ndarray, code: int, p: float, mu: float,
                   L: float) -> tuple[np.ndarray, np.ndarray]:
    """Every record's gradient clipped to l_2 norm L, in one pass, and their sum: X (C, n, d), y (C, n), w (C, d) ->
    ((C, n, d) g min(1, L/||g||) with g = dphi(<w_c, x>, y, ||x||^2) x + mu w_c, (C, d) their sum over the n records
    in record order) -- ``losses.LinearModelLoss.record_grads`` followed by ``shuffle_sgd.clip_l2``. Sums may be
    reassociated (last-bit differences only; no other IEEE rule is relaxed); a division by zero gives inf or NaN as
    in numpy (a record x = 0 under the Moreau hinge), not an exception."""
    C, n, d = X.shape
    out = np.empty((C, n, d))
    total = np.zeros((C, d))
    for c in range(C):
        for i in range(n):
            z = 0.0
            xsq = 0.0
            for j in range(d):
                z += X[c, i, j] * w[c, j]
                xsq += X[c, i, j] * X[c, i, j]
            s = _dphi(code, p, z, y[c, i], xsq)
            nsq = 0.0
            for j in range(d):
                v = s * X[c, i, j] + mu * w[c, j]
                out[c, i, j] = v
                nsq += v * v
            f = L / max(math.sqrt(nsq), 1e-300)
            if f < 1.0:
                for j in range(d):
                    out[c, i, j] *= f
            for j in range(d):
                total[c, j] += out[c, i, j]
    return out, total


def clipped_grads(X: np.ndarray, y: np.ndarray, w: np.ndarray, code: int, p: float, mu: float,
                  L: float) -> tuple[np.ndarray, np.ndarray]:
    """Clipped record gradients for X (T, ..., d), y (T, ...), w (T, d): ((T, ..., d), their sum per trial (T, d))
    (see ``_clipped_grads``)."""
    T, d = w.shape
    g, total = _clipped_grads(_c(X).reshape(T, -1, d), _c(y).reshape(T, -1), _c(w), int(code), float(p), float(mu),
                              float(L))
    return g.reshape(X.shape), total


@njit(cache=True, error_model="numpy")
def _logistic_steps(z: np.ndarray, idx: np.ndarray, N: np.ndarray, neg_theta: np.ndarray,
                    w: np.ndarray) -> np.ndarray:
    """out[t, :, c] = sum over the first N[t] users u of idx[t] and their points k of z[t, u, k] w[k]
    expit(<z[t, u, k], neg_theta[t, :, c]>), users and points in order; each configuration c is its own chain of
    operations (the loops over c are the vector ones), so nothing is reassociated."""
    T, _, m, d = z.shape
    C = neg_theta.shape[2]
    out = np.zeros((T, d, C))
    s = np.empty(C)
    for t in range(T):
        th = neg_theta[t]
        acc = out[t]
        for u in range(N[t]):
            zu = z[t, idx[t, u]]
            for k in range(m):
                zp = zu[k]
                for c in range(C):
                    s[c] = zp[0] * th[0, c]
                for j in range(1, d):
                    zj = zp[j]
                    for c in range(C):
                        s[c] += zj * th[j, c]
                wk = w[k]
                for c in range(C):
                    s[c] = 1.0 / (1.0 + math.exp(-s[c])) * wk
                for j in range(d):
                    zj = zp[j]
                    for c in range(C):
                        acc[j, c] += zj * s[c]
    return out


def logistic_steps(z: np.ndarray, idx: np.ndarray, N: np.ndarray, neg_theta: np.ndarray,
                   w: np.ndarray) -> np.ndarray:
    """Seed 002's (15), one round for C configurations at once (algorithms/element_sgd.py ``run_many``): z (T, n, m, d)
    the trials' users' points, idx (T, b) each trial's sampled users (the first N[t] taken), neg_theta (T, d, C) minus
    each configuration's iterate, w (m,) the points' weights; returns (T, d, C) sum_{u, k} z w_k expit(-<z, theta>).
    scipy's expit is 1 / (1 + exp(-x)) with the C library's exp, as here (tests/test_kernels.py compares the two bit
    for bit). One pass over the sampled points with every configuration's margin, weight and sum in registers,
    instead of numpy's gather, two matrix products and two passes over a (T, b m, C) array of margins."""
    if (z.ndim != 4 or z.shape[3] == 0 or neg_theta.ndim != 3 or neg_theta.shape[:2] != (z.shape[0], z.shape[3])
            or w.shape != (z.shape[2],)):
        raise ValueError(f"shapes z {z.shape}, neg_theta {neg_theta.shape}, w {w.shape} do not fit together")
    if not (np.issubdtype(idx.dtype, np.integer) and np.issubdtype(N.dtype, np.integer) and idx.ndim == 2):
        raise ValueError(f"idx (trials, b) and N (trials,) must be integer arrays, not {idx.dtype} {idx.shape} and "
                         f"{N.dtype}")
    if idx.shape[0] != z.shape[0] or N.shape != (z.shape[0],) or (N.size and (N.min() < 0 or N.max() > idx.shape[1])):
        raise ValueError(f"N must count at most the {idx.shape[1]} sampled users of each of the {z.shape[0]} trials")
    if idx.size and (idx.min() < 0 or idx.max() >= z.shape[1]):
        raise ValueError(f"user indices must lie in [0, {z.shape[1]})")
    return _logistic_steps(_c(z), np.ascontiguousarray(idx, dtype=np.int64), np.ascontiguousarray(N, dtype=np.int64),
                           _c(neg_theta), _c(w))


@njit(cache=True, fastmath={"reassoc"})
def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """sum_j a[j] b[j], the sum reassociated (vector registers; one compiled order whatever the caller's shapes)."""
    z = 0.0
    for j in range(a.shape[0]):
        z += a[j] * b[j]
    return z


@njit(cache=True, error_model="numpy")
def _cldp_rounds(X: np.ndarray, y: np.ndarray, flat: np.ndarray, U: np.ndarray, w: np.ndarray, t0: int, code: int,
                 p: float, mu: float, C: float, s: float, keep: float, D: float, G: float, radius: float,
                 snap: np.ndarray, kept: np.ndarray, stats: np.ndarray) -> None:
    """B rounds of CLDP-SGD per trial, rounds t0 .. t0 + B - 1 (see ``cldp_rounds``); w, kept and stats in place."""
    T, B, k = flat.shape
    d = X.shape[1]
    g = np.empty(d)
    counts = np.empty(d)
    for t in range(T):
        wt = w[t]
        for b in range(B):
            counts[:] = 0.0
            var = 0.0
            bias = 0.0
            bias_sq = 0.0
            clipped = 0.0
            for i in range(k):
                r = flat[t, b, i]
                z = _dot(X[r], wt)
                xsq = _dot(X[r], X[r]) if code == MOREAU_HINGE else 0.0
                if code == LOGISTIC:                   # losses.Logistic: -y expit(-y z), scipy's 1 / (1 + exp(-x))
                    a = -y[r] * z
                    sc = -y[r] * (1.0 / (1.0 + math.exp(-a)))
                else:
                    sc = _dphi(code, p, z, y[r], xsq)
                m = 0.0                                # ||g||_inf, NaN if any coordinate is
                for j in range(d):
                    v = sc * X[r, j] + mu * wt[j]
                    g[j] = v
                    a = abs(v)
                    if a > m or a != a:
                        m = a
                if m > C:
                    clipped += 1.0
                if m > C or m != m:                    # ldp.clip_inf_norms: g / max{1, ||g||_inf / C}
                    f = m / C
                    for j in range(d):
                        g[j] = g[j] / f
                J = math.floor(U[t, b, i] * d)         # streams.integers(0, d): floor(u d), at most d - 1
                if J > d - 1:
                    J = d - 1
                xj = g[J]
                bit = 1.0 if U[t, b, k + i] < 0.5 * (1.0 + xj / C) else -1.0
                if U[t, b, 2 * k + i] >= keep:
                    bit = -bit
                counts[J] += bit
                sq = _dot(g, g)
                sbx = s * bit * xj
                var += s * s - 2.0 * sbx + sq
                norm = math.sqrt(sq)
                proj = (sbx - sq) / (norm if norm >= 1e-300 else 1e-300) if norm > 0 else 0.0
                bias += proj
                bias_sq += proj * proj
            stats[t, 0] += var
            stats[t, 1] += bias
            stats[t, 2] += bias_sq
            stats[t, 3] += clipped
            rnd = t0 + b
            eta = D / (G * math.sqrt(rnd))
            nsq = 0.0
            for j in range(d):
                v = wt[j] - eta * (s * counts[j] / k)
                wt[j] = v
                nsq += v * v
            norm = math.sqrt(nsq)                      # mechanisms.project_ball
            f = radius / (norm if not norm < 1e-300 else 1e-300)
            if f > 1.0:
                f = 1.0
            for j in range(d):
                wt[j] = wt[j] * f
            for q in range(snap.size):
                if snap[q] == rnd:
                    kept[t, q] = wt


def cldp_rounds(X: np.ndarray, y: np.ndarray, flat: np.ndarray, U: np.ndarray, w: np.ndarray, t0: int, code: int,
                p: float, mu: float, C: float, s: float, keep: float, D: float, G: float, radius: float,
                snap: np.ndarray, kept: np.ndarray, stats: np.ndarray) -> None:
    """B rounds of CLDP-SGD (algorithms/cldp.py, seed 001's Algorithm 1 with the R_inf randomizer of algorithms/ldp.py)
    for every trial, in one pass per round over its k sampled records: gradient, l_inf clip, the message (J, b'),
    the server's sum, the instrumentation and the projected step.

    X (P, d), y (P,): the held records; flat (T, B, k): each round's records' rows; U (T, B, 3k): each round's
    uniforms for J, the rounding and the response, in the order the numpy path draws them; w (T, d): the iterates,
    updated in place to round t0 + B - 1; snap (S,), kept (T, S, d): the rounds whose iterate is kept, and where;
    stats (T, 4): per trial, the sums of ||R(x) - x||^2, <R(x) - x, x/||x||>, its square, and the clipped count,
    added to in place. The elementwise operations are numpy's; only the sums over coordinates and over a round's
    messages are taken in another order (in order), so the numbers equal the numpy path up to that rounding."""
    T, B, k = flat.shape
    if (X.ndim != 2 or y.shape != (X.shape[0],) or U.shape != (T, B, 3 * k) or w.shape != (T, X.shape[1])
            or stats.shape != (T, 4) or snap.ndim != 1 or kept.shape != (T, snap.size, X.shape[1])):
        raise ValueError(f"shapes X {X.shape}, y {y.shape}, flat {flat.shape}, U {U.shape}, w {w.shape}, "
                         f"snap {snap.shape}, kept {kept.shape}, stats {stats.shape} do not fit together")
    if code not in (SQUARED, LOGISTIC, MOREAU_HINGE):
        raise ValueError(f"unknown loss code {code}")
    if not (np.issubdtype(flat.dtype, np.integer) and np.issubdtype(np.asarray(snap).dtype, np.integer)):
        raise ValueError(f"flat and snap must be integer arrays, not {flat.dtype} and {np.asarray(snap).dtype}")
    if flat.size and (flat.min() < 0 or flat.max() >= X.shape[0]):
        raise ValueError(f"record rows must lie in [0, {X.shape[0]})")
    for a in (w, kept, stats):
        if a.dtype != np.float64 or not a.flags.c_contiguous:
            raise ValueError("w, kept and stats are written in place: C-contiguous float64 arrays")
    if t0 < 1 or k < 1:
        raise ValueError(f"rounds count from 1 and a round sends at least one message (t0 = {t0}, k = {k})")
    _cldp_rounds(_c(X), _c(y), np.ascontiguousarray(flat, dtype=np.int64), _c(U), w, int(t0), int(code), float(p),
                 float(mu), float(C), float(s), float(keep), float(D), float(G), float(radius),
                 np.ascontiguousarray(snap, dtype=np.int64), kept, stats)


SHUFFLE_LOSSES = {"mean": 0, "linear": 1, "ridge": 2, "logistic": 3}      # algorithms/shuffleg.py's losses


@njit(cache=True, error_model="numpy")
def _shuffle_steps(x: np.ndarray, R: np.ndarray, Y: np.ndarray, loss: int, G2: float, clip: float, Z: np.ndarray,
                   eta: np.ndarray) -> int:
    """Steps x_t <- x_t - eta_t ([grad f(x_t; R[i, t'], Y[i, t'])]_clip + Z[i, t]) for i = 0..S-1 in order, for each
    trial t (t' = t, or 0 when R holds one record per step); no noise when Z has no steps. Returns the number of
    clipped gradients. Elementwise as shuffleg's numpy steps; the two sums over coordinates (the margin <x, a> and
    the squared norm) run in coordinate order."""
    S, Tr, d = R.shape
    T = x.shape[0]
    noisy = Z.shape[0] > 0
    g = np.empty(d)
    clipped = 0
    for t in range(T):
        tr = t if Tr > 1 else 0
        xt = x[t]
        et = eta[t]
        for i in range(S):
            a = R[i, tr]
            if loss == 0:
                for j in range(d):
                    g[j] = xt[j] - a[j]
            elif loss == 1:
                for j in range(d):
                    g[j] = -a[j]
            else:
                r = 0.0
                for j in range(d):
                    r += xt[j] * a[j]
                c = 2.0 * (r - Y[i, tr]) if loss == 2 else 1.0 / (1.0 + math.exp(-r)) - Y[i, tr]
                for j in range(d):
                    g[j] = c * a[j]
            if G2 < np.inf:
                nrm2 = 0.0
                for j in range(d):
                    nrm2 += g[j] * g[j]
                if nrm2 > G2:
                    clipped += 1
                    f = min(1.0, clip / math.sqrt(max(nrm2, 1e-300)))
                    for j in range(d):
                        g[j] *= f
            if noisy:
                for j in range(d):
                    g[j] += Z[i, t, j]
            for j in range(d):
                xt[j] -= g[j] * et
    return clipped


def shuffle_steps(x: np.ndarray, R: np.ndarray, Y: np.ndarray, loss: str, clip: float, Z: np.ndarray | None,
                  eta: np.ndarray) -> int:
    """Seed 003's shuffled gradient steps (algorithms/shuffleg.py ``_run_chunk``) on x (T, d), in place: step i reads
    R[i] (T, d) one record per trial, or (1, d) one record for all, targets Y[i] (T,) or (1,), the loss's gradient
    is clipped to norm ``clip`` (inf: not clipped), the noise Z[i] (T, d) added (None: none), and the step taken
    with each trial's eta (T,). Returns the number of clipped gradients. The numbers equal numpy's per-step code
    (``gradients``, the clip, x -= eta g) to the bit wherever no sum over coordinates is taken (the mean and linear
    losses with no gradient near the clipping norm), and to the sums' rounding otherwise (tests/test_shuffleg.py):
    one call for a whole run of steps instead of about ten numpy calls a step."""
    T, d = x.shape
    if not x.flags.c_contiguous or x.dtype != np.float64:
        raise ValueError("x must be a C-contiguous float64 array: it is updated in place")
    if R.ndim != 3 or R.shape[1] not in (1, T) or R.shape[2] != d or Y.shape != R.shape[:2]:
        raise ValueError(f"records {R.shape} and targets {Y.shape} do not fit {T} trials of dimension {d}")
    if Z is not None and Z.shape != (R.shape[0], T, d):
        raise ValueError(f"noise {Z.shape} does not fit {R.shape[0]} steps of {T} trials of dimension {d}")
    if eta.shape != (T,):
        raise ValueError(f"eta {eta.shape}: one step size per trial, ({T},)")
    if loss not in SHUFFLE_LOSSES:
        raise ValueError(f"unknown loss {loss!r}: one of {', '.join(SHUFFLE_LOSSES)}")
    G2 = clip * clip if np.isfinite(clip) else np.inf
    return int(_shuffle_steps(x, _c(R), _c(Y), SHUFFLE_LOSSES[loss], float(G2), float(clip),
                              _c(Z) if Z is not None else np.empty((0, T, d)), _c(eta)))


EINSUM_BUFFER = 8192            # numpy's iterator buffer, in elements: einsum's reductions sum in chunks of it


@njit(cache=True, inline="always")
def _chunked_add(v: float, acc: float, total: float, c: int, chunk: int) -> tuple[float, float, int]:
    """One term of einsum's buffered sum: v added to the running chunk acc; after ``chunk`` terms the chunk is added
    to the total and restarts from zero. Returns (acc, total, c); the sum is total + acc at the end."""
    acc += v
    c += 1
    if c == chunk:
        return 0.0, total + acc, 0
    return acc, total, c


@njit(cache=True)
def _masked_sq_sum(a: np.ndarray, m: np.ndarray, chunk: int) -> np.ndarray:
    """out[t] = sum_{n, j} a[t, n, j]^2 m[t, n], in the order numpy's ``einsum("tnd,tnd,tn->t", a, a, m)`` sums:
    record by record, coordinates inner, each run of ``chunk`` products summed from zero and added to the total."""
    T, N, D = a.shape
    out = np.zeros(T)
    for t in range(T):
        total = 0.0
        acc = 0.0
        c = 0
        for n in range(N):
            mt = m[t, n]
            for j in range(D):
                acc, total, c = _chunked_add(a[t, n, j] * a[t, n, j] * mt, acc, total, c, chunk)
        out[t] = total + acc
    return out


def masked_sq_sum(a: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """sum_{n, j} a[t, n, j]^2 mask[t, n] per t for a (T, N, d) and a 0/1 mask (T, N): bit for bit numpy's
    ``einsum("tnd,tnd,tn->t", a, a, mask)`` (a round's released noise; tests/test_kernels.py pins it), without
    einsum's cost per (t, n) cell when d is small (about 10 ns a cell at d = 1)."""
    d = a.shape[-1]
    if d > EINSUM_BUFFER:                   # a record longer than einsum's buffer: einsum's own chunks, at no cost
        return np.einsum("tnd,tnd,tn->t", a, a, mask)
    return _masked_sq_sum(_c(a), _c(mask), EINSUM_BUFFER - EINSUM_BUFFER % d if d else 1)


@njit(cache=True, error_model="numpy")
def _silo_release(clean: np.ndarray, Z: np.ndarray, sigma: float, m: np.ndarray,
                  chunk: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One pass over a round's messages: msg = clean + sigma Z, noise = msg - clean, sum_n msg m[t, n] (from 0, in
    silo order) and ``_masked_sq_sum``'s sum of noise^2 m (its ``_chunked_add``). See ``silo_release``."""
    T, N, D = clean.shape
    noise = np.empty((T, N, D))
    gsum = np.zeros((T, D))
    sq = np.zeros(T)
    for t in range(T):
        total = 0.0
        acc = 0.0
        c = 0
        for n in range(N):
            mt = m[t, n]
            for j in range(D):
                cl = clean[t, n, j]
                msg = cl + sigma * Z[t, n, j]
                nz = msg - cl
                noise[t, n, j] = nz
                gsum[t, j] += msg * mt
                acc, total, c = _chunked_add(nz * nz * mt, acc, total, c, chunk)
        sq[t] = total + acc
    return noise, gsum, sq


def silo_release(clean: np.ndarray, Z: np.ndarray, sigma: float,
                 mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A round of the silos' Gaussian releases (algorithms/rounds.py) in one pass, for clean (T, N, d) with d >= 2,
    standard normals Z of the same shape and a 0/1 mask (T, N): (noise (T, N, d), the sum over the silos of
    msg * mask (T, d), the sum of noise^2 * mask per trial (T,)), where msg = clean + sigma Z and noise = msg - clean,
    as numpy's ``mechanisms.gaussian``, ``msg - clean``, ``(msg * mask[..., None]).sum(axis=1)`` and
    ``masked_sq_sum`` give them. The elementwise operations are numpy's; the squared sum is einsum's (see
    ``masked_sq_sum``); the sum over the silos is numpy's for d >= 2 (a reduction over a middle axis adds row after
    row into zeros; for d = 1 numpy sums pairwise, and rounds.py keeps numpy there: the kernel saved nothing at
    d = 1). rounds.py's self-check confirms the silo sum's order once per shape, and falls back to numpy if not."""
    T, N, d = clean.shape
    if not 2 <= d <= EINSUM_BUFFER or Z.shape != clean.shape or mask.shape != (T, N):
        raise ValueError(f"shapes clean {clean.shape}, Z {Z.shape}, mask {mask.shape}: d in 2..{EINSUM_BUFFER}, "
                         f"Z as clean, mask (T, N)")
    return _silo_release(_c(clean), _c(Z), float(sigma), _c(mask), EINSUM_BUFFER - EINSUM_BUFFER % d)


@njit(cache=True)
def _max_multiplicity(flat: np.ndarray, span: int) -> int:
    """The largest count of one value in any row of flat (C, m), values in [0, span); -1 if one lies outside."""
    counts = np.zeros(span, dtype=np.int64)
    best = 0
    for c in range(flat.shape[0]):
        for k in range(flat.shape[1]):
            i = flat[c, k]
            if i < 0 or i >= span:
                return -1
            counts[i] += 1
            if counts[i] > best:
                best = counts[i]
        for k in range(flat.shape[1]):
            counts[flat[c, k]] = 0
    return best


def max_multiplicity(idx: np.ndarray) -> int:
    """The largest number of times one index occurs along the last axis of idx (..., m), over every leading cell:
    one pass with a count per index value (algorithms/result.py)."""
    if idx.size == 0:
        return 0
    flat = np.ascontiguousarray(idx.reshape(-1, idx.shape[-1]), dtype=np.int64)
    best = _max_multiplicity(flat, int(flat.max()) + 1)
    if best < 0:                    # the kernel met an index below 0 (none lies above the maximum)
        raise ValueError(f"indices must be non-negative, not {int(flat.min())}")
    return int(best)


@njit(cache=True)
def _floyd_subsets(u: np.ndarray, n: int) -> np.ndarray:
    """Floyd's algorithm per row of u (C, K): step j = n - K + col takes t = min(floor(u[c, col] (j + 1)), j), or j
    if t was taken at an earlier step (algorithms/sampling.py's k_subsets, the same operations)."""
    C, K = u.shape
    out = np.empty((C, K), dtype=np.int64)
    for c in range(C):
        for col in range(K):
            j = n - K + col
            t = min(math.floor(u[c, col] * (j + 1)), j)
            for k in range(col):
                if out[c, k] == t:
                    t = j
                    break
            out[c, col] = t
    return out


def floyd_subsets(u: np.ndarray, n: int) -> np.ndarray:
    """Uniform K-subsets of {0..n-1} from the uniforms u (..., K), one per cell, by Floyd's algorithm: (..., K)
    int64, equal to sampling.k_subsets' vectorised numpy steps on the same u (tests/test_numerics.py)."""
    K = u.shape[-1]
    return _floyd_subsets(_c(u).reshape(-1, K), int(n)).reshape(u.shape)


def warm() -> None:
    """Load every kernel into this process (from numba's cache, or compiled on a first run): about 0.3 s, the most of
    it numba's one-time start-up. A process that forks workers or children (engine/executors.py, ``run --jobs``)
    calls it first, so that they inherit the loaded kernels instead of each loading them again."""
    X, y, w = np.ones((2, 2)), np.ones(2), np.zeros((1, 2))
    gather_grad(X, y, np.zeros((1, 1, 1), dtype=np.int64), w, SQUARED, 0.0, 0.0)
    sphere_linear_grad(np.ones((1, 1, 1, 2)), np.full((1, 1, 1), 0.5), np.ones((1, 2)), 1.0, -0.1, 0.1, w, SQUARED,
                       0.0, 0.0)
    mark_read(np.zeros((1, 1, 2), dtype=bool), np.zeros((1, 1, 1), dtype=np.int64))
    round_counts(np.zeros((1, 2, 2)), np.full((1, 2, 2), 0.5), 1.0, 2.0, 1.0, -1.0, 1.0)
    clipped_grads(np.ones((1, 2, 2)), np.ones((1, 2)), w, SQUARED, 0.0, 0.0, 1.0)
    masked_sq_sum(np.ones((1, 2, 2)), np.ones((1, 2)))
    silo_release(np.ones((1, 2, 2)), np.ones((1, 2, 2)), 1.0, np.ones((1, 2)))
    max_multiplicity(np.zeros((1, 2), dtype=np.int64))
    floyd_subsets(np.full((1, 2), 0.5), 3)
    shuffle_steps(np.zeros((1, 1)), np.ones((1, 1, 1)), np.ones((1, 1)), "mean", 1.0, np.ones((1, 1, 1)), np.ones(1))
    logistic_steps(np.ones((1, 1, 1, 1)), np.zeros((1, 1), dtype=np.int64), np.ones(1, dtype=np.int64),
                   np.zeros((1, 1, 1)), np.ones(1))
    cldp_rounds(X, y, np.zeros((1, 1, 1), dtype=np.int64), np.full((1, 1, 3), 0.5), np.zeros((1, 2)), 1, LOGISTIC,
                0.0, 0.0, 1.0, 1.0, 0.5, 1.0, 1.0, 1.0, np.zeros(0, dtype=np.int64), np.zeros((1, 0, 2)),
                np.zeros((1, 4)))
