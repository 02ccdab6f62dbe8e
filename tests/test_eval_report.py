"""Batch evaluation end to end with a ScriptedLLM, continued (the question set and scripted models:
eval_support.py): the returned DataFrame, progress and workers, the summary and report."""

# ruff: noqa: F811  (pytest fixtures are imported from eval_support and used as parameters by name)
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from eval_support import (  # noqa: F401 (fixtures are used by name)
    ALL_IDS,
    GRAPH_RIGHT,
    GRAPH_SQL,
    HIGH_Q,
    RECORD_KEYS,
    TEAMS_Q,
    env,
    interrupt_after,
    lines_of,
    no_real_model,
    qfile,
    router,
    scripted,
)

from duckask.utils.eval.questions import Question
from duckask.utils.eval.records import read_records
from duckask.utils.eval.report import render_markdown, summarize, write_report
from duckask.utils.eval.run import evaluate
from duckask.utils.llm import ScriptedLLM


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
    import duckask.utils.api as api

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
