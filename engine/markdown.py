"""Markdown pieces every spec kind's report uses (engine/kinds/*/report.py)."""
from __future__ import annotations

from pathlib import Path

from catalog.base import figure_link, fmt, save_figure

__all__ = ["ICON", "check_heading", "figure_link", "fmt", "save_figure", "rows_table", "save_epsilon_plot", "verdict_table"]

ICON = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE", "inapplicable": "INAPPLICABLE"}


def verdict_table(checks: list[dict]) -> list[str]:
    """The first screen of every report: one row per check, its verdict, the measured figure and the bound it was
    judged against (as its result records them), their ratio, the test's confidence and the claims it cites; the
    sections below give each check's rule, rows and reasons."""
    if not checks:
        return []
    out = ["| check | kind | verdict | measured | bound | measured / bound | confidence | claims |",
           "|---|---|---|---|---|---|---|---|"]
    for ch in checks:
        m, b = ch.get("measured"), ch.get("bound")
        ratio = (m / b if isinstance(m, (int, float)) and isinstance(b, (int, float)) and b not in (0, 0.0)
                 and not isinstance(m, bool) else None)
        claims = "; ".join(ch.get("claims") or []) or "-"
        out.append(f"| {ch['id']} | {ch['kind']} | {ICON[ch['verdict']]} | {fmt(m)} | {fmt(b)} | {fmt(ratio)} | "
                   f"{fmt(ch.get('confidence'))} | {claims} |")
    return out + [""]


def check_heading(ch: dict) -> list[str]:
    return ["", f"### {ch['id']}: {ICON[ch['verdict']]}", "", f"*{ch['kind']}* — {ch['citation']}", "", ch["summary"]]


def rows_table(rows) -> list[str]:
    if not rows:
        return []
    keys = list(rows[0])
    return (["", "| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
            + ["| " + " | ".join(fmt(row.get(k)) for k in keys) + " |" for row in rows])


def save_epsilon_plot(fig, ax, r: dict, out_dir: Path) -> str:
    """Log-log axes, labels and the file for a plot of epsilon against the swept parameter."""

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r["sweep"]["field"])
    ax.set_ylabel(f"epsilon at delta = {r['spec']['params']['delta']:g}")
    ax.set_title(r["name"])
    ax.legend(fontsize=7)
    fig.tight_layout()
    return save_figure(fig, out_dir, r["name"])
