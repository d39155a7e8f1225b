"""verifiers.accountants.rdp_wor against dp-accounting's own computation (the reference): the Renyi DP of a Gaussian
sampled without replacement, bit for bit (dtype and bytes), at the accountants' orders and at random ones; the
forward differences pass for pass, including the prefix property the sharing rests on; the inputs the fast path
leaves to the library; the accountant's epsilon on event trees; the cache; the self-check; and planted errors (one
difference off by an ulp, the exact range cut short) caught by the pins and by the self-check."""
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


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit for bit: the same dtype and the same bytes (-0.0 is not 0.0; NaNs compare by their bits)."""
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _cgf(sigma):
    return lambda x: x * 1.0 * (x + 1) / (2.0 * sigma**2)


def _library(q, sigma, orders):
    with np.errstate(all="ignore"):
        return lib._compute_rdp_sample_wor_gaussian(q, sigma, orders)


@pytest.mark.parametrize("q,sigma", [(25 / 2500, 0.6), (0.01, 1.3), (0.1, 4.0), (0.5, 0.9), (0.002, 60.0),
                                     (0.9, 0.3), (1e-5, 1000.0)])
def test_the_curve_at_the_accountants_orders_is_the_librarys_bit_for_bit(q, sigma):
    want = _library(q, sigma, RDP_ORDERS)
    assert _same(rdp_wor.fast(q, sigma, RDP_ORDERS), want)
    assert _same(rdp_wor.rdp(q, sigma, RDP_ORDERS), want)
    assert _same(rdp_wor.rdp(q, sigma, np.array(RDP_ORDERS)), want)       # the accountant holds them as an array


_order = st.one_of(st.floats(1.001, 40.0), st.integers(2, 130), st.sampled_from([150, 200.5, 255, 256, 256.5]),
                   st.integers(257, 1200), st.just(math.inf))


@settings(max_examples=100, deadline=None, derandomize=True)
@given(q=st.floats(1e-6, 0.999), log_sigma=st.floats(math.log(0.05), math.log(2000.0)),
       orders=st.lists(_order, min_size=1, max_size=5), as_array=st.booleans())
def test_the_curve_is_the_librarys_at_any_orders(q, log_sigma, orders, as_array):
    sigma = math.exp(log_sigma)
    orders = np.array(orders, dtype=np.float64) if as_array else orders
    try:
        want = _library(q, sigma, orders)
    except Exception as e:                             # the library's own failure must be ours
        with pytest.raises(type(e)), np.errstate(all="ignore"):
            rdp_wor.rdp(q, sigma, orders)
        return
    with np.errstate(all="ignore"):
        assert _same(rdp_wor.fast(q, sigma, tuple(orders)), want)
        assert _same(rdp_wor.rdp(q, sigma, orders), want)


@pytest.mark.parametrize("q", [0.0, 1.0, 0.3])
@pytest.mark.parametrize("orders", [[1.0, 2.0], [1, 2.5], np.array([1.0, 2.0]), [0.5, 2.0], [2.0, math.nan]])
def test_order_one_q_zero_or_one_and_bad_orders_give_the_librarys_result_or_its_exception(q, orders):
    try:
        want = _library(q, 1.3, orders)
    except Exception as e:                             # the library's own exception, whatever it is
        with pytest.raises(type(e)), np.errstate(all="ignore"):
            rdp_wor.rdp(q, 1.3, orders)
        return
    with np.errstate(all="ignore"):
        assert _same(rdp_wor.rdp(q, 1.3, orders), want)


def test_equal_orders_of_other_types_are_not_one_cache_entry():
    """(1.0, 2.0) and np.array([1.0, 2.0]) are equal tuples with equal hashes, but the library divides 0 by order 1
    minus 1 in Python (ZeroDivisionError) for one and in numpy (nan) for the other."""
    with np.errstate(all="ignore"):
        first = rdp_wor.rdp(0.1, 1.0, np.array([1.0, 2.0]))
    assert np.isnan(first[0])
    with pytest.raises(ZeroDivisionError):
        rdp_wor.rdp(0.1, 1.0, [1.0, 2.0])


@pytest.mark.parametrize("q,sigma", [(np.float32(0.1), 1.3), (0.1, np.float32(1.3)), (0.1, np.float64(0.0)),
                                     (0.1, 1e200), (0.1, 1e9)])
def test_inputs_the_fast_path_leaves_to_the_library(q, sigma):
    """float32 (the library computes in float32 then), sigma 0 as numpy's float (inf, not ZeroDivisionError), and
    sigmas whose differences overflow or leave math's domain: the library's result or its exception."""
    orders = [1.5, 2.0, 7.0, 300.0]
    try:
        want = _library(q, sigma, orders)
    except Exception as e:
        with pytest.raises(type(e)), np.errstate(all="ignore"):
            rdp_wor.rdp(q, sigma, orders)
        return
    with np.errstate(all="ignore"):
        assert _same(rdp_wor.rdp(q, sigma, orders), want)


@pytest.mark.parametrize("orders", [[256.5], [1.5, 256.25, 300.0], [255.9, 256.0], [1.0001, 2.0], [6, 512.75]])
def test_orders_at_the_edges_of_the_exact_range(orders):
    """256 < alpha < 257 interpolates between an exact and a Stirling-form order; 1 < alpha < 2 and alpha = 2."""
    assert _same(rdp_wor.fast(0.05, 2.0, tuple(orders)), _library(0.05, 2.0, orders))


@pytest.mark.parametrize("sigma", [0.05, 0.7, 3.0, 50.0, 1000.0])
def test_forward_differences_are_the_librarys_and_a_prefix_serves_every_smaller_order(sigma, monkeypatch):
    adds = []
    real_add = lib._log_add
    monkeypatch.setattr(rdp_wor._lib, "_log_add", lambda x, y: adds.append(1) or real_add(x, y))
    with np.errstate(all="ignore"):
        full = rdp_wor.forward_diffs(sigma, 256)
    monkeypatch.undo()
    with np.errstate(all="ignore"):
        assert _same(full, lib._get_forward_diffs(_cgf(sigma), 256)[0])
        for n in (2, 3, 17, 64, 255):
            assert _same(full[:n + 2], lib._get_forward_diffs(_cgf(sigma), n)[0]), n
    if sigma >= 50:
        assert len(adds) > 1000                        # the differing-signs branch (a log-add) ran, many times


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
        assert _same(ours._rdp, theirs._rdp)
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
    assert _same(rdp_wor.rdp(0.01, 1.3, RDP_ORDERS), _library(0.01, 1.3, RDP_ORDERS))


def test_the_self_check_passes_here_and_its_case_takes_both_branches():
    assert rdp_wor.agrees_with_library()
    q, sigma, orders = rdp_wor.SELF_CHECK
    signs = lib._get_forward_diffs(_cgf(sigma), 40)[1]
    assert (~signs).any() and signs.any() and max(orders) > rdp_wor.MAX_EXACT


def _planted_ulp(monkeypatch):
    real = rdp_wor.forward_diffs

    def planted(sigma, n):
        d = real(sigma, n)
        d[3] = np.nextafter(d[3], np.inf)
        return d
    monkeypatch.setattr(rdp_wor, "forward_diffs", planted)


def test_a_difference_off_by_one_ulp_is_caught_by_the_pin_and_by_the_self_check(monkeypatch):
    _planted_ulp(monkeypatch)
    got, want = rdp_wor.fast(0.1, 4.0, RDP_ORDERS), _library(0.1, 4.0, RDP_ORDERS)
    assert (got != want).sum() >= 10                  # (where the difference is not the one the bound uses, it
    #                                                   cannot show: at (0.01, 1.3) none does)
    rdp_wor.agrees_with_library.cache_clear()
    assert not rdp_wor.agrees_with_library()
    assert _same(rdp_wor.rdp(0.1, 4.0, RDP_ORDERS), want)      # so the process falls back to the library


def test_the_exact_range_cut_short_is_caught_by_the_pin_and_by_the_self_check(monkeypatch):
    monkeypatch.setattr(rdp_wor, "MAX_EXACT", 128)             # orders 192 and 256 would take the Stirling form
    got, want = rdp_wor.fast(0.002, 60.0, RDP_ORDERS), _library(0.002, 60.0, RDP_ORDERS)
    assert [o for o, a, b in zip(RDP_ORDERS, got, want) if a != b] == [192, 256]
    monkeypatch.setattr(rdp_wor, "MAX_EXACT", 32)
    rdp_wor.agrees_with_library.cache_clear()
    assert not rdp_wor.agrees_with_library()
