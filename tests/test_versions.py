"""Reproducible across dependency releases: constraints.txt pins, exactly, every distribution the project names
(its dependencies and the extras tox installs), and a report rendered with other versions than its results were
made with says so."""
from __future__ import annotations

import json
import re
import tomllib
from importlib import metadata
from pathlib import Path

from engine import render

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = ("test", "cluster", "lint", "types")       # the extras the tox environments install
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _name(line: str) -> str:
    m = _NAME.match(line)
    assert m, f"no distribution name in {line!r}"
    return m.group(1)


def _pins() -> dict[str, str]:
    """constraints.txt as {normalised name: the line's specifier}."""
    out = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name = _name(line)
            assert _norm(name) not in out, f"{name} pinned twice"
            out[_norm(name)] = line[len(name):].strip()
    return out


def _named() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for extra in EXTRAS:
        reqs += project["optional-dependencies"][extra]
    return {_norm(_name(r)) for r in reqs}


def test_constraints_pin_every_named_distribution():
    missing = sorted(_named() - set(_pins()))
    assert not missing, f"constraints.txt does not pin {missing}"


def test_every_pin_is_exact():
    loose = {n: spec for n, spec in _pins().items() if not re.fullmatch(r"==\s*[0-9][0-9A-Za-z.+!-]*", spec)}
    assert not loose, f"not an exact pin (name==version): {loose}"


def test_version_drift_reports_a_changed_version_and_is_silent_when_equal():
    numpy = metadata.version("numpy")
    assert render.version_drift({"numpy": numpy, "scipy": metadata.version("scipy")}) == []
    assert render.version_drift({}) == []
    assert render.version_drift({"numpy": "0.0.1", "scipy": metadata.version("scipy")}) == [
        f"numpy 0.0.1 (installed: {numpy})"]


def _copy(tmp_path: Path, name: str, packages: dict | None) -> Path:
    """A committed results file written into tmp_path with its recorded versions replaced (None: removed)."""
    results = json.loads((ROOT / "reports" / f"{name}.json").read_text())
    results.pop("packages")
    if packages is not None:
        results["packages"] = packages
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(results))
    return path


def _installed(name: str) -> dict[str, str]:
    recorded = json.loads((ROOT / "reports" / f"{name}.json").read_text())["packages"]
    return {n: metadata.version(n) for n in recorded}


def test_a_report_of_other_versions_says_so(tmp_path):
    packages = _installed("mbsgd_lemma_d6") | {"numpy": "0.0.1"}        # only numpy differs, whatever is installed
    lines = render.render(_copy(tmp_path, "mbsgd_lemma_d6", packages)).read_text().splitlines()
    note = (f"Note: made with numpy 0.0.1 (installed: {metadata.version('numpy')}); re-run to check the numbers "
            "with the installed versions.")
    assert lines[:3] == ["# mbsgd_lemma_d6", "", note]                  # under the title, before the description
    assert lines[3] == "" and lines[4].startswith("Lemma D.6(1)")


def test_results_with_the_installed_versions_or_none_recorded_get_no_note(tmp_path):
    md = render.render(_copy(tmp_path, "mbsgd_lemma_d6", _installed("mbsgd_lemma_d6"))).read_text()
    assert "Note: made with" not in md
    # an old results file without `packages` (a mechanism's: the learning report itself prints the versions)
    assert "Note: made with" not in render.render(_copy(tmp_path, "p1d_sum", None)).read_text()
