"""Results as tables for other tools: the checks table (one row per check: verdict, measured, bound, confidence,
the claims it cites), the per-trial measurements of a learning run, and a JUnit XML of the checks for CI systems
(a failed check is a failure, an inconclusive or inapplicable one is skipped with its reason). Pure functions of a
results dict; the CLI (``run --csv DIR --junit FILE``) and the Python API (``engine.run``) write them."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd

CHECK_COLUMNS = ("spec", "id", "kind", "verdict", "measured", "bound", "confidence", "theorem", "claims", "summary",
                 "citation")


def _number(x: object) -> float | None:
    """A stored figure as a float: results write inf and nan as the strings 'inf', '-inf', 'nan' (JSON has none)."""
    if x is None or isinstance(x, bool):
        return None
    try:
        return float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def checks_frame(results: dict) -> pd.DataFrame:
    """One row per check of a run (a comparison's own checks; its runs' checks are in their own results)."""
    rows = [{"spec": results["name"], "id": c["id"], "kind": c["kind"], "verdict": c["verdict"],
             "measured": _number(c.get("measured")), "bound": _number(c.get("bound")),
             "confidence": _number(c.get("confidence")),
             "theorem": c.get("theorem"), "claims": " & ".join(c.get("claims") or ()),
             "summary": " ".join(str(c.get("summary", "")).split()), "citation": c.get("citation", "")}
            for c in results["checks"]]
    return pd.DataFrame(rows, columns=list(CHECK_COLUMNS))


def trials_frame(results: dict) -> pd.DataFrame | None:
    """One row per (sweep point, trial) of a learning run's scalar measurements (vector ones are left out of a
    table); None for kinds without per-trial measurements (mechanisms, curves, comparisons)."""
    if results.get("kind", "learning") != "learning":
        return None
    symbol = results["sweep"]["symbol"] if results.get("sweep") else None
    frames = []
    for p in results["points"]:
        cols = {k: [_number(x) for x in v] for k, v in p["measurements"].items() if not (v and isinstance(v[0], list))}
        m = pd.DataFrame(cols)
        m.insert(0, "trial", range(len(m)))
        if symbol is not None:
            m.insert(0, symbol, p["value"])
        m.insert(0, "spec", results["name"])
        frames.append(m)
    return pd.concat(frames, ignore_index=True) if frames else None


def junit_xml(results: dict) -> str:
    """A JUnit XML test suite: one test case per check."""
    checks = results["checks"]
    counts = results["verdict_counts"]
    suite = ET.Element("testsuite", name=results["name"], tests=str(len(checks)), failures=str(counts["fail"]),
                       errors="0", skipped=str(counts["inconclusive"] + counts["inapplicable"]),
                       time=f"{float(results.get('seconds', 0.0)):.3f}")
    for c in checks:
        case = ET.SubElement(suite, "testcase", classname=f"privbench.{results['name']}", name=c["id"])
        text = (f"{c['kind']}: measured {c.get('measured')}, bound {c.get('bound')}, confidence "
                f"{c.get('confidence')}; {' '.join(str(c.get('summary', '')).split())}")
        if c["verdict"] == "fail":
            ET.SubElement(case, "failure", message=f"{c['id']} failed", type="fail").text = text
        elif c["verdict"] in ("inconclusive", "inapplicable"):
            ET.SubElement(case, "skipped", message=f"{c['verdict']}: {text}"[:500])
        ET.SubElement(case, "system-out").text = c.get("citation", "")
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def _tables(results: dict) -> dict[str, pd.DataFrame]:
    """The tables of a run, by file-name suffix: checks, and a learning run's trials."""
    trials = trials_frame(results)
    return {"checks": checks_frame(results)} | ({"trials": trials} if trials is not None else {})


def write_csv(results: dict, folder: Path) -> list[Path]:
    """DIR/<name>_checks.csv and, for a learning run, DIR/<name>_trials.csv; the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for suffix, frame in _tables(results).items():
        out.append(folder / f"{results['name']}_{suffix}.csv")
        frame.to_csv(out[-1], index=False)
    return out


def parquet_engine() -> str:
    """The Parquet writer pandas will use (pyarrow, the optional extra ``parquet``); a one-line error without it."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        from engine.specbase import SpecError

        raise SpecError("command line", "--parquet",
                        "needs pyarrow, which is not installed: pip install 'privbench[parquet]'") from None
    return "pyarrow"


def write_parquet(results: dict, folder: Path) -> list[Path]:
    """The same tables as write_csv, as DIR/<name>_checks.parquet and DIR/<name>_trials.parquet (column types kept:
    verdicts as text, measured figures as float64, trial numbers as integers); the paths written."""
    engine = parquet_engine()
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for suffix, frame in _tables(results).items():
        out.append(folder / f"{results['name']}_{suffix}.parquet")
        frame.to_parquet(out[-1], engine=engine, index=False)
    return out
