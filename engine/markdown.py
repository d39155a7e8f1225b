"""Markdown pieces every spec kind's report uses (engine/kinds/*/report.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from catalog.base import figure_link, fmt, log_scale, save_figure
from verifiers.checks import rule_for

__all__ = ["ICON", "check_heading", "figure_link", "fmt", "log_scale", "notes_lines", "save_figure", "rows_table", "save_epsilon_plot", "verdict_table"]

ICON = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE", "inapplicable": "INAPPLICABLE"}


SIDE = {"pass": "pass", "fail": "fail", "inconclusive": "undecided"}
VERDICT_HEADER = "| check | kind | verdict | measured | bound | rule | margin | confidence | claims |"


def verdict_table(checks: list[dict], spec_checks: list[dict] | None = None,
                  rules: Mapping[str, Any] | None = None) -> list[str]:
    """The first screen of every report: one row per check, its verdict, the measured figure and the bound it was
    judged against (as its result records them), the rule that decided it and the margin by which it did, in words
    (verifiers.checks.rule_for, from the stored result and the spec's entry for the check; kinds that do not yet
    describe their rule point to their section), the test's confidence and the claims it cites; the sections below
    give each check's rows and reasons."""
    if not checks:
        return []
    entries = {c["id"]: c for c in spec_checks or [] if isinstance(c, dict) and "id" in c}
    out = [VERDICT_HEADER, "|---|---|---|---|---|---|---|---|---|"]
    for ch in checks:
        try:
            rule = rule_for(ch, entries.get(ch["id"]), rules)
        except (KeyError, TypeError, ValueError, ZeroDivisionError):   # a result a describer cannot read: the
            rule = None                                                   # section below still has everything
        if rule is not None and rule.side != SIDE.get(ch["verdict"]):
            # the check decided on something its stored rows do not show (e.g. a condition outside them): say so
            # rather than print a margin that points the other way
            how, margin = rule.text, f"decided by a condition in its section below ({ch['verdict']})"
        elif rule is not None:
            how, margin = rule.text, rule.margin
        elif ch["verdict"] == "inapplicable":
            how, margin = "not judged", "see its section (the reason)"
        else:
            how, margin = "in its section below", "-"
        claims = "; ".join(ch.get("claims") or []) or "-"
        out.append(f"| {ch['id']} | {ch['kind']} | {ICON[ch['verdict']]} | {fmt(ch.get('measured'))} | "
                   f"{fmt(ch.get('bound'))} | {_cell(how)} | {_cell(margin)} | {fmt(ch.get('confidence'))} | {claims} |")
    return out + [""]


def _cell(text: str) -> str:
    """Text in a markdown table cell: a '|' would end the cell."""
    return text.replace("|", "\\|")


def notes_lines(r: dict) -> list[str]:
    """The spec's notes (what a reader must know to judge its verdicts: controls, caveats, choices), under the
    description."""
    notes = (r.get("spec") or {}).get("notes")
    return [f"**Notes.** {' '.join(str(notes).split())}", ""] if notes else []


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

    log_scale(ax)
    ax.set_xlabel(r["sweep"]["field"])
    ax.set_ylabel(f"epsilon at delta = {r['spec']['params']['delta']:g}")
    ax.set_title(r["name"])
    ax.legend(fontsize=7)
    fig.tight_layout()
    return save_figure(fig, out_dir, r["name"])
