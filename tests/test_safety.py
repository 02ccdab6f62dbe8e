"""The safe executor: plain queries work, the timeout and the row cap hold, the connection itself is
read-only, and ``duckask sql`` reports each outcome. The table of hostile statements is
tests/test_attacks.py's.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import duckdb
import pytest
from attack_cases import make_db
from conftest import sha256

from duckask.utils.app.cli import main as cli_main
from duckask.utils.db.database import open_database
from duckask.utils.db.safety import UnsafeSQLError, check_sql


def test_check_sql_itself():
    assert check_sql("  SELECT 1 ;; ") == "SELECT 1"
    assert check_sql("WITH a AS (SELECT 1 AS x) SELECT x FROM a") == "WITH a AS (SELECT 1 AS x) SELECT x FROM a"
    for bad in ("DROP TABLE t", "SELECT 1; SELECT 2", "", None):
        with pytest.raises(UnsafeSQLError, match="^refused: "):
            check_sql(bad)


def test_locked_configuration_stays_locked(db_source, settings):
    db = open_database(db_source[0], settings)
    # Read through the trusted connection: untrusted SQL may not read settings at all.
    got = db.con.execute("SELECT current_setting('enable_external_access'), current_setting('lock_configuration')")
    assert got.fetchall() == [(False, True)]
    assert db.run("SET lock_configuration=false").status == "refused"


def test_the_databases_own_tables_stay_readable_whatever_their_names(tmp_path, settings):
    path = tmp_path / "odd.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE pg_teams AS SELECT 1 AS id")
        con.execute("CREATE VIEW duckdb_notes AS SELECT 'hi' AS note")
    db = open_database(path, settings)
    assert db.run("SELECT id FROM pg_teams").ok
    assert db.run("SELECT note FROM duckdb_notes").ok
    assert db.run("SELECT * FROM pg_settings").status == "refused"


def test_plain_select_and_with_work(db_source, settings):
    db = open_database(db_source[0], settings)
    out = db.run("SELECT i, s FROM t WHERE i >= 2 ORDER BY i;")
    assert out.status == "ok" and out.error is None
    assert out.sql == "SELECT i, s FROM t WHERE i >= 2 ORDER BY i"
    assert list(out.df.columns) == ["i", "s"]
    assert out.df.values.tolist() == [[2, "two"], [3, "three"]]
    assert out.truncated is False
    out = db.run("WITH big AS (SELECT * FROM t WHERE i > 1) SELECT count(*) AS n FROM big")
    assert out.ok and out.df.values.tolist() == [[2]]
    out = db.run("FROM t SELECT s ORDER BY i DESC LIMIT 1")
    assert out.ok and out.df.values.tolist() == [["three"]]


def test_duplicate_column_names_are_kept_apart(db_source, settings):
    out = open_database(db_source[0], settings).run("SELECT i, i FROM t ORDER BY i LIMIT 1")
    assert out.ok and list(out.df.columns) == ["i", "i_1"]


def test_timeout_interrupts_a_long_query(db_source, settings):
    db = open_database(db_source[0], settings)
    t0 = time.perf_counter()
    out = db.run("SELECT count(*) FROM range(10000000000) a", timeout_s=0.5)
    elapsed = time.perf_counter() - t0
    assert out.status == "timeout"
    assert "0.5s timeout" in out.error
    assert elapsed < 5
    again = db.run("SELECT 42 AS x")                     # the connection survives the interrupt
    assert again.ok and again.df.values.tolist() == [[42]]


def test_row_cap_truncates(db_source, settings):
    db = open_database(db_source[0], settings)
    out = db.run("SELECT * FROM range(100)", row_cap=10)
    assert out.ok and len(out.df) == 10 and out.truncated is True
    assert out.df.iloc[:, 0].tolist() == list(range(10))
    exact = db.run("SELECT * FROM range(10)", row_cap=10)
    assert len(exact.df) == 10 and exact.truncated is False


def test_read_only_connection_refuses_writes_even_past_the_allowlist(tmp_path, settings):
    """Defence in depth: the connection itself is read-only, whatever the statement check says."""
    db = open_database(make_db(tmp_path / "ro.duckdb"), settings)
    with pytest.raises(duckdb.Error, match="read-only"):
        db.con.cursor().execute("INSERT INTO t VALUES (4, 'four')")
    with pytest.raises(duckdb.Error):
        db.con.cursor().execute("COPY t TO 'leak.csv'")


# --------------------------------------------------------------------------- duckask sql
@pytest.fixture
def cli_db(tmp_path, isolated_env) -> Path:
    return make_db(tmp_path / "cli.duckdb")


def test_cli_sql_refused_exit_1_reason_on_stderr(cli_db, empty_cwd, capsys):
    before = sha256(cli_db)
    code = cli_main(["sql", "DROP TABLE t", "--db", str(cli_db)])
    out, err = capsys.readouterr()
    assert code == 1
    assert out == ""
    # Not a read: the write path refuses it (T3 is blocked even with --allow-writes) and says why.
    assert "Not written: refused: T3, always blocked: DROP removes a table" in err
    assert sha256(cli_db) == before and os.listdir(empty_cwd) == []


def test_cli_sql_read_text_refused(cli_db, empty_cwd, capsys):
    code = cli_main(["sql", "SELECT * FROM read_text('/etc/passwd')", "--db", str(cli_db)])
    out, err = capsys.readouterr()
    assert code == 1
    assert "refused" in err
    assert "root:" not in out + err


def test_cli_sql_refused_json(cli_db, empty_cwd, capsys):
    code = cli_main(["sql", "COPY t TO 'leak.csv'", "--db", str(cli_db), "--json"])
    out, _ = capsys.readouterr()
    d = json.loads(out)
    assert code == 1
    assert d["status"] == "refused"
    assert "T3, always blocked: COPY reads or writes files" in d["error"]
    assert "rows" not in d
    assert os.listdir(empty_cwd) == []


def test_cli_sql_ok(cli_db, capsys):
    code = cli_main(["sql", "SELECT i, s FROM t ORDER BY i", "--db", str(cli_db)])
    out, _ = capsys.readouterr()
    assert code == 0
    assert "three" in out and out.splitlines()[0].split() == ["i", "s"]


def test_cli_sql_ok_json_and_row_cap(cli_db, capsys):
    code = cli_main(["sql", "SELECT i FROM t ORDER BY i", "--db", str(cli_db), "--json"])
    d = json.loads(capsys.readouterr().out)
    assert code == 0
    assert (d["status"], d["columns"], d["rows"], d["truncated"]) == ("ok", ["i"], [[1], [2], [3]], False)
    # Same process, same (already open) database: the new row cap still applies.
    code = cli_main(["sql", "SELECT i FROM t ORDER BY i", "--db", str(cli_db), "--json", "--row-cap", "2"])
    d = json.loads(capsys.readouterr().out)
    assert code == 0
    assert (d["rows"], d["row_count"], d["truncated"]) == ([[1], [2]], 2, True)


def test_cli_sql_timeout(cli_db, capsys):
    t0 = time.perf_counter()
    code = cli_main(["sql", "SELECT count(*) FROM range(10000000000) a", "--db", str(cli_db), "--json",
                     "--timeout-s", "0.3"])
    d = json.loads(capsys.readouterr().out)
    assert code == 1 and d["status"] == "timeout"
    assert time.perf_counter() - t0 < 5


def test_cli_sql_missing_db(tmp_path, isolated_env, capsys):
    code = cli_main(["sql", "SELECT 1", "--db", str(tmp_path / "nope.duckdb")])
    assert code == 1
    assert "database not found" in capsys.readouterr().err
