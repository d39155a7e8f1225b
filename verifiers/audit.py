"""Empirical privacy audit, the statistical side: from the scores of transcripts on two neighbouring data
sets, a lower bound on epsilon at delta that holds with a stated confidence.

A test "say D when the score exceeds t" has false-positive rate FPR (on D') and false-negative rate FNR
(on D). (eps, delta)-DP forces 1 - FNR <= e^eps FPR + delta and 1 - FPR <= e^eps FNR + delta, so
    eps >= max{ ln((1 - delta - FNR)/FPR), ln((1 - delta - FPR)/FNR) }.
The threshold t is chosen on one half of the trials; FPR and FNR are counted on the other half and replaced
by their one-sided Clopper-Pearson upper limits (Bonferroni over the two), so the bound is valid at the
stated confidence whatever the mechanism (Jagielski et al. 2020; Nasr et al. 2021).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta as beta_dist

CANDIDATES = 400       # thresholds tried on the selection half (quantiles of the pooled scores)


@dataclass(frozen=True)
class AuditBound:
    epsilon_lower: float
    threshold: float
    fpr_upper: float
    fnr_upper: float
    false_positives: int
    false_negatives: int
    trials_per_side: int       # on the evaluation half
    confidence: float


def clopper_pearson_upper(k: int, n: int, confidence: float) -> float:
    """One-sided upper confidence limit for a binomial proportion k/n."""
    if k >= n:
        return 1.0
    return float(beta_dist.ppf(confidence, k + 1, n - k))


def clopper_pearson_uppers(ks: np.ndarray, n: int, confidence: float) -> np.ndarray:
    """``clopper_pearson_upper`` of every count in ``ks`` at once (one call of the beta quantile: the same numbers,
    ``tests/test_audit.py``)."""
    ks = np.asarray(ks, dtype=np.int64)
    out = np.ones(ks.shape)
    below = ks < n
    out[below] = beta_dist.ppf(confidence, ks[below] + 1, n - ks[below])
    return out


def _eps(fpr: float, fnr: float, delta: float) -> float:
    best = 0.0
    for num, den in ((1 - delta - fnr, fpr), (1 - delta - fpr, fnr)):
        if num > 0 and den > 0:
            best = max(best, math.log(num / den))
        elif num > 0:
            best = math.inf
    return best


def lower_bound(scores_d: np.ndarray, scores_dp: np.ndarray, *, delta: float, confidence: float) -> AuditBound:
    """scores on D (the canary's first record) and D' (its neighbour): larger scores say D."""
    h = min(len(scores_d), len(scores_dp)) // 2
    sel_d, ev_d = np.sort(scores_d[:h]), scores_d[h:2 * h]
    sel_p, ev_p = np.sort(scores_dp[:h]), scores_dp[h:2 * h]
    pooled = np.concatenate([sel_d, sel_p])
    cands = np.unique(np.quantile(pooled, np.linspace(0.0005, 0.9995, CANDIDATES)))
    side = (1 + confidence) / 2             # Bonferroni over the two one-sided limits
    fpr_u = clopper_pearson_uppers(len(sel_p) - np.searchsorted(sel_p, cands, side="right"), h, side)
    fnr_u = clopper_pearson_uppers(np.searchsorted(sel_d, cands, side="right"), h, side)
    best_t, best = float(cands[0]), -1.0
    for t, fpr, fnr in zip(cands.tolist(), fpr_u.tolist(), fnr_u.tolist()):
        e = _eps(fpr, fnr, delta)
        if e > best:
            best, best_t = e, t
    return counts_lower_bound(int((ev_p > best_t).sum()), int((ev_d <= best_t).sum()), h, threshold=best_t,
                              delta=delta, confidence=confidence)


def counts_lower_bound(false_positives: int, false_negatives: int, trials_per_side: int, *, threshold: float,
                       delta: float, confidence: float) -> AuditBound:
    """The bound of a test fixed before its evaluation runs (``threshold`` records it): its false positives among
    ``trials_per_side`` runs on D' and false negatives among as many on D, each rate replaced by its one-sided
    Clopper-Pearson upper limit (Bonferroni over the two)."""
    h, side = trials_per_side, (1 + confidence) / 2
    fpr_u, fnr_u = clopper_pearson_upper(false_positives, h, side), clopper_pearson_upper(false_negatives, h, side)
    return AuditBound(epsilon_lower=_eps(fpr_u, fnr_u, delta), threshold=threshold, fpr_upper=fpr_u,
                      fnr_upper=fnr_u, false_positives=false_positives, false_negatives=false_negatives,
                      trials_per_side=h, confidence=confidence)


def largest_lower_bound(trials_per_side: int, *, delta: float, confidence: float) -> float:
    """The largest epsilon lower bound ``lower_bound`` can ever give with this many evaluation scores per side: no
    false positive and no false negative, each rate then bounded by its Clopper-Pearson limit for 0 of h. A claim
    above it cannot be refuted by this many scores, whatever they are."""
    side = (1 + confidence) / 2
    u = clopper_pearson_upper(0, trials_per_side, side)
    return _eps(u, u, delta)
