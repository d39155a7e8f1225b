"""Small shared builders for the tests (tiny specs that run in a second or two)."""
from __future__ import annotations

import copy
from pathlib import Path

import yaml

from engine.kinds.learning import spec as spec_mod

ROOT = Path(__file__).resolve().parent.parent
SPECS = sorted((ROOT / "specs").glob("*.yaml"))


def raw(name: str) -> dict:
    return yaml.safe_load((ROOT / "specs" / f"{name}.yaml").read_text())


def _tiny(name: str, file: str, data: dict, trials: int, audit: bool = False, **over) -> spec_mod.Spec:
    """A shipped spec shrunk to one small point, without its rate check (no sweep) and, unless asked for,
    without its privacy audit (the tests that need one say so)."""
    r = copy.deepcopy(raw(name))
    r["data"].update(data)
    r["trials"] = trials
    r["sweep"] = None
    drop = {"rate"} | (set() if audit else {"privacy_audit"})
    r["checks"] = [c for c in r["checks"] if c["kind"] not in drop]
    r["expect"], r["expect_quick"] = {}, {}
    r.update(over)
    return spec_mod.parse(r, file)


def tiny_onepass(audit: bool = False, **over) -> spec_mod.Spec:
    return _tiny("agd_smooth", "tiny_onepass", {"N": 4, "n": 2000, "d": 10}, 12, audit, **over)


def tiny_mbsgd(audit: bool = False, **over) -> spec_mod.Spec:
    return _tiny("mbsgd_convex", "tiny_mbsgd", {"N": 4, "n": 60, "d": 5}, 6, audit, **over)


def verdicts(results: dict) -> dict[str, str]:
    return {c["id"]: c["verdict"] for c in results["checks"]}


def plant_noise_twice_too_small(monkeypatch) -> None:
    """The planted fault of the accountant-calibrated P_GD tests: every composed calibration returns P_VEC at twice
    the per-coordinate eps_c it found (the noise's scale about halved)."""
    from catalog import pvec_calibration

    real = pvec_calibration.calibrate_composed

    def too_large_eps_c(n, d, eps, delta, Delta2, calls, delta_call):
        pv = real(n, d, eps, delta, Delta2, calls, delta_call)
        return pvec_calibration._params(n, d, 2 * pv.eps_hat, delta_call, Delta2, calls)

    monkeypatch.setattr(pvec_calibration, "calibrate_composed", too_large_eps_c)
