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


def tiny_onepass(**over) -> spec_mod.Spec:
    r = copy.deepcopy(raw("agd_smooth"))
    r["data"].update(N=4, n=2000, d=10)
    r["trials"] = 12
    r["sweep"] = None
    r["checks"] = [c for c in r["checks"] if c["kind"] != "rate"]
    r["expect"], r["expect_quick"] = {}, {}
    for k, v in over.items():
        r[k] = v
    return spec_mod.parse(r, "tiny_onepass")


def tiny_mbsgd(**over) -> spec_mod.Spec:
    r = copy.deepcopy(raw("mbsgd_convex"))
    r["data"].update(N=4, n=60, d=5)
    r["trials"] = 6
    r["sweep"] = None
    r["checks"] = [c for c in r["checks"] if c["kind"] != "rate"]
    r["expect"], r["expect_quick"] = {}, {}
    for k, v in over.items():
        r[k] = v
    return spec_mod.parse(r, "tiny_mbsgd")


def verdicts(results: dict) -> dict[str, str]:
    return {c["id"]: c["verdict"] for c in results["checks"]}
