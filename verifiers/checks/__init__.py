"""The check kinds: one module per kind, each ending in its ``CHECK`` entry (verifiers/checks/base.py
``CheckKind``); a new kind is one module and one line below. Curve and mechanism specs have their own kinds
(``curves.py``, ``mechanism.py``), the comparison specs the ``ordering`` check (``ordering.py``)."""
from __future__ import annotations

from algorithms.registry import Registry
from verifiers.checks import bound, ldp_exact, noise_calibration, privacy_accounting, privacy_audit, rate, unbiased
from verifiers.checks.base import VERDICTS, CheckKind, CheckResult, CheckSpec, Context, Facts, Misfit, Point

KINDS = (noise_calibration, privacy_accounting, privacy_audit, ldp_exact, unbiased, bound, rate)
CHECKS: Registry[CheckKind] = Registry.of("check kind", ((m.CHECK.name, m.CHECK) for m in KINDS))

__all__ = ["CHECKS", "VERDICTS", "CheckKind", "CheckResult", "CheckSpec", "Context", "Facts", "Misfit", "Point"]
