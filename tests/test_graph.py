"""Every edge of the duckask graph, driven by a ScriptedLLM against the small teams/players/arenas DB.

Each test asserts on the outcome ``ask()`` returns (status, answer, SQL, rows), the node path and
actions in the trace, and how many LLM calls each node made.
"""
from __future__ import annotations

import builtins
import html
import json
import sys

import pandas as pd
import pytest
from conftest import sha256

from duckask.utils.app.api import Result, ask
from duckask.utils.llm import LLMError, ScriptedLLM

LAKERS_Q = "What are the points of Lakers players?"
LAKERS_SQL = ("SELECT p.name, p.points FROM players p JOIN teams t ON p.team_id = t.id "
              "WHERE t.name = 'Lakers' ORDER BY p.points DESC")
LAKERS_ROWS = [["LeBron James", 30], ["Anthony Davis", 25], ["Austin Reaves", 15]]
# Same shape, but 'lakers' is not how the data spells it: 0 rows.
EMPTY_SQL = LAKERS_SQL.replace("'Lakers'", "'lakers'")
ALL_POINTS_SQL = "SELECT name, points FROM players ORDER BY points DESC"

HAPPY_PATH = [("ClarifyQuery", "clear"), ("PlanQuery", "sql"), ("TableSelector", "default"),
              ("SchemaLookup", "default"), ("SQLGenerator", "default"), ("SQLExecutor", "success"),
              ("DataAnalyzer", "default"), ("ResponseGrader", "pass"), ("AssessConfidence", "default")]


ROUTED = [("IntentRouter", "data"), ("ResolveFollowUp", "default")]


def path(r: Result) -> list[tuple[str, str]]:
    """The node path after the routing every data question starts with (IntentRouter, then
    ResolveFollowUp; their own paths are tested in test_conversation.py)."""
    p = [(t["node"], t["action"]) for t in r.trace]
    assert p[:2] == ROUTED, p[:2]
    return p[2:]


def rows(r: Result) -> list[list]:
    return r.df.values.tolist()


def user_prompt(llm: ScriptedLLM, node: str, i: int) -> str:
    """The user message of the i-th call (0-based) made by ``node``."""
    calls = [c for c in llm.calls if c["node"] == node]
    return calls[i]["messages"][-1]["content"]


@pytest.fixture
def run(small_db, isolated_env):
    """ask() on the small DB with the cache isolated; options go through load_settings."""
    def _run(question: str, llm: ScriptedLLM, **options) -> Result:
        # Resampling after a failed first query is off unless a test asks for it, so that each test
        # drives one path; the resample tests are at the end. Likewise the answer is the template and
        # the router decides by rules alone unless a test asks (their tests: test_conversation.py).
        return ask(question, db=str(small_db), llm=llm,
                   **{"resample_drafts": 0, "analyzer": "template", "router": "rules", **options})
    return _run


@pytest.fixture
def no_stdin(monkeypatch):
    """Fail the test if anything tries to read from the terminal."""
    def boom(*a, **k):
        raise AssertionError("the flow read from stdin")

    class NoStdin:
        read = readline = readlines = boom

        def isatty(self):
            return False

    monkeypatch.setattr(builtins, "input", boom)
    monkeypatch.setattr(sys, "stdin", NoStdin())


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
    assert "players" in r.derivation and "t.name = 'Lakers'" in r.derivation
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
    assert path(r) == HAPPY_PATH[:5] + [("SQLExecutor", "error"), ("ErrorFixer", "retry"),
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
    assert path(r) == HAPPY_PATH[:5] + [("SQLExecutor", "error"), ("ErrorFixer", "repaired"),
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
    assert path(r) == HAPPY_PATH[:7] + [("ResponseGrader", "fail")] + HAPPY_PATH[4:]
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
    assert r.warning


def test_grader_count_rule(run):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT name FROM players WHERE team_id = 1",
                                        "SELECT count(*) AS n FROM players WHERE team_id = 1"]})
    r = run("How many players do the Lakers have?", llm)
    assert [g["verdict"] for g in r.grades] == ["fail", "pass"]
    assert "one number" in r.grades[0]["critique"]
    assert rows(r) == [[3]]
    assert r.answer == "The answer is 3 (n)."


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
    critique = "The question asks for Lakers players only; filter on the team name."
    llm = ScriptedLLM({"SQLGenerator": [ALL_POINTS_SQL, LAKERS_SQL],
                       "ResponseGrader": [f"verdict: fail\ncritique: {critique}", 'verdict: pass\ncritique: ""']})
    r = run(LAKERS_Q, llm, grader="llm")
    assert r.status == "answered"
    assert llm.count("ResponseGrader") == 2 and llm.count("SQLGenerator") == 2
    assert [(g["verdict"], g["by"]) for g in r.grades] == [("fail", "llm"), ("pass", "llm")]
    assert r.grades[0]["critique"] == critique
    assert f"Problem: {critique}" in user_prompt(llm, "SQLGenerator", 1)
    assert ALL_POINTS_SQL in user_prompt(llm, "ResponseGrader", 0)
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


# --------------------------------------------------------------------------- analyzer
def test_analyzer_llm_mode(run):
    llm = ScriptedLLM({"SQLGenerator": [LAKERS_SQL],
                       "DataAnalyzer": ["LeBron James leads the Lakers with 30 points."]})
    r = run(LAKERS_Q, llm, analyzer="llm")
    assert r.answer == "LeBron James leads the Lakers with 30 points."
    assert "LeBron James,30" in user_prompt(llm, "DataAnalyzer", 0)


def test_analyzer_states_one_value_without_a_call(run):
    """A single value (a count) is stated exactly by the template: no sentence call."""
    llm = ScriptedLLM({"SQLGenerator": ["SELECT count(*) AS n FROM players"], "DataAnalyzer": ["never asked"]})
    r = run("How many players are there?", llm, analyzer="llm")
    assert llm.count("DataAnalyzer") == 0
    assert r.answer == f"The answer is {rows(r)[0][0]} (n)."
    assert r.answer_check["by"] == "template"


def test_analyzer_llm_failure_uses_template(run):
    llm = ScriptedLLM({"SQLGenerator": [LAKERS_SQL], "DataAnalyzer": ["   "]})
    r = run(LAKERS_Q, llm, analyzer="llm")
    assert r.status == "answered"
    assert r.answer.startswith("3 rows: (LeBron James, 30)")


# --------------------------------------------------------------------------- table selection
def test_table_selector_llm_pick_on_large_schema(run):
    llm = ScriptedLLM({"TableSelector": ["tables: [players]"], "SQLGenerator": [LAKERS_SQL]})
    r = run(LAKERS_Q, llm, table_llm_threshold=1, table_sure_band=0)
    assert r.status == "answered"
    assert llm.count("TableSelector") == 1 and llm.count() == 2
    assert next(t for t in r.trace if t["node"] == "TableSelector")["tables_by"] == "llm"
    assert r.tables == ["players", "teams"]        # teams added as the parent of players.team_id
    shortlist = user_prompt(llm, "TableSelector", 0)
    for t in ("- players:", "- teams:", "- arenas:"):
        assert t in shortlist
    schema = user_prompt(llm, "SQLGenerator", 0)
    assert "CREATE TABLE players" in schema and "CREATE TABLE teams" in schema
    assert "CREATE TABLE arenas" not in schema
    assert path(r) == HAPPY_PATH
    assert rows(r) == LAKERS_ROWS


def test_table_selector_case_insensitive_and_fenced(run):
    llm = ScriptedLLM({"TableSelector": ["```yaml\ntables: [Arenas]\n```"],
                       "SQLGenerator": ["SELECT name, capacity FROM arenas ORDER BY capacity DESC LIMIT 1"]})
    r = run("Which arena has the largest capacity?", llm, table_llm_threshold=1, table_sure_band=0)
    assert r.tables == ["arenas", "teams"]
    assert rows(r) == [["United Center", 20917]]


@pytest.mark.parametrize("replies", [
    ["tables: [unclosed", "Use the players table."],
    ["tables: [salaries, coaches]"],
    ["tables: players"],                       # not a list
    [LLMError("down")],
])
def test_table_selector_bad_reply_falls_back_to_pre_ranker(run, replies):
    llm = ScriptedLLM({"TableSelector": replies, "SQLGenerator": [LAKERS_SQL]})
    r = run(LAKERS_Q, llm, table_llm_threshold=1, table_sure_band=0)
    assert llm.count("TableSelector") == 2           # max_retries=2
    assert r.status == "answered"
    # The pre-ranker's top 3: every table here; players and teams rank above arenas.
    assert sorted(r.tables) == ["arenas", "players", "teams"]
    assert r.tables.index("arenas") == 2
    assert rows(r) == LAKERS_ROWS


def test_table_selector_skips_the_llm_when_the_pre_ranker_is_sure(run):
    """1-5 tables above table_sure_band x the top score: taken (with their parents) without a call."""
    llm = ScriptedLLM({"SQLGenerator": [LAKERS_SQL]})
    r = run(LAKERS_Q, llm, table_llm_threshold=1)
    assert llm.count("TableSelector") == 0 and llm.count() == 1
    assert next(t for t in r.trace if t["node"] == "TableSelector")["tables_by"] == "ranker"
    assert "players" in r.tables and "teams" in r.tables
    assert rows(r) == LAKERS_ROWS


@pytest.mark.parametrize("scores, band, expected", [
    ([10, 2, 1], 0.3, ["a"]),                      # one clear winner
    ([10, 9, 4, 1], 0.3, ["a", "b", "c"]),         # a band of three
    ([10, 9, 8, 7, 6, 5], 0.3, None),              # six in the band: not sure
    ([10, 9], 0, None),                            # off
    ([0, 0], 0.3, None),                           # nothing matched
    ([], 0.3, None),
])
def test_sure_tables(scores, band, expected):
    from duckask.utils.schema.ranker import Ranked, sure_tables

    ranked = [Ranked(table="abcdef"[i], score=s) for i, s in enumerate(scores)]
    assert sure_tables(ranked, band) == expected


# --------------------------------------------------------------------------- options and results
def test_options_apply_on_top_of_explicit_settings(small_db, settings):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT name, salary FROM players"]})
    r = ask(LAKERS_Q, db=str(small_db), llm=llm, settings=settings, max_fix_retries=0, resample_drafts=0)
    assert llm.count("SQLGenerator") == 1
    assert r.status == "error"


def test_row_cap_option_applies_to_an_already_open_database(run):
    run(LAKERS_Q, ScriptedLLM({"SQLGenerator": [LAKERS_SQL]}))      # opens (and caches) the connection
    r = run("What are the points of players?", ScriptedLLM({"SQLGenerator": [ALL_POINTS_SQL]}), row_cap=2)
    assert rows(r) == [["LeBron James", 30], ["Jayson Tatum", 28]]
    assert r.truncated is True
    assert r.answer.startswith("2+ rows (capped at the row limit)")


def test_on_node_callback_sees_every_node(run):
    seen: list[str] = []
    r = run(LAKERS_Q, ScriptedLLM({"SQLGenerator": [LAKERS_SQL]}), on_node=seen.append)
    assert seen == [n for n, _ in ROUTED + HAPPY_PATH]
    assert r.status == "answered"


def test_result_to_dict_repr_and_html(run):
    llm = ScriptedLLM({"SQLGenerator": [LAKERS_SQL]})
    r = run(LAKERS_Q, llm)
    d = r.to_dict()
    text = json.dumps(d)
    back = json.loads(text)
    for key in ("status", "answer", "sql", "columns", "rows", "tables", "trace"):
        assert key in back
    assert back["status"] == "answered"
    assert back["sql"] == LAKERS_SQL
    assert back["columns"] == ["name", "points"]
    assert back["rows"] == LAKERS_ROWS
    assert back["row_count"] == 3
    assert sorted(back["tables"]) == ["arenas", "players", "teams"]
    assert [t["node"] for t in back["trace"]] == [n for n, _ in ROUTED + HAPPY_PATH]
    assert back["llm"]["calls"] == 1 and back["llm"]["prompt_tokens"] > 0
    assert r.to_dict(max_rows=1)["rows"] == LAKERS_ROWS[:1]
    assert r.answer in repr(r) and LAKERS_SQL in repr(r)
    page = r._repr_html_()
    assert html.escape(r.answer) in page and "<table" in page and "ClarifyQuery" in page
    assert isinstance(r.df, pd.DataFrame)


def test_result_to_dict_when_not_answered(run):
    r = run("show me the data", ScriptedLLM({}))
    d = json.loads(json.dumps(r.to_dict()))
    assert d["status"] == "needs_clarification"
    assert d["columns"] == [] and d["rows"] == [] and d["sql"] is None
    assert d["clarifying_question"] == r.answer
    assert r.answer in repr(r) and html.escape(r.answer) in r._repr_html_()


def test_grader_names_a_contradictory_filter(run):
    both = "SELECT name FROM players WHERE name = 'LeBron James' AND name = 'Anthony Davis'"
    llm = ScriptedLLM({"SQLGenerator": [both, LAKERS_SQL]})
    r = run(LAKERS_Q, llm)
    assert r.status == "answered" and rows(r) == LAKERS_ROWS
    critique = r.grades[0]["critique"]
    assert "cannot equal both 'LeBron James' and 'Anthony Davis'" in critique and "INTERSECT" in critique
    assert "INTERSECT" in user_prompt(llm, "SQLGenerator", 1)


# --------------------------------------------------------------------------- resample and vote
def test_failed_first_query_resamples_and_votes_for_the_result_most_agree_on(run):
    bad = "SELECT name, salary FROM players"
    other = "SELECT p.name, p.points FROM teams t JOIN players p ON t.id = p.team_id WHERE t.name = 'Lakers'"
    llm = ScriptedLLM({"SQLGenerator": [bad, ALL_POINTS_SQL, LAKERS_SQL, other]})
    r = run(LAKERS_Q, llm, resample_drafts=3)
    assert r.status == "answered"
    assert path(r) == HAPPY_PATH[:5] + [("SQLExecutor", "error"), ("ErrorFixer", "resample"),
                                        ("SQLGenerator", "default"), ("SQLExecutor", "success"),
                                        ("DataAnalyzer", "default"), ("ResponseGrader", "pass"),
                                        ("AssessConfidence", "default")]
    # The first query at temperature 0, then samples of the same prompt with fixed seeds.
    assert [(c["temperature"], c["seed"]) for c in llm.calls] == [(None, None), (0.7, 1), (0.7, 2), (0.7, 3)]
    assert user_prompt(llm, "SQLGenerator", 1) == user_prompt(llm, "SQLGenerator", 0)   # no error shown
    assert r.sql == LAKERS_SQL and r.first_sql == bad
    assert sorted(rows(r)) == sorted(LAKERS_ROWS)
    assert [(v["sql"], v["status"], v["chosen"], v["agrees"]) for v in r.vote] == [
        (bad, "error", False, False), (ALL_POINTS_SQL, "ok", False, False), (LAKERS_SQL, "ok", True, True),
        (other, "ok", False, True)]
    assert [(a["sql"], a["after"], a["status"]) for a in r.attempts] == [(bad, "question", "error"),
                                                                          (LAKERS_SQL, "resample", "ok")]


def test_identical_drafts_run_once_and_count_twice(run):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT name, salary FROM players", ALL_POINTS_SQL, LAKERS_SQL, LAKERS_SQL]})
    r = run(LAKERS_Q, llm, resample_drafts=3)
    assert r.sql == LAKERS_SQL
    assert [(v["sql"], v["drafts"], v["positions"]) for v in r.vote][1:] == [(ALL_POINTS_SQL, 1, [1]),
                                                                             (LAKERS_SQL, 2, [2, 3])]


def test_no_draft_runs_then_a_retry_shows_the_first_error(run):
    # Drafts that no free repair fixes either (no column is like "wage").
    bad, worse = "SELECT name, salary FROM players", "SELECT wage FROM players"
    llm = ScriptedLLM({"SQLGenerator": [bad, worse, worse, ALL_POINTS_SQL]})
    r = run("What are the points of players?", llm, resample_drafts=2)
    assert r.status == "answered" and r.sql == ALL_POINTS_SQL
    assert [t["action"] for t in r.trace if t["node"] == "ErrorFixer"] == ["resample", "retry"]
    assert llm.count("SQLGenerator") == 4 and llm.calls[3]["temperature"] is None
    assert "salary" in user_prompt(llm, "SQLGenerator", 3)       # the retry shows the first query's error
    assert [(a["sql"], a["status"]) for a in r.attempts] == [(bad, "error"), (bad, "error"), (ALL_POINTS_SQL, "ok")]
    assert r.first_sql == bad


def test_a_repair_comes_before_a_resample(run):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT name, pointz FROM players ORDER BY pointz DESC LIMIT 2"]})
    r = run("Which players have the most points?", llm, resample_drafts=3)
    assert r.status == "answered" and llm.count() == 1
    assert r.sql == "SELECT name, points FROM players ORDER BY points DESC LIMIT 2"


def test_empty_result_resamples_once_before_the_grader_critique(run):
    llm = ScriptedLLM({"SQLGenerator": [EMPTY_SQL, EMPTY_SQL, LAKERS_SQL]})
    r = run(LAKERS_Q, llm, resample_drafts=2)
    assert r.status == "answered" and r.sql == LAKERS_SQL
    assert [(t["node"], t["action"]) for t in r.trace if t["node"] in ("ResponseGrader", "SQLGenerator")] == [
        ("SQLGenerator", "default"), ("ResponseGrader", "resample"), ("SQLGenerator", "default"),
        ("ResponseGrader", "pass")]
    assert llm.count() == 3
    assert [v["rows"] for v in r.vote] == [0, 3] and r.vote[1]["chosen"]
    assert r.grades[0]["by"] == "rules" and r.grades[0]["verdict"] == "fail"


def test_resample_happens_once_a_question(run):
    llm = ScriptedLLM({"SQLGenerator": [EMPTY_SQL]})
    r = run(LAKERS_Q, llm, resample_drafts=2, max_grader_rounds=1)
    grader = [t["action"] for t in r.trace if t["node"] == "ResponseGrader"]
    assert grader == ["resample", "fail", "exhausted"]
    assert llm.count() == 1 + 2 + 2     # first, 2 drafts, the critique's retry (repeated, so sampled once more)
    assert r.warning and r.warning.startswith("The answer may be wrong")


@pytest.mark.parametrize("question, noted", [
    ("Which players scored in both 2013 and 2016?", True),
    ("What are the ids of students who both have friends and are liked?", True),
    ("List both the name and the id of each team.", False),
    ("Show both charge type and amount.", False),
    ("What are the points of Lakers players?", False),
])
def test_both_questions_get_an_intersect_note(run, question, noted):
    llm = ScriptedLLM({"SQLGenerator": [ALL_POINTS_SQL]})
    run(question, llm, clarify="off")
    prompt = user_prompt(llm, "SQLGenerator", 0)
    assert ("INTERSECT" in prompt) is noted
    assert prompt.index("Question:") < (prompt.find("Note:") if noted else len(prompt))   # after the question


def test_grader_names_a_join_of_a_column_with_itself(run):
    cross = "SELECT DISTINCT t.city FROM teams t JOIN arenas a ON t.city = t.city"
    llm = ScriptedLLM({"SQLGenerator": [cross, "SELECT city FROM teams"]})
    # The question names arenas, so the clean-up keeps the (non-key) join for the grader to see.
    r = run("Which cities have teams and arenas?", llm)
    assert [g["verdict"] for g in r.grades] == ["fail", "pass"]
    assert "t.city = t.city compares a column with itself" in user_prompt(llm, "SQLGenerator", 1)
    assert r.sql == "SELECT city FROM teams"


def test_a_column_of_a_table_the_query_did_not_join_is_joined_without_an_llm_call(run):
    # capacity lives in arenas; the model read only teams. arenas has a name too: the bare name
    # column is qualified with the table it meant, so the join does not make it ambiguous.
    llm = ScriptedLLM({"SQLGenerator": ["SELECT name, capacity FROM teams WHERE city = 'Boston'"]})
    r = run("What is the capacity of the arena of the team in Boston?", llm)
    assert r.ok and llm.count() == 1
    assert ("ErrorFixer", "repaired") in path(r)
    assert r.sql == ("SELECT teams.name, capacity FROM teams JOIN arenas ON teams.id = arenas.team_id "
                     "WHERE city = 'Boston'")
    assert rows(r) == [["Celtics", 19156]]


def test_drafts_of_a_vote_get_the_free_repairs(run):
    # The first query forgot to join arenas; while a resample is to come, ErrorFixer leaves that to
    # the vote, where it and a misspelt draft are repaired and agree.
    first = "SELECT name, capacity FROM teams WHERE city = 'Boston'"
    misspelt = "SELECT t.name, a.capcity FROM teams t JOIN arenas a ON a.team_id = t.id WHERE t.city = 'Boston'"
    llm = ScriptedLLM({"SQLGenerator": [first, misspelt, "SELECT 'TD Garden', 1"]})
    r = run("What is the capacity of the arena of the team in Boston?", llm, resample_drafts=2)
    assert [t["action"] for t in r.trace if t["node"] == "ErrorFixer"] == ["resample"]
    assert rows(r) == [["Celtics", 19156]]
    assert [(v["positions"], v["status"], v["sql"] != v["draft"], v["agrees"]) for v in r.vote] == [
        ([0], "ok", True, True), ([1], "ok", True, True), ([2], "ok", False, False)]
