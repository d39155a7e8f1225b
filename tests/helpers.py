"""Small shared builders for the tests (tiny specs that run in a second or two)."""
from __future__ import annotations

import copy
from pathlib import Path

import yaml

from engine import spec as spec_mod

ROOT = Path(__file__).resolve().parent.parent
SPECS = sorted((ROOT / "specs").glob("*.yaml"))


def raw(name: str) -> dict:
    return yaml.safe_load((ROOT / "specs" / f"{name}.yaml").read_text())


def _tiny(name: str, file: str, data: dict, trials: int, **over) -> spec_mod.Spec:
    """A shipped spec shrunk to one small point, without its rate check (no sweep)."""
    r = copy.deepcopy(raw(name))
    r["data"].update(data)
    r["trials"] = trials
    r["sweep"] = None
    r["checks"] = [c for c in r["checks"] if c["kind"] != "rate"]
    r["expect"], r["expect_quick"] = {}, {}
    r.update(over)
    return spec_mod.parse(r, file)


def tiny_onepass(**over) -> spec_mod.Spec:
    return _tiny("agd_smooth", "tiny_onepass", {"N": 4, "n": 2000, "d": 10}, 12, **over)


def tiny_mbsgd(**over) -> spec_mod.Spec:
    return _tiny("mbsgd_convex", "tiny_mbsgd", {"N": 4, "n": 60, "d": 5}, 6, **over)


def verdicts(results: dict) -> dict[str, str]:
    return {c["id"]: c["verdict"] for c in results["checks"]}
