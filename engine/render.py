"""Stored results (JSON) -> the markdown report and its plots, through the spec kind that wrote them
(engine/kinds/). No recomputation."""
from __future__ import annotations

import json
import re
from importlib import metadata
from pathlib import Path

from engine.kinds import SPEC_KINDS, upgrade_results
from engine.specbase import SpecError
from engine.stamp import verdict_counts
from verifiers.checks import VERDICTS


def write(results: dict, out_dir: Path) -> tuple[Path, Path]:
    """Write the results JSON (and those of its sub-results, e.g. a comparison's runs) and render each."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for sub in SPEC_KINDS.get(results["kind"]).sub_results(results):     # each run's own report next to its parent's
        write(sub, out_dir)
    json_path = out_dir / f"{results['name']}.json"
    json_path.write_text(json.dumps(results, indent=1, sort_keys=False) + "\n")
    return json_path, render(json_path)


NAME = re.compile(r"^[a-z][a-z0-9_]*$")      # a spec's name (the spec models' pattern): a file name, never a path


def render(json_path: Path) -> Path:
    """The markdown report next to a results JSON. The file names come from the results' ``name``, which must be a
    spec name (no path); the verdict counts shown are recounted from the check rows, never read from the file."""
    results = upgrade_results(json.loads(Path(json_path).read_text()), str(json_path))
    if not isinstance(results["name"], str) or not NAME.match(results["name"]):
        raise SpecError(str(json_path), "name", f"{results['name']!r} is not a spec name (lower-case letters, digits "
                                                f"and _): the report's file names are derived from it")
    checks = results.get("checks", [])
    if not isinstance(checks, list) or any(not isinstance(c, dict) or c.get("verdict") not in VERDICTS for c in checks):
        raise SpecError(str(json_path), "checks", f"every check needs a verdict among {', '.join(VERDICTS)}")
    results = results | {"verdict_counts": verdict_counts(checks)}
    out_dir = Path(json_path).parent
    md = out_dir / f"{results['name']}.md"
    md.write_text(_with_drift_note(SPEC_KINDS.get(results["kind"]).markdown(results, out_dir),
                                   version_drift(results.get("packages") or {})))
    return md


def version_drift(recorded: dict) -> list[str]:
    """'numpy 2.4.6 (installed: 2.5.0)' for each package whose version recorded in the results (run_stamp's
    `packages`) differs from the installed one; [] when all agree or nothing was recorded (old results)."""
    out: list[str] = []
    for name, made_with in (recorded.items() if isinstance(recorded, dict) else ()):
        try:
            installed = metadata.version(str(name))
        except (metadata.PackageNotFoundError, ValueError):
            installed = "not installed"
        if str(made_with) != installed:
            out.append(f"{name} {made_with} (installed: {installed})")
    return out


def _with_drift_note(text: str, drift: list[str]) -> str:
    """The report with one note line after the blank line that follows its title (at the top if it has none)."""
    if not drift:
        return text
    note = f"Note: made with {', '.join(drift)}; re-run to check the numbers with the installed versions.\n\n"
    lines = text.splitlines(keepends=True)
    title = next((i for i, ln in enumerate(lines) if ln.startswith("# ")), None)
    blank = None if title is None else next((i for i in range(title + 1, len(lines)) if not lines[i].strip()), None)
    at = 0 if blank is None else blank + 1
    return "".join(lines[:at]) + note + "".join(lines[at:])
