"""Checks of seed 002's asymptotic normality of element-level private SGD (Asi, Duchi, Javidi; the ``element_sgd``
mechanism, catalog/element_sgd_002.py): numbers in, verdicts out. Lnnn = line of ../shared/seeds/002_d3919fba655c6f58.txt.

A point holds Y = sqrt(n)(theta_bar - theta*) of every trial (trials x d), the predicted covariances of Thm 1 /
Prop 3 (``paper``: H^-1(Sigma + (1/gamma)(Sigma/m_b + rho^2 sigma^2 I/m_b^2))H^-1; ``literal``: the printed bracket
of L349 read as written; ``finite_q``), their Monte Carlo relative errors, and the Example 3 quantities.

- ``covariance``: the empirical covariance S of Y against the prediction P. Five ratios: tr S / tr P, lambda_max(S)
  / lambda_max(P), tr(P^-1 S)/d (the mean of the generalised eigenvalues) and the smallest and the largest eigenvalue
  of P^-1 S (all 1 exactly when S = P: the averages alone can be 1 while S and P differ in two directions). Each
  ratio's interval: exp(log r +- z se), se the bootstrap standard error of log r over the trials (BOOTSTRAP
  resamples, a fixed seed), z at the check's confidence with Bonferroni over the five ratios, widened by the
  prediction's Monte Carlo error. An asymptotic claim is never exact at finite n, so the rule has a tolerance: a point
  passes when every interval lies inside [1 - TOL, 1 + TOL], fails when one lies entirely outside, else is
  inconclusive. The verdict is that of the largest n of the spec (the claim is about n -> infinity); the smaller n
  are shown, with whether the discrepancy max |r - 1| falls with n. The literal grouping's trace ratio is reported.
  Points outside the claim's hypotheses (rho < L0: clipping may be active, A2 / L343; beta outside (1/2, 1), Thm 1)
  are inapplicable.
- ``centred``: the limit is centred at theta* (Prop 3's N(0, .), with Example 3's theta_el* = theta*): the bias
  ||mean Y|| relative to the predicted spread sqrt(tr P), with a chi-square confidence ball of the mean (radius
  sqrt(chi2_d(conf) lambda_max(S)/trials)): pass when its upper end is at most TOL_BIAS, fail when its lower end is
  above, else inconclusive, at the largest n. Also shown: Hotelling's T^2 p-value at every point, and the slope of
  log RMSE(theta_bar) in log n (about -1/2 when the sqrt(n) rate holds).
- ``el_minimiser``: Example 3 (L360-364): for the well-specified logistic model theta_el* = argmin L_el = theta*.
  Newton's minimiser of the empirical element risk of a large fresh sample of users against theta* (Mahalanobis
  distance with the sandwich covariance, chi-square with d degrees of freedom), and grad L_el(theta*) = 0 on another
  sample (Hotelling). Fail if either rejects at the check's confidence; pass if neither does and the minimiser's
  confidence ellipsoid is small (largest semi-axis <= TOL_MIN ||theta*||), else inconclusive.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np
from scipy import stats

from algorithms.registry import Registry
from verifiers.checks.base import CheckResult, Rule, cite, side_of
from verifiers.stats import weighted_slope

SEED = "seed 002 (Asi, Duchi, Javidi)"
L0 = 2.0                      # sup ||grad l|| for the §4.2 data (||x|| <= 2): rho >= L0 is Prop 3's "no clipping"
TOL = 0.2                     # covariance ratios within 20% of 1 at the largest n
TOL_BIAS = 0.25               # |bias| at most a quarter of the predicted asymptotic spread sqrt(tr P)
TOL_MIN = 0.05                # Example 3: the minimiser located to within 5% of ||theta*|| (= 1)
BOOTSTRAP = 400
BOOT_SEED = 20020
RATIOS = ("trace", "top", "whitened", "gen_min", "gen_max")
NO_POINT = "no point meets the claim's hypotheses (rho >= L0, beta in (1/2, 1)), so this run decides nothing"

CITE_THM1 = "Thm 1 (L293-297; iteration (14), L283)"
CITE_PROP3 = ("Prop 3 (L345-349; Alg. 1, L303-315; iteration (15), L319-325; the bracket of L349 read as "
              "H^-1(Sigma + (Sigma/m + rho^2 sigma^2 I/m^2)/gamma)H^-1, m = q n the batch size, L333)")
CITE_EX3 = "Example 3 (L360-364): theta* = argmin L_el for a well-specified GLM; the model of §4.2 (L385-389)"


def _claims(points: list[dict]) -> tuple[tuple[str, ...], str]:
    """Prop 3 always; Thm 1 too when every point is its iteration (14): one user per step (m_b = 1, L283)."""
    if points and all(pt["params"]["batch"] == 1 and not pt["params"]["poisson"] for pt in points):
        return ("002 Thm 1", "002 Prop 3 (asymptotic)"), f"{SEED}: {CITE_THM1}, the case m = 1 of {CITE_PROP3}"
    return ("002 Prop 3 (asymptotic)",), f"{SEED}: {CITE_PROP3}, from {CITE_THM1}"


def _outside(pt: dict) -> str | None:
    p = pt["params"]
    if p["rho"] < L0:
        return f"rho = {p['rho']:g} < L0 = {L0:g}: clipping may be active (Prop 3 assumes rho >= L0, L343-345)"
    if not 0.5 < p["beta"] < 1:
        return f"beta = {p['beta']:g} outside (1/2, 1) (Thm 1, L293)"
    return None


def _within(points: list[dict]) -> tuple[list[dict], list[str]]:
    """The points inside the claim's hypotheses, and why each other one is not."""
    inside, skipped = [], []
    for pt in points:
        why = _outside(pt)
        if why:
            skipped.append(f"n = {pt['params']['n']}: {why}")
        else:
            inside.append(pt)
    return inside, skipped


def _largest(points: list[dict]) -> list[dict]:
    nmax = max(pt["params"]["n"] for pt in points)
    return [pt for pt in points if pt["params"]["n"] == nmax]


def ratios(Y: np.ndarray, P: np.ndarray) -> dict[str, float]:
    """tr S/tr P, lambda_max(S)/lambda_max(P), tr(P^-1 S)/d, and the smallest and largest eigenvalue of
    P^-1/2 S P^-1/2 (S = P exactly when both are 1: the three averages can all be 1 while S differs from P in two
    directions) for the sample covariance S of Y (trials x d)."""
    S = np.atleast_2d(np.cov(Y.T, ddof=1))
    L = np.linalg.cholesky(P)
    W = np.linalg.solve(L, np.linalg.solve(L, S).T)          # L^-1 S L^-T: the eigenvalues of P^-1 S
    gen = np.linalg.eigvalsh((W + W.T) / 2)
    return {"trace": float(np.trace(S) / np.trace(P)),
            "top": float(np.linalg.eigvalsh(S)[-1] / np.linalg.eigvalsh(P)[-1]),
            "whitened": float(np.trace(np.linalg.solve(P, S)) / P.shape[0]),
            "gen_min": float(gen[0]), "gen_max": float(gen[-1])}


def ratio_intervals(Y: np.ndarray, P: np.ndarray, rel_se: dict[str, float], confidence: float) -> dict[str, dict]:
    """Each ratio, its bootstrap se of log r, and its interval at ``confidence`` (Bonferroni over the five)."""
    r = ratios(Y, P)
    rng = np.random.default_rng(BOOT_SEED)
    N = Y.shape[0]
    boot: dict[str, list[float]] = {k: [] for k in RATIOS}
    for _ in range(BOOTSTRAP):
        b = ratios(Y[rng.integers(0, N, N)], P)
        for k in RATIOS:
            boot[k].append(float(np.log(b[k])))
    z = float(stats.norm.ppf(1 - (1 - confidence) / (2 * len(RATIOS))))
    out = {}
    for k in RATIOS:
        se = float(np.std(boot[k], ddof=1))
        mc = rel_se["top" if k == "top" else "trace"]             # the prediction's own Monte Carlo error
        half = z * float(np.hypot(se, mc))
        out[k] = {"ratio": r[k], "se_log": se, "lower": r[k] * float(np.exp(-half)), "upper": r[k] * float(np.exp(half))}
    return out


def _verdict(iv: dict[str, dict], tol: float) -> str:
    if any(v["upper"] < 1 - tol or v["lower"] > 1 + tol for v in iv.values()):
        return "fail"
    if all(1 - tol <= v["lower"] and v["upper"] <= 1 + tol for v in iv.values()):
        return "pass"
    return "inconclusive"


def _combine(verdicts: list[str]) -> str:
    if not verdicts:
        return "inapplicable"
    if "fail" in verdicts:
        return "fail"
    return "pass" if all(v == "pass" for v in verdicts) else "inconclusive"


def covariance(check: Any, mechanism: str, points: list[dict], *, prediction: str = "paper") -> CheckResult:
    """The empirical covariance of sqrt(n)(theta_bar - theta*) against Prop 3's (Thm 1's) prediction."""
    claims, citation = _claims(points)
    conf = check.confidence
    rows: list[dict] = []
    inside, skipped = _within(points)
    for pt in inside:
        Y = np.asarray(pt["sqrt_n_error"], float)
        pred = pt["prediction"]
        P = np.atleast_2d(np.asarray(pred[prediction], float))
        iv = ratio_intervals(Y, P, pred["rel_se"], conf)
        lit = ratios(Y, np.atleast_2d(np.asarray(pred["literal"], float)))["trace"]
        fq = ratios(Y, np.atleast_2d(np.asarray(pred["finite_q"], float)))["trace"]
        v = _verdict(iv, TOL)
        rows.append({"point": pt["value"], "n": pt["params"]["n"], "trials": Y.shape[0], "verdict": v,
                     **{f"{k}_ratio": iv[k]["ratio"] for k in RATIOS},
                     **{f"{k}_ci": (round(iv[k]["lower"], 4), round(iv[k]["upper"], 4)) for k in RATIOS},
                     "literal_trace_ratio": lit, "finite_q_trace_ratio": fq,
                     "discrepancy": max(abs(iv[k]["ratio"] - 1) for k in RATIOS)})
    applicable = [pt for pt in points if not _outside(pt)]
    if not rows:
        verdict, judged = "inapplicable", []
    else:
        nmax = max(r["n"] for r in rows)
        judged = [r for r in rows if r["n"] == nmax]
        verdict = _combine([r["verdict"] for r in judged])
    by_n = sorted(rows, key=lambda r: r["n"])
    falling = (len({r["n"] for r in by_n}) > 1 and by_n[-1]["discrepancy"] < by_n[0]["discrepancy"])
    desc = "; ".join(f"n = {r['n']}: tr {r['trace_ratio']:.3f} [{r['trace_ci'][0]:.3f}, {r['trace_ci'][1]:.3f}], "
                     f"top {r['top_ratio']:.3f} [{r['top_ci'][0]:.3f}, {r['top_ci'][1]:.3f}], whitened "
                     f"{r['whitened_ratio']:.3f} [{r['whitened_ci'][0]:.3f}, {r['whitened_ci'][1]:.3f}], eigenvalues of "
                     f"P^-1 S in [{r['gen_min_ratio']:.3f}, {r['gen_max_ratio']:.3f}] ({r['verdict']}); "
                     f"literal-bracket tr ratio {r['literal_trace_ratio']:.3f}" for r in by_n)
    summary = (f"empirical / predicted covariance of sqrt(n)(theta_bar - theta*) ({prediction} grouping) over "
               f"{rows[0]['trials'] if rows else 0} trials per point, intervals at {conf:g} (Bonferroni over 5 ratios, "
               f"bootstrap {BOOTSTRAP}), pass inside [1 - {TOL:g}, 1 + {TOL:g}] at the largest n: {desc or 'no point'}"
               + (f"; discrepancy max|r - 1| {'falls' if falling else 'does not fall'} from the smallest to the "
                  f"largest n" if len({r['n'] for r in rows}) > 1 else "")
               + (f"; inapplicable: {'; '.join(skipped)}" if skipped else ""))
    top = judged[0] if judged else None
    used = claims if applicable else ()
    return CheckResult(id=check.id, kind=check.kind, theorem="002.prop3.covariance",
                       citation=cite(citation, used) if used else f"{citation} [not inventoried: {NO_POINT}]",
                       verdict=verdict, measured=None if top is None else top["trace_ratio"],
                       bound=None if top is None else 1.0, confidence=conf, summary=summary, rows=tuple(rows),
                       claims=used, extra={"tol": TOL})


def centred(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """The mean of sqrt(n)(theta_bar - theta*) is small against the predicted spread at the largest n; RMSE slope."""
    claims, citation = _claims(points)
    conf = check.confidence
    rows: list[dict] = []
    inside, skipped = _within(points)
    for pt in inside:
        Y = np.asarray(pt["sqrt_n_error"], float)
        N, d = Y.shape
        mean = Y.mean(axis=0)
        S = np.atleast_2d(np.cov(Y.T, ddof=1))
        P = np.atleast_2d(np.asarray(pt["prediction"]["paper"], float))
        spread = float(np.sqrt(np.trace(P)))
        radius = float(np.sqrt(stats.chi2.ppf(conf, d) * np.linalg.eigvalsh(S)[-1] / N))
        t2 = float(N * mean @ np.linalg.solve(S, mean))
        pval = float(stats.f.sf(t2 * (N - d) / (d * (N - 1)), d, N - d)) if N > d else float("nan")
        norm = float(np.linalg.norm(mean))
        lo, hi = max(0.0, norm - radius) / spread, (norm + radius) / spread
        v = "pass" if hi <= TOL_BIAS else "fail" if lo > TOL_BIAS else "inconclusive"
        n = pt["params"]["n"]
        sq = ((Y / np.sqrt(n)) ** 2).sum(axis=1)
        rmse = float(np.sqrt(sq.mean()))
        rmse_se = float(sq.std(ddof=1) / np.sqrt(N) / (2 * rmse))
        rows.append({"point": pt["value"], "n": n, "bias_norm": norm, "bias_over_spread": norm / spread,
                     "bias_ci": (round(lo, 4), round(hi, 4)), "hotelling_p": pval, "rmse": rmse, "rmse_se": rmse_se, "verdict": v})
    if not rows:
        verdict, judged = "inapplicable", []
    else:
        nmax = max(r["n"] for r in rows)
        judged = [r for r in rows if r["n"] == nmax]
        verdict = _combine([r["verdict"] for r in judged])
    slope_txt = ""
    ns = sorted({r["n"] for r in rows})
    if len(ns) >= 2 and len(rows) == len(ns):
        by = sorted(rows, key=lambda r: r["n"])
        x = np.log([r["n"] for r in by])
        y = np.log([r["rmse"] for r in by])
        se = np.array([r["rmse_se"] / r["rmse"] for r in by])
        if len(by) == 2:
            slope = float((y[1] - y[0]) / (x[1] - x[0]))
            slope_txt = f"; log RMSE slope in log n {slope:.3f} (-1/2 for the sqrt(n) rate)"
        else:
            f = weighted_slope(x, y, se, conf)
            slope_txt = (f"; log RMSE slope in log n {f.slope:.3f} [{f.lower:.3f}, {f.upper:.3f}] "
                         f"(-1/2 for the sqrt(n) rate; shown, not judged)")
    desc = "; ".join(f"n = {r['n']}: ||mean|| / sqrt(tr P) = {r['bias_over_spread']:.3f} "
                     f"[{r['bias_ci'][0]:.3f}, {r['bias_ci'][1]:.3f}], Hotelling p = {r['hotelling_p']:.3g}, RMSE "
                     f"{r['rmse']:.4g} ({r['verdict']})" for r in sorted(rows, key=lambda r: r["n"]))
    summary = (f"centre of sqrt(n)(theta_bar - theta*): its mean against the predicted spread, pass when the upper "
               f"end of the {conf:g} interval is <= {TOL_BIAS:g} at the largest n: {desc or 'no point'}{slope_txt}"
               + (f"; inapplicable: {'; '.join(skipped)}" if skipped else ""))
    top = judged[0] if judged else None
    used = claims if rows else ()
    return CheckResult(id=check.id, kind=check.kind, theorem="002.prop3.centre",
                       citation=cite(citation, used) if used else f"{citation} [not inventoried: {NO_POINT}]",
                       verdict=verdict, measured=None if top is None else top["bias_over_spread"],
                       bound=TOL_BIAS, confidence=conf, summary=summary, rows=tuple(rows),
                       claims=used, extra={"tol": TOL_BIAS})


def el_minimiser(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """Example 3: argmin L_el = theta* (Newton on a large sample) and grad L_el(theta*) = 0 (another sample)."""
    claims = ("002 Example 3",)
    conf = check.confidence
    rows, verdicts = [], []
    for pt in points:
        ex = pt["example3"]
        d = len(ex["theta_hat"])
        diff = np.asarray(ex["theta_hat"]) - np.asarray(ex["theta_star"])
        C = np.atleast_2d(np.asarray(ex["theta_hat_cov"], float))
        D2 = float(diff @ np.linalg.solve(C, diff))
        p_min = float(stats.chi2.sf(D2, d))
        semi = float(np.sqrt(stats.chi2.ppf(conf, d) * np.linalg.eigvalsh(C)[-1]))
        g, Cg = np.asarray(ex["grad_mean"]), np.atleast_2d(np.asarray(ex["grad_mean_cov"], float))
        p_grad = float(stats.chi2.sf(float(g @ np.linalg.solve(Cg, g)), d))
        alpha = 1 - conf
        if min(p_min, p_grad) < alpha / 2:
            v = "fail"
        elif semi <= TOL_MIN * float(np.linalg.norm(ex["theta_star"])):
            v = "pass"
        else:
            v = "inconclusive"
        verdicts.append(v)
        rows.append({"point": pt["value"], "k": pt["params"]["k"], "users": ex["users"],
                     "distance": float(np.linalg.norm(diff)), "mahalanobis_p": p_min, "ellipsoid_semi_axis": semi,
                     "grad_norm": float(np.linalg.norm(g)), "grad_p": p_grad, "verdict": v})
    summary = ("Example 3: Newton's minimiser of the empirical element risk against theta* and the mean element "
               f"gradient at theta* against 0 (each tested at {1 - (1 - conf) / 2:g}); pass when neither rejects and "
               f"the minimiser's {conf:g} ellipsoid has semi-axes <= {TOL_MIN:g} ||theta*||: "
               + "; ".join(f"{r['point']}: |theta_hat - theta*| = {r['distance']:.3g} (p = {r['mahalanobis_p']:.3g}, "
                           f"semi-axis {r['ellipsoid_semi_axis']:.3g}), |grad L_el(theta*)| = {r['grad_norm']:.3g} "
                           f"(p = {r['grad_p']:.3g}) ({r['verdict']})" for r in rows))
    return CheckResult(id=check.id, kind=check.kind, theorem="002.example3", citation=cite(f"{SEED}: {CITE_EX3}", claims),
                       verdict=_combine(verdicts), measured=max((r["distance"] for r in rows), default=None),
                       bound=TOL_MIN, confidence=conf, summary=summary, rows=tuple(rows), claims=claims)


ElementSgdCheckFn = Callable[[Any, str, list[dict]], CheckResult]
ELEMENT_SGD_CHECKS: Registry[ElementSgdCheckFn] = Registry("element-level SGD check kind")
ELEMENT_SGD_CHECKS.add("covariance", covariance)
ELEMENT_SGD_CHECKS.add("centred", centred)
ELEMENT_SGD_CHECKS.add("el_minimiser", el_minimiser)


def _at_largest_n(r: Mapping[str, Any]) -> list:
    nmax = max(x["n"] for x in r["rows"])
    return [x for x in r["rows"] if x["n"] == nmax]


def _covariance_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    rows = _at_largest_n(r)
    tol = (r.get("extra") or {}).get("tol", TOL)
    w = rows[0]
    return Rule(f"at the largest n: pass iff each of the five ratios of empirical to predicted covariance (traces, top "
                f"eigenvalues, whitened trace, extreme eigenvalues of P^-1 S) has its {r['confidence']:g} interval "
                f"(bootstrap, Bonferroni) inside [1 - {tol:g}, 1 + {tol:g}]; fail iff one lies wholly outside",
                f"n = {w['n']}: trace {w['trace_ratio']:.3f} [{w['trace_ci'][0]:.3f}, {w['trace_ci'][1]:.3f}], "
                f"eigenvalues of P^-1 S in [{w['gen_min_ratio']:.3f}, {w['gen_max_ratio']:.3f}]", side_of(rows))


def _centred_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    rows = _at_largest_n(r)
    w = max(rows, key=lambda x: x["bias_ci"][1])
    return Rule(f"at the largest n: pass iff the upper end of the interval of |mean of sqrt(n)(theta_bar - theta*)| / "
                f"sqrt(tr P) is at most {TOL_BIAS:g}; fail iff its lower end exceeds it",
                f"n = {w['n']}: bias / spread in [{w['bias_ci'][0]:.3f}, {w['bias_ci'][1]:.3f}] against {TOL_BIAS:g}",
                side_of(rows))


def _minimiser_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = min(r["rows"], key=lambda x: min(x["mahalanobis_p"], x["grad_p"]))
    return Rule(f"per point: fail iff the minimiser's distance to theta* or the mean element gradient at theta* is "
                f"rejected (chi-square, each at {(1 - r['confidence']) / 2:g}); pass iff neither and the minimiser's "
                f"ellipsoid has semi-axes <= {TOL_MIN:g} ||theta*||",
                f"smallest p {min(w['mahalanobis_p'], w['grad_p']):.3g}; semi-axis {w['ellipsoid_semi_axis']:.3g}",
                side_of(r["rows"]))


# the decision rules in words, for the report's first table (verifiers/checks/base.py Rule)
ELEMENT_SGD_RULES = {"covariance": _covariance_rule, "centred": _centred_rule, "el_minimiser": _minimiser_rule}
