"""dp-accounting's self-composition of a privacy loss distribution, without its 40 log-sum-exps of the whole PMF.

``PrivacyLossDistribution.self_compose(k)`` (dp-accounting 0.6.0) composes each dense PMF with itself by one FFT
(``common.self_convolve``), after choosing where to truncate its result by Chernoff bounds at 40 orders
(``common.compute_self_convolve_bounds``): one ``scipy.special.logsumexp`` of the whole PMF per order (scipy 1.17's
takes two passes of exponentials, so about 80 of every point). On seed 002's PMFs (10^4 to 1.5 x 10^5 points)
those bounds were about half of an accounting (issue 17). Here the 40 moment-generating functions come from two
exponentials per point: the orders are +-j / L for j = 1..20 (L the PMF's length), so e^{+-ij/L} is the j-th power
of e^{+-i/L}, taken by repeated multiplication.

The bounds are integers (a ceil or a floor of each order's Chernoff bound (k log M(order) + log(2 / tail)) / order),
so only an integer lying between the library's bound and ours could make them differ. Both log M differ from the
exact value by a few 1e-16 relative to the terms summed (the powers' 20 roundings and the sums here; the library's
shift by the largest term and its log1p): measured differences between the two were at most 1.5e-14 on the specs'
and random PMFs and 8e-14 with end masses of 1e-300. ``GUARD`` allows 1e-12 per unit of (|log M| + 20 + log L),
at least 2.9e-11: 350 to 3000 times the largest difference measured. An order whose bound lies within that slack
of an integer, or comes out non-finite, is recomputed by the library's own expression, so the truncation is the
library's, and the FFT that follows is the library's steps in the same order: the composed PMF is the library's bit
for bit (tests/test_pld_compose.py pins it on the accountants' PLDs and on random ones; ``tox -e latest`` runs the
pins against the newest dp-accounting). A sparse PMF, or one with a negative entry, keeps the library's code."""
from __future__ import annotations

import math

import numpy as np
from dp_accounting.pld import pld_pmf, privacy_loss_distribution
from scipy import fft, special

ORDERS = 20          # the library's orders: j / L for j in -20..-1, 1..20
GUARD = 1e-12        # relative error allowed per unit of the bound's terms before an order is recomputed exactly


def self_compose(pld: privacy_loss_distribution.PrivacyLossDistribution, num_times: int,
                 tail_mass_truncation: float = 1e-15) -> privacy_loss_distribution.PrivacyLossDistribution:
    """``pld.self_compose(num_times, tail_mass_truncation)``, the same PLD."""
    remove = pmf_self_compose(pld._pmf_remove, num_times, tail_mass_truncation)
    if pld._symmetric:
        return privacy_loss_distribution.PrivacyLossDistribution(remove)
    add = pmf_self_compose(pld._pmf_add, num_times, tail_mass_truncation)
    return privacy_loss_distribution.PrivacyLossDistribution(remove, add)


def pmf_self_compose(pmf: pld_pmf.PLDPmf, num_times: int, tail_mass_truncation: float) -> pld_pmf.PLDPmf:
    """``DensePLDPmf.self_compose`` (dp-accounting 0.6.0) with the truncation bounds of ``self_convolve_bounds``."""
    probs = pmf._probs if isinstance(pmf, pld_pmf.DensePLDPmf) else None
    if probs is None or num_times <= 0 or (np.asarray(probs) < 0).any():
        return pmf.self_compose(num_times, tail_mass_truncation)
    lower_loss = pmf._lower_loss * num_times
    low, high = self_convolve_bounds(probs, num_times, tail_mass_truncation)
    # common.self_convolve after its bounds, step for step
    output_len = high - low + 1
    fast_len = fft.next_fast_len(max(output_len, len(probs)))
    out = np.roll(np.real(fft.ifft(fft.fft(probs, fast_len) ** num_times)), -low)[:output_len]
    lower_loss += low
    inf_prob = tail_mass_truncation - math.expm1(num_times * math.log1p(-pmf._infinity_mass))
    return pld_pmf.DensePLDPmf(pmf._discretization, lower_loss, np.array(out), inf_prob, pmf._pessimistic_estimate)


def self_convolve_bounds(input_list, num_times: int, tail_mass_truncation: float = 0) -> tuple[int, int]:
    """``common.compute_self_convolve_bounds(input_list, num_times, tail_mass_truncation)`` at its default orders,
    the same two integers."""
    p = np.asarray(input_list, dtype=np.float64)
    L = len(p)
    upper_bound, lower_bound = (L - 1) * num_times, 0
    if tail_mass_truncation == 0:
        return lower_bound, upper_bound
    js = np.concatenate((np.arange(-ORDERS, 0), np.arange(1, ORDERS + 1)))
    orders = js / L                                                         # the library's orders, as it forms them
    mgfs = log_mgfs(p)
    c = math.log(2 / tail_mass_truncation)
    for j, order in zip(js.tolist(), orders):
        log_mgf = mgfs[j]
        bound = (num_times * log_mgf + c) / order
        slack = GUARD * (num_times * (abs(log_mgf) + ORDERS + math.log(L)) + abs(c)) / abs(order)
        if not math.isfinite(bound) or abs(bound - round(bound)) <= slack:
            # the library's expression for this order (its log-sum-exp, its float64 arithmetic)
            bound = (num_times * special.logsumexp(np.arange(L) * order, b=input_list) + c) / order
            if not math.isfinite(bound):
                continue
        if order > 0:
            upper_bound = min(upper_bound, math.ceil(bound))
        else:
            lower_bound = max(lower_bound, math.floor(bound))
    return lower_bound, upper_bound


def log_mgfs(p: np.ndarray) -> dict[int, float]:
    """{j: log sum_i p_i e^{i j / L}} for j = +-1..ORDERS (NaN where the sum is not positive), by powers of e^{+-i/L}."""
    L = len(p)
    out = {}
    for sign in (1, -1):
        base, acc = np.exp(sign * np.arange(L) / L), p.copy()
        for j in range(1, ORDERS + 1):
            acc *= base
            total = float(acc.sum())
            out[sign * j] = math.log(total) if total > 0 else math.nan
    return out
