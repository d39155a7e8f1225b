"""The theorem registry: spec names -> Theorem objects. One module per paper part, each listing its theorems in
``THEOREMS``; a new module is one file and one entry in ``MODULES``."""
from __future__ import annotations

from algorithms.registry import Registry
from verifiers.theorems import (
    baselines,
    cldp_001,
    element_002,
    isrl_004,
    quoted_rates,
    sdp_004,
    shuffle_000,
    shuffle_000_agd,
    shuffle_000_gd,
)
from verifiers.theorems.base import Theorem

MODULES = (isrl_004, cldp_001, shuffle_000, baselines, quoted_rates, shuffle_000_agd, sdp_004, shuffle_000_gd,
           element_002)
THEOREMS: Registry[Theorem] = Registry.of("theorem", ((t.name, t) for m in MODULES for t in m.THEOREMS))
