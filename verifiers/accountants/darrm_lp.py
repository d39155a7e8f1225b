"""The chapter's LP (3.2)-(3.3) for DaRRM's gamma_opt at large K by constraint generation (seed 003, chapter 3 and
appendix B; Lnnn = line of ../shared/seeds/003_56e8b1c3300cdeae.txt).

The full LP has one row per multiset of K of Lemma 3.6.1's corners (L961-967): C(K+7, 7) with Delta > 0 (26,978,328
at K = 35, Table B.1's setting, L3470-3480) and C(K+3, 3) under pure DP (182,104 at K = 101, Fig. B.6). Its variables
are only gamma(l), l = (K+1)/2 .. K, so at most (K+1)/2 rows bind at the optimum. ``optimal_gamma_cg`` solves the LP
on a working set of rows, finds the most violated rows among ALL multisets exactly (``scan``), adds them and repeats
until no multiset violates; the answer is then scaled onto every row exactly, as ``darrm_privacy.optimal_gamma`` does.

The scan never builds the rows. By Lemma 3.4.4 (L897-903) the row of a multiset at a symmetric gamma is
f = E[h(L)] - e^{m eps} E[h(L')], h(l) = s(l) gamma(l), s = +1 for l >= (K+1)/2 and -1 below, with L, L' the vote
counts on D and D'. Split the corners into two groups A and B: the law of L is the convolution of the laws of the
counts L_A, L_B of the two groups, so E[h(L)] = a^T H b with a, b their laws and H[i, j] = h(i + j) (a Hankel
matrix). For all multisets with n_A mechanisms in A, the rows are then two matrix products,
(laws_A H) laws_B^T - e^{m eps} (laws'_A H) laws'_B^T: BLAS on blocks whose size is fixed before allocation
(``MAX_BLOCK`` entries, A's multisets chunked). Every law is a convolution of exact binomial pmfs (non-negative
terms only), so f carries the rounding of a sum of O(K^2) products (~1e-15 relative to its terms).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linprog

from verifiers.accountants.darrm_privacy import corners, prior_weights

MAX_BLOCK = 2_000_000         # entries of one block of the scan (two float64 arrays of this size: 32 MB)
MAX_CACHE = 64_000_000        # float64 entries of the groups' cached laws (512 MB; K = 35 with Delta > 0 needs 9.5 M, K = 51 57 M)
ADD_PER_ROUND = 120           # rows added per round: the most violated multisets of the scan
PER_BLOCK = 4                 # at most this many of them from one split n_A, n_B of the corners
MAX_ROUNDS = 200
HIGHS_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
VIOLATION = 1e-9              # a row violated by more than this (relative to the right side) enters the working set


def compositions(n: int, g: int) -> np.ndarray:
    """Every vector of g non-negative integers summing to n (rows), C(n+g-1, g-1) of them."""
    if g == 1:
        return np.array([[n]], dtype=np.int64)
    out = [np.column_stack([np.full(len(rest), k, dtype=np.int64), rest])
           for k in range(n, -1, -1) for rest in (compositions(n - k, g - 1),)]
    return np.concatenate(out)


def binomial_table(n: int, q: float) -> np.ndarray:
    """T[k, j] = Bin(k, q)(j) for k, j = 0..n, by Pascal's recurrence Bin(k+1) = (1-q) Bin(k) + q shift(Bin(k))
    (non-negative terms only: every entry to a few ulps relative, tiny tails included)."""
    T = np.zeros((n + 1, n + 1))
    T[0, 0] = 1.0
    for k in range(n):
        T[k + 1, : k + 1] = (1 - q) * T[k, : k + 1]
        T[k + 1, 1: k + 2] += q * T[k, : k + 1]
    return T


def group_laws(counts: np.ndarray, probs: np.ndarray, tables: list[np.ndarray] | None = None) -> np.ndarray:
    """The law of the number of ones among sum(counts[r]) independent bits, counts[r, j] of them with probability
    probs[j]: the convolution of the Bin(counts[r, j], probs[j]) pmfs, one row per r. ``tables``: each probability's
    ``binomial_table`` of at least that size, when the caller has them."""
    n = int(counts[0].sum()) if counts.size else 0
    out = np.zeros((counts.shape[0], n + 1))
    out[:, 0] = 1.0
    for j, q in enumerate(probs):
        tab = binomial_table(n, float(q)) if tables is None else tables[j]
        pm = tab[counts[:, j], : n + 1]                         # (R, n+1), 0 beyond counts[r, j]
        nxt = np.zeros_like(out)
        for k in range(n + 1):            # out * pm as polynomials, truncated at degree n (the sum stays <= n)
            nxt[:, k:] += out[:, : n + 1 - k] * pm[:, k:k + 1]
        out = nxt
    return out


@dataclass(frozen=True)
class Violation:
    value: float                    # f at the worst multiset
    counts: tuple[int, ...]         # its counts per corner


@dataclass(frozen=True)
class Scan:
    worst: Violation
    top: list[Violation]            # the rows with f > threshold, most violated first (at most ``keep``)
    multisets: int
    seconds: float


def _h(gamma: np.ndarray) -> np.ndarray:
    K = gamma.size - 1
    return np.where(np.arange(K + 1) >= (K + 1) // 2, 1.0, -1.0) * gamma


def cache_entries(K: int, C: int) -> int:
    """The float64 entries ``Groups`` holds for K mechanisms and C corners: both groups' laws on D and D'."""
    gA, gB = C // 2, C - C // 2
    return 2 * sum((math.comb(n + gA - 1, gA - 1) + math.comb(n + gB - 1, gB - 1)) * (n + 1) for n in range(K + 1))


@dataclass(frozen=True)
class Groups:
    """The laws of the vote counts of the two corner groups, for every size n_A = 0..K (computed once: they do not
    depend on gamma). ``a[n]``: (compositions of n over group A, laws on D, laws on D'); ``b[n]`` likewise for B."""

    cs: np.ndarray
    K: int
    a: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
    b: list[tuple[np.ndarray, np.ndarray, np.ndarray]]

    @property
    def multisets(self) -> int:
        return sum(self.a[n][0].shape[0] * self.b[self.K - n][0].shape[0] for n in range(self.K + 1))


def groups(cs: np.ndarray, K: int) -> Groups:
    """``Groups`` for the corners ``cs``; refused (ValueError) before allocating when it would exceed MAX_CACHE."""
    need = cache_entries(K, cs.shape[0])
    if need > MAX_CACHE:
        raise ValueError(f"K = {K} with {cs.shape[0]} corners needs {need} cached law entries (allowed: {MAX_CACHE})")
    gA = cs.shape[0] // 2
    tabs = [[binomial_table(K, float(q)) for q in cs[:, side]] for side in (0, 1)]     # per side, per corner

    def laws(n: int, sl: slice) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        comp = compositions(n, len(range(cs.shape[0])[sl]))
        return (comp, group_laws(comp, cs[sl, 0], tabs[0][sl]), group_laws(comp, cs[sl, 1], tabs[1][sl]))

    return Groups(cs, K, [laws(n, slice(0, gA)) for n in range(K + 1)],
                  [laws(n, slice(gA, None)) for n in range(K + 1)])


def scan(gr: Groups, gamma: np.ndarray, em: float, threshold: float, keep: int, per_block: int | None = None) -> Scan:
    """f(multiset; gamma) = E[h(L)] - em E[h(L')] over every multiset of K of the corners, in blocks of at most
    MAX_BLOCK entries: the maximum, and up to ``keep`` multisets with f > threshold, most violated first, at most
    ``per_block`` of them (default: ``keep``) from one block (one split n_A, n_B: spreads the rows over the region)."""
    per_block = keep if per_block is None else per_block
    t0 = time.perf_counter()
    K = gr.K
    h = _h(np.asarray(gamma, dtype=np.float64))
    best = Violation(-math.inf, ())
    top: list[Violation] = []
    total = 0
    for nA in range(K + 1):
        nB = K - nA
        (ca, la, la_p), (cb, lb, lb_p) = gr.a[nA], gr.b[nB]
        H = h[np.arange(nA + 1)[:, None] + np.arange(nB + 1)[None, :]]          # (nA+1, nB+1)
        HB, HB_p = H @ lb.T, em * (H @ lb_p.T)                                   # (nA+1, |B|)
        rows = max(1, MAX_BLOCK // max(1, cb.shape[0]))
        for s in range(0, ca.shape[0], rows):
            f = la[s:s + rows] @ HB
            f -= la_p[s:s + rows] @ HB_p                                          # (rows, |B|)
            total += f.size
            i, j = np.unravel_index(int(np.argmax(f)), f.shape)
            if f[i, j] > best.value:
                best = Violation(float(f[i, j]), tuple(int(c) for c in np.concatenate([ca[s + i], cb[j]])))
            if keep and f[i, j] > threshold:
                over = np.argwhere(f > threshold)
                vals = f[over[:, 0], over[:, 1]]
                order = np.argsort(-vals)[:per_block]
                top += [Violation(float(vals[k]), tuple(int(c) for c in np.concatenate([ca[s + over[k, 0]],
                                                                                         cb[over[k, 1]]])))
                        for k in order]
                top = sorted(top, key=lambda v: -v.value)[:keep]
    return Scan(best, top, total, time.perf_counter() - t0)


def rows_of(cs: np.ndarray, K: int, em: float, counts: list[tuple[int, ...]]) -> np.ndarray:
    """The LP rows (coefficients of gamma(l), l = (K+1)/2 .. K) of the given multisets, as darrm_privacy's
    ``constraint_rows``: (alpha_l - em alpha'_l) + (em alpha'_{K-l} - alpha_{K-l})."""
    c = np.array(counts, dtype=np.int64).reshape(-1, cs.shape[0])
    a, ap = group_laws(c, cs[:, 0]), group_laws(c, cs[:, 1])
    upper = np.arange((K + 1) // 2, K + 1)
    return (a[:, upper] - em * ap[:, upper]) + (em * ap[:, K - upper] - a[:, K - upper])


@dataclass(frozen=True)
class OptimalCG:
    gamma: np.ndarray              # gamma(l), l = 0..K, symmetric
    status: str
    scaled: float                  # factor (<= 1) applied so that every row holds
    max_f: float                   # the largest row value over ALL multisets at the returned gamma
    rhs: float                     # e^{m eps} - 1 + 2 delta
    rounds: int
    working_rows: int
    multisets: int
    seconds: float
    scan_seconds: float
    history: list[float] = field(default_factory=list)    # the worst violation (f - rhs) / rhs of each round


def _solve(A: np.ndarray, rhs: float, c: np.ndarray) -> tuple[np.ndarray, str]:
    """HiGHS on the working rows, at its tightest tolerances (1e-10): with the default dual tolerance (1e-7) the
    variables whose prior weight is below it (c_l ~ 1e-13 in the tails at K = 101) are left anywhere in [0, 1]."""
    res = linprog(-c, A_ub=A if A.size else None, b_ub=np.full(A.shape[0], rhs) if A.size else None,
                  bounds=[(0.0, 1.0)] * c.size, method="highs", options=HIGHS_OPTIONS)
    if res.x is None:
        raise ValueError(f"the LP for gamma_opt failed: {res.message}")
    return np.clip(res.x, 0.0, 1.0), str(res.message)


def full_gamma(x: np.ndarray, K: int) -> np.ndarray:
    return np.concatenate([x[::-1][: (K + 1) // 2], x])      # gamma(l) for l <= (K-1)/2 mirrors gamma(K - l)


def optimal_gamma_cg(K: int, m: float, eps: float, Delta: float, delta: float, *,
                     prior: np.ndarray | None = None, gr: Groups | None = None) -> OptimalCG:
    """gamma_opt of the LP (3.2)-(3.3) (L931-939) over every corner multiset, by constraint generation: solve on the
    working set (initially empty: gamma = 1), scan every multiset, add the ADD_PER_ROUND most violated, repeat until
    none exceeds the right side by more than VIOLATION (relative). The solution is then scaled by
    min(1, rhs / max f) with max f from a last full scan, so every row holds in floating point. ``prior``: the
    objective's coefficients (default: the chapter's uniform prior on [0.5, 1]^K, ``prior_weights``); ``gr``: the
    corner groups' laws when the caller has them (``groups(corners(eps, Delta), K)``)."""
    if K < 1 or K % 2 == 0:
        raise ValueError(f"DaRRM needs an odd number of mechanisms K >= 1 (K = {K})")
    t0 = time.perf_counter()
    cs = corners(eps, Delta)
    gr = groups(cs, K) if gr is None else gr
    if gr.K != K or not np.array_equal(gr.cs, cs):
        raise ValueError("the groups passed are for other corners or another K")
    em = math.exp(m * eps)
    rhs = em - 1 + 2 * delta
    c = prior_weights(K) if prior is None else np.asarray(prior, dtype=np.float64)
    working: list[tuple[int, ...]] = []
    A = np.zeros((0, c.size))
    history: list[float] = []
    scan_s = 0.0
    status = ""
    x = np.ones(c.size)
    for _ in range(MAX_ROUNDS):
        x, status = _solve(A, rhs, c)
        sc = scan(gr, full_gamma(x, K), em, rhs * (1 + VIOLATION), ADD_PER_ROUND, PER_BLOCK)
        scan_s += sc.seconds
        history.append((sc.worst.value - rhs) / rhs)
        new = [v.counts for v in sc.top if v.counts not in set(working)]
        if not new:
            break
        working += new
        A = np.vstack([A, rows_of(cs, K, em, new)])
    else:
        raise ValueError(f"constraint generation did not converge in {MAX_ROUNDS} rounds (K = {K})")
    final = scan(gr, full_gamma(x, K), em, math.inf, 0)
    scan_s += final.seconds
    scale = min(1.0, rhs / final.worst.value) if final.worst.value > 0 else 1.0
    x = x * scale
    return OptimalCG(full_gamma(x, K), status, scale, final.worst.value * scale, rhs, len(history), len(working),
                     final.multisets, time.perf_counter() - t0, scan_s, history)
