"""Where the parameters a learning spec sets itself come from: the problem's constants and the resolvers name the
sources of what they compute; these are read off the spec (its data section and its claim). The runner records them
with every point, and the report fills them in for results stored before it did (same words either way)."""
from __future__ import annotations

from typing import Any, Mapping


def spec_provenance(spec: Mapping[str, Any]) -> dict[str, str]:
    """Sources of N, M, n, d, eps0, delta0 as the spec (a model_dump or the results' copy) sets them."""
    data, tm = spec.get("data") or {}, spec.get("threat_model") or {}
    part = data.get("participation")
    out = {"N": "spec (data.N)",
           "M": (f"1/M = E[1/M_r], M_r uniform on {part['low']}..{part['high']} (data.participation; seed 004, "
                 f"Assumption 1.4)" if part else "= N: every silo in every round (no data.participation)"),
           "n": "spec (data.n)" if data.get("n") is not None else "records per silo (the data set dealt to N silos)",
           "d": "spec (data.d)" if data.get("d") is not None else "the data set's feature count"}
    if tm.get("epsilon") is not None:
        out["eps0"] = "spec (threat_model.epsilon): the claim"
    if tm.get("delta") is not None:
        out["delta0"] = "spec (threat_model.delta): the claim"
    return out
