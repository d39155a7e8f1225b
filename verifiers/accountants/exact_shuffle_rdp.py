"""The exact Renyi divergence of seed 001's subsampled shuffle mechanism (Girgis, Data & Diggavi; Lnnn = line of
../shared/seeds/001_b39a6850360fb784.txt) with k-ary randomized response, at small sizes, for every neighbouring pair.

The mechanism (eq. 3, L128-130): n clients hold one value each in [A] = {0, .., A-1}; k of them are sampled uniformly
without replacement (samp_k^n, L128: every k-subset equally likely, gamma = k/n); each sampled client applies the
k-ary randomized response R (keep the value w.p. e^eps0/(e^eps0 + A - 1), else each other symbol w.p.
1/(e^eps0 + A - 1): eps0-LDP with equality, a discrete range as Thm 1 asks, L128); the shuffler hands the server the
multiset of the k outputs, i.e. their histogram h (|h| = k, eq. 4, L135-137). Neighbouring: one client's value is
replaced (L61); the RDP is D_lambda(M(D) || M(D')) of Def 1 (L63-65), for both orders of every pair.

The law of h depends on the data only through the symbol counts. Let client u change from `old` to `new` and let
c = (c_0, .., c_{A-1}) count the other n - 1 clients' values. With Q_K the law of the histogram of R applied to K
clients drawn uniformly without replacement from the others,

    P_x(h) = (1 - gamma) Q_k(h) + gamma sum_y R(y | x) Q_{k-1}(h - e_y),    x = old (D') or new (D),

since u is in the sample w.p. k/n and, given that, the other k - 1 are a uniform (k-1)-subset of the others.
C(n-1, K) Q_K(h) is the coefficient of h (at |h| = K) in prod_{others i} (1 + sum_y R(y | x_i) u_y); we expand that
product one client at a time (a dynamic programme over the histograms with |h| <= k), in log space (logaddexp).

Every pair: relabel the symbols so that old = 0 and new = 1; R is invariant under every permutation of the symbols, so
the pair is (c, 0 -> 1) and symbols 2, .., A-1 are exchangeable: c_2 >= c_3 >= .. loses nothing. We enumerate every
such c (sharing the expansion of common prefixes) and compute both orders, which covers every ordered neighbouring
pair of data sets in [A]^n. The divergence sum_h P(h)^lambda Q(h)^(1-lambda) is a logsumexp over the histograms.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Iterator

import numpy as np
from scipy.special import gammaln, logsumexp


def randomizer(A: int, eps0: float) -> np.ndarray:
    """log R(y | x) of k-ary randomized response on A symbols, (A, A), rows x: keep w.p. e^eps0/(e^eps0 + A - 1)."""
    if A < 2:
        raise ValueError(f"need an alphabet of A >= 2 symbols (A = {A})")
    if not eps0 >= 0:
        raise ValueError(f"need eps0 >= 0 (eps0 = {eps0})")
    log_z = float(np.logaddexp(eps0, math.log(A - 1)))
    out = np.full((A, A), -log_z)
    np.fill_diagonal(out, eps0 - log_z)
    return out


def ldp_epsilon(log_r: np.ndarray) -> float:
    """The LDP level of a randomizer given as log R(y | x): max over y, x, x' of log R(y | x) - log R(y | x')."""
    return float((log_r.max(axis=0) - log_r.min(axis=0)).max())


def inclusion_probability(n: int, k: int) -> float:
    """The probability that a given client is among the k of n sampled without replacement (gamma = k/n, L128)."""
    return k / n


@dataclass(frozen=True)
class States:
    """The histograms h in N^A with |h| <= K, and for each symbol y the index of h + e_y (-1 where |h| = K)."""

    A: int
    K: int
    hists: np.ndarray           # (S, A)
    total: np.ndarray           # (S,)
    src: tuple[np.ndarray, ...]  # per y: the states with |h| < K
    dst: tuple[np.ndarray, ...]  # per y: their h + e_y


@functools.lru_cache(maxsize=32)
def states(A: int, K: int) -> States:
    hists = np.array(list(_compositions_up_to(A, K)), dtype=np.int64).reshape(-1, A)
    index = {tuple(h): i for i, h in enumerate(hists.tolist())}
    total = hists.sum(axis=1)
    src, dst = [], []
    for y in range(A):
        s = np.nonzero(total < K)[0]
        e = np.zeros(A, dtype=np.int64)
        e[y] = 1
        src.append(s)
        dst.append(np.array([index[tuple(h)] for h in (hists[s] + e).tolist()], dtype=np.int64))
    return States(A, K, hists, total, tuple(src), tuple(dst))


def _compositions_up_to(A: int, K: int) -> Iterator[tuple[int, ...]]:
    if A == 1:
        for v in range(K + 1):
            yield (v,)
        return
    for v in range(K + 1):
        for rest in _compositions_up_to(A - 1, K - v):
            yield (v, *rest)


def _add_client(W: np.ndarray, st: States, log_r_x: np.ndarray) -> np.ndarray:
    """Multiply the generating function by (1 + sum_y R(y | x) u_y): one more client, sampled or not."""
    new = W.copy()
    for y in range(st.A):
        t = st.dst[y]
        new[t] = np.logaddexp(new[t], W[st.src[y]] + log_r_x[y])
    return new


def _log_comb(N: int, K: int) -> float:
    return float(gammaln(N + 1) - gammaln(K + 1) - gammaln(N - K + 1))


def _compositions(A: int, N: int, log_r: np.ndarray, st: States) -> Iterator[tuple[tuple[int, ...], np.ndarray]]:
    """Every count vector c of the N others with c_2 >= c_3 >= .. (symbols 2.. are exchangeable), with the log
    generating function of their sampled outputs; common prefixes are expanded once."""
    start = np.full(len(st.hists), -np.inf)
    start[0] = 0.0                                   # the empty histogram (index 0: all zeros)

    def rec(t: int, W: np.ndarray, left: int, prefix: tuple[int, ...]) -> Iterator[tuple[tuple[int, ...], np.ndarray]]:
        if t == A - 1:
            if t >= 3 and left > prefix[-1]:
                return
            for _ in range(left):
                W = _add_client(W, st, log_r[t])
            yield (*prefix, left), W
            return
        cap = left if t < 3 else min(left, prefix[-1])
        for c_t in range(cap + 1):
            if c_t:
                W = _add_client(W, st, log_r[t])
            yield from rec(t + 1, W, left - c_t, (*prefix, c_t))

    yield from rec(0, start, N, ())


@dataclass(frozen=True)
class PairLaws:
    """The histogram laws (log pmf over the histograms with |h| = k, in ``hists`` order) of one neighbouring pair:
    client u holds ``old`` (D') or ``new`` (D), the other clients' symbol counts are ``others``."""

    others: tuple[int, ...]
    hists: np.ndarray
    log_old: np.ndarray
    log_new: np.ndarray


def _pair_laws(W: np.ndarray, st: States, n: int, k: int, log_r: np.ndarray, old: int, new: int,
               others: tuple[int, ...]) -> PairLaws:
    at_k = st.total == k
    g = inclusion_probability(n, k)
    below = np.where(st.total == k - 1, W - _log_comb(n - 1, k - 1), -np.inf)     # Q_{k-1}
    if k <= n - 1 and g < 1:
        rest = math.log1p(-g) + W[at_k] - _log_comb(n - 1, k)                       # (1 - gamma) Q_k
    else:
        rest = np.full(int(at_k.sum()), -np.inf)                                  # every client is sampled
    laws = []
    for x in (old, new):
        with_u = np.full(len(W), -np.inf)
        for y in range(st.A):
            t = st.dst[y]
            with_u[t] = np.logaddexp(with_u[t], below[st.src[y]] + log_r[x, y])
        laws.append(np.logaddexp(rest, math.log(g) + with_u[at_k]))
    return PairLaws(others, st.hists[at_k], laws[0], laws[1])


def renyi(log_p: np.ndarray, log_q: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """D_lambda(P || Q) = log(sum_h P(h)^lambda Q(h)^(1 - lambda)) / (lambda - 1) at every order (> 1), from log
    pmfs; inf where P charges a histogram Q does not."""
    lam = np.asarray(orders, dtype=np.float64)[:, None]
    if np.any((log_q == -np.inf) & (log_p > -np.inf)):
        return np.full(lam.shape[0], np.inf)
    keep = log_p > -np.inf
    terms = lam * log_p[keep] + (1 - lam) * log_q[keep]
    return np.asarray(logsumexp(terms, axis=1) / (lam[:, 0] - 1), dtype=np.float64)


def pair_laws(n: int, k: int, eps0: float, A: int, others: tuple[int, ...], *, old: int = 0,
              new: int = 1) -> PairLaws:
    """The histogram laws of one neighbouring pair (any count vector ``others`` of the n - 1 other clients)."""
    _check(n, k, A)
    if len(others) != A or sum(others) != n - 1 or min(others) < 0:
        raise ValueError(f"others must count the n - 1 = {n - 1} other clients over {A} symbols (got {others})")
    if old == new or not (0 <= old < A and 0 <= new < A):
        raise ValueError(f"need two different symbols of [A] (old = {old}, new = {new})")
    log_r = randomizer(A, eps0)
    st = states(A, k)
    W = np.full(len(st.hists), -np.inf)
    W[0] = 0.0
    for x, c in enumerate(others):
        for _ in range(c):
            W = _add_client(W, st, log_r[x])
    return _pair_laws(W, st, n, k, log_r, old, new, tuple(others))


def _check(n: int, k: int, A: int) -> None:
    if not (1 <= k <= n):
        raise ValueError(f"need 1 <= k <= n (k = {k}, n = {n})")
    if A < 2:
        raise ValueError(f"need A >= 2 (A = {A})")


def named_pairs(n: int, A: int) -> dict[str, tuple[int, ...]]:
    """The pairs worth naming (client u changes 0 -> 1; the others' counts): Thm 2's (every other client holds u's
    old value), every other client holding the new value, or a third symbol, the others split between old and new,
    and spread evenly over the alphabet."""
    N = n - 1
    pad = (0,) * (A - 2)
    out = {"others = old": (N, 0, *pad), "others = new": (0, N, *pad)}
    if A >= 3:
        out["others = a third symbol"] = (0, 0, N, *(0,) * (A - 3))
    out["others split old/new"] = ((N + 1) // 2, N // 2, *pad)
    q, r = divmod(N, A)
    out["others spread evenly"] = tuple(q + (i < r) for i in range(A))
    return out


@dataclass(frozen=True)
class ExactRDP:
    """The exact RDP of the subsampled shuffled k-ary RR at each order: the largest D_lambda over every neighbouring
    pair (both orders), the pair that attains it, and the named pairs' divergences (forward: D_lambda(M(D) || M(D'))
    with u holding new in D, old in D'; reverse: the other order)."""

    A: int
    orders: tuple[int, ...]
    worst: tuple[float, ...]
    worst_others: tuple[tuple[int, ...], ...]     # per order: the others' counts of the worst pair
    worst_forward: tuple[bool, ...]               # per order: whether the worst order is D_lambda(M(D) || M(D'))
    named: dict[str, dict[str, list[float]]]
    pairs: int                                    # count vectors searched (each in both orders)
    ldp_epsilon: float                            # the randomizer's LDP level, from its matrix as used


def exact_rdp(n: int, k: int, eps0: float, A: int, orders: tuple[int, ...] | list[int]) -> ExactRDP:
    """The largest D_lambda over every neighbouring pair of data sets in [A]^n, at each order, and the named pairs."""
    _check(n, k, A)
    orders_arr = np.asarray(orders, dtype=np.float64)
    if orders_arr.size == 0 or np.any(orders_arr <= 1):
        raise ValueError(f"Renyi orders must exceed 1 (got {list(orders)})")
    log_r = randomizer(A, eps0)
    st = states(A, k)
    named = named_pairs(n, A)
    wanted = {c: name for name, c in named.items()}
    found: dict[str, dict[str, list[float]]] = {}
    worst = np.full(orders_arr.size, -np.inf)
    worst_others: list[tuple[int, ...]] = [()] * orders_arr.size
    worst_forward = [True] * orders_arr.size
    count = 0
    for c, W in _compositions(A, n - 1, log_r, st):
        count += 1
        laws = _pair_laws(W, st, n, k, log_r, 0, 1, c)
        fwd = renyi(laws.log_new, laws.log_old, orders_arr)
        rev = renyi(laws.log_old, laws.log_new, orders_arr)
        for direction, d in ((True, fwd), (False, rev)):
            better = d > worst
            worst = np.where(better, d, worst)
            for i in np.nonzero(better)[0]:
                worst_others[i], worst_forward[i] = c, direction
        for name, target in named.items():
            if c == target:
                found[name] = {"forward": fwd.tolist(), "reverse": rev.tolist()}
    missing = set(wanted.values()) - set(found)
    for name in missing:                    # a named pair outside the symmetric enumeration (c_2 < c_3): by symmetry
        c = named[name]                     # it equals one inside it; computed directly all the same
        laws = pair_laws(n, k, eps0, A, c)
        found[name] = {"forward": renyi(laws.log_new, laws.log_old, orders_arr).tolist(),
                       "reverse": renyi(laws.log_old, laws.log_new, orders_arr).tolist()}
    return ExactRDP(A, tuple(int(o) for o in orders), tuple(float(v) for v in worst), tuple(worst_others),
                    tuple(worst_forward), {name: found[name] for name in named}, count, ldp_epsilon(log_r))


def _walk(A: int, N: int) -> tuple[int, int]:
    """(count vectors, client expansions) of exact_rdp's enumeration: c of N others over A symbols, c_2 >= c_3 >= .."""
    def rec(t: int, left: int, last: int) -> tuple[int, int]:
        if t == A - 1:
            return (0, 0) if t >= 3 and left > last else (1, left)
        cap = left if t < 3 else min(left, last)
        leaves, steps = 0, cap
        for c_t in range(cap + 1):
            sub = rec(t + 1, left - c_t, c_t)
            leaves, steps = leaves + sub[0], steps + sub[1]
        return leaves, steps

    return rec(0, N, N)


def pairs_searched(n: int, A: int) -> int:
    """How many count vectors of the n - 1 others exact_rdp enumerates (each in both orders)."""
    return _walk(A, n - 1)[0]


def work(n: int, k: int, A: int) -> int:
    """exact_rdp's state updates (client expansions and the two laws of every pair, each over the histograms with
    |h| <= k, per symbol): what the spec's work limit counts."""
    leaves, steps = _walk(A, n - 1)
    return (steps + 2 * leaves) * math.comb(k + A, A) * A
