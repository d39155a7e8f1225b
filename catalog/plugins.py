"""Plugins: mechanisms a user's own package adds to the registry without an edit to this repository.

A plugin is a Python module with a tuple ``MECHANISM_ENTRIES`` of ``catalog.base.MechanismEntry`` (its parameter
model, ``run_point``, check registry, report lines and the neighbouring relations its checks handle): a spec of
``kind: mechanism`` then names its mechanisms like built-in ones, and every check, report and exit code works as for
them. Modules are found two ways: the entry points of the group ``privbench.plugins`` of installed packages
(``[project.entry-points."privbench.plugins"] name = "module"`` in the plugin's pyproject.toml), and the
comma-separated module names in the environment variable ``PRIVBENCH_PLUGINS`` (for a module on ``sys.path`` that is
not installed, e.g. in a notebook). ``examples/dpsgd_plugin`` is a worked example.

A plugin that cannot be imported, has no ``MECHANISM_ENTRIES``, or names a mechanism that already exists raises
``PluginError`` with one line naming the plugin; the command line prints it and exits 2.
"""
from __future__ import annotations

import importlib
import os
from importlib import metadata
from types import ModuleType

from algorithms.registry import PluginError

GROUP = "privbench.plugins"
ENV = "PRIVBENCH_PLUGINS"


def _named() -> list[tuple[str, str]]:
    """(where it was named, module name) for every plugin: the entry points first, then the environment variable."""
    found = [(f"entry point {ep.name!r} of group {GROUP}", ep.value.split(":")[0].strip())
             for ep in metadata.entry_points(group=GROUP)]
    found += [(f"{ENV}", name.strip()) for name in os.environ.get(ENV, "").split(",") if name.strip()]
    return found


def load() -> tuple[ModuleType, ...]:
    """The plugin modules, each imported once, in the order they are named (a module named twice counts once)."""
    modules: dict[str, ModuleType] = {}
    for where, name in _named():
        if name in modules:
            continue
        try:
            module = importlib.import_module(name)
        except Exception as e:          # any failure inside a user's module: one line, not a traceback
            raise PluginError(f"plugin {name!r} ({where}) cannot be imported: {type(e).__name__}: {e}") from None
        entries = getattr(module, "MECHANISM_ENTRIES", None)
        if not isinstance(entries, tuple) or not entries:
            raise PluginError(f"plugin {name!r} ({where}) has no MECHANISM_ENTRIES: a non-empty tuple of "
                              f"catalog.base.MechanismEntry")
        modules[name] = module
    return tuple(modules.values())


def check_names(builtin: set[str], plugins: tuple[ModuleType, ...]) -> None:
    """Refuse a plugin mechanism whose name is taken (built in, or by an earlier plugin)."""
    from catalog.base import MechanismEntry

    seen = set(builtin)
    for module in plugins:
        for e in module.MECHANISM_ENTRIES:
            if not isinstance(e, MechanismEntry):
                raise PluginError(f"plugin {module.__name__!r}: MECHANISM_ENTRIES holds {type(e).__name__}, not a "
                                  f"catalog.base.MechanismEntry")
            if e.name in seen:
                raise PluginError(f"plugin {module.__name__!r}: mechanism {e.name!r} already exists; rename it")
            seen.add(e.name)
