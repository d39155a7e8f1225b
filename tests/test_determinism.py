"""Same seed, same results (apart from timestamps); another seed, other numbers."""
from __future__ import annotations

from engine.kinds.learning import runner
from tests.helpers import tiny_mbsgd, tiny_onepass

VOLATILE = ("started", "seconds", "command")


def _strip(res: dict) -> dict:
    out = {k: v for k, v in res.items() if k not in VOLATILE}
    out["points"] = [{k: v for k, v in p.items() if k != "seconds"} for p in res["points"]]
    return out


def test_same_seed_same_results():
    for make in (tiny_onepass, tiny_mbsgd):
        a, b = runner.run_spec(make()), runner.run_spec(make())
        assert _strip(a) == _strip(b)


def test_other_seed_other_numbers():
    a = runner.run_spec(tiny_onepass())
    b = runner.run_spec(tiny_onepass(), seed=123)
    assert a["points"][0]["measurements"]["excess_risk"] != b["points"][0]["measurements"]["excess_risk"]
