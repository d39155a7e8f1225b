"""Stored results (JSON) -> the markdown report and its plots, through the spec kind that wrote them
(engine/kinds/). No recomputation."""
from __future__ import annotations

import json
from pathlib import Path

from engine.kinds import SPEC_KINDS, upgrade_results


def write(results: dict, out_dir: Path) -> tuple[Path, Path]:
    """Write the results JSON (and those of its sub-results, e.g. a comparison's runs) and render each."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for sub in SPEC_KINDS.get(results["kind"]).sub_results(results):     # each run's own report next to its parent's
        write(sub, out_dir)
    json_path = out_dir / f"{results['name']}.json"
    json_path.write_text(json.dumps(results, indent=1, sort_keys=False) + "\n")
    return json_path, render(json_path)


def render(json_path: Path) -> Path:
    results = upgrade_results(json.loads(Path(json_path).read_text()), str(json_path))
    out_dir = Path(json_path).parent
    md = out_dir / f"{results['name']}.md"
    md.write_text(SPEC_KINDS.get(results["kind"]).markdown(results, out_dir))
    return md
