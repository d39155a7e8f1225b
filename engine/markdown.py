"""Markdown pieces every spec kind's report uses (engine/kinds/*/report.py)."""
from __future__ import annotations

from pathlib import Path

from catalog.base import fmt

__all__ = ["ICON", "check_heading", "fmt", "rows_table", "save_epsilon_plot"]

ICON = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE", "inapplicable": "INAPPLICABLE"}


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
    import matplotlib.pyplot as plt

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r["sweep"]["field"])
    ax.set_ylabel(f"epsilon at delta = {r['spec']['params']['delta']:g}")
    ax.set_title(r["name"])
    ax.legend(fontsize=7)
    fig.tight_layout()
    name = f"{r['name']}.png"
    fig.savefig(out_dir / name, dpi=90, metadata={"Software": None})
    plt.close(fig)
    return name
