"""Privacy of seed 003's private shuffled gradient methods (Jiang's thesis, ch. 4; Lnnn = line of
../shared/seeds/003_56e8b1c3300cdeae.txt), accounted from the epochs that ran.

- Lemma 4.5.2 (DP-ShuffleG, L1427) and Lemma 4.6.2 (Priv-Pub, Pub-Priv, Interleaved, L1650): by PABI
  (Thm 4.3.9) an epoch whose differing record is followed by m - 1 noisy steps (m = n + 1 - n_d for Interleaved,
  m = 1 otherwise: the worst position is the last private step) is (alpha, 2 alpha G^2 / (m sigma^2))-RDP; epochs
  compose additively (Prop 4.3.5; the prox is post-processing), and Prop 4.3.4 converts: eps(alpha) = a alpha +
  log(1/delta)/(alpha - 1), a = sum_k 2 G^2 / (m_k sigma_k^2) over the epochs that read private records.
- The conversion minimised over alpha > 1 exactly: alpha* = 1 + sqrt(b/a), eps* = a + 2 sqrt(a b), b = log(1/delta)
  (derived, notes §3.4); its inverse, the noise that makes a schedule (eps, delta)-DP: sigma = G sqrt(2 sum_k 1/m_k) / u,
  u = sqrt(b + eps) - sqrt(b). The thesis's own alpha (§4.5.3, L1453; Table 4.3) is reported beside it.
- App. C.2.1 (L4533-4553): random reshuffling puts the differing record at a uniform position j, so by joint
  convexity an epoch is (alpha, log((1/n) sum_j exp((alpha - 1) 2 alpha G^2 / (sigma^2 j))) / (alpha - 1))-RDP
  (log-space sum); composed over K epochs and converted by Prop 4.3.4, minimised over alpha numerically.
- A library cross-check of our arithmetic: an epoch of Lemma 4.5.2 has exactly the RDP of one Gaussian mechanism of
  sensitivity 2G and noise sigma (2 alpha G^2 / sigma^2 = alpha (2G)^2 / (2 sigma^2)), so dp-accounting's RDP
  accountant, composing K Gaussian events of noise multiplier sigma sqrt(m) / (2G), must give the same RDP curve at
  its orders, and its tighter conversion an epsilon no larger (the check requires both). It recomputes the lemma's
  curve, so it tests our composition and conversion, not the lemma.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp


@dataclass(frozen=True)
class Epoch:
    """One epoch as the accountant reads it: private steps, noisy steps after the last private one, noise std and
    the clipping norm (the sensitivity of one private gradient is 2G under replace-one)."""

    private_steps: int
    noisy_steps_after: int
    sigma: float
    clip: float

    @classmethod
    def of(cls, r: Mapping) -> Epoch:
        return cls(int(r["private_steps"]), int(r["noisy_steps_after"]), float(r["sigma"]), float(r["clip"]))


def rdp_slope(epochs: Iterable[Epoch]) -> float:
    """a with total RDP(alpha) = a alpha: sum over the private epochs of 2 G^2 / (m sigma^2), m = noisy steps after + 1.
    Infinite when a private epoch ran without noise or without a finite clipping norm."""
    a = 0.0
    for e in epochs:
        if e.private_steps == 0:
            continue
        if e.sigma <= 0 or not math.isfinite(e.clip):
            return math.inf
        a += 2.0 * e.clip**2 / ((e.noisy_steps_after + 1) * e.sigma**2)
    return a


def epsilon(a: float, delta: float) -> tuple[float, float]:
    """(eps*, alpha*): Prop 4.3.4's conversion of (alpha, a alpha)-RDP minimised over alpha > 1."""
    b = math.log(1.0 / delta)
    if a == 0:
        return 0.0, math.inf
    if not math.isfinite(a):
        return math.inf, 1.0
    return a + 2.0 * math.sqrt(a * b), 1.0 + math.sqrt(b / a)


def epsilon_at(a: float, delta: float, alpha: float) -> float:
    """Prop 4.3.4 at one order alpha > 1."""
    return a * alpha + math.log(1.0 / delta) / (alpha - 1.0)


def sigma_for(eps: float, delta: float, clip: float, inverse_m: float) -> float:
    """The noise std making a schedule with sum_k 1/m_k = ``inverse_m`` over its private epochs (eps, delta)-DP by
    Lemma 4.5.2 / 4.6.2 with the optimal alpha: a = 2 G^2 inverse_m / sigma^2 = u^2, u = sqrt(b + eps) - sqrt(b)."""
    b = math.log(1.0 / delta)
    u = math.sqrt(b + eps) - math.sqrt(b)
    return clip * math.sqrt(2.0 * inverse_m) / u


def thesis_alpha(sigma: float, delta: float, clip: float, inverse_m: float) -> float:
    """The thesis's alpha (§4.5.3, L1405; Table 4.3): sigma sqrt(log(1/delta)) / (G sqrt(2 sum_k 1/m_k)) (for
    Interleaved, sum_k 1/m_k = K / (n + 1 - n_d)). It is a valid order only when it exceeds 1."""
    return sigma * math.sqrt(math.log(1.0 / delta)) / (clip * math.sqrt(2.0 * inverse_m))


def rr_epoch_rdp(alpha: float, clip: float, sigma: float, n: int) -> float:
    """App. C.2.1: an RR epoch's RDP at order alpha, the differing record uniform over the n positions."""
    j = np.arange(1, n + 1, dtype=np.float64)
    return float(logsumexp((alpha - 1.0) * 2.0 * alpha * clip**2 / (sigma**2 * j)) - math.log(n)) / (alpha - 1.0)


def rr_epsilon(clip: float, sigma: float, n: int, K: int, delta: float) -> tuple[float, float]:
    """(eps, alpha): App. C.2.1's RR refinement composed over K epochs, converted by Prop 4.3.4, minimised over
    alpha in (1, 10^4] (golden-section on log(alpha - 1); the function is smooth and unimodal there)."""
    b = math.log(1.0 / delta)

    def f(t: float) -> float:
        al = 1.0 + math.exp(t)
        return K * rr_epoch_rdp(al, clip, sigma, n) + b / (al - 1.0)

    res = minimize_scalar(f, bounds=(-12.0, math.log(1e4)), method="bounded", options={"xatol": 1e-10})
    return float(res.fun), 1.0 + math.exp(float(res.x))


def dp_accounting_view(clip: float, sigma: float, epochs: int, m: int, delta: float,
                       orders: tuple[float, ...] = ()) -> dict:
    """dp-accounting's RDP accountant on ``epochs`` Gaussian events of sensitivity 2G and effective noise
    sigma sqrt(m): its epsilon (its own, tighter conversion) and its RDP at the orders, against a alpha."""
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    z = sigma * math.sqrt(m) / (2.0 * clip)
    orders = orders or tuple(1.0 + x for x in np.geomspace(0.01, 1000.0, 120))
    acc = rdp.RdpAccountant(list(orders))
    acc.compose(dp_accounting.GaussianDpEvent(z), epochs)
    eps = float(acc.get_epsilon(delta))
    vals = np.asarray(acc._rdp, dtype=np.float64)        # the accountant's RDP curve at its orders (no public getter)
    a = 2.0 * clip**2 * epochs / (m * sigma**2)
    rel = np.abs(vals - a * np.asarray(orders)) / (a * np.asarray(orders))
    b = math.log(1.0 / delta)
    grid_eps = float(np.min(vals + b / (np.asarray(orders) - 1.0)))
    return {"epsilon": eps, "max_rel_rdp_difference": float(rel.max()), "prop434_on_its_grid": grid_eps,
            "noise_multiplier": z, "orders": len(orders)}


DPSGD_ORDERS = tuple(1.0 + x for x in np.geomspace(0.02, 511.0, 64))   # coarser than dp-accounting's default grid:
#                                                                     its epsilon can only be larger, z too (conservative)


@functools.lru_cache(maxsize=64)
def dpsgd_noise_multiplier(q: float, steps: int, eps: float, delta: float) -> float:
    """The DP-SGD baseline's noise multiplier: the smallest z (to 1e-6 relative, bisection in log z) for which
    dp-accounting's RDP accountant puts ``steps`` Poisson-subsampled (rate q) Gaussian mechanisms at epsilon <= eps
    at delta. (Cached by its arguments: the grid specs of one process ask for the same (q, steps, eps, delta).)

    The bisection only asks whether the accountant's epsilon exceeds eps, i.e. whether every order's epsilon does
    (eps > 0; the accountant's epsilon is max(0, the least over its orders)). Each order's RDP and epsilon are
    computed by dp-accounting's own functions one order at a time, exactly as its accountant computes them (its RDP
    array is 0 + steps x the order's value, its conversion one order at a time), starting with the order that last
    reached eps: the first order at or below eps decides "no" without the others. The same decisions as the whole
    accountant's, so the same z, at a fraction of the series evaluations."""
    import logging

    import dp_accounting  # noqa: F401  (the accountant's module below is part of it)
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    orders = np.array(DPSGD_ORDERS)             # as the accountant holds them
    first = [0]                                 # the order tried first: the last one found at or below eps

    def order_eps(z: float, i: int) -> float:
        r = np.zeros(1, dtype=np.float64)
        r += steps * rdp._compute_rdp_poisson_subsampled_gaussian(q=q, noise_multiplier=z, orders=orders[i:i + 1])
        return float(rdp.compute_epsilon(orders[i:i + 1], r, delta)[0])

    def above(z: float) -> bool:
        for i in [first[0]] + [j for j in range(len(orders)) if j != first[0]]:
            if not order_eps(z, i) > eps:
                first[0] = i
                return False
        return True

    absl = logging.getLogger("absl")        # orders whose series does not converge are dropped (with a warning each)
    level = absl.level
    absl.setLevel(logging.ERROR)
    try:
        return _bisect(above, eps)
    finally:
        absl.setLevel(level)


def _bisect(above: Callable[[float], bool], eps: float) -> float:
    """The smallest z of the bracketing bisection at which ``above(z)`` (epsilon(z) > eps) is false."""
    lo, hi = 1e-3, 1.0
    while above(hi):
        lo, hi = hi, hi * 4
        if hi > 1e8:
            raise ValueError(f"no noise multiplier below 1e8 reaches epsilon {eps}")
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if above(mid) else (lo, mid)
        if hi / lo < 1 + 1e-6:
            break
    return hi
