"""What every spec kind's results share: the run's stamp (code version, package versions, Python, the command),
JSON-ready values, the verdict counts, and the key a sweep value's random streams derive from."""
from __future__ import annotations

import math
import platform
import shlex
import struct
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np

import engine
from verifiers.checks import VERDICTS


def value_key(value: float | None) -> int:
    """A sweep value as a non-negative integer (its float64 bits), for seeding: a point's numbers depend
    on its value, not on its position in the sweep, so adding a sweep value changes no other point."""
    return 0 if value is None else int.from_bytes(struct.pack("<d", float(value)), "little") + 1


def run_stamp() -> dict:
    """What every results file says about how it was made: code version, packages, Python, the command."""
    return {"code_version": code_version(), "packages": package_versions(), "python": platform.python_version(),
            "command": " ".join(shlex.quote(a) for a in ["python", "-m", "engine"] + sys.argv[1:])}


def jsonable(x):
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, (np.floating, float)):
        return float(x) if math.isfinite(x) else str(float(x))
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def code_version() -> str:
    here = Path(__file__).resolve().parent.parent         # the repository
    try:
        out = subprocess.run(["git", "describe", "--always", "--abbrev=12"], cwd=here,
                             capture_output=True, text=True, timeout=10)
        if out.returncode == 0 and out.stdout.strip():
            # changes to the committed reports (which runs rewrite) do not make the code dirty
            status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                     ":(exclude)reports"], cwd=here, capture_output=True, text=True, timeout=10)
            dirty = "-dirty" if status.stdout.strip() else ""
            return f"{engine.__version__}+git.{out.stdout.strip()}{dirty}"
    except (OSError, subprocess.SubprocessError):
        pass
    return engine.__version__


def package_versions() -> dict[str, str]:
    names = ["numpy", "scipy", "sympy", "pandas", "pyyaml", "pydantic", "dp-accounting", "matplotlib"]
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def verdict_counts(checks: list[dict]) -> dict[str, int]:
    """How many checks reached each verdict, from the check rows themselves."""
    return {v: sum(c["verdict"] == v for c in checks) for v in VERDICTS}
