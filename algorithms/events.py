"""What an algorithm reports about the privacy-relevant work it actually ran."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GaussianRelease:
    """Each participating silo released (1/K) sum of K per-record gradients + N(0, sigma^2 I_d).

    sampling: 'without_replacement' (a fresh uniform K-subset of the silo's n records each round)
    or 'disjoint' (one pass: batches never share a record). ``rounds`` is the largest number of
    rounds any silo took part in; ``max_record_uses`` the largest number of rounds any single
    record was read in (1 for a correct one-pass run). The sensitivity is not declared here: the
    accountant derives it from the loss's Lipschitz constant and K.
    """

    sigma: float
    batch_size: int
    pool_size: int
    sampling: str
    rounds: int
    max_record_uses: int
