"""Spec -> the learning problem of one sweep point, built by the spec's data kind (engine/kinds/learning/data.py):
the loss, the data (a population to draw fresh data sets from, or one fixed data set), the constants the
calibrations need, and how excess risk is measured.

Every constant carries its provenance, which the report shows next to the resolved parameters.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from algorithms.losses import LOSSES
from engine.kinds.learning.data import DATA_KINDS, Problem
from engine.kinds.learning.spec import Spec

__all__ = ["Problem", "build", "data_per_point"]


def build(spec: Spec, problem_seed: int, point_rng: np.random.Generator) -> Problem:
    data, lspec = spec.data, spec.loss
    loss = LOSSES.get(lspec.kind)(mu=lspec.mu)
    base: dict[str, float] = {"mu": lspec.mu, "D": lspec.diameter}
    prov = {"mu": "spec (loss.mu)", "D": "spec (loss.diameter)"}
    kind = DATA_KINDS.get(data.kind)
    prob = kind.build(data, lspec, loss, lspec.diameter / 2, base, prov, problem_seed, point_rng)
    if kind.draws_erm_data and data.mode == "erm" and spec.sweep is not None:
        field = spec.sweep.field
        scope = (f"The data set is drawn anew at every sweep point (the sweep's field {field} changes the data)"
                 if data_per_point(spec) else
                 f"The data set is drawn once for the whole sweep (the sweep's field {field} does not change the "
                 f"data): every sweep point sees the same data set")
        prob = replace(prob, note=f"{prob.note}. {scope}")
    return prob


def data_per_point(spec: Spec) -> bool:
    """Whether each sweep point draws its own synthetic ERM data set: when the sweep changes the data (a ``data.*``
    field: n, d, N). A sweep of the privacy parameters or of the algorithm keeps one data set for the whole sweep
    (engine/kinds/learning/runner.py: data_seed)."""
    return spec.sweep is None or spec.sweep.field.startswith("data.")
