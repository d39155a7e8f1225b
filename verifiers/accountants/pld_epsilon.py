"""dp-accounting's epsilon at delta of a privacy loss distribution, without its per-point Python loop.

``PrivacyLossDistribution.get_epsilon_for_delta`` (dp-accounting 0.6.0, ``pld_pmf._get_epsilon_for_delta``) walks a
dense PMF from its largest loss down, one Python iteration per grid point, accumulating the mass above the loss
(upper) and its exp(-loss)-weighted mass (lower) until log((upper - delta) / lower) >= loss. On a composed PLD of
millions of points that loop was a third of P_GD's run time (issue 17). This is the same walk done by numpy in blocks:
the running sums are ``np.cumsum`` (a sequential accumulation, the same additions in the same order as the loop), the
losses the same repeated subtraction as the library's ``itertools.count``, and exp / log are ``math``'s where a
value is stored or a comparison could turn on a last bit, so the result is the library's bit for bit
(tests/test_pld_epsilon.py pins it against the library on composed PLDs). A sparse PMF keeps the library's loop."""
from __future__ import annotations

import math

import numpy as np
from dp_accounting.pld import pld_pmf

from verifiers.accountants import libm_exp

FIRST_BLOCK = 1 << 12      # most walks end near the top of the PMF: start small, grow the blocks fourfold


def epsilon_for_delta(pld, delta: float) -> float:
    """``pld.get_epsilon_for_delta(delta)`` of a dp-accounting PrivacyLossDistribution, the same number."""
    remove = _pmf_epsilon(pld._pmf_remove, delta)
    if pld._symmetric:
        return remove
    return max(remove, _pmf_epsilon(pld._pmf_add, delta))


def epsilon_for_delta_add(pld, delta: float) -> float:
    """epsilon at delta of the ADD direction of a dp-accounting PrivacyLossDistribution alone (``pld._pmf_add``, whose
    privacy loss is ln(mu_upper/mu_lower) with mu_upper the mechanism's ADD-side law; for a symmetric PLD the only
    direction): a lower bound on ``epsilon_for_delta``."""
    return _pmf_epsilon(pld._pmf_remove if pld._symmetric else pld._pmf_add, delta)


def _pmf_epsilon(pmf, delta: float) -> float:
    if not isinstance(pmf, pld_pmf.DensePLDPmf):
        return pmf.get_epsilon_for_delta(delta)
    return dense_epsilon(pmf._infinity_mass, pmf._lower_loss, pmf._discretization, pmf._probs, delta)


def dense_epsilon(infinity_mass: float, lower_loss: int, discretization: float, probs: np.ndarray,
                  delta: float) -> float:
    """The library's ``_get_epsilon_for_delta`` over a dense PMF (losses (lower_loss + i) * discretization)."""
    if infinity_mass > delta:
        return math.inf
    n = len(probs)
    if n == 0:                                              # the library divides by a zero lower mass here
        return pld_pmf._get_epsilon_for_delta(infinity_mass, [], [], delta)
    reversed_probs = np.flip(np.asarray(probs, dtype=np.float64))
    next_loss = (lower_loss + n - 1) * discretization       # the library's upper_loss, the walk's first loss
    upper, lower = float(infinity_mass), 0.0                # masses before the block's first point
    start, size = 0, FIRST_BLOCK
    while start < n:
        end = min(n, start + size)
        p = reversed_probs[start:end]
        m = end - start
        steps = np.full(m, -discretization)
        steps[0] = next_loss
        losses = np.cumsum(steps)                           # next_loss, next_loss - d, ... (itertools.count's sums)
        weighted = _exp_neg(losses) * p
        ups = np.cumsum(np.concatenate(([upper], p)))       # ups[i]: the upper mass before point start + i
        lows = np.cumsum(np.concatenate(([lower], weighted)))
        # after point i the lower mass is still 0 while the upper reached delta: the loss itself (the library's
        # underflow exit); the lower mass only grows, so no break can come before it
        zero = np.flatnonzero((ups[1:] >= delta) & (lows[1:] == 0))
        if zero.size:
            _overflow(losses[:zero[0] + 1])
            return max(0, float(losses[zero[0]]))
        before_up, before_low = ups[:-1], lows[:-1]
        live = np.flatnonzero((before_up > delta) & (before_low > 0))
        if live.size:
            ratio = (before_up[live] - delta) / before_low[live]
            gap = np.log(ratio) - losses[live]
            # np.log may differ from math.log in the last bit: those within a hair of the boundary are decided by
            # math.log, as the library decides them
            sure = gap > 1e-9 * np.maximum(1.0, np.abs(losses[live]))
            near = np.flatnonzero(~sure & (gap >= -1e-9 * np.maximum(1.0, np.abs(losses[live]))))
            first = np.flatnonzero(sure)
            hit = int(first[0]) if first.size else None
            for j in near:
                if hit is not None and j >= hit:
                    break
                if math.log(float(ratio[j])) >= float(losses[live[j]]):
                    hit = int(j)
                    break
            if hit is not None:
                i = int(live[hit])
                _overflow(losses[:i])
                return _final(float(before_up[i]), float(before_low[i]), delta)
        _overflow(losses)
        upper, lower = float(ups[-1]), float(lows[-1])
        next_loss = float(losses[-1]) + -discretization
        start, size = end, size * 4
    return _final(upper, lower, delta)


def _exp_neg(losses: np.ndarray) -> np.ndarray:
    """exp(-loss) by the C library's exp, as the library's math.exp (libm_exp.py: bit for bit); inf where math.exp
    overflows, which ``_overflow`` turns into the library's OverflowError if the walk reaches it."""
    return libm_exp.exp(losses, negate=True)


def _overflow(walked: np.ndarray) -> None:
    """The library's loop computes math.exp(-loss) at every point it walks past (losses fall along the walk, so
    the last walked has the largest -loss): raise the library's OverflowError where that overflows."""
    if walked.size:
        math.exp(float(-walked[-1]))


def _final(upper: float, lower: float, delta: float) -> float:
    if upper <= lower + delta:
        return 0
    return math.log((upper - delta) / lower)
