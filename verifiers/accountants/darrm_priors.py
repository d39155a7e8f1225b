"""DaRRM's gamma optimised under a prior on the mechanisms' p_i (seed 003, App. B.4 "Comparison Using Different
Prior Distributions", L3557-3604; Lnnn = line of ../shared/seeds/003_56e8b1c3300cdeae.txt), and the expected error
under an actual distribution of the p_i.

The LP (3.2)-(3.3) (L931-939) maximises sum_l c_l gamma(l) with c_l = E[alpha_l - alpha_{K-l}] under the prior. The
chapter integrates the prior over [0.5, 1]^K for T_U (B.61, L3406) and over [0.7, 1]^K for T_P = U([0, 0.3] u [0.7,
1]) (B.62, L3570-3572). With p_i i.i.d. U[a, b] each S_i is marginally Bernoulli((a + b)/2), independently, so the
coefficients are exactly Bin(K, (a + b)/2)(l) - Bin(K, (a + b)/2)(K - l) (verifiers/accountants/darrm_privacy.
prior_weights; [D] in the reading notes): q = 0.75 (T_U), q = 0.85 (T_P).

``optimal_gamma_under`` is darrm_privacy.optimal_gamma with the objective's coefficients given: the same rows
(Lemma 3.6.1's corners), the same HiGHS solve, the same scaling onto the rows.

The expected error under an actual distribution (B.56's expectation, L3352-3358) E_p |(1/2) sum_{l >= (K+1)/2}
(alpha_l - alpha_{K-l}) (1 - gamma(l))|:
- exactly, when every p_i <= 1/2 (or every p_i >= 1/2): then alpha_l <= alpha_{K-l} for every l >= (K+1)/2 ([D]:
  write S_i = Z_i Y_i with Z_i ~ Bernoulli(1/2), Y_i ~ Bernoulli(2 p_i); given the Y's, L ~ Bin(t, 1/2) with t <= K,
  symmetric and unimodal around t/2, and l is at least as far from t/2 as K - l), so the sum has one sign for every
  gamma in [0, 1] and the expectation goes inside: the error is |B.56| at E[alpha] = Bin(K, E p_i);
- at a point mass p_i = p: |B.56| at Bin(K, p) (0 at p = 1/2 for every symmetric gamma);
- otherwise by Monte Carlo over p (each draw's error exact), ``mc_errors``.
"""
from __future__ import annotations

import numpy as np

from algorithms import darrm
from verifiers.accountants import darrm_privacy as dp


def optimal_gamma_under(laws: dp.CornerLaws, K: int, m: float, eps: float, delta: float, c: np.ndarray) -> dp.Optimal:
    """The LP (3.2)-(3.3) with objective coefficients ``c`` (for l = (K+1)/2 .. K) over Lemma 3.6.1's corner rows."""
    return dp.optimal_gamma(laws, K, m, eps, delta, c)


def signed_error(alpha: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """B.56 inside its absolute value (rows of ``alpha``: laws of L): Pr[g(S) = 1] - Pr[out = 1]."""
    K = alpha.shape[-1] - 1
    up = np.arange((K + 1) // 2, K + 1)
    return 0.5 * (alpha[..., up] - alpha[..., K - up]) @ (1 - np.asarray(gamma)[up])


def one_signed(lo: float, hi: float) -> bool:
    """Whether B.56's sum has one sign for every p in [lo, hi]^K (all p_i on one side of 1/2, or a point mass)."""
    return hi <= 0.5 or lo >= 0.5 or lo == hi


def exact_error(K: int, lo: float, hi: float, gamma: np.ndarray) -> float:
    """E_p |B.56| for p_i i.i.d. U[lo, hi] (a point mass when lo = hi), where ``one_signed``."""
    if not one_signed(lo, hi):
        raise ValueError(f"U[{lo}, {hi}] straddles 1/2: B.56's sign varies, no closed form")
    return float(abs(signed_error(dp.binomial_laws(K, np.array([(lo + hi) / 2]))[0], gamma)))


def mc_errors(K: int, lo: float, hi: float, gammas: list[np.ndarray], n: int, rng: np.random.Generator) -> np.ndarray:
    """|B.56| at n draws of p_i i.i.d. U[lo, hi] (exact at each draw), for each gamma: (len(gammas), n)."""
    p = lo + (hi - lo) * rng.random((n, K))
    alpha = darrm.poisson_binomial(p)
    return np.abs(np.stack([signed_error(alpha, g) for g in gammas]))
