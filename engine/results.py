"""Stored results as a pandas DataFrame, for notebooks.

    >>> import engine
    >>> df = engine.load_results("reports/agd_smooth.json")
    >>> df.groupby("n")["excess_risk"].agg(["mean", "sem"])          # doctest: +SKIP
    >>> df.attrs["checks"]["rate_n"]["verdict"]                        # doctest: +SKIP
    'pass'
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd


def load_results(path: str | Path) -> pd.DataFrame:
    """One row per (sweep point, trial) of a results JSON written by ``python -m engine run``.

    Columns: ``spec``, the swept field under its theorem symbol (e.g. ``n``, ``eps0``; absent without a
    sweep), ``trial`` and one column per measurement (``excess_risk``, ``empirical_excess_risk``,
    ``grad_variance``, ...; a vector measurement, such as ``model``, holds one numpy array per trial). ``df.attrs`` holds ``checks`` (check id -> its result), ``params`` (one dict
    of resolved parameters per sweep point) and the run's ``seed``, ``code_version`` and ``command``.
    """
    r = json.loads(Path(path).read_text())
    symbol = r["sweep"]["symbol"] if r.get("sweep") else None
    frames = []
    for p in r["points"]:
        m = pd.DataFrame({k: [np.asarray(x) for x in v] if v and isinstance(v[0], list) else v
                          for k, v in p["measurements"].items()})
        m.insert(0, "trial", range(len(m)))
        if symbol is not None:
            m.insert(0, symbol, p["value"])
        m.insert(0, "spec", r["name"])
        frames.append(m)
    df = pd.concat(frames, ignore_index=True)
    df.attrs.update(checks={c["id"]: c for c in r["checks"]}, params=[p["params"] for p in r["points"]],
                    seed=r["seed"], code_version=r["code_version"], command=r["command"])
    return df
