"""Algorithm 5 of seed 000 (Cheu, Joseph, Mao & Peng): P_GD, fully interactive shuffle-private gradient descent
(L256-273; Lemma B.6, L724-740; Thm 4.9, L275-283, L744-748). Lnnn = line of ../shared/seeds/000_2468e2e5d70af056.txt.

n users with one record each; every one of the T rounds queries ALL n users: their gradients at theta_t, clipped to
l_2 norm L (algorithms/shuffle_sgd.clip_l2: the paper assumes L-Lipschitz losses; the clip makes P_VEC's input
condition hold on any data and is a no-op when the loss's constant is right), are summed by P_VEC
(algorithms/shuffle_sum.py) at the per-round (eps/(2 sqrt(2 T ln(1/delta))), delta/(T+1)) with Delta_2 = L
(L267), gbar_t = P_VEC(...)/n, theta_{t+1} = Proj(theta_t - eta gbar_t). Schedule (Lemma B.6's proof, L740):
T = min{n, eps^2 n^2/(d log^2(nd/delta))}, eta = D/(L sqrt T).

Corrections of the printed algorithm (both recorded in the resolved provenance, so the report shows them):
- CORRECTION (sign): line 4 prints "theta_{t+1} <- Pi(theta_t + eta gbar_t)", an ascent step. Lemma B.4 (Bubeck's
  projected gradient descent) needs "- eta gbar_t", which we use (note 000, sections 2.7 and 6.3).
- CORRECTION (indices): the loop runs t = 1..T from an initialised theta_0 and would query theta_1 first, which
  is never set, while the output averages theta_0..theta_{T-1}. We run t = 0..T-1 (gradient at theta_t, then
  theta_{t+1}) and output (1/T) sum_{t=0}^{T-1} theta_t: the average of the T points whose gradients were
  queried, which is what Lemma B.4's bound is about.

Variant ``fkt`` (Thm 4.9's strongly convex part, Lemma B.7, L752-760): the users are split into k disjoint groups and
P_GD runs on each group in turn, each group's run starting at the previous group's output; the output is the last
group's. The seed says only "the same set of groups as (Feldman et al., 2020)": OUR CHOICE is k = ceil(log2 log2 n)
groups of floor(n/k) users (the log log n groups its text names; equal sizes, as for Thm 4.8's phases) and the whole
domain in every group. A user joins the T calls of its own group only (parallel composition over groups). Variants
``fkt_shrinking`` / ``fkt_accountant_shrinking`` pass ``group_radius`` / ``group_eta``: the proof's shrinking domains
(catalog/shuffle_000_gd._shrinking_groups sets D_i from the recursion with constants 1), group k stepping with its
own eta and projecting onto Theta intersected with the ball of radius D_k around its starting point
(project_ball_pair, closed form).

Variants ``accountant`` / ``fkt_accountant`` (catalog/shuffle_000_gd.py) run the same loop with a P_VEC whose noise
our accountant calibrated for the T calls a user joins (``pvec.calibrated_by``, ``pvec.calibrated_calls``): the
event then declares that calibration instead of a per-call (eps, delta).

Cost: T rounds of n users' gradients and one P_VEC count per coordinate, O(T n d) per trial; P_VEC's count
sampler draws the users' privacy noise as one binomial per coordinate whatever its size (b reaches 2.5 x 10^13
trials per user and coordinate in specs/shuffle_gd.yaml, n b 5 x 10^16).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from algorithms import mechanisms, shuffle_sum
from algorithms.data import Records
from algorithms.events import ShuffleSumRelease
from algorithms.result import RunOutput
from algorithms.shuffle_sgd import clipped_record_grads


def rounds(*, n: int, d: int, eps: float, delta: float) -> int:
    """T = min{n, eps^2 n^2/(d log^2(nd/delta))} (L740), rounded down and at least 1 (our choice: the paper
    leaves T real)."""
    return max(1, min(n, math.floor(eps**2 * n**2 / (d * math.log(n * d / delta) ** 2))))


def per_round(*, eps: float, delta: float, T: int) -> tuple[float, float]:
    """The (eps, delta) each round's P_VEC call is run at (Algorithm 5, line 3, L267)."""
    return eps / (2 * math.sqrt(2 * T * math.log(1 / delta))), delta / (T + 1)


def step(*, D: float, L: float, T: int) -> float:
    """eta = D/(L sqrt T) (L740)."""
    return D / (L * math.sqrt(T))


def fkt_groups(n: int) -> int:
    """k = ceil(log2 log2 n) disjoint user groups (OUR CHOICE, see the module docstring), at least 2."""
    return max(2, math.ceil(math.log2(math.log2(max(n, 4)))))


def project_ball_pair(w: np.ndarray, radius: float, centre: np.ndarray, r: float) -> np.ndarray:
    """Euclidean projection of the rows of w onto {||v|| <= radius} (Theta) intersected with {||v - c|| <= r}, c the
    row's own centre (a point of Theta, so the intersection is not empty; concentric balls are nested, so the
    projection onto the smaller one is the answer there). Closed form: w itself if it lies in both;
    else the projection onto one ball if it lies in the other; else the nearest point of the two spheres'
    intersection (the (d-2)-sphere in the hyperplane <v, c>/||c|| = h at radius rho, h = (radius^2 + ||c||^2 -
    r^2)/(2 ||c||)), where both constraints are active (KKT)."""
    tol = 1.0 + 1e-12

    def in_a(v: np.ndarray) -> np.ndarray:
        return np.linalg.norm(v, axis=-1, keepdims=True) <= radius * tol

    def in_b(v: np.ndarray) -> np.ndarray:
        return np.linalg.norm(v - centre, axis=-1, keepdims=True) <= r * tol

    on_a = mechanisms.project_ball(w, radius)
    on_b = centre + mechanisms.project_ball(w - centre, r)
    c_norm = np.linalg.norm(centre, axis=-1, keepdims=True)
    c_norm = np.where(c_norm > 1e-12 * radius, c_norm, 1.0)     # concentric rows: never the circle (cases above)
    unit = centre / c_norm
    h = (radius**2 + c_norm**2 - r**2) / (2 * c_norm)
    rho = np.sqrt(np.maximum(radius**2 - h**2, 0.0))
    u = w - np.sum(w * unit, axis=-1, keepdims=True) * unit
    circle = h * unit + rho * u / np.maximum(np.linalg.norm(u, axis=-1, keepdims=True), 1e-300)
    out = np.where(in_b(on_a), on_a, np.where(in_a(on_b), on_b, circle))
    return np.where(in_a(w) & in_b(w), w, out)


def run(records: Records, loss, *, T: int, eta: float, L: float, radius: float, pvec: shuffle_sum.PVecParams,
        rng: np.random.Generator, call_eps: float | None = None, call_delta: float | None = None,
        release: Callable[[np.ndarray], np.ndarray] | None = None, groups: int = 1, M_range=None,
        grad_F=None, group_radius: tuple[float, ...] | None = None,
        group_eta: tuple[float, ...] | None = None) -> RunOutput:
    """P_GD: T rounds, every user (of the current group) in every round, the clipped gradients summed by P_VEC (the
    analyzer sees only the counts). ``groups`` > 1: Lemma B.7's reduction, P_GD on each of ``groups`` disjoint groups
    of floor(n/groups) users in turn. ``group_radius`` / ``group_eta`` (one per group, both or neither): the shrinking
    domains of the reduction, group k projecting onto Theta intersected with the ball of radius group_radius[k]
    around its starting point (the previous group's output; w0 for the first) and stepping with group_eta[k]; None:
    every group on Theta with ``eta``. ``release`` replaces P_VEC (tests only). Output: the average of theta_0 ..
    theta_{T-1} of the (last) group's run."""
    if records.N != 1:
        raise ValueError(f"P_GD runs on one pool of n users (N = 1), not N = {records.N} silos")
    if (group_radius is None) != (group_eta is None):
        raise ValueError("group_radius and group_eta go together (the shrinking domains)")
    for per in (group_radius, group_eta):
        if per is not None and len(per) != groups:
            raise ValueError(f"{len(per)} per-group values for {groups} groups")
    trials, n, d = records.trials, records.n, records.d
    size = n // groups
    send = release or (lambda g: shuffle_sum.pvec(g, pvec, rng))
    joined = np.zeros((trials, n), dtype=np.int64)                         # calls each user's data entered
    w = np.zeros((trials, d))
    err_sq = np.zeros(trials)
    for k in range(groups):
        members = np.arange(k * size, (k + 1) * size)
        X, y = records.take(np.broadcast_to(members, (trials, 1, size)))
        X, y = X[:, 0], y[:, 0]                                             # (trials, size, d), (trials, size)
        avg = np.zeros((trials, d))
        centre = w.copy()                                                   # this group's starting point
        for t in range(T):
            avg += (w - avg) / (t + 1)                                      # running mean of theta_0 .. theta_t
            g, exact = clipped_record_grads(loss, w, X, y, L)
            joined[:, members] += 1
            total = send(g)                                                 # the server's estimate of the sum
            err = total - exact
            err_sq += np.einsum("td,td->t", err, err)
            if group_radius is None or group_eta is None:
                w = mechanisms.project_ball(w - eta * total / size, radius)   # descent step (see the docstring)
            else:
                w = project_ball_pair(w - group_eta[k] * total / size, radius, centre, group_radius[k])
        w = avg                                                             # the next group starts at this output
    uses = joined.max(axis=1)
    one = pvec.one_d
    event = ShuffleSumRelease(users_per_call=size, dimension=d, grid=one.g, trials_per_user=one.b, p=one.p,
                              Delta2=pvec.Delta2, rounds=groups * T, max_record_uses=int(uses.max()),
                              sampling="all_users", call_epsilon=call_eps, call_delta=call_delta,
                              calibrated_by=pvec.calibrated_by, calibrated_calls=pvec.calibrated_calls)
    rounds = groups * T
    in_groups = joined[:, :groups * size]
    return RunOutput(w=w, events=(event,), noise_sq=err_sq, noise_coords=np.full(trials, rounds * d), grad_err=None,
                     rounds=rounds, silo_rounds=np.full(trials, rounds), record_uses=uses,
                     extra={"sum_error_sq": err_sq / max(rounds, 1), "min_record_uses": in_groups.min(axis=1)})
