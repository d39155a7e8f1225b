"""The privacy budgets of §3.7.2's private label prediction (seed 003, Jiang's thesis; Lnnn = line of
../shared/seeds/003_56e8b1c3300cdeae.txt): each DP-SGD teacher's (eps, Delta), the general composition over Q
queries that sets the total (Thm 3.3.3), and GNMax's noise calibrated to the per-query budget (Appendix B.4.1).

- ``dpsgd_epsilon``: a teacher's epsilon at Delta for what ran: ``steps`` Poisson-subsampled Gaussian steps with noise
  multiplier sigma (per-example clipping at C, noise std sigma C), by dp-accounting's RDP accountant (add/remove one
  record). Records of the other shards never touch the teacher.
- ``general_composition``: Thm 3.3.3 (L817-821; Kairouz et al., Thm 3.4): k-fold composition of (eps, delta)-DP
  mechanisms is (eps', 1 - (1 - delta)^k (1 - delta'))-DP, eps' = min{k eps, (e^eps - 1) eps k / (e^eps + 1)
  + eps sqrt(2k log(e + sqrt(k eps^2) / delta')), (e^eps - 1) eps k / (e^eps + 1) + eps sqrt(2k log(1/delta'))}.
- ``gnmax_sigma``: B.4.1 (L3616-3633): GNMax is (lambda, lambda / sigma^2)-RDP, so (lambda / sigma^2 +
  log(1/delta) / (lambda - 1), delta)-DP (Thm B.4.1); sigma^2 = lambda / (eps - log(1/delta) / (lambda - 1)) on the
  grid lambda = lambda_min + 0.5 j <= 500, lambda_min = log(1/delta) / eps + 1, minimised.
"""
from __future__ import annotations

import math

import dp_accounting
import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant as rdp

from verifiers.accountants import darrm_composition


def dpsgd_epsilon(q: float, steps: int, sigma: float, Delta: float) -> float:
    """epsilon at Delta of ``steps`` Poisson-sampled (probability q) Gaussian steps, noise multiplier sigma (RDP)."""
    if not (0 < q <= 1 and steps >= 1 and sigma > 0 and 0 < Delta < 1):
        raise ValueError(f"DP-SGD accounting needs 0 < q <= 1, steps >= 1, sigma > 0, 0 < Delta < 1 "
                         f"(q = {q}, steps = {steps}, sigma = {sigma}, Delta = {Delta})")
    acc = rdp.RdpAccountant()
    acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
    return float(acc.get_epsilon(Delta))


def general_composition(eps: float, delta: float, k: int, delta_prime: float) -> tuple[float, float]:
    """Thm 3.3.3 (L817-821): (eps', 1 - (1 - delta)^k (1 - delta')) for k-fold composition of (eps, delta)-DP, as
    verifiers/accountants/darrm_composition.py computes it (one copy of the theorem)."""
    if not (k >= 1 and eps > 0 and 0 <= delta < 1 and 0 < delta_prime < 1):
        raise ValueError(f"general composition needs k >= 1, eps > 0, 0 <= delta < 1, 0 < delta' < 1 "
                         f"(k = {k}, eps = {eps}, delta = {delta}, delta' = {delta_prime})")
    return darrm_composition.general_epsilon(eps, k, delta_prime)[0], darrm_composition.general_delta(delta, k,
                                                                                                      delta_prime)


def gnmax_sigma(eps: float, delta: float, *, lam_max: float = 500.0, step: float = 0.5) -> tuple[float, float]:
    """B.4.1's grid search (L3626): (sigma_min, lambda) minimising sigma^2 = lambda / (eps - log(1/delta) /
    (lambda - 1)) over lambda = lambda_min + step j <= lam_max (lambda_min excluded: there the denominator is 0)."""
    b = math.log(1 / delta)
    lam_min = b / eps + 1
    if lam_min + step > lam_max:
        raise ValueError(f"GNMax at (eps, delta) = ({eps}, {delta}): lambda_min = {lam_min:.4g} leaves no grid below "
                         f"{lam_max}")
    lam = lam_min + step * np.arange(1, int((lam_max - lam_min) / step) + 1)
    s2 = lam / (eps - b / (lam - 1))
    i = int(np.argmin(s2))
    return float(math.sqrt(s2[i])), float(lam[i])


def gnmax_epsilon(sigma: float, lam: float, delta: float) -> float:
    """Thm B.4.1 (L3620-3622) at one order: lambda / sigma^2 + log(1/delta) / (lambda - 1)."""
    return lam / sigma**2 + math.log(1 / delta) / (lam - 1)
