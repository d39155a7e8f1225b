"""Small statistics used by the checks: confidence limits, a chi-square variance test, a weighted slope fit."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class MeanCI:
    mean: float
    se: float
    lower: float
    upper: float
    trials: int


def mean_ci(x: np.ndarray, confidence: float) -> MeanCI:
    """Two-sided Student-t interval for the mean at ``confidence``."""
    x = np.asarray(x, dtype=float)
    m = float(x.mean())
    se = float(x.std(ddof=1) / np.sqrt(x.size))
    t = float(stats.t.ppf(0.5 + confidence / 2, x.size - 1))
    return MeanCI(m, se, m - t * se, m + t * se, int(x.size))


def one_sided_upper(x: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """(mean, upper confidence limit, sd) with P(mean_true <= UCL) >= confidence."""
    x = np.asarray(x, dtype=float)
    sd = float(x.std(ddof=1))
    t = float(stats.t.ppf(confidence, x.size - 1))
    return float(x.mean()), float(x.mean() + t * sd / np.sqrt(x.size)), sd


def trials_needed(mean: float, sd: float, bound: float, confidence: float) -> int | None:
    """Trials at which the one-sided limit would clear the bound, if the mean and sd stay as measured."""
    if mean >= bound or sd == 0:
        return None
    z = float(stats.norm.ppf(confidence))
    return int(np.ceil((z * sd / (bound - mean)) ** 2)) + 1


def chi2_variance_test(sum_sq: float, count: int, sigma: float) -> tuple[float, float]:
    """Two-sided test of H0: ``count`` i.i.d. N(0, sigma^2) values have sum of squares ``sum_sq``.
    Returns (ratio of the estimated to the claimed variance, p-value)."""
    stat = sum_sq / sigma**2
    cdf = float(stats.chi2.cdf(stat, count))
    sf = float(stats.chi2.sf(stat, count))
    return stat / count, min(1.0, 2 * min(cdf, sf))


def detectable_variance_ratio(count: int, alpha: float) -> float:
    """Relative variance error the chi-square test detects at level alpha with ~50% power."""
    z = float(stats.norm.ppf(1 - alpha / 2))
    return z * np.sqrt(2.0 / count)


@dataclass(frozen=True)
class SlopeFit:
    slope: float
    se: float
    lower: float
    upper: float
    intercept: float


def weighted_slope(x: np.ndarray, y: np.ndarray, y_se: np.ndarray, confidence: float) -> SlopeFit:
    """Weighted least squares of y on x (weights 1/se^2); the slope's standard error is inflated by
    the reduced chi-square when the points scatter more than their errors allow (t with P-2 dof)."""
    x, y, w = np.asarray(x, float), np.asarray(y, float), 1.0 / np.asarray(y_se, float) ** 2
    xm = (w * x).sum() / w.sum()
    ym = (w * y).sum() / w.sum()
    sxx = (w * (x - xm) ** 2).sum()
    slope = float((w * (x - xm) * (y - ym)).sum() / sxx)
    intercept = float(ym - slope * xm)
    dof = x.size - 2
    chi2_red = float((w * (y - intercept - slope * x) ** 2).sum() / dof) if dof > 0 else 1.0
    se = float(np.sqrt(max(1.0, chi2_red) / sxx))
    t = float(stats.t.ppf(0.5 + confidence / 2, max(dof, 1)))
    return SlopeFit(slope, se, slope - t * se, slope + t * se, intercept)


def welch_one_sided(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(p-value of 'mean a < mean b', p-value of 'mean a > mean b'), one-sided Welch t-tests. Two samples without
    spread (deterministic runs) are compared exactly: (0, 1), (1, 0), or (1, 1) when equal."""
    import warnings

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        return (0.0, 1.0) if a[0] < b[0] else (1.0, 0.0) if a[0] > b[0] else (1.0, 1.0)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Precision loss occurred", RuntimeWarning)
        t = stats.ttest_ind(a, b, equal_var=False)
    half = float(t.pvalue) / 2
    return (half, 1 - half) if t.statistic < 0 else (1 - half, half)


def z_quantile(confidence: float) -> float:
    """The standard normal quantile at ``confidence`` (one-sided)."""
    return float(stats.norm.ppf(confidence))


def logsumexp1d(a) -> float:
    """log(sum(exp(a))) of a 1-D array (or list) of floats, as scipy.special.logsumexp computes it, without its
    per-call overhead (about 10 us a call: the seed-001 accountants make ~10^5 calls on short vectors). -inf entries
    contribute nothing; all -inf (or empty) gives -inf; a +inf entry gives +inf; NaN propagates. Pinned against
    scipy in tests/test_stats_lse.py."""
    x = np.asarray(a, dtype=np.float64)
    if x.size == 0:
        return -np.inf
    m = float(x.max())
    if not np.isfinite(m):
        return m if not np.isnan(m) else float("nan")
    return m + float(np.log(np.exp(x - m).sum()))


def logsumexp_scipy(v: np.ndarray) -> float:
    """scipy.special.logsumexp(v) of a 1-d float64 array, by scipy's own steps (scipy 1.17's ``_logsumexp``: the
    largest term taken out of the sum, its multiplicity m, log1p(s / m) + log m + max, the naive log of the sum where
    that is not finite) in the same order on the same arrays, so the same number, without the array-API overhead and
    the naive sum scipy computes first and discards. Where a result must be scipy's to the last bit (element_rdp's
    renyi, thousands of calls per accounting); ``logsumexp1d`` above is the shorter formula, equal to scipy only to
    rounding. Pinned bit for bit against scipy in tests/test_stats_lse.py."""
    a_max = v.max(keepdims=True)
    mask = v == a_max
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        e = v - a_max
        np.exp(e, out=e)
        e[mask] = 0.0                                    # scipy's a[mask] = -inf before the exponential
        m = mask.sum(keepdims=True, dtype=np.float64)
        tot = e.sum(keepdims=True)
        tot = np.where(tot == 0, tot, tot / m)
        out = np.log1p(tot) + np.log(m) + a_max
    if not np.isfinite(out[0]):
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            out = np.log(np.exp(v).sum(keepdims=True))
    return float(out[0])
