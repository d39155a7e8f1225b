"""The privacy of Shuffled Noisy MB-SGD (seed 004, Thm 5.1 / G.1, L240-248, L1160-1172): the per-round chain of
published bounds, three compositions of it over the rounds, and the calibration's search for the smallest noise.
Lnnn = line of ../shared/seeds/004_66f3b713b54f102e.txt.

WHICH COMPUTATION SETS SIGMA AND WHICH JUDGES IT (issue 12):
- SETS sigma (the calibration, ``min_sigma``, called by catalog/sdp_004.py): steps 1-3 below per round, then KOV's
  simplified composition (step 4a). Thm G.1 leaves its constant C open; C is whatever this search returns.
- JUDGES sigma (the privacy_accounting check, ``ACCOUNTANT`` -> ``account().epsilon``): the same steps 1-3 at the
  sigma AS RUN, composed by dp-accounting's privacy-loss distribution (step 4b): an independent library, and the
  optimal composition of R (eps_round, delta_round)-DP rounds, so it is never above KOV. The calibration's KOV
  epsilon and the seed's advanced composition (step 4c) are columns of the check's rows.
- A view that shares neither (tests/test_sdp_privacy_view.py): an audit of the SHUFFLED reports of a two-silo
  instance (algorithms/audit.shuffled_scores: the exact likelihood ratio of the shuffled multiset, summed over
  permutations in log space, on reports drawn with the algorithm's sampler and mechanisms.gaussian), whose
  Clopper-Pearson lower bound on epsilon must stay below the claim and below the PLD epsilon.

Each round r, M of the N silos (a uniform M-subset) each read ONE uniform record of their own (K = 1) and send
Rhat(x) = grad f(w_r, x) + N(0, sigma^2 I_d); the shuffler hands the server the M reports in random order. Replacing
one record x_{a,b} (replace-one adjacency, Def. 3, L98) changes at most one report, and only in the rounds where
silo a is sampled and reads record b, which happens with probability q = (M/N)(1/n) (L1168). The chain (the seed's
proof of Thm G.1, L1168-1170, with its O() steps replaced by the published bounds they cite):

1. Local randomizer: the Gaussian mechanism with l_2-sensitivity 2L (two gradients of norm <= L). Its exact
   privacy profile (Balle & Wang 2018, Thm 8) delta0(eps0) = Phi(mu/2 - eps0/mu) - e^eps0 Phi(-mu/2 - eps0/mu),
   mu = 2L/sigma. The seed uses Dwork & Roth's sufficient sigma^2 = 8 L^2 ln(2/delta0)/eps0^2 instead (L1168).
2. Amplification by shuffling of M (eps0, delta0)-DP reports: Feldman, McMillan & Talwar 2020b ("Hiding among the
   clones", the seed's citation, L1168), Thm 3.8: (eps_sh, delta_s + (e^eps_sh + 1)(1 + e^-eps0/2) M delta0)-DP,
   where eps_sh is their pure-DP amplification bound at eps0. We take eps_sh from their numerical bound (exact
   binomial tails of the dominating pair, verifiers/accountants/shuffle_baselines.fmt_epsilon, valid for every eps0) and bound
   e^eps_sh by e^eps0 in the delta term (eps_sh <= eps0). Their closed form (Thm 3.1; the seed's (21) with n = 1,
   L806) is computed next to it as a second method wherever its condition eps0 <= ln(M/(16 ln(2/delta_s))) holds.
   The statement of Thm 3.8 is FMT's as we know it (no copy of their text was at hand to re-read); the delta it
   charges is never below that of the seed's own Thm D.5 (L806: delta^r + 2 N n e^{(n-1) eps0} delta0, i.e. 2 M delta0
   for one record per report), whose proof (Lemmas D.12-D.13, L862-866) has the same structure.
3. Subsampling (the record enters a round with probability q): (log(1 + q(e^eps_sh - 1)), q delta) (Balle, Barthe &
   Gaboardi 2018, Thm 10, sampling without replacement, replace-one). The seed uses Ullman's 2 q eps (L1168).
4. Composition over the R rounds (adaptive composition of (eps_round, delta_round)-DP rounds):
   a. the calibration's: Kairouz, Oh & Viswanath (2015, the homogeneous simplified form, shuffle_baselines.kov);
   b. the judge's: dp-accounting's PLD of an (eps_round, delta_round)-DP round (``from_privacy_parameters``: its
      dominating pair, +-eps_round and an atom at infinity of mass delta_round), self-composed R times and read at
      the total delta; the grid is eps_round itself, so the two losses sit on it exactly and the result is KOV's
      optimal composition (their Thm 3.3), up to the library's FFT (``pld_epsilon``);
   c. the seed's: advanced composition (Dwork & Roth Thm 3.20, L1170), at the same slack as 4a.

Delta split (OUR CHOICE; the seed's proof fixes only orders): half of delta to the R rounds (delta/(2R) each after
subsampling, shared equally between FMT's delta_s and the clones' delta0 term), the rest to the composition (4a and
4c: solved exactly as in shuffle_baselines.fmt_kov_epsilon; 4b: the PLD carries the rounds' delta itself and is read
at the total delta).
"""
from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass

from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dp_accounting.pld.common import DifferentialPrivacyParameters
from scipy.special import log_ndtr

from algorithms.events import ShuffledGaussianRelease
from verifiers.accountants import shuffle_baselines
from verifiers.accountants.base import Accountant
from verifiers.accountants.pld_compose import self_compose
from verifiers.accountants.pld_epsilon import epsilon_for_delta

SIGMA_REL_RES = 1e-4          # the sigma search stops when its bracket is this narrow (relative); returns the upper end


def gaussian_delta(eps: float, mu: float) -> float:
    """The exact delta(eps) of the Gaussian mechanism with sensitivity/sigma = mu (Balle & Wang 2018, Thm 8)."""
    if mu <= 0:
        return 0.0
    a, b = mu / 2 - eps / mu, -mu / 2 - eps / mu
    return max(0.0, math.exp(log_ndtr(a)) - math.exp(eps + log_ndtr(b)))


def clone_factor(eps0: float, M: int) -> float:
    """FMT Thm 3.8's factor on delta0, (e^eps + 1)(1 + e^-eps0/2) M, with e^eps bounded by e^eps0."""
    return (math.exp(eps0) + 1) * (1 + math.exp(-eps0) / 2) * M


def local_eps0(sigma: float, L: float, M: int, budget: float, steps: int = 60) -> float:
    """The smallest eps0 (bisection, rounded up) with clone_factor(eps0) * delta0(eps0) <= budget for the local
    Gaussian randomizer (sensitivity 2L); the certificate is that inequality at the returned eps0."""
    mu = 2 * L / sigma
    ok = lambda e: clone_factor(e, M) * gaussian_delta(e, mu) <= budget    # noqa: E731
    lo, hi = 0.0, max(1.0, mu * mu)
    while not ok(hi):
        lo, hi = hi, 2 * hi
        if hi > 1e4:
            return math.inf
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def advanced_composition(eps: float, R: int, delta_tilde: float) -> float:
    """Dwork & Roth Thm 3.20: R-fold composition of eps-DP steps at slack delta_tilde."""
    return math.sqrt(2 * R * math.log(1 / delta_tilde)) * eps + R * eps * math.expm1(eps)


@dataclass(frozen=True)
class Account:
    """Every step of the chain, for the report."""

    epsilon: float                  # the JUDGE's epsilon: the rounds composed by dp-accounting's PLD (step 4b)
    delta: float
    eps0: float                     # the local Gaussian randomizer's epsilon ...
    delta0: float                   # ... and its exact delta there
    delta_shuffle: float            # FMT's delta_s
    eps_shuffle: float              # FMT's numerical bound for the M shuffled reports
    eps_shuffle_closed: float | None   # FMT Thm 3.1 / seed (21) with n = 1 (None outside its condition)
    q: float                        # the probability that the changed record enters a round
    eps_round: float                # after subsampling
    delta_round: float
    epsilon_kov: float              # the CALIBRATION's epsilon: the same rounds composed by KOV (step 4a)
    epsilon_advanced: float         # the same rounds composed by advanced composition (the seed's choice, step 4c)

    def as_dict(self) -> dict:
        return asdict(self)


def split(delta: float, R: int, q: float) -> tuple[float, float, float]:
    """(delta_s, clone budget, composition slack) of the OUR CHOICE split in the module docstring."""
    delta_round = delta / (2 * R)
    delta_s = budget = delta_round / (2 * q)
    dt = -math.expm1(math.log1p(-delta) - R * math.log1p(-delta_round))
    return delta_s, budget, dt


@dataclass(frozen=True)
class Round:
    """Steps 1-3 of the chain: one round's (eps_round, delta_round) and how it was reached."""

    q: float
    delta_s: float
    dt: float                       # the composition slack of 4a and 4c
    eps0: float
    eps_shuffle: float
    eps_round: float
    delta_round: float


def round_chain(*, sigma: float, L: float, M: int, N: int, n: int, R: int, delta: float) -> Round:
    """Steps 1-3 at this sigma (shared by the calibration and the judge; the view of the audit shares none)."""
    q = M / (N * n)
    delta_s, budget, dt = split(delta, R, q)
    if delta_s >= 1:
        raise ValueError(f"the per-round shuffle delta {delta_s:.3g} is not below 1 (delta = {delta}, R = {R}, q = {q:g})")
    eps0 = local_eps0(sigma, L, M, budget)
    eps_sh = shuffle_baselines.fmt_epsilon(M, eps0, delta_s) if math.isfinite(eps0) else math.inf
    return Round(q, delta_s, dt, eps0, eps_sh, math.log1p(q * math.expm1(eps_sh)), delta / (2 * R))


def calibration_epsilon(*, sigma: float, L: float, M: int, N: int, n: int, R: int, delta: float) -> float:
    """What SETS sigma: steps 1-3 and KOV's composition (4a); ``min_sigma`` searches on it."""
    r = round_chain(sigma=sigma, L=L, M=M, N=N, n=n, R=R, delta=delta)
    return shuffle_baselines.kov(r.eps_round, R, r.dt) if math.isfinite(r.eps_round) else math.inf


def pld_epsilon(eps_round: float, delta_round: float, R: int, delta: float) -> float:
    """Step 4b, what JUDGES sigma: dp-accounting's PLD of one (eps_round, delta_round)-DP round, self-composed R
    times, at the total delta. The discretization interval is eps_round itself (x/x == 1 exactly in floating point),
    so the library's pessimistic rounding moves nothing and the result is the optimal composition."""
    if not math.isfinite(eps_round):
        return math.inf
    if eps_round <= 0:
        return 0.0 if -math.expm1(R * math.log1p(-delta_round)) <= delta else math.inf
    one = pld_lib.from_privacy_parameters(DifferentialPrivacyParameters(eps_round, delta_round),
                                          value_discretization_interval=eps_round)
    return float(epsilon_for_delta(self_compose(one, R), delta))


@functools.lru_cache(maxsize=256)
def account(*, sigma: float, L: float, M: int, N: int, n: int, R: int, delta: float) -> Account:
    """(eps, delta)-DP of the server's view of R rounds of Shuffled Noisy MB-SGD (the chain above): the judge's PLD
    epsilon, with the calibration's KOV and the seed's advanced composition next to it."""
    r = round_chain(sigma=sigma, L=L, M=M, N=N, n=n, R=R, delta=delta)
    if not math.isfinite(r.eps0):
        return Account(math.inf, delta, r.eps0, math.nan, r.delta_s, math.inf, None, r.q, math.inf, r.delta_round,
                       math.inf, math.inf)
    return Account(epsilon=pld_epsilon(r.eps_round, r.delta_round, R, delta), delta=delta, eps0=r.eps0,
                   delta0=gaussian_delta(r.eps0, 2 * L / sigma), delta_shuffle=r.delta_s, eps_shuffle=r.eps_shuffle,
                   eps_shuffle_closed=shuffle_baselines.fmt_closed_form(M, r.eps0, r.delta_s), q=r.q,
                   eps_round=r.eps_round, delta_round=r.delta_round,
                   epsilon_kov=shuffle_baselines.kov(r.eps_round, R, r.dt),
                   epsilon_advanced=advanced_composition(r.eps_round, R, r.dt))


@functools.lru_cache(maxsize=64)
def min_sigma(*, eps: float, L: float, M: int, N: int, n: int, R: int, delta: float) -> float:
    """THE CALIBRATION: the smallest sigma (to SIGMA_REL_RES, rounded up) whose ``calibration_epsilon`` (steps 1-3
    and KOV) is <= eps: bisection on sigma (that epsilon falls as sigma grows). It never calls the judge's PLD."""
    f = lambda s: calibration_epsilon(sigma=s, L=L, M=M, N=N, n=n, R=R, delta=delta)   # noqa: E731
    lo, hi = 0.0, 2 * L
    while f(hi) > eps:
        lo, hi = hi, 2 * hi
        if hi > 1e12 * L:
            raise ValueError(f"no sigma below {hi:.3g} certifies eps = {eps} at delta = {delta}")
    while hi - lo > SIGMA_REL_RES * hi:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if f(mid) <= eps else (mid, hi)
    return hi


def min_sigma_inverse(*, eps: float, L: float, M: int, N: int, n: int, R: int, delta: float) -> float:
    """The same sigma by inverting the chain step by step (the cross-check of ``min_sigma``): the largest per-round
    eps1 KOV allows, the shuffled eps_sh it allows before subsampling, the largest eps0 FMT's numerical bound
    allows at delta_s, and the smallest sigma whose Gaussian delta0(eps0) fits the clone budget."""
    q = M / (N * n)
    delta_s, budget, dt = split(delta, R, q)
    lo, hi = 0.0, eps
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if shuffle_baselines.kov(mid, R, dt) <= eps else (lo, mid)
    eps_sh = math.log1p(math.expm1(lo) / q)
    lo, hi = 0.0, 1.0
    while shuffle_baselines.fmt_delta(M, hi, eps_sh) <= delta_s and hi < 50:
        lo, hi = hi, 2 * hi
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if shuffle_baselines.fmt_delta(M, mid, eps_sh) <= delta_s else (lo, mid)
    eps0 = lo
    target = budget / clone_factor(eps0, M)
    slo, shi = 1e-9 * L, 2 * L
    while gaussian_delta(eps0, 2 * L / shi) > target:
        slo, shi = shi, 2 * shi
    for _ in range(80):
        mid = (slo + shi) / 2
        slo, shi = (slo, mid) if gaussian_delta(eps0, 2 * L / mid) <= target else (mid, shi)
    return shi


def thm51_base(*, L: float, R: int, M: int, N: int, n: int, eps: float, delta: float) -> float:
    """Thm G.1's sigma^2 without its constant (L1164): L^2 R M ln(R M^2/(N delta)) ln(R/delta) ln(1/delta)
    / (n^2 N^2 eps^2); sigma^2 = C times this."""
    return (L**2 * R * M * math.log(R * M**2 / (N * delta)) * math.log(R / delta) * math.log(1 / delta)
            / (n**2 * N**2 * eps**2))


# --- the accountant of a run's shuffled Gaussian reports (Shuffled Noisy MB-SGD) ---------------------------------
def event_account(e: ShuffledGaussianRelease, L: float, delta: float) -> Account:
    return account(sigma=e.sigma, L=L, M=e.silos_per_round, N=e.silos, n=e.pool_size, R=e.rounds, delta=delta)


def _epsilon(events: tuple[ShuffledGaussianRelease, ...], L: float, delta: float) -> tuple[float, str]:
    (g,) = events
    return event_account(g, L, delta).epsilon, (
        "seed 004 Thm G.1's chain with published bounds per round (exact Gaussian local randomizer, FMT 2020b Thm "
        "3.8 numerical, subsampling q = M/(N n)), the R rounds composed by dp-accounting's PLD (the optimal "
        "composition; the calibration's KOV and the seed's advanced composition are columns) "
        "(verifiers/accountants/shuffled_gaussian.py), replace-one")


def _describe(event: ShuffledGaussianRelease, L: float, delta: float) -> dict:
    a = event_account(event, L, delta)
    return {"sigma": event.sigma, "silos_per_round": event.silos_per_round, "eps0_local": a.eps0,
            "delta0_local": a.delta0, "eps_shuffle_fmt_numerical": a.eps_shuffle,
            "eps_shuffle_fmt_closed_form": a.eps_shuffle_closed if a.eps_shuffle_closed is not None else "n/a",
            "q_record_per_round": a.q, "eps_round": a.eps_round, "epsilon_kov_calibration": a.epsilon_kov,
            "epsilon_advanced_composition": a.epsilon_advanced}


def _view(threat_model: str) -> str:
    return ("the server's view of the shuffled Gaussian reports as run (sigma as run, M of N silos, one record each, "
            "R rounds)")


ACCOUNTANT = Accountant(ShuffledGaussianRelease, _epsilon, _describe, _view)
