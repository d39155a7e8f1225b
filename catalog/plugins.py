"""Plugins: what a user's own package adds to the registries without an edit to this repository.

A plugin is a Python module with any of these (at least one):

- ``MECHANISM_ENTRIES``: a tuple of ``catalog.base.MechanismEntry`` (a parameter model, ``run_point``, its checks, its
  report lines, the neighbouring relations its checks handle): specs of ``kind: mechanism`` name them;
- ``ENTRIES``: a tuple of ``catalog.base.AlgorithmEntry`` (a resolver with provenance and a vectorised ``run`` that
  returns the privacy events it ran): learning specs name them under ``algorithm.kind``;
- ``THEOREMS``: a tuple of ``verifiers.theorems.base.Theorem`` (SymPy terms, conditions, citation): an algorithm's
  privacy theorem, a check's ``theorem:``;
- ``CHECK_KINDS``: a tuple of ``verifiers.checks.base.CheckKind``: learning specs' ``checks[].kind``;
- ``data_kinds()``: a function returning a tuple of ``engine.kinds.learning.data.DataKind`` (a function, because the
  data kinds live in the engine, which imports the catalog: it is called once the catalog is loaded).

Modules are found two ways: the entry points of the group ``privbench.plugins`` of installed packages
(``[project.entry-points."privbench.plugins"] name = "module"`` in the plugin's pyproject.toml), and the
comma-separated module names in the environment variable ``PRIVBENCH_PLUGINS`` (for a module on ``sys.path`` that is
not installed, e.g. in a notebook). ``examples/dpsgd_plugin`` (a mechanism) and ``examples/noisy_gd_plugin`` (a
learning algorithm with its theorems, a data kind and a check kind) are worked examples.

A plugin that cannot be imported, adds nothing, holds an object of the wrong type, or takes a name already used
(built in, or by an earlier plugin) raises ``PluginError`` with one line naming the plugin; the command line prints
it and exits 2. The registries stay built in one place each (catalog/__init__.py, the engine's data kinds); this
module only reads the plugins and checks what they hold.
"""
from __future__ import annotations

import importlib
import os
from importlib import metadata
from types import ModuleType
from typing import Any

from algorithms.registry import PluginError, Registry

GROUP = "privbench.plugins"
ENV = "PRIVBENCH_PLUGINS"
PARTS = ("MECHANISM_ENTRIES", "ENTRIES", "THEOREMS", "CHECK_KINDS", "data_kinds")


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
        if not any(getattr(module, part, None) for part in PARTS):
            raise PluginError(f"plugin {name!r} ({where}) has no MECHANISM_ENTRIES (nor ENTRIES, THEOREMS, CHECK_KINDS or "
                              f"data_kinds): it adds nothing")
        for part in PARTS[:4]:
            value = getattr(module, part, ())
            if not isinstance(value, tuple):
                raise PluginError(f"plugin {name!r}: {part} must be a tuple, not {type(value).__name__}")
        modules[name] = module
    return tuple(modules.values())


def entries(plugins: tuple[ModuleType, ...], part: str, cls: type) -> list[tuple[ModuleType, Any]]:
    """(plugin, object) for every object of one part of the plugins, each an instance of ``cls``."""
    out = []
    for module in plugins:
        for obj in getattr(module, part, ()):
            if not isinstance(obj, cls):
                raise PluginError(f"plugin {module.__name__!r}: {part} holds {type(obj).__name__}, not a "
                                  f"{cls.__module__}.{cls.__name__}")
            out.append((module, obj))
    return out


def check_names(builtin: set[str], plugins: tuple[ModuleType, ...]) -> None:
    """Refuse a plugin mechanism whose name is taken (built in, or by an earlier plugin)."""
    from catalog.base import MechanismEntry

    seen = set(builtin)
    for module, e in entries(plugins, "MECHANISM_ENTRIES", MechanismEntry):
        if e.name in seen:
            raise PluginError(f"plugin {module.__name__!r}: mechanism {e.name!r} already exists; rename it")
        seen.add(e.name)


def add_to(registry: Registry, plugins: tuple[ModuleType, ...], part: str, cls: type, what: str,
           taken: frozenset[str] = frozenset()) -> None:
    """Add one part of the plugins to its registry; a name already there (built in, or an earlier plugin's), or in
    ``taken`` (names of the same kind held elsewhere: the curve, ordering and mechanisms' check kinds), is refused
    in one line."""
    for module, obj in entries(plugins, part, cls):
        if obj.name in registry or obj.name in taken:
            raise PluginError(f"plugin {module.__name__!r}: {what} {obj.name!r} already exists; rename it")
        registry.add(obj.name, obj)


def data_kinds(plugins: tuple[ModuleType, ...], cls: type) -> list[tuple[ModuleType, Any]]:
    """(plugin, data kind) for every plugin's ``data_kinds()``, each an instance of ``cls`` (the engine's DataKind)."""
    out = []
    for module in plugins:
        make = getattr(module, "data_kinds", None)
        if make is None:
            continue
        try:
            made = make()
        except Exception as e:          # a user's function: one line, not a traceback
            raise PluginError(f"plugin {module.__name__!r}: data_kinds() failed: {type(e).__name__}: {e}") from None
        if not isinstance(made, tuple):
            raise PluginError(f"plugin {module.__name__!r}: data_kinds() must return a tuple, not "
                              f"{type(made).__name__}")
        for obj in made:
            if not isinstance(obj, cls):
                raise PluginError(f"plugin {module.__name__!r}: data_kinds() returned {type(obj).__name__}, not a "
                                  f"{cls.__module__}.{cls.__name__}")
            out.append((module, obj))
    return out
