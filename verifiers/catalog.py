"""The theorem registry: spec names -> Theorem objects."""
from __future__ import annotations

from algorithms.registry import Registry
from verifiers import cldp_001, isrl_004, sdp_004, shuffle_000, shuffle_000_agd, shuffle_000_gd, threat_models
from verifiers.theorem import Theorem

THEOREMS: Registry[Theorem] = Registry("theorem")
# one module per paper (or per part of one); a new theorem module is one import and one entry here
MODULES = (isrl_004, cldp_001, shuffle_000, threat_models, shuffle_000_agd, sdp_004, shuffle_000_gd)
for _module in MODULES:
    for _t in _module.THEOREMS:
        THEOREMS.add(_t.name, _t)
