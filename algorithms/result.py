"""What an optimiser run returns: the outputs, the privacy events it ran and its instrumentation."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from algorithms import kernels
from algorithms.events import Event


@dataclass(frozen=True)
class RunOutput:
    w: np.ndarray                      # (T, d) the released model of each trial
    events: tuple[Event, ...]
    noise_sq: np.ndarray               # (T,) sum of ||message - noiseless message||^2 over a trial's released messages
    noise_coords: np.ndarray           # (T,) how many coordinates those messages had
    grad_err: np.ndarray | None        # (T,) mean over rounds of ||g_r - grad F(query point)||^2 (synthetic only)
    rounds: int
    silo_rounds: np.ndarray            # (T,) the most rounds any silo of the trial released in
    record_uses: np.ndarray            # (T,) the most rounds any record of the trial was read in
    extra: Mapping[str, np.ndarray] = field(default_factory=dict)   # further per-trial measurements, (T,) or (T, k)


def multiplicity_per_trial(idx: np.ndarray) -> np.ndarray:
    """max_multiplicity of each trial's indices: idx (T, ..., m) -> (T,)."""
    return np.array([max_multiplicity(idx[t]) for t in range(idx.shape[0])], dtype=np.int64)


def max_multiplicity(idx: np.ndarray) -> int:
    """Largest number of times one index occurs along the last axis, for every leading cell: idx (..., m)
    of non-negative indices. One pass with a count per index value (algorithms/kernels.py): O(size), no sort."""
    return kernels.max_multiplicity(idx)
