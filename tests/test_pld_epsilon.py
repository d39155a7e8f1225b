"""verifiers.accountants.pld_epsilon against dp-accounting's own get_epsilon_for_delta (the reference): the same
number, bit for bit, on composed Gaussian, Laplace and randomized-response PLDs, asymmetric ones, and the edge
cases (infinite mass above delta, a delta no finite epsilon meets, a PMF too narrow for the target, a sparse PMF)."""
from __future__ import annotations

import math

import numpy as np
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution as pld

from verifiers.accountants.pld_epsilon import dense_epsilon, epsilon_for_delta


def _plds():
    g = pld.from_gaussian_mechanism(1.3, value_discretization_interval=1e-3)
    yield g.self_compose(20)
    yield pld.from_laplace_mechanism(2.0, value_discretization_interval=1e-3).self_compose(10)
    yield pld.from_randomized_response(0.2, 4, value_discretization_interval=1e-3).self_compose(60)
    yield pld.from_gaussian_mechanism(0.8, sampling_prob=0.05, value_discretization_interval=1e-3).self_compose(100)
    yield g.compose(pld.from_laplace_mechanism(0.5, value_discretization_interval=1e-3))
    yield pld.from_gaussian_mechanism(5.0, value_discretization_interval=1e-2)


def test_same_number_as_the_library():
    for p in _plds():
        for delta in (1e-12, 1e-9, 1e-6, 1e-3, 0.1, 0.6):
            assert epsilon_for_delta(p, delta) == p.get_epsilon_for_delta(delta), delta


def test_dense_edges_match_the_library():
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(1, 30))
        probs = rng.dirichlet(np.ones(n)) * (1 - 1e-3)
        probs[rng.random(n) < 0.3] = 0.0
        lower = int(rng.integers(-20, 20))
        disc = float(rng.choice([1e-3, 0.1, 1.0, 40.0, 800.0]))   # 800: exp(-loss) underflows / overflows
        inf_mass = float(rng.choice([0.0, 1e-9, 1e-3, 0.5]))
        delta = float(rng.choice([1e-10, 1e-4, 1e-2, 0.3, 0.99]))
        pmf = pld_pmf.DensePLDPmf(disc, lower, probs, inf_mass, True)
        assert _outcome(dense_epsilon, inf_mass, lower, disc, probs, delta) == _outcome(pmf.get_epsilon_for_delta,
                                                                                         delta)
    assert dense_epsilon(0.5, 0, 1.0, np.array([0.5]), 0.1) == math.inf


def _outcome(fn, *args):
    """The value, or the exception's type (the library's loop overflows math.exp at losses below -709.78)."""
    try:
        return fn(*args)
    except OverflowError as e:
        return type(e)


def test_sparse_pmf_keeps_the_library_loop():
    sparse = pld.from_randomized_response(0.3, 2, value_discretization_interval=1e-3)
    assert isinstance(sparse._pmf_remove, pld_pmf.SparsePLDPmf)
    assert epsilon_for_delta(sparse, 1e-3) == sparse.get_epsilon_for_delta(1e-3)


def test_accumulate_one_pass_equals_the_sort():
    """binomial_privacy.accumulate's one-pass path (monotone keys, either direction) gives the dict np.unique's
    path gives, bit for bit; non-monotone keys take the sort."""
    import numpy as np

    from verifiers.accountants.binomial_privacy import accumulate

    def by_sort(keys, mass):
        uniq, inv = np.unique(keys, return_inverse=True)
        return dict(zip(uniq.tolist(), np.bincount(inv, weights=mass).tolist()))

    rng = np.random.default_rng(5)
    for _ in range(50):
        n = int(rng.integers(1, 400))
        keys = np.cumsum(rng.integers(0, 3, size=n)) - int(rng.integers(0, 50))
        mass = rng.random(n) * 10.0 ** rng.integers(-30, 0, size=n)
        for k in (keys, keys[::-1].copy(), rng.permutation(keys), np.full(n, 7), keys.astype(np.uint64) + 2**63,
                  np.where(np.arange(n) == 0, np.iinfo(np.int64).min, keys)):
            got, want = accumulate(k, mass), by_sort(k, mass)
            assert list(got) == list(want) and all(got[x] == want[x] for x in want)


def test_the_compiled_exp_is_math_exp_bit_for_bit():
    """libm_exp.exp is math.exp value by value (inf where math.exp overflows), on random values of every scale and on
    the self-check's limits; the self-check passes on this machine."""
    from verifiers.accountants import libm_exp

    assert libm_exp.agrees_with_math()
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.uniform(-760, 720, 20_000), rng.normal(size=5000) * 1e-3, libm_exp._self_check_values()])
    for negate in (False, True):
        got = libm_exp.exp(x, negate)
        want = []
        for v in (-x if negate else x).tolist():
            try:
                want.append(math.exp(v))
            except OverflowError:
                want.append(math.inf)
        assert np.array_equal(got.view(np.int64), np.array(want).view(np.int64))       # bit for bit, NaN too
    assert libm_exp.exp(x.reshape(2, -1)).shape == (2, x.size // 2)


def test_a_compiled_exp_that_differs_from_math_exp_is_not_used(monkeypatch):
    """A compiled exp off by one ulp at a single value of the self-check: the self-check fails and the process takes
    math.exp value by value."""
    from verifiers.accountants import libm_exp

    real = libm_exp._exp
    target = 1.0                                                       # one of the self-check's values
    assert (libm_exp._self_check_values() == target).any()

    def off(x, negate):
        out = real(x, negate)
        out[(x == target) if not negate else (x == -target)] *= 1 + 2.0**-52
        return out

    monkeypatch.setattr(libm_exp, "_exp", off)
    libm_exp.agrees_with_math.cache_clear()
    try:
        assert not libm_exp.agrees_with_math()
        x = np.array([target, 0.5])
        assert np.array_equal(libm_exp.exp(x), np.array([math.exp(target), math.exp(0.5)]))
    finally:
        libm_exp.agrees_with_math.cache_clear()
