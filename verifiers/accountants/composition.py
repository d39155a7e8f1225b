"""Composition theorems used by the accountants and by the papers' own privacy steps."""
from __future__ import annotations

import math


def advanced_composition(eps: float, delta: float, k: int, delta_prime: float) -> tuple[float, float]:
    """k-fold adaptive composition of (eps, delta)-DP mechanisms is (eps', k delta + delta')-DP with
    eps' = sqrt(2 k ln(1/delta')) eps + k eps (e^eps - 1)."""
    if not (k >= 1 and 0 < delta_prime < 1 and eps >= 0 and delta >= 0):
        raise ValueError(f"advanced composition needs k >= 1, 0 < delta' < 1 (k = {k}, delta' = {delta_prime})")
    return math.sqrt(2 * k * math.log(1 / delta_prime)) * eps + k * eps * math.expm1(eps), k * delta + delta_prime
