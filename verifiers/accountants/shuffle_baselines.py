"""The baselines seed 001 compares its Thm 1 against in Figure 2 (L195, L41), computed from their own sources (the
seed prints none of their formulas; note 001 section 3 lists them, and each was checked against its source).

- "rdp_shuffle": the RDP of shuffling m eps0-LDP reports of Girgis, Data, Diggavi, Suresh & Kairouz (CCS 2021,
  [29]; their Thm 1, binomial-sum form, integer orders >= 2, mbar = floor((m-1)/(2 e^eps0)) + 1):
      eps_sh(l) <= log(1 + C(l,2)(e^eps0-1)^2/(mbar e^eps0)
                       + sum_{i=3}^{l} C(l,i) i Gamma(i/2) ((e^{2 eps0}-1)^2/(2 e^{2 eps0} mbar))^{i/2}
                       + e^{eps0 l - (m-1)/(8 e^eps0)}) / (l-1),
  then subsampled without replacement by Wang, Balle & Kasiviswanathan (AISTATS 2019, [43]) Thm 9, with
  eps(inf) = eps0 (the shuffled output is eps0-DP):
      eps'(l) <= log(1 + g^2 C(l,2) min{4(e^{eps(2)}-1), e^{eps(2)} min{2, (e^{eps0}-1)^2}}
                       + sum_{j=3}^{l} g^j C(l,j) e^{(j-1) eps(j)} min{2, (e^{eps0}-1)^j}) / (l-1),
  composed over T rounds and converted by Lemma 1 (as for Thm 1).
- "fmt_kov": the numerical shuffling bound of Feldman, McMillan & Talwar ("Hiding among the clones", FOCS 2021,
  [24]) for k reports at delta_s, then subsampling (Ullman's notes, [42]): (eps, delta) -> (log(1 + g(e^eps - 1)),
  g delta), then Kairouz, Oh & Viswanath's composition (ICML 2015, [34], the simplified homogeneous form):
      eps_T = min{T e, T e (e^e-1)/(e^e+1) + e sqrt(2T log(e + sqrt(T e^2)/dt)), T e (e^e-1)/(e^e+1) + e sqrt(2T log(1/dt))}
  with total delta 1 - (1 - g delta_s)^T (1 - dt). The delta split (seed silent; the authors' script's): a
  per-round g delta_s = delta/(2T), and dt solving the total exactly.
  FMT's reduction: the shuffled outputs are post-processings of P = (A + B, C - A + 1 - B) and
  Q = (A + 1 - B, C - A + B), C ~ Bin(m-1, e^-eps0), A | C ~ Bin(C, 1/2), B ~ Bern(e^eps0/(e^eps0+1)); given C = c the
  likelihood ratio of P and Q is monotone in the first coordinate, so the hockey-stick divergence is a binomial
  tail sum per c (computed here exactly for every c) and eps is found by bisection on delta(eps).

Two conventions: "as_stated" (the sources' theorems as above) and "authors_script", approximately what the seed's
authors' public notebook does for Figure 2 (Privacy_Analysis.ipynb in their GitHub repository): [43]'s terms as
2 e^{(j-1) eps(j)} for every j >= 2 (Thm 9's min{...} dropped, at j = 2 too); FMT with 3 bisection steps, and no
amplification at all (eps_sh = eps0) when eps0 > log(k/(16 log(2/delta))), the validity condition of FMT's closed
form. Where we differ from the notebook (small effects at the paper's settings): mbar and kbar keep the floor, the
sum over c is exact rather than grouped in blocks of 100, the closed form and its condition use log(4/delta) and
log(2/delta) as FMT's paper states them (Apple's code uses log(4/delta) in both), and the orders run to 8192. The paper's 14x and 2.5x
(L195) come out of the second convention only (tests/test_shuffle_baselines.py; README findings).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln
from scipy.stats import binom

from verifiers.accountants import subsampled_shuffle
from verifiers.stats import logsumexp1d

CONVENTIONS = ("as_stated", "authors_script")
BASELINES = {"rdp_shuffle": "Girgis et al. CCS 2021 [29] shuffle RDP + Wang-Balle-Kasiviswanathan 2019 [43] Thm 9 "
                            "subsampling + Lemma 1",
             "fmt_kov": "Feldman-McMillan-Talwar 2021 [24] numerical shuffling bound + [42] subsampling + "
                        "Kairouz-Oh-Viswanath 2015 [34] composition"}
FMT_STEPS = 50


def _log_binom(n: int, j: np.ndarray) -> np.ndarray:
    return gammaln(n + 1) - gammaln(j + 1) - gammaln(n - j + 1)


# --- [29] + [43] ------------------------------------------------------------------------------------
def shuffle_rdp(top: int, *, m: int, eps0: float) -> np.ndarray:
    """[29]'s bound eps_sh(l) for l = 0..top (entries 0 and 1 unused, set to 0): one vectorised pass."""
    mbar = math.floor((m - 1) / (2 * math.exp(eps0))) + 1
    out = np.zeros(top + 1)
    c2 = 2 * math.log(math.expm1(eps0)) - math.log(mbar) - eps0
    inner = 2 * math.log(math.expm1(2 * eps0)) - math.log(2) - 2 * eps0 - math.log(mbar)
    i = np.arange(3, top + 1, dtype=np.float64)
    t_i = np.log(i) + gammaln(i / 2) + i / 2 * inner          # log of i Gamma(i/2)(...)^{i/2}, without C(l, i)
    for lam in range(2, top + 1):
        terms = [0.0, float(_log_binom(lam, np.array(2.0))) + c2, eps0 * lam - (m - 1) / (8 * math.exp(eps0))]
        if lam >= 3:
            terms.append(logsumexp1d(_log_binom(lam, i[: lam - 2]) + t_i[: lam - 2]))
        out[lam] = logsumexp1d(terms) / (lam - 1)
    return out


def subsampled_rdp(eps: np.ndarray, *, gamma: float, eps_inf: float, convention: str) -> np.ndarray:
    """[43] Thm 9 (sampling without replacement) applied to eps(l), l = 0..top: the subsampled eps'(l)."""
    top = len(eps) - 1
    out = np.zeros(top + 1)
    lg = math.log(gamma)
    log_cap = lambda j: min(math.log(2), j * math.log(math.expm1(eps_inf)))   # noqa: E731 - log min{2, (e^e-1)^j}
    if convention == "as_stated":
        two = min(math.log(4) + math.log(math.expm1(eps[2])), eps[2] + log_cap(2))
        cap = log_cap
    else:                                                   # the authors' script: 2 e^{(j-1) eps(j)} for every j
        two = math.log(2) + eps[2]
        cap = lambda j: math.log(2)                         # noqa: E731
    j = np.arange(3, top + 1, dtype=np.float64)
    t_j = j * lg + (j - 1) * eps[3:] + np.array([cap(int(x)) for x in j])
    for lam in range(2, top + 1):
        terms = [0.0, float(_log_binom(lam, np.array(2.0))) + 2 * lg + two]
        if lam >= 3:
            terms.append(logsumexp1d(_log_binom(lam, j[: lam - 2]) + t_j[: lam - 2]))
        out[lam] = logsumexp1d(terms) / (lam - 1)
    return out


def rdp_shuffle_epsilon(*, k: int, n: int, eps0: float, T: int, delta: float, convention: str = "as_stated",
                        top: int = 512) -> tuple[float, float]:
    """(eps, optimal order) after T rounds; the order grid is doubled until the optimum is inside it."""
    _convention(convention)
    while True:
        sub = subsampled_rdp(shuffle_rdp(top, m=k, eps0=eps0), gamma=k / n, eps_inf=eps0, convention=convention)
        orders = np.arange(2, top + 1)
        eps, order = subsampled_shuffle.rdp_to_dp(T * sub[2:], orders, delta)
        if order < top or top >= 8192:
            return eps, order
        top *= 2


# --- [24] + [42] + [34] ------------------------------------------------------------------------------
@functools.lru_cache(maxsize=16)
def _clone_weights(m: int, eps0: float) -> tuple[np.ndarray, np.ndarray]:
    """FMT's C ~ Bin(m-1, e^-eps0): the values c of positive probability and their probabilities (read-only)."""
    c = np.arange(0, m, dtype=np.float64)
    w = binom.pmf(c, m - 1, math.exp(-eps0))
    keep = w > 0
    c, w = c[keep], w[keep]
    c.flags.writeable = w.flags.writeable = False
    return c, w


@functools.lru_cache(maxsize=4096)
def fmt_delta(m: int, eps0: float, eps: float) -> float:
    """The hockey-stick divergence HS_{e^eps}(P || Q) of FMT's dominating pair for m reports, exactly (a pure
    function of its three numbers, cached: the bisections of nearby deltas share their first midpoints)."""
    a = 1 / (1 + math.exp(-eps0))                 # P(B = 1) = e^eps0/(e^eps0 + 1)
    E = math.exp(eps)
    den = a - E * (1 - a)
    if den <= 0:                                  # e^eps >= e^eps0: no event has P > e^eps Q
        return 0.0
    c, w = _clone_weights(m, eps0)
    # P_c(x) = a B(x-1) + (1-a) B(x), Q_c(x) = (1-a) B(x-1) + a B(x), B = Bin(c, 1/2): the ratio rises with
    # r = B(x-1)/B(x) = x/(c-x+1); P > e^eps Q iff r > r*, i.e. x >= t
    rstar = (E * a - (1 - a)) / den
    t = np.floor(rstar * (c + 1) / (1 + rstar)) + 1
    # P(Bin(c, 1/2) > s) at s = t - 2 and t - 1, in one call (scipy's per-call cost dominates at these sizes)
    sf2, sf1 = np.split(binom.sf(np.concatenate((t - 2, t - 1)), np.concatenate((c, c)), 0.5), 2)
    p_tail = a * sf2 + (1 - a) * sf1              # P_c(X >= t)
    q_tail = (1 - a) * sf2 + a * sf1
    return float(np.sum(w * np.maximum(p_tail - E * q_tail, 0.0)))


def fmt_closed_form(m: int, eps0: float, delta: float) -> float | None:
    """FMT's closed form (their Thm 3.1), None outside its condition eps0 <= log(m/(16 log(2/delta)))."""
    if eps0 > math.log(m / (16 * math.log(2 / delta))):
        return None
    return math.log1p(math.expm1(eps0) / (math.exp(eps0) + 1) * (8 * math.sqrt(math.exp(eps0) * math.log(4 / delta) / m)
                                                                   + 8 * math.exp(eps0) / m))


def fmt_epsilon(m: int, eps0: float, delta: float, *, steps: int = FMT_STEPS, hi: float | None = None) -> float:
    """The smallest eps (to the bisection's resolution, rounded up) with fmt_delta <= delta, searched in [0, hi]."""
    lo, hi = 0.0, eps0 if hi is None else hi
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if fmt_delta(m, eps0, mid) <= delta else (mid, hi)
    return hi


def kov(eps: float, T: int, delta_tilde: float) -> float:
    """[34] (simplified homogeneous form): T-fold composition of eps-DP steps, at slack delta_tilde."""
    drift = T * eps * math.expm1(eps) / (math.exp(eps) + 1)
    return min(T * eps, drift + eps * math.sqrt(2 * T * math.log(math.e + math.sqrt(T * eps * eps) / delta_tilde)),
               drift + eps * math.sqrt(2 * T * math.log(1 / delta_tilde)))


def fmt_kov_epsilon(*, k: int, n: int, eps0: float, T: int, delta: float, convention: str = "as_stated") -> float:
    _convention(convention)
    gamma = k / n
    delta_round = delta / (2 * T)                 # after subsampling: gamma delta_s
    delta_s = delta_round / gamma
    if delta_s >= 1:
        raise ValueError(f"the per-round shuffle delta delta/(2 gamma T) = {delta_s:.3g} is not below 1: no (eps, delta) "
                         f"split of this kind exists for delta = {delta}, gamma = {gamma:g}, T = {T}")
    if convention == "as_stated":
        eps_sh = fmt_epsilon(k, eps0, delta_s)
    else:
        # the script's test uses the total delta; its bisection starts from the closed form at delta_s
        valid = fmt_closed_form(k, eps0, delta) is not None
        eps_sh = fmt_epsilon(k, eps0, delta_s, steps=3, hi=fmt_closed_form(k, eps0, delta_s) or eps0) if valid else eps0
    eps1 = math.log1p(gamma * math.expm1(eps_sh))
    # 1 - (1 - delta_round)^T (1 - dt) = delta, solved for dt in log space
    dt = -math.expm1(math.log1p(-delta) - T * math.log1p(-delta_round))
    return kov(eps1, T, dt)


def _convention(c: str) -> None:
    if c not in CONVENTIONS:
        raise ValueError(f"unknown convention {c!r}; allowed: {', '.join(CONVENTIONS)}")


@dataclass(frozen=True)
class BaselineValue:
    epsilon: float
    order: float | None


def baseline(name: str, *, k: int, n: int, eps0: float, T: int, delta: float, convention: str) -> BaselineValue:
    if name == "rdp_shuffle":
        e, o = rdp_shuffle_epsilon(k=k, n=n, eps0=eps0, T=T, delta=delta, convention=convention)
        return BaselineValue(e, o)
    if name == "fmt_kov":
        return BaselineValue(fmt_kov_epsilon(k=k, n=n, eps0=eps0, T=T, delta=delta, convention=convention), None)
    raise ValueError(f"unknown baseline {name!r}; allowed: {', '.join(BASELINES)}")


# --- rounds within a budget (seed 001's Figure 3: one training run, stopped where each accountant's epsilon ends) ---
CURVES = ("thm1", "fmt_kov", "rdp_shuffle")
MAX_ALLOWANCE = 10**6


def curve_epsilon(curve: str, *, k: int, n: int, eps0: float, T: int, delta: float, convention: str = "as_stated") -> float:
    """epsilon after T rounds: Thm 1 + Lemma 1 ('thm1', the paper's "ours") or a baseline of ``BASELINES``."""
    if curve == "thm1":
        return subsampled_shuffle.epsilon("upper", k=k, n=n, eps0=eps0, T=T, delta=delta).epsilon
    return baseline(curve, k=k, n=n, eps0=eps0, T=T, delta=delta, convention=convention).epsilon


def rounds_within(curve: str, eps: float, *, k: int, n: int, eps0: float, delta: float,
                  convention: str = "as_stated") -> int:
    """The most rounds T whose epsilon (``curve_epsilon``) is at most ``eps`` (0 when one round exceeds it): every
    curve here is non-decreasing in T (RDP composes additively; KOV's bound grows with T and the per-round delta
    shrinks with it), so the rounds within a budget form an interval 1..T*, found by doubling then bisection."""
    if not eps > 0:
        raise ValueError(f"need eps > 0 (eps = {eps})")
    if curve not in CURVES:
        raise ValueError(f"unknown curve {curve!r}; allowed: {', '.join(CURVES)}")
    f = lambda T: curve_epsilon(curve, k=k, n=n, eps0=eps0, T=T, delta=delta, convention=convention)  # noqa: E731
    if f(1) > eps:
        return 0
    lo, hi = 1, 2
    while f(hi) <= eps:
        lo, hi = hi, 2 * hi
        if hi > MAX_ALLOWANCE:
            raise ValueError(f"{curve} stays within eps = {eps:g} beyond {MAX_ALLOWANCE} rounds")
    while hi - lo > 1:                              # f(lo) <= eps < f(hi)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if f(mid) <= eps else (lo, mid)
    return lo
