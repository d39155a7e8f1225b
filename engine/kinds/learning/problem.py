"""Spec -> the learning problem of one sweep point, built by the spec's data kind (engine/kinds/learning/data.py):
the loss, the data (a population to draw fresh data sets from, or one fixed data set), the constants the
calibrations need, and how excess risk is measured.

Every constant carries its provenance, which the report shows next to the resolved parameters.
"""
from __future__ import annotations

import numpy as np

from algorithms.losses import LOSSES
from engine.kinds.learning.data import DATA_KINDS, Problem
from engine.kinds.learning.spec import Spec

__all__ = ["Problem", "build"]


def build(spec: Spec, problem_seed: int, point_rng: np.random.Generator) -> Problem:
    data, lspec = spec.data, spec.loss
    loss = LOSSES.get(lspec.kind)(mu=lspec.mu)
    base: dict[str, float] = {"mu": lspec.mu, "D": lspec.diameter}
    prov = {"mu": "spec (loss.mu)", "D": "spec (loss.diameter)"}
    return DATA_KINDS.get(data.kind).build(data, lspec, loss, lspec.diameter / 2, base, prov, problem_seed, point_rng)
