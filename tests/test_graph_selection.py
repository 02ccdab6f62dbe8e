"""The graph's later edges, driven by a ScriptedLLM against the small teams/players/arenas DB (the shared
questions, SQL and fixtures: graph_support.py): the analyzer, table selection, options and results,
resample and vote. Each test asserts on the outcome ask() returns and the node path.
"""
# ruff: noqa: F811  (pytest fixtures are imported from graph_support and used as parameters by name)
from __future__ import annotations

import html
import json

import pandas as pd
import pytest
from graph_support import (  # noqa: F401 (fixtures are used by name)
    ALL_POINTS_SQL,
    EMPTY_SQL,
    HAPPY_PATH,
    LAKERS_Q,
    LAKERS_ROWS,
    LAKERS_SQL,
    ROUTED,
    path,
    rows,
    run,
    user_prompt,
)

from duckask.utils.api import ask
from duckask.utils.llm import LLMError, ScriptedLLM


# --------------------------------------------------------------------------- analyzer
def test_analyzer_llm_mode(run):
    llm = ScriptedLLM({"SQLGenerator": [LAKERS_SQL],
                       "DataAnalyzer": ["LeBron James leads the Lakers with 30 points."]})
    r = run(LAKERS_Q, llm, analyzer="llm")
    assert r.answer == "LeBron James leads the Lakers with 30 points."
    assert "LeBron James,30" in user_prompt(llm, "DataAnalyzer", 0)


def test_analyzer_states_one_value_without_a_call(run):
    """A single value (a count) is stated exactly by the rules' sentence: no sentence call."""
    llm = ScriptedLLM({"SQLGenerator": ["SELECT count(*) AS n FROM players"], "DataAnalyzer": ["never asked"]})
    r = run("How many players are there?", llm, analyzer="llm")
    assert llm.count("DataAnalyzer") == 0
    assert r.answer == f"There are {rows(r)[0][0]} players."
    assert r.answer_check["by"] == "rules"


@pytest.mark.parametrize("said", ["rules", "template"])
def test_analyzer_rules_writes_the_sentence_and_template_is_its_older_name(run, said):
    """``analyzer: rules`` makes no sentence call; ``template`` (its name before "template" meant only a kept
    pair's reuse) is read as the same value, so an older config keeps working."""
    from duckask.utils.config import check_settings

    assert check_settings({"analyzer": said}) == {"analyzer": "rules"}
    llm = ScriptedLLM({"SQLGenerator": [LAKERS_SQL], "DataAnalyzer": ["never asked"]})
    r = run(LAKERS_Q, llm, analyzer=said)
    assert llm.count("DataAnalyzer") == 0 and r.answer_check["by"] == "rules" and "LeBron James" in r.answer


def test_analyzer_llm_failure_uses_the_rules_sentence(run):
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
    for t in ("- players (one row per id):", "- teams (one row per id):", "- arenas (one row per "):
        assert t in shortlist                       # each table with what one of its rows is (tests/test_grain.py)
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
    assert path(r) == HAPPY_PATH[:7] + [("SQLExecutor", "error"), ("ErrorFixer", "resample"),
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
