"""The fused gradient kernels (algorithms/kernels.py): they compute what numpy's loss.batch_grad computes, a trial's
numbers do not depend on which trials share the call, and a changed dphi is never replaced by a kernel."""
from __future__ import annotations

import numpy as np
import pytest

from algorithms import kernels, sampling
from algorithms.data import Records, make_sphere_linear
from algorithms.losses import Logistic, MoreauHinge, Squared
from algorithms.streams import streams_for

T, N, n, d, K = 5, 3, 60, 7, 6
POP = make_sphere_linear(np.random.default_rng(0), d=d, N=N, radius=1.0, label_noise=0.1, w_norm=0.5,
                         heterogeneity=0.5, mu=0.0, diameter=2.0)
LOSSES = [Squared(), Squared(mu=0.3), Logistic(mu=0.1), MoreauHinge(beta_s=2.0)]


def _records(trials, materialise: bool, labels: bool) -> Records:
    r = Records(POP, streams_for(np.random.SeedSequence(3), trials, 0), len(trials), n, materialise=materialise)
    if labels and materialise:
        r.y = np.sign(r.y) + (r.y == 0)
    return r


def _idx(trials) -> np.ndarray:
    full = sampling.k_subsets(np.random.default_rng(2), (T, N), n, K)
    return full[list(trials)]


W = np.random.default_rng(1).standard_normal((T, d))


@pytest.mark.parametrize("loss", LOSSES, ids=lambda L: f"{L.name}-{L.mu}")
def test_kernel_equals_numpy(loss):
    labels = loss.name != "squared"
    r = _records(range(T), True, labels)
    idx = _idx(range(T))
    assert loss.kernel is not None
    np.testing.assert_allclose(r.batch_grad(idx, loss, W), loss.batch_grad(W, *r.take(idx)), rtol=0, atol=1e-14)
    fixed = Records(None, None, T, n, materialise=False, fixed=(r.X[0], r.y[0]))
    np.testing.assert_allclose(fixed.batch_grad(idx, loss, W), loss.batch_grad(W, *fixed.take(idx)), rtol=0,
                               atol=1e-14)


def test_streamed_sphere_kernel_equals_numpy():
    idx = _idx(range(T))
    for loss in (Squared(), Squared(mu=0.2)):
        fused = _records(range(T), False, False).batch_grad(idx, loss, W)
        plain = loss.batch_grad(W, *_records(range(T), False, False).take(idx))
        np.testing.assert_allclose(fused, plain, rtol=0, atol=1e-14)


@pytest.mark.parametrize("materialise", [True, False])
def test_a_trial_gets_the_same_bits_alone_or_in_a_batch(materialise):
    loss = Squared(mu=0.1)
    together = _records(range(T), materialise, False).batch_grad(_idx(range(T)), loss, W)
    for t in (0, 3):
        alone = _records([t], materialise, False).batch_grad(_idx([t]), loss, W[t:t + 1])
        assert np.array_equal(alone[0], together[t])


def test_streamed_records_read_twice_raise():
    r = _records(range(T), False, False)
    idx = _idx(range(T))
    r.batch_grad(idx, Squared(), W)
    with pytest.raises(RuntimeError):
        r.batch_grad(idx, Squared(), W)
    seen = np.zeros((1, 1, 5), dtype=bool)
    assert kernels.mark_read(seen, np.array([[[1, 1]]]))          # a repeat inside one batch
    with pytest.raises(IndexError):
        kernels.mark_read(seen, np.array([[[5]]]))


def test_a_changed_dphi_goes_through_numpy(monkeypatch):
    """A planted fault in dphi (or a subclass's own dphi) must reach the gradient: the kernel steps aside."""
    r = _records(range(T), True, False)
    idx = _idx(range(T))
    clean = r.batch_grad(idx, Squared(), W)
    real = Squared.dphi
    monkeypatch.setattr(Squared, "dphi", lambda self, z, y, xsq: 10 * real(self, z, y, xsq))
    assert Squared().kernel is None and MoreauHinge(beta_s=1.0).kernel is not None
    np.testing.assert_allclose(r.batch_grad(idx, Squared(), W), 10 * clean, rtol=1e-12, atol=1e-14)


def test_nan_propagates():
    r = _records(range(T), True, False)
    w = W.copy()
    w[1, 0] = np.nan
    g = r.batch_grad(_idx(range(T)), Squared(), w)
    assert np.isnan(g[1]).all() and np.isfinite(g[[0, 2, 3, 4]]).all()


@pytest.mark.parametrize("loss", LOSSES, ids=lambda L: f"{L.name}-{L.mu}")
@pytest.mark.parametrize("L", [0.05, 0.5, np.inf])
def test_clipped_record_grads_kernel_equals_numpy(loss, L):
    """The P_VEC algorithms' clipped record gradients (shuffle_sgd.clipped_record_grads, one fused pass) against
    numpy's record_grads then clip_l2, with clipping on most records, some, and none; (T, n, d) and (T, N, K, d)."""
    from algorithms import shuffle_sgd
    from algorithms.shuffle_sgd import clip_l2, clipped_record_grads

    assert shuffle_sgd.kernels is kernels
    calls = []
    real = kernels.clipped_grads
    kernels.clipped_grads = lambda *a: calls.append(1) or real(*a)          # the fused path must be the one tested
    try:
        _compare_clipped(loss, L, clip_l2, clipped_record_grads)
    finally:
        kernels.clipped_grads = real
    assert len(calls) == 2


def _compare_clipped(loss, L, clip_l2, clipped_record_grads):
    rng = np.random.default_rng(4)
    for shape in ((T, 40), (T, N, K)):
        X = rng.standard_normal(shape + (d,))
        X /= np.linalg.norm(X, axis=-1, keepdims=True)
        y = np.where(rng.random(shape) < 0.5, -1.0, 1.0) if loss.name != "squared" else rng.standard_normal(shape)
        got, total = clipped_record_grads(loss, W, X, y, L)
        want = clip_l2(loss.record_grads(W, X, y), L)
        assert got.shape == want.shape and total.shape == (T, d)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(total, want.reshape(T, -1, d).sum(axis=1), rtol=1e-13, atol=1e-14)
        norms = np.linalg.norm(got, axis=-1)
        assert norms.max() <= L * (1 + 1e-12)


def test_a_changed_record_gradient_goes_through_numpy(monkeypatch):
    """A planted fault in record_grads (or dphi) reaches the clipped gradients: the fused kernel steps aside."""
    from algorithms.shuffle_sgd import clipped_record_grads

    X = np.random.default_rng(5).standard_normal((T, 30, d))
    y = np.ones((T, 30))
    clean, clean_sum = clipped_record_grads(Squared(), W, X, y, np.inf)
    real = Squared.record_grads
    monkeypatch.setattr(Squared, "record_grads", lambda self, w, X, y, xsq=None: 3 * real(self, w, X, y, xsq))
    g, total = clipped_record_grads(Squared(), W, X, y, np.inf)
    np.testing.assert_allclose(g, 3 * clean, rtol=1e-12)
    np.testing.assert_allclose(total, 3 * clean_sum, rtol=1e-12)
    monkeypatch.undo()
    monkeypatch.setattr(Squared, "dphi", lambda self, z, y, xsq: 2 * (z - y))
    np.testing.assert_allclose(clipped_record_grads(Squared(), W, X, y, np.inf)[0],
                               2 * (np.einsum("tnd,td->tn", X, W) - y)[..., None] * X, rtol=1e-12)
    monkeypatch.undo()
    from algorithms import shuffle_sgd
    from algorithms.losses import LinearModelLoss

    base = LinearModelLoss.record_grads                                     # a fault patched onto the base class
    monkeypatch.setattr(LinearModelLoss, "record_grads", lambda self, w, X, y, xsq=None: 3 * base(self, w, X, y, xsq))
    np.testing.assert_allclose(clipped_record_grads(Squared(), W, X, y, np.inf)[0], 3 * clean, rtol=1e-12)
    monkeypatch.undo()
    monkeypatch.setattr(shuffle_sgd, "clip_l2", lambda g, L: g)             # a clipping that forgets to clip
    assert np.linalg.norm(clipped_record_grads(Squared(), W, X, y, 0.01)[0], axis=-1).max() > 0.1


def test_a_zero_record_under_the_moreau_hinge_is_numpys_not_an_exception():
    """||x|| = 0 divides by zero in the hinge envelope's derivative: numpy gives inf, clipped to 1; so does the
    kernel (error_model numpy), where numba's default would raise ZeroDivisionError."""
    from algorithms.shuffle_sgd import clip_l2, clipped_record_grads

    X = np.random.default_rng(6).standard_normal((T, 8, d))
    X[:, 3] = 0.0
    y = np.where(np.arange(8) % 2 == 0, 1.0, -1.0)[None, :].repeat(T, axis=0)
    loss = MoreauHinge(mu=0.1, beta_s=2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = clip_l2(loss.record_grads(W, X, y), 1.0)
    got, total = clipped_record_grads(loss, W, X, y, 1.0)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    assert np.isfinite(total).all()


def test_a_zero_record_in_a_batch_under_the_moreau_hinge_is_numpys_not_an_exception():
    """The batch gradient kernel, like the clipped one above: a record x = 0 (a user's own data may hold one) gives
    numpy's answer (its gradient term dphi x is 0), where numba's default error model raised ZeroDivisionError."""
    loss = MoreauHinge(mu=0.1, beta_s=2.0)
    r = _records(range(T), True, True)
    fixed_X = r.X[0].copy()
    fixed_X[:, [0, 5, 11]] = 0.0                      # (N, n, d): records 0, 5 and 11 of every silo
    fixed = Records(None, None, T, n, materialise=False, fixed=(fixed_X, r.y[0]))
    idx = _idx(range(T))
    idx[:, :, 0] = 5                                   # every cell reads a zero record
    with np.errstate(divide="ignore", invalid="ignore"):
        want = loss.batch_grad(W, *fixed.take(idx))
    got = fixed.batch_grad(idx, loss, W)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)


@pytest.mark.parametrize("shape", [(16, 1000, 1), (3, 7, 5), (4, 1000, 20), (64, 1000, 10), (2, 20000, 1),
                                   (3, 333, 37), (2, 1000, 256), (5, 2000, 7), (2, 4097, 2), (0, 4, 3), (2, 0, 3),
                                   (2, 3, 8192), (2, 3, 10000), (5, 1, 20000)])
def test_masked_sq_sum_is_einsums_bit_for_bit(shape):
    """The rounds' released-noise sum (algorithms/rounds.py) as numpy's three-operand einsum sums it, in its
    buffer's chunks (sizes around and above numpy's 8192-element buffer, d from 1 to 20000)."""
    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal(shape) * 0.3
    m = (rng.random(shape[:2]) < 0.7).astype(np.float64)
    want = np.einsum("tnd,tnd,tn->t", a, a, m)
    assert np.array_equal(kernels.masked_sq_sum(a, m), want)
    assert np.array_equal(kernels.masked_sq_sum(a[:, ::-1], m[:, ::-1]),          # a view: made contiguous
                          np.einsum("tnd,tnd,tn->t", a[:, ::-1], a[:, ::-1], m[:, ::-1]))


def test_max_multiplicity_counts_as_unique_does():
    rng = np.random.default_rng(4)
    for shape, high in [((3, 4, 50), 60), ((7, 200), 30), ((1, 5), 1)]:
        idx = rng.integers(0, high, size=shape)
        rows = idx.reshape(-1, shape[-1])
        assert kernels.max_multiplicity(idx) == max(int(np.unique(r, return_counts=True)[1].max()) for r in rows)
    assert kernels.max_multiplicity(np.zeros((2, 3, 0), dtype=np.int64)) == 0
    assert kernels.max_multiplicity(np.arange(10).reshape(2, 5)) == 1
    with pytest.raises(ValueError):
        kernels.max_multiplicity(np.array([[1, -1]]))


@pytest.mark.parametrize("d", [1, 3])
def test_record_norms_and_silo_dots_are_einsums_bit_for_bit(d):
    """The synthetic records' squared norms and <x, w*_i> (algorithms/data.py): at d = 1 computed without einsum,
    with einsum's values to the sign of a zero."""
    from algorithms.data import silo_dots, sq_norms

    rng = np.random.default_rng(d)
    X = rng.standard_normal((3, 4, 50, d))
    X[0, 0, :2] = [0.0], [-0.0]
    w = rng.standard_normal((4, d))
    w[0] = 0.0
    for got, want in [(sq_norms(X), np.einsum("...d,...d->...", X, X)),
                      (silo_dots(X, w), np.einsum("...nmd,nd->...nm", X, w))]:
        assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))


def _logistic_case(seed: int, T: int = 4, n: int = 9, m: int = 3, d: int = 4, C: int = 5):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((T, n, m, d))
    b = n // 2
    idx = np.argsort(rng.random((T, n)), axis=1)[:, :b]
    N = rng.integers(0, b + 1, size=T)
    N[0] = 0                                                                # a trial that takes nobody
    return z, idx, N, rng.standard_normal((T, d, C)) * 2, -rng.random(m)


def test_logistic_steps_is_the_weighted_sum_of_the_taken_users_points():
    """Seed 002's (15) step for C configurations (element_sgd.run_many): sum over the first N[t] users of idx[t]
    and their points of z w_k expit(<z, neg_theta_c>), against the same sum written with scipy and einsum."""
    from scipy.special import expit

    z, idx, N, th, w = _logistic_case(1)
    got = kernels.logistic_steps(z, idx, N, th, w)
    for t in range(z.shape[0]):
        pts = z[t, idx[t, :N[t]]]                                           # (N[t], m, d)
        e = expit(np.einsum("umd,dc->umc", pts, th[t])) * w[None, :, None]
        np.testing.assert_allclose(got[t], np.einsum("umd,umc->dc", pts, e), rtol=1e-13, atol=1e-14)
    assert not got[0].any()


def test_logistic_steps_uses_scipys_expit_bit_for_bit():
    """One point, one coordinate, z = 1, w = 1: each configuration's step is expit(neg_theta) itself, so the
    kernel's 1 / (1 + exp(-x)) must be scipy's expit to the last bit (the numpy path used scipy's)."""
    from scipy.special import expit

    x = np.concatenate([np.random.default_rng(2).standard_normal(4000) * 12, [0.0, -0.0, 40.0, -40.0, 710.0, -750.0]])
    got = kernels.logistic_steps(np.ones((1, 1, 1, 1)), np.zeros((1, 1), dtype=np.int64), np.ones(1, dtype=np.int64),
                                 x.reshape(1, 1, -1), np.ones(1))
    assert np.array_equal(got.reshape(-1), expit(x))


def test_a_configurations_or_trials_steps_do_not_depend_on_what_shares_the_call():
    z, idx, N, th, w = _logistic_case(3, C=7)
    whole = kernels.logistic_steps(z, idx, N, th, w)
    for c in range(th.shape[2]):
        assert np.array_equal(kernels.logistic_steps(z, idx, N, th[:, :, c:c + 1], w)[:, :, 0], whole[:, :, c])
    for t in range(z.shape[0]):
        assert np.array_equal(kernels.logistic_steps(z[t:t + 1], idx[t:t + 1], N[t:t + 1], th[t:t + 1], w)[0],
                              whole[t])
    assert np.array_equal(kernels.logistic_steps(np.asfortranarray(z), idx, N, np.asfortranarray(th), w), whole)


def test_logistic_steps_refuses_what_does_not_fit():
    z, idx, N, th, w = _logistic_case(4)
    for args in [(z, idx, N, th[:, :2], w), (z, idx, N, th, w[:2]), (z, idx, N + 9, th, w), (z, idx + 9, N, th, w),
                 (z, idx, N[:2], th, w), (z[..., :0], idx, N, th[:, :0], w), (z, idx.astype(float), N, th, w),
                 (z, idx, N.astype(float), th, w), (z, idx[:, :, None], N, th, w)]:
        with pytest.raises(ValueError):
            kernels.logistic_steps(*args)


# --- a round's Gaussian releases in one pass (kernels.silo_release, algorithms/rounds.py) --------------------------

@pytest.mark.parametrize("shape", [(4, 1000, 2), (3, 7, 5), (2, 20000, 3), (5, 64, 8), (2, 4097, 2), (1, 3, 8192),
                                   (3, 1, 2), (6, 333, 37)])
def test_silo_release_is_numpys_bit_for_bit(shape):
    """The noise, the masked sum of the messages over the silos and the masked squared noise are numpy's expressions
    to the bit (values over many binades, silos masked out, a trial of -0.0 messages)."""
    rng = np.random.default_rng(sum(shape))
    clean = rng.standard_normal(shape) * np.exp(rng.uniform(-8, 8, shape))
    Z = rng.standard_normal(shape)
    if shape[0] >= 2:
        clean[-1], Z[-1] = -0.0, -0.0                                          # a last trial of -0.0 messages
    mask = rng.random(shape[:2]) < 0.7
    noise, total, sq = kernels.silo_release(clean, Z, 1.3, mask.astype(np.float64))
    want_msg = clean + 1.3 * Z
    bits = lambda a: a.view(np.int64)                                          # noqa: E731
    assert np.array_equal(bits(noise), bits(want_msg - clean))
    assert np.array_equal(bits(sq), bits(np.einsum("tnd,tnd,tn->t", noise, noise, mask.astype(np.float64))))
    assert np.array_equal(bits(total), bits((want_msg * mask[..., None]).sum(axis=1)))
    with pytest.raises(ValueError):
        kernels.silo_release(clean[..., :1], Z[..., :1], 1.3, mask.astype(np.float64))      # d = 1: numpy's


def _silo_run(monkeypatch, fused: bool, d: int, M_range):
    """Ten rounds of rounds.SiloRounds (partial participation when M_range says so) at moving query points."""
    from algorithms import rounds
    from algorithms.losses import Squared as Sq

    pop = make_sphere_linear(np.random.default_rng(4), d=d, N=12, radius=1.0, label_noise=0.1, w_norm=0.5,
                             heterogeneity=0.5, mu=0.0, diameter=2.0)
    rec = Records(pop, streams_for(np.random.SeedSequence(6), range(3), 0), 3, 40, materialise=True)
    rng = streams_for(np.random.SeedSequence(6), range(3), 1)
    calls = []
    with monkeypatch.context() as m:
        if not fused:
            m.setattr(rounds, "_fused", lambda clean, sigma: False)
        real = kernels.silo_release
        m.setattr(kernels, "silo_release", lambda *a: calls.append(1) or real(*a))
        silos = rounds.SiloRounds(rec, Sq(), sigma=0.8, M_range=M_range, rng=rng, grad_F=lambda q: 0.5 * q)
        q, out = np.zeros((3, d)), []
        for _ in range(10):
            g = silos.aggregate(q, lambda: sampling.k_subsets(rng, (3, 12), 40, 5))
            q = q - 0.1 * g
            out.append(g)
    assert len(calls) == (10 if fused and d >= 2 else 0)
    return np.array(out), silos.noise_sq, silos.noise_coords, silos.uses, silos.grad_err


@pytest.mark.parametrize("d", [1, 2, 5])
@pytest.mark.parametrize("M_range", [(12, 12), (3, 9)])
def test_silo_rounds_give_the_same_bits_fused_or_not(monkeypatch, d, M_range):
    from algorithms import rounds

    assert d == 1 or rounds.release_agrees_with_numpy((3, 12, d))               # d = 1: numpy both ways
    for a, b in zip(_silo_run(monkeypatch, True, d, M_range), _silo_run(monkeypatch, False, d, M_range)):
        assert a.dtype == b.dtype and np.array_equal(a.view(np.int64) if a.dtype == np.float64 else a,
                                                     b.view(np.int64) if b.dtype == np.float64 else b)


@pytest.mark.parametrize("fault", ["reversed silo order", "sum from the first silo"])
def test_a_silo_release_in_another_order_fails_the_self_check(monkeypatch, fault):
    """The self-check sees a sum over the silos taken in another order (silos reversed; started from the first
    message instead of +0.0), and the rounds then take numpy's path."""
    from algorithms import rounds

    real = kernels._silo_release

    def planted(clean, Z, sigma, m, chunk):
        noise, total, sq = real(clean, Z, sigma, m, chunk)
        prod = (clean + sigma * Z) * m[..., None]
        order = range(prod.shape[1] - 1, -1, -1) if fault.startswith("reversed") else range(1, prod.shape[1])
        total = np.zeros_like(total) if fault.startswith("reversed") else prod[:, 0].copy()
        for n in order:
            total += prod[:, n]
        return noise, total, sq

    monkeypatch.setattr(kernels, "_silo_release", planted)
    rounds.release_agrees_with_numpy.cache_clear()
    try:
        assert not rounds.release_agrees_with_numpy((3, 500, 3))
        assert not rounds._fused(np.ones((3, 500, 3)), 1.0)
    finally:
        rounds.release_agrees_with_numpy.cache_clear()


def test_a_patched_gaussian_mechanism_is_run_as_written(monkeypatch):
    from algorithms import mechanisms, rounds

    clean = np.ones((2, 3, 4))
    assert rounds._fused(clean, 1.0) and rounds._fused(clean, np.float64(0.5)) and rounds._fused(clean, 2)
    assert not rounds._fused(np.ones((2, 3, 1)), 1.0)                         # d = 1: numpy's pairwise sum
    assert not rounds._fused(clean, np.longdouble(1.0)) and not rounds._fused(clean, np.array([1.0, 2.0]))
    monkeypatch.setattr(mechanisms, "gaussian", lambda clean, sigma, *, rng: clean)
    assert not rounds._fused(clean, 1.0)


def test_silo_release_gives_numpys_nans_and_infinities():
    """inf and NaN messages, masked out or not, and an inf sigma Z: numpy's values, NaN payloads included."""
    rng = np.random.default_rng(5)
    clean, Z = rng.standard_normal((3, 40, 3)), rng.standard_normal((3, 40, 3))
    clean[0, 3, 1], clean[1, 7, 0], clean[2, 9, 2], Z[2, 11, 1] = np.inf, -np.inf, np.nan, np.inf
    mask = np.ones((3, 40), dtype=bool)
    mask[1, 7] = False
    mf = mask.astype(np.float64)
    with np.errstate(all="ignore"):
        noise, total, sq = kernels.silo_release(clean, Z, 0.9, mf)
        msg = clean + 0.9 * Z
        want = (msg - clean, (msg * mask[..., None]).sum(axis=1), kernels.masked_sq_sum(msg - clean, mf))
    for a, b in zip((noise, total, sq), want):
        assert np.array_equal(a.view(np.int64), b.view(np.int64))
    assert np.isnan(total).any() and np.isnan(sq).all()


def test_a_chunk_of_the_squared_sum_a_record_off_is_caught_by_the_pin(monkeypatch):
    """The pin above compares the squared sum with einsum: a kernel chunking it one record off (here by moving the
    buffer size it reads) disagrees at a shape that crosses the boundary."""
    rng = np.random.default_rng(8)
    clean, Z = rng.standard_normal((2, 20000, 3)), rng.standard_normal((2, 20000, 3))
    mf = np.ones((2, 20000))
    noise = (clean + 0.5 * Z) - clean
    want = np.einsum("tnd,tnd,tn->t", noise, noise, mf)
    assert np.array_equal(kernels.silo_release(clean, Z, 0.5, mf)[2], want)
    monkeypatch.setattr(kernels, "EINSUM_BUFFER", kernels.EINSUM_BUFFER + 3)
    assert not np.array_equal(kernels.silo_release(clean, Z, 0.5, mf)[2], want)
