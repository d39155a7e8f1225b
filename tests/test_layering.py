"""The house rules, read from the source (imports inside functions count): algorithms/ imports none of
verifiers/, catalog/, engine/; verifiers/ imports neither catalog/ nor engine/; catalog/ does not import engine/;
and no module imports itself back through others (a package importing its own children is not a cycle)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("algorithms", "verifiers", "catalog", "engine")
FORBIDDEN = {"algorithms": {"verifiers", "catalog", "engine"}, "verifiers": {"catalog", "engine"},
             "catalog": {"engine"}, "engine": set()}


def _modules() -> dict[str, Path]:
    mods = {}
    for pkg in PACKAGES:
        for p in (ROOT / pkg).rglob("*.py"):
            parts = p.relative_to(ROOT).with_suffix("").parts
            mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return mods


def _imports(name: str, path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")[: len(name.split(".")) - node.level + (path.name == "__init__.py")]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out |= {mod} | {f"{mod}.{a.name}" for a in node.names}
    return out


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    return {m: {t for t in _imports(m, p) if t in mods and t != m} | {t for t in _imports(m, p) if t.split(".")[0] in
                                                                        PACKAGES and t not in mods}
            for m, p in mods.items()}


def test_no_upward_imports():
    bad = [f"{m} imports {t}" for m, targets in _graph().items() for t in targets
           if t.split(".")[0] in FORBIDDEN[m.split(".")[0]]]
    assert not bad, bad


def test_no_import_cycles():
    mods = _modules()
    graph = {m: {t for t in ts if t in mods and not (t.startswith(m + ".") or m.startswith(t + "."))}
             for m, ts in _graph().items()}
    cycles, state = [], {}

    def visit(u: str, stack: list[str]) -> None:
        state[u] = 1
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == 1:
                cycles.append(stack[stack.index(v):] + [v])
            elif not state.get(v):
                visit(v, stack)
        stack.pop()
        state[u] = 2

    for m in sorted(graph):
        if not state.get(m):
            visit(m, [])
    assert not cycles, " ; ".join(" -> ".join(c) for c in cycles[:5])


def test_the_rules_see_a_planted_upward_import(tmp_path):
    """The reader must see an import inside a function (the rule's hardest case)."""
    f = tmp_path / "x.py"
    f.write_text("def f():\n    from verifiers import stats\n    return stats\n")
    assert "verifiers.stats" in _imports("algorithms.x", f)
