"""The exact privacy of DaRRM's output bit (seed 003, chapter 3; Lnnn = line of ../shared/seeds/003_56e8b1c3300cdeae.txt)
for a given noise function gamma, over every pair of neighbouring inputs the (eps, Delta)-DP of the K mechanisms
allows.

Neighbouring data sets D, D' move each mechanism's probability of a 1 from p_i to p'_i, where (p_i, p'_i) lies in
F = {(p, p') in [0,1]^2 : p <= e^eps p' + Delta, p' <= e^eps p + Delta, 1-p <= e^eps (1-p') + Delta,
1-p' <= e^eps (1-p) + Delta}: exactly the pairs for which a mechanism with one binary output is (eps, Delta)-DP
(Def 3.3.1, L808; the feasible region of Lemma 3.6.1, L953-967). The K mechanisms move independently and all at once
(Problem 3.1.1: all K run on the same data, L728-735).

The output is one bit, so DaRRM is (e, delta)-DP iff Pr[out = o | D] <= e^e Pr[out = o | D'] + delta for both o and
every pair. For a fixed e the slack Pr[o | D] - e^e Pr[o | D'] is affine in each pair (p_i, p'_i) with the others
fixed (Pr[o | D] depends on p only, multilinearly), so its maximum over the product of the polygons F is at a
product of their vertices: the 8 corners of Lemma 3.6.1 (4 when Delta = 0; ``corners``). The Poisson binomial law is
symmetric in its parameters, so only the multiset of corners matters (C(K+7, 7) of them). Hence the exact epsilon at
delta is the largest log((Pr[o | D] - delta) / Pr[o | D']) over the corner multisets, both outputs and both orders
(``exact_epsilon``): no relaxation, no sampling. ``interior_epsilon`` evaluates the same quantity exactly at given
configurations (random points of F^K: the cross-check of the corner reduction) and ``iid_epsilon`` over the i.i.d.
configurations p_i = p, p'_i = p' that Theorem 3.5.1 (L909-915) is about, on a dense grid of F (its four edges,
where Lemma B.2.1 puts the maximum, geometrically refined towards (0, 0) and (1, 1), and its interior).

``rr_p_const`` is Lemma B.1.1's calibration of randomized response (L2364-2368).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp
from scipy.stats import binom

from algorithms import darrm


def feasible(p: np.ndarray, q: np.ndarray, eps: float, Delta: float, tol: float = 1e-12) -> np.ndarray:
    """Whether (p, p') lies in F (the (eps, Delta)-DP constraints of one binary mechanism, Def 3.3.1, L808)."""
    e = math.exp(eps)
    return ((p >= -tol) & (p <= 1 + tol) & (q >= -tol) & (q <= 1 + tol) & (p <= e * q + Delta + tol)
            & (q <= e * p + Delta + tol) & (1 - p <= e * (1 - q) + Delta + tol) & (1 - q <= e * (1 - p) + Delta + tol))


def corners(eps: float, Delta: float) -> np.ndarray:
    """Lemma 3.6.1 (L963-967): the corners of F, (p, p') rows, duplicates removed (4 remain when Delta = 0)."""
    e = math.exp(eps)
    a, b = (e + Delta) / (e + 1), (1 - Delta) / (e + 1)
    pts = [(0.0, 0.0), (1.0, 1.0), (0.0, Delta), (Delta, 0.0), (1 - Delta, 1.0), (1.0, 1 - Delta), (a, b), (b, a)]
    out: list[tuple[float, float]] = []
    for c in pts:
        if not any(abs(c[0] - d[0]) < 1e-15 and abs(c[1] - d[1]) < 1e-15 for d in out):
            out.append(c)
    return np.array(out)


def multisets(K: int, C: int) -> np.ndarray:
    """Every multiset of K of C corners as a count vector (rows sum to K): C(K+C-1, C-1) rows."""
    rows = [np.bincount(np.array(c, dtype=np.int64), minlength=C) for c in
            itertools.combinations_with_replacement(range(C), K)]
    return np.array(rows, dtype=np.int64).reshape(-1, C)


def n_multisets(K: int, Delta: float) -> int:
    return math.comb(K + (7 if Delta > 0 else 3), K)


def count_laws(counts: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """The Poisson binomial law of L for each row of ``counts`` (counts[r, j] mechanisms with probability probs[j]):
    one recurrence step per mechanism, applied to the rows that hold it (non-negative terms only)."""
    N, C = counts.shape
    K = int(counts[0].sum()) if N else 0
    pmf = np.zeros((N, K + 1))
    pmf[:, 0] = 1.0
    for j in range(C):
        q = float(probs[j])
        for c in range(1, K + 1):
            rows = counts[:, j] >= c
            if not rows.any():
                break
            sub = pmf[rows]
            nxt = sub * (1 - q)
            nxt[:, 1:] += sub[:, :-1] * q
            pmf[rows] = nxt
    return pmf


ROUNDING = 1e-11      # relative rounding of a probability computed as a sum of K+1 non-negative products


@dataclass(frozen=True)
class CornerLaws:
    """The laws of L on D and D' for every corner multiset."""

    corners: np.ndarray     # (C, 2): (p, p')
    counts: np.ndarray      # (N, C)
    alpha: np.ndarray       # (N, K+1): law of L(D)
    alpha_p: np.ndarray     # (N, K+1): law of L(D')


def corner_laws(K: int, eps: float, Delta: float) -> CornerLaws:
    cs = corners(eps, Delta)
    counts = multisets(K, len(cs))
    return CornerLaws(cs, counts, count_laws(counts, cs[:, 0]), count_laws(counts, cs[:, 1]))


def losses(alpha: np.ndarray, alpha_p: np.ndarray, gamma: np.ndarray, delta: float) -> np.ndarray:
    """Per configuration (rows), the smallest e >= 0 with Pr[o | D] <= e^e Pr[o | D'] + delta for both outputs o and
    both orders of the pair: max log((P - delta)/Q) over the four (P, Q), inf where Q = 0 < P - delta."""
    w1, w0 = darrm.output_weights(gamma)
    p1, q1, p0, q0 = alpha @ w1, alpha_p @ w1, alpha @ w0, alpha_p @ w0
    out = np.zeros(alpha.shape[0])
    for P, Q in ((p1, q1), (q1, p1), (p0, q0), (q0, p0)):
        num = P - delta
        num = np.where(num > ROUNDING * np.maximum(P, delta), num, 0.0)    # P = delta up to rounding: no loss
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.where(num > 0, np.where(Q > 0, np.log(np.where(num > 0, num, 1.0) / np.where(Q > 0, Q, 1.0)),
                                           np.inf), 0.0)
        out = np.maximum(out, v)
    return out


@dataclass(frozen=True)
class Worst:
    epsilon: float
    counts: tuple[int, ...]       # the worst corner multiset (counts per corner)


def exact_epsilon(laws: CornerLaws, gamma: np.ndarray, delta: float) -> Worst:
    """The exact epsilon of DaRRM_gamma's output at delta: the largest loss over the corner multisets."""
    loss = losses(laws.alpha, laws.alpha_p, gamma, delta)
    i = int(np.argmax(loss))
    return Worst(float(loss[i]), tuple(int(c) for c in laws.counts[i]))


def random_configurations(K: int, eps: float, Delta: float, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n configurations of K pairs (p_i, p'_i) in F: p uniform on [0, 1], p' at the lower end, the upper end (each
    w.p. 1/3: F's boundary) or uniform in between, of the interval F allows at p (from the four constraints)."""
    e = math.exp(eps)
    p = rng.random((n, K))
    lo = np.maximum.reduce([np.zeros_like(p), (p - Delta) / e, 1 - e * (1 - p) - Delta])
    hi = np.minimum.reduce([np.ones_like(p), e * p + Delta, 1 - (1 - p - Delta) / e])
    u, pick = rng.random((n, K)), rng.integers(0, 3, (n, K))
    q = np.where(pick == 0, lo, np.where(pick == 1, hi, lo + u * (hi - lo)))
    return p, q


def interior_epsilon(p: np.ndarray, q: np.ndarray, gamma: np.ndarray, delta: float) -> np.ndarray:
    """The exact loss of DaRRM_gamma at each configuration (rows of p, q: the K mechanisms' p_i and p'_i)."""
    return losses(darrm.poisson_binomial(p), darrm.poisson_binomial(q), gamma, delta)


def iid_grid(eps: float, Delta: float, n: int) -> tuple[np.ndarray, np.ndarray, int]:
    """i.i.d. pairs (p, p') of F: n points on each of the edges p = e^eps p' + Delta and p' = e^eps p + Delta (half of
    them geometrically spaced towards (0, 0), where the supremum of Theorem 3.5.1's proof is approached), then an
    interior grid of about n points. Returns (p, p', number of edge points). The edges through (1, 1) are the mirror
    images (p, p') -> (1-p, 1-p') of the first ones: ``iid_epsilon`` takes them by reversing the laws of L (L -> K-L),
    which keeps 1-p exact where p itself would round (p = 1 - 1e-12 carries a relative error of 1e-4 in 1 - p)."""
    e = math.exp(eps)
    half = n // 2
    top = (1 - Delta) / (e + 1)        # the edge p = e^eps p' + Delta runs over p' in [0, top]
    t = np.unique(np.concatenate([np.linspace(0, 1, n - half), np.geomspace(1e-12, 1, half)]))
    qs = t * top
    edge_p = np.concatenate([e * qs + Delta, qs])
    edge_q = np.concatenate([qs, e * qs + Delta])
    side = max(2, int(math.isqrt(n)))
    gp = np.repeat(np.linspace(0, 1, side), side)
    lo = np.maximum.reduce([np.zeros_like(gp), (gp - Delta) / e, 1 - e * (1 - gp) - Delta])
    hi = np.minimum.reduce([np.ones_like(gp), e * gp + Delta, 1 - (1 - gp - Delta) / e])
    gq = lo + np.tile(np.linspace(0, 1, side), side) * (hi - lo)
    keep = feasible(gp, gq, eps, Delta)
    return np.concatenate([edge_p, gp[keep]]), np.concatenate([edge_q, gq[keep]]), edge_p.size


def binomial_laws(K: int, p: np.ndarray) -> np.ndarray:
    """Bin(K, p) pmf for each p (rows), through scipy's log-space binomial pmf."""
    return binom.pmf(np.arange(K + 1)[None, :], K, np.asarray(p, dtype=np.float64)[:, None])


def log_losses(log_alpha: np.ndarray, log_alpha_p: np.ndarray, gamma: np.ndarray, delta: float) -> np.ndarray:
    """``losses`` from the logarithms of the laws: each output's probability is a log-sum-exp, so probabilities far
    below 1e-308 keep their relative precision (near (0, 0) at K = 101 the output probabilities of the i.i.d. grid
    reach 1e-320, where ``losses``' ratio of denormals gave 3.11 or inf for a loss of 3). P - delta is formed in
    linear space only when delta > 0 (then P >= delta is a normal number)."""
    w1, w0 = darrm.output_weights(gamma)
    out = np.zeros(log_alpha.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        for w in (w1, w0):
            lw = np.log(w)
            lP, lQ = logsumexp(log_alpha + lw, axis=1), logsumexp(log_alpha_p + lw, axis=1)
            for x, y in ((lP, lQ), (lQ, lP)):
                if delta > 0:
                    P = np.exp(x)
                    num = P - delta
                    x = np.where(num > ROUNDING * np.maximum(P, delta), np.log(np.where(num > 0, num, 1.0)), -np.inf)
                v = np.where(np.isfinite(x), np.where(np.isfinite(y), x - y, np.inf), 0.0)
                out = np.maximum(out, v)
    return out


def iid_epsilon(K: int, eps: float, Delta: float, gamma: np.ndarray, delta: float, n: int) -> tuple[float, float, float]:
    """The largest loss of DaRRM_gamma over the i.i.d. pairs of ``iid_grid`` and the mirror images of its edges:
    (epsilon, p, p') at the worst, in log space (``log_losses``; scipy's binomial log-pmf)."""
    p, q, n_edge = iid_grid(eps, Delta, n)
    ls = np.arange(K + 1)[None, :]
    a, b = binom.logpmf(ls, K, p[:, None]), binom.logpmf(ls, K, q[:, None])
    a = np.concatenate([a, a[:n_edge, ::-1]])
    b = np.concatenate([b, b[:n_edge, ::-1]])
    pp, qq = np.concatenate([p, 1 - p[:n_edge]]), np.concatenate([q, 1 - q[:n_edge]])
    loss = log_losses(a, b, gamma, delta)
    i = int(np.argmax(loss))
    return float(loss[i]), float(pp[i]), float(qq[i])


def rr_p_const(K: int, m: float, eps: float, Delta: float, delta: float) -> tuple[float, float, float]:
    """Lemma B.1.1 (L2364-2368): the largest p_const for which randomized response on the K-majority is
    (m eps, delta)-DP, with the K-majority (tau eps, lambda)-DP by simple composition (Thm 3.3.2, L815; the proof's
    'tau = K, lambda = 0' when Delta = 0, L2370): tau = K, lambda = K Delta. Returns (p_const, tau, lambda), p_const
    capped at 1."""
    tau, lam = float(K), K * Delta
    et, em = math.exp(tau * eps), math.exp(m * eps)
    den = 2 * (et - em + (1 + em) * lam) / (et + 1) + em - 1
    return min(1.0, (em - 1 + 2 * delta) / den) if den > 0 else 1.0, tau, lam


def prior_weights(K: int, q: float = 0.75) -> np.ndarray:
    """The LP objective's coefficients (B.60, L3366-3370) under the uniform prior on [0.5, 1]^K that the chapter
    integrates (B.61, L3404-3406): E[alpha_l] over p_i i.i.d. U[0.5, 1] is exactly Bin(K, 0.75)(l) (each S_i is then
    marginally Bernoulli(0.75), independently). OUR CHOICE: this exact integral instead of the chapter's rectangular
    rule sampled on a grid (Alg. 10, L3436-3450); a positive scaling of the objective leaves the LP's optimum unchanged.
    Returns c_l = Bin(K, q)(l) - Bin(K, q)(K - l) for l = (K+1)/2 .. K."""
    b = binom.pmf(np.arange(K + 1), K, q)
    upper = np.arange((K + 1) // 2, K + 1)
    return b[upper] - b[K - upper]


def prior_error(gamma: np.ndarray, c: np.ndarray) -> float:
    """The expected error under the prior, (1/2) sum_{l >= (K+1)/2} c_l (1 - gamma(l)) (B.56-B.58, L3352-3362, with
    the expectation inside: the signed form the LP minimises)."""
    K = np.asarray(gamma).size - 1
    return float(0.5 * c @ (1 - np.asarray(gamma)[(K + 1) // 2:]))


def constraint_rows(laws: CornerLaws, K: int, em: float) -> np.ndarray:
    """Lemma 3.4.4's privacy cost f (L897-903) of a symmetric gamma, one row per corner multiset, as coefficients of
    gamma(l), l = (K+1)/2 .. K: (alpha_l - e^{m eps} alpha'_l) + (e^{m eps} alpha'_{K-l} - alpha_{K-l})."""
    upper = np.arange((K + 1) // 2, K + 1)
    a, ap = laws.alpha, laws.alpha_p
    return (a[:, upper] - em * ap[:, upper]) + (em * ap[:, K - upper] - a[:, K - upper])


@dataclass(frozen=True)
class Optimal:
    gamma: np.ndarray
    status: str
    scaled: float           # the factor (<= 1) the LP's solution was scaled by to meet every row exactly
    rows: int


def optimal_gamma(laws: CornerLaws, K: int, m: float, eps: float, delta: float,
                  c: np.ndarray | None = None) -> Optimal:
    """The chapter's LP (3.2)-(3.3) (L931-939) with Lemma 3.6.1's corner rows (L961-967): maximise
    sum_l c_l gamma(l) subject to f(corner multiset; gamma) <= e^{m eps} - 1 + 2 delta for every multiset, gamma in
    [0, 1], symmetric; solved by scipy's HiGHS (the chapter uses Gurobi, L970). The solver meets the rows to its
    feasibility tolerance (~1e-7); since f is linear in gamma and the right side is positive, the solution is then
    scaled by min(1, rhs / max_rows f) so that every row holds in floating point (``scaled`` records the factor).
    ``c``: the objective's coefficients for l = (K+1)/2 .. K (default: the prior T_U of B.61, prior_weights(K))."""
    from scipy.optimize import linprog

    em = math.exp(m * eps)
    rhs = em - 1 + 2 * delta
    A = constraint_rows(laws, K, em)
    c = prior_weights(K) if c is None else c
    res = linprog(-c, A_ub=A, b_ub=np.full(A.shape[0], rhs), bounds=[(0.0, 1.0)] * c.size, method="highs")
    if res.x is None:
        raise ValueError(f"the LP for gamma_opt failed: {res.message}")
    x = np.clip(res.x, 0.0, 1.0)
    worst = float((A @ x).max())
    scale = min(1.0, rhs / worst) if worst > 0 else 1.0
    x = x * scale
    half = np.concatenate([x[::-1][: (K + 1) // 2], x])        # gamma(l) for l <= (K-1)/2 mirrors gamma(K - l)
    return Optimal(half, str(res.message), scale, int(A.shape[0]))
