"""The data cannot answer this (issue 64): decided from structure before any SQL, said on every surface."""
# ruff: noqa: F811  (pytest fixtures are imported from graph_support and used as parameters by name)
from __future__ import annotations

import json

import pytest
from graph_support import path, run  # noqa: F401 (fixtures are used by name)

from duckask.utils.llm import ScriptedLLM
from duckask.utils.schema.catalog import Catalog, Column, Metric, Table
from duckask.utils.trust.answerable import (
    cannot_answer_text,
    content_words,
    measured,
    reach,
    taught_vocabulary,
    things,
    vocabulary,
)

CAT = Catalog(key="t", tables={
    "teams": Table("teams", [Column("id", "INTEGER", pk=True), Column("name", "VARCHAR"), Column("city", "VARCHAR"),
                             Column("country", "VARCHAR")]),
    "players": Table("players", [Column("id", "INTEGER", pk=True), Column("name", "VARCHAR"),
                                 Column("team_id", "INTEGER"), Column("points", "INTEGER"),
                                 Column("homeRuns", "INTEGER"),
                                 Column("birth_country", "VARCHAR", comment="where the player was born")]),
}, values={"lakers": [["teams", "name", "Lakers"]], "canada": [["players", "birth_country", "Canada"]]},
    metrics=[Metric("ppg", "points / games", "points per game")])
VOCAB = vocabulary(CAT)


@pytest.mark.parametrize("question", [
    "How many points did each Lakers player score?",
    "Which player scored the most points?",
    "How many Canadian-born players are there?",                 # a demonym: its first letters begin 'Canada'
    "Who hit the most home runs?",                              # two words joined: homeRuns
    "What is the average ppg of the players in each city?",     # a metric's name
    "List the players born in Canada",                          # the column's description
])
def test_questions_tied_to_the_database_are_attempted(question):
    r = reach(question, VOCAB)
    assert r.outcome == "answerable" and r.rule == "", r


@pytest.mark.parametrize("question,rule,missing", [
    ("How should I train for a marathon?", "world", ["train", "marathon"]),
    ("What tips would you give a young player?", "world", ["tips", "young"]),
    ("Why do people like basketball?", "world", ["like", "basketball"]),
    ("How many prescriptions did each pharmacy fill?", "nothing_tied", ["prescriptions", "pharmacy", "fill"]),
    ("How many patients were admitted to each ward?", "measure_untied", ["patients", "admitted", "ward"]),
    ("How many Grammy awards has each player won?", "measure_untied", ["grammy", "awards", "won"]),
    ("What is the average salary of the players in each city?", "measure_untied", ["salary"]),
])
def test_what_the_data_cannot_answer_is_said_with_the_rule_and_what_is_missing(question, rule, missing):
    r = reach(question, VOCAB)
    assert (r.outcome, r.rule) == ("cannot", rule)
    assert set(missing) <= set(r.missing), r.missing
    text = cannot_answer_text(r)
    assert text.startswith("The data cannot answer this: ")
    if rule == "measure_untied":
        assert "no table or column holds" in text


def test_a_question_with_a_word_tied_to_nothing_is_attempted_and_the_word_kept():
    r = reach("Which player scored the most points in away games?", VOCAB)
    assert r.outcome == "answerable" and r.missing == ["scored", "away"]     # 'games': the metric's description


def test_a_vocabulary_gap_near_the_schema_is_attempted_and_a_table_named_by_a_query_word_ties():
    r = reach("List the account holders with negative balances", VOCAB)    # words near names: the model maps them
    assert r.outcome == "answerable" and r.closest
    people = Catalog(key="p", tables={"people": Table("people", [Column("id", "INTEGER"), Column("age", "INTEGER")])})
    assert reach("remove nothing, just count the people over 60", vocabulary(people)).outcome == "answerable"


def test_a_data_question_worded_like_advice_is_still_a_query():
    assert reach("How should I list the players by points? Give the number of players per team", VOCAB).outcome \
        == "answerable"


def test_what_people_taught_ties_its_words():
    before = reach("How many rookies does each team have?", VOCAB)
    assert before.outcome == "cannot" and before.missing == ["rookies"]
    taught = taught_vocabulary(CAT, ("How many rookies does the Lakers roster have?",))
    assert reach("How many rookies does each team have?", taught).outcome == "answerable"


def test_the_closest_names_are_offered():
    r = reach("Which teams play in the conference?", VOCAB)     # 'play' is tied to nothing, yet near a table
    assert r.missing == ["play", "conference"] and r.closest == ["players"]


def test_a_misspelt_name_and_a_longer_form_of_a_name_are_tied():
    assert reach("What is the birth cuntry of each player?", VOCAB).missing == []      # 'country', misspelt
    assert reach("How many pointes did each player score?", VOCAB).outcome == "answerable"


def test_content_words_and_the_measured_phrase():
    assert content_words("How many of the players' points were scored in 2020?") == ["players", "points", "scored"]
    assert measured("How many staff members work at the museum?") == ["staff", "members", "work"]
    assert measured("What is the total number of goals per club?") == ["goals"]     # "number" says how, not what


# --------------------------------------------------------------------------- the graph and the surfaces
CANNOT_Q = "How many Grammy awards has each player won?"


def test_the_graph_ends_at_check_answerable_with_no_model_call_and_no_query(run):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT 1"]})
    r = run(CANNOT_Q, llm)
    assert r.status == "unanswerable"
    assert path(r) == [("ClarifyQuery", "clear"), ("CheckAnswerable", "cannot")]
    assert llm.count() == 0 and r.sql is None and r.df is None
    assert r.answer.startswith("The data cannot answer this: no table or column holds 'grammy', 'awards'")
    assert r.answerable["outcome"] == "cannot" and r.answerable["rule"] == "measure_untied"
    assert "grammy" in r.answerable["missing"]


def test_off_attempts_it(run):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT name FROM players"]})
    r = run(CANNOT_Q, llm, answerable="off")
    assert r.status == "answered" and llm.count("SQLGenerator") == 1
    assert ("CheckAnswerable", "answerable") in path(r) and r.answerable == {}


def test_an_answered_question_keeps_what_it_could_not_tie_and_the_confidence_says_so(run):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT name, points FROM players ORDER BY points DESC LIMIT 1"]})
    r = run("Which player scored the most points in away games?", llm)
    assert r.status == "answered" and "away" in r.answerable["missing"]
    assert r.confidence["signals"]["missing"] == r.answerable["missing"]
    assert r.confidence["level"] != "high"
    assert any("away" in reason for reason in r.confidence["reasons"])


@pytest.mark.parametrize("question,untied,named", [
    ("What seat does each passenger prefer?", ["seat", "passenger", "prefer"], ["seat", "passenger", "prefer"]),
    ("How many support tickets did each plan's users open?", ["support", "tickets"], ["support", "tickets"]),
    ("Which voter voted for the most contestants by email?", ["email"], ["email"]),
    ("Which college produced the most players?", ["produced"], []),            # a verb in -ed
    ("Who was paid the most, and what was his salary?", ["paid", "his"], []),  # an irregular past, a pronoun
    ("Which languages are spoken by the older people?", ["spoken", "older"], []),  # after "are"; a degree
    ("How many people live in each city?", ["live"], []),                     # after a noun, not a determiner
])
def test_things_are_the_untied_words_that_name_a_thing(question, untied, named):
    assert things(question, untied) == named


def test_an_answer_over_something_the_question_does_not_name_is_low_and_says_what_is_missing(run):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT p.name, t.city FROM players p JOIN teams t ON t.id = p.team_id"]})
    r = run("What is the city of each player's agent?", llm)
    assert r.status == "answered" and r.answerable["absent"] == ["agent"]
    assert r.confidence["signals"]["absent"] == ["agent"]
    assert r.confidence["level"] == "low"
    assert r.confidence["reasons"][0].startswith("low: nothing in the database is called 'agent'")


def test_the_cli_says_it_and_exits_1(small_db, isolated_env, capsys, monkeypatch):
    from duckask.utils import api
    from duckask.utils.app.cli import main
    llm = ScriptedLLM({})
    monkeypatch.setattr(api, "get_llm", lambda settings=None: llm)
    code = main(["ask", CANNOT_Q, "--db", str(small_db), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["status"] == "unanswerable" and out["sql"] is None and out["rows"] == []
    assert out["answer"].startswith("The data cannot answer this") and llm.count() == 0


def test_python_json_and_mcp_say_it(small_db, isolated_env):
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    from duckask.utils.api import ask, prepare
    from duckask.utils.api.present import as_json, for_agent
    from duckask.utils.app.mcp_server import Tools

    r = ask(CANNOT_Q, db=str(small_db), llm=ScriptedLLM({}), router="rules")
    assert r.status == "unanswerable" and r.answerable["rule"] == "measure_untied"
    body = as_json(r)
    assert body["status"] == "unanswerable" and body["answerable"]["missing"][:2] == ["grammy", "awards"]
    assert for_agent(r, 10)["status"] == "unanswerable"
    said = Tools(prepare(str(small_db), llm=ScriptedLLM({}), router="rules"), allow_writes=False).ask(CANNOT_Q)
    assert said["status"] == "unanswerable" and said["answer"].startswith("The data cannot answer this")


@pytest.mark.slow       # a real uvicorn server on 127.0.0.1
def test_http_says_it(small_db, isolated_env):
    pytest.importorskip("fastapi", reason="the server extra is not installed")
    httpx = pytest.importorskip("httpx", reason="httpx is in the test extra")
    import live_server

    from duckask.utils.app.server import create_app

    url, server = live_server.start(create_app(str(small_db), llm=ScriptedLLM({}), router="rules"))
    try:
        r = httpx.post(f"{url}/api/ask", json={"question": CANNOT_Q}, timeout=30)
        assert r.status_code == 200
        body = r.json()
        assert body["status"] == "unanswerable" and body["answer"].startswith("The data cannot answer this")
        assert body["answerable"]["rule"] == "measure_untied" and body["sql"] is None
    finally:
        server.should_exit = True
