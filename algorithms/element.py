"""Seed 002's element-level mechanisms on multinomial data (Asi, Duchi, Javidi, Sec. 3.1-3.2; Lnnn = line of
../shared/seeds/002_d3919fba655c6f58.txt): the data model, the heavy-hitters mechanism (7), the histogram with
per-element l2 clipping (9), the ordering loss (8) and the search over neighbouring users that bounds a
mechanism's sensitivity from below. Pure numerics: no verdicts, no accountants.

Data (L170-172, L203-205): each of n users draws X^(u) ~ Multinomial(m, p) over d items, i.i.d.; the items are
split by a public partition into K clusters c_1..c_K (the elements of Sec. 3.2; in Sec. 3.1 every item is its own
element). Every choice the seed leaves open is a parameter here: p is Zipf-like, p_j proportional to
(j + 1)^(-s) (j = 0..d-1, sorted decreasing as Prop. 1 assumes), and the partition is contiguous blocks of the
sorted items (``contiguous``: the heavy items share the first clusters, so P(c) is unequal) or round robin (item j
in cluster j mod K: P(c) nearly equal), cluster sizes differing by at most one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Multinomial:
    """The data model: item probabilities ``p`` (decreasing) and the cluster of each item."""

    p: np.ndarray                 # (d,)
    cluster: np.ndarray           # (d,) cluster index of each item, 0..K-1
    m: int                        # items per user

    @property
    def d(self) -> int:
        return int(self.p.size)

    @property
    def K(self) -> int:
        return int(self.cluster.max()) + 1

    def cluster_mass(self) -> np.ndarray:
        """P(c) = sum_{j in c} p_j for every cluster (L207)."""
        return np.bincount(self.cluster, weights=self.p, minlength=self.K)

    def cluster_sizes(self) -> np.ndarray:
        return np.bincount(self.cluster, minlength=self.K)


def zipf(d: int, s: float) -> np.ndarray:
    """p_j proportional to (j + 1)^(-s), j = 0..d-1 (s = 0: uniform)."""
    w = np.arange(1, d + 1, dtype=np.float64) ** (-s)
    return w / w.sum()


def partition(d: int, K: int, contiguous: bool) -> np.ndarray:
    """The cluster of each item: K blocks of consecutive items (sizes differing by at most one) or round robin."""
    if not 1 <= K <= d:
        raise ValueError(f"K = {K} clusters of d = {d} items: need 1 <= K <= d")
    if contiguous:
        return np.minimum(np.arange(d) * K // d, K - 1).astype(np.int64)
    return (np.arange(d) % K).astype(np.int64)


def model(*, d: int, K: int, s: float, m: int, contiguous: bool) -> Multinomial:
    return Multinomial(zipf(d, s), partition(d, K, contiguous), m)


def draw_users(rng: np.random.Generator, mdl: Multinomial, n: int) -> np.ndarray:
    """(n, d) counts, each row ~ Multinomial(m, p): the counts of m categorical draws per user (O(n m log d), where
    numpy's multinomial costs O(n d); the same law)."""
    if mdl.m >= mdl.d:
        return rng.multinomial(mdl.m, mdl.p, size=n).astype(np.float64)
    idx = searchsorted_unit(np.cumsum(mdl.p), rng.random((n, mdl.m)))
    np.minimum(idx, mdl.d - 1, out=idx)            # a uniform draw above the rounded cumulative sum
    flat = (np.arange(n)[:, None] * mdl.d + idx).ravel()
    return np.bincount(flat, minlength=n * mdl.d).reshape(n, mdl.d).astype(np.float64)


def searchsorted_unit(c: np.ndarray, u: np.ndarray) -> np.ndarray:
    """np.searchsorted(c, u, side="right") for sorted ``c`` and u in [0, 1) (the number of c_j <= u), exactly, by a
    table over B equal buckets of [0, 1) (B a power of 2, so the bucket floor(u B) is exact): in a bucket without a
    c_j the answer is the same for every u of the bucket, read from the table; only the u in the few buckets holding
    some c_j are searched. A binary search per draw costs draw_users more than the rest of its work."""
    B = 1 << int(min(16, max(12, math.ceil(math.log2(16 * max(c.size, 1))))))
    edges = np.arange(B + 1) / B
    lo = np.searchsorted(c, edges[:-1], side="right")         # the answer at the bucket's left end
    mixed = np.searchsorted(c, edges[1:], side="left") != lo  # some c_j inside: the answer varies in the bucket
    b = (u * B).astype(np.intp)
    out = lo[b]
    hard = mixed[b]
    out[hard] = np.searchsorted(c, u[hard], side="right")
    return out


def clip_blocks(x: np.ndarray, cluster: np.ndarray, rho: float) -> np.ndarray:
    """pi_{rho,{c_k}}(x) (L213-215): each cluster's block of counts scaled onto the l2 ball of radius rho, rows of
    ``x`` (..., d) independently (block norms by one pass over the items sorted by cluster: O(size of x))."""
    order = np.argsort(cluster, kind="stable")
    sizes = np.bincount(cluster)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    xs = x[..., order]                                  # x * x gathered: the same squares, one temporary
    np.multiply(xs, xs, out=xs)
    sq = np.add.reduceat(xs, starts[sizes > 0], axis=-1)
    norms = np.zeros(x.shape[:-1] + (sizes.size,))
    norms[..., sizes > 0] = np.sqrt(sq)
    over = norms > rho
    if not over.any():                                  # nothing clipped: x times a scale of ones is x
        return np.array(x, dtype=np.result_type(x.dtype, np.float64))
    scale = np.where(over, rho / np.where(norms > 0, norms, 1.0), 1.0)
    return x * scale[..., cluster]


def indicators(x: np.ndarray) -> np.ndarray:
    """1(x) = [1{x_j > 0}]_j (L176)."""
    return (x > 0).astype(np.float64)


def histogram_release(rng: np.random.Generator, users: np.ndarray, cluster: np.ndarray, *, rho: float,
                      noise_std: float, reps: int = 1) -> np.ndarray:
    """Mechanism (9) (L217): (1/n) sum_u pi_rho(X^(u)) + N(0, noise_std^2 I_d), ``reps`` independent noise draws
    on the same users: (reps, d). Seed 002 sets noise_std = rho sigma / n. Computed in the noise's own buffer
    (noise_std Z, then + mean: the same numbers as mean + noise_std Z without its two temporaries; the audits draw
    tens of thousands of releases of d coordinates)."""
    mean = clip_blocks(users, cluster, rho).mean(axis=0)
    out = rng.standard_normal((reps, users.shape[1]))
    out *= noise_std
    out += mean
    return out


def heavy_hitters_release(rng: np.random.Generator, users: np.ndarray, *, sigma: float, reps: int = 1) -> np.ndarray:
    """Mechanism (7) (L176): sum_u 1(X^(u)) + N(0, sigma^2 I_d), ``reps`` noise draws on the same users."""
    total = np.count_nonzero(users > 0, axis=0)          # sum_u 1(X^(u)), without a float copy of the indicators
    return total + sigma * rng.standard_normal((reps, users.shape[1]))


def misordered(h: np.ndarray, p: np.ndarray, gamma: float) -> np.ndarray:
    """The ordering loss (8) of each row of ``h`` (reps, d): the pairs j < l (p sorted decreasing) with
    p_j - p_l >= gamma whose estimates are mis-ordered, H_j < H_l. (8) as printed counts 1{H_j > H_l}, the
    correctly ordered pairs; its proof (App. B, Lemma B.2: P(H_i < H_j)) bounds the mis-ordered ones, which is
    what the loss means (note P4); ties have probability 0 under Gaussian noise. One (d, d) comparison per row."""
    far = np.triu(p[:, None] - p[None, :] >= gamma, k=1)
    return np.array([int(np.count_nonzero(far & (row[:, None] < row[None, :]))) for row in np.atleast_2d(h)],
                    dtype=np.int64)


def separated_pairs(p: np.ndarray, gamma: float) -> int:
    """How many pairs j < l have p_j - p_l >= gamma (the pairs the ordering loss counts)."""
    return int(sum(int(np.count_nonzero(p[j] - p[j + 1:] >= gamma)) for j in range(p.size - 1)))


# ---------------------------------------------------------------------------------------------------------------
# the search over neighbouring users: a lower bound on a mechanism's l2 sensitivity

@dataclass(frozen=True)
class Pair:
    """Two neighbouring users (count vectors) and the l2 distance of the mechanism's per-user map between them."""

    x: np.ndarray
    x_prime: np.ndarray
    distance: float


def _compositions(rng: np.random.Generator, size: int, total: int, count: int) -> np.ndarray:
    """Count vectors over ``size`` items with the given total: all mass on one item (each of the first two), spread
    evenly over the first r items (r = 1, 2, 4, ...), and ``count`` random multinomial ones."""
    rows = []
    for i in range(min(size, 2)):
        v = np.zeros(size)
        v[i] = total
        rows.append(v)
        if size > 1:                              # the same mass moved to the last item (disjoint support)
            w = np.zeros(size)
            w[size - 1 - i] = total
            rows.append(w)
    r = 1
    while r <= size:
        v = np.zeros(size)
        v[:r] = total // r
        v[: total % r] += 1
        rows.append(v)
        rows.append(v[::-1].copy())
        r *= 2
    if count:
        rows.extend(rng.multinomial(total, np.full(size, 1.0 / size), size=count).astype(np.float64))
    return np.array(rows)


def _totals(m: int) -> list[int]:
    """Block totals tried: 0, 1, 2, m and a geometric ladder between (every total when m <= 64)."""
    if m <= 64:
        return list(range(m + 1))
    return sorted({0, 1, 2, m, *np.unique(np.geomspace(1, m, 40).astype(int)).tolist()})


def _max_pair(a: np.ndarray, b: np.ndarray, fa: np.ndarray, fb: np.ndarray, same_total: bool) -> Pair | None:
    diff = np.maximum((fa * fa).sum(axis=1)[:, None] + (fb * fb).sum(axis=1)[None, :] - 2 * fa @ fb.T, 0.0)
    if same_total:
        diff = np.where(np.isclose(a.sum(axis=1)[:, None], b.sum(axis=1)[None, :]), diff, -1.0)
    i, j = np.unravel_index(int(np.argmax(diff)), diff.shape)
    if diff[i, j] < 0:
        return None
    return Pair(a[i], b[j], float(np.linalg.norm(fa[i] - fb[j])))      # the winner's distance, computed directly


def search_pair(mdl: Multinomial, unit: str, keep_count: bool | None, feature, *, rng: np.random.Generator,
                random_per_total: int = 8) -> Pair:
    """The largest ||feature(x) - feature(x')||_2 the search finds over neighbouring users x, x' of the data model
    (counts summing to m) under ``unit``: ``element`` (x' differs from x only inside one cluster; ``keep_count``:
    the block keeps its total, else the block's total may change, each within 0..m), ``user`` (x' any user with the same total m) or ``record`` (one item of x moved to another
    item). ``feature`` maps (rows, d) counts to (rows, d) (the mechanism's per-user map). A lower bound on the
    sensitivity: every pair tried is a valid neighbour pair; it proves nothing about pairs it does not try."""
    d, m = mdl.d, mdl.m
    best = Pair(np.zeros(d), np.zeros(d), 0.0)
    if unit == "element":
        sizes = mdl.cluster_sizes()
        for size in np.unique(sizes):               # the map works block by block, the same way for every cluster:
            k = int(np.argmax(sizes == size))       # one cluster of each size is enough
            items = np.nonzero(mdl.cluster == k)[0]
            blocks = np.concatenate([_compositions(rng, items.size, t, random_per_total) for t in _totals(m)])
            base = np.zeros((blocks.shape[0], d))
            base[:, items] = blocks
            fa = feature(base)
            pair = _max_pair(base, base, fa, fa, bool(keep_count))
            if pair is not None and pair.distance > best.distance:
                best = pair
        return _complete(best, mdl)
    if unit == "user":
        cand = np.concatenate([_compositions(rng, d, m, 4 * random_per_total)]
                              + [_spread_over_clusters(mdl, m, r) for r in (1, 2, 4, 8, 16, 32, 64, 128)])
        f = feature(cand)
        pair = _max_pair(cand, cand, f, f, True)
        assert pair is not None
        return pair
    if unit == "record":
        users = np.concatenate([_compositions(rng, d, m, 0)[:12], rng.multinomial(
            m, mdl.p, size=random_per_total).astype(np.float64)])
        first = [int(np.argmax(mdl.cluster == k)) for k in range(min(mdl.K, 49))]     # an item of each cluster
        for x in users:
            moved = []
            for j in np.nonzero(x > 0)[0][:8]:
                same = [i for i in np.nonzero(mdl.cluster == mdl.cluster[j])[0] if i != j][:16]
                other = [i for k, i in enumerate(first) if k != mdl.cluster[j]][:48]
                for dest in same + other:
                    y = x.copy()
                    y[j] -= 1
                    y[dest] += 1
                    moved.append(y)
            if not moved:
                continue
            mv = np.array(moved)
            dist = np.sqrt(((feature(mv) - feature(x[None, :])) ** 2).sum(axis=1))
            i = int(np.argmax(dist))
            if dist[i] > best.distance:
                best = Pair(x, mv[i], float(dist[i]))
        return best
    raise ValueError(f"unit {unit!r}: the search knows element, user and record")


def _spread_over_clusters(mdl: Multinomial, m: int, r: int) -> np.ndarray:
    """Two users putting m items evenly over r clusters, one item per cluster each, on different items where a
    cluster has two (the first and the last item of each cluster)."""
    rows = []
    for which in (0, -1):
        v = np.zeros(mdl.d)
        ks = range(min(r, mdl.K))
        per, extra = divmod(m, len(ks))
        for i, k in enumerate(ks):
            items = np.nonzero(mdl.cluster == k)[0]
            v[items[which]] += per + (1 if i < extra else 0)
        rows.append(v)
    return np.array(rows)


def _complete(pair: Pair, mdl: Multinomial) -> Pair:
    """An element pair found on one cluster's block, made two whole users: the m - t items x's block (total t) does
    not hold go to one item of another cluster, the same for both, so x totals m and x' differs from x only inside
    the block (its total m - t + t', which is m when the relation keeps the count); the map works cluster by
    cluster, so the distance is unchanged."""
    x, y = pair.x.copy(), pair.x_prime.copy()
    left = mdl.m - x.sum()
    if left > 0:
        changed = np.nonzero((x != 0) | (y != 0))[0]
        cl = set(mdl.cluster[changed].tolist())
        outside = [j for j in range(mdl.d) if mdl.cluster[j] not in cl]
        if outside:
            x[outside[0]] += left
            y[outside[0]] += left
    return Pair(x, y, pair.distance)
