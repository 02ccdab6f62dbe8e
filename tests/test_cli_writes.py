"""Writes and delivery from the command line, as a user runs them: ``duckask sql --allow-writes`` approved
with real keystrokes in a pseudo-terminal (pexpect), refused without one, ``duckask audit``, ``ask --out /
--email / --into-table``, and the chat's write card and /export, /table.

Every "nothing changes" test compares the database file's bytes before and after.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import clean_env, sha256
from smtp_server import smtp_server
from test_writes import make_people

pytestmark = pytest.mark.slow        # terminals and subprocesses: not in the fast set (pytest -m "" runs it)

pexpect = pytest.importorskip("pexpect", reason="pexpect drives the terminal (pip install duckask[test])")

DUCKASK = Path(sys.executable).parent / "duckask"


@pytest.fixture
def cli(tmp_path, isolated_env):
    """(run, spawn, db, audit): run the CLI piped, or on a pseudo-terminal; the audit log in tmp_path."""
    db = make_people(tmp_path / "people.duckdb")
    audit = tmp_path / "audit.duckdb"
    env = clean_env(isolated_env, DUCKASK_AUDIT_FILE=str(audit), TERM="xterm", COLUMNS="160")

    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
        return subprocess.run([str(DUCKASK), *args], input=stdin, capture_output=True, text=True, timeout=120,
                              env=env, cwd=str(tmp_path))

    def spawn(*args: str):
        return pexpect.spawn(str(DUCKASK), list(args), env=env, encoding="utf-8", timeout=60, dimensions=(40, 160),
                             cwd=str(tmp_path))

    return run, spawn, db, audit


def audit_entries(run) -> list[dict]:
    p = run("audit", "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_sql_write_without_allow_writes_is_refused_and_recorded(cli):
    run, _, db, _ = cli
    before = sha256(db)
    p = run("sql", "DELETE FROM people WHERE age > 60", "--db", str(db))
    assert p.returncode == 1 and "--allow-writes" in p.stderr
    assert sha256(db) == before
    (entry,) = audit_entries(run)
    assert (entry["status"], entry["tier"], entry["kind"]) == ("blocked", 1, "DELETE")


def test_sql_write_without_a_terminal_writes_nothing_even_with_yes_piped(cli):
    run, _, db, _ = cli
    before = sha256(db)
    p = run("sql", "--allow-writes", "DELETE FROM people WHERE age > 60", "--db", str(db), stdin="yes\n")
    assert p.returncode == 3, p.stderr
    assert "estimated rows: 3" in p.stderr and "stdin is not a terminal" in p.stderr
    assert sha256(db) == before
    (entry,) = audit_entries(run)
    assert entry["status"] == "rejected" and "not a terminal" in entry["detail"]


@pytest.mark.parametrize("reply, written", [("yes", True), ("YES ", True), ("y", False), ("no", False), ("", False)])
def test_sql_write_at_the_terminal_needs_the_word_yes(cli, reply, written):
    run, spawn, db, _ = cli
    before = sha256(db)
    child = spawn("sql", "--allow-writes", "DELETE FROM people WHERE age > 60", "--db", str(db))
    child.expect("Deletes the rows of people where age > 60: 3 rows")
    child.expect("estimated rows: 3")
    child.expect('Type "yes" to run it')
    child.sendline(reply)
    child.expect(pexpect.EOF)
    child.close()
    entry = audit_entries(run)[0]
    if written:
        assert child.exitstatus == 0 and entry["status"] == "committed" and entry["actual_rows"] == 3
        assert run("sql", "SELECT count(*) AS n FROM people", "--db", str(db), "--json").stdout.count("[3]") == 1
    else:
        assert child.exitstatus == 0 and entry["status"] == "rejected" and sha256(db) == before


def test_t3_is_blocked_with_allow_writes_and_the_audit_shows_every_attempt(cli):
    run, _, db, _ = cli
    before = sha256(db)
    p = run("sql", "--allow-writes", "DROP TABLE people", "--db", str(db), "--json")
    assert p.returncode == 1 and json.loads(p.stdout)["status"] == "refused"
    assert "T3, always blocked" in json.loads(p.stdout)["error"]
    run("sql", "UPDATE people SET age = 0", "--db", str(db))
    assert sha256(db) == before
    text = run("audit", "--db", str(db))
    assert text.returncode == 0 and "DROP TABLE people" in text.stdout and "UPDATE people SET age = 0" in text.stdout
    assert [e["status"] for e in audit_entries(run)] == ["blocked", "blocked"]
    assert run("audit", "--db", str(db.with_name("other.duckdb")), "--json").stdout.strip() == "[]"


@pytest.mark.parametrize("suffix, read", [(".csv", pd.read_csv), (".parquet", pd.read_parquet),
                                          (".json", pd.read_json), (".xlsx", pd.read_excel)])
def test_ask_out_writes_the_rows(cli, tmp_path, suffix, read):
    run, _, db, _ = cli
    out = tmp_path / f"result{suffix}"
    p = run("ask", "--sql", "SELECT id, name, age FROM people ORDER BY id", "--db", str(db), "--out", str(out))
    assert p.returncode == 0 and f"wrote 6 row(s) to {out}" in p.stderr, p.stderr
    back = read(out)
    assert back["name"].tolist() == ["Ann", "Bob", "Cy", "Di", "Ed", "Flo"] and back["age"].sum() == 317


def test_sql_out_and_a_bad_format(cli, tmp_path):
    run, _, db, _ = cli
    p = run("sql", "SELECT name FROM people WHERE age > 60", "--db", str(db), "--out", str(tmp_path / "o.json"))
    assert p.returncode == 0 and [r["name"] for r in json.loads((tmp_path / "o.json").read_text())] == \
        ["Bob", "Cy", "Ed"]
    p = run("sql", "SELECT 1", "--db", str(db), "--out", str(tmp_path / "o.txt"))
    assert p.returncode == 1 and "not exported" in p.stderr and not (tmp_path / "o.txt").exists()


def test_ask_email_sends_the_answer_sql_and_rows(cli, tmp_path):
    run, _, db, _ = cli
    with smtp_server() as (inbox, port):
        config = tmp_path / "config.yaml"
        config.write_text(yaml.safe_dump({"smtp_host": "127.0.0.1", "smtp_port": port, "smtp_starttls": False,
                                          "smtp_from": "duckask@example.com"}))
        p = run("ask", "--sql", "SELECT name, age FROM people WHERE age > 60 ORDER BY age", "--db", str(db),
                "--config", str(config), "--email", "ann@example.com")
        assert p.returncode == 0 and "sent to ann@example.com" in p.stderr, p.stderr
        msg = inbox.only()
    body = msg.get_body(("plain",)).get_content()
    assert msg["To"] == "ann@example.com" and "SELECT name, age FROM people" in body and "Ed" in body
    (attachment,) = list(msg.iter_attachments())
    assert attachment.get_filename() == "result.csv"
    content = attachment.get_content()
    text = content.decode() if isinstance(content, bytes) else content
    assert text.splitlines() == ["name,age", "Bob,67", "Cy,72", "Ed,88"]


def test_ask_email_without_smtp_says_what_to_set(cli):
    run, _, db, _ = cli
    p = run("ask", "--sql", "SELECT 1 AS x", "--db", str(db), "--email", "ann@example.com")
    assert p.returncode == 1 and "smtp_host" in p.stderr


def test_ask_into_table_at_the_terminal(cli):
    run, spawn, db, _ = cli
    child = spawn("ask", "--sql", "SELECT name, age FROM people WHERE age > 60", "--db", str(db), "--allow-writes",
                  "--into-table", "seniors")
    child.expect("Creates the new table seniors holding the query's result: 3 rows")
    child.expect('Type "yes" to run it')
    child.sendline("yes")
    child.expect(r"Done \(CREATE TABLE on seniors\): 3 row\(s\)")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    p = run("sql", "SELECT count(*) AS n FROM seniors", "--db", str(db), "--json")
    assert json.loads(p.stdout)["rows"] == [[3]]


def test_ask_into_table_piped_writes_nothing(cli):
    run, _, db, _ = cli
    before = sha256(db)
    p = run("ask", "--sql", "SELECT * FROM people", "--db", str(db), "--allow-writes", "--into-table", "copy")
    assert p.returncode == 3 and "needs a terminal" in p.stderr and sha256(db) == before


def test_chat_piped_never_writes_but_exports(cli, tmp_path):
    run, _, db, _ = cli
    before = sha256(db)
    script = "\n".join(["SELECT name FROM people WHERE age < 20", f"/export {tmp_path / 'kids.csv'}", "/table kids",
                        "DELETE FROM people", "/email", ""])
    p = run("chat", "--db", str(db), "--allow-writes", stdin=script)
    # The last turn is a write no one could approve: 3 (a person must act), as `duckask sql` (present.exit_code).
    assert p.returncode == 3, p.stderr
    assert "wrote 1 row(s)" in p.stdout and p.stdout.count("stdin is not a terminal") == 2
    assert "/email needs a ADDRESS" in p.stderr or "/email needs" in p.stderr
    assert sha256(db) == before and pd.read_csv(tmp_path / "kids.csv")["name"].tolist() == ["Di"]
    assert [e["status"] for e in audit_entries(run)] == ["rejected", "rejected"]


def test_chat_write_card_at_the_terminal(cli):
    run, spawn, db, _ = cli
    child = spawn("chat", "--db", str(db), "--allow-writes")
    child.expect("duckask chat on")
    child.expect("duckask> ")
    child.sendline("UPDATE people SET age = age + 1 WHERE name = 'Ann'")
    child.expect("T1 data change")
    child.expect("estimated rows: 1")
    child.sendline("yes")
    child.expect(r"Done \(UPDATE on people\): 1 row\(s\) \(estimated 1\)")
    child.expect("duckask> ")
    child.sendline("SELECT age FROM people WHERE name = 'Ann'")
    child.expect(r"\b32\b")
    child.expect("duckask> ")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    assert audit_entries(run)[0]["session"].startswith("chat-")


def test_an_export_holds_every_row_not_only_the_row_cap(cli, tmp_path):
    run, _, db, _ = cli
    sql = "SELECT range AS n FROM range(2500)"
    p = run("ask", "--sql", sql, "--db", str(db), "--row-cap", "100", "--out", str(tmp_path / "all.parquet"))
    assert p.returncode == 0 and "wrote 2,500 row(s)" in p.stderr, p.stderr
    assert len(pd.read_parquet(tmp_path / "all.parquet")) == 2500
    p = run("sql", sql, "--db", str(db), "--row-cap", "100", "--out", str(tmp_path / "all.csv"))
    assert p.returncode == 0 and len(pd.read_csv(tmp_path / "all.csv")) == 2500
    config = tmp_path / "small.yaml"
    config.write_text("export_row_cap: 1000\n")
    p = run("sql", sql, "--db", str(db), "--config", str(config), "--out", str(tmp_path / "cut.csv"))
    assert p.returncode == 1 and "export_row_cap" in p.stderr and not (tmp_path / "cut.csv").exists()


@pytest.mark.parametrize("reply, written", [("yes", True), ("no", False)])
def test_decide_a_write_another_process_left_pending(cli, reply, written):
    """An agent's propose_write (here: writes.propose as "mcp agent") leaves a pending entry; a person runs
    `duckask decide ID`, sees the card and types yes; the audit names both."""
    from duckask.utils.config import load_settings
    from duckask.utils.db.database import open_database
    from duckask.utils.state import writes

    run, spawn, db, audit = cli
    settings = load_settings(None, allow_writes=True, audit_file=str(audit))
    card = writes.propose("DELETE FROM people WHERE age > 60", open_database(db, settings), settings,
                          session="mcp", user="mcp agent")
    open_database(db, settings).close()
    before = sha256(db)
    child = spawn("decide", str(card.id), "--db", str(db))
    child.expect("estimated rows: 3")
    child.expect('Type "yes" to run it')
    child.sendline(reply)
    child.expect(pexpect.EOF)
    child.close()
    (entry,) = audit_entries(run)
    assert (entry["user"], entry["decided_by"] not in (None, "mcp agent")) == ("mcp agent", True)
    if written:
        assert child.exitstatus == 0 and entry["status"] == "committed" and entry["actual_rows"] == 3
    else:
        assert entry["status"] == "rejected" and sha256(db) == before
    again = run("decide", str(card.id), "--db", str(db))
    assert again.returncode == 1 and "not pending" in again.stderr


def test_decide_refuses_an_unknown_id_or_another_database(cli, tmp_path):
    run, _, db, _ = cli
    p = run("decide", "999", "--db", str(db))
    assert p.returncode == 1 and "no write #999" in p.stderr and "duckask audit" in p.stderr
    p = run("decide", "1", "--db", str(db), "--reject", "not now")
    assert p.returncode == 1 and "no write #1" in p.stderr


def test_a_change_asked_in_words_at_the_terminal(tmp_path, isolated_env):
    """`duckask ask "delete ..." --allow-writes` on a terminal: the model's statement (an OpenAI-compatible
    stub on 127.0.0.1) on a card that shows the request; written only after "yes"; the audit says so."""
    from openai_stub import StubOpenAI
    from test_writes import make_people

    db = make_people(tmp_path / "people.duckdb")
    audit = tmp_path / "audit.duckdb"
    reply = "```sql\nDELETE FROM people WHERE age > 60\n```\nExplanation: Removes the people over 60."
    with StubOpenAI(lambda body: reply) as stub:
        env = clean_env(isolated_env, DUCKASK_AUDIT_FILE=str(audit), DUCKASK_BASE_URL=stub.base_url,
                        DUCKASK_MODEL="stub", TERM="xterm", COLUMNS="160")
        child = pexpect.spawn(str(DUCKASK), ["ask", "delete the people over 60", "--db", str(db), "--allow-writes"],
                              env=env, encoding="utf-8", timeout=60, dimensions=(40, 160), cwd=str(tmp_path))
        child.expect("asked: +delete the people over 60")
        child.expect("model says: +Removes the people over 60.")
        child.expect("estimated rows: 3")
        child.expect('Type "yes" to run it')
        child.sendline("yes")
        child.expect(pexpect.EOF)
        child.close()
    from duckask.utils.writes.audit import AuditLog

    (entry,) = AuditLog(audit).entries()
    assert child.exitstatus == 0 and (entry["proposed_by"], entry["outcome"], entry["actual_rows"]) == \
        ("model", "committed", 3)
