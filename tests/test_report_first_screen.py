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


@pytest.mark.parametrize("name", ["agd_smooth", "shuffle_fig2a", "threat_models_logistic", "shuffleg_grid_cancer"])
def test_every_figure_has_a_vector_copy_linked_beside_it(tmp_path, name):
    """Each kind's figures come as PNG (for the page) and SVG (for a paper), the SVG linked under the PNG, and the SVG
    is the same bytes when the same results are rendered again (no timestamp, fixed element ids)."""
    src = ROOT / "reports" / f"{name}.json"
    shutil.copy(src, tmp_path / src.name)
    md = render(tmp_path / src.name).read_text()
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert pngs
    first = {}
    for png in pngs:
        svg = tmp_path / (png[:-4] + ".svg")
        assert svg.read_text().lstrip().startswith("<?xml") and "<svg" in svg.read_text()
        assert f"]({png})" in md and f"]({svg.name})" in md
        first[svg.name] = svg.read_bytes()
    render(tmp_path / src.name)
    assert all((tmp_path / n).read_bytes() == b for n, b in first.items())


@pytest.mark.parametrize("x, text", [(14142.0, "14142"), (14142, "14142"), (1e8, "1e+08"), (0.123456, "0.1235"),
                                     (2.0, "2"), (None, "-"), (True, "yes"), (float("inf"), "inf")])
def test_numbers_print_at_a_sensible_precision(x, text):
    from engine.markdown import fmt

    assert fmt(x) == text
