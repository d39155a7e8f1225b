"""The composition bounds seed 003's chapter 3 uses to set its privacy parameters (Jiang's thesis; Lnnn = line of
../shared/seeds/003_56e8b1c3300cdeae.txt), and two independent views of the k-fold composition of (eps, Delta)-DP
mechanisms they bound.

- ``general_epsilon`` / ``general_delta``: Theorem 3.3.3 (L817-819, Kairouz, Oh & Viswanath's Thm 3.4 as the thesis
  states it): for every delta' in (0, 1], k-fold (eps, Delta)-DP is (eps', 1 - (1 - Delta)^k (1 - delta'))-DP with
  eps' = min{k eps, (e^eps - 1) eps k/(e^eps + 1) + eps sqrt(2k log(e + sqrt(k eps^2)/delta')),
  (e^eps - 1) eps k/(e^eps + 1) + eps sqrt(2k log(1/delta'))}. Table B.1 (L3508-3533) and Tables 3.2 / B.3 / B.5 /
  B.7 set their numbers with it.
- ``exact_epsilon``: the optimal composition (Kairouz, Oh & Viswanath 2015, Thm 3.3; the k-fold worst
  (eps, Delta)-DP mechanism): at total delta 1 - (1 - Delta)^k (1 - delta'), the smallest epsilon is the smallest E
  with delta_RR(E) <= delta', where delta_RR is the exact delta of k-fold eps-randomized response (a binomial sum in
  log space, verifiers/checks/element_composition.rr_delta; bisection).
- ``pld_epsilon``: dp-accounting's privacy loss distribution of the (eps, Delta)-DP worst case
  (``from_privacy_parameters``, pessimistic discretisation), composed k times, read at the same total delta: an
  independent library's view of the same optimum (its discretisation can only raise it, by at most about k times the
  interval).
"""
from __future__ import annotations

import math

PLD_INTERVAL = 1e-4          # dp-accounting's value discretisation interval (its default)


def general_epsilon(eps: float, k: int, delta_prime: float) -> tuple[float, int]:
    """Thm 3.3.3's eps' and which term of the minimum gives it (0: k eps; 1: the log(e + ..) term; 2: the
    log(1/delta') term)."""
    if eps <= 0 or k < 1 or not 0 < delta_prime <= 1:
        raise ValueError(f"eps = {eps}, k = {k}, delta' = {delta_prime}: need eps > 0, k >= 1, 0 < delta' <= 1")
    drift = math.expm1(eps) * eps * k / (math.exp(eps) + 1)
    terms = (k * eps,
             drift + eps * math.sqrt(2 * k * math.log(math.e + math.sqrt(k * eps * eps) / delta_prime)),
             drift + eps * math.sqrt(2 * k * math.log(1 / delta_prime)))
    i = min(range(3), key=lambda j: terms[j])
    return terms[i], i


def general_delta(Delta: float, k: int, delta_prime: float) -> float:
    """Thm 3.3.3's delta: 1 - (1 - Delta)^k (1 - delta'), in log space."""
    return -math.expm1(k * math.log1p(-Delta) + math.log1p(-delta_prime))


def exact_epsilon(eps: float, k: int, delta_prime: float) -> float:
    """The optimal epsilon of k-fold (eps, Delta)-DP at total delta 1 - (1 - Delta)^k (1 - delta') (any Delta):
    Kairouz, Oh & Viswanath's exact composition, delta_RR(E) <= delta'."""
    return rr_epsilon(eps, k, delta_prime)


def rr_epsilon(eps: float, k: int, delta: float) -> float:
    """The epsilon of k-fold eps-randomized response at delta: verifiers/checks/element_composition.py's, imported
    when called (the checks package imports this module, so a module-level import would be a cycle)."""
    from verifiers.checks.element_composition import rr_epsilon as exact

    return exact(eps, k, delta)


def pld_epsilon(eps: float, Delta: float, k: int, delta_total: float, interval: float = PLD_INTERVAL) -> float:
    """dp-accounting: the pessimistic PLD of an (eps, Delta)-DP mechanism, self-composed k times, at delta_total."""
    from dp_accounting.pld import common, privacy_loss_distribution

    from verifiers.accountants.pld_compose import self_compose
    from verifiers.accountants.pld_epsilon import epsilon_for_delta

    pld = privacy_loss_distribution.from_privacy_parameters(
        common.DifferentialPrivacyParameters(eps, Delta), value_discretization_interval=interval)
    return float(epsilon_for_delta(self_compose(pld, k), delta_total))
