"""Changes asked in plain English (issue 23): IntentRouter's ``change_request`` rule, ProposeWrite, and the
same card, tiers, approval and audit a typed statement gets (``nodes/propose_write.py``).

The model is a ScriptedLLM: each test scripts the statement it "proposes", so every edge of the path is
held (write, read, no statement), and the database file's bytes show that nothing ran without a yes.
"""
from __future__ import annotations

import pytest
import yaml
from conftest import SHARED, requires_shared, sha256
from test_writes import log, make_people

from duckask.nodes.propose_write import parse_proposal
from duckask.utils.api import ask
from duckask.utils.config import load_settings
from duckask.utils.dialogue.intent import change_request, classify
from duckask.utils.llm.scripted import ScriptedLLM
from duckask.utils.semantic import get_catalog

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


@pytest.fixture
def people(tmp_path):
    return make_people(tmp_path / "people.duckdb")


@pytest.fixture
def on(isolated_env, tmp_path):
    return load_settings(None, allow_writes=True, audit_file=str(tmp_path / "audit.duckdb"), router="rules",
                         analyzer="rules")


def proposing(sql: str, why: str = "Removes the people over 60.") -> ScriptedLLM:
    return ScriptedLLM({"ProposeWrite": [f"```sql\n{sql}\n```\nExplanation: {why}"],
                        "SQLGenerator": ["```sql\nSELECT count(*) FROM people WHERE age > 60\n```"]})


# -- the rule ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, is_change", [
    ("delete the people over 60", True),
    ("Please add an index on people(age) to speed up age queries", True),
    ("willie mays passed away on june 18 2024, can you record his death date", True),
    ("The Raptors have no head coach listed. Set it to Darko Rajaković.", True),
    ("remvoe the test rows", True),
    ("which people were deleted last week?", False),
    ("update me on how many people are over 60", False),
    ("add up the ages of everyone", False),
    ("how many pets were added in 2020?", False),
    ("show me the most recently added people", False),
])
def test_a_change_request_is_a_sentence_led_by_a_change_verb(text, is_change):
    assert (change_request(text, None, False) == "change") is is_change


def test_no_evaluation_question_reads_as_a_change():
    """The NBA and Lahman questions of bench/ (in every clone): questions, never change requests."""
    qs = []
    for f in ("nba_questions.yaml", "nba_questions_heldout.yaml", "lahman_questions.yaml"):
        qs += [q["question"] for q in yaml.safe_load((ROOT / "bench" / f).read_text())]
    assert len(qs) >= 75
    assert [q for q in qs if change_request(q, None, False)] == []


@requires_shared
def test_no_spider_dev_question_reads_as_a_change():
    """Every Spider dev question (../shared): a question, never a change request."""
    import json

    spider = SHARED / "benchmarks" / "spider_dev" / "questions.jsonl"
    qs = [json.loads(line)["question"] for line in spider.open()]
    assert len(qs) >= 1000
    assert [q for q in qs if change_request(q, None, False)] == []


def test_pasted_sql_stays_the_users_sql(people, isolated_env):
    assert classify("DELETE FROM people WHERE age > 60", get_catalog(str(people)))[0] == "sql"


@pytest.mark.parametrize("reply, sql, why", [
    ("```sql\nDELETE FROM t WHERE a = 1;\n```\nExplanation: Deletes the test rows.", "DELETE FROM t WHERE a = 1",
     "Deletes the test rows."),
    ("```sql\nALTER TABLE s ADD COLUMN n VARCHAR; UPDATE s SET n = 1\n```", "ALTER TABLE s ADD COLUMN n VARCHAR; "
     "UPDATE s SET n = 1", None),                                       # both kept: the tiers refuse several
    ("```sql\nSELECT 1\n", "SELECT 1", None),
])
def test_parse_proposal(reply, sql, why):
    assert parse_proposal(reply) == (sql, why)


def test_a_reply_without_a_statement_is_an_error():
    with pytest.raises(ValueError, match="no statement"):
        parse_proposal("```sql\n\n```")


# -- the path ---------------------------------------------------------------------------------------------
def test_request_card_approve_change(people, on):
    before = sha256(people)
    r = ask("delete the people over 60", db=str(people), llm=proposing("DELETE FROM people WHERE age > 60"),
            settings=on)
    assert r.intent == "change" and r.status == "pending" and sha256(people) == before
    assert r.write.request == "delete the people over 60" and r.write.proposed_by == "model"
    assert r.write.estimated_rows == 3 and "asked:          delete the people over 60" in r.write.text()
    assert "model says:     Removes the people over 60." in r.write.text()
    done = r.approve()
    assert done.status == "written" and sha256(people) != before
    (entry,) = log(on)
    assert (entry["request"], entry["proposed_by"], entry["decision"], entry["outcome"], entry["actual_rows"]) == \
        ("delete the people over 60", "model", "approved", "committed", 3)
    assert entry["decided_by"] == entry["user"]


def test_request_rejected_changes_nothing(people, on):
    before = sha256(people)
    r = ask("delete the people over 60", db=str(people), llm=proposing("DELETE FROM people WHERE age > 60"),
            settings=on)
    assert r.reject("not those").status == "rejected" and sha256(people) == before
    assert [e["decision"] for e in log(on)] == ["rejected"]


def test_a_t3_request_is_refused_with_its_reason(people, on):
    before = sha256(people)
    r = ask("drop the pets table", db=str(people), llm=proposing("DROP TABLE pets", "Drops pets."), settings=on)
    assert r.status == "blocked" and "T3" in r.answer and "DROP TABLE pets" in r.answer
    assert sha256(people) == before and [e["decision"] for e in log(on)] == ["blocked"]


def test_several_statements_are_refused_not_cut(people, on):
    r = ask("add a notes column to people and fill it", db=str(people), settings=on,
            llm=proposing("ALTER TABLE people ADD COLUMN notes VARCHAR; UPDATE people SET notes = 'x'"))
    assert r.status == "blocked" and "ALTER TABLE people ADD COLUMN notes VARCHAR; UPDATE" in r.write.sql


def test_writes_off_says_what_would_have_been_proposed_and_nothing_waits(people, isolated_env, tmp_path):
    off = load_settings(None, audit_file=str(tmp_path / "audit.duckdb"), router="rules", analyzer="rules")
    before = sha256(people)
    r = ask("delete the people over 60", db=str(people), llm=proposing("DELETE FROM people WHERE age > 60"),
            settings=off)
    assert r.status == "blocked" and sha256(people) == before
    assert "DELETE FROM people WHERE age > 60" in r.answer and "--allow-writes" in r.answer
    assert [e["decision"] for e in log(off)] == ["blocked"]          # recorded, never pending


def test_a_request_that_turns_into_a_select_is_answered_as_a_question(people, on):
    llm = proposing("SELECT count(*) FROM people WHERE age > 60")
    r = ask("remove nothing, just count the people over 60", db=str(people), llm=llm, settings=on)
    assert r.status == "answered" and r.write is None and r.df.iloc[0, 0] == 3
    assert llm.count("ProposeWrite") == 1 and llm.count("SQLGenerator") == 1 and log(on) == []


def test_no_statement_after_two_tries_ends_with_a_clear_error(people, on):
    llm = ScriptedLLM({"ProposeWrite": ["I am not sure what you mean."]})
    before = sha256(people)
    r = ask("delete the people over 60", db=str(people), llm=llm, settings=on)
    assert r.status == "error" and "write the statement yourself" in r.answer
    assert llm.count("ProposeWrite") == 2 and sha256(people) == before and log(on) == []


def test_the_prompt_shows_the_tables_and_the_rules(people, on):
    llm = proposing("DELETE FROM people WHERE age > 60")
    ask("delete the people over 60", db=str(people), llm=llm, settings=on)
    (call,) = [c for c in llm.calls if c["node"] == "ProposeWrite"]
    text = call["messages"][-1]["content"]
    assert "CREATE TABLE people" in text and "delete the people over 60" in text and "always refused" in text
