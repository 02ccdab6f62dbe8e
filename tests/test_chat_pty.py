"""``duckask chat`` driven through a pseudo-terminal with real keystrokes (pexpect), against the
OpenAI-compatible stub on 127.0.0.1: a follow-up, a schema question, an off-topic turn, pasted SQL,
confirm yes / no / edit (the SQL edited in place with readline), /save and resuming with --session;
and the same conversation piped, one JSON object per turn."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import clean_env
from openai_stub import StubOpenAI, make_cities_db

pytestmark = pytest.mark.slow        # a pseudo-terminal: not in the fast set (pytest -m "" runs it)

pexpect = pytest.importorskip("pexpect", reason="pexpect drives the terminal (pip install duckask[test])")

DUCKASK = Path(sys.executable).parent / "duckask"
FRANCE = "SELECT name, population FROM cities WHERE country = 'France' ORDER BY population DESC"
GERMANY = "SELECT name, population FROM cities WHERE country = 'Germany' ORDER BY population DESC"
BIG = "SELECT name, population FROM cities WHERE population > 1000000"
ERASE = "\x1b[2K"        # erase the line: what a transient status line leaves behind when it stops


def responder(body: dict):
    """A cooperative model: SQL for the country the question names, rewrites and sentences."""
    msgs = body["messages"]
    prompt = msgs[-1]["content"]
    if any("DuckDB SQL" in m["content"] for m in msgs if m["role"] == "system"):
        question = prompt.rsplit("Question:", 1)[-1]
        if "only big" in prompt:
            return f"```sql\n{BIG}\n```"
        return f"```sql\n{GERMANY if 'Germany' in question else FRANCE}\n```"
    if prompt.startswith("Rewrite the follow-up"):
        return "What is the population of each city in Germany?"
    if "plain sentences" in prompt:
        return "Paris is the largest, with 2,100,000 people." if "Paris" in prompt else "Berlin has 3,600,000 people."
    return "data"


@pytest.fixture
def chat(tmp_path, isolated_env):
    db = make_cities_db(tmp_path / "cities.duckdb")
    with StubOpenAI(responder) as stub:
        env = clean_env(isolated_env, XDG_STATE_HOME=str(tmp_path / "state"), TERM="xterm", COLUMNS="120",
                        LINES="40", DUCKASK_BASE_URL=stub.base_url, DUCKASK_MODEL="stub")

        def spawn(*args: str):
            child = pexpect.spawn(str(DUCKASK), ["chat", "--db", str(db), "--resample-drafts", "0", *args],
                                  env=env, encoding="utf-8", timeout=60, dimensions=(40, 120), cwd=str(tmp_path))
            child.expect("duckask chat on")
            return child

        yield spawn, stub, tmp_path, env, db


def turn(child, text: str, *expect: str) -> None:
    child.expect("duckask> ")
    child.sendline(text)
    for e in expect:
        child.expect(e)


def test_a_conversation_at_the_terminal(chat):
    spawn, stub, tmp_path, _, _ = chat
    child = spawn()
    turn(child, "What is the population of each city in France?", "Paris is the largest", "Lyon")
    turn(child, "and in Germany?", r"understood as: What is the population of each city in Germany\?", "Berlin")
    turn(child, "what tables are there?", "This database has 1 tables: cities")
    turn(child, "what's the weather in Boston tomorrow?", "outside what I can answer")
    turn(child, "SELECT count(*) AS n FROM cities;", r"\b3\b")
    turn(child, "/sql", "SELECT count")
    turn(child, "/save", "saved 5 turns")
    child.expect("duckask> ")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    session = json.loads((tmp_path / "duckask-session.json").read_text())
    assert [t["intent"] for t in session["turns"]] == ["data", "data", "schema", "general", "sql"]
    assert (tmp_path / "state" / "duckask" / "chat_history").read_text().count("\n") >= 5   # line history kept
    # Resumed: the follow-up still knows the first question.
    child = spawn("--session", str(tmp_path / "duckask-session.json"))
    turn(child, "/history", "1. \\[data\\] What is the population")
    turn(child, "and in Germany?", "Berlin")
    child.sendline("/quit")
    child.expect(pexpect.EOF)


def test_progress_is_one_status_line_cleared_before_the_answer(chat):
    """Issue 47: the nodes at work show on one transient status line (not a line each), erased before the answer
    is printed; the answer's line holds only the answer; a follow-up says how it was understood first."""
    spawn, *_ = chat
    child = spawn()
    child.expect("duckask> ")
    child.sendline("What is the population of each city in France?")
    child.expect("duckask> ")
    shown = child.before
    before, _, after = shown.partition("A:")
    assert "(SQLGenerator)" in before and "  … " not in shown          # said on the status line, as it was
    assert ERASE in before[before.rindex("(SQLGenerator)"):]          # and erased before the answer
    answer_line = after.split("\n", 1)[0]
    assert "Paris is the largest" in answer_line and "(" not in answer_line and "…" not in answer_line
    child.sendline("and in Germany?")
    child.expect("duckask> ")
    said = child.before
    assert said.index("understood as: What is the population of each city in Germany?") < said.index("Berlin")
    assert said.count("understood as:") == 1
    child.sendline("/quit")
    child.expect(pexpect.EOF)


def test_confirm_yes_no_and_edit_at_the_terminal(chat):
    spawn, stub, *_ = chat
    child = spawn("--confirm")
    turn(child, "What is the population of each city in France?", "This SQL will run", r"Run it\?")
    child.sendline("y")
    child.expect("Paris is the largest")
    turn(child, "What is the population of each city in France?", r"Run it\?")
    child.sendline("n only big cities")                       # a comment: back to the model
    child.expect(r"Run it\?")
    child.sendline("e")                                       # edit the new query in place
    child.expect("edit> ")
    child.sendcontrol("u")                                    # readline: clear the pre-filled SQL
    child.sendline("SELECT count(*) AS n FROM cities WHERE country = 'Germany'")
    child.expect(r"\b1\b")
    turn(child, "What is the population of each city in France?", r"Run it\?")
    child.sendline("n")
    child.expect("Not run: you declined the query")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    sql_prompts = [b["messages"][-1]["content"] for b in stub.bodies
                   if any("DuckDB SQL" in m["content"] for m in b["messages"] if m["role"] == "system")]
    assert any("only big cities" in p for p in sql_prompts)   # the "no" comment reached SQLGenerator


def test_a_piped_conversation_prints_one_json_object_per_turn(chat):
    _, _, tmp_path, env, db = chat
    turns = ["What is the population of each city in France?", "and in Germany?", "what does population mean?",
             "hello", "SELECT 1 AS one"]
    p = subprocess.run([str(DUCKASK), "chat", "--db", str(db), "--json", "--resample-drafts", "0"],
                       input="\n".join(turns) + "\n", capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    out = [json.loads(line) for line in p.stdout.splitlines()]
    assert [o["intent"] for o in out] == ["data", "data", "schema", "general", "sql"]
    assert out[1]["resolved_question"] == "What is the population of each city in Germany?"
    assert out[1]["rows"] == [["Berlin", 3600000]]
    assert out[0]["answer"] == "Paris is the largest, with 2,100,000 people."
    assert out[4]["rows"] == [[1]]


def test_ask_on_a_terminal_streams_the_sentence_once(chat):
    _, _, tmp_path, env, db = chat
    child = pexpect.spawn(str(DUCKASK), ["ask", "What is the population of each city in France?", "--db", str(db),
                                         "--resample-drafts", "0"], env=env, encoding="utf-8", timeout=60,
                          dimensions=(40, 120), cwd=str(tmp_path))
    child.expect(pexpect.EOF)
    out = child.before
    assert out.count("Paris is the largest, with 2,100,000 people.") == 1   # streamed, not printed twice
    assert "SQL:" in out and "Lyon" in out
    before, _, after = out.partition("Paris is the largest")                # one status line, erased first
    assert "(SQLGenerator)" in before and ERASE in before[before.rindex("(SQLGenerator)"):] and "  … " not in out
    assert "(" not in after.split("\n", 1)[0]                                # nothing else on the answer's line
    child.close()
    assert child.exitstatus == 0
