"""Gated writes: tiers, approval, audit, rollback (``utils/writes/{tiers,plan,audit}.py``, ``utils/state/writes.py``,
ReviewWrite, ApplyWrite, ``Result.approve/reject/edit/to_table``).

Every "nothing changes" test compares the database file's bytes (sha256) before and after. No LLM is
loaded: the user's own SQL never reaches the model, and the graph runs with an empty ScriptedLLM.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest
import yaml
from conftest import clean_env, sha256

from duckask.utils.api import ask
from duckask.utils.app.conversation import Conversation
from duckask.utils.config import load_settings
from duckask.utils.db.database import open_database
from duckask.utils.llm.scripted import ScriptedLLM
from duckask.utils.state import writes
from duckask.utils.writes.audit import AuditLog, render, status_of
from duckask.utils.writes.plan import counted_rows, estimate_sql
from duckask.utils.writes.tiers import classify

FIXTURES = Path(__file__).parent / "fixtures"
TIERS = yaml.safe_load((FIXTURES / "write_tiers.yaml").read_text())


@pytest.mark.parametrize("row", TIERS, ids=[r["sql"][:50] or "empty" for r in TIERS])
def test_tier(row):
    c = classify(row["sql"])
    assert (c.tier, c.kind) == (row["tier"], row["kind"]), c.reason
    assert c.reason


def make_people(path: Path) -> Path:
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE people (id INTEGER PRIMARY KEY, name VARCHAR, age INTEGER)")
    con.execute("INSERT INTO people VALUES (1, 'Ann', 31), (2, 'Bob', 67), (3, 'Cy', 72), (4, 'Di', 15), "
                "(5, 'Ed', 88), (6, 'Flo', 44)")
    con.execute("CREATE TABLE pets (id INTEGER, owner INTEGER, kind VARCHAR)")
    con.execute("INSERT INTO pets VALUES (1, 2, 'cat'), (2, 2, 'dog'), (3, 5, 'cat'), (4, 1, 'fish')")
    con.close()
    return path


@pytest.fixture
def people(tmp_path) -> Path:
    return make_people(tmp_path / "people.duckdb")


@pytest.fixture
def on(isolated_env, tmp_path):
    """Settings with writes on, and the audit log in this test's own folder."""
    return load_settings(None, allow_writes=True, audit_file=str(tmp_path / "audit.duckdb"))


def log(settings) -> list[dict]:
    return AuditLog(settings.resolved_audit_file).entries()


def count(db: Path, sql: str):
    """A read through duckask's own (shared, read-only) connection: DuckDB allows one configuration per file
    and process."""
    return [tuple(row) for row in open_database(db).run(sql).df.values.tolist()]


# -- estimates: the estimate is what the write then does -----------------------------------------------------
@pytest.mark.parametrize("sql, rows", [
    ("DELETE FROM people WHERE age > 60", 3),
    ("DELETE FROM people", 6),
    ("DELETE FROM people USING pets WHERE pets.owner = people.id AND pets.kind = 'cat'", 2),
    ("UPDATE people SET age = age + 1 WHERE name IN ('Ann', 'Bob')", 2),
    ("UPDATE people SET name = upper(name) FROM pets WHERE pets.owner = people.id", 3),
    ("WITH old AS (SELECT id FROM people WHERE age > 70) DELETE FROM people WHERE id IN (SELECT id FROM old)", 2),
    ("INSERT INTO people SELECT id + 10, name, age FROM people WHERE age < 40", 2),
    ("INSERT INTO people VALUES (20, 'Gus', 5), (21, 'Hal', 6), (22, 'Ivy', 7)", 3),
    ("CREATE TABLE seniors AS SELECT * FROM people WHERE age >= 65", 3),
])
def test_estimate_matches_the_write(people, on, sql, rows):
    database = open_database(people, on)
    card = writes.propose(sql, database, on)
    assert card.decision == "pending" and card.estimated_rows == rows, card
    assert card.explanation and f"{rows} row" in card.explanation
    done = writes.approve(card, database, on)
    # DuckDB 2.0.1 counts an UPDATE ... FROM once per match (4 for 3 people through 4 pets), 2.0.0 once a row
    assert done.outcome == "committed" and done.actual_rows in (rows, card.matched_rows), done.detail
    assert [status_of(e) for e in log(on)] == ["committed"]


def test_a_join_count_is_the_distinct_rows_and_the_matches_pass_the_check(people, on):
    """Bob has two pets: 3 people change, through 4 matches. DuckDB 2.0.1 reports an UPDATE ... FROM once per
    match (4), 2.0.0 once a row (3): either count commits, and any other rolls back."""
    database = open_database(people, on)
    sql = "UPDATE people SET name = upper(name) FROM pets WHERE pets.owner = people.id"
    card = writes.propose(sql, database, on)
    assert (card.estimated_rows, card.matched_rows) == (3, 4)
    assert writes.propose("DELETE FROM people WHERE age > 60", database, on).matched_rows is None
    scratch = duckdb.connect(str(make_people(people.parent / "scratch.duckdb")))
    reported = scratch.execute(sql).fetchone()[0]            # what this DuckDB reports: 3 or 4
    scratch.close()
    card.estimated_rows, card.matched_rows = reported - 1, reported   # off as an estimate, right as the matches
    assert writes.approve(card, database, on).outcome == "committed"
    card = writes.propose("UPDATE people SET age = 1 FROM pets WHERE pets.owner = people.id", database, on)
    card.estimated_rows, card.matched_rows = 1, 2           # the report is neither: rolled back
    done = writes.approve(card, database, on)
    assert done.outcome == "rolled_back" and done.actual_rows == reported


def test_schema_changes_count_no_rows_and_the_connection_sees_them(people, on):
    database = open_database(people, on)
    for sql, check in [("ALTER TABLE people ADD COLUMN email VARCHAR", "SELECT email FROM people LIMIT 1"),
                       ("CREATE VIEW adults AS SELECT * FROM people WHERE age >= 18", "SELECT count(*) FROM adults"),
                       ("CREATE INDEX people_age ON people (age)", "SELECT 1"),
                       ("ALTER TABLE pets ADD PRIMARY KEY (id)", "SELECT 1"),
                       ("COMMENT ON TABLE people IS 'who is who'", "SELECT 1")]:
        card = writes.propose(sql, database, on)
        assert card.estimated_rows == 0 and not card.checks_rows, card
        assert writes.approve(card, database, on).outcome == "committed"
        assert database.run(check).ok       # the reopened read-only connection sees the change
    assert "adults" in database.user_tables


def test_estimate_sql_and_counted_rows_are_built_from_the_tree():
    assert estimate_sql(classify("DELETE FROM t AS x USING u WHERE x.a = u.a")) == \
        "SELECT COUNT(DISTINCT x.rowid), COUNT(*) FROM t AS x CROSS JOIN u WHERE x.a = u.a"
    assert counted_rows(classify("INSERT INTO t DEFAULT VALUES")) == 1
    assert counted_rows(classify("CREATE TABLE t (a INT)")) == 0


# -- nothing changes without approval -------------------------------------------------------------------
def test_writes_off_blocks_and_records(people, isolated_env, tmp_path):
    settings = load_settings(None, audit_file=str(tmp_path / "audit.duckdb"))
    before = sha256(people)
    card = writes.propose("DELETE FROM people WHERE age > 60", open_database(people, settings), settings)
    assert card.decision == "blocked" and "--allow-writes" in card.blocked
    assert sha256(people) == before
    (entry,) = log(settings)
    assert (entry["decision"], entry["outcome"], entry["tier"]) == ("blocked", "not_run", 1)


def test_pending_then_rejected_changes_nothing(people, on):
    before = sha256(people)
    database = open_database(people, on)
    card = writes.propose("UPDATE people SET age = 0", database, on)
    assert card.decision == "pending" and sha256(people) == before
    writes.reject(card, on)
    assert sha256(people) == before
    with pytest.raises(ValueError, match="not pending"):
        writes.approve(card, database, on)        # a decided write cannot be approved afterwards
    assert sha256(people) == before
    assert [(e["decision"], e["outcome"]) for e in log(on)] == [("rejected", "not_run")]


@pytest.mark.parametrize("sql", ["DROP TABLE people", "TRUNCATE people", "ALTER TABLE people DROP COLUMN age",
                                 "CREATE OR REPLACE TABLE people AS SELECT 1 AS id", "DELETE FROM people; SELECT 1",
                                 "COPY people TO 'out.csv'", "ATTACH 'x.duckdb'", "SET threads = 1"])
def test_t3_never_runs_even_approved(people, on, sql):
    before = sha256(people)
    database = open_database(people, on)
    card = writes.propose(sql, database, on)
    assert card.decision == "blocked" and card.tier == 3
    with pytest.raises(ValueError, match="not pending"):
        writes.approve(card, database, on)
    r = ask(sql=sql, db=str(people), llm=ScriptedLLM({}), settings=on)
    assert r.status == "blocked" and "T3" in r.answer
    with pytest.raises(ValueError, match="not pending"):
        r.approve()
    assert sha256(people) == before
    assert {e["decision"] for e in log(on)} == {"blocked"} and len(log(on)) == 2


@pytest.mark.parametrize("sql, why", [
    ("INSERT INTO people SELECT * FROM read_csv('/etc/passwd')", "reads files"),
    ("UPDATE people SET name = current_setting('memory_limit')", "current_setting"),
    ("CREATE VIEW leak AS SELECT * FROM duckdb_settings()", "duckdb_settings() reads the server's settings"),
    ("CREATE TABLE people AS SELECT 1 AS id", "already exists"),
    ("DELETE FROM nowhere", "cannot count"),
    # issue 30: a CTE named after a system view hides it only in its own scope; every expression a write
    # evaluates (SET, RETURNING, defaults, checks, a view's query) is read like a query
    ("CREATE VIEW leak AS SELECT (SELECT path FROM duckdb_databases LIMIT 1) AS p FROM (WITH duckdb_databases AS "
     "(SELECT 1) SELECT * FROM duckdb_databases) AS e", "duckdb_databases is a system view"),
    ("CREATE VIEW leak AS SELECT * FROM (WITH pg_settings AS (SELECT 1) SELECT * FROM pg_settings) a, pg_settings",
     "pg_settings is a system view"),
    ("ALTER TABLE people ALTER age SET DEFAULT current_setting('memory_limit')", "current_setting"),
    ("UPDATE people SET age = 1 RETURNING (SELECT path FROM duckdb_databases)", "duckdb_databases is a system view"),
    ("UPDATE people SET name = (WITH duckdb_settings AS (SELECT 1) SELECT 'x') WHERE id IN (SELECT 1 FROM "
     "duckdb_settings)", "duckdb_settings is a system view"),
    ("INSERT INTO people (id, name) SELECT 99, path FROM duckdb_databases", "duckdb_databases is a system view"),
])
def test_blocked_before_approval_with_the_reason(people, on, sql, why):
    before = sha256(people)
    card = writes.propose(sql, open_database(people, on), on)
    assert card.decision == "blocked" and why in card.blocked, card.blocked
    assert sha256(people) == before


def test_a_folder_or_sqlite_source_cannot_take_writes(tmp_path, on):
    folder = tmp_path / "export"
    with duckdb.connect(str(make_people(tmp_path / "src.duckdb"))) as con:
        con.execute(f"EXPORT DATABASE '{folder}'")
    card = writes.propose("DELETE FROM people", open_database(folder, on), on)
    assert card.decision == "blocked" and "writes need a DuckDB file" in card.blocked


# -- rollback ----------------------------------------------------------------------------------------------
def test_row_count_surprise_rolls_back(people, on):
    database = open_database(people, on)
    card = writes.propose("DELETE FROM people WHERE age > 60", database, on)     # 3 rows now
    extra = writes.propose("INSERT INTO people VALUES (30, 'Old', 99)", database, on)
    writes.approve(extra, database, on)                                          # a 4th row, meanwhile
    before = sha256(people)
    done = writes.approve(card, database, on)
    assert (done.outcome, done.actual_rows) == ("rolled_back", 4) and "3 were estimated" in done.detail
    assert sha256(people) == before
    assert count(people, "SELECT count(*) FROM people WHERE age > 60") == [(4,)]
    assert {e["id"]: status_of(e) for e in log(on)} == {card.id: "rolled_back", extra.id: "committed"}


@pytest.mark.parametrize("tolerance, outcome", [("1", "committed"), ("34%", "committed"), ("33%", "rolled_back")])
def test_write_tolerance(people, on, tolerance, outcome):
    import dataclasses

    on = dataclasses.replace(on, write_tolerance=tolerance)
    database = open_database(people, on)
    card = writes.propose("DELETE FROM people WHERE age > 60", database, on)     # estimate 3
    writes.approve(writes.propose("INSERT INTO people VALUES (30, 'Old', 99)", database, on), database, on)
    assert writes.approve(card, database, on).outcome == outcome


def test_an_error_inside_the_write_rolls_back(people, on):
    before = sha256(people)
    database = open_database(people, on)
    card = writes.propose("INSERT INTO people VALUES (7, 'Gil', 50), (1, 'Dup', 1)", database, on)  # key 1 exists
    done = writes.approve(card, database, on)
    assert done.outcome == "error" and "rolled back" in done.detail
    assert sha256(people) == before and count(people, "SELECT count(*) FROM people") == [(6,)]


def test_bad_tolerance_is_a_clear_error(people, isolated_env):
    settings = load_settings(None, allow_writes=True, write_tolerance="lots")
    with pytest.raises(ValueError, match="write_tolerance must be"):
        writes.propose("DELETE FROM people", open_database(people, settings), settings)


def test_the_answering_connection_is_never_writable(people, on):
    database = open_database(people, on)
    writes.approve(writes.propose("DELETE FROM people WHERE id = 6", database, on), database, on)
    with pytest.raises(duckdb.Error, match="read-only"):
        database.con.execute("DELETE FROM people")


# -- the audit log: a crash between the approval and the write ---------------------------------------------
def test_crash_between_audit_and_write_leaves_a_started_record(people, tmp_path, test_cache_dir):
    audit = tmp_path / "audit.duckdb"
    before = sha256(people)
    script = textwrap.dedent(f"""
        import os
        from duckask.utils.config import load_settings
        from duckask.utils.state import writes
        from duckask.utils.db.database import open_database
        settings = load_settings(None, allow_writes=True, audit_file={str(audit)!r})
        database = open_database({str(people)!r}, settings)
        card = writes.propose("DELETE FROM people WHERE age > 60", database, settings)
        writes._apply = lambda *a: os._exit(9)      # the process dies after the approval was recorded
        writes.approve(card, database, settings)
    """)
    done = subprocess.run([sys.executable, "-c", script], env=clean_env(test_cache_dir), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 9, done.stderr
    assert sha256(people) == before
    (entry,) = AuditLog(audit).entries()
    assert (entry["decision"], entry["outcome"], entry["finished_at"]) == ("approved", None, None)
    assert status_of(entry) == "started, no outcome" and "started, no outcome" in render([entry])


def test_audit_records_session_user_and_rows(people, on):
    c = Conversation(str(people), llm=ScriptedLLM({}), settings=on, session="chat-test")
    r = c.ask("DELETE FROM people WHERE age < 20")
    assert r.status == "pending" and r.write.estimated_rows == 1
    r = r.approve()
    assert r.status == "written" and "1 row(s)" in r.answer
    (entry,) = log(on)
    assert entry["session"] == "chat-test" and entry["user"] and entry["db"] == str(people.resolve())
    assert (entry["estimated_rows"], entry["actual_rows"], entry["outcome"]) == (1, 1, "committed")
    assert entry["explanation"].startswith("Deletes the rows of people")


# -- the graph and the Result ---------------------------------------------------------------------------
def test_result_approve_reject_edit(people, on):
    llm = ScriptedLLM({})
    r = ask(sql="UPDATE people SET age = age + 1 WHERE age > 60", db=str(people), llm=llm, settings=on)
    assert r.status == "pending" and r.intent == "sql" and r.write.kind == "UPDATE"
    before = sha256(people)
    edited = r.edit("UPDATE people SET age = age + 1 WHERE age > 80")
    assert edited.status == "pending" and edited.write.estimated_rows == 1 and sha256(people) == before
    assert edited.reject().status == "rejected" and sha256(people) == before
    assert [(e["decision"], e["detail"]) for e in log(on)] == [("rejected", None), ("rejected", "edited")]


def test_an_approval_callback_decides_in_place_and_only_yes_writes(people, on):
    seen = []
    r = ask(sql="DELETE FROM people WHERE id = 1", db=str(people), llm=ScriptedLLM({}), settings=on,
            approve_write=lambda card: seen.append(card) or {"decision": "y"})
    assert r.status == "rejected" and seen[0].estimated_rows == 1     # "y" is not an explicit yes
    r = ask(sql="DELETE FROM people WHERE id = 1", db=str(people), llm=ScriptedLLM({}), settings=on,
            approve_write=lambda card: {"decision": "yes"})
    assert r.status == "written" and count(people, "SELECT count(*) FROM people") == [(5,)]


def test_to_table_is_a_pending_t2_write_and_the_next_turn_sees_the_table(people, on):
    c = Conversation(str(people), llm=ScriptedLLM({}), settings=on)
    r = c.ask(sql="SELECT name, age FROM people WHERE age > 60")
    assert r.ok
    pending = r.to_table("seniors")
    assert pending.status == "pending" and pending.write.tier == 2 and pending.write.estimated_rows == 3
    assert pending.approve().status == "written"
    assert "seniors" in c.prep.database.user_tables
    again = c.ask(sql="SELECT count(*) AS n FROM seniors")
    assert again.ok and again.df["n"].tolist() == [3] and "seniors" in c.prep.catalog.tables
    assert [t["intent"] for t in c.history] == ["sql", "sql"]      # the write is not a turn of its own


def test_to_table_with_writes_off_is_blocked(people, isolated_env, tmp_path):
    settings = load_settings(None, audit_file=str(tmp_path / "audit.duckdb"))
    r = ask(sql="SELECT * FROM people", db=str(people), llm=ScriptedLLM({}), settings=settings)
    before = sha256(people)
    assert r.to_table("copy").status == "blocked" and sha256(people) == before


def test_a_write_that_cannot_lock_its_file_says_so_without_its_path_or_a_pid(people, on, monkeypatch):
    """Issue 43, finding 11: DuckDB's lock message names the absolute path and the holder's PID; neither reaches
    the audit log or the approver's reply. (Another process holding the file open for writing also keeps duckask
    from opening it to read, so the read-write open is the one made to fail, with DuckDB's own words.)"""
    database = open_database(people, on)
    card = writes.propose("DELETE FROM people WHERE id = 1", database, on)
    real = duckdb.connect
    message = (f'IO Error: Could not set lock on file "{people.resolve()}": Conflicting lock is held in '
               "/usr/bin/python3 (PID 48213) by user root. See also https://duckdb.org/docs/stable/connect/concurrency")

    def connect(path=":memory:", read_only=False, **kw):
        if not read_only and str(path) == str(people):
            raise duckdb.IOException(message)
        return real(path, read_only=read_only, **kw)

    monkeypatch.setattr(duckdb, "connect", connect)
    done = writes.approve(card, database, on)
    monkeypatch.undo()
    (entry,) = log(on)
    assert done.outcome == entry["outcome"] == "error" and "another process holds its write lock" in done.detail
    for text in (done.detail, entry["detail"], done.summary()):
        assert str(people.parent) not in text and "48213" not in text and "PID" not in text
    assert count(people, "SELECT count(*) FROM people") == [(6,)]


def test_a_card_for_another_file_is_never_applied_here(people, on, tmp_path):
    """Issue 43, finding 5: a card carries its file's identity; approving it on another file (the same relative
    name opened elsewhere) raises before anything is recorded or run."""
    (tmp_path / "elsewhere").mkdir()
    other = make_people(tmp_path / "elsewhere" / "people.duckdb")
    card = writes.propose("DELETE FROM people WHERE id = 1", open_database(people, on), on)
    before = sha256(other)
    with pytest.raises(ValueError, match="proposed for another database file"):
        writes.approve(card, open_database(other, on), on)
    assert sha256(other) == before and log(on)[0]["decision"] == "pending"
