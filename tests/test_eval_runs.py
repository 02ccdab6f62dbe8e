"""Batch evaluation end to end with a ScriptedLLM (the question set and scripted models: eval_support.py): the CLI,
resume after a kill, the LLM cache, the returned DataFrame, progress and workers, the summary and report.
"""
# ruff: noqa: F811  (pytest fixtures are imported from eval_support and used as parameters by name)
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from eval_support import (  # noqa: F401 (fixtures are used by name)
    ALL_IDS,
    BASELINE_RIGHT,
    BASELINE_SQL,
    BULLS_Q,
    GARDEN_Q,
    GRAPH_RIGHT,
    GRAPH_SQL,
    HIGH_Q,
    LAKERS_Q,
    RECORD_KEYS,
    ROSTER_Q,
    TEAMS_Q,
    env,
    lines_of,
    no_real_model,
    qfile,
    router,
    scripted,
)

from duckask.utils.app.cli import main as cli_main
from duckask.utils.eval import run as evaluation
from duckask.utils.eval.questions import Question
from duckask.utils.eval.records import RecordWriter, read_records
from duckask.utils.eval.report import render_markdown, summarize, write_report
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
def interrupt_after(n: int, seen: list[str]):
    """An on_record callback that records ids and simulates a kill (Ctrl-C) after ``n`` records."""
    def on_record(rec):
        seen.append(rec["id"])
        if len(seen) == n:
            raise KeyboardInterrupt
    return on_record


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


# --------------------------------------------------------------------------- the returned DataFrame
def test_evaluate_returns_dataframe_with_summary(tmp_path, qfile, small_db, env):
    df = evaluate(qfile, db=str(small_db), out=tmp_path / "out.jsonl", llm=scripted(), progress=False)
    assert isinstance(df, pd.DataFrame)
    assert len(df) == 6 and list(df["id"]) == ALL_IDS
    assert df.attrs["out"] == str(tmp_path / "out.jsonl")
    s = df.attrs["summary"]
    assert s["questions"] == 6
    assert s["pipeline"]["ex"] == 50.0
    assert s["pipeline"]["errors"] == 0 and s["pipeline"]["sql_did_not_run"] == 0.0
    assert s["pipeline"]["llm_calls_per_q"] == 1 and s["pipeline"]["happy_path_llm_calls_max"] == 1
    g = s["grader"]
    assert {"recall_on_wrong", "false_fail_on_right", "wrong_first_graded", "right_first_graded"} <= set(g)
    assert g["wrong_first_graded"] + g["right_first_graded"] == sum(1 for r in df["grades"] if r)
    assert "baseline" not in s and "baseline_correct" not in df.columns
    assert s == summarize(read_records(tmp_path / "out.jsonl"))
    # The summary's EX is recomputable from the frame.
    assert s["pipeline"]["ex"] == round(100 * df["correct"].mean(), 1)


def test_evaluate_accepts_question_objects_and_default_out(small_db, env):
    qs = [Question(id="a", question=TEAMS_Q, gold_sql="SELECT count(*) FROM teams"),
          Question(id="b", question=HIGH_Q, expected=[["LeBron James"], ["Jayson Tatum"]])]
    df = evaluate(qs, db=str(small_db), llm=scripted(), progress=False)
    assert list(df["correct"]) == [True, True]
    out = Path(df.attrs["out"])
    assert out.parent == env / "eval" and out.is_file()


def test_modes(tmp_path, small_db, env):
    # Gold has duplicate rows; the prediction has each row once: wrong for Spider, right for BIRD.
    q = Question(id="d", question="Which cities do the players' teams come from?",
                 gold_sql="SELECT t.city FROM players p JOIN teams t ON p.team_id = t.id")
    llm_sql = {"Which cities do the players' teams come from?": "SELECT city FROM teams"}
    llm = ScriptedLLM({"SQLGenerator": router(llm_sql)})
    spider = evaluate([q], db=str(small_db), out=tmp_path / "s.jsonl", llm=llm, progress=False)
    bird = evaluate([q], db=str(small_db), out=tmp_path / "b.jsonl", llm=llm, mode="bird", progress=False)
    assert list(spider["correct"]) == [False]
    assert list(bird["correct"]) == [True]
    with pytest.raises(ValueError, match="mode must be spider or bird"):
        evaluate([q], db=str(small_db), out=tmp_path / "x.jsonl", llm=llm, mode="x")
    with pytest.raises(ValueError, match="single-prompt"):
        evaluate([q], db=str(small_db), out=tmp_path / "y.jsonl", llm=llm, baseline="few-shot")
    assert not (tmp_path / "x.jsonl").exists() and not (tmp_path / "y.jsonl").exists()


def test_a_question_that_crashes_is_recorded_and_the_run_goes_on(tmp_path, qfile, small_db, env, monkeypatch):
    from duckask.utils.app import api

    real_ask = api.ask

    def flaky_ask(question, **kw):
        if question == HIGH_Q:
            raise RuntimeError("graph blew up")
        return real_ask(question, **kw)

    monkeypatch.setattr(api, "ask", flaky_ask)
    df = evaluate(qfile, db=str(small_db), ids=["q1", "q2", "q3"], out=tmp_path / "out.jsonl", llm=scripted(),
                  baseline="single-prompt", progress=False)
    recs = {r["id"]: r for r in read_records(tmp_path / "out.jsonl")}
    assert set(recs) == {"q1", "q2", "q3"}
    bad = recs["q2"]
    assert bad["status"] == "error" and bad["correct"] is False and bad["sql"] is None
    assert bad["error"] == "RuntimeError: graph blew up"
    assert RECORD_KEYS <= set(bad), RECORD_KEYS - set(bad)      # same record schema as an answered one
    assert bad["baseline_correct"] is False                      # the baseline still ran (>= 25 is wrong)
    assert recs["q1"]["correct"] is True
    s = df.attrs["summary"]
    assert s["pipeline"]["errors"] == 1 and s["pipeline"]["sql_did_not_run"] == 33.3
    assert s["pipeline"]["ex"] == 33.3


# --------------------------------------------------------------------------- progress and workers
def test_plain_progress_lines(tmp_path, qfile, small_db, env, capsys):
    evaluate(qfile, db=str(small_db), out=tmp_path / "out.jsonl", llm=scripted(), progress=False)
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("[")]
    assert len(err) == 6
    assert [line.split()[0] for line in err] == [f"[{i}/6]" for i in range(1, 7)]
    # q1 ok, q2 ok, q3 wrong, q4 wrong, q5 ok, q6 wrong.
    assert err[0].startswith("[1/6] ok q1") and err[0].endswith("running EX 100.0%")
    assert err[1].endswith("running EX 100.0%")
    assert err[2].startswith("[3/6] -- q3") and err[2].endswith("running EX 66.7%")
    assert err[3].endswith("running EX 50.0%")
    assert err[4].endswith("running EX 60.0%")
    assert err[5].startswith("[6/6] -- q6") and err[5].endswith("running EX 50.0%")


def test_workers_on_an_endpoint_backend(tmp_path, qfile, small_db, env, capsys):
    llm = scripted()
    llm.is_endpoint = True
    out = tmp_path / "out.jsonl"
    df = evaluate(qfile, db=str(small_db), out=out, llm=llm, workers=2, baseline="single-prompt", progress=False)
    recs = [json.loads(line) for line in lines_of(out)]
    ids = [r["id"] for r in recs]
    assert sorted(ids) == sorted(ALL_IDS) and len(ids) == len(set(ids))
    # No question lost to a thread-safety problem (e.g. a shared DuckDB connection in use).
    assert [r["error"] for r in recs] == [None] * 6 and {r["status"] for r in recs} == {"answered"}
    assert llm.count("SQLGenerator") == 6 and llm.count("Baseline") == 6
    assert {i for i, c in zip(df["id"], df["correct"]) if c} == GRAPH_RIGHT
    assert df.attrs["summary"]["pipeline"]["ex"] == 50.0
    assert "--workers ignored" not in capsys.readouterr().err


def test_workers_ignored_for_the_embedded_backend(tmp_path, qfile, small_db, env, capsys):
    llm = scripted()           # is_endpoint False, like the embedded model
    df = evaluate(qfile, db=str(small_db), out=tmp_path / "out.jsonl", llm=llm, workers=4, progress=False)
    assert len(df) == 6
    assert "--workers ignored" in capsys.readouterr().err


# --------------------------------------------------------------------------- summary and report
def test_summary_and_report_from_records(tmp_path):
    recs = [
        {"id": "a", "db": "x", "correct": True, "first_correct": False, "first_graded_correct": False,
         "grades": [{"verdict": "fail"}, {"verdict": "pass"}], "grader_rounds": 1, "fixer_attempts": 0,
         "status": "answered", "seconds": 1.0, "llm_calls": 2, "prompt_tokens": 100, "completion_tokens": 10,
         "tags": ["t"]},
        {"id": "b", "db": "x", "correct": True, "first_correct": True, "first_graded_correct": True,
         "grades": [{"verdict": "pass"}], "grader_rounds": 0, "fixer_attempts": 0, "status": "answered",
         "seconds": 3.0, "llm_calls": 1, "prompt_tokens": 50, "completion_tokens": 5, "tags": []},
        {"id": "c", "db": "y", "correct": False, "first_correct": False, "first_graded_correct": True,
         "grades": [{"verdict": "fail"}, {"verdict": "fail"}], "grader_rounds": 1, "fixer_attempts": 1,
         "status": "error", "seconds": 5.0, "llm_calls": 4, "prompt_tokens": 300, "completion_tokens": 30,
         "tags": ["t"]},
    ]
    s = summarize(recs)
    p, g = s["pipeline"], s["grader"]
    assert p["ex"] == 66.7 and p["first_draft_ex"] == 33.3
    assert p["median_s"] == 3.0 and p["p90_s"] == 5.0
    assert p["llm_calls_per_q"] == 2.33 and p["median_llm_calls"] == 2
    assert p["prompt_tokens_per_q"] == 150.0 and p["errors"] == 1 and p["sql_did_not_run"] == 33.3
    assert p["happy_path_llm_calls_max"] == 1
    # Recall: of first results that were wrong (a), the grader failed 1 of 1; false-fail: of right
    # ones (b, c), it failed 1 of 2.
    assert g == {"recall_on_wrong": 100.0, "false_fail_on_right": 50.0, "wrong_first_graded": 1,
                 "right_first_graded": 2}
    assert s["by_db"] == {"x": {"n": 2, "ex": 100.0}, "y": {"n": 1, "ex": 0.0}}
    assert s["by_tag"] == {"t": {"n": 2, "ex": 50.0}}
    md = render_markdown(s, title="t1")
    assert md.startswith("# t1") and "| duckask graph | 66.7 | 3.0 | 5.0 | 2.33 | 150 | 33.3 |" in md
    assert "recall on wrong first results 100.0 % (of 1)" in md
    assert "false-fail on right ones 50.0 % (of 2)" in md
    m, j = write_report(s, tmp_path / "deep" / "rep.md")
    assert m == tmp_path / "deep" / "rep.md" and j == tmp_path / "deep" / "rep.json"
    assert json.loads(j.read_text()) == json.loads(json.dumps(s))
    assert summarize([]) == {"questions": 0}
    assert "Questions: 0" in render_markdown({"questions": 0})


def test_interrupt_with_workers_stops_the_pool(tmp_path, qfile, small_db, env):
    """An interrupt (Ctrl-C, or on_record raising) must not leave the pool answering the questions not
    started yet; the ones in flight finish and are recorded whole, the rest rerun on resume."""
    import time

    def slow(answers):
        inner = router(answers)

        def reply(messages):
            time.sleep(0.3)
            return inner(messages)
        return reply

    llm = ScriptedLLM({"SQLGenerator": slow(GRAPH_SQL)})
    llm.is_endpoint = True
    out = tmp_path / "out.jsonl"
    with pytest.raises(KeyboardInterrupt):
        evaluate(qfile, db=str(small_db), out=out, llm=llm, workers=2, progress=False,
                 on_record=interrupt_after(2, []))
    n_after = len(read_records(out))
    time.sleep(1.0)        # a pool left running would go on writing records now
    recs = read_records(out)
    assert len(recs) == n_after
    assert 2 <= len(recs) < 6
    assert len(lines_of(out)) == len(recs)              # every line a whole record
    assert llm.count("SQLGenerator") == len(recs)
    assert all(r["status"] == "answered" for r in recs)

    df = evaluate(qfile, db=str(small_db), out=out, llm=scripted(), workers=2, progress=False)
    ids = [r["id"] for r in read_records(out)]
    assert sorted(ids) == sorted(ALL_IDS) and len(df) == 6


def test_a_resample_records_each_draft_as_drafted_and_as_run(tmp_path, small_db, env):
    # The first query fails; of the two drafts, one has a misspelt column the vote's free repairs fix.
    q = Question(id="r1", question=HIGH_Q, gold_sql="SELECT name FROM players WHERE points > 25")
    llm = ScriptedLLM({"SQLGenerator": ["SELECT name FROM players WHERE salary > 25",
                                        "SELECT name FROM players WHERE pointz > 25",
                                        "SELECT name FROM players WHERE points > 25"]})
    df = evaluate([q], db=str(small_db), out=tmp_path / "r.jsonl", llm=llm, progress=False, resample_drafts=2)
    rec = df.iloc[0]
    assert rec["correct"] and rec["resampled"]
    drafts = {c["draft"]: c for c in rec["candidates"]}
    repaired = drafts["SELECT name FROM players WHERE pointz > 25"]
    assert repaired["sql"] == "SELECT name FROM players WHERE points > 25" and repaired["status"] == "ok"
    assert repaired["correct"] and drafts["SELECT name FROM players WHERE salary > 25"]["status"] == "error"
