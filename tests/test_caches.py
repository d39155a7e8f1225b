"""The project's memoised accountings and problems (functools.lru_cache) are forgotten around every test that
patches the project (tests/conftest.py): a cached value must never hide a planted fault, nor carry one to a later
test."""
from __future__ import annotations

from tests.conftest import _clear_project_caches
from verifiers.accountants import element_rdp, shuffleg_privacy


def test_every_project_cache_is_cleared():
    shuffleg_privacy.dpsgd_noise_multiplier(0.1, 10, 1.0, 1e-5)
    element_rdp.paper_epsilon(0.2, 2.0, 3, 1e-5)
    caches = (shuffleg_privacy.dpsgd_noise_multiplier, element_rdp.pair_conversion)
    assert all(c.cache_info().currsize > 0 for c in caches)
    assert _clear_project_caches() >= len(caches)
    assert all(c.cache_info().currsize == 0 for c in caches)

