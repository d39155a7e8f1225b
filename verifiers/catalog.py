"""The theorem registry: spec names -> Theorem objects."""
from __future__ import annotations

from algorithms.registry import Registry
from verifiers import cldp_001, isrl_004, shuffle_000
from verifiers.theorem import Theorem

THEOREMS: Registry[Theorem] = Registry("theorem")
for _t in isrl_004.THEOREMS + cldp_001.THEOREMS + shuffle_000.THEOREMS:
    THEOREMS.add(_t.name, _t)
