"""The report of a mechanism spec: the verdicts, the entry's own lines (what ran and its privacy; its table of
points, catalog ``MechanismEntry.report``), the plot of the computed against the claimed epsilon, the checks."""
from __future__ import annotations

from pathlib import Path

from catalog import MECHANISMS
from engine.markdown import check_heading, figure_link, notes_lines, rows_table, save_epsilon_plot, verdict_table


def mechanism_markdown(r: dict, figure: str | None, own: str | None = None) -> str:
    entry = MECHANISMS.get(r["mechanism"])
    bullets, body = entry.report(r)
    c = r["verdict_counts"]
    lines = [f"# {r['name']}", "", r["description"].strip(), "", *notes_lines(r),
             f"**Verdicts:** {c['pass']} pass, {c['fail']} fail, {c['inconclusive']} inconclusive, "
             f"{c['inapplicable']} inapplicable (of {len(r['checks'])} checks)", "",
             *verdict_table(r["checks"], r["spec"].get("checks"), entry.check_rules),
             *bullets,
             *([f"- Neighbouring data sets (the relation the privacy checks decide): {r['neighbouring']['text']}"]
               if r.get("neighbouring") else []),
             *([f"- Data: {r['data']}"] if r.get("data") else []),
             f"- Made by `{r['command']}` with code version `{r['code_version']}` on {r['started']} "
             f"in {r['seconds']:.1f} s", ""]
    if figure:
        lines += [figure_link(figure, "privacy"), ""]
    if own:
        lines += [figure_link(own, r["mechanism"]), ""]
    lines += body
    for ch in r["checks"]:
        lines += check_heading(ch) + rows_table(ch["rows"])
    return "\n".join(lines) + "\n"


def _has_privacy(r: dict) -> bool:
    return "delta" in r["spec"]["params"] and all(
        isinstance(p.get("privacy"), dict) and {"epsilon", "claim"} <= set(p["privacy"]) for p in r["points"])


def _privacy_plot(r: dict, out_dir: Path) -> str | None:
    """The computed and the claimed epsilon against the swept parameter (a sweep whose points report both)."""
    if not r["sweep"] or not _has_privacy(r):
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [p["value"] for p in r["points"]]
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    ax.plot(x, [p["privacy"]["claim"] for p in r["points"]], "k--o", ms=3, label="claimed (the paper)")
    ax.plot(x, [p["privacy"]["epsilon"] for p in r["points"]], "b-o", ms=3, label="computed from the parameters as run")
    return save_epsilon_plot(fig, ax, r, out_dir)


def report(r: dict, out_dir: Path) -> str:
    entry = MECHANISMS.get(r["mechanism"])
    own = entry.figure(r, out_dir) if entry.figure is not None else None
    return mechanism_markdown(r, _privacy_plot(r, out_dir), own)
