"""The report of a mechanism spec: per point the parameters as run, privacy and error; the checks; the plot."""
from __future__ import annotations

from pathlib import Path

from engine.markdown import check_heading, fmt, rows_table, save_epsilon_plot


def protocol_markdown(r: dict, figure: str | None) -> str:
    from engine.kinds.mechanism.run import slack_summary

    c = r["verdict_counts"]
    field = r["sweep"]["field"] if r["sweep"] else None
    fixed = {k: v for k, v in r["spec"]["params"].items() if k != field and not (r["mechanism"] == "p1d" and k == "d")}
    lines = [f"# {r['name']}", "", r["description"].strip(), "",
             f"**Verdicts:** {c['pass']} pass, {c['fail']} fail, {c['inconclusive']} inconclusive, "
             f"{c['inapplicable']} inapplicable (of {len(r['checks'])} checks)", "",
             f"- Protocol: {r['citation']}",
             f"- Fixed: {', '.join(f'{k} = {fmt(v)}' for k, v in fixed.items())}" + (f"; swept: {field}" if field else ""),
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
        lines.append(f"| {fmt(p['value'])} | {pc['g']} | {pc['b']} | {pc['p']:.10f} | {fmt(pr['epsilon'])} | "
                     f"{fmt(pr['claim'])} | {fmt(p['sq_error_moments'][0])} | {fmt(mse_exact)} | "
                     f"{fmt(p['mse_bound'])} | {p['seconds_runs']:.2f} / {pr['seconds']:.2f} |")
    for ch in r["checks"]:
        lines += check_heading(ch) + rows_table(ch["rows"])
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
    return save_epsilon_plot(fig, ax, r, out_dir)


def report(r: dict, out_dir: Path) -> str:
    return protocol_markdown(r, _protocol_plot(r, out_dir))
