"""Postgres as a source, for real (issue 35): a live server on 127.0.0.1 (``conftest.postgres``), read through
the ADBC driver into a cached DuckDB copy (``utils/db/remote.py``, ``utils/db/adbc_source.py``): schema and type
mapping, keys and comments, a question answered on it, the password in no output, the refresh rules, a server
that goes away mid-read, the same code through SQLite's ADBC driver."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import duckdb
import pytest
from conftest import clean_env, sha256
from pg_support import PASSWORD

from duckask.utils.api import ask
from duckask.utils.config import load_settings
from duckask.utils.db import remote
from duckask.utils.db.database import DatabaseError, open_database
from duckask.utils.llm.scripted import ScriptedLLM

DUCKASK = Path(sys.executable).parent / "duckask"
SECRETS = (PASSWORD, quote(PASSWORD, safe=""))      # as typed, and as it sits in a URL

SHOP = [
    "CREATE TYPE tier AS ENUM ('bronze', 'silver', 'gold')",
    "CREATE TABLE customers (id integer PRIMARY KEY, name text NOT NULL, tier tier, signed_up timestamptz, "
    "tags text[], profile jsonb)",
    "COMMENT ON TABLE customers IS 'People who buy from the shop'",
    "COMMENT ON COLUMN customers.tier IS 'loyalty tier'",
    "CREATE TABLE orders (id bigint PRIMARY KEY, customer_id integer REFERENCES customers (id), total numeric(10, 2), "
    "placed date, note varchar(40), ratio numeric, code uuid)",
    "CREATE SCHEMA ops",
    "CREATE TABLE ops.shipments (id integer PRIMARY KEY, order_id bigint REFERENCES orders (id), carrier text)",
    "CREATE VIEW big_orders AS SELECT id, total FROM orders WHERE total > 100",
    "INSERT INTO customers VALUES (1, 'Ann', 'gold', '2024-03-01 10:00+02', ARRAY['vip', 'eu'], '{\"age\": 41}'), "
    "(2, 'Bo', 'silver', '2024-04-02 09:30+00', ARRAY['us'], '{\"age\": 29}'), (3, 'Cy', 'gold', NULL, NULL, NULL)",
    "INSERT INTO orders VALUES (10, 1, 120.50, '2024-05-01', 'first', 0.333333333333333333, "
    "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'), (11, 1, 80.25, '2024-05-03', NULL, 1, NULL), "
    "(12, 2, 300.00, '2024-06-10', 'big', 2.5, NULL), (13, 3, 15.75, '2024-06-11', NULL, NULL, NULL)",
    "INSERT INTO ops.shipments VALUES (100, 10, 'DHL'), (101, 12, 'UPS')",
]


@pytest.fixture(scope="module")
def shop(postgres) -> str:
    return postgres.create_database("shop", *SHOP)


@pytest.fixture
def copy_of(tmp_path):
    """The DuckDB copy of a URL (read now), opened read-only: a function url -> connection (the one before it
    closed: DuckDB keeps one instance per path and process, which would still show a replaced file)."""
    opened = []

    def read(url: str, **kw) -> duckdb.DuckDBPyConnection:
        for con in opened:
            con.close()
        path = remote.snapshot(url, tmp_path / "remote", **kw)
        opened.append(duckdb.connect(str(path), read_only=True))
        return opened[-1]

    yield read
    for con in opened:
        con.close()


def test_types_keys_comments_and_schemas_are_read(shop, copy_of):
    con = copy_of(shop)
    types = {(t, c): ty for t, c, ty in con.execute(
        "SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE schema_name = 'main' "
        "AND NOT internal").fetchall()}
    assert types[("customers", "tier")] == "ENUM('bronze', 'silver', 'gold')"
    assert types[("customers", "signed_up")] == "TIMESTAMP WITH TIME ZONE"
    assert types[("customers", "tags")] == "VARCHAR[]" and types[("customers", "profile")] == "JSON"
    assert types[("orders", "total")] == "DECIMAL(10,2)" and types[("orders", "ratio")] == "DOUBLE"
    assert types[("orders", "id")] == "BIGINT" and types[("orders", "placed")] == "DATE"
    assert types[("orders", "code")] == "UUID" and types[("orders", "note")] == "VARCHAR"
    assert ("ops_shipments", "carrier") in types and ("big_orders", "total") in types
    keys = {(t, k, tuple(c), r) for t, k, c, r in con.execute(
        "SELECT table_name, constraint_type, constraint_column_names, referenced_table FROM duckdb_constraints() "
        "WHERE constraint_type IN ('PRIMARY KEY', 'FOREIGN KEY')").fetchall()}
    assert {("customers", "PRIMARY KEY", ("id",), None), ("orders", "FOREIGN KEY", ("customer_id",), "customers"),
            ("ops_shipments", "FOREIGN KEY", ("order_id",), "orders")} <= keys
    comments = dict(con.execute("SELECT table_name, comment FROM duckdb_tables()").fetchall())
    assert comments["customers"] == "People who buy from the shop"
    assert comments["big_orders"] == "a view in the source (public.big_orders)"
    assert con.execute("SELECT comment FROM duckdb_columns() WHERE table_name = 'customers' "
                       "AND column_name = 'tier'").fetchone() == ("loyalty tier",)
    row = con.execute("SELECT tier, tags, profile->>'age', signed_up FROM customers WHERE id = 1").fetchone()
    assert row[:3] == ("gold", ["vip", "eu"], "41") and row[3].hour in (8, 9, 10)   # 08:00 UTC, shown in local time
    assert con.execute("SELECT sum(total), count(*) FROM orders").fetchone() == (pytest.approx(516.5), 4)
    assert con.execute("SELECT count(*) FROM big_orders").fetchone() == (2,)


def test_a_question_is_answered_from_postgres(shop, isolated_env):
    sql = "SELECT c.name, sum(o.total) AS spent FROM customers c JOIN orders o ON o.customer_id = c.id " \
          "WHERE c.tier = 'gold' GROUP BY c.name ORDER BY spent DESC"
    r = ask("How much did each gold customer spend?", db=shop, llm=ScriptedLLM({"SQLGenerator": [sql]}),
            grader="off", analyzer="rules")
    assert r.status == "answered" and r.df.values.tolist() == [["Ann", 200.75], ["Cy", 15.75]]
    shown = json.dumps(r.to_dict(), default=str)
    assert r.db == remote.redact(shop) and not any(s in shown for s in SECRETS)


def test_the_password_is_in_no_output_file_or_audit_entry(shop, isolated_env):
    env = clean_env(isolated_env)
    runs = [[str(DUCKASK), "ask", "--sql", "SELECT count(*) AS n FROM customers", "--db", shop, "--json"],
            [str(DUCKASK), "schema", "--db", shop],
            [str(DUCKASK), "import", shop, "--refresh"],
            [str(DUCKASK), "sql", "DELETE FROM customers WHERE id = 3", "--db", shop, "--allow-writes"],
            [str(DUCKASK), "audit", "--db", shop, "--json"]]
    outs = [subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300) for cmd in runs]
    assert json.loads(outs[0].stdout)["rows"] == [[3]] and "customers" in outs[1].stdout
    assert "4 tables" in outs[2].stdout and "duck:***@" in outs[2].stdout
    assert outs[3].returncode != 0 and "imported copy" in outs[3].stdout + outs[3].stderr   # a copy takes no write
    (entry,) = json.loads(outs[4].stdout)
    assert entry["decision"] == "blocked" and entry["db"] == remote.redact(shop)
    for p in outs:
        assert not any(s in p.stdout + p.stderr for s in SECRETS), p.args
    for f in isolated_env.rglob("*"):                 # copies, side files, audit log, catalogs: names and bytes
        assert not any(s in str(f) for s in SECRETS)
        if f.is_file() and f.stat().st_size < 50_000_000:
            data = f.read_bytes()
            assert not any(s.encode() in data for s in SECRETS), f


def test_refresh_rules_age_and_on_demand(postgres, copy_of):
    url = postgres.create_database("fresh")
    postgres.sql("CREATE TABLE t (id integer PRIMARY KEY)", "INSERT INTO t VALUES (1)", db="fresh")
    assert copy_of(url, max_age_s=3600).execute("SELECT count(*) FROM t").fetchone() == (1,)
    postgres.sql("INSERT INTO t VALUES (2)", db="fresh")
    assert copy_of(url, max_age_s=3600).execute("SELECT count(*) FROM t").fetchone() == (1,)   # young: kept
    assert copy_of(url, refresh=True).execute("SELECT count(*) FROM t").fetchone() == (2,)      # on demand
    postgres.sql("INSERT INTO t VALUES (3)", db="fresh")
    assert copy_of(url, max_age_s=1e-6).execute("SELECT count(*) FROM t").fetchone() == (3,)    # too old: read
    with pytest.raises(DatabaseError, match="no tables matching source_tables"):
        copy_of(url, only=["nothing*"])


def test_a_wrong_password_never_gets_the_copy_made_with_the_right_one(shop, copy_of):
    copy_of(shop)
    wrong = shop.replace(quote(PASSWORD, safe=""), "guess")
    with pytest.raises(DatabaseError, match="password authentication failed") as e:
        copy_of(wrong)
    assert not any(s in str(e.value) for s in SECRETS) and "guess" not in str(e.value)


def test_a_server_that_goes_away_mid_read_leaves_the_old_copy(postgres, tmp_path, copy_of, capsys):
    url = postgres.create_database("flaky")
    postgres.sql("CREATE TABLE a (id integer PRIMARY KEY)", "INSERT INTO a VALUES (1), (2)", db="flaky")
    path = remote.snapshot(url, tmp_path / "remote")
    before = sha256(path)
    # a view whose read ends its own connection: the server goes away after the first table was read
    postgres.sql("CREATE VIEW zz_gone AS SELECT id, pg_terminate_backend(pg_backend_pid()) AS bye FROM a", db="flaky")
    with pytest.raises(DatabaseError) as e:
        remote.snapshot(url, tmp_path / "remote", refresh=True)
    message = str(e.value)
    assert "terminating connection" in message and "the copy read before is kept" in message
    assert not any(s in message for s in SECRETS)
    assert sha256(path) == before and not list(path.parent.glob("*.tmp*"))
    assert remote.snapshot(url, tmp_path / "remote", max_age_s=1e-6) == path       # by age: warn, old copy
    assert "answering from the copy read" in capsys.readouterr().err
    assert copy_of(url).execute("SELECT count(*) FROM a").fetchone() == (2,)
    postgres.sql("DROP VIEW zz_gone", db="flaky")


def test_a_server_that_is_gone_is_a_clear_error(isolated_env):
    with pytest.raises(DatabaseError, match="Connection refused"):
        open_database(f"postgresql://duck:{quote(PASSWORD, safe='')}@127.0.0.1:1/shop")


def test_names_duckdb_cannot_tell_apart_are_refused(postgres, isolated_env):
    url = postgres.create_database("clash")
    postgres.sql('CREATE TABLE "Users" (id integer)', "CREATE TABLE users (id integer)", db="clash")
    with pytest.raises(DatabaseError, match="would both be"):
        remote.snapshot(url, isolated_env / "remote")


def test_source_tables_limits_what_is_copied(shop, isolated_env):
    settings = load_settings(None, source_tables="orders, cust*")
    db = open_database(shop, settings)
    assert set(db.user_tables) == {"orders", "customers"}


def test_the_same_code_reads_sqlite_through_its_adbc_driver(tmp_path, copy_of):
    pytest.importorskip("adbc_driver_sqlite")
    path = tmp_path / "shop.sqlite"
    lite = sqlite3.connect(path)
    lite.executescript("CREATE TABLE teams (id INTEGER PRIMARY KEY, name TEXT); "
                       "CREATE TABLE games (id INTEGER PRIMARY KEY, team_id INTEGER REFERENCES teams (id), "
                       "played DATE, score REAL); INSERT INTO teams VALUES (1, 'Owls'); "
                       "INSERT INTO games VALUES (1, 1, '2024-01-02', 3.5);")
    lite.commit()
    lite.close()
    con = copy_of(f"sqlite://{path}")
    assert con.execute("SELECT data_type FROM duckdb_columns() WHERE table_name = 'games' "
                       "AND column_name = 'played'").fetchone() == ("DATE",)
    assert con.execute("SELECT referenced_table FROM duckdb_constraints() WHERE table_name = 'games' "
                       "AND constraint_type = 'FOREIGN KEY'").fetchone() == ("teams",)
    assert con.execute("SELECT t.name, g.score FROM games g JOIN teams t ON t.id = g.team_id").fetchall() == \
        [("Owls", 3.5)]


@pytest.mark.model
@pytest.mark.parametrize("question, rows", [("How many orders are there?", [[4]]),
                                            ("How many customers are in the gold tier?", [[2]])])
def test_the_embedded_model_answers_from_postgres(shop, tmp_path, question, rows):
    from conftest import embedded_model_path

    r = ask(question, db=shop, model_path=embedded_model_path(), cache_dir=str(tmp_path))
    assert r.status == "answered" and [[float(v) for v in row] for row in r.df.values.tolist()] == rows
    assert not any(s in json.dumps(r.to_dict(), default=str) for s in SECRETS)
