"""``math.exp`` of every element of an array, compiled: the C library's exp, as Python's ``math.exp`` calls it.

dp-accounting's PLD code takes its exponentials one at a time with ``math.exp`` (the C library's exp). Our replicas
of that code (pld_epsilon.py's walk, pld_pmfs.py's masses) must give its numbers bit for bit, so they cannot use
``np.exp``: numpy has its own SIMD exp on CPUs with AVX-512, which may differ from the C library's in the last bit.
They used ``map(math.exp, values)``, about 60 ns a value in the interpreter; that was most of the walk's time on a
composed PLD of 10^6 points (issue 17). numba compiles ``math.exp`` to a call of the same C library function (numba
could use Intel's SVML instead only if the ``icc_rt`` package were installed; the project does not install it).

Where ``math.exp`` raises OverflowError (arguments above log(max float)), this returns inf, as numpy would; the
callers handle the overflow as the library does. A self-check at first use compares this with ``math.exp`` on
values spread over the whole range, the limits and a few ulps around them; if a single value differs, the process
takes ``math.exp`` one value at a time, as before (tests/test_pld_epsilon.py plants a difference and sees it).
"""
from __future__ import annotations

import functools
import math

import numpy as np
from numba import njit


@njit(cache=True, error_model="numpy")
def _exp(x: np.ndarray, negate: bool) -> np.ndarray:
    out = np.empty(x.size)
    for i in range(x.size):
        out[i] = math.exp(-x[i] if negate else x[i])
    return out


def python_exp(x: np.ndarray, negate: bool = False) -> np.ndarray:
    """The reference: ``math.exp`` value by value (inf where it overflows)."""
    def one(v: float) -> float:
        try:
            return math.exp(v)
        except OverflowError:
            return math.inf
    vals = (-np.asarray(x, dtype=np.float64) if negate else np.asarray(x, dtype=np.float64)).ravel().tolist()
    return np.fromiter(map(one, vals), np.float64, len(vals))


def _self_check_values() -> np.ndarray:
    """Values over exp's whole range (every binade's scale and sign), its overflow and underflow limits with the
    ulps around them, zeros, infinities and NaN."""
    rng = np.random.default_rng(0)
    spread = rng.uniform(-750.0, 712.0, 4096)
    small = np.ldexp(rng.uniform(-1.0, 1.0, 1024), rng.integers(-60, 10, 1024))
    limits = []
    for edge in (709.782712893384, -708.3964185322641, -745.1332191019411, 0.0, 1.0, -1.0):
        v = edge
        for _ in range(4):
            v = np.nextafter(v, -np.inf)
        for _ in range(9):
            limits.append(v)
            v = np.nextafter(v, np.inf)
    return np.concatenate([spread, small, limits, [-0.0, np.inf, -np.inf, np.nan]])


@functools.lru_cache(maxsize=1)
def agrees_with_math() -> bool:
    """The compiled exp equals ``math.exp`` (inf for its overflows) on the self-check's values, NaN for NaN."""
    x = _self_check_values()
    for negate in (False, True):
        got, want = _exp(x, negate), python_exp(x, negate)
        if not np.array_equal(got.view(np.int64), want.view(np.int64)):
            return False
    return True


def exp(x: np.ndarray, negate: bool = False) -> np.ndarray:
    """``math.exp(v)`` (or ``math.exp(-v)``) for every element v of x, inf where it overflows, in x's shape."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    out = _exp(x.ravel(), negate) if agrees_with_math() else python_exp(x, negate)
    return out.reshape(x.shape)
