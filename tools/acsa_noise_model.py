"""A second method for the ERM rate specs (accelerated_mbsgd_erm on sphere_linear): the linear-noise model of a run.

Usage::

    python tools/acsa_noise_model.py RESULTS.json [--trials 4000] [--seed 1]

For every sweep point of a results file it runs the AC-SA rounds the point ran (algorithms.acsa.iterate with the
point's own stages: catalog.base.multistage for mu > 0, convex_single_stage for mu = 0, from the point's resolved R,
beta, V2, Delta, lam) on the quadratic F(w) = (lam_H/2)||w - w*||^2 of sphere_linear's population (lam_H = r^2/d +
mu, w* of norm ||c|| (r^2/d)/lam_H) with Gaussian gradient noise of the calibration's variance per coordinate,
sigma^2/M + phi2/(M d) (the silos' noise and a bound on the records' sampling spread), once with the domain's
projection and once without. It prints the model's mean excess risk (with its standard error) next to the run's
measured mean, and the log-log slope of each over the sweep: what the rate check's slope should be if nothing but
the noise and the projection shape the risk. Not a check: the data set's own Hessian and optimum are replaced by
the population's (isotropic; for the data sets of the shipped specs they differ by well under 1%).
"""
from __future__ import annotations

import argparse
import json
import math
import sys

import numpy as np

from algorithms import acsa
from catalog.base import convex_single_stage, multistage


def model(results: dict, trials: int, seed: int) -> list[dict]:
    spec = results["spec"]
    data, loss = spec["data"], spec["loss"]
    if data["kind"] != "sphere_linear" or spec["algorithm"]["kind"] != "accelerated_mbsgd_erm":
        raise SystemExit("acsa_noise_model: the results must be of accelerated_mbsgd_erm on sphere_linear")
    d, mu, rho, M = data["d"], loss["mu"], loss["diameter"] / 2, data["N"]
    r2 = data["radius"] ** 2
    lam_h = r2 / d + mu
    w_star = np.zeros(d)
    w_star[0] = (r2 / d) * data["w_norm"] / lam_h
    rng = np.random.default_rng(seed)
    rows = []
    for p in results["points"]:
        P = p["params"]
        R = int(P["R"])
        if mu > 0:
            stages, lam, prox = multistage(R=R, beta=P["beta"], mu=mu, V2=P["V2"], Delta=P["Delta"]), 0.0, mu
        else:
            lam = P["lam"]
            stages, prox = convex_single_stage(R=R, beta=P["beta"], lam=lam, V2=P["V2"], D=2 * rho, prov={}), lam
        sd = math.sqrt(P["sigma"] ** 2 / M + P["phi2"] / (M * d))
        row = {"value": p["value"], "R": R, "measured": float(np.mean(p["measurements"]["empirical_excess_risk"]))}
        def gradient(v: np.ndarray, sd: float = sd) -> np.ndarray:
            return lam_h * (v - w_star) + sd * rng.standard_normal(v.shape)

        for name, radius in (("projected", rho), ("free", math.inf)):
            w = acsa.iterate(tuple(stages), mu=prox, lam=lam, radius=radius, w_ag=np.zeros((trials, d)),
                             gradient=gradient)
            risk = 0.5 * lam_h * ((w - w_star) ** 2).sum(axis=1)
            row[name], row[name + "_se"] = float(risk.mean()), float(risk.std(ddof=1) / math.sqrt(trials))
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("--trials", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    with open(a.results) as f:
        rows = model(json.load(f), a.trials, a.seed)
    print(f"{'point':>8} {'R':>7} {'model, projected':>22} {'model, no projection':>22} {'measured':>10}")
    for r in rows:
        print(f"{r['value']:8.4g} {r['R']:7d} {r['projected']:12.4g} +- {r['projected_se']:7.2g} "
              f"{r['free']:12.4g} +- {r['free_se']:7.2g} {r['measured']:10.4g}")
    x = np.log([r["value"] for r in rows])
    for key in ("projected", "free", "measured"):
        print(f"slope ({key}): {np.polyfit(x, np.log([r[key] for r in rows]), 1)[0]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
