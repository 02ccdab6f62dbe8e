"""Every edge of the duckask graph, driven by a ScriptedLLM against the small teams/players/arenas DB.

Each test asserts on the outcome ``ask()`` returns (status, answer, SQL, rows), the node path and
actions in the trace, and how many LLM calls each node made.
"""
# ruff: noqa: F811  (pytest fixtures are imported from graph_support and used as parameters by name)
from __future__ import annotations

import pytest
from conftest import sha256
from graph_support import (  # noqa: F401 (fixtures are used by name)
    ALL_POINTS_SQL,
    EMPTY_SQL,
    HAPPY_PATH,
    LAKERS_Q,
    LAKERS_ROWS,
    LAKERS_SQL,
    no_stdin,
    path,
    rows,
    run,
    user_prompt,
)

from duckask.utils.llm import LLMError, ScriptedLLM


# --------------------------------------------------------------------------- happy path
def test_happy_path_one_llm_call(run):
    llm = ScriptedLLM({"SQLGenerator": [LAKERS_SQL]})
    r = run(LAKERS_Q, llm)
    assert r.status == "answered" and r.ok
    assert path(r) == HAPPY_PATH
    assert llm.count() == 1 and llm.count("SQLGenerator") == 1
    assert len(r.llm_calls) == 1
    assert r.sql == LAKERS_SQL
    assert list(r.df.columns) == ["name", "points"]
    assert rows(r) == LAKERS_ROWS
    assert "LeBron James" in r.answer and "30" in r.answer
    assert r.derivation == "Derived from players and teams, where teams.name is 'Lakers', highest points first."
    # Small schema: all tables, no LLM pick; the literal 'Lakers' is found in teams.name.
    assert sorted(r.tables) == ["arenas", "players", "teams"]
    prompt = user_prompt(llm, "SQLGenerator", 0)
    assert "teams.name = 'Lakers'" in prompt and "CREATE TABLE players" in prompt
    assert llm.calls[0]["prefix"] == "```sql\n"
    assert [g["verdict"] for g in r.grades] == ["pass"]
    assert r.warning is None
    assert r.first_sql == LAKERS_SQL
    assert [a["status"] for a in r.attempts] == ["ok"]


def test_fenced_reply_with_trailing_prose_is_extracted(run):
    llm = ScriptedLLM({"SQLGenerator": [f"```sql\n{LAKERS_SQL};\n```\nThis query returns the points."]})
    r = run(LAKERS_Q, llm)
    assert r.status == "answered"
    assert r.sql == LAKERS_SQL
    assert rows(r) == LAKERS_ROWS


# --------------------------------------------------------------------------- clarification
@pytest.mark.parametrize("question", ["show me the data", "Who is the best?", "   "])
def test_ambiguous_non_interactive_needs_clarification(run, no_stdin, question):
    llm = ScriptedLLM({"SQLGenerator": [LAKERS_SQL]})
    r = run(question, llm)
    assert r.status == "needs_clarification" and not r.ok
    assert r.clarifying_question and r.clarifying_question.endswith("?")
    assert r.answer == r.clarifying_question
    assert path(r) == [("ClarifyQuery", "ambiguous"), ("AskUser", "end")]
    assert llm.count() == 0
    assert r.sql is None and r.df is None


def test_off_topic_question_gets_a_polite_answer_that_names_the_tables(run, no_stdin):
    llm = ScriptedLLM({})
    r = run("What is the weather forecast for tomorrow?", llm)
    assert r.status == "answered" and r.intent == "general"
    assert "arenas, players, teams" in r.answer and "outside" in r.answer
    assert [t["node"] for t in r.trace] == ["IntentRouter", "AnswerGeneral"]
    assert llm.count() == 0 and r.sql is None and r.df is None


def test_ambiguous_interactive_continues_with_the_answer(run, no_stdin):
    asked: list[str] = []

    def ask_user(q: str) -> str:
        asked.append(q)
        return "points of Lakers players"

    llm = ScriptedLLM({"SQLGenerator": [LAKERS_SQL]})
    r = run("show me the data", llm, ask_user=ask_user)
    assert len(asked) == 1 and asked[0].endswith("?")
    assert r.status == "answered"
    assert path(r) == [("ClarifyQuery", "ambiguous"), ("AskUser", "answered")] + HAPPY_PATH[1:]
    assert rows(r) == LAKERS_ROWS
    prompt = user_prompt(llm, "SQLGenerator", 0)
    assert "Question: show me the data (points of Lakers players)" in prompt
    assert "teams.name = 'Lakers'" in prompt
    assert llm.count() == 1


def test_ambiguous_interactive_empty_answer_ends(run, no_stdin):
    llm = ScriptedLLM({"SQLGenerator": [LAKERS_SQL]})
    r = run("show me the data", llm, ask_user=lambda q: "   ")
    assert r.status == "needs_clarification"
    assert path(r) == [("ClarifyQuery", "ambiguous"), ("AskUser", "end")]
    assert llm.count() == 0


def test_clarify_llm_mode_malformed_yaml_falls_back_to_clear(run):
    llm = ScriptedLLM({"ClarifyQuery": ["ambiguous: [unclosed", "I think it is fine."],
                       "SQLGenerator": [LAKERS_SQL]})
    r = run(LAKERS_Q, llm, clarify="llm")
    assert r.status == "answered"
    assert llm.count("ClarifyQuery") == 2          # max_retries=2, then treated as clear
    assert path(r)[0] == ("ClarifyQuery", "clear")
    assert r.trace[2]["llm_calls"] == 2
    assert rows(r) == LAKERS_ROWS


def test_clarify_llm_mode_exception_falls_back_to_clear(run):
    llm = ScriptedLLM({"ClarifyQuery": [LLMError("endpoint down")], "SQLGenerator": [LAKERS_SQL]})
    r = run(LAKERS_Q, llm, clarify="llm")
    assert r.status == "answered"
    assert llm.count("ClarifyQuery") == 2


def test_clarify_llm_mode_ambiguous_verdict(run, no_stdin):
    llm = ScriptedLLM({"ClarifyQuery": ["ambiguous: true\nclarifying_question: Which season do you mean?"]})
    r = run(LAKERS_Q, llm, clarify="llm")
    assert r.status == "needs_clarification"
    assert r.clarifying_question == "Which season do you mean?"
    assert llm.count("ClarifyQuery") == 1 and llm.count("SQLGenerator") == 0


def test_clarify_llm_mode_clear_verdict(run):
    llm = ScriptedLLM({"ClarifyQuery": ["```yaml\nambiguous: false\nclarifying_question: \"\"\n```"],
                       "SQLGenerator": [LAKERS_SQL]})
    r = run(LAKERS_Q, llm, clarify="llm")
    assert r.status == "answered"
    assert llm.count("ClarifyQuery") == 1 and llm.count() == 2


def test_clarify_off_skips_the_check(run):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT count(*) AS n FROM teams"]})
    r = run("show me the data", llm, clarify="off")
    assert r.status == "answered"
    assert rows(r) == [[3]]


# --------------------------------------------------------------------------- errors and fixing
def test_fixer_retry_then_success(run):
    bad = "SELECT name, salary FROM players"
    llm = ScriptedLLM({"SQLGenerator": [bad, ALL_POINTS_SQL]})
    r = run("What are the points of players?", llm)
    assert r.status == "answered"
    assert path(r) == HAPPY_PATH[:7] + [("SQLExecutor", "error"), ("ErrorFixer", "retry"),
                                        ("SQLGenerator", "default"), ("SQLExecutor", "success"),
                                        ("DataAnalyzer", "default"), ("ResponseGrader", "pass"),
                                        ("AssessConfidence", "default")]
    gens = [t for t in r.trace if t["node"] == "SQLGenerator"]
    assert [t["attempt"] for t in gens] == [1, 2]
    assert llm.count("SQLGenerator") == 2 and llm.count() == 2
    second = user_prompt(llm, "SQLGenerator", 1)
    assert "This query was wrong:\nSELECT name, salary FROM players" in second
    assert 'Referenced column "salary" not found' in second
    assert "no table has a column salary" in second
    assert "salary" not in user_prompt(llm, "SQLGenerator", 0)
    assert [a["status"] for a in r.attempts] == ["error", "ok"]
    assert r.attempts[1]["after"] == "error"
    assert r.first_sql == bad and r.sql == ALL_POINTS_SQL
    assert rows(r)[0] == ["LeBron James", 30] and len(r.df) == 6


def test_deterministic_repair_needs_no_llm_call(run):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT name, pointz FROM players ORDER BY pointz DESC LIMIT 2"]})
    r = run("Which players have the most points?", llm)
    assert r.status == "answered"
    assert path(r) == HAPPY_PATH[:7] + [("SQLExecutor", "error"), ("ErrorFixer", "repaired"),
                                        ("SQLExecutor", "success"), ("DataAnalyzer", "default"),
                                        ("ResponseGrader", "pass"), ("AssessConfidence", "default")]
    assert llm.count() == 1
    assert r.sql == "SELECT name, points FROM players ORDER BY points DESC LIMIT 2"
    assert rows(r) == [["LeBron James", 30], ["Jayson Tatum", 28]]
    assert [(a["source"], a["status"]) for a in r.attempts] == [("llm", "error"), ("repair", "ok")]


@pytest.mark.parametrize("retries", [0, 2])
def test_fixer_gives_up_after_max_fix_retries(run, retries):
    bad = "SELECT name, salary FROM players"
    llm = ScriptedLLM({"SQLGenerator": [bad]})
    r = run("What are the points of players?", llm, max_fix_retries=retries)
    assert r.status == "error" and not r.ok
    # Each retry that repeats the failed query is resampled once at a higher temperature.
    assert llm.count("SQLGenerator") == 1 + 2 * retries
    assert [c["temperature"] for c in llm.calls if c["node"] == "SQLGenerator"] == [None] + [None, 0.7] * retries
    fixer = [t["action"] for t in r.trace if t["node"] == "ErrorFixer"]
    assert fixer == ["retry"] * retries + ["give_up"]
    assert path(r)[-3:] == [("ErrorFixer", "give_up"), ("ReportError", "end"), ("AssessConfidence", "default")]
    n = retries + 1
    assert r.answer.startswith(f"Could not answer: {n} quer{'y' if n == 1 else 'ies'} tried.")
    for i in range(1, n + 1):
        assert f"{i}. [llm] {bad}" in r.answer
    assert r.answer.count('Referenced column "salary" not found') == n
    assert r.df is None
    assert r.sql == bad


def test_retry_that_differs_is_not_resampled(run):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT name, salary FROM players", "SELECT name, points FROM players"]})
    r = run("What are the points of players?", llm)
    assert r.status == "answered"
    assert llm.count("SQLGenerator") == 2
    assert all(c["temperature"] is None for c in llm.calls)


def test_llm_exception_in_sql_generator_is_reported(run):
    llm = ScriptedLLM({"SQLGenerator": [LLMError("endpoint down (503)")]})
    r = run(LAKERS_Q, llm, max_fix_retries=1)
    assert r.status == "error"
    assert llm.count("SQLGenerator") == 2
    assert "the LLM call failed: endpoint down (503)" in r.answer
    assert "(no SQL)" in r.answer
    assert path(r)[-2:] == [("ReportError", "end"), ("AssessConfidence", "default")]
    assert r.sql is None and r.df is None


def test_llm_exception_then_recovery(run):
    llm = ScriptedLLM({"SQLGenerator": [RuntimeError("connection reset"), LAKERS_SQL]})
    r = run(LAKERS_Q, llm)
    assert r.status == "answered"
    assert rows(r) == LAKERS_ROWS
    assert "the LLM call failed: connection reset" in user_prompt(llm, "SQLGenerator", 1)


def test_model_writes_no_sql(run):
    llm = ScriptedLLM({"SQLGenerator": ["", "```"]})
    r = run(LAKERS_Q, llm, max_fix_retries=1)
    assert r.status == "error"
    assert llm.count("SQLGenerator") == 3      # the empty retry is resampled once
    assert r.answer.count("the model produced no SQL query") == 2


@pytest.mark.parametrize("unsafe", ["DROP TABLE players", "COPY players TO 'x.csv'",
                                    "ATTACH 'evil.duckdb' AS evil",
                                    "SELECT * FROM read_csv('x.csv')"])
def test_unsafe_sql_from_the_model_is_refused(run, small_db, tmp_path, monkeypatch, unsafe):
    monkeypatch.chdir(tmp_path)
    before = sha256(small_db)
    listing = sorted(p.name for p in small_db.parent.iterdir())
    llm = ScriptedLLM({"SQLGenerator": [unsafe]})
    r = run("What are the points of players?", llm, max_fix_retries=1)
    assert r.status == "error"
    assert llm.count("SQLGenerator") == 3      # the repeated query is resampled once
    assert [a["status"] for a in r.attempts] == ["refused", "refused"]
    assert r.answer.count("-> refused: ") == 2
    assert path(r)[-2:] == [("ReportError", "end"), ("AssessConfidence", "default")]
    assert sha256(small_db) == before
    assert sorted(p.name for p in small_db.parent.iterdir()) == listing
    assert list(tmp_path.iterdir()) == []
    # The table is intact.
    check = run(LAKERS_Q, ScriptedLLM({"SQLGenerator": ["SELECT count(*) AS n FROM players"]}))
    assert rows(check) == [[6]]


def test_second_statement_from_the_model_never_runs(run, small_db):
    before = sha256(small_db)
    llm = ScriptedLLM({"SQLGenerator": ["SELECT count(*) AS n FROM players; DELETE FROM players"]})
    r = run("How many players are there?", llm)
    assert r.sql == "SELECT count(*) AS n FROM players"     # only the first statement is kept
    assert rows(r) == [[6]]
    assert sha256(small_db) == before


# --------------------------------------------------------------------------- grading
def test_grader_fail_then_pass(run):
    llm = ScriptedLLM({"SQLGenerator": [EMPTY_SQL, LAKERS_SQL]})
    r = run(LAKERS_Q, llm)
    assert r.status == "answered"
    assert [g["verdict"] for g in r.grades] == ["fail", "pass"]
    assert r.grades[0]["by"] == "rules" and "no rows" in r.grades[0]["critique"]
    assert path(r) == HAPPY_PATH[:9] + [("ResponseGrader", "fail")] + HAPPY_PATH[6:]
    assert llm.count("SQLGenerator") == 2
    second = user_prompt(llm, "SQLGenerator", 1)
    assert "The query returned no rows" in second and EMPTY_SQL in second
    assert r.attempts[1]["after"] == "grader"
    assert rows(r) == LAKERS_ROWS
    assert r.warning is None


def test_grader_budget_exhausted_keeps_last_answer(run):
    llm = ScriptedLLM({"SQLGenerator": [EMPTY_SQL]})
    r = run(LAKERS_Q, llm, max_grader_rounds=1)
    assert r.status == "answered"
    assert llm.count("SQLGenerator") == 3      # the repeated query is resampled once
    assert [t["action"] for t in r.trace if t["node"] == "ResponseGrader"] == ["fail", "exhausted"]
    assert [g["verdict"] for g in r.grades] == ["fail", "fail"]
    assert r.warning and r.warning.startswith("The answer may be wrong: The query returned no rows")
    assert len(r.df) == 0 and list(r.df.columns) == ["name", "points"]
    assert r.answer == "No rows match the question's conditions."


def test_grader_zero_rounds_ends_at_once(run):
    llm = ScriptedLLM({"SQLGenerator": [EMPTY_SQL]})
    r = run(LAKERS_Q, llm, max_grader_rounds=0)
    assert llm.count("SQLGenerator") == 1
    assert path(r)[-2:] == [("ResponseGrader", "exhausted"), ("AssessConfidence", "default")]
    assert r.warning.startswith("The answer may be wrong: ") and "no rows" in r.warning


def test_grader_count_rule(run):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT name FROM players WHERE team_id = 1",
                                        "SELECT count(*) AS n FROM players WHERE team_id = 1"]})
    r = run("How many players do the Lakers have?", llm)
    assert [g["verdict"] for g in r.grades] == ["fail", "pass"]
    assert "one number" in r.grades[0]["critique"]
    assert rows(r) == [[3]]
    assert r.answer == "The Lakers have 3 players."


def test_retry_after_grader_fails_keeps_earlier_answer(run):
    """Grader fail -> retry SQL errors -> fixer gives up: ReportError keeps the graded answer."""
    llm = ScriptedLLM({"SQLGenerator": [EMPTY_SQL, "SELECT name, salary FROM players"]})
    r = run(LAKERS_Q, llm, max_fix_retries=0)
    assert path(r)[-3:] == [("ErrorFixer", "give_up"), ("ReportError", "end"), ("AssessConfidence", "default")]
    assert r.status == "answered"
    assert r.sql == EMPTY_SQL
    assert len(r.df) == 0
    assert r.warning.startswith("A retry after the grader's critique failed")
    assert "Could not answer: 2 queries tried." in r.warning


def test_grader_llm_mode_fail_then_pass(run):
    critique = "The question asks for the points from most to least; order descending."
    ascending = LAKERS_SQL.replace("DESC", "ASC")       # a mistake no rule sees (the rules caught the old one)
    llm = ScriptedLLM({"SQLGenerator": [ascending, LAKERS_SQL],
                       "ResponseGrader": [f"verdict: fail\ncritique: {critique}", 'verdict: pass\ncritique: ""']})
    r = run(LAKERS_Q, llm, grader="llm")
    assert r.status == "answered"
    assert llm.count("ResponseGrader") == 2 and llm.count("SQLGenerator") == 2
    assert [(g["verdict"], g["by"]) for g in r.grades] == [("fail", "llm"), ("pass", "llm")]
    assert r.grades[0]["critique"] == critique
    assert f"Problem: {critique}" in user_prompt(llm, "SQLGenerator", 1)
    assert ascending in user_prompt(llm, "ResponseGrader", 0)
    assert rows(r) == LAKERS_ROWS
    assert r.warning is None


@pytest.mark.parametrize("replies", [
    ["verdict: [unclosed", "Looks good to me!"],
    ["verdict: maybe"],
    ["verdict: fail"],                        # a fail without a critique is unusable
    [LLMError("grader endpoint down")],
])
def test_grader_llm_mode_malformed_reply_falls_back_to_pass(run, replies):
    llm = ScriptedLLM({"SQLGenerator": [LAKERS_SQL], "ResponseGrader": replies})
    r = run(LAKERS_Q, llm, grader="llm")
    assert r.status == "answered"
    assert llm.count("ResponseGrader") == 2          # max_retries=2
    assert len(r.grades) == 1 and r.grades[0]["verdict"] == "pass"
    assert r.grades[0]["by"].startswith("fallback (grader reply unusable")
    assert path(r) == HAPPY_PATH
    assert llm.count("SQLGenerator") == 1
    assert rows(r) == LAKERS_ROWS


def test_grader_llm_mode_rules_fail_first_without_llm_call(run):
    llm = ScriptedLLM({"SQLGenerator": [EMPTY_SQL, LAKERS_SQL], "ResponseGrader": ["verdict: pass"]})
    r = run(LAKERS_Q, llm, grader="llm")
    assert [(g["verdict"], g["by"]) for g in r.grades] == [("fail", "rules"), ("pass", "llm")]
    assert llm.count("ResponseGrader") == 1


def test_grader_off(run):
    llm = ScriptedLLM({"SQLGenerator": [EMPTY_SQL]})
    r = run(LAKERS_Q, llm, grader="off")
    assert llm.count("SQLGenerator") == 1
    assert [(g["verdict"], g["by"]) for g in r.grades] == [("pass", "off")]
