"""bench/run.py, the one benchmark runner: the reuse share each figure is read with (a warm run answers several
times faster than a cold one) and the table docs/benchmarks.md prints."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import bench_module

ROOT = Path(__file__).resolve().parents[1]
bench_run = bench_module("run")


def test_the_reuse_share_is_over_the_records_that_say(tmp_path):
    records = tmp_path / "shipped.jsonl"
    rows = [{"prompt_tokens": 400, "reused_tokens": 380}, {"prompt_tokens": 600, "reused_tokens": 20},
            {"prompt_tokens": 900}]                       # an endpoint's record: no reuse field, left out
    records.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    assert bench_run.reused_share(records) == 40          # 400 of 1,000 tokens
    assert bench_run.reused_share(tmp_path / "missing.jsonl") is None
    records.write_text(json.dumps({"prompt_tokens": 10}) + "\n")
    assert bench_run.reused_share(records) is None


def test_the_table_has_a_row_per_configuration_with_its_reuse(monkeypatch, tmp_path):
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "a.json").write_text(json.dumps({"questions": 2, "pipeline": {
        "ex": 50.0, "holds": 100.0, "median_s": 3.0, "prompt_tokens_per_q": 1200}}))
    (tmp_path / "demo" / "a.run.json").write_text(json.dumps({"cal_s": 30.0, "started": "2026-11-26T07:00:00",
                                                              "commit": "abc1234"}))
    (tmp_path / "demo" / "a.jsonl").write_text(     # a high answer that holds, a low one that does not (issue 64)
        json.dumps({"prompt_tokens": 100, "reused_tokens": 90, "holds": True, "confidence": {"level": "high"}}) + "\n"
        + json.dumps({"prompt_tokens": 0, "reused_tokens": 0, "holds": False, "confidence": {"level": "low"}}) + "\n")
    monkeypatch.setattr(bench_run, "RESULTS", tmp_path)
    table = bench_run.table({"demo": {"kind": "eval", "configs": {"a": [], "b": []}}, "x": {"kind": "script"}})
    assert table.splitlines()[2:] == [
        "| demo | a | 2 | 50.0 | 100.0 | 1 (100 %) | 100 | 3.0 (0.1x) | 1,200 | 90 | 2026-11-26 (abc1234) |",
        "| demo | b | | not run | | | | | | | |"]


def test_a_run_of_several_suites_is_not_marked_changed_by_its_own_records(monkeypatch, tmp_path):
    """The commit a record names: "+changes" for edited code, never for docs/results (the records the same run
    wrote for the suite before)."""
    import subprocess

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    (tmp_path / "docs" / "results").mkdir(parents=True)
    (tmp_path / "docs" / "results" / "a.json").write_text("{}")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "first")
    monkeypatch.setattr(bench_run, "ROOT", tmp_path)
    clean = bench_run.commit()
    assert clean and not clean.endswith("+changes")
    (tmp_path / "docs" / "results" / "a.json").write_text('{"ex": 50}')        # the previous suite's records
    assert bench_run.commit() == clean
    (tmp_path / "code.py").write_text("x = 2\n")                               # code edited during the run
    assert bench_run.commit() == clean + "+changes"
