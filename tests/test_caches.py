"""The project's memoised accountings and problems (functools.lru_cache) are forgotten around every test that
patches the project (tests/conftest.py): a cached value must never hide a planted fault, nor carry one to a later
test."""
from __future__ import annotations

from tests.conftest import _clear_project_caches
from verifiers.accountants import element_rdp, shuffleg_privacy

CACHES = (shuffleg_privacy.dpsgd_noise_multiplier, element_rdp.pair_conversion)


def _fill() -> None:
    shuffleg_privacy.dpsgd_noise_multiplier(0.1, 10, 1.0, 1e-5)
    element_rdp.paper_epsilon(0.2, 2.0, 3, 1e-5)


_fill()     # at collection, in every worker: the caches hold values before any test of this file runs


def test_every_project_cache_is_cleared():
    _fill()
    assert all(c.cache_info().currsize > 0 for c in CACHES)
    assert _clear_project_caches() >= len(CACHES)
    assert all(c.cache_info().currsize == 0 for c in CACHES)


def test_a_patching_test_starts_with_empty_caches(monkeypatch):
    """The autouse fixture cleared the caches filled at collection (and by any test before this one) before this
    test's body, because the test asks for monkeypatch."""
    assert all(c.cache_info().currsize == 0 for c in CACHES)
