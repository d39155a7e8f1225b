"""Every shipped spec, quick mode: its verdicts must equal what it records in expect / expect_quick,
so a change of verdict in either direction fails; a spec that decides nothing fails too."""
from __future__ import annotations

import pytest

from engine import kinds
from tests.helpers import SPECS, verdicts


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_spec_quick_verdicts_match_expect(path):
    spec = kinds.load(path)
    got = verdicts(kinds.kind_for(spec).run(spec, kinds.RunOptions(quick=True)))
    want = {cid: spec.expect_quick.get(cid, spec.expect.get(cid)) for cid in got}
    missing = [cid for cid, v in want.items() if v is None]
    assert not missing, f"{path.name}: no expected verdict recorded for {missing}"
    assert got == want
    assert any(v in ("pass", "fail") for v in got.values()), f"{path.name} decides nothing"


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_spec_default_expect_is_complete(path):
    spec = kinds.load(path)
    assert set(kinds.kind_for(spec).check_ids(spec)) == set(spec.expect)
    decided = [c for c, v in spec.expect.items() if v in ("pass", "fail")]
    assert decided, f"{path.name}: the default run is expected to decide nothing"
