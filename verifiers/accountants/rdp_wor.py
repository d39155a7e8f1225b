"""dp-accounting's Renyi DP of a Gaussian on a subset sampled without replacement, the same numbers at a fraction
of the cost.

``rdp_privacy_accountant._compute_rdp_sample_wor_gaussian`` (dp-accounting 0.6.0; Wang, Balle & Kasiviswanathan
2019, Thm 27) takes each order on its own. An integer order alpha <= 256 starts from the forward differences of
exp(cgf) at 0 up to order alpha: alpha + 2 passes of a Python loop, O(alpha^2) scalar log-subtractions. A
fractional order interpolates between its floor and its ceiling, each recomputed from scratch. For the 165 orders
of ``gaussian.RDP_ORDERS`` that is about 120,000 scalar log-subtractions per event: 0.5 s, 85% of the learning
specs' accounting (issue 17).

Here the work is shared, not changed:
- The i-th difference at 0 depends on the first i + 2 values only, and the library forms it by the same operations
  whatever alpha it was asked for. So the differences are computed once per call, up to the largest order needed.
  The prefix serves every smaller order.
- Each pass of the library's loop reads only values of the previous pass (position j reads j and j + 1, and j + 1 is
  rewritten after j). So a pass is taken over all positions at once, with the same elementwise functions: numpy's
  exp and log1p where the library calls numpy's, ``math.log1p`` and ``math.exp`` element by element where it calls
  those.
- Each integer order's log A is computed once and shared by the fractional orders beside it. Its terms are formed
  elementwise with the library's expressions in its order of operations, then summed in log space one by one, in
  the library's order.
- A process-wide cache keeps the result per (q, sigma, orders), keyed by their types as well as their values: an
  accountant called again for the same event (another round count, another delta) does not recompute it.

So every float operation is the library's, on the same operands: the result is the library's, bit for bit. The pins
in tests/test_rdp_wor.py compare ``rdp`` with the library's function on the accountants' orders and on random ones;
``tox -e latest`` (a manual drift check, not run by CI) runs them against the newest dp-accounting. Where the fast
path cannot promise that, the library's own function runs instead:
- for a q or a sigma that is not a Python float or int (numpy's float64 is one; a float32 is not: the library then
  computes in float32), and wherever the fast path raises (an order below 1, order 1's 0/0, an overflow), so the
  library's result or its own exception is what the caller gets;
- for the whole process, if a self-check at first use finds the fast path and the library disagreeing on a small
  case (``agrees_with_library``): a CPU whose numpy kernels round otherwise, or a dp-accounting release that computes
  otherwise.
``RdpAccountant`` is dp-accounting's accountant with this one event's curve swapped in; every other event keeps the
library's code."""
from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as _lib
from scipy import special

MAX_EXACT = 256          # the library's max_alpha: above it, its Stirling-form bound, O(alpha)
_PLAIN = (float, int, np.float64)                       # the q and sigma types whose arithmetic is float64's


def rdp(q: float, sigma: float, orders: Sequence[float]) -> np.ndarray:
    """``_compute_rdp_sample_wor_gaussian(q, sigma, orders)``: the RDP at each order, the same array."""
    orders = tuple(orders)
    if not (type(q) in _PLAIN and type(sigma) in _PLAIN and agrees_with_library()):
        return _lib._compute_rdp_sample_wor_gaussian(q, sigma, orders)
    # keyed by type and value: 1.0, np.float64(1.0) and 1 are equal keys, but the library's arithmetic on them is not
    # the same (order 1: 0 / 0.0 raises, 0 / np.float64(0.0) is nan)
    key = (type(q), q, type(sigma), sigma, tuple((type(a), a) for a in orders))
    return _cached(key, q, sigma, orders).copy()


@functools.lru_cache(maxsize=512)
def _cached(key: tuple, q: float, sigma: float, orders: tuple) -> np.ndarray:
    try:
        return fast(q, sigma, orders)
    except Exception:               # the library's own code decides: its result, or its exception
        return _lib._compute_rdp_sample_wor_gaussian(q, sigma, orders)


def fast(q: float, sigma: float, orders: tuple) -> np.ndarray:
    """The fast path alone: no type check, no self-check, no cache, no fallback (what the pins compare)."""
    log_a = _LogA(q, sigma, orders)
    return np.array([_scalar(q, sigma, alpha, log_a) for alpha in orders])


# both signs' branches of the differences, exact orders and the Stirling form; one difference off by an ulp, or the
# exact range cut below 40, changes its array
SELF_CHECK = (0.05, 10.0, (1.5, 2, 3.25, 6, 40, 300))


@functools.lru_cache(maxsize=1)
def agrees_with_library() -> bool:
    """The fast path gives the library's array, bit for bit, on ``SELF_CHECK`` (a few ms, once a process)."""
    q, sigma, orders = SELF_CHECK
    try:
        mine = fast(q, sigma, orders)
    except Exception:
        return False
    theirs = _lib._compute_rdp_sample_wor_gaussian(q, sigma, orders)
    return mine.dtype == theirs.dtype and mine.tobytes() == theirs.tobytes()


def _scalar(q: float, sigma: float, alpha, log_a: _LogA):
    """``_compute_rdp_sample_wor_gaussian_scalar``, step for step, with the integer orders' log A shared."""
    assert (q <= 1) and (q >= 0) and (alpha >= 1)
    if q == 0:
        return 0
    if q == 1.0:
        return alpha / (2 * sigma**2)
    if np.isinf(alpha):
        return np.inf
    if float(alpha).is_integer():
        return log_a(int(alpha)) / (alpha - 1)
    alpha_f = math.floor(alpha)
    alpha_c = math.ceil(alpha)
    x = log_a(alpha_f)
    y = log_a(alpha_c)
    t = alpha - alpha_f
    return ((1 - t) * x + t * y) / (alpha - 1)


class _LogA:
    """``_compute_rdp_sample_wor_gaussian_int(q, sigma, alpha)`` for the orders of one call, each computed once."""

    def __init__(self, q: float, sigma: float, orders: tuple):
        self.q, self.sigma = q, sigma
        # every integer order evaluated exactly: each order's floor and ceiling in [2, MAX_EXACT]
        exact = [b for a in orders if 1 <= a < np.inf for b in (math.floor(a), math.ceil(a)) if 2 <= b <= MAX_EXACT]
        self.largest = max(exact, default=0)
        self.deltas: np.ndarray | None = None              # computed at the first exact order, up to the largest
        self.memo: dict[int, float] = {}

    def __call__(self, alpha: int):
        if alpha not in self.memo:
            self.memo[alpha] = self._compute(alpha)
        return self.memo[alpha]

    def _compute(self, alpha: int):
        q, sigma = self.q, self.sigma
        if alpha == 1:
            return 0
        two_s2 = 2.0 * sigma**2
        f2 = 1.0 * 2.0 / two_s2                                      # the library's func(2.0)
        log_f2m1 = f2 + math.log1p(-np.exp(-f2))
        first = 2 * np.log(q) + _lib._log_comb(alpha, 2) + np.minimum(np.log(4) + log_f2m1, f2 + np.log(2))
        i = np.arange(3, alpha + 1)
        x = (i - 1).astype(np.float64)
        cgf = x * 1.0 * (x + 1) / two_s2                             # the library's cgf(i - 1)
        log_comb = special.gammaln(alpha + 1) - special.gammaln(i + 1.0) - special.gammaln(alpha - i + 1.0)
        if alpha <= MAX_EXACT:
            if self.deltas is None:
                self.deltas = forward_diffs(sigma, self.largest)
            d = self.deltas
            lo = d[2 * (i // 2) - 1]
            hi = d[2 * ((i + 1) // 2) - 1]
            s = np.log(4) + 0.5 * (lo + hi)
            s = np.minimum(s, np.log(2) + cgf)
            s += i * np.log(q) + log_comb
        else:
            s = np.log(2) + cgf + i * np.log(q) + log_comb
        log_a = _lib._log_add(0, first)
        for term in s.tolist():
            log_a = _lib._log_add(log_a, term)
        return float(log_a) if alpha <= MAX_EXACT else log_a


def forward_diffs(sigma: float, n: int) -> np.ndarray:
    """The log-magnitudes of ``_get_forward_diffs(cgf, n)`` (the library's cgf at this sigma), the same array: each
    pass of ``_stable_inplace_diff_in_log`` over all its positions at once."""
    two_s2 = 2.0 * sigma**2
    vec = np.zeros(n + 3)
    signs = np.ones(n + 3, dtype=bool)
    x = np.arange(0, n + 2, dtype=np.float64)
    vec[1:] = x * 1.0 * (x + 1) / two_s2
    deltas = np.zeros(n + 2)
    for k in range(0, n + 2):
        m = n + 2 - k                                               # positions 0..m-1 take a difference
        a, b = vec[:m], vec[1:m + 1]                                # the library's vec[j], vec[j + 1]
        sa, sb = signs[:m], signs[1:m + 1]
        new, new_s = np.empty(m), np.empty(m, dtype=bool)
        same = sa == sb
        up = same & (b > a)                                         # _log_sub_sign(b, a) with b > a
        down = same & (b < a)
        tie = same & ~up & ~down                                    # equal (or NaN): the library's -inf
        if up.any():
            e = -np.exp(a[up] - b[up])
            new[up] = b[up] + np.fromiter(map(math.log1p, e.tolist()), np.float64, len(e))
            new_s[up] = True
        if down.any():
            new[down] = a[down] + np.log1p(-np.exp(b[down] - a[down]))
            new_s[down] = False
        new[tie], new_s[tie] = -np.inf, True
        flip = same & ~sb                                           # both negative: the sign toggles
        new_s[flip] = ~new_s[flip]
        diff = ~same                                                # _log_add(a, b), the sign of b
        if diff.any():
            new[diff] = [_lib._log_add(x, y) for x, y in zip(a[diff].tolist(), b[diff].tolist())]
            new_s[diff] = sb[diff]
        vec[:m], signs[:m] = new, new_s
        deltas[k] = vec[0]
    return deltas


class RdpAccountant(_lib.RdpAccountant):
    """dp-accounting's ``RdpAccountant`` with ``rdp`` for a Gaussian sampled without replacement; the same epsilon."""

    def _maybe_compose(self, event, count, do_compose):
        if (do_compose and isinstance(event, dp_event.SampledWithoutReplacementDpEvent)
                and self._neighboring_relation is _lib.NeighborRel.REPLACE_ONE):
            sigma = _lib._effective_gaussian_noise_multiplier(event.event)
            if not isinstance(sigma, dp_event.DpEvent):
                self._rdp += count * rdp(event.sample_size / event.source_dataset_size, sigma, self._orders)
                return None
        return super()._maybe_compose(event, count, do_compose)
