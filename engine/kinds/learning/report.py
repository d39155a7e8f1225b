"""The report of a learning spec: the run, the checks with their rows, and the bound and rate plots."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.stats import t as student_t

from engine.kinds.learning.provenance import spec_provenance
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
from verifiers.theorems import THEOREMS


def markdown(r: dict, figures: dict[str, str]) -> str:
    c = r["verdict_counts"]
    lines = [f"# {r['name']}", "", r["description"].strip(), "", *notes_lines(r),
             f"**Verdicts:** {c['pass']} pass, {c['fail']} fail, {c['inconclusive']} inconclusive, "
             f"{c['inapplicable']} inapplicable (of {len(r['checks'])} checks)", "",
             *verdict_table(r["checks"], r["spec"].get("checks")),
             f"- Algorithm: {r['algorithm']['description']} ({r['algorithm']['citation']})",
             f"- Threat model: {r['spec']['threat_model']['kind']}, epsilon = {_claimed(r)}, "
             f"delta = {r['spec']['threat_model']['delta']}"
             + (f"; neighbouring data sets: {r['neighbouring']['text']}" if r.get("neighbouring") else ""),
             f"- Data: {r['data_mode']}",
             f"- Trials per point: {r['trials']}{' (quick mode)' if r['quick'] else ''}; seed {r['seed']}",
             f"- Sweep: {r['sweep']['field'] + ' = ' + ', '.join(fmt(p['value']) for p in r['points']) if r['sweep'] else 'none'}",
             f"- Made by `{r['command']}` with code version `{r['code_version']}` on {r['started']} "
             f"in {r['seconds']:.1f} s" + (f" ({r['reused_trials']} trials reused from the result store)"
                                             if r.get("reused_trials") else "")
             + f" (Python {r['python']}; {', '.join(f'{k} {v}' for k, v in r['packages'].items())})",
             "", "## Checks", "", "| id | kind | theorem | verdict | measured | bound | confidence |",
             "|---|---|---|---|---|---|---|"]
    for ch in r["checks"]:
        lines.append(f"| {ch['id']} | {ch['kind']} | {ch['theorem'] or '-'} | **{ICON[ch['verdict']]}** | "
                     f"{fmt(ch['measured'])} | {fmt(ch['bound'])} | {fmt(ch['confidence'])} |")
    for ch in r["checks"]:
        lines += check_heading(ch)
        if ch.get("trials_needed"):
            lines += ["", f"About {ch['trials_needed']} trials per point would decide it at this confidence."]
        lines += rows_table(ch["rows"])
        if ch["id"] in figures:
            lines += ["", figure_link(figures[ch["id"]], ch["id"])]
    lines += ["", "## Measurements", "",
              "Mean over trials, its standard error and a two-sided 95% t interval (the checks use their own levels).", "",
              "| point | measure | trials | mean | s.e. | 95% CI | shared error |", "|---|---|---|---|---|---|---|"]
    for p in r["points"]:
        for name, values in p["measurements"].items():
            x = np.asarray(values, dtype=float)
            se = float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else float("nan")
            half = float(student_t.ppf(0.975, max(x.size - 1, 1))) * se
            shared = ", ".join(f"{k} {v:.2g}" for k, v in p.get("systematic", {}).get(name, {}).items()) or "-"
            lines.append(f"| {fmt(p['value'])} | {name} | {x.size} | {fmt(float(x.mean()))} | {fmt(se)} | "
                         f"{fmt(float(x.mean()) - half)} .. {fmt(float(x.mean()) + half)} | {shared} |")
    lines += ["", "## Resolved parameters", ""] + parameter_table(r)
    return "\n".join(lines) + "\n"


OLD_NAMES = {"lam": "lambda", "stages": "schedule"}     # provenance keys of results stored before they were renamed


def parameter_table(r: dict) -> list[str]:
    """Every resolved parameter once, with its source (the paper's calibration, our choice, the spec, or an override)
    and its value at each sweep point (one column per point); a source that differs between points says where."""
    points = r["points"]
    spec_src = spec_provenance(r["spec"])
    names = list(dict.fromkeys(k for p in points for k in p["params"]))
    head = [f"{r['sweep']['symbol']} = {fmt(p['value'])}" for p in points] if r["sweep"] else ["value"]
    out = ["Where each value came from and what it was at each point:", "",
           "| parameter | source | " + " | ".join(head) + " |", "|---|---|" + "---|" * len(points)]
    for k in names:
        srcs = [p["provenance"].get(k) or p["provenance"].get(OLD_NAMES.get(k, "")) or spec_src.get(k)
                or "not recorded by the code that ran" for p in points]
        uniq = list(dict.fromkeys(srcs))
        src = uniq[0] if len(uniq) == 1 else "; ".join(
            f"{s} (at {', '.join(h for h, t in zip(head, srcs) if t == s)})" for s in uniq)
        out.append(f"| {k} | {src.replace('|', chr(92) + '|')} | " + " | ".join(fmt(p["params"].get(k)) for p in points) + " |")
    out.append("| (run) | seconds; records materialised or streamed | " + " | ".join(
        f"{p['seconds']:.2f} s, {'materialised' if p['materialised'] else 'streamed'}" for p in points) + " |")
    return out + [""]


def _plots(r: dict, out_dir: Path) -> dict[str, str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = {}
    for ch in r["checks"]:
        rows = ch["rows"]
        if ch["kind"] not in ("rate", "bound") or len(rows) < 2:
            continue
        x = np.array([row["point"] for row in rows], dtype=float)
        mean = np.array([row["mean"] for row in rows])
        fig, ax = plt.subplots(figsize=(5.5, 3.8))
        if ch["kind"] == "rate":
            se = np.array([row["se"] for row in rows])
            ax.errorbar(x, mean, yerr=1.96 * se, fmt="o", label="measured mean (95% CI)")
            extra = ch.get("extra", {})
            if "slope" in extra:
                ax.plot(x, np.exp(extra["intercept"]) * x ** extra["slope"], "-",
                        label=f"fit: slope {extra['slope']:.2f} (CI {extra['slope_lower']:.2f} .. "
                              f"{extra['slope_upper']:.2f})")
            a = extra.get("exponent")
            if a is not None:
                ax.plot(x, mean[0] * (x / x[0]) ** a, "--", label=f"theorem: slope {a:.2f} (must fall at least this fast)")
            local = extra.get("local_exponent")
            if local is not None and a is not None and abs(local - a) > 1e-6:
                term = np.array([row["term"] for row in rows])
                ax.plot(x, mean[0] * term / term[0], ":", label=f"theorem's term (log factors): slope {local:.2f}")
            log_scale(ax)
        else:
            ax.errorbar(x, mean, yerr=[mean - np.array([row["lcl"] for row in rows]),
                                       np.array([row["ucl"] for row in rows]) - mean], fmt="o", label="measured mean (two-sided interval of the check)")
            ax.plot(x, [row["bound"] for row in rows], "r--", label="the theorem's explicit bound")
            if any(row.get("sup_risk") is not None for row in rows):
                ax.plot(x, [row.get("sup_risk") or np.nan for row in rows], "k:", label="sup_W F - F* (ceiling)")
            log_scale(ax)
        ax.set_xlabel(f"{r['sweep']['symbol']} ({r['sweep']['field']}, log scale)" if r["sweep"] else "point")
        thm = THEOREMS.get(ch["theorem"]) if ch.get("theorem") in THEOREMS else None
        what = thm.measures.replace("_", " ") if thm is not None else ch["kind"]
        ax.set_ylabel(f"{what} (log scale)")
        ax.set_title(f"{ch['id']}: {what} against {r['sweep']['symbol'] if r['sweep'] else 'point'} "
                     f"({ch['verdict']})", fontsize=9)
        ax.legend(fontsize=8)
        fig.tight_layout()
        figures[ch["id"]] = save_figure(fig, out_dir, f"{r['name']}_{ch['id']}")
    return figures


def report(r: dict, out_dir: Path) -> str:
    return markdown(r, _plots(r, out_dir))


def _claimed(r: dict) -> str:
    """The spec's epsilon, or where the paper states epsilon at the run's parameters (the spec gives none), that."""
    eps = r["spec"]["threat_model"].get("epsilon")
    return str(eps) if eps is not None else "stated by the paper at each point (the claim before the run: eps0 below)"
