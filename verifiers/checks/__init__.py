"""The check kinds of learning specs: one module per kind, each ending in its ``CHECK`` entry (verifiers/checks/base.py
``CheckKind``). The registry collects the ``CHECK`` of every module of this package, so a new kind is one module and
nothing else. Curve and mechanism specs have their own kinds (``curves.py``, ``mechanism.py``), the comparison specs
the ``ordering`` check (``ordering.py``); those modules define no ``CHECK``."""
from __future__ import annotations

import importlib
import pkgutil

from algorithms.registry import Registry
from verifiers.checks.base import VERDICTS, CheckKind, CheckResult, CheckSpec, Context, Facts, Misfit, Point


def _kinds() -> list[CheckKind]:
    """The CHECK of every module of this package, in module-name order (explicit: read here, not registered by
    the modules as a side effect of being imported)."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if isinstance(getattr(module, "CHECK", None), CheckKind):
            found.append(module.CHECK)
    return found


CHECKS: Registry[CheckKind] = Registry.of("check kind", ((k.name, k) for k in _kinds()))

__all__ = ["CHECKS", "VERDICTS", "CheckKind", "CheckResult", "CheckSpec", "Context", "Facts", "Misfit", "Point"]
