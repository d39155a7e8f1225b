"""Every report opens with one table of its checks (engine/markdown.py verdict_table): a row per check with its
verdict, measured figure, bound and cited claims, before anything else of the report. Rendered here from three
committed results of different kinds (no recomputation)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from engine.render import render

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["agd_smooth", "dp_shuffleg_noise_term", "shuffle_fig2a"])
def test_the_report_opens_with_a_row_per_check(tmp_path, name):
    src = ROOT / "reports" / f"{name}.json"
    shutil.copy(src, tmp_path / src.name)
    md = render(tmp_path / src.name).read_text().splitlines()
    checks = json.loads(src.read_text())["checks"]
    head = md.index("| check | kind | verdict | measured | bound | measured / bound | confidence | claims |")
    assert head < next(i for i, ln in enumerate(md) if ln.startswith("- ") or ln.startswith("!"))
    rows = md[head + 2: head + 2 + len(checks)]
    for ch, row in zip(checks, rows):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[0] == ch["id"] and cells[2] == ch["verdict"].upper()
        assert cells[7] == ("; ".join(ch["claims"]) or "-")
    assert not md[head + 2 + len(checks)].startswith("|")
