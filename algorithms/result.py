"""What an optimiser run returns: the outputs, the privacy events it ran and its instrumentation."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from algorithms.events import GaussianRelease


@dataclass(frozen=True)
class RunOutput:
    w: np.ndarray                      # (T, d) the released model of each trial
    events: tuple[GaussianRelease, ...]
    noise_sq_sum: float                # sum of ||message - noiseless message||^2 over every released message
    noise_coords: int                  # how many coordinates those messages had in total
    grad_err: np.ndarray | None        # (T,) mean over rounds of ||g_r - grad F(query point)||^2 (synthetic only)
    rounds: int


def max_multiplicity(idx: np.ndarray) -> int:
    """Largest number of times one index occurs along the last axis, for every leading cell: idx (..., m)."""
    s = np.sort(idx, axis=-1)
    same = s[..., 1:] == s[..., :-1]
    if not same.any():
        return 1
    # longest run of equal neighbours, via cumulative counts that reset at every change
    flat = same.reshape(-1, same.shape[-1]).astype(np.int64)
    best = 0
    run = np.zeros(flat.shape[0], dtype=np.int64)
    for col in range(flat.shape[1]):
        run = (run + 1) * flat[:, col]
        best = max(best, int(run.max()))
    return best + 1

