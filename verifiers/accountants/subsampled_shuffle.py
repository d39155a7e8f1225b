"""RDP of the subsampled shuffle model: seed 001 (Girgis, Data, Diggavi, "Renyi Differential Privacy of the
Subsampled Shuffle Model in Distributed Learning"). Lnnn = line of ../shared/seeds/001_b39a6850360fb784.txt.

n clients, k of them sampled without replacement each round (gamma = k/n), each applies an eps0-LDP
randomizer with discrete output, the shuffler hides who sent what. Per round:
- Thm 1 (L143-147), upper bound, integer lambda >= 2, with kbar = floor((k-1)/(2 e^eps0)) + 1 and
  Upsilon = ((1 + gamma x)^lambda - 1 - lambda gamma x) e^{-(k-1)/(8 e^eps0)}, x = (e^{2 eps0} - 1)/e^eps0;
- Thm 2 (L149-153), lower bound, evaluated in the equivalent closed form
  (1/(lambda-1)) log E_{m ~ Bin(k, p)} [(1 + gamma c (m - k p))^lambda], c = (e^{2 eps0} - 1)/(k e^eps0),
  p = 1/(e^eps0 + 1): expanding the power gives the printed sum (the j = 1 term vanishes, the j = 2 term is
  gamma^2 C(lambda,2) c^2 Var m = gamma^2 C(lambda,2)(e^eps0 - 1)^2/(k e^eps0)), and every term is positive,
  so nothing cancels (note 001 section 3, [DERIVED]; checked against the printed sum in the tests).
T rounds compose additively in RDP (Mironov 2017, Prop. 1); Lemma 1 (L80-82) converts to (eps, delta):
  eps = min_lambda [T eps(lambda) + (log(1/delta) + (lambda-1) log(1 - 1/lambda) - log lambda)/(lambda - 1)].
Everything in log space (gammaln, logsumexp); the order grid grows until the optimum is inside it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln
from scipy.stats import binom

from algorithms.events import ShuffledLDPRelease
from verifiers.accountants.base import Accountant
from verifiers.stats import logsumexp1d

SEED = "seed 001 (Girgis, Data & Diggavi)"
GRID_START = 256          # orders 2..GRID_START, then log-spaced; doubled at the top until the optimum is interior
MAX_ORDER = 10**7


def _log_binom(lam: int, j: np.ndarray) -> np.ndarray:
    return gammaln(lam + 1) - gammaln(j + 1) - gammaln(lam - j + 1)


def _check(lam: int, k: int, n: int, eps0: float, theorem: str) -> int:
    """The theorems' domain (L143, L149): 1 <= k <= n, eps0 >= 0, integer lambda >= 2; returns lambda."""
    if not (1 <= k <= n):
        raise ValueError(f"need 1 <= k <= n (k = {k}, n = {n})")
    if not eps0 >= 0:
        raise ValueError(f"need eps0 >= 0 (eps0 = {eps0})")
    if lam < 2 or lam != int(lam):
        raise ValueError(f"{theorem} holds for integer orders >= 2 (lambda = {lam})")
    return int(lam)


def rdp_upper(lam: int, *, k: int, n: int, eps0: float) -> float:
    """Thm 1 (L143-147): an upper bound on one round's RDP at integer order lam >= 2."""
    lam = _check(lam, k, n, eps0, "Thm 1")
    if eps0 == 0:
        return 0.0
    g = k / n
    kbar = math.floor((k - 1) / (2 * math.exp(eps0))) + 1
    log_g = math.log(g)
    terms = [math.log(4) + float(_log_binom(lam, np.array(2))) + 2 * log_g + 2 * math.log(math.expm1(eps0))
             - math.log(kbar) - eps0]
    if lam >= 3:
        j = np.arange(3, lam + 1, dtype=np.float64)
        inner = math.log(2) + 2 * math.log(math.expm1(2 * eps0)) - math.log(kbar) - 2 * eps0
        terms.append(logsumexp1d(_log_binom(lam, j) + j * log_g + np.log(j) + gammaln(j / 2) + j / 2 * inner))
    # Upsilon = e^{-(k-1)/(8 e^eps0)} sum_{a=2}^{lam} C(lam, a) (gamma x)^a, x = e^eps0 - e^-eps0 (the binomial
    # expansion of (1 + gamma x)^lam - 1 - lam gamma x, without its cancellation)
    a = np.arange(2, lam + 1, dtype=np.float64)
    log_x = math.log(math.exp(eps0) - math.exp(-eps0))
    terms.append(logsumexp1d(_log_binom(lam, a) + a * (log_g + log_x)) - (k - 1) / (8 * math.exp(eps0)))
    return float(np.logaddexp(0.0, logsumexp1d(terms))) / (lam - 1)


def rdp_lower(lam: int, *, k: int, n: int, eps0: float) -> float:
    """Thm 2 (L149-153): a lower bound on one round's RDP at integer order lam >= 2 (closed form, see above)."""
    lam = _check(lam, k, n, eps0, "Thm 2")
    if eps0 == 0:
        return 0.0
    g = k / n
    p = 1 / (math.exp(eps0) + 1)
    c = math.expm1(2 * eps0) / (k * math.exp(eps0))
    sd = math.sqrt(k * p * (1 - p))
    # the sum's mass: where log pmf (quadratic in m) meets lam log(1 + g c (m - kp)) (at most linear): a window
    # around k p shifted by lam g c Var(m), wide enough that what is left out is below e^-50 of the total
    centre = k * p + lam * g * c * sd * sd
    lo = max(0, int(math.floor(k * p - 12 * sd - 50)))
    hi = min(k, int(math.ceil(centre + 40 * sd + 50)))
    m = np.arange(lo, hi + 1, dtype=np.float64)
    base = np.log1p(g * c * (m - k * p))
    return logsumexp1d(binom.logpmf(m, k, p) + lam * base) / (lam - 1)


def rdp_to_dp(rdp_total: np.ndarray, orders: np.ndarray, delta: float) -> tuple[float, float]:
    """Lemma 1 (L80-82) at every order; returns (eps, the minimising order)."""
    lam = orders.astype(np.float64)
    eps = rdp_total + (math.log(1 / delta) + (lam - 1) * np.log1p(-1 / lam) - np.log(lam)) / (lam - 1)
    i = int(np.argmin(eps))
    return float(eps[i]), float(orders[i])


def dp_to_delta(rdp_total: np.ndarray, orders: np.ndarray, eps: float) -> tuple[float, float]:
    """Lemma 1 solved for delta at a given eps: the smallest delta over the orders (capped at 1)."""
    lam = orders.astype(np.float64)
    log_delta = -((lam - 1) * (eps - rdp_total) - (lam - 1) * np.log1p(-1 / lam) + np.log(lam))
    i = int(np.argmin(log_delta))
    return float(min(1.0, math.exp(min(log_delta[i], 0.0)))), float(orders[i])


@dataclass(frozen=True)
class ShuffleEpsilon:
    epsilon: float
    order: float               # the optimal Renyi order
    orders_searched: int
    grid_top: int


def _grid(top: int) -> np.ndarray:
    head = np.arange(2, min(GRID_START, top) + 1)
    if top <= GRID_START:
        return head
    tail = np.unique(np.round(np.geomspace(GRID_START, top, 120)).astype(np.int64))
    return np.unique(np.concatenate([head, tail]))


def epsilon(bound: str, *, k: int, n: int, eps0: float, T: int, delta: float) -> ShuffleEpsilon:
    """(eps, delta)-DP after T rounds from Thm 1 ('upper') or Thm 2 ('lower') with Lemma 1, minimised over
    integer orders; the grid's top is raised until the optimal order lies strictly inside it."""
    if not 0 < delta < 1:
        raise ValueError(f"need 0 < delta < 1 (delta = {delta})")
    if T < 1:
        raise ValueError(f"need T >= 1 (T = {T})")
    fn = {"upper": rdp_upper, "lower": rdp_lower}[bound]
    top = 1024
    while True:
        orders = _grid(top)
        rdp = np.array([T * fn(int(o), k=k, n=n, eps0=eps0) for o in orders])
        eps, order = rdp_to_dp(rdp, orders, delta)
        if order < orders[-1] or top >= MAX_ORDER:
            return ShuffleEpsilon(eps, order, len(orders), top)
        top *= 8


def delta_for(bound: str, *, k: int, n: int, eps0: float, T: int, eps: float) -> tuple[float, float]:
    """The smallest delta Lemma 1 gives at this eps after T rounds (and the order that gives it)."""
    fn = {"upper": rdp_upper, "lower": rdp_lower}[bound]
    orders = _grid(4096)
    rdp = np.array([T * fn(int(o), k=k, n=n, eps0=eps0) for o in orders])
    return dp_to_delta(rdp, orders, eps)


# --- the accountant of a run's shuffled LDP releases (CLDP-SGD) ------------------------------------------------
def _epsilon(events: tuple[ShuffledLDPRelease, ...], L: float, delta: float) -> tuple[float, str]:
    (e,) = events
    res = epsilon("upper", k=e.batch_size, n=e.pool_size, eps0=e.eps_ldp, T=e.rounds, delta=delta)
    return res.epsilon, "seed 001 Thm 1 (RDP of the subsampled shuffle model) + Lemma 1, replace-one"


def _describe(event: ShuffledLDPRelease, L: float, delta: float) -> dict:
    lower = epsilon("lower", k=event.batch_size, n=event.pool_size, eps0=event.eps_ldp, T=event.rounds,
                    delta=delta).epsilon
    return {"eps_ldp": event.eps_ldp, "clients_per_round": event.batch_size, "clients": event.pool_size,
            "epsilon_thm2_lower": lower}


def _view(threat_model: str) -> str:
    return "the server's shuffled view as run, with Thm 2's lower bound next to it"


ACCOUNTANT = Accountant(ShuffledLDPRelease, _epsilon, _describe, _view)
