"""The house's layout as bench/house.py measures it (issue 66): one registry names the checks, the drafts service is
the only place that drafts or runs a turn's SQL, and Result reads the turn by name."""
from __future__ import annotations

from pathlib import Path

from conftest import bench_module

ROOT = Path(__file__).resolve().parents[1]


def test_the_house_keeps_one_home_for_each_kind_of_thing():
    figures = bench_module("house").measure(ROOT)
    assert figures["checks listed or named in"] == ["utils/checks/registry.py"]
    assert figures["checks defined in"] == [f"utils/checks/{k}.py" for k in ("coverage", "entity", "grounding",
                                                                             "shape")]
    # ProposeWrite drafts a write statement with its explanation (not a query to tidy and run): its own call.
    assert figures["drafting or running in"] == ["nodes/propose_write.py:exec"]
    assert figures["Result fields copied by reflection"] == 0
    assert {"plan", "template", "confidence", "grades", "attempts", "answer_check"}.isdisjoint(figures["untyped"])
