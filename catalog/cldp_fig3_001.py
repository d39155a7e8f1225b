"""Seed 001 (Girgis, Data & Diggavi; Lnnn = line of ../shared/seeds/001_b39a6850360fb784.txt): Figure 3's accuracy
claims (L205, L47, L270). One CLDP-SGD training run (L197) is accounted two ways (L203): Thm 1 optimised over the
order with Lemma 1 (the paper's "ours"), and [24]'s numerical shuffling bound, [42]'s subsampling and [34]'s strong
composition. At a total budget eps, each accounting stops the run at the last round its epsilon stays within eps, so
the accuracy each reports at eps is that of the same run stopped at a different round. The claims: at eps = 1.4,
80% (Thm 1) against 70.7% ([24]); 90% at eps = 2.91 (Thm 1) where [24] needs 4.82.

One sweep point per budget eps, in two parts:
1. The rounds each accounting allows at eps, at the paper's MNIST setting (n = 60000, k = 10000, eps0 = 1.5, delta =
   1e-5; L197), by the project's accountants (verifiers/accountants/subsampled_shuffle.py for Thm 1,
   shuffle_baselines.py for the baseline under both of its conventions, ``rounds_within``). No stand-in here.
2. CLDP-SGD (algorithms/cldp.py: l_inf clipping, R_inf with eps0, shuffling, Thm 3's step D/(G sqrt t)) on the
   stand-in: scikit-learn's 8x8 digits for MNIST (binary label digit >= 5, logistic loss, a fixed random split into
   n_train training clients and the rest as the test set), k = n_train/6 clients per round so that a round is the same
   fraction of an epoch as in the paper (k/n = 1/6, L197). Each of ``trials // trials_per_run`` independent runs goes
   to the largest allowance and keeps its model after each accountant's rounds (snapshots of the same run, as Figure 3
   plots one training run against two epsilon axes); the test accuracy of each snapshot.
The stand-in carries the learning side only: the rounds are the paper's (same epochs at the same k/n), the accuracy
levels are not MNIST's (another data set, a linear model in place of the paper's network of Table 1, which the seed
lacks), so the absolute 80% / 70.7% / 90% are shown beside ours, not judged. The digits run itself is far from
(eps, delta)-DP at those rounds: n_train = 1500 amplifies much less than n = 60000 (its Thm 1 epsilon is in the
report).
Also: the baseline's epsilon after the rounds Thm 1 allows (the paper's 4.82 at 2.91), and after the 200 epochs
(T = 1200, shuffle_mnist_privacy's reading of the run's length), under both conventions.
"""
from __future__ import annotations

import math
import time
from typing import Any, Mapping

import numpy as np
from pydantic import Field

from algorithms import cldp, datasets
from algorithms.data import Records
from algorithms.losses import Logistic
from algorithms.streams import TrialStreams
from catalog.base import MechanismEntry, MechanismParams, RuleError, fmt, mechanism_header
from verifiers.accountants import shuffle_baselines as sb
from verifiers.accountants import subsampled_shuffle as ss
from verifiers.checks.cldp_fig3 import FIG3_CLDP_CHECKS, FIG3_CLDP_RULES

CONVENTIONS = sb.CONVENTIONS
BASELINE_CHOICES = ("unstated", *CONVENTIONS)
RUN_CHUNK = 25                 # runs of CLDP-SGD per call (see run_point)


class Fig3CldpParams(MechanismParams):
    eps: float = Field(1.4, gt=0, le=20, description="the total budget (L205: 1.4 and 2.91)")
    delta: float = Field(1e-5, gt=0, lt=1, description="delta of the budget (L197: 1e-5)")
    eps0: float = Field(1.5, gt=0, le=10, description="eps0 of R_inf, for the accountants and the stand-in's runs "
                                                      "(L197: 1.5)")
    paper_n: int = Field(60000, ge=2, le=10**8, description="clients of the accounted run (L197: 60000 MNIST images)")
    paper_k: int = Field(10000, ge=1, le=10**8, description="clients per round of the accounted run (L197: 10000)")
    epochs: int = Field(200, ge=1, le=10**4, description="the run's length in epochs (L197: 200); T = epochs paper_n "
                                                         "/ paper_k, a reading of ours (the seed prints no T)")
    paper_acc_thm1: float = Field(0.0, ge=0, le=100, description="the paper's accuracy (%) at eps with Thm 1 (0: none)")
    paper_acc_base: float = Field(0.0, ge=0, le=100, description="the paper's accuracy (%) at eps with [24] (0: none)")
    paper_baseline_eps: float = Field(0.0, ge=0, le=100, description="the paper's baseline epsilon for the run Thm 1 "
                                                                     "certifies at eps (L205: 4.82 at 2.91; 0: none)")
    baseline_convention: str = Field("unstated", description="the baseline convention the paper used, if the seed "
                                     "stated it: " + ", ".join(BASELINE_CHOICES) + " (the seed states none)")
    baseline_tol: float = Field(0.0021, gt=0, lt=1, description="relative tolerance on paper_baseline_eps, from its "
                                                                "printed digits (0.01/4.82)")
    n_train: int = Field(1500, ge=100, le=1697, description="stand-in: digits records used as clients (the rest, "
                                                            "at least 100, are the test set)")
    k: int = Field(250, ge=1, le=1697, description="stand-in: clients per round (default n_train/6: the paper's k/n)")
    radius: float = Field(1.0, gt=0, le=100, description="stand-in: records scaled to max ||x|| = radius, domain "
                                                         "the ball of the same radius (as cldp_sgd_digits)")
    split_seed: int = Field(0, ge=0, le=2**31, description="draws the train/test split of the digits (fixed over the "
                                                           "points)")
    trials_per_run: int = Field(10, ge=1, le=1000, description="the spec's trials per CLDP-SGD run: runs = trials // "
                                "trials_per_run (the engine's quick mode divides trials by 10, at least 100)")


def rules(p: Mapping[str, Any]) -> None:
    if p["paper_k"] > p["paper_n"]:
        raise RuleError(f"paper_k = {p['paper_k']} clients per round exceeds paper_n = {p['paper_n']}", field="paper_k")
    if p["k"] > p["n_train"]:
        raise RuleError(f"k = {p['k']} clients per round exceeds n_train = {p['n_train']}", field="k")
    if p["baseline_convention"] not in BASELINE_CHOICES:
        raise RuleError(f"baseline_convention {p['baseline_convention']!r}; allowed: {', '.join(BASELINE_CHOICES)}",
                        field="baseline_convention")


def run_length(p: Mapping[str, Any]) -> int:
    """The run's rounds under our reading of an epoch as paper_n / paper_k rounds (200 epochs: T = 1200)."""
    return math.ceil(p["epochs"] * p["paper_n"] / p["paper_k"])


def allowances(p: Mapping[str, Any]) -> dict[str, int]:
    """The rounds within the budget, per accounting, at the paper's setting."""
    kw = dict(k=p["paper_k"], n=p["paper_n"], eps0=p["eps0"], delta=p["delta"])
    out = {"thm1": sb.rounds_within("thm1", p["eps"], **kw)}
    for conv in CONVENTIONS:
        out[f"fmt_kov:{conv}"] = sb.rounds_within("fmt_kov", p["eps"], convention=conv, **kw)
    return out


def stand_in(p: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The digits split into training clients and test records, scaled to max ||x|| = radius over all records."""
    X, y = datasets.digits_arrays()
    X = X * (p["radius"] / np.linalg.norm(X, axis=1).max())
    order = np.random.default_rng(np.random.SeedSequence([p["split_seed"], 1797])).permutation(len(y))
    tr, te = order[: p["n_train"]], order[p["n_train"]:]
    return X[tr], y[tr], X[te], y[te]


def accuracy(w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Test accuracy of each model (rows of w): sign(<w, x>) against y, sign(0) read as +1."""
    return (np.where(w @ X.T >= 0, 1.0, -1.0) == y[None, :]).mean(axis=1)


def run_point(p: dict, trials: int, seq: Any) -> dict:
    t0 = time.perf_counter()
    rounds = allowances(p)
    t_acc = time.perf_counter() - t0
    Xtr, ytr, Xte, yte = stand_in(p)
    d, k, eps0 = Xtr.shape[1], p["k"], p["eps0"]
    C = float(np.abs(Xtr).max())
    kappa = ((math.exp(eps0) + 1) / math.expm1(eps0)) ** 2
    G = math.sqrt(d * C**2 + C**2 * d**2 * kappa / k)
    runs = max(2, trials // p["trials_per_run"])
    stops = sorted({T for T in rounds.values() if T > 0})
    acc: dict[int, list[float]] = {0: accuracy(np.zeros((runs, d)), Xte, yte).tolist()}
    if stops:
        children = seq.spawn(runs)                          # one stream per run (Generator-like, as the engine's)
        kept = []
        # RUN_CHUNK runs at a time: each run draws only from its own streams, so the models are those of all runs
        # at once (algorithms/streams.py), on arrays small enough to stay in cache (issue 17: 0.68x the CPU time)
        for c0 in range(0, runs, RUN_CHUNK):
            part = children[c0:c0 + RUN_CHUNK]
            rec = Records(None, None, len(part), p["n_train"], True, fixed=(Xtr[None], ytr[None]))
            streams: Any = TrialStreams(part)
            out = cldp.run(rec, Logistic(), T=stops[-1], k=k, eps_ldp=eps0, C=C, G=G, radius=p["radius"],
                           randomizer="r_inf", rng=streams, snapshots=tuple(stops))
            kept.append(out.extra["snapshots"])
        snapshots = np.concatenate(kept)
        for j, T in enumerate(stops):
            acc[T] = accuracy(snapshots[:, j], Xte, yte).tolist()
    t_run = time.perf_counter() - t0 - t_acc
    kw = dict(k=p["paper_k"], n=p["paper_n"], eps0=eps0, delta=p["delta"])
    readings = {"thm1_budget": max(rounds["thm1"], 1), "epochs": run_length(p)}
    base = {r: {c: sb.curve_epsilon("fmt_kov", T=T, convention=c, **kw) for c in CONVENTIONS}
            for r, T in readings.items()}
    thm1_at = {r: sb.curve_epsilon("thm1", T=T, **kw) for r, T in readings.items()}
    digits_eps = {name: (ss.epsilon("upper", k=k, n=p["n_train"], eps0=eps0, T=T, delta=p["delta"]).epsilon
                         if T > 0 else 0.0) for name, T in rounds.items()}
    return {"params": p, "eps": p["eps"], "conventions": list(CONVENTIONS), "rounds": rounds,
            "epochs_allowed": {name: T * p["paper_k"] / p["paper_n"] for name, T in rounds.items()},
            "accuracy": {name: acc[T] for name, T in rounds.items()},
            "readings": readings, "baseline_epsilon": base, "thm1_epsilon": thm1_at,
            "stand_in": {"n_train": p["n_train"], "n_test": int(yte.size), "k": k, "d": d, "C": C, "G": G,
                         "runs": runs, "test_positive": float((yte > 0).mean()), "epsilon_thm1_digits": digits_eps},
            "seconds": time.perf_counter() - t0, "seconds_accountants": t_acc, "seconds_runs": t_run}


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def report(r: dict) -> tuple[list[str], list[str]]:
    pts = r["points"]
    p0 = pts[0]
    prm, si = p0["params"], p0["stand_in"]
    bullets = [*mechanism_header(r),
               f"- Accounted run (the paper's MNIST setting, L197): n = {prm['paper_n']}, k = {prm['paper_k']} clients per "
               f"round, eps0 = {fmt(prm['eps0'])}, delta = {fmt(prm['delta'])}. Rounds within the budget: Thm 1 + Lemma 1 "
               "(integer orders; verifiers/accountants/subsampled_shuffle.py) and [24] numerical + [42] + [34] under the "
               "two conventions of verifiers/accountants/shuffle_baselines.py (as its sources state it; as the authors' "
               "Figure 2 notebook computes it); the seed states neither its delta split nor [24]'s numerical settings",
               f"- Stand-in (learning side only): scikit-learn digits for MNIST, label digit >= 5, logistic loss, "
               f"n_train = {si['n_train']} clients (test set: the other {si['n_test']} records, {_pct(si['test_positive'])} "
               f"positive), d = {si['d']}, k = {si['k']} per round (k/n as in the paper: a round is the same fraction of an "
               f"epoch), R_inf at eps0 = {fmt(prm['eps0'])}, C = {fmt(si['C'])} (nothing clipped), Thm 3's step D/(G sqrt "
               f"t), G = {fmt(si['G'])}; {si['runs']} independent runs per point, each to the largest allowance, its model "
               "kept after each accountant's rounds (one run, several stopping rounds, as in Figure 3)",
               "- Not judged: the paper's accuracy levels (MNIST and the network of Table 1, which the seed lacks; a linear "
               "model on 8x8 digits has other levels), and the stand-in run's own privacy: the digits run at these rounds "
               f"is not (eps, delta)-DP (n = {si['n_train']} amplifies far less than {prm['paper_n']}; its Thm 1 epsilon "
               "is in the table)",
               "- Seconds per point: " + ", ".join(f"{p['seconds']:.1f} (accountants {p['seconds_accountants']:.1f})"
                                                   for p in pts)]
    body = ["| eps | accounting | rounds allowed | epochs | stand-in accuracy (mean +- sd) | paper's accuracy | "
            "digits run's own Thm 1 epsilon |", "|---|---|---|---|---|---|---|"]
    for pt in pts:
        pp = pt["params"]
        for name, T in pt["rounds"].items():
            a = np.asarray(pt["accuracy"][name])
            paper = pp["paper_acc_thm1"] if name == "thm1" else pp["paper_acc_base"]
            body.append(f"| {fmt(pt['eps'])} | {name} | {T} | {fmt(pt['epochs_allowed'][name])} | {_pct(a.mean())} +- "
                        f"{_pct(a.std(ddof=1))} | {f'{fmt(paper)}%' if paper else '-'} | "
                        f"{fmt(pt['stand_in']['epsilon_thm1_digits'][name])} |")
    body += ["", "The paper's accuracies: at 1.4 the two accountings of the seed's text (L205: 80% (+-1.8) and 70.7% "
             "(+-2.1)); at 2.91 only Thm 1's (90% (+-0.5)); [24] reaches 90% only at 4.82 (L205).", "",
             "The baseline's epsilon after the rounds Thm 1 allows at the budget (the same run; the paper: 4.82 at 2.91), "
             "and after the whole run (our reading of 200 epochs, T = epochs n/k):", "",
             "| eps | reading | rounds | Thm 1 epsilon | baseline as_stated | baseline authors_script | paper's baseline |",
             "|---|---|---|---|---|---|---|"]
    for pt in pts:
        pb = pt["params"]["paper_baseline_eps"]
        for reading, T in pt["readings"].items():
            b = pt["baseline_epsilon"][reading]
            body.append(f"| {fmt(pt['eps'])} | {reading} | {T} | {fmt(pt['thm1_epsilon'][reading])} | "
                        f"{fmt(b['as_stated'])} | {fmt(b['authors_script'])} | {fmt(pb) if pb else '-'} |")
    body.append("")
    return bullets, body


MECHANISM_ENTRIES: tuple[MechanismEntry, ...] = (
    MechanismEntry(
        name="cldp_fig3",
        description="seed 001's Figure 3: the rounds Thm 1 and the [24]+[42]+[34] baseline allow at a total budget "
                    "(paper's MNIST setting), and CLDP-SGD on a stand-in stopped at each",
        citation="seed 001: Section 4 / Figure 3 (L197-205, L47, L270), Thm 1 (L143-147), Lemma 1 (L80-82), Algorithm 1 "
                 "(L93-116), Thm 3's step (L181)",
        params=Fig3CldpParams, sweepable=("eps",), whole=(), rules=rules, run_point=run_point,
        checks=FIG3_CLDP_CHECKS, threat_model="shuffle", report=report, check_rules=FIG3_CLDP_RULES,
        data="scikit-learn's 8x8 digits (binary: digit >= 5, a linear model) stand in for MNIST and the network of "
             "Table 1 in the learning runs; the rounds are accounted at the paper's MNIST setting"),
)
