"""The algorithm registry and each algorithm's parameter resolution (the paper's calibration, with
any spec override applied: the run and the checks then use what was actually resolved).

One module per paper part holds its resolvers, its calibration formulas and the tuple ``ENTRIES`` of its
registry entries; ``catalog/base.py`` holds what they share. Adding a paper part is one module and one line
of ``PAPERS``. Mechanisms (the ``mechanism`` spec kind) likewise: a module's tuple ``MECHANISM_ENTRIES``, named in
one line of ``MECHANISM_MODULES``, builds ``MECHANISMS``. Users' plugins (catalog/plugins.py) add algorithms, theorems,
check kinds and mechanisms here (their data kinds join the engine's).
The catalog sits above ``algorithms/`` (the numerics) and ``verifiers/`` (some calibrations are set by an
accountant), and neither imports it.
"""
from __future__ import annotations

from algorithms.registry import Registry
from catalog import (
    baselines,
    cldp_001,
    cldp_fig3_001,
    darrm_003,
    darrm_composition_003,
    darrm_lp_003,
    darrm_priors_003,
    darrm_sampled_003,
    darrm_teachers_003,
    dme_003,
    dme_tasks_003,
    element_002,
    element_composition_002,
    element_fig3_002,
    element_learning_002,
    element_lemmas_002,
    element_sgd_002,
    element_sum_002,
    isrl_004,
    isrl_experiments_004,
    plugins,
    sdp_004,
    shuffle_000,
    shuffle_000_agd,
    shuffle_000_gd,
    shuffle_000_sums,
    shuffle_001_exact,
    shuffleg_003,
)
from catalog.base import MAX_ROUNDS, AlgorithmEntry, MechanismEntry, ResolutionError, Resolved
from verifiers.checks import CHECKS, CheckKind
from verifiers.checks.curves import CURVE_CHECKS
from verifiers.theorems import THEOREMS
from verifiers.theorems.base import Theorem

__all__ = ["ALGORITHMS", "MAX_ROUNDS", "MECHANISMS", "MECHANISM_MODULES", "PAPERS", "PLUGINS", "AlgorithmEntry",
           "MechanismEntry", "ResolutionError", "Resolved"]

PAPERS = (
    isrl_004,           # seed 004, ISRL-DP: Algorithms 1 and 2
    cldp_001,           # seed 001: CLDP-SGD
    shuffle_000,        # seed 000: P_SGD
    baselines,          # central and local baselines on P_SGD's schedule
    shuffle_000_gd,     # seed 000: P_GD
    shuffle_000_agd,    # seed 000: P_AGD and its variants
    sdp_004,            # seed 004, section 5: shuffle DP
    element_learning_002,  # seed 002: element-level private SGD (Alg. 1 + (15)), element relation
)

# users' own algorithms, theorems, check kinds and mechanisms (catalog/plugins.py): entry points, PRIVBENCH_PLUGINS
PLUGINS = plugins.load()

ALGORITHMS: Registry[AlgorithmEntry] = Registry.of("algorithm", ((e.name, e) for paper in PAPERS for e in paper.ENTRIES))
plugins.add_to(ALGORITHMS, PLUGINS, "ENTRIES", AlgorithmEntry, "algorithm")
# a plugin's theorems and check kinds join the verifiers' registries here, the one place the catalog (above the
# verifiers) reads the plugins; the verifiers' own modules never import a plugin
plugins.add_to(THEOREMS, PLUGINS, "THEOREMS", Theorem, "theorem")

MECHANISM_MODULES = (
    shuffle_000_sums,   # seed 000: P_1D and P_VEC
    shuffle_001_exact,  # seed 001: the subsampled shuffle mechanism with k-ary RR, exact RDP
    cldp_fig3_001,      # seed 001, Figure 3: CLDP-SGD stopped where Thm 1 / the [24] baseline end a budget
    darrm_003,          # seed 003, ch. 3: DaRRM, exact privacy of its noise functions
    darrm_sampled_003,  # seed 003, ch. 3: DaRRM sampled: audit at the exact worst corner pair, simulated error
    darrm_composition_003,  # seed 003, ch. 3: Table B.1 and the query totals by Thm 3.3.3, against the optimum
    darrm_priors_003,   # seed 003, ch. 3: Fig. B.7, gamma optimised under the priors T_U and T_P
    darrm_lp_003,       # seed 003, ch. 3 / App. B: DaRRM's LP at large K by constraint generation
    darrm_teachers_003,  # seed 003, §3.7.2: DaRRM vs GNMax on teachers' votes; the printed budgets
    dme_003,            # seed 003, ch. 2: Rand-k, Rand-k-Spatial, Rand-Proj-Spatial (correlated mean estimation)
    dme_tasks_003,      # seed 003, ch. 2 §2.5: power iteration, k-means, regression with the compressors
    element_002,        # seed 002, Sec. 3.1-3.2: heavy hitters and the clipped histogram, element level
    element_sum_002,    # seed 002, Cor 2.4-2.5, Cor 3.1-3.2, Eq. (16): the subsampled Gaussian element sum (4)
    element_sgd_002,    # seed 002, Thm 1 / Prop 3 / Example 3: element-level private SGD, asymptotic normality
    element_composition_002,  # seed 002, Cor 2.2-2.3, Eq. (16), Prop 3 (i)-(ii): group privacy, composition, O(1) privacy
    element_lemmas_002,  # seed 002, Lemmas B.1, B.2, C.1, C.2, exactly
    element_fig3_002,   # seed 002, Sec. 4.2 / Fig. 3: element vs user vs non-private SGD; Cor 3.1-3.2 as run
    shuffleg_003,       # seed 003, ch. 4: private shuffled gradient methods with public data (Alg. 3 and instances)
    isrl_experiments_004,  # seed 004, Sec. 6 / App. I: MB-SGD vs Local SGD on stand-ins, App. I's calibration accounted
)

# a learning check kind of a plugin may not take the name of a curve, ordering or mechanism check kind either: the
# report's first table finds a kind's rule by its name
plugins.add_to(CHECKS, PLUGINS, "CHECK_KINDS", CheckKind, "check kind", frozenset(
    {*CURVE_CHECKS.names(), "ordering"} | {n for m in MECHANISM_MODULES for e in m.MECHANISM_ENTRIES
                                           for n in e.checks.names()}))
plugins.check_names({e.name for module in MECHANISM_MODULES for e in module.MECHANISM_ENTRIES}, PLUGINS)

MECHANISMS: Registry[MechanismEntry] = Registry.of(
    "mechanism", ((e.name, e) for module in MECHANISM_MODULES + PLUGINS for e in getattr(module, "MECHANISM_ENTRIES", ())))
