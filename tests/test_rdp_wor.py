"""verifiers.accountants.rdp_wor against dp-accounting's own computation (the reference): the Renyi DP of a Gaussian
sampled without replacement, bit for bit, at the accountants' orders and at random ones; the forward differences
pass for pass, including the prefix property the sharing rests on; the accountant's epsilon on event trees; the
cache; and planted errors (one difference off by an ulp, the exact range cut short) caught by the pins."""
from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant as lib
from hypothesis import given, settings
from hypothesis import strategies as st

from verifiers.accountants import rdp_wor
from verifiers.accountants.gaussian import RDP_ORDERS

REPLACE_ONE = dp_accounting.NeighboringRelation.REPLACE_ONE
ADD_REMOVE = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE


def _ours(q, sigma, orders):
    rdp_wor._cached.cache_clear()                       # compute, not recall
    return rdp_wor.rdp(q, sigma, orders)


def _cgf(sigma):
    return lambda x: x * 1.0 * (x + 1) / (2.0 * sigma**2)


@pytest.mark.parametrize("q,sigma", [(25 / 2500, 0.6), (0.01, 1.3), (0.1, 4.0), (0.5, 0.9), (0.002, 60.0),
                                     (0.9, 0.3), (1e-5, 1000.0)])
def test_the_curve_at_the_accountants_orders_is_the_librarys_bit_for_bit(q, sigma):
    assert np.array_equal(_ours(q, sigma, RDP_ORDERS), lib._compute_rdp_sample_wor_gaussian(q, sigma, RDP_ORDERS))


_order = st.one_of(st.floats(1.0, 40.0), st.integers(1, 130), st.integers(257, 1200), st.just(math.inf))


@settings(max_examples=120, deadline=None, derandomize=True)
@given(q=st.one_of(st.just(0.0), st.just(1.0), st.floats(1e-6, 0.999)), log_sigma=st.floats(math.log(0.05),
                                                                                         math.log(2000.0)),
       orders=st.lists(_order, min_size=1, max_size=6))
def test_the_curve_is_the_librarys_at_any_orders(q, log_sigma, orders):
    sigma = math.exp(log_sigma)
    with np.errstate(all="ignore"):
        try:
            want = lib._compute_rdp_sample_wor_gaussian(q, sigma, orders)
        except Exception as e:                              # the library's own failure (order 1: 0/0) must be ours
            with pytest.raises(type(e)):
                _ours(q, sigma, orders)
            return
        got = _ours(q, sigma, orders)
    assert np.array_equal(got, want, equal_nan=True)


@pytest.mark.parametrize("orders", [[256.5], [1.5, 256.25, 300.0], [255.9, 256.0], [1.0001, 2.0], [6, 512.75]])
def test_orders_at_the_edges_of_the_exact_range(orders):
    """256 < alpha < 257 interpolates between an exact and a Stirling-form order; 1 < alpha < 2 and alpha = 2."""
    assert np.array_equal(_ours(0.05, 2.0, orders), lib._compute_rdp_sample_wor_gaussian(0.05, 2.0, orders))


@pytest.mark.parametrize("sigma", [0.05, 0.7, 3.0, 50.0, 1000.0])        # 50 and 1000: differences of both signs
def test_forward_differences_are_the_librarys_and_a_prefix_serves_every_smaller_order(sigma):
    with np.errstate(all="ignore"):
        full = rdp_wor.forward_diffs(sigma, 256)
        want, signs = lib._get_forward_diffs(_cgf(sigma), 256)
        assert np.array_equal(full, want)
        for n in (2, 3, 17, 64, 255):
            assert np.array_equal(full[:n + 2], lib._get_forward_diffs(_cgf(sigma), n)[0]), n
    if sigma >= 50:
        assert (~signs).any()                           # the differing-signs branch was taken


def test_the_accountant_gives_the_librarys_epsilon_on_event_trees():
    wor = dp_accounting.SampledWithoutReplacementDpEvent(2500, 25, dp_accounting.GaussianDpEvent(1.1))
    trees = [dp_accounting.SelfComposedDpEvent(wor, 300),
             dp_accounting.ComposedDpEvent([wor, dp_accounting.SelfComposedDpEvent(
                 dp_accounting.SampledWithoutReplacementDpEvent(1000, 50, dp_accounting.ComposedDpEvent(
                     [dp_accounting.GaussianDpEvent(2.0), dp_accounting.GaussianDpEvent(3.0)])), 40),
                 dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(8.0), 7)])]
    for tree in trees:
        ours, theirs = rdp_wor.RdpAccountant(list(RDP_ORDERS), REPLACE_ONE), lib.RdpAccountant(list(RDP_ORDERS),
                                                                                                REPLACE_ONE)
        ours.compose(tree)
        theirs.compose(tree)
        for delta in (1e-5, 1e-8):
            assert ours.get_epsilon_and_optimal_order(delta) == theirs.get_epsilon_and_optimal_order(delta)
    # what the library refuses, ours refuses the same way (sampling without replacement needs replace-one)
    for acc in (rdp_wor.RdpAccountant(list(RDP_ORDERS), ADD_REMOVE), lib.RdpAccountant(list(RDP_ORDERS), ADD_REMOVE)):
        assert not acc.supports(wor)
        with pytest.raises(dp_accounting.UnsupportedEventError):
            acc.compose(wor)


def test_the_cache_hands_out_copies():
    first = rdp_wor.rdp(0.01, 1.3, RDP_ORDERS)
    first[:] = -1.0
    assert np.array_equal(rdp_wor.rdp(0.01, 1.3, RDP_ORDERS),
                          lib._compute_rdp_sample_wor_gaussian(0.01, 1.3, RDP_ORDERS))


def test_a_difference_off_by_one_ulp_is_caught(monkeypatch):
    real = rdp_wor.forward_diffs

    def planted(sigma, n):
        d = real(sigma, n)
        d[3] = np.nextafter(d[3], np.inf)
        return d
    monkeypatch.setattr(rdp_wor, "forward_diffs", planted)
    got, want = _ours(0.1, 4.0, RDP_ORDERS), lib._compute_rdp_sample_wor_gaussian(0.1, 4.0, RDP_ORDERS)
    assert (got != want).sum() >= 10                  # (where the difference is not the one the bound uses, it
                                                      # cannot show: at (0.01, 1.3) none does)


def test_the_exact_range_cut_short_is_caught(monkeypatch):
    monkeypatch.setattr(rdp_wor, "MAX_EXACT", 128)            # orders 192 and 256 would take the Stirling form
    got, want = _ours(0.002, 60.0, RDP_ORDERS), lib._compute_rdp_sample_wor_gaussian(0.002, 60.0, RDP_ORDERS)
    differ = [o for o, a, b in zip(RDP_ORDERS, got, want) if a != b]
    assert differ == [192, 256]
