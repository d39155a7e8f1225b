"""The algorithm registry and each algorithm's parameter resolution (the paper's calibration, with
any spec override applied: the run and the checks then use what was actually resolved).

One module per paper part holds its resolvers, its calibration formulas and the tuple ``ENTRIES`` of its
registry entries; ``catalog/base.py`` holds what they share. Adding a paper part is one module and one line
of ``PAPERS``. Mechanisms (the ``mechanism`` spec kind) likewise: a module's tuple ``MECHANISM_ENTRIES``, named in
one line of ``MECHANISM_MODULES``, builds ``MECHANISMS``, with the mechanisms of users' plugins (catalog/plugins.py).
The catalog sits above ``algorithms/`` (the numerics) and ``verifiers/`` (some calibrations are set by an
accountant), and neither imports it.
"""
from __future__ import annotations

from algorithms.registry import Registry
from catalog import (
    baselines,
    cldp_001,
    darrm_003,
    dme_003,
    dme_tasks_003,
    element_002,
    element_composition_002,
    element_fig3_002,
    element_lemmas_002,
    element_sgd_002,
    element_sum_002,
    isrl_004,
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
)

ALGORITHMS: Registry[AlgorithmEntry] = Registry.of("algorithm", ((e.name, e) for paper in PAPERS for e in paper.ENTRIES))

MECHANISM_MODULES = (
    shuffle_000_sums,   # seed 000: P_1D and P_VEC
    shuffle_001_exact,  # seed 001: the subsampled shuffle mechanism with k-ary RR, exact RDP
    darrm_003,          # seed 003, ch. 3: DaRRM, exact privacy of its noise functions
    dme_003,            # seed 003, ch. 2: Rand-k, Rand-k-Spatial, Rand-Proj-Spatial (correlated mean estimation)
    dme_tasks_003,      # seed 003, ch. 2 §2.5: power iteration, k-means, regression with the compressors
    element_002,        # seed 002, Sec. 3.1-3.2: heavy hitters and the clipped histogram, element level
    element_sum_002,    # seed 002, Cor 2.4-2.5, Cor 3.1-3.2, Eq. (16): the subsampled Gaussian element sum (4)
    element_sgd_002,    # seed 002, Thm 1 / Prop 3 / Example 3: element-level private SGD, asymptotic normality
    element_composition_002,  # seed 002, Cor 2.2-2.3, Eq. (16), Prop 3 (i)-(ii): group privacy, composition, O(1) privacy
    element_lemmas_002,  # seed 002, Lemmas B.1, B.2, C.1, C.2, exactly
    element_fig3_002,   # seed 002, Sec. 4.2 / Fig. 3: element vs user vs non-private SGD; Cor 3.1-3.2 as run
    shuffleg_003,       # seed 003, ch. 4: private shuffled gradient methods with public data (Alg. 3 and instances)
)

PLUGINS = plugins.load()         # users' own mechanisms (catalog/plugins.py): entry points, PRIVBENCH_PLUGINS
plugins.check_names({e.name for module in MECHANISM_MODULES for e in module.MECHANISM_ENTRIES}, PLUGINS)

MECHANISMS: Registry[MechanismEntry] = Registry.of(
    "mechanism", ((e.name, e) for module in MECHANISM_MODULES + PLUGINS for e in module.MECHANISM_ENTRIES))
