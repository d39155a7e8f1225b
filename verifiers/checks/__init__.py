"""The check kinds of learning specs: one module per kind, each ending in its ``CHECK`` entry (verifiers/checks/base.py
``CheckKind``). The registry collects the ``CHECK`` of every module of this package, so a new kind is one module and
nothing else. Curve and mechanism specs have their own kinds (``curves.py``, ``mechanism.py``), the comparison specs
the ``ordering`` check (``ordering.py``); those modules define no ``CHECK``."""
from __future__ import annotations

import importlib
import pkgutil
from typing import Any, Mapping

from algorithms.registry import Registry
from verifiers.checks.base import (
    VERDICTS,
    CheckKind,
    CheckResult,
    CheckSpec,
    Context,
    Describe,
    Facts,
    Misfit,
    Point,
    Rule,
)


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


def rule_for(result: Mapping[str, Any], spec_check: Mapping[str, Any] | None = None,
             extra: Mapping[str, Describe] | None = None) -> Rule | None:
    """How a stored check result was decided (Rule), where its kind describes its rule and the check was judged;
    None otherwise (an inapplicable check, or a kind whose rule is in its report section only). ``extra``: the
    describers of a mechanism's own check kinds (catalog MechanismEntry.check_rules)."""
    from verifiers.checks import ordering
    from verifiers.checks.curves import CURVE_RULES

    if result.get("verdict") == "inapplicable":
        return None
    kind = str(result.get("kind"))
    if extra is not None:                       # a mechanism's report: its own kinds' describers, and only those
        describe = extra.get(kind)
    else:
        others = CURVE_RULES | {"ordering": ordering.describe}
        describe = CHECKS.get(kind).describe if kind in CHECKS else others.get(kind)
    return None if describe is None else describe(result, spec_check or {})

__all__ = ["CHECKS", "VERDICTS", "CheckKind", "CheckResult", "CheckSpec", "Context", "Facts", "Misfit", "Point", "Rule",
           "rule_for"]
