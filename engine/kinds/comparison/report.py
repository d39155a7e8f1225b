"""The report of a comparison spec: every run's verdicts, the ordering checks and the per-threat-model panels."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.markdown import (
    ICON,
    check_heading,
    figure_link,
    fmt,
    log_scale,
    notes_lines,
    rows_table,
    save_figure,
    verdict_table,
)


def _risk_summary(point: dict) -> tuple[float, float]:
    x = np.asarray(point["measurements"]["excess_risk"], dtype=float)
    mc = point.get("systematic", {}).get("excess_risk", {}).get("mc_se", 0.0)
    return float(x.mean()), float(np.hypot(x.std(ddof=1) / np.sqrt(x.size), mc))


def comparison_markdown(r: dict, figures: dict[str, str]) -> str:
    from engine.kinds.comparison.spec import SWEEP_TAGS


    c = r["verdict_counts"]
    priv = r["spec"]["privacy"]
    lines = [f"# {r['name']}", "", r["description"].strip(), "", *notes_lines(r),
             f"**Verdicts:** {c['pass']} pass, {c['fail']} fail, {c['inconclusive']} inconclusive, "
             f"{c['inapplicable']} inapplicable (of {len(r['checks'])} checks: the orderings, then every run's own)", "",
             *verdict_table(r["checks"], r["spec"].get("checks")),
             f"- Privacy: epsilon = {priv['epsilon']}, delta = {priv['delta']} for every run (swept where a sweep says)",
             f"- Data: {r['spec']['data']['kind']}, {r['spec']['data']['n']} users, d = {r['spec']['data'].get('d')}; "
             f"loss {r['spec']['loss']['kind']}, domain diameter {r['spec']['loss']['diameter']}",
             f"- Trials per point: {r['trials']}{' (quick mode)' if r['quick'] else ''}; seed {r['seed']}",
             f"- Made by `{r['command']}` with code version `{r['code_version']}` on {r['started']} in "
             f"{r['seconds']:.1f} s (Python {r['python']})", ""]
    if r.get("notes"):
        lines += [r["notes"].strip(), ""]
    lines += ["## Runs", "", "| run | threat model | algorithm | silos | rate used for the ordering | its source |",
              "|---|---|---|---|---|---|"]
    lines += [f"| {u['id']} | {u['threat_model']} | {u['algorithm']}: {u['description']} ({u['citation']}) | "
              f"{u['silos']} | {u['rate_theorem']} | {u['rate_citation']} |" for u in r["runs"]]
    lines += ["", "## Checks", "", "| id | kind | run | verdict | report |", "|---|---|---|---|---|"]
    for ch in r["checks"]:
        if ch["kind"] == "ordering":
            lines.append(f"| {ch['id']} | ordering | {ch['better']} < {ch['worse']} | **{ICON[ch['verdict']]}** | below |")
    for sw in r["sweeps"]:
        for run_id, sub in sw["runs"].items():
            for ch in sub["checks"]:
                tag = f"{run_id}_{ch['id']}_{SWEEP_TAGS[sw['field']]}"
                lines.append(f"| {tag} | {ch['kind']} | {run_id} | **{ICON[ch['verdict']]}** | "
                             f"[{sub['name']}]({sub['name']}.md) |")
    for sw in r["sweeps"]:
        lines += ["", f"## Excess risk against {sw['field']}", ""]
        if sw["field"] in figures:
            lines += [figure_link(figures[sw["field"]], sw["field"]), "",
                      "One panel per threat model: the measured mean excess risk (95% interval), the run's rate "
                      "(its hidden constant fitted as the median of measured/rate over the points, capped at L D) "
                      "and the trivial level F(w0) - F*.", ""]
        head = " | ".join(f"{u['id']} risk (s.e.)" for u in r["runs"])
        lines += [f"| {sw['symbol']} | {head} |", "|---|" + "---|" * len(r["runs"])]
        for i, v in enumerate(sw["values"]):
            cells = []
            for u in r["runs"]:
                m, se = _risk_summary(sw["runs"][u["id"]]["points"][i])
                cells.append(f"{fmt(m)} ({fmt(se)})")
            lines.append(f"| {fmt(v)} | " + " | ".join(cells) + " |")
    for ch in r["checks"]:
        if ch["kind"] == "ordering":
            lines += check_heading(ch)
            lines += rows_table(ch["rows"])
    return "\n".join(lines) + "\n"


def _comparison_plots(r: dict, out_dir: Path) -> dict[str, str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from verifiers.checks.ordering import capped_rate
    from verifiers.theorems import THEOREMS

    figures = {}
    for sw in r["sweeps"]:
        runs = r["runs"]
        fig, axes = plt.subplots(1, len(runs), figsize=(3.2 * len(runs), 3.4), sharey=True, squeeze=False)
        x = np.asarray(sw["values"], dtype=float)
        for ax, u in zip(axes[0], runs):
            pts = sw["runs"][u["id"]]["points"]
            stats_ = [_risk_summary(p) for p in pts]
            mean = np.array([m for m, _ in stats_])
            se = np.array([s for _, s in stats_])
            ax.errorbar(x, np.maximum(mean, 1e-12), yerr=1.96 * se, fmt="o", label="measured (95% CI)")
            thm = THEOREMS.get(u["rate_theorem"])
            rate = np.array([capped_rate(thm, p["params"]) for p in pts])
            ok = mean > 0
            if ok.any():
                const = float(np.median(mean[ok] / rate[ok]))
                ax.plot(x, const * rate, "--", label=f"{const:.2g} x rate")
            trivial = [p["params"].get("Delta") for p in pts]
            if all(t is not None for t in trivial):
                ax.plot(x, trivial, "k:", label="F(w0) - F*")
            log_scale(ax)
            ax.set_title(f"{u['threat_model']} ({u['algorithm']})", fontsize=9)
            ax.set_xlabel(sw["symbol"])
            ax.legend(fontsize=7)
        axes[0][0].set_ylabel("excess risk")
        fig.tight_layout()
        figures[sw["field"]] = save_figure(fig, out_dir, f"{r['name']}_{sw['symbol']}")
    return figures


def report(r: dict, out_dir: Path) -> str:
    return comparison_markdown(r, _comparison_plots(r, out_dir))
