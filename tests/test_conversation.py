"""Conversations against a scripted LLM: routing (every intent and the LLM fallback), follow-ups
(rules and the LLM rewrite, the previous pair as context, per-turn reset), the user's SQL,
confirm-before-run (yes / no / edit, and pending results), sessions (save, resume, bad files),
sentence answers and their check, and ClarifyQuery on vocabulary gaps."""
from __future__ import annotations

import json

import duckdb
import pytest

from duckask import Conversation, ask
from duckask.utils.api import new_shared, prepare, run_turn
from duckask.utils.app.conversation import SessionError
from duckask.utils.llm import ScriptedLLM

Q19 = "Who hit the most home runs in 2019?"
SQL19 = "SELECT player, hr FROM seasons WHERE year = 2019 ORDER BY hr DESC LIMIT 1"
SQL18 = "SELECT player, hr FROM seasons WHERE year = 2018 ORDER BY hr DESC LIMIT 1"
LEFTIES = "SELECT count(*) AS n FROM seasons WHERE year = 2019 AND bats = 'L'"


@pytest.fixture
def db(tmp_path, isolated_env):
    path = tmp_path / "hr.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE seasons (player VARCHAR, team VARCHAR, year INTEGER, hr INTEGER, bats VARCHAR)")
        con.execute("COMMENT ON COLUMN seasons.hr IS 'Home runs hit in the season'")
        con.execute("""INSERT INTO seasons VALUES ('Pete Alonso', 'NYN', 2019, 53, 'R'),
            ('Cody Bellinger', 'LAN', 2019, 47, 'L'), ('Khris Davis', 'OAK', 2018, 48, 'R'),
            ('J.D. Martinez', 'BOS', 2018, 43, 'R'), ('Christian Yelich', 'MIL', 2019, 44, 'L')""")
        con.execute("CREATE TABLE users (id INTEGER, name VARCHAR)")
        con.execute("CREATE TABLE transactions (user_id INTEGER, amount DOUBLE)")
        con.execute("INSERT INTO users VALUES (1, 'Ann'), (2, 'Bob')")
        con.execute("INSERT INTO transactions VALUES (1, -20.0), (2, 35.5)")
    return str(path)


def sql_for(messages) -> str:
    """A cooperative SQL writer: the year the question names."""
    question = messages[-1]["content"].rsplit("Question:", 1)[-1]
    return SQL18 if "2018" in question else SQL19


def conv(db, script, **options):
    return Conversation(db, llm=ScriptedLLM(script), resample_drafts=0, analyzer="rules", **options)


def nodes(r):
    return [t["node"] for t in r.trace]


# --------------------------------------------------------------------------- follow-ups
def test_a_period_follow_up_is_rewritten_by_a_rule_and_keeps_the_previous_pair(db):
    c = conv(db, {"SQLGenerator": sql_for})
    r1 = c.ask(Q19)
    assert r1.ok and r1.df.values.tolist() == [["Pete Alonso", 53]] and r1.intent == "data"
    r2 = c.ask("and in 2018?")
    assert r2.resolved_question == "Who hit the most home runs in 2018?"
    assert r2.routing == {"intent_by": "follow_up", "resolved_by": "swap_period"}
    assert r2.trace[1]["resolved_question"] == r2.resolved_question and r2.trace[1]["by"] == "swap_period"
    assert r2.trace[0]["intent"] == "data"
    assert r2.df.values.tolist() == [["Khris Davis", 48]]
    assert r2.question == "and in 2018?"                      # the turn as typed
    prompt = c.prep.llm.calls[-1]["messages"][-1]["content"]
    assert f"-- {Q19}\n{SQL19};" in prompt                  # the previous turn as the first example pair
    assert r2.examples[0]["id"] == "previous turn"
    # Per-turn state is fresh: only this turn's attempts and grades.
    assert [a["sql"] for a in r2.attempts] == [SQL18] and len(r2.grades) == 1
    assert c.prep.llm.count("ResolveFollowUp") == 0           # no LLM call for a rule's rewrite
    assert [t["intent"] for t in c.history] == ["data", "data"]
    assert c.history[1]["resolved_question"] == r2.resolved_question


def test_a_follow_up_no_rule_can_rewrite_goes_to_the_llm_with_the_previous_answer(db):
    rewrites = []

    def rewrite(messages):
        rewrites.append(messages[-1]["content"])
        return "How many players who hit home runs in 2019 bat left-handed?"

    c = conv(db, {"SQLGenerator": [SQL19, LEFTIES], "ResolveFollowUp": rewrite})
    c.ask(Q19)
    r = c.ask("how many of them bat left-handed?")
    assert r.resolved_question == "How many players who hit home runs in 2019 bat left-handed?"
    assert r.routing["resolved_by"] == "llm" and r.df.values.tolist() == [[2]]
    assert f"Previous question: {Q19}" in rewrites[0] and "Pete Alonso" in rewrites[0]
    assert nodes(r)[:3] == ["IntentRouter", "ResolveFollowUp", "ClarifyQuery"]


def test_an_unusable_rewrite_keeps_the_turn_and_still_gives_the_previous_pair(db):
    c = conv(db, {"SQLGenerator": [SQL19, LEFTIES], "ResolveFollowUp": [""]})
    c.ask(Q19)
    r = c.ask("how many of them bat left-handed?")
    assert r.resolved_question == "how many of them bat left-handed?"
    assert r.routing["resolved_by"].startswith("kept") and r.ok
    assert r.examples[0]["id"] == "previous turn"


def test_without_history_a_reference_is_asked_back_and_with_history_it_is_resolved(db):
    r = ask("Is he left-handed?", db=db, llm=ScriptedLLM({}), analyzer="rules")
    assert r.status == "needs_clarification" and '"he"' in r.clarifying_question


# --------------------------------------------------------------------------- routing
def test_a_schema_question_is_answered_from_the_catalog_without_the_model(db):
    c = conv(db, {})
    r = c.ask("what does hr mean?")
    assert r.intent == "schema" and r.ok and r.sql is None
    assert "Home runs hit in the season" in r.answer
    r = c.ask("what tables are there?")
    assert sorted(r.df["table"]) == ["seasons", "transactions", "users"]
    assert c.prep.llm.calls == [] and nodes(r) == ["IntentRouter", "AnswerSchema"]


def test_small_talk_gets_a_polite_answer_without_the_database(db):
    c = conv(db, {})
    r = c.ask("write me a poem about spring")
    assert r.intent == "general" and r.ok and r.sql is None and r.df is None
    assert "seasons" in r.answer and "outside" in r.answer
    assert c.ask("thanks!").answer.startswith("You're welcome")
    assert c.prep.llm.calls == []


@pytest.mark.parametrize("reply, intent", [("general", "general"), ("schema", "schema"), ("???", "data")])
def test_the_llm_places_a_turn_the_rules_cannot(db, reply, intent):
    c = conv(db, {"IntentRouter": [reply], "SQLGenerator": [SQL19]})
    r = c.ask("what is the meaning of all this")
    assert r.intent == intent
    assert c.prep.llm.count("IntentRouter") == (1 if reply != "???" else 2)   # a bad word: retried, then data


def test_pasted_sql_runs_through_the_safety_layer_without_the_model(db):
    c = conv(db, {})
    r = c.ask("select count(*) as n from seasons;")
    assert r.intent == "sql" and r.ok and r.df.values.tolist() == [[5]]
    r = c.ask("DROP TABLE seasons")
    assert r.intent == "sql" and r.status == "blocked" and "DROP" in r.answer
    r = ask(sql="SELECT player FROM seasons WHERE hr > 50", db=db, llm=ScriptedLLM({}))
    assert r.intent == "sql" and r.df.values.tolist() == [["Pete Alonso"]]
    assert c.prep.llm.calls == []


def test_a_vocabulary_gap_is_attempted_not_bounced(db):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT u.name FROM users u JOIN transactions t ON t.user_id = u.id "
                                        "WHERE t.amount < 0"]})
    r = ask("list the names of account holders who have negative balances", db=db, llm=llm,
            analyzer="rules", resample_drafts=0)
    assert r.ok and r.df.values.tolist() == [["Ann"]]


# --------------------------------------------------------------------------- confirm before run
def test_confirm_yes_no_with_a_comment_and_edit(db):
    """``confirm`` is both a setting (wait before running) and a callback (who answers): run_turn."""
    decisions = iter([{"decision": "no", "comment": "use 2018"}, {"decision": "yes"}])
    seen = []

    def confirm(sql, drafts):
        seen.append(sql)
        return next(decisions)

    llm = ScriptedLLM({"SQLGenerator": [SQL19, SQL18]})
    prep = prepare(db, llm=llm, analyzer="rules", resample_drafts=0, confirm=True)
    r = run_turn(prep, new_shared(Q19), confirm=confirm)
    assert seen == [SQL19, SQL18] and r.ok and r.df.values.tolist() == [["Khris Davis", 48]]
    assert "use 2018" in llm.calls[-1]["messages"][-1]["content"]        # the comment went back as feedback
    assert [d["decision"] for d in r.confirmations] == ["no", "yes"]
    r = run_turn(prep, new_shared(Q19), confirm=lambda sql, d: {"decision": "edit", "sql": LEFTIES})
    assert r.ok and r.df.values.tolist() == [[2]] and r.sql == LEFTIES
    r = run_turn(prep, new_shared(Q19), confirm=lambda sql, d: {"decision": "no"})
    assert r.status == "declined" and r.df is None


def test_a_pending_result_is_approved_edited_or_rejected_in_code(db):
    llm = ScriptedLLM({"SQLGenerator": [SQL19, SQL18]})
    r = ask(Q19, db=db, llm=llm, confirm=True, analyzer="rules", resample_drafts=0)
    assert r.status == "pending" and r.sql == SQL19 and r.df is None
    done = r.approve()
    assert done.ok and done.df.values.tolist() == [["Pete Alonso", 53]]
    with pytest.raises(ValueError, match="not pending"):
        r.approve()                                            # decided once
    edited = ask(Q19, db=db, llm=llm, confirm=True, analyzer="rules").edit(LEFTIES)
    assert edited.ok and edited.df.values.tolist() == [[2]]
    again = ask(Q19, db=db, llm=llm, confirm=True, analyzer="rules").reject("use 2018")
    assert again.status == "pending" and again.sql == SQL18     # a new query, waiting again
    assert ask(Q19, db=db, llm=llm, confirm=True).reject().status == "declined"


# --------------------------------------------------------------------------- sessions
def test_a_session_is_saved_and_resumed(db, tmp_path):
    c = conv(db, {"SQLGenerator": sql_for})
    c.ask(Q19)
    path = c.save(tmp_path / "s" / "session.json")
    data = json.loads(path.read_text())
    assert data["version"] == 1 and data["db"] == db and data["turns"][0]["sql"] == SQL19
    resumed = Conversation.load(path, llm=ScriptedLLM({"SQLGenerator": sql_for}), analyzer="rules",
                                resample_drafts=0)
    r = resumed.ask("and in 2018?")
    assert r.resolved_question == "Who hit the most home runs in 2018?"
    assert r.df.values.tolist()[0][0] == "Khris Davis"


@pytest.mark.parametrize("content, why", [("{not json", "not JSON"), ('{"version": 9, "turns": []}', "version 1")])
def test_a_bad_session_file_says_why_and_is_left_untouched(db, tmp_path, content, why):
    p = tmp_path / "bad.json"
    p.write_text(content)
    with pytest.raises(SessionError, match=why):
        Conversation.load(p, llm=ScriptedLLM({}))
    assert p.read_text() == content
    with pytest.raises(SessionError, match="no session file"):
        Conversation.load(tmp_path / "missing.json", llm=ScriptedLLM({}))


# --------------------------------------------------------------------------- sentences
def test_the_answer_is_a_checked_sentence_by_default(db):
    streamed = []
    sentence = "Pete Alonso hit the most home runs in 2019, 53."
    llm = ScriptedLLM({"SQLGenerator": [SQL19], "DataAnalyzer": [sentence]})
    r = ask(Q19, db=db, llm=llm, resample_drafts=0, on_text=streamed.append)
    assert r.answer == "Pete Alonso hit the most home runs in 2019, 53."
    assert r.answer_check == {"by": "llm", "problems": []} and "".join(streamed) == r.answer
    assert "SELECT" not in llm.calls[-1]["messages"][-1]["content"]      # the prompt has rows, not SQL


def test_a_sentence_that_contradicts_the_result_falls_back_to_the_template(db):
    llm = ScriptedLLM({"SQLGenerator": [SQL19], "DataAnalyzer": ["Mike Trout hit the most, 54."]})
    r = ask(Q19, db=db, llm=llm, resample_drafts=0)
    assert r.answer_check["by"] == "rules" and r.answer_check["sentence"] == "Mike Trout hit the most, 54."
    assert set(r.answer_check["problems"]) == {"the number 54 is not in the result",
                                               "the name 'Trout' is not in the result"}
    assert "Pete Alonso" in r.answer


def test_large_results_and_eval_keep_the_template_without_a_call(db):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT range AS i FROM range(30)"]})
    r = ask("list thirty numbers from the seasons", db=db, llm=llm, resample_drafts=0)
    assert r.answer == "Thirty numbers from the seasons (30): 0, 1, 2, 3, 4 and 25 more."
    assert llm.count("DataAnalyzer") == 0


def test_the_notebook_view_leads_with_the_answer_and_wraps_the_sql(db):
    r = ask(Q19, db=db, llm=ScriptedLLM({"SQLGenerator": [SQL19]}), analyzer="rules", resample_drafts=0)
    page = r._repr_html_()
    assert page.index(r.answer.split(":")[0]) < page.index("<pre")
    assert "white-space:pre-wrap" in page and "\nWHERE year = 2019" in page
