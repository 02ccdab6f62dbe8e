"""The template path in the graph (issue 45, ``nodes/match_template.py``), every edge with the scripted LLM: a kept
pair's question with another value is answered from the pair's SQL without the model; a value that is not in its
column, a near-miss (another measure), templates off and a question that differs go the normal way; a template
that finds nothing, or whose answer the checks object to, falls back to the SQL path; with confirm on it waits."""
# ruff: noqa: F811  (pytest fixtures are imported from graph_support and used as parameters by name)
from __future__ import annotations

import duckdb
import pytest
import yaml
from conftest import build_small_db
from graph_support import LAKERS_Q, LAKERS_SQL, path, rows, run  # noqa: F401 (fixtures are used by name)

from duckask.utils.api import ask
from duckask.utils.llm import ScriptedLLM

MORE_Q = "Which players scored more than 20 points?"
MORE_SQL = "SELECT name, points FROM players WHERE points > 20 ORDER BY points DESC"
LIST_Q = "Which players play for the Lakers?"
COUNT_SQL = "SELECT count(*) AS players FROM players p JOIN teams t ON p.team_id = t.id WHERE t.name = 'Lakers'"
ALL_SQL = "SELECT name, points FROM players ORDER BY points DESC"
CELTICS = [["Jayson Tatum", 28], ["Jaylen Brown", 22]]


@pytest.fixture
def pairs(tmp_path):
    f = tmp_path / "pairs.yaml"
    f.write_text(yaml.safe_dump([{"question": LAKERS_Q, "sql": LAKERS_SQL}, {"question": MORE_Q, "sql": MORE_SQL},
                                 {"question": LIST_Q, "sql": COUNT_SQL}]))
    return str(f)


TEMPLATE_PATH = [("ClarifyQuery", "clear"), ("CheckAnswerable", "answerable"), ("MatchTemplate", "template"),
                 ("SQLExecutor", "success"),
                 ("DataAnalyzer", "default"), ("ResponseGrader", "pass"), ("AssessConfidence", "default")]


def test_another_team_is_answered_from_the_kept_pair_without_the_model(run, pairs):
    r = run("What are the points of Celtics players?", ScriptedLLM({}), examples=pairs)
    assert path(r) == TEMPLATE_PATH and not r.llm_calls
    assert rows(r) == CELTICS and r.path == "template" and "'Celtics'" in r.sql
    assert r.template["pair"]["id"] == "pairs.yaml:1"
    assert r.template["slots"] == [{"kept": "Lakers", "asked": "Celtics"}]
    assert r.confidence["level"] == "high" and r.confidence["reasons"][0].startswith("a kept pair's query")
    assert r.derivation.startswith("From the kept pair #pairs.yaml:1 ('What are the points of Lakers players?'), "
                                   "with Celtics for Lakers.")
    assert r.to_dict()["template"]["exact"] is False


def test_the_same_question_is_the_pair_as_kept(run, pairs):
    r = run(LAKERS_Q.lower(), ScriptedLLM({}), examples=pairs)
    assert path(r) == TEMPLATE_PATH and r.template["exact"] and r.sql == LAKERS_SQL
    assert rows(r) == [["LeBron James", 30], ["Anthony Davis", 25], ["Austin Reaves", 15]]


def test_a_number_for_a_number(run, pairs):
    r = run("Which players scored more than 25 points?", ScriptedLLM({}), examples=pairs)
    assert path(r) == TEMPLATE_PATH and rows(r) == [["LeBron James", 30], ["Jayson Tatum", 28]]


@pytest.mark.parametrize("question, why", [
    ("What are the points of Knicks players?", "Knicks is no value of teams.name"),
    ("What are the average points of Lakers players?", "another measure: a word added"),
    ("What are the rebounds of Lakers players?", "another column: not a literal of the SQL"),
])
def test_no_template_goes_the_normal_way_with_the_pair_as_an_example(run, pairs, question, why):
    llm = ScriptedLLM({"SQLGenerator": [ALL_SQL]})
    r = run(question, llm, examples=pairs, answerable="off")    # "rebounds" is in no column: here only the matching
    assert path(r)[:4] == [("ClarifyQuery", "clear"), ("CheckAnswerable", "answerable"), ("MatchTemplate", "none"),
                          ("PlanQuery", "sql")], why
    assert r.path == "sql" and r.template is None
    assert LAKERS_SQL in llm.calls[0]["messages"][-1]["content"]     # the pair, as a few-shot example


def test_a_reworded_question_is_answered_from_its_kept_pair_as_a_paraphrase(run, pairs):
    # Issue 65: "scored by" and "show" are not the pair's words; the team is a value of its column, put in.
    r = run("Show the points scored by Celtics players.", ScriptedLLM({}), examples=pairs)
    assert path(r) == TEMPLATE_PATH and not r.llm_calls and rows(r) == CELTICS
    assert r.template["reach"] == "paraphrase" and r.template["slots"] == [{"kept": "Lakers", "asked": "Celtics"}]
    assert r.confidence["level"] == "medium" and "matched by meaning" in r.confidence["reasons"][0]
    assert r.derivation.startswith("From the kept pair #pairs.yaml:1 ('What are the points of Lakers players?') "
                                   "asked in other words, with Celtics for Lakers.")


def test_templates_words_keeps_a_reworded_question_on_the_sql_path(run, pairs):
    llm = ScriptedLLM({"SQLGenerator": [LAKERS_SQL.replace("Lakers", "Celtics")]})
    r = run("Show the points scored by Celtics players.", llm, examples=pairs, templates="words")
    assert path(r)[2] == ("MatchTemplate", "none") and len(llm.calls) == 1 and rows(r) == CELTICS
    assert r.path == "sql" and r.template is None


def test_templates_off(run, pairs):
    llm = ScriptedLLM({"SQLGenerator": [LAKERS_SQL.replace("Lakers", "Celtics")]})
    r = run("What are the points of Celtics players?", llm, examples=pairs, templates="off")
    assert path(r)[2] == ("MatchTemplate", "none") and len(llm.calls) == 1 and rows(r) == CELTICS


def test_a_template_that_finds_nothing_falls_back_to_the_sql_path(run, pairs):
    llm = ScriptedLLM({"SQLGenerator": [ALL_SQL]})
    r = run("Which players scored more than 90 points?", llm, examples=pairs)
    assert path(r)[:5] == [("ClarifyQuery", "clear"), ("CheckAnswerable", "answerable"), ("MatchTemplate", "template"),
                          ("SQLExecutor", "fallback"), ("TableSelector", "default")]
    assert r.path == "sql" and "found nothing" in r.template["fallback"] and len(llm.calls) == 1


def test_a_check_the_kept_pair_drew_too_is_not_held_against_its_template(run, pairs):
    # The kept pair counts where its question asks for a list, and a person kept it so: its template is not sent back.
    r = run("Which players play for the Celtics?", ScriptedLLM({}), examples=pairs)
    assert path(r) == TEMPLATE_PATH and rows(r) == [[2]]
    assert r.grades[-1]["overridden"].startswith("count_for_a_list")


def test_a_rules_answer_the_checks_object_to_falls_back(tmp_path, isolated_env):
    # The Knicks are a team with no player: the kept pair's SQL gives them one NULL, which the checks object to
    # (and did not for the Celtics, the pair's own answer): the SQL path answers instead.
    db = build_small_db(tmp_path / "knicks.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute("INSERT INTO teams VALUES (4, 'Knicks', 'New York')")
    f = tmp_path / "most.yaml"
    f.write_text(yaml.safe_dump([{"question": "What is the most points scored by a Celtics player?",
                                  "sql": "SELECT max(p.points) AS most FROM teams t LEFT JOIN players p "
                                         "ON p.team_id = t.id WHERE t.name = 'Celtics'"}]))
    llm = ScriptedLLM({"SQLGenerator": ["SELECT count(*) AS players FROM players WHERE team_id = 4"]})
    r = ask("What is the most points scored by a Knicks player?", db=str(db), llm=llm, examples=str(f),
            resample_drafts=0, analyzer="rules", router="rules")
    assert path(r)[:7] == [("ClarifyQuery", "clear"), ("CheckAnswerable", "answerable"), ("MatchTemplate", "template"),
                          ("SQLExecutor", "success"),
                           ("DataAnalyzer", "default"), ("ResponseGrader", "fallback"), ("TableSelector", "default")]
    assert r.path == "sql" and "grader objected" in r.template["fallback"] and len(llm.calls) >= 1


def test_with_confirm_on_the_template_waits_like_any_query(run, pairs):
    r = run("What are the points of Celtics players?", ScriptedLLM({}), examples=pairs, confirm=True)
    assert path(r) == [("ClarifyQuery", "clear"), ("CheckAnswerable", "answerable"), ("MatchTemplate", "template"),
                       ("ConfirmSQL", "end")]
    assert r.status == "pending" and "'Celtics'" in r.sql
    done = r.approve()
    assert done.ok and rows(done) == CELTICS and done.path == "template"
