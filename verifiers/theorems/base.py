"""A theorem as data: its bound in the paper's symbols, its conditions and its citation."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

import sympy as sp

# The paper's symbols (seed 004 notation). Every theorem's expression is built from these.
L, beta, mu, D, d, n, N, M, K, R = sp.symbols("L beta mu D d n N M K R", positive=True)
eps0, delta0, sigma, phi2, v2, eta = sp.symbols("eps0 delta0 sigma phi2 v2 eta", positive=True)
beta_s = sp.Symbol("beta_s", positive=True)      # the Moreau smoothing parameter of a non-smooth loss
# seed 001 (CLDP-SGD): rounds T, clients per round k, clipping norm C, the local randomizer's eps_ldp
T, k, C, eps_ldp = sp.symbols("T k C eps_ldp", positive=True)
# seed 000 (P_SGD): the gradient oracle's second moment L_G^2 (Def. B.1)
LG2 = sp.Symbol("LG2", positive=True)
# seed 002 (element-level SGD, iteration (15)): the users' sampling rate q
q = sp.Symbol("q", positive=True)
SYMBOLS = {s.name: s for s in (L, beta, mu, D, d, n, N, M, K, R, eps0, delta0, sigma, phi2, v2, eta, beta_s,
                               T, k, C, eps_ldp, LG2, q)}

Params = Mapping[str, float]


@dataclass(frozen=True)
class Condition:
    text: str
    holds: Callable[[Params], bool]


@dataclass(frozen=True)
class Theorem:
    """``kind``: 'explicit' (constants stated: a `bound` check can decide) or 'order' (O~, hidden
    constants: only its exponents are checkable, by a `rate` check). ``measures`` names the measured
    quantity the bound is about. ``terms`` are the additive terms of the bound, by name."""

    name: str
    citation: str
    inventory: tuple[str, ...]          # the claims' ids, exactly as in verifiers/claims.py (../shared/notes/inventory.md)
    kind: str
    measures: str
    terms: Mapping[str, sp.Expr]
    algorithms: tuple[str, ...]
    loss_class: str                     # 'convex' or 'strongly_convex'
    conditions: tuple[Condition, ...] = ()
    note: str = ""
    needs_smooth: bool = True           # False: also stated for non-smooth f (via the Moreau envelope)
    threat_model: str = "isrl"
    rate_term: str = "privacy"          # the term a rate check targets by default
    extra: Mapping[str, str] = field(default_factory=dict)
    not_inventoried: str = ""           # why a theorem cites no inventoried claim (a cited rate, not the paper's own)
    # a privacy theorem that states epsilon as a function of the run's parameters instead of calibrating the mechanism
    # to a target (seed 001 Eq. 5): the claim itself, evaluated at a point's resolved parameters before it runs; a spec
    # of such an algorithm states no epsilon of its own
    stated_epsilon: Callable[[Params], float] | None = None

    @property
    def expr(self) -> sp.Expr:
        return sp.Add(*self.terms.values())

    def failed_conditions(self, params: Params) -> list[str]:
        return [c.text for c in self.conditions if not c.holds(params)]

    def evaluate(self, params: Params, term: str | None = None) -> float:
        expr = self.expr if term is None else self.terms[term]
        return evaluate(expr, params)

    def exponent(self, variable: str, term: str | None = None) -> sp.Expr:
        """d log(term) / d log(variable) as variable -> infinity: the power law the theorem states,
        log factors aside. Derived by SymPy from the bound, never written down by hand."""
        x = SYMBOLS[variable]
        expr = self.terms[term or self.rate_term]
        return sp.limit(x * sp.diff(sp.log(expr), x), x, sp.oo)


def evaluate(expr: sp.Expr, params: Params) -> float:
    """Evaluate a bound at resolved parameters (keyed by symbol name: L, beta, eps0, delta0, ...)."""
    missing = sorted(s.name for s in expr.free_symbols if s.name not in params)
    if missing:
        raise KeyError(f"parameters {missing} are needed to evaluate {expr}")
    return float(expr.subs({s: params[s.name] for s in expr.free_symbols}).evalf())
