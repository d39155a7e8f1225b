"""The report of a privacy-curve spec: the curves' table, the checks and the plot."""
from __future__ import annotations

from pathlib import Path

from engine.markdown import check_heading, figure_link, fmt, notes_lines, save_epsilon_plot, verdict_table


def curve_markdown(r: dict, figure: str) -> str:
    c = r["verdict_counts"]
    field = r["sweep"]["field"]
    fixed = {k: v for k, v in r["spec"]["params"].items() if k != field}
    lines = [f"# {r['name']}", "", r["description"].strip(), "", *notes_lines(r),
             f"**Verdicts:** {c['pass']} pass, {c['fail']} fail, {c['inconclusive']} inconclusive, "
             f"{c['inapplicable']} inapplicable (of {len(r['checks'])} checks)", "",
             *verdict_table(r["checks"], r["spec"].get("checks")),
             f"- Mechanism: {r['mechanism']}; bounds: {r['citation']}",
             f"- Fixed: {', '.join(f'{k} = {fmt(v)}' for k, v in fixed.items())}; swept: {field}",
             f"- Made by `{r['command']}` with code version `{r['code_version']}` on {r['started']} "
             f"in {r['seconds']:.1f} s", "", figure_link(figure, "epsilon"), "",
             f"| {field} | epsilon, Thm 1 (upper) | order | epsilon, Thm 2 (lower) | order |"
             + "".join(f" {b} |" for b in r.get("baselines", {})),
             "|---|---|---|---|---|" + "---|" * len(r.get("baselines", {}))]
    lines += [f"| {fmt(p['value'])} | {fmt(p['upper']['epsilon'])} | {fmt(p['upper']['order'])} | "
              f"{fmt(p['lower']['epsilon'])} | {fmt(p['lower']['order'])} |"
              + "".join(f" {fmt(p['baselines'][b]['epsilon'])} |" for b in r.get("baselines", {}))
              for p in r["points"]]
    if r.get("baselines"):
        lines += ["", "Baselines (the paper's comparison curves; formulas and conventions in "
                  "verifiers/accountants/shuffle_baselines.py):", ""] + [f"- `{b}`: {what}" for b, what in r["baselines"].items()]
    if r["paper"]:
        lines += ["", "## The paper's numbers next to ours", "",
                  "Ours: Thm 1 + Lemma 1 (the paper's own bound), at the paper's setting where it says; the last "
                  "column is the most rounds at which that bound still certifies the paper's epsilon.", "",
                  f"| the paper's epsilon | what it is | at {field} | ours there | ours / paper | "
                  f"rounds within the paper's epsilon |", "|---|---|---|---|---|---|"]
        lines += [f"| {fmt(p['paper_epsilon'])} | {p['what']} | {fmt(p['at'])} | {fmt(p['ours_thm1'])} | "
                  f"{fmt(p['ratio'])} | {fmt(p['rounds_for_it'])} |" for p in r["paper"]]
    judged = [ch for ch in r["checks"] if ch["kind"] == "paper_value"]
    if judged:
        lines += ["", "## The paper's stated values, judged (paper_value checks)", "",
                  "Each at the swept value the paper states (or none: inapplicable), within a relative tolerance the "
                  "spec fixed from the paper's printed precision before the run.", "",
                  f"| check | curve | the paper's epsilon | at {field} | ours there | ours / paper - 1 | tolerance | "
                  f"verdict |", "|---|---|---|---|---|---|---|---|"]
        for ch in judged:
            spec = next(c for c in r["spec"]["checks"] if c["id"] == ch["id"])
            rel = ch.get("extra", {}).get("relative_error")
            lines.append(f"| {ch['id']} | {spec['curve']} | {fmt(spec['epsilon'])} | {fmt(spec['at'])} | "
                         f"{fmt(ch['measured'])} | {'-' if rel is None else f'{rel:+.2%}'} | {fmt(spec['tol'])} | "
                         f"{ch['verdict']} |")
    for ch in r["checks"]:
        lines += check_heading(ch)
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
    return save_epsilon_plot(fig, ax, r, out_dir)


def report(r: dict, out_dir: Path) -> str:
    return curve_markdown(r, _curve_plot(r, out_dir))
