"""Stored results (JSON) -> the markdown report and its plots. No recomputation."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scipy.stats import t as student_t

ICON = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE", "inapplicable": "INAPPLICABLE"}


def _fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, (int, float)):
        return f"{x:.4g}"
    return str(x)


def write(results: dict, out_dir: Path) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    if results.get("kind") == "comparison":            # each run's own report next to the comparison's
        for sw in results["sweeps"]:
            for sub in sw["runs"].values():
                write(sub, out_dir)
    json_path = out_dir / f"{results['name']}.json"
    json_path.write_text(json.dumps(results, indent=1, sort_keys=False) + "\n")
    return json_path, render(json_path)


def render(json_path: Path) -> Path:
    results = json.loads(Path(json_path).read_text())
    out_dir = Path(json_path).parent
    md = out_dir / f"{results['name']}.md"
    if results.get("kind") == "privacy_curve":
        md.write_text(curve_markdown(results, _curve_plot(results, out_dir)))
        return md
    if results.get("kind") == "shuffle_protocol":
        md.write_text(protocol_markdown(results, _protocol_plot(results, out_dir)))
        return md
    if results.get("kind") == "comparison":
        md.write_text(comparison_markdown(results, _comparison_plots(results, out_dir)))
        return md
    figures = _plots(results, out_dir)
    md.write_text(markdown(results, figures))
    return md


def _check_heading(ch: dict) -> list[str]:
    return ["", f"### {ch['id']}: {ICON[ch['verdict']]}", "", f"*{ch['kind']}* — {ch['citation']}", "", ch["summary"]]


def _rows_table(rows) -> list[str]:
    if not rows:
        return []
    keys = list(rows[0])
    return (["", "| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
            + ["| " + " | ".join(_fmt(row.get(k)) for k in keys) + " |" for row in rows])


def curve_markdown(r: dict, figure: str) -> str:
    c = r["verdict_counts"]
    field = r["sweep"]["field"]
    fixed = {k: v for k, v in r["spec"]["params"].items() if k != field}
    lines = [f"# {r['name']}", "", r["description"].strip(), "",
             f"**Verdicts:** {c['pass']} pass, {c['fail']} fail, {c['inconclusive']} inconclusive, "
             f"{c['inapplicable']} inapplicable (of {len(r['checks'])} checks)", "",
             f"- Mechanism: {r['mechanism']}; bounds: {r['citation']}",
             f"- Fixed: {', '.join(f'{k} = {_fmt(v)}' for k, v in fixed.items())}; swept: {field}",
             f"- Made by `{r['command']}` with code version `{r['code_version']}` on {r['started']} "
             f"in {r['seconds']:.1f} s", "", f"![epsilon]({figure})", "",
             f"| {field} | epsilon, Thm 1 (upper) | order | epsilon, Thm 2 (lower) | order |"
             + "".join(f" {b} |" for b in r.get("baselines", {})),
             "|---|---|---|---|---|" + "---|" * len(r.get("baselines", {}))]
    lines += [f"| {_fmt(p['value'])} | {_fmt(p['upper']['epsilon'])} | {_fmt(p['upper']['order'])} | "
              f"{_fmt(p['lower']['epsilon'])} | {_fmt(p['lower']['order'])} |"
              + "".join(f" {_fmt(p['baselines'][b]['epsilon'])} |" for b in r.get("baselines", {}))
              for p in r["points"]]
    if r.get("baselines"):
        lines += ["", "Baselines (the paper's comparison curves; formulas and conventions in "
                  "verifiers/shuffle_baselines.py):", ""] + [f"- `{b}`: {what}" for b, what in r["baselines"].items()]
    if r["paper"]:
        lines += ["", "## The paper's numbers next to ours", "",
                  "Ours: Thm 1 + Lemma 1 (the paper's own bound), at the paper's setting where it says; the last "
                  "column is the most rounds at which that bound still certifies the paper's epsilon.", "",
                  f"| the paper's epsilon | what it is | at {field} | ours there | ours / paper | "
                  f"rounds within the paper's epsilon |", "|---|---|---|---|---|---|"]
        lines += [f"| {_fmt(p['paper_epsilon'])} | {p['what']} | {_fmt(p['at'])} | {_fmt(p['ours_thm1'])} | "
                  f"{_fmt(p['ratio'])} | {_fmt(p['rounds_for_it'])} |" for p in r["paper"]]
    for ch in r["checks"]:
        lines += _check_heading(ch)
    return "\n".join(lines) + "\n"


def _curve_plot(r: dict, out_dir: Path) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [p["value"] for p in r["points"]]
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    ax.plot(x, [p["upper"]["epsilon"] for p in r["points"]], "b-o", ms=3, lw=2.5, alpha=0.8, zorder=5,
            label="Thm 1 (upper) + Lemma 1")
    ax.plot(x, [p["lower"]["epsilon"] for p in r["points"]], "r-o", ms=3, label="Thm 2 (lower) + Lemma 1")
    styles = {"rdp_shuffle": "k", "fmt_kov": "m"}
    for b in r.get("baselines", {}):
        name, conv = b.split(":")
        ax.plot(x, [p["baselines"][b]["epsilon"] for p in r["points"]], styles[name] + ("-" if conv == "as_stated" else ":"),
                marker="s" if conv == "as_stated" else "x", ms=3, lw=1, zorder=6, label=f"{b}")
    for p in r.get("paper", []):
        ax.plot([p["at"]], [p["paper_epsilon"]], "k*", ms=9, label=f"paper: {p['what']}")
    return _save_epsilon_plot(fig, ax, r, out_dir)


def _save_epsilon_plot(fig, ax, r: dict, out_dir: Path) -> str:
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


def protocol_markdown(r: dict, figure: str | None) -> str:
    from engine.protocols import slack_summary

    c = r["verdict_counts"]
    field = r["sweep"]["field"] if r["sweep"] else None
    fixed = {k: v for k, v in r["spec"]["params"].items() if k != field and not (r["protocol"] == "p1d" and k == "d")}
    lines = [f"# {r['name']}", "", r["description"].strip(), "",
             f"**Verdicts:** {c['pass']} pass, {c['fail']} fail, {c['inconclusive']} inconclusive, "
             f"{c['inapplicable']} inapplicable (of {len(r['checks'])} checks)", "",
             f"- Protocol: {r['citation']}",
             f"- Fixed: {', '.join(f'{k} = {_fmt(v)}' for k, v in fixed.items())}" + (f"; swept: {field}" if field else ""),
             f"- Runs per point: {r['trials']}{' (quick mode)' if r['quick'] else ''} on fixed inputs drawn from seed "
             f"{r['seed']}; the analyzer's count is sampled exactly (one binomial draw of n b trials, rounding user by "
             f"user), never bit by bit",
             f"- Privacy: {r['points'][0]['privacy']['method']}; {slack_summary(r['points'])}",
             f"- Made by `{r['command']}` with code version `{r['code_version']}` on {r['started']} "
             f"in {r['seconds']:.1f} s", ""]
    if figure:
        lines += [f"![privacy]({figure})", ""]
    lines += [f"| {field or 'point'} | g | b | p | epsilon computed | epsilon claimed | MSE (runs) | MSE (exact) | "
              f"MSE bound | seconds (runs / privacy) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for p in r["points"]:
        pr, pc = p["privacy"], p["protocol"]
        mse_exact = sum(p["exact_variance"])
        lines.append(f"| {_fmt(p['value'])} | {pc['g']} | {pc['b']} | {pc['p']:.10f} | {_fmt(pr['epsilon'])} | "
                     f"{_fmt(pr['claim'])} | {_fmt(p['sq_error_moments'][0])} | {_fmt(mse_exact)} | "
                     f"{_fmt(p['mse_bound'])} | {p['seconds_runs']:.2f} / {pr['seconds']:.2f} |")
    for ch in r["checks"]:
        lines += _check_heading(ch) + _rows_table(ch["rows"])
    return "\n".join(lines) + "\n"


def _protocol_plot(r: dict, out_dir: Path) -> str | None:
    if not r["sweep"]:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [p["value"] for p in r["points"]]
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    ax.plot(x, [p["privacy"]["claim"] for p in r["points"]], "k--o", ms=3, label="claimed (the paper)")
    ax.plot(x, [p["privacy"]["epsilon"] for p in r["points"]], "b-o", ms=3, label="computed from the run's g, b, p")
    return _save_epsilon_plot(fig, ax, r, out_dir)


def markdown(r: dict, figures: dict[str, str]) -> str:
    c = r["verdict_counts"]
    lines = [f"# {r['name']}", "", r["description"].strip(), "",
             f"**Verdicts:** {c['pass']} pass, {c['fail']} fail, {c['inconclusive']} inconclusive, "
             f"{c['inapplicable']} inapplicable (of {len(r['checks'])} checks)", "",
             f"- Algorithm: {r['algorithm']['description']} ({r['algorithm']['citation']})",
             f"- Threat model: {r['spec']['threat_model']['kind']}, epsilon = {r['spec']['threat_model']['epsilon']}, "
             f"delta = {r['spec']['threat_model']['delta']}",
             f"- Data: {r['data_mode']}",
             f"- Trials per point: {r['trials']}{' (quick mode)' if r['quick'] else ''}; seed {r['seed']}",
             f"- Sweep: {r['sweep']['field'] + ' = ' + ', '.join(_fmt(p['value']) for p in r['points']) if r['sweep'] else 'none'}",
             f"- Made by `{r['command']}` with code version `{r['code_version']}` on {r['started']} "
             f"in {r['seconds']:.1f} s" + (f" ({r['reused_trials']} trials reused from the result store)"
                                             if r.get("reused_trials") else "")
             + f" (Python {r['python']}; {', '.join(f'{k} {v}' for k, v in r['packages'].items())})",
             "", "## Checks", "", "| id | kind | theorem | verdict | measured | bound | confidence |",
             "|---|---|---|---|---|---|---|"]
    for ch in r["checks"]:
        lines.append(f"| {ch['id']} | {ch['kind']} | {ch['theorem'] or '-'} | **{ICON[ch['verdict']]}** | "
                     f"{_fmt(ch['measured'])} | {_fmt(ch['bound'])} | {_fmt(ch['confidence'])} |")
    for ch in r["checks"]:
        lines += _check_heading(ch)
        if ch.get("trials_needed"):
            lines += ["", f"About {ch['trials_needed']} trials per point would decide it at this confidence."]
        lines += _rows_table(ch["rows"])
        if ch["id"] in figures:
            lines += ["", f"![{ch['id']}]({figures[ch['id']]})"]
    lines += ["", "## Measurements", "",
              "Mean over trials, its standard error and a two-sided 95% t interval (the checks use their own levels).", "",
              "| point | measure | trials | mean | s.e. | 95% CI | shared error |", "|---|---|---|---|---|---|---|"]
    for p in r["points"]:
        for name, values in p["measurements"].items():
            x = np.asarray(values, dtype=float)
            se = float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else float("nan")
            half = float(student_t.ppf(0.975, max(x.size - 1, 1))) * se
            shared = ", ".join(f"{k} {v:.2g}" for k, v in p.get("systematic", {}).get(name, {}).items()) or "-"
            lines.append(f"| {_fmt(p['value'])} | {name} | {x.size} | {_fmt(float(x.mean()))} | {_fmt(se)} | "
                         f"{_fmt(float(x.mean()) - half)} .. {_fmt(float(x.mean()) + half)} | {shared} |")
    lines += ["", "## Resolved parameters", "", "Where each value came from (paper calibration, our choice, or override):", ""]
    for p in r["points"]:
        head = f"{r['sweep']['field']} = {_fmt(p['value'])}" if r["sweep"] else "the single point"
        lines += [f"**{head}** ({p['seconds']:.2f} s, records {'materialised' if p['materialised'] else 'streamed'})", "",
                  "| parameter | value | source |", "|---|---|---|"]
        lines += [f"| {k} | {_fmt(v)} | {p['provenance'].get(k, '')} |" for k, v in p["params"].items()]
        lines.append("")
    return "\n".join(lines) + "\n"


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
                ax.plot(x, np.exp(extra["intercept"]) * x ** extra["slope"], "-", label=f"fit: slope {extra['slope']:.2f}")
            a = extra.get("exponent")
            if a is not None:
                ax.plot(x, mean[0] * (x / x[0]) ** a, "--", label=f"theorem: slope {a:.2f}")
            local = extra.get("local_exponent")
            if local is not None and a is not None and abs(local - a) > 1e-6:
                term = np.array([row["term"] for row in rows])
                ax.plot(x, mean[0] * term / term[0], ":", label=f"theorem's term (log factors): slope {local:.2f}")
            ax.set_xscale("log")
            ax.set_yscale("log")
        else:
            ax.errorbar(x, mean, yerr=[mean - np.array([row["lcl"] for row in rows]),
                                       np.array([row["ucl"] for row in rows]) - mean], fmt="o", label="measured mean (CI)")
            ax.plot(x, [row["bound"] for row in rows], "r--", label="explicit bound")
            if any(row.get("sup_risk") is not None for row in rows):
                ax.plot(x, [row.get("sup_risk") or np.nan for row in rows], "k:", label="sup_W F - F* (ceiling)")
            ax.set_xscale("log")
            ax.set_yscale("log")
        ax.set_xlabel(r["sweep"]["field"] if r["sweep"] else "point")
        ax.set_ylabel(ch["theorem"] or ch["kind"])
        ax.set_title(f"{ch['id']}: {ch['verdict']}")
        ax.legend(fontsize=8)
        fig.tight_layout()
        name = f"{r['name']}_{ch['id']}.png"
        fig.savefig(out_dir / name, dpi=90, metadata={"Software": None})
        plt.close(fig)
        figures[ch["id"]] = name
    return figures


def _risk_summary(point: dict) -> tuple[float, float]:
    x = np.asarray(point["measurements"]["excess_risk"], dtype=float)
    mc = point.get("systematic", {}).get("excess_risk", {}).get("mc_se", 0.0)
    return float(x.mean()), float(np.hypot(x.std(ddof=1) / np.sqrt(x.size), mc))


def comparison_markdown(r: dict, figures: dict[str, str]) -> str:
    from engine.comparison_spec import SWEEP_TAGS


    c = r["verdict_counts"]
    priv = r["spec"]["privacy"]
    lines = [f"# {r['name']}", "", r["description"].strip(), "",
             f"**Verdicts:** {c['pass']} pass, {c['fail']} fail, {c['inconclusive']} inconclusive, "
             f"{c['inapplicable']} inapplicable (of {len(r['checks'])} checks: the orderings, then every run's own)", "",
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
            lines += [f"![{sw['field']}]({figures[sw['field']]})", "",
                      "One panel per threat model: the measured mean excess risk (95% interval), the run's rate "
                      "(its hidden constant fitted as the median of measured/rate over the points, capped at L D) "
                      "and the trivial level F(w0) - F*.", ""]
        head = " | ".join(f"{u['id']} risk (s.e.)" for u in r["runs"])
        lines += [f"| {sw['symbol']} | {head} |", "|---|" + "---|" * len(r["runs"])]
        for i, v in enumerate(sw["values"]):
            cells = []
            for u in r["runs"]:
                m, se = _risk_summary(sw["runs"][u["id"]]["points"][i])
                cells.append(f"{_fmt(m)} ({_fmt(se)})")
            lines.append(f"| {_fmt(v)} | " + " | ".join(cells) + " |")
    for ch in r["checks"]:
        if ch["kind"] == "ordering":
            lines += _check_heading(ch)
            lines += _rows_table(ch["rows"])
    return "\n".join(lines) + "\n"


def _comparison_plots(r: dict, out_dir: Path) -> dict[str, str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from verifiers.catalog import THEOREMS
    from verifiers.ordering import capped_rate

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
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{u['threat_model']} ({u['algorithm']})", fontsize=9)
            ax.set_xlabel(sw["symbol"])
            ax.legend(fontsize=7)
        axes[0][0].set_ylabel("excess risk")
        fig.tight_layout()
        name = f"{r['name']}_{sw['symbol']}.png"
        fig.savefig(out_dir / name, dpi=90, metadata={"Software": None})
        plt.close(fig)
        figures[sw["field"]] = name
    return figures
