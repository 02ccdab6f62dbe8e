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


def test_same_queries_compares_final_sql_with_whitespace_folded_and_takes_reruns(tmp_path):
    same = bench_module("same_queries")
    before = tmp_path / "before.jsonl"
    after = tmp_path / "after.jsonl"
    rerun = tmp_path / "rerun.jsonl"
    before.write_text('{"id": "a", "sql": "SELECT 1", "correct": true}\n'
                      '{"id": "b", "sql": "SELECT 2", "budget_stop": {"node": "x"}}\n')
    after.write_text('{"id": "a", "sql": "SELECT\\n  1", "correct": true}\n{"id": "b", "sql": "SELECT 3"}\n')
    rerun.write_text('{"id": "b", "sql": "SELECT 3"}\n')
    first = same.compare(same._records(str(before)), same._records(str(after)))
    assert first["differ"] == ["b"] and first["budget stop"]["before"] == ["b"] and first["EX after"] == 1
    replaced = same._records(str(before)) | same._records(str(rerun))
    assert same.compare(replaced, same._records(str(after)))["same final SQL"] == 2
