"""The convergence claims of seed 003, chapter 4 (Jiang's thesis; Lnnn = line of
../shared/seeds/003_56e8b1c3300cdeae.txt) as SymPy expressions, term by term, with their step-size conditions and
the readings we give the printed typos (notes 003b §3.3-3.5):

- Thm 4.4.7 (L1304, Eq. 4.7): E[G(x_1^(K+1))] - G(x*) <= D2/(eta n K) + 10 eta^2 n^2 sigma_any^2 (1 + log K)
  max_k L^(k) + 2M, M = max_s sum_{k<=s} [C_n^(k)^2/(2 n^2 beta) + 5 eta^2 L^(k)* Cvan^(k) + 6 eta^2 n d
  sigma^(k)^2 L^(k)*] / (s + 1 - k), if mu_psi >= L_H^(k) + beta (beta > 0; footnote 3: beta = 0 when H = 0) and
  eta <= 1/(2n sqrt(10 Lbar* max_k L^(k)* (1 + log K))). The "sqrt 20" of the proof (C.1.14) is read as the
  statement's sqrt 10; log is natural.
- Cor 4.4.15 (L1392, Eq. 4.11), non-private: D2/(eta n K) + 10 eta^2 n^2 sigma_any^2 (1 + log K) L under the
  printed eta <= 1/(2n sqrt(10 L L*)) (without Thm 4.4.7's (1 + log K): we judge the claim under its own printed
  condition and report whether the theorem's holds too).
- Cor 4.5.1 (L1419), DP-ShuffleG: + 12 eta^2 n d sigma^2 L* (1 + log K), under Thm 4.4.7's conditions.
- Cor 4.6.1 (L1627), the public variants, eta <= 1/(2n max{L*, L~*} sqrt(10(1 + log K))): the Priv-Pub M printed
  with its two dissimilarity terms twice (a copy error) is read as one non-vanishing and one vanishing term;
  Interleaved's "max{L*, L^*}" is read as max{L*, L~*}; the undefined L~ as the mean smoothness of the public
  records used.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import sympy as sp

eta, n, K, d, D2, s_any2, L, Ls, sig2, beta, S = sp.symbols(
    "eta n K d D2 sigma_any2 L L_star sigma2 beta S", positive=True)
Cn2, Cvan, Lt = sp.symbols("C_n2 C_van L_tilde", nonnegative=True)

INIT = D2 / (eta * n * K)
UNCERTAINTY = 10 * eta**2 * n**2 * s_any2 * (1 + sp.log(K)) * L      # L: max_k L^(k) (Thm) or L (Cor)
NOISE_COR451 = 12 * eta**2 * n * d * sig2 * Ls * (1 + sp.log(K))


@dataclass(frozen=True)
class Terms:
    """A bound's value term by term (initialisation, optimisation uncertainty, non-vanishing and vanishing
    dissimilarity, injected noise; the last three already doubled as 2M)."""

    init: float
    uncertainty: float
    nonvanishing: float
    vanishing: float
    noise: float

    @property
    def total(self) -> float:
        return self.init + self.uncertainty + self.nonvanishing + self.vanishing + self.noise

    def as_dict(self) -> dict:
        return {"init": self.init, "uncertainty": self.uncertainty, "nonvanishing": self.nonvanishing,
                "vanishing": self.vanishing, "noise": self.noise, "total": self.total}


_f = sp.lambdify((eta, n, K, D2), INIT)
_u = sp.lambdify((eta, n, K, s_any2, L), UNCERTAINTY)
_noise451 = sp.lambdify((eta, n, K, d, sig2, Ls), NOISE_COR451)


def theorem_447(*, eta: float, n: int, K: int, d: int, D2: float, sigma_any2: float, L_hat: list[float],
                L_hat_star: list[float], C_n: list[float], C_van: list[float], sigma: list[float],
                beta: float) -> Terms:
    """Eq. (4.7) with the max over s computed exactly (no harmonic sum replaced by 1 + log)."""
    best = (0.0, 0.0, 0.0, -1.0)
    for s in range(1, K + 1):
        w = [1.0 / (s + 1 - k) for k in range(1, s + 1)]
        nv = sum(wk * C_n[k] ** 2 for k, wk in enumerate(w))
        nv = nv / (2 * n**2 * beta) if nv > 0 else 0.0
        va = 5 * eta**2 * sum(wk * L_hat_star[k] * C_van[k] for k, wk in enumerate(w))
        no = 6 * eta**2 * n * d * sum(wk * sigma[k] ** 2 * L_hat_star[k] for k, wk in enumerate(w))
        if nv + va + no > best[3]:
            best = (nv, va, no, nv + va + no)
    return Terms(float(_f(eta, n, K, D2)), float(_u(eta, n, K, sigma_any2, max(L_hat))), 2 * best[0], 2 * best[1],
                 2 * best[2])


def corollary(instance: str, *, eta: float, n: int, K: int, S: int, d: int, D2: float, sigma_any2: float, L: float,
              L_star: float, L_pub_mean: float, L_pub_star: float, C_n_full: float, C_van_full: float,
              C_n_part: float, C_van_part: float, sigma: float, beta: float) -> Terms:
    """The printed corollary of the instance (Cor 4.4.15, 4.5.1, 4.6.1), with the readings above."""
    init = float(_f(eta, n, K, D2))
    lg = 1 + math.log(K)
    if instance == "shuffleg":
        return Terms(init, float(_u(eta, n, K, sigma_any2, L)), 0.0, 0.0, 0.0)
    if instance == "dp_shuffleg":
        return Terms(init, float(_u(eta, n, K, sigma_any2, L)), 0.0, 0.0,
                     float(_noise451(eta, n, K, d, sigma**2, L_star)))
    unc = float(_u(eta, n, K, sigma_any2, max(L, L_pub_mean)))
    if instance in ("priv_pub", "pub_priv"):
        lg_pub = 1 + math.log(K - S if instance == "priv_pub" else S)
        lg_priv = 1 + math.log(S if instance == "priv_pub" else K - S)
        nv = lg_pub / (2 * n**2 * beta) * C_n_full**2 if C_n_full > 0 else 0.0
        va = 5 * eta**2 * lg_pub * C_van_full * L_pub_star
        no = 6 * eta**2 * n * d * lg_priv * sigma**2 * L_star
        return Terms(init, unc, 2 * nv, 2 * va, 2 * no)
    if instance == "interleaved":
        Lm = max(L_star, L_pub_star)
        nv = lg / (2 * n**2 * beta) * C_n_part**2 if C_n_part > 0 else 0.0
        return Terms(init, unc, 2 * nv, 2 * 5 * eta**2 * lg * C_van_part * Lm, 2 * 6 * eta**2 * n * d * lg * sigma**2 * Lm)
    raise ValueError(f"no convergence corollary for {instance!r}")


def theorem_cap(*, n: int, K: int, L: float, L_hat: list[float], L_hat_star: list[float]) -> float:
    """Thm 4.4.7's step-size cap 1/(2n sqrt(10 Lbar* max_k L^(k)* (1 + log K))), Lbar* = max{L, max_k L^(k)}."""
    prod = max(L, max(L_hat)) * max(L_hat_star) * (1 + math.log(K))
    return math.inf if prod == 0 else 1.0 / (2 * n * math.sqrt(10 * prod))


def corollary_cap(instance: str, *, n: int, K: int, L: float, L_star: float, L_pub_star: float,
                  theorem: float) -> float:
    """The printed cap of the instance's corollary (Cor 4.4.15 without the log factor; Cor 4.5.1 = Thm 4.4.7's;
    Cor 4.6.1: 1/(2n max{L*, L~*} sqrt(10(1 + log K))))."""
    if instance == "shuffleg":
        return math.inf if L * L_star == 0 else 1.0 / (2 * n * math.sqrt(10 * L * L_star))
    if instance in ("priv_pub", "pub_priv", "interleaved"):
        m = max(L_star, L_pub_star)
        return math.inf if m == 0 else 1.0 / (2 * n * m * math.sqrt(10 * (1 + math.log(K))))
    return theorem


def privacy_cap(instance: str, *, L_star: float, L_pub_star: float) -> float:
    """The privacy lemmas' step condition: eta <= 1/L* (Lemma 4.5.2 states 1/L, its proof needs 1/L*: we require
    1/L*), Interleaved eta <= 1/max{L*, L~*} (Lemma 4.6.2)."""
    m = max(L_star, L_pub_star) if instance == "interleaved" else L_star
    return math.inf if m == 0 else 1.0 / m
