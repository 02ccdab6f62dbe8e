"""Batch evaluation end to end with a ScriptedLLM (the question set and scripted models: eval_support.py): the CLI,
resume after a kill, the LLM cache. (The returned DataFrame, workers and the report: test_eval_report.py.)
"""

# ruff: noqa: F811  (pytest fixtures are imported from eval_support and used as parameters by name)
from __future__ import annotations

import json

import pytest
from eval_support import (  # noqa: F401 (fixtures are used by name)
    ALL_IDS,
    BASELINE_RIGHT,
    BASELINE_SQL,
    BULLS_Q,
    GARDEN_Q,
    GRAPH_RIGHT,
    GRAPH_SQL,
    LAKERS_DESC,
    LAKERS_Q,
    RECORD_KEYS,
    ROSTER_Q,
    env,
    interrupt_after,
    lines_of,
    no_real_model,
    qfile,
    scripted,
    write_jsonl,
)

from duckask.utils.app.cli import main as cli_main
from duckask.utils.eval import run as evaluation
from duckask.utils.eval.records import RecordWriter, read_records
from duckask.utils.eval.run import evaluate
from duckask.utils.llm import ScriptedLLM
from duckask.utils.llm.cache import CachedLLM


# --------------------------------------------------------------------------- end to end through the CLI
def test_cli_eval_end_to_end(tmp_path, qfile, small_db, env, monkeypatch, capsys):
    llm = scripted()
    monkeypatch.setattr(evaluation, "get_llm", lambda settings=None: llm)
    out, rep = tmp_path / "results.jsonl", tmp_path / "report"
    code = cli_main(["eval", str(qfile), "--db", str(small_db), "--out", str(out), "--report", str(rep),
                     "--baseline", "single-prompt"])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr

    # Every question went to the graph once and to the baseline once (the happy path is one call).
    assert llm.count("SQLGenerator") == 6 and llm.count("Baseline") == 6

    # One JSONL record per question, every line complete JSON.
    lines = lines_of(out)
    assert len(lines) == 6
    records = [json.loads(line) for line in lines]
    assert [r["id"] for r in records] == ALL_IDS
    for r in records:
        assert RECORD_KEYS <= set(r), RECORD_KEYS - set(r)
        assert r["db"] == "nba"
        assert r["status"] == "answered"
        assert r["sql"] == GRAPH_SQL[r["question"]]
        assert r["first_sql"] == GRAPH_SQL[r["question"]]
        assert r["baseline_sql"] == BASELINE_SQL[r["question"]]
        assert r["llm_calls"] == 1 and r["fixer_attempts"] == 0
        assert r["prompt_tokens"] > 0 and r["completion_tokens"] > 0
        assert r["seconds"] >= 0 and r["error"] is None
        assert isinstance(r["grades"], list)
    by_id = {r["id"]: r for r in records}
    assert {i for i, r in by_id.items() if r["correct"]} == GRAPH_RIGHT
    assert {i for i, r in by_id.items() if r["first_correct"]} == GRAPH_RIGHT
    assert {i for i, r in by_id.items() if r["baseline_correct"]} == BASELINE_RIGHT
    assert by_id["q2"]["tags"] == ["filter"]

    # A gold SQL that errors: wrong, with the gold error recorded (the prediction itself ran fine).
    assert by_id["q4"]["correct"] is False and by_id["q4"]["baseline_correct"] is False
    assert "franchises" in by_id["q4"]["gold_error"]
    assert all(by_id[i]["gold_error"] is None for i in ALL_IDS if i != "q4")

    # Expected-rows questions are scored against the rows: q5 (unordered) right for the graph, the
    # baseline's single count wrong; q6 is ordered and the graph's ascending order is wrong.
    assert by_id["q5"]["correct"] is True and by_id["q5"]["baseline_correct"] is False
    assert by_id["q6"]["correct"] is False

    # The printed markdown table.
    graph_ex = round(100 * len(GRAPH_RIGHT) / 6, 1)
    base_ex = round(100 * len(BASELINE_RIGHT) / 6, 1)
    assert graph_ex == 50.0 and base_ex == 33.3
    assert "# duckask eval" in stdout and "Questions: 6" in stdout
    assert "| system | EX % |" in stdout
    assert f"| duckask graph | {graph_ex} |" in stdout
    assert f"| single prompt | {base_ex} |" in stdout
    assert "| nba | 6 | 50.0 |" in stdout
    assert f"records: {out}" in stdout
    assert "[6/6]" in stderr

    # The report files, whose EX equals the fraction of correct records.
    md, js = tmp_path / "report.md", tmp_path / "report.json"
    assert md.is_file() and js.is_file()
    summary = json.loads(js.read_text())
    assert summary["questions"] == 6
    assert summary["pipeline"]["ex"] == round(100 * sum(r["correct"] for r in records) / len(records), 1) == 50.0
    assert summary["baseline"]["ex"] == round(100 * sum(r["baseline_correct"] for r in records) / 6, 1) == 33.3
    assert summary["baseline"]["pipeline_ex_same_questions"] == 50.0
    assert summary["pipeline"]["first_draft_ex"] == 50.0
    assert summary["by_tag"]["filter"] == {"n": 2, "ex": 50.0}
    assert summary["by_tag"]["count"] == {"n": 2, "ex": 100.0}
    assert summary["by_tag"]["join"] == {"n": 2, "ex": 50.0}
    assert f"| duckask graph | {graph_ex} |" in md.read_text()
    assert f"| single prompt | {base_ex} |" in md.read_text()

    # Rerunning the same command resumes: nothing is left to ask.
    code = cli_main(["eval", str(qfile), "--db", str(small_db), "--out", str(out), "--baseline", "single-prompt",
                     "--json"])
    stdout, stderr = capsys.readouterr()
    assert code == 0
    assert llm.count("SQLGenerator") == 6 and llm.count("Baseline") == 6
    assert "resuming, 6 question(s) already in the output" in stderr
    assert json.loads(stdout)["pipeline"]["ex"] == 50.0
    assert len(lines_of(out)) == 6


def test_cli_eval_bad_choices_are_usage_errors(qfile, capsys):
    with pytest.raises(SystemExit) as e:
        cli_main(["eval", str(qfile), "--mode", "x"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        cli_main(["eval", str(qfile), "--baseline", "few-shot"])
    assert e.value.code == 2


# --------------------------------------------------------------------------- resume after a kill

def test_resume_after_kill(tmp_path, qfile, small_db, env, capsys):
    out = tmp_path / "out.jsonl"
    first = scripted()
    seen: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        evaluate(qfile, db=str(small_db), out=out, llm=first, progress=False, on_record=interrupt_after(2, seen))
    assert seen == ["q1", "q2"]
    assert first.count("SQLGenerator") == 2
    recs = read_records(out)
    assert [r["id"] for r in recs] == ["q1", "q2"]
    assert len(lines_of(out)) == 2

    # Killed in the middle of writing the third record: a cut-off line with no newline.
    full = json.dumps({"id": "q3", "question": GARDEN_Q, "sql": "SELECT 1", "status": "answered", "correct": True})
    with out.open("a") as f:
        f.write(full[:40])
    assert [r["id"] for r in read_records(out)] == ["q1", "q2"]      # the partial line is not a record

    asked: list[str] = []
    second = scripted(asked=asked)
    capsys.readouterr()
    df = evaluate(qfile, db=str(small_db), out=out, llm=second, progress=False)
    err = capsys.readouterr().err
    assert "resuming, 2 question(s) already in the output" in err
    assert "[4/4]" in err and "[5/4]" not in err

    # Only the four questions not yet recorded were asked (q3 included: its record was cut off).
    assert second.count("SQLGenerator") == 4
    assert sorted(asked) == sorted([GARDEN_Q, BULLS_Q, ROSTER_Q, LAKERS_Q])
    recs = read_records(out)
    ids = [r["id"] for r in recs]
    assert len(ids) == len(set(ids)) == 6
    assert sorted(ids) == sorted(ALL_IDS)
    # The cut-off line was cut away: every line is a whole record.
    lines = lines_of(out)
    assert len(lines) == 6 and all(json.loads(line)["id"] for line in lines)
    assert json.loads(lines[2])["id"] == "q3"

    assert len(df) == 6 and sorted(df["id"]) == sorted(ALL_IDS)
    s = df.attrs["summary"]
    assert s["questions"] == 6
    assert s["pipeline"]["ex"] == 50.0
    assert {i for i, c in zip(df["id"], df["correct"]) if c} == GRAPH_RIGHT


def test_record_writer_cuts_off_a_torn_line(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"id": "a", "correct": true}\n{"id": "b", "corr')
    w = RecordWriter(path)
    w.append({"id": "c", "correct": False})
    assert [r["id"] for r in read_records(path)] == ["a", "c"]
    assert path.read_text() == '{"id": "a", "correct": true}\n{"id": "c", "correct": false}\n'
    torn_only = tmp_path / "t.jsonl"
    torn_only.write_text('{"id": "x"')
    RecordWriter(torn_only)
    assert torn_only.read_text() == ""
    # A file that ends cleanly is left as it is.
    w2 = RecordWriter(path)
    w2.append({"id": "d", "correct": True})
    assert [r["id"] for r in read_records(path)] == ["a", "c", "d"]
    assert read_records(tmp_path / "none.jsonl") == []
    # A gzip-compressed records file (how large committed runs are kept) reads the same.
    import gzip
    (tmp_path / "r.jsonl.gz").write_bytes(gzip.compress(path.read_bytes()))
    assert read_records(tmp_path / "r.jsonl.gz") == read_records(path)


# --------------------------------------------------------------------------- LLM cache
def test_cache_second_run_makes_no_backend_calls(tmp_path, qfile, small_db, env):
    cache = tmp_path / "c.sqlite"
    first = scripted()
    df1 = evaluate(qfile, db=str(small_db), out=tmp_path / "run1.jsonl", cache=cache, baseline="single-prompt",
                   llm=first, progress=False)
    assert len(first.calls) == 12          # 6 SQLGenerator + 6 Baseline, all misses
    assert cache.is_file()
    assert len(CachedLLM(ScriptedLLM({}), cache)) == 12

    second = scripted()
    df2 = evaluate(qfile, db=str(small_db), out=tmp_path / "run2.jsonl", cache=cache, baseline="single-prompt",
                   llm=second, progress=False)
    assert second.calls == []                 # every reply came from the cache
    assert list(df2["id"]) == list(df1["id"]) == ALL_IDS
    assert list(df2["correct"]) == list(df1["correct"])
    assert list(df2["baseline_correct"]) == list(df1["baseline_correct"])
    assert list(df2["sql"]) == list(df1["sql"])
    # Token accounting still shows what the calls cost.
    assert list(df2["prompt_tokens"]) == list(df1["prompt_tokens"])
    assert df2.attrs["summary"]["pipeline"]["ex"] == df1.attrs["summary"]["pipeline"]["ex"] == 50.0

    # Without the cache the backend is called again.
    third = scripted()
    evaluate(qfile, db=str(small_db), out=tmp_path / "run3.jsonl", llm=third, progress=False)
    assert third.count("SQLGenerator") == 6


def test_cached_llm_hits_and_misses(tmp_path):
    backend = ScriptedLLM({"SQLGenerator": ["SELECT 1", "SELECT 2", "SELECT 3", "SELECT 4", "SELECT 5"],
                           "Other": ["other reply"]})
    c = CachedLLM(backend, tmp_path / "sub" / "cache.sqlite")
    msgs = [{"role": "user", "content": "How many teams?"}]

    r1 = c.complete(msgs, node="SQLGenerator", max_tokens=100)
    assert r1.text == "SELECT 1" and c.misses == 1 and c.hits == 0 and len(backend.calls) == 1
    prompt_tokens = r1.prompt_tokens

    # Identical call: a hit with the stored text and tokens, and ms 0; the backend is not called.
    r2 = c.complete([dict(m) for m in msgs], node="SQLGenerator", max_tokens=100)
    assert r2.text == "SELECT 1" and r2.ms == 0 and r2.node == "SQLGenerator"
    assert r2.prompt_tokens == prompt_tokens and r2.completion_tokens == r1.completion_tokens
    assert c.hits == 1 and len(backend.calls) == 1

    # Different messages, max_tokens, prefix or stop: misses.
    assert c.complete([{"role": "user", "content": "How many players?"}], node="SQLGenerator",
                      max_tokens=100).text == "SELECT 2"
    assert c.complete(msgs, node="SQLGenerator", max_tokens=200).text == "SELECT 3"
    assert c.complete(msgs, node="SQLGenerator", max_tokens=100, prefix="```sql\n").text == "```sql\nSELECT 4"
    assert c.complete(msgs, node="SQLGenerator", max_tokens=100, stop=["```"]).text == "SELECT 5"
    assert c.misses == 5 and len(backend.calls) == 5
    assert len(c) == 5

    # A different node with the same messages: a miss, answered by that node's script.
    r = c.complete(msgs, node="Other", max_tokens=100)
    assert r.text == "other reply" and c.misses == 6 and backend.count("Other") == 1
    # The original call is still a hit, from a new CachedLLM on the same file too.
    c2 = CachedLLM(ScriptedLLM({}), tmp_path / "sub" / "cache.sqlite")
    r3 = c2.complete(msgs, node="SQLGenerator", max_tokens=100)
    assert r3.text == "SELECT 1" and r3.ms == 0 and c2.hits == 1 and c2.misses == 0
    # A different model name is a different key.
    c3 = CachedLLM(ScriptedLLM({"SQLGenerator": ["SELECT 9"]}, name="other-model"), tmp_path / "sub" / "cache.sqlite")
    assert c3.complete(msgs, node="SQLGenerator", max_tokens=100).text == "SELECT 9" and c3.misses == 1
    # Sampled drafts: each temperature and seed is its own key, and a repeated seed is a hit.
    c4 = CachedLLM(ScriptedLLM({"SQLGenerator": ["SELECT 10", "SELECT 11", "SELECT 12"]}), tmp_path / "s.sqlite")
    texts = [c4.complete(msgs, node="SQLGenerator", temperature=0.7, seed=s).text for s in (1, 2, 1)]
    assert texts == ["SELECT 10", "SELECT 11", "SELECT 10"] and (c4.misses, c4.hits) == (2, 1)
    assert c4.llm.calls[1]["seed"] == 2


def test_the_live_check_table_counts_a_catch_the_retry_fixed(tmp_path, small_db, env, monkeypatch, capsys):
    """A grounding check fires on the first answer (the Lakers named, never used), the retry is right: the
    record keeps the check and the judged answer's score, and bench/answer_checks_live.py counts a catch that
    was fixed (issue 44's live per-check table)."""
    from conftest import bench_module

    question = "What are the points of Lakers players?"
    right = LAKERS_DESC.replace(" ORDER BY p.points DESC", "")
    llm = ScriptedLLM({"SQLGenerator": ["SELECT name, points FROM players", right]})
    monkeypatch.setattr(evaluation, "get_llm", lambda settings=None: llm)
    rows = [{"id": "l1", "question": question,
             "expected": [["LeBron James", 30], ["Anthony Davis", 25], ["Austin Reaves", 15]]}]
    out = tmp_path / "results.jsonl"
    assert cli_main(["eval", str(write_jsonl(tmp_path / "q.jsonl", rows)), "--db", str(small_db),
                     "--out", str(out)]) == 0
    rec = json.loads(lines_of(out)[0])
    assert rec["correct"] and rec["grades"][0] == {
        "verdict": "fail", "by": "rules", "check": "constraint_dropped", "judged_correct": False,
        "critique": rec["grades"][0]["critique"]} and "'Lakers'" in rec["grades"][0]["critique"]
    live = bench_module("answer_checks_live")
    table, scored = live.live(str(out))
    assert scored == 1 and dict(table["constraint_dropped"]) == {"fired": 1, "questions": 1, "on wrong": 1,
                                                                 "fixed": 1, "on right": 0, "lost": 0}
    capsys.readouterr()
    assert live.main([str(out)]) == 0
    assert "| tmp" not in capsys.readouterr().out.split("\n")[0]
