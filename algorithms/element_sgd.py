"""Element-level private SGD of seed 002 (Asi, Duchi, Javidi, "Element Level Differential Privacy"; Lnnn = line of
../shared/seeds/002_d3919fba655c6f58.txt) on the simulated logistic regression of its section 4.2, and the asymptotic
covariance its Theorem 1 / Proposition 3 predict. Pure numerics: nothing here imports verifiers/, engine/ or catalog/.

Data (§4.2, L385-391). K centres c_1..c_K and theta* are drawn uniformly on S^{d-1} once per *problem* (a problem seed,
fixed across trials and sweep points). A datum is x = C + U with C a centre and U ~ Uni(S^{d-1}), so ||x|| <= 2, and
y in {-1, +1} with p(y | x) = 1 / (1 + exp(-y <x, theta*>)) (L387). Each of n users holds m points in k of the K
clusters. OUR CHOICES where the seed is silent (L391: "users provide data from k = 2, 5, 8 of the K = 10 clusters",
the assignment scheme unstated): each user's k clusters are drawn uniformly without replacement (in random order),
and its m points are split over them as evenly as possible (``split_sizes``: slot j gets m // k + [j < m % k] points,
so every chosen cluster is non-empty). The logistic loss is l(theta; x, y) = log(1 + exp(-y <x, theta>)); it depends
on (x, y) only through z = y x, which is all we store: grad l = -z s(-<z, theta>), s the logistic function.

Element loss (10) (L251; its risk (11), L257, and empirical risk L^n_el, L259-263): l_el(theta; x^(u)) = sum over the clusters present of the mean
loss of the user's points in that cluster. With the split above, every cluster present holds the same number of points
whatever the draw, up to the order of the slots.

Algorithm 1 (L303-315) and the iteration (15) (L319-325). Per user and per element present, theta+ =
proj_Theta(theta0 - alpha * mean grad) and the element's step is clipped to l2 norm rho; the user's contribution is the
sum over its elements; users are subsampled (Bernoulli(q), or q n of them uniformly without replacement; L319); the
curator adds rho sigma N(0, I) and steps theta_{k+1} = theta_k - alpha_k M / (q n). SIGN (the notes' P1): Alg. 1 as
printed returns Delta_k = (theta+ - theta0)/alpha, about -grad, and (15) subtracts alpha_k M: gradient *ascent*. We
implement the reading that makes it a descent method and an instance of (14) (L283, whose g = (theta - proj(theta -
alpha grad))/alpha): Delta_k = (theta0 - theta+)/alpha. Theta (A1/A2 want it compact convex) is the ball of radius
``radius`` around 0 (OUR CHOICE; the default 10 holds theta* (norm 1) deep inside, and with rho >= L0 = 2 no projection
or clipping is then active near theta*, L343). As in (14), the noisy iterate itself is not projected. Steps alpha_i =
alpha0 i^-beta. Output, as Thm 1 (L293): theta_bar = (1/T) sum_{i=1}^T theta_i with theta_1 = theta0 = 0 (OUR CHOICE
of start) and T - 1 updates; also the last iterate theta_T.

Randomness comes only from np.random.Generator objects built from the SeedSequence the caller hands over (one child per
chunk of trials; the chunking is a function of the parameters only, so a seed reproduces a run exactly).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from algorithms import kernels
from algorithms.events import ElementGaussianRelease
from algorithms.result import RunOutput as LearningOutput

L0 = 2.0                       # sup ||grad l|| <= sup ||x|| = ||c + u|| <= 2 (unit centre, unit noise)
CHUNK_BYTES = 64 * 2**20       # memory budget of one chunk of trials' data sets (z: trials x n x m x d float64)


@dataclass(frozen=True)
class Problem:
    """The fixed part of the §4.2 model: centres (K, d), theta* (d,), and the split of a user's m points over the
    slots of its k clusters."""

    centres: np.ndarray
    theta_star: np.ndarray
    sizes: tuple[int, ...]

    @property
    def d(self) -> int:
        return int(self.theta_star.shape[0])

    @property
    def K(self) -> int:
        return int(self.centres.shape[0])

    @property
    def m(self) -> int:
        return int(sum(self.sizes))

    @property
    def k(self) -> int:
        return len(self.sizes)


def sphere(rng: np.random.Generator, shape: tuple[int, ...], d: int) -> np.ndarray:
    """Uniform points on S^{d-1}, shape ``shape + (d,)`` (normalised Gaussians)."""
    g = rng.standard_normal(shape + (d,))
    return g / np.linalg.norm(g, axis=-1, keepdims=True)


def split_sizes(m: int, k: int) -> tuple[int, ...]:
    """A user's m points over its k clusters, as evenly as possible (OUR CHOICE; every cluster non-empty)."""
    if not 1 <= k <= m:
        raise ValueError(f"k = {k} clusters per user needs 1 <= k <= m = {m}")
    return tuple(m // k + (1 if j < m % k else 0) for j in range(k))


def make_problem(d: int, K: int, m: int, k: int, seed: int) -> Problem:
    """Centres and theta* uniform on S^{d-1} (L385), from the problem seed."""
    if k > K:
        raise ValueError(f"k = {k} clusters per user > K = {K} clusters")
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2002]))
    centres = sphere(rng, (K,), d)
    theta = sphere(rng, (), d)
    return Problem(centres, theta, split_sizes(m, k))


def membership(sizes: tuple[int, ...]) -> np.ndarray:
    """W (m, k): W[i, j] = 1 / s_j when point i lies in slot j (points ordered by slot): the element means."""
    m, k = sum(sizes), len(sizes)
    W = np.zeros((m, k))
    start = 0
    for j, s in enumerate(sizes):
        W[start:start + s, j] = 1.0 / s
        start += s
    return W


def logistic(t: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-t), scipy's expit: within about an ulp everywhere. 0.5 (1 + tanh(t / 2)), used before, lost
    relative precision in the small probabilities (an error of about 1e-16 e^|t|: 1.4e-12 at t = -10, all of it below
    t = -37, where it returns 0), and is twice as slow where numpy has no SIMD loop for float64 tanh (14 ns a value
    against 7 on an AVX2 machine): §4.2's runs call it on every sampled point of every configuration and round."""
    return expit(t)


def label_prob(s: np.ndarray) -> np.ndarray:
    """p(y = +1 | x) at s = <x, theta*> (L387); tests replace it to plant a misspecified model."""
    return logistic(s)


def sample_z(problem: Problem, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Users' data as z = y x, shape ``shape + (m, d)``: each user's k clusters uniformly without replacement, its
    points split over them by ``problem.sizes`` (slot by slot), x = c + u, y from the logistic model."""
    K, m = problem.K, problem.m
    order = np.argsort(rng.random(shape + (K,)), axis=-1)[..., :problem.k]          # k distinct clusters per user
    slot = np.repeat(np.arange(problem.k), problem.sizes)                           # (m,) slot of each point
    clusters = order[..., slot]                                                      # shape + (m,)
    x = problem.centres[clusters] + sphere(rng, shape + (m,), problem.d)
    p = label_prob(x @ problem.theta_star)
    y = np.where(rng.random(shape + (m,)) < p, 1.0, -1.0)
    return y[..., None] * x


def element_losses(theta: np.ndarray, z: np.ndarray, W: np.ndarray) -> np.ndarray:
    """l_el(theta; x^(u)) per user (..., n) for z (..., n, m, d) and theta broadcast to (..., d): the sum over the
    user's slots of the slot's mean logistic loss (slots hold distinct, non-empty clusters: the clusters present)."""
    s = np.einsum("...nmd,...d->...nm", z, theta)
    return (np.logaddexp(0.0, -s) @ W).sum(axis=-1)


def element_grads(theta: np.ndarray, zb: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Mean gradient of each element of each user: zb (..., m, d), theta broadcast against (..., d) of the users'
    leading axes; returns (..., k, d)."""
    s = np.matmul(zb, theta[..., :, None])[..., 0]                                 # (..., m)
    g = -logistic(-s)[..., None] * zb                                               # grad l = -z s(-<z, theta>)
    return np.matmul(W.T, g)


def project_ball(v: np.ndarray, radius: float) -> np.ndarray:
    nrm = np.sqrt((v * v).sum(axis=-1, keepdims=True))
    return v * np.minimum(1.0, radius / np.maximum(nrm, 1e-300))


def clip(v: np.ndarray, rho: float) -> np.ndarray:
    """v * min(1, rho / ||v||) along the last axis (a copy-free no-op when nothing exceeds rho)."""
    nrm = np.sqrt((v * v).sum(axis=-1, keepdims=True))
    if float(nrm.max(initial=0.0)) <= rho:
        return v
    return v * np.minimum(1.0, rho / np.maximum(nrm, 1e-300))


def sgd_el(theta0: np.ndarray, zb: np.ndarray, W: np.ndarray, *, alpha: float, rho: float,
           radius: float) -> np.ndarray:
    """Algorithm 1 (L303-315) with the descent reading (P1): per element, theta+ = proj_Theta(theta0 - alpha g_el),
    Delta = (theta0 - theta+)/alpha clipped to rho; returns the per-user sum over elements, shape zb's (..., d).
    theta0 must broadcast against the users' leading axes, e.g. (trials, 1, d) for zb (trials, b, m, d)."""
    return element_steps(theta0, zb, W, alpha=alpha, rho=rho, radius=radius).sum(axis=-2)


def element_steps(theta0: np.ndarray, zb: np.ndarray, W: np.ndarray, *, alpha: float, rho: float,
                  radius: float) -> np.ndarray:
    """The clipped element steps [Delta_k]_rho of Algorithm 1, (..., k, d) (descent reading). When no theta0 can
    leave Theta in one step (||theta0|| + alpha L0 <= radius, ||g_el|| <= L0) the projection is the identity and
    (theta0 - theta+)/alpha is g_el itself, which we then use (exactly, not through the rounding of the difference)."""
    g = element_grads(theta0, zb, W)
    if float(np.sqrt((theta0 * theta0).sum(axis=-1)).max(initial=0.0)) + alpha * L0 <= radius:
        return clip(g, rho)
    t0 = theta0[..., None, :]
    plus = project_ball(t0 - alpha * g, radius)
    return clip((t0 - plus) / alpha, rho)


def batch_sum(theta: np.ndarray, zt: np.ndarray, W: np.ndarray, *, alpha: float, rho: float, radius: float,
              mask: np.ndarray | None = None, zmax: float = np.inf) -> np.ndarray:
    """sum_u B_u sgd-el(theta, x^(u)) over a batch, (trials, d): ``zt`` holds the batch's data coordinate-major,
    (trials, b, d, m) (the run's layout, for speed), ``mask`` (trials, b) the users taken (Bernoulli batches). The
    same numbers as ``sgd_el`` on zt.swapaxes(-1, -2) (tests compare them); falls back to it when the projection
    onto Theta can be active. ``zmax`` >= every ||z|| of the data: an element's mean gradient has norm < zmax
    (||grad l|| = ||z|| s(-<z, theta>) < ||z||), so when rho >= zmax clipping is exactly the identity and is skipped."""
    if float(np.sqrt((theta * theta).sum(axis=-1)).max(initial=0.0)) + alpha * L0 > radius:
        steps = sgd_el(theta[:, None, :], zt.swapaxes(-1, -2), W, alpha=alpha, rho=rho, radius=radius)
    else:
        tc, b, d, m = zt.shape
        s = zt[:, :, 0, :] * theta[:, None, None, 0]
        for j in range(1, d):
            s += zt[:, :, j, :] * theta[:, None, None, j]                           # (tc, b, m) = <z, theta>
        g = zt * (-logistic(-s))[:, :, None, :]                                     # (tc, b, d, m)
        G = (g.reshape(-1, m) @ W).reshape(tc, b, d, -1)                            # element means (tc, b, d, k)
        if rho < zmax:
            nrm = np.sqrt((G * G).sum(axis=2, keepdims=True))
            G = G * np.minimum(1.0, rho / np.maximum(nrm, 1e-300))
        if mask is None:
            return G.sum(axis=(1, 3))
        steps = G.sum(axis=3)                                                        # (tc, b, d)
    if mask is not None:
        steps = steps * mask[..., None]
    return steps.sum(axis=1)


def noise_scale(rho: float, sigma: float) -> float:
    """The standard deviation of the curator's noise N(0, rho^2 sigma^2 I) (L321); tests plant faults here."""
    return rho * sigma


def distinct_batches(rng: np.random.Generator, trials: int, n: int, b: int) -> np.ndarray:
    """A uniform b-subset of {0..n-1} per trial, (trials, b): i.i.d. uniform draws, rows with a repeat redrawn until
    none has one (an i.i.d. tuple conditioned on distinct entries is a uniform ordered sample without replacement).
    Large b / n goes through a random permutation instead."""
    if b * b > n:
        return np.argsort(rng.random((trials, n)), axis=1)[:, :b]
    idx = rng.integers(0, n, size=(trials, b))
    if b == 1:
        return idx
    while True:
        srt = np.sort(idx, axis=1)
        bad = np.flatnonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))
        if bad.size == 0:
            return idx
        idx[bad] = rng.integers(0, n, size=(bad.size, b))


@dataclass(frozen=True)
class RunOutput:
    theta_bar: np.ndarray       # (trials, d): (1/T) sum_{i=1}^T theta_i
    theta_last: np.ndarray      # (trials, d): theta_T
    updates: int                # T - 1
    max_batch: int              # largest number of users of one step


def chunk_size(n: int, m: int, d: int, trials: int) -> int:
    return int(max(1, min(trials, CHUNK_BYTES // max(1, n * m * d * 8))))


def run(problem: Problem, *, n: int, T: int, batch: int, alpha0: float, beta: float, rho: float, sigma: float,
        radius: float, poisson: bool, trials: int, seq: np.random.SeedSequence) -> RunOutput:
    """``trials`` independent runs of (15): each draws its own data set of n users (a fresh sample from P, as Thm 1's
    triangular array, L281) and runs T - 1 updates from theta_1 = 0 with q = batch / n (fixed-size batches of
    ``batch`` users, or Bernoulli(q) when ``poisson``), dividing by q n = batch as (15) does."""
    if not 1 <= batch <= n:
        raise ValueError(f"batch = {batch} users per step needs 1 <= batch <= n = {n}")
    W = membership(problem.sizes)
    d, m, q = problem.d, problem.m, batch / n
    c = chunk_size(n, m, d, trials)
    starts = list(range(0, trials, c))
    children = seq.spawn(len(starts))
    bars, lasts = [], []
    max_batch = 0
    for s0, child in zip(starts, children):
        tc = min(c, trials - s0)
        rng = np.random.default_rng(child)
        z = np.ascontiguousarray(sample_z(problem, rng, (tc, n)).swapaxes(-1, -2))     # (tc, n, d, m)
        theta = np.zeros((tc, d))
        total = theta.copy()                                                         # theta_1 = 0
        rows = np.arange(tc)[:, None]
        zmax = float(np.sqrt((z * z).sum(axis=2)).max())
        scale = noise_scale(rho, sigma)
        for i in range(1, T):
            alpha = alpha0 * i ** -beta
            if poisson:
                N = rng.binomial(n, q, size=tc)
                bmax = int(N.max())
                if bmax == 0:
                    contrib = np.zeros((tc, d))
                else:
                    idx = distinct_batches(rng, tc, n, bmax)
                    rank = np.argsort(np.argsort(rng.random((tc, bmax)), axis=1), axis=1)
                    contrib = batch_sum(theta, z[rows, idx], W, alpha=alpha, rho=rho, radius=radius,
                                        mask=rank < N[:, None], zmax=zmax)
                    max_batch = max(max_batch, bmax)
            else:
                idx = distinct_batches(rng, tc, n, batch)
                contrib = batch_sum(theta, z[rows, idx], W, alpha=alpha, rho=rho, radius=radius, zmax=zmax)
                max_batch = batch
            if scale > 0:
                contrib = contrib + scale * rng.standard_normal((tc, d))
            theta = theta - alpha * contrib / (q * n)
            total += theta
        bars.append((total) / T)
        lasts.append(theta)
    return RunOutput(np.concatenate(bars), np.concatenate(lasts), T - 1, max_batch)


# ------------------------------------------------------------------------------------------------------------------
# the prediction of Theorem 1 / Proposition 3

@dataclass(frozen=True)
class Prediction:
    """The asymptotic covariances of sqrt(n)(theta_bar - theta*) and their ingredients (d x d arrays)."""

    J: np.ndarray               # Fisher information E[s'(<x, theta*>) x x^T] of one datum (Monte Carlo)
    H_el: np.ndarray            # k J
    Sigma_el: np.ndarray        # (sum_j 1/s_j) J
    paper: np.ndarray           # H^-1 (Sigma + (1/gamma)(Sigma/m_b + rho^2 sigma^2 I/m_b^2)) H^-1
    literal: np.ndarray         # H^-1 Sigma + (1/gamma) H^-1 (Sigma/m_b + rho^2 sigma^2 I/m_b^2) H^-1 (L349 as printed)
    finite_q: np.ndarray        # ``paper`` with the sampling term's finite-population factor (1 - q)
    efficient: np.ndarray       # H^-1 Sigma H^-1 (the local minimax optimum, L297)
    rel_se: dict[str, float]    # Monte Carlo relative standard errors of tr and lambda_max of ``paper``
    mc_points: int


def fisher(problem: Problem, rng: np.random.Generator, points: int, batches: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """J = E[s(<x,theta*>) s(-<x,theta*>) x x^T] over the pooled data law (cluster uniform over the K centres: a
    user's clusters are uniform, so every datum's cluster is), by Monte Carlo with ``points`` data; returns J and
    the J of ``batches`` equal sub-samples (for the Monte Carlo error of anything computed from J)."""
    per = points // batches
    Js = []
    for _ in range(batches):
        x = problem.centres[rng.integers(0, problem.K, per)] + sphere(rng, (per,), problem.d)
        s = x @ problem.theta_star
        w = logistic(s) * logistic(-s)
        Js.append(np.einsum("i,id,ie->de", w, x, x) / per)
    Jb = np.array(Js)
    return Jb.mean(axis=0), Jb


def covariances(J: np.ndarray, sizes: tuple[int, ...], *, gamma: float, batch: int, rho: float, sigma: float,
                q: float) -> dict[str, np.ndarray]:
    """The predicted covariances from J. Why H_el = k J and Sigma_el = (sum_j 1/s_j) J (exact for the well-specified
    logistic model and our split): E[grad l(theta*; x, y) | x] = 0 and E[grad l grad l^T | x] = s'(<x,theta*>) x x^T,
    so distinct points' gradients are uncorrelated; a cluster is present with probability k/K and then sits in a
    uniform slot, so E l_el = k L and Cov grad l_el(theta*) = sum_k (k/K) (1/k) (sum_j 1/s_j) J_k = (sum_j 1/s_j) J.

    Grouping (L349): the printed Prop 3 closes its bracket after the second H^-1, which puts H^-1 inside the 1/gamma
    term and leaves Sigma_el multiplied by H^-1 once only. ``paper`` is the notes' reading, the one Thm 1 (L295)
    gives when its per-step noise covariance Sigma_l + sigma^2 Sigma_z is that of (15)'s step, a mean of m_b = q n
    users' element gradients plus rho sigma N(0, I)/(q n): Sigma_el/m_b + rho^2 sigma^2 I/m_b^2 (so the seed's m of
    §3.3 is the batch size q n, L333). ``literal`` is the printed bracket read as H^-1 Sigma + (1/gamma) H^-1 V H^-1;
    here H^-1 Sigma_el = (sum_j 1/s_j)/k I is symmetric, so it is a covariance too, and the runs can tell the two
    apart. ``finite_q`` keeps the (1 - q) of sampling users without replacement from a finite sample (q -> 0 in Prop
    3, m fixed, L345)."""
    d = J.shape[0]
    k, h = len(sizes), float(sum(1.0 / s for s in sizes))
    H, S = k * J, h * J
    Hi = np.linalg.inv(H)
    noise = rho**2 * sigma**2 * np.eye(d) / batch**2
    V = S / batch + noise
    Vq = (1 - q) * S / batch + noise
    paper = Hi @ (S + V / gamma) @ Hi
    return {"H_el": H, "Sigma_el": S, "paper": paper, "literal": Hi @ S + Hi @ V @ Hi / gamma,
            "finite_q": Hi @ (S + Vq / gamma) @ Hi, "efficient": Hi @ S @ Hi}


def predict(problem: Problem, *, gamma: float, batch: int, rho: float, sigma: float, q: float, points: int,
            rng: np.random.Generator) -> Prediction:
    J, Jb = fisher(problem, rng, points)
    c = covariances(J, problem.sizes, gamma=gamma, batch=batch, rho=rho, sigma=sigma, q=q)
    subs = [covariances(Jj, problem.sizes, gamma=gamma, batch=batch, rho=rho, sigma=sigma, q=q)["paper"] for Jj in Jb]
    tr = np.array([np.trace(P) for P in subs])
    top = np.array([np.linalg.eigvalsh(P)[-1] for P in subs])
    nb = len(subs)
    rel = {"trace": float(tr.std(ddof=1) / np.sqrt(nb) / np.trace(c["paper"])),
           "top": float(top.std(ddof=1) / np.sqrt(nb) / np.linalg.eigvalsh(c["paper"])[-1])}
    return Prediction(J=J, H_el=c["H_el"], Sigma_el=c["Sigma_el"], paper=c["paper"], literal=c["literal"],
                      finite_q=c["finite_q"], efficient=c["efficient"], rel_se=rel, mc_points=(points // 20) * 20)


def user_gradients(problem: Problem, theta: np.ndarray, rng: np.random.Generator, users: int) -> np.ndarray:
    """grad l_el(theta; X^(u)) of ``users`` fresh users, (users, d): the direct Monte Carlo of Sigma_el and of
    grad L_el (an independent route to the J-based formulas of ``covariances``)."""
    W = membership(problem.sizes)
    z = sample_z(problem, rng, (users,))
    return element_grads(theta, z, W).sum(axis=-2)


def el_minimiser(problem: Problem, rng: np.random.Generator, users: int, iters: int = 30) -> dict[str, np.ndarray]:
    """Newton's method on the empirical element risk L^n_el of ``users`` fresh users (Example 3, L360-364: for the
    well-specified logistic model the minimiser of L_el is theta* whatever the partition). Returns the minimiser, the
    empirical Hessian and gradient covariance at it (for its sandwich covariance / users). A point of slot j enters
    l_el with weight 1/s_j."""
    c = membership(problem.sizes).sum(axis=1)                                        # (m,) weight of each point
    z = sample_z(problem, rng, (users,))                                             # (users, m, d)
    Z = z.reshape(-1, problem.d)
    cw = np.tile(c, users)

    def grad_hess(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        s = Z @ theta
        g_user = (-(logistic(-s) * cw)[:, None] * Z).reshape(users, problem.m, problem.d).sum(axis=1)
        w = logistic(s) * logistic(-s) * cw
        return g_user, (Z * w[:, None]).T @ Z / users

    theta = np.zeros(problem.d)
    for _ in range(iters):
        g_user, H = grad_hess(theta)
        step = np.linalg.solve(H, g_user.mean(axis=0))
        theta = theta - step
        if np.linalg.norm(step) < 1e-13:
            break
    g_user, H = grad_hess(theta)
    return {"theta": theta, "H": H, "Sigma": np.atleast_2d(np.cov(g_user.T, ddof=1))}


# ------------------------------------------------------------------------------------------------------------------
# §4.2 / Fig. 3: many configurations of (15) on the same data sets and the same user sampling, and an audit of (15)


def point_weights(sizes: tuple[int, ...]) -> np.ndarray:
    """(m,) the weight 1/s_j of each point in a user's element sum (point i in slot j): sum_j mean-gradient of slot j
    = sum_i w_i grad l(z_i)."""
    return membership(sizes).sum(axis=1)


def step_sizes(alpha0: np.ndarray, updates: int, beta: float = 0.5) -> np.ndarray:
    """alpha_i = alpha0 i^-beta for i = 1..updates, (updates, C) (§4.2: beta = 1/2, L393)."""
    return np.asarray(alpha0, float)[None, :] * np.arange(1, updates + 1, dtype=float)[:, None] ** -beta


@dataclass(frozen=True)
class ManyOutput:
    last: np.ndarray            # (C, trials, d): theta after the last update (Fig. 3's "final estimated theta")
    average: np.ndarray         # (C, trials, d): the mean of theta_1 .. theta_{updates+1} (theta_1 = 0)
    max_batch: int              # largest number of users of one step


def run_many(z: np.ndarray, sizes: tuple[int, ...], *, updates: int, q: float, alpha0: np.ndarray,
             sigma: np.ndarray, rho: float, rng: np.random.Generator, beta: float = 0.5) -> ManyOutput:
    """(15) for C configurations (alpha0[c], sigma[c]) at once on the same trials' data sets ``z`` (trials, n, m, d)
    and the same Poisson user sampling (B_u ~ Bernoulli(q) each round, shared by the configurations: common random
    numbers), each with its own noise rho sigma[c] N(0, I); ``updates`` steps theta <- theta - alpha_i (sum_u B_u
    sgd-el(theta, x^(u)) + noise) / (q n) from theta = 0. Theta = R^d (OUR CHOICE for §4.2, whose Theta the seed does
    not state): Alg. 1's projection is the identity and its step is the element's mean gradient. Needs rho >= every
    ||z|| (then ||mean gradient|| < rho and clipping is the identity, so the step is a weighted sum of per-point
    gradients, computed in one pass over the sampled points by kernels.logistic_steps); raises ValueError otherwise.
    sigma = 0 is the non-private run. A configuration's numbers do not depend on which others run beside it."""
    tc, n, m, d = z.shape
    if len(sizes) and sum(sizes) != m:
        raise ValueError(f"sizes {sizes} do not split the m = {m} points of a user")
    zmax = float(np.sqrt((z * z).sum(axis=-1)).max(initial=0.0))
    if rho < zmax:
        raise ValueError(f"rho = {rho:g} < max ||z|| = {zmax:.4g}: clipping could be active; run_many implements the "
                         f"unclipped case only")
    if not 0.0 < q <= 1.0:
        raise ValueError(f"q = {q}: the sampling rate must be in (0, 1]")
    alpha = step_sizes(alpha0, updates, beta)                                        # (updates, C)
    scale = np.array([noise_scale(rho, float(s)) for s in np.atleast_1d(sigma)])     # (C,)
    C = alpha.shape[1]
    if scale.shape != (C,):
        raise ValueError(f"{C} step sizes but {scale.size} noise multipliers")
    w = -point_weights(sizes)                                                        # minus: grad l = -z s(-<z,theta>)
    z = np.ascontiguousarray(z, dtype=np.float64)                                    # once, not per round
    theta = np.zeros((tc, d, C))
    total = theta.copy()
    max_batch = 0
    for i in range(updates):
        N = np.asarray(rng.binomial(n, q, size=tc))
        bmax = int(N.max())
        if bmax > 0:
            idx = distinct_batches(rng, tc, n, bmax)                                 # a uniform ordered sample
            step = kernels.logistic_steps(z, idx, N, -theta, w)                      # the first N[t] users' steps
            max_batch = max(max_batch, bmax)
        else:
            step = np.zeros((tc, d, C))
        if np.any(scale > 0):
            step = step + scale * rng.standard_normal((tc, d, C))
        theta = theta - alpha[i] * step / (q * n)
        total += theta
    return ManyOutput(theta.transpose(2, 0, 1).copy(), (total / (updates + 1)).transpose(2, 0, 1), max_batch)


@dataclass(frozen=True)
class AuditRun:
    thetas: np.ndarray          # (trials, updates + 1, d): theta_1 = 0 .. theta_{updates+1}, the released iterates
    others: np.ndarray          # (trials, updates, n - 1): the other users' B_u (revealed to the auditor)
    canary: np.ndarray          # (trials, updates): the canary's B_u (not revealed; for diagnostics)


def audit_run(z_others: np.ndarray, sizes: tuple[int, ...], *, canary_step: np.ndarray, canary_elements: int,
              updates: int, q: float, alpha0: float, sigma: float, rho: float, trials: int, rng: np.random.Generator,
              beta: float = 0.5) -> AuditRun:
    """``trials`` runs of (15) on one fixed data set: the users of ``z_others`` (n - 1, m, d), whose steps are Alg. 1's
    (unclipped, rho >= every ||z||), and a canary user whose per-user output sum_k [Delta_k]_rho is ``canary_step``
    (d,) in every round (injected: e.g. its ``canary_elements`` element steps each at norm rho along e_1, the extreme
    Alg. 1's clipping allows; the logistic data of §4.2 never reach it at rho = L0). Poisson sampling of all n users,
    noise rho sigma N(0, I), steps alpha0 i^-beta, theta_1 = 0."""
    no, m, d = z_others.shape
    n = no + 1
    if rho < float(np.sqrt((z_others * z_others).sum(axis=-1)).max(initial=0.0)):
        raise ValueError("rho below max ||z||: audit_run implements the unclipped case only")
    if float(np.linalg.norm(canary_step)) > canary_elements * rho * (1 + 1e-12):
        raise ValueError(f"the canary's step exceeds {canary_elements} rho, more than its {canary_elements} clipped "
                         f"element steps can sum to")
    w = -point_weights(sizes)
    alpha = step_sizes(np.array([alpha0]), updates, beta)[:, 0]
    flat = z_others.reshape(no * m, d)
    theta = np.zeros((trials, d))
    thetas = np.zeros((trials, updates + 1, d))
    others = np.zeros((trials, updates, no), dtype=bool)
    canary = np.zeros((trials, updates), dtype=bool)
    for i in range(updates):
        B = rng.random((trials, no)) < q
        Bc = rng.random(trials) < q
        s = theta @ flat.T                                                           # (trials, no m)
        coef = (logistic(-s) * np.tile(w, no)).reshape(trials, no, m) * B[:, :, None]
        step = coef.reshape(trials, no * m) @ flat + Bc[:, None] * canary_step
        step = step + noise_scale(rho, sigma) * rng.standard_normal((trials, d))
        theta = theta - alpha[i] * step / (q * n)
        thetas[:, i + 1] = theta
        others[:, i] = B
        canary[:, i] = Bc
    return AuditRun(thetas, others, canary)


def audit_scores(run: AuditRun, z_others: np.ndarray, sizes: tuple[int, ...], *, q: float, alpha0: float, rho: float,
                 sigma: float, a: float, b: float, beta: float = 0.5) -> np.ndarray:
    """The auditor's score per trial (larger says the canary's step is a rho e_1 rather than b rho e_1): it knows every
    user's data, the steps and the other users' sampling, not the canary's B_u or the noise. Each round's release is
    reconstructed from consecutive iterates, M_i = (theta_i - theta_{i+1}) q n / alpha_i; the other users' sampled
    steps are recomputed at theta_i through Alg. 1's own code (``sgd_el``, an implementation independent of the
    runs') and subtracted; y_i = <residual, e_1> / rho ~ B_c c + sigma N(0, 1) with c = a or b. The score is the
    log-likelihood ratio sum_i log[(q phi(y_i - a) + (1-q) phi(y_i)) / (q phi(y_i - b) + (1-q) phi(y_i))], the
    Neyman-Pearson statistic of the pair given what the auditor sees."""
    trials, _, d = run.thetas.shape
    no = z_others.shape[0]
    n = no + 1
    W = membership(sizes)
    alpha = step_sizes(np.array([alpha0]), run.others.shape[1], beta)[:, 0]
    score = np.zeros(trials)
    lq, l1q = np.log(q), (np.log1p(-q) if q < 1 else -np.inf)
    for i, al in enumerate(alpha):
        th = run.thetas[:, i]
        M = (th - run.thetas[:, i + 1]) * (q * n) / al
        steps = sgd_el(th[:, None, :], z_others[None], W, alpha=float(al), rho=rho, radius=np.inf)   # (trials, no, d)
        resid = M - (steps * run.others[:, i, :, None]).sum(axis=1)
        y = resid[:, 0] / rho
        base = l1q - 0.5 * (y / sigma) ** 2
        score += (np.logaddexp(lq - 0.5 * ((y - a) / sigma) ** 2, base)
                  - np.logaddexp(lq - 0.5 * ((y - b) / sigma) ** 2, base))
    return score


def sample_users(problem: Problem, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """The law of ``sample_z`` (users' z = y x, shape ``shape + (m, d)``: k clusters uniformly without replacement,
    points split by ``problem.sizes``, x = c + Uni(S^{d-1}), logistic labels) with fewer temporaries: the same draws
    in the same order, so the same numbers up to rounding (tests compare them)."""
    K, m, d = problem.K, problem.m, problem.d
    order = np.argsort(rng.random(shape + (K,)), axis=-1)[..., :problem.k]
    slot = np.repeat(np.arange(problem.k), problem.sizes)
    x = rng.standard_normal(shape + (m, d))
    x /= np.sqrt(np.einsum("...i,...i->...", x, x))[..., None]
    x += problem.centres[order[..., slot]]
    p = label_prob(x @ problem.theta_star)
    x *= np.where(rng.random(shape + (m,)) < p, 1.0, -1.0)[..., None]
    return x


# ------------------------------------------------------------------------------------------------------------------
# The learning kind's element-level private SGD (engine/kinds/learning): the §4.2 users as a population of records
# (a "record" is one user holding m points), (15) vectorised over trials on the engine's per-trial streams, and the
# privacy event of what ran


@dataclass(frozen=True)
class Users:
    """§4.2's users as the learning kind's population: one pool (N = 1) of users, each a record of m points z = y x
    in k of the K clusters (``sample_users``). The labels are folded into z (the logistic loss depends on (x, y)
    only through y x), so the label array ``sample`` returns is all ones: the label of z."""

    problem: Problem
    N: int = 1

    @property
    def d(self) -> int:
        return self.problem.d

    def sample(self, rng, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """(z, ones) with z of shape ``shape + (m, d)``; ``rng`` may be the engine's per-trial streams."""
        return sample_users(self.problem, rng, tuple(shape)), np.ones(tuple(shape))


def element_risk(problem: Problem, z_eval: np.ndarray, w: np.ndarray, block: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """(L_el(w) - L_el(theta*), its Monte Carlo standard error) per trial, on the evaluation users ``z_eval``
    (users, m, d): the element risk (11) (L257) estimated by the users' mean, paired with theta* on the same users
    (Example 3, L360-364: for the well-specified logistic model theta* minimises L_el whatever the partition)."""
    W = membership(problem.sizes)
    users = z_eval.shape[0]
    at_star = element_losses(problem.theta_star, z_eval, W)                         # (users,)
    excess, se = np.empty(w.shape[0]), np.empty(w.shape[0])
    for lo in range(0, w.shape[0], block):
        wb = w[lo:lo + block]
        s = np.einsum("umd,td->tum", z_eval, wb)
        diff = (np.logaddexp(0.0, -s) @ W).sum(axis=-1) - at_star                   # (block, users)
        excess[lo:lo + block] = diff.mean(axis=1)
        se[lo:lo + block] = diff.std(axis=1, ddof=1) / np.sqrt(users)
    return excess, se


SAMPLINGS = ("poisson", "fixed_size")


def run_learning(records, loss, *, T: int, q: float, sampling: str, alpha0: float, beta: float, rho: float,
                 sigma: float, radius: float, rng, M_range=None, grad_F=None):
    """(15) for the learning kind: T updates theta <- theta - alpha_i (sum_u B_u sgd-el(theta, x^(u)) + rho sigma
    N(0, I)) / (q n) from theta_1 = 0 (alpha_i = alpha0 i^-beta), on each trial's own n users (``records``: the
    ``Users`` population, materialised), vectorised over the trials; ``rng``: the engine's per-trial streams.
    Sampling (L319): 'poisson', B_u i.i.d. Bernoulli(q) (one uniform per user and round); 'fixed_size', round(q n)
    users uniformly without replacement (a random permutation's head). Alg. 1 per user as ``batch_sum`` (the descent
    reading, per-element clipping at rho, projection onto the ball of radius ``radius``). The released model is the
    average of theta_1 .. theta_{T+1} (Thm 1's theta_bar, L293). Reports the ElementGaussianRelease that ran: the
    noise multiplier actually applied, the sampling and its rate, the most elements a user held, the most rounds a
    user was sampled in. ``loss`` must be the logistic loss (the only one §4.2 runs; it is computed from z here)."""
    if getattr(loss, "name", "logistic") != "logistic":
        raise ValueError(f"element-level SGD runs §4.2's logistic loss, not {loss.name}")
    if sampling not in SAMPLINGS:
        raise ValueError(f"sampling {sampling!r}: one of {', '.join(SAMPLINGS)}")
    prob: Problem = records.population.problem
    z = records.X[:, 0]                                                              # (trials, n, m, d)
    tc, n = z.shape[0], z.shape[1]
    d = prob.d
    batch = max(1, int(round(q * n)))
    if not 0.0 < q <= 1.0 or (sampling == "fixed_size" and batch > n):
        raise ValueError(f"q = {q}: the sampling rate must be in (0, 1] with q n <= n")
    W = membership(prob.sizes)
    zmax = float(np.sqrt((z * z).sum(axis=-1)).max(initial=0.0))
    scale = noise_scale(rho, sigma)
    theta = np.zeros((tc, d))
    total = theta.copy()
    rows = np.arange(tc)[:, None]
    uses = np.zeros((tc, n), dtype=np.int64)
    noise_sq = np.zeros(tc)
    for i in range(1, T + 1):
        alpha = alpha0 * i ** -beta
        if sampling == "poisson":
            B = rng.random((tc, n)) < q
            N = B.sum(axis=1)
            bmax = int(N.max())
            idx = np.argsort(~B, axis=1, kind="stable")[:, :bmax]                   # the sampled users first
            mask = np.arange(bmax)[None, :] < N[:, None]
            uses += B
        else:
            bmax = batch
            idx = np.argsort(rng.random((tc, n)), axis=1)[:, :batch]
            mask = None
            np.add.at(uses, (rows, idx), 1)
        if bmax > 0:
            zt = np.ascontiguousarray(z[rows, idx].swapaxes(-1, -2))                # (tc, bmax, d, m)
            contrib = batch_sum(theta, zt, W, alpha=alpha, rho=rho, radius=radius, mask=mask, zmax=zmax)
        else:
            contrib = np.zeros((tc, d))
        noise = scale * rng.standard_normal((tc, d))
        noise_sq += (noise * noise).sum(axis=1)
        theta = theta - alpha * (contrib + noise) / (q * n)
        total += theta
    event = ElementGaussianRelease(sigma=scale / rho, rho=rho, q=q, sampling=sampling, batch_size=batch,
                                   pool_size=n, elements=prob.k, rounds=T, max_record_uses=int(uses.max()))
    return LearningOutput(w=total / (T + 1), events=(event,), noise_sq=noise_sq / rho**2,
                          noise_coords=np.full(tc, T * d), grad_err=None, rounds=T, silo_rounds=np.full(tc, T),
                          record_uses=uses.max(axis=1))
