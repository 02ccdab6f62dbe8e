"""A source asked live (issue 54): the questions run in PostgreSQL itself (``utils/db/live.py``), on a server the
tests start on 127.0.0.1; the local file is only the catalog (structure, a few rows, facts read at bounded cost).

What is held here: the catalog and its facts, queries transpiled and run in Postgres (names, dialect, the SQL shown),
a change in Postgres seen at once (no copy), the engine's read-only transaction, statement timeout and row cap,
the function allowlist on the engine's tree, a transpile failure as a clear error, writes through the cards in
one Postgres transaction, ``auto`` choosing by size, the same path through SQLite's ADBC driver, and the CLI flag.
"""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import clean_env, duckdb_file
from pg_support import PASSWORD

from duckask.utils.api import ask, present
from duckask.utils.config import load_settings
from duckask.utils.db import live_sql
from duckask.utils.db.database import open_database
from duckask.utils.llm.scripted import ScriptedLLM
from duckask.utils.schema.introspect import introspect
from duckask.utils.schema.value_index import LIVE_CHECK_S, ValueIndex
from duckask.utils.state.writes import approve, propose

DUCKASK = Path(sys.executable).parent / "duckask"

SHOP = [
    "CREATE TABLE customers (id integer PRIMARY KEY, name text NOT NULL, country varchar(20), vip boolean)",
    "COMMENT ON TABLE customers IS 'People who buy from the shop'",
    "CREATE TABLE orders (id bigint PRIMARY KEY, customer_id integer REFERENCES customers (id), "
    "total numeric(10, 2), placed date, status text, weight double precision)",
    "CREATE SCHEMA ops",
    "CREATE TABLE ops.shipments (id integer PRIMARY KEY, order_id bigint REFERENCES orders (id), carrier text)",
    "INSERT INTO customers SELECT i, 'customer ' || i, (ARRAY['France', 'Chile', 'Japan'])[1 + i % 3], i % 7 = 0 "
    "FROM generate_series(1, 3000) i",
    "INSERT INTO orders SELECT i, 1 + i % 3000, (i % 500) + 0.25, date '2023-01-01' + (i % 730), "
    "(ARRAY['placed', 'shipped', 'returned'])[1 + i % 3], (i % 13) * 1.5 FROM generate_series(1, 20000) i",
    "INSERT INTO ops.shipments SELECT i, i, CASE WHEN i % 2 = 0 THEN 'DHL' ELSE 'UPS' END "
    "FROM generate_series(1, 500) i",
]


@pytest.fixture(scope="module")
def shop(postgres) -> str:
    return postgres.create_database("liveshop", *SHOP)


@pytest.fixture
def live(shop, isolated_env):
    """The shop asked live, a sample of 50 rows a table in its catalog."""
    return open_database(shop, load_settings(source_mode="live", source_sample_rows=50))


def state(postgres, db: str = "liveshop") -> list:
    """What must not change: every table's rows (a checksum) and the server's settings."""
    sums = postgres.sql("SELECT (SELECT md5(string_agg(c::text, ',' ORDER BY id)) FROM customers c), "
                        "(SELECT md5(string_agg(o::text, ',' ORDER BY id)) FROM orders o), "
                        "(SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace)", db=db)
    settings = postgres.sql("SELECT md5(string_agg(name || '=' || setting, ',' ORDER BY name)) FROM pg_settings",
                            db=db)
    return [*sums, *settings]


def test_the_catalog_holds_structure_a_sample_and_facts_from_the_engine(live):
    assert live.live and live.file.name.startswith("live-")
    assert live.file.stat().st_size < 5_000_000                       # no copy of 20,000 orders
    catalog = introspect(live)
    assert set(catalog.tables) >= {"customers", "orders", "ops_shipments"}
    assert catalog.tables["orders"].rows == 20_000 and catalog.tables["customers"].rows == 3000   # not the sample
    assert catalog.tables["customers"].comment == "People who buy from the shop"
    assert catalog.tables["orders"].column("customer_id").ref.table == "customers"    # a key kept beside the file
    hits = {(t, c) for t, c, _v in catalog.values.get("japan", [])}
    assert ("customers", "country") in hits                                            # values from the engine
    assert {v for _t, _c, v in catalog.values.get("returned", [])} == {"returned"}
    with live.cursor() as cur:
        assert cur.execute("SELECT count(*) FROM orders").fetchone()[0] == 50          # the file holds a sample


def test_the_checks_read_the_catalogs_facts_and_bound_their_reads_in_the_engine(live, monkeypatch):
    index = ValueIndex.of(live, introspect(live))
    calls: list[dict] = []
    ran = live.engine.run
    monkeypatch.setattr(live.engine, "run", lambda *a, **k: calls.append(k) or ran(*a, **k))
    assert set(index.values("customers", "country")) == {"France", "Chile", "Japan"} and not calls   # the facts
    assert index.span("orders", "placed") == (2023, 2024, True)
    assert calls and calls[-1]["timeout_s"] == LIVE_CHECK_S          # a min/max on a large table stops early


def test_a_query_runs_in_postgres_sees_changes_at_once_and_shows_its_sql(live, shop, postgres):
    sql = ("SELECT c.country, count(*) AS orders, round(avg(o.weight), 2) AS weight, sum(o.total) AS total "
           "FROM orders o JOIN customers c ON c.id = o.customer_id WHERE year(o.placed) = 2024 "
           "GROUP BY c.country ORDER BY 1")
    out = live.run(sql)
    assert out.ok, out.error
    copied = open_database(shop, load_settings(source_mode="copy")).run(sql)      # the same answer as a copy's
    assert not copied.engine_sql and copied.df["country"].tolist() == out.df["country"].tolist() == [
        "Chile", "France", "Japan"]
    for col in ("orders", "weight", "total"):
        assert [float(v) for v in out.df[col]] == pytest.approx([float(v) for v in copied.df[col]]), col
    assert '"public"."orders"' in out.engine_sql and "EXTRACT(YEAR" in out.engine_sql.upper()
    ships = live.run("SELECT carrier, count(*) AS n FROM ops_shipments GROUP BY carrier ORDER BY carrier")
    assert ships.df.values.tolist() == [["DHL", 250], ["UPS", 250]] and '"ops"."shipments"' in ships.engine_sql
    postgres.sql("INSERT INTO customers VALUES (9001, 'late', 'Peru', false)", db="liveshop")
    try:
        assert live.run("SELECT count(*) AS n FROM customers").df.iloc[0, 0] == 3001     # no copy to refresh
    finally:
        postgres.sql("DELETE FROM customers WHERE id = 9001", db="liveshop")


def test_numbers_come_back_as_duckdb_gives_them(live):
    out = live.run("SELECT sum(total) AS s, avg(customer_id) AS a, count(*) AS n, max(total) AS m FROM orders")
    s, a, n, m = (out.df[c][0] for c in ("s", "a", "n", "m"))
    assert int(n) == n == 20_000 and out.df["n"].dtype.kind == "i" and out.df["a"].dtype.kind == "f"
    assert m == pytest.approx(499.25)
    assert s == pytest.approx(sum((i % 500) + 0.25 for i in range(1, 20001)))


def test_the_engine_stops_a_long_query_and_caps_the_rows(live, postgres):
    before = state(postgres)
    slow = live.run("SELECT count(*) FROM orders a, orders b, orders c", timeout_s=0.5)
    assert slow.status == "timeout" and "0.5s timeout" in slow.error
    capped = live.run("SELECT id FROM orders ORDER BY id", row_cap=7)
    assert capped.ok and capped.truncated and capped.df["id"].tolist() == list(range(1, 8))
    assert state(postgres) == before


@pytest.mark.parametrize("engine_sql", [
    "SELECT pg_sleep(10)", "SELECT pg_read_file('/etc/passwd')", "SELECT set_config('work_mem', '1GB', false)",
    "SELECT * FROM dblink('host=x', 'SELECT 1') AS t(a int)", "SELECT lo_import('/etc/passwd')",
    "SELECT nextval('orders_id_seq')", "SELECT pg_terminate_backend(1)", "SELECT current_setting('data_directory')",
    "SELECT query_to_xml('DELETE FROM orders', true, true, '')", "SELECT pg_ls_dir('.')", "SELECT txid_current()",
    "SELECT pg_advisory_lock(1)", "SELECT pg_notify('c', 'x')", "SELECT setval('orders_id_seq', 1)",
    "SELECT * FROM pg_catalog.pg_authid", "SELECT * FROM pg_stat_activity", "SELECT version()",
    "SELECT * FROM orders FOR UPDATE", "WITH d AS (DELETE FROM orders RETURNING id) SELECT count(*) FROM d",
    "SELECT 1; DROP TABLE orders", "SELECT * FROM public.secrets", "SELECT * FROM generate_series(1, 3), pg_sleep(1)",
])
def test_the_engine_tree_allows_only_pure_functions_over_the_sources_tables(engine_sql):
    with pytest.raises(live_sql.EngineRefusal, match="refused"):
        live_sql.check_engine(engine_sql, "postgresql", {("public", "orders"), ("public", "customers")})


def test_the_semantic_directorys_models_become_ctes_of_the_query_sent():
    names = {"customers": ("public", "customers"), "ops_shipments": ("ops", "shipments")}
    models = {"vips": "SELECT id, name FROM customers WHERE vip",
              "vip_names": "SELECT name FROM vips", "unused": "SELECT carrier FROM ops_shipments"}
    sql = live_sql.to_engine("SELECT count(*) AS n FROM vip_names", "postgresql", names, models)
    assert sql.startswith("WITH \"vips\" AS (SELECT id, name FROM \"public\".\"customers\"")
    assert '"vip_names" AS (SELECT name FROM "vips")' in sql and "unused" not in sql and "shipments" not in sql
    with pytest.raises(live_sql.EngineRefusal, match="not one of the source's tables"):
        live_sql.to_engine("SELECT * FROM secrets", "postgresql", names, models)


def test_a_query_the_dialect_cannot_say_is_a_clear_error_the_fixer_sees(live):
    out = live.run("SELECT list_transform([1, 2, 3], lambda x: x + 1) AS l")
    assert out.status == "error" and "postgresql" in out.error and out.df is None
    refused = live.run("SELECT version() AS v")        # DuckDB has it; not sent to the engine
    assert refused.status == "refused" and "version()" in refused.error.lower()


def test_writes_go_through_the_card_and_run_in_one_postgres_transaction(shop, postgres, isolated_env):
    settings = load_settings(source_mode="live", allow_writes=True)
    db = open_database(shop, settings)
    card = propose("UPDATE customers SET vip = true WHERE country = 'Chile' AND id <= 30", db, settings)
    assert card.decision == "pending" and card.estimated_rows == 10          # counted in Postgres
    done = approve(card, db, settings)
    assert done.outcome == "committed" and done.actual_rows == 10
    assert postgres.sql("SELECT count(*) FROM customers WHERE vip AND id <= 30 AND country = 'Chile'",
                        db="liveshop") == [(10,)]
    postgres.sql("UPDATE customers SET vip = (id % 7 = 0)", db="liveshop")
    before = state(postgres)
    off = propose("UPDATE customers SET country = 'Peru' WHERE id <= 5", db, settings)
    postgres.sql("INSERT INTO customers VALUES (0, 'new', 'Chile', false)", db="liveshop")   # the count moves
    try:
        undone = approve(off, db, settings)
        assert undone.outcome == "rolled_back" and undone.actual_rows == 6, undone.detail
        assert postgres.sql("SELECT count(*) FROM customers WHERE country = 'Peru'", db="liveshop") == [(0,)]
    finally:
        postgres.sql("DELETE FROM customers WHERE id = 0", db="liveshop")
    assert state(postgres) == before
    made = approve(propose("CREATE TABLE notes AS SELECT id, name FROM customers WHERE id < 4", db, settings),
                   db, settings)
    try:
        assert made.outcome == "committed" and "notes" in db.user_tables         # the catalog read again
        assert db.run("SELECT count(*) AS n FROM notes").df.iloc[0, 0] == 3
    finally:
        postgres.sql("DROP TABLE notes", db="liveshop")


def test_a_duckdb_file_named_like_a_live_catalog_is_a_file(tmp_path, isolated_env):
    path = duckdb_file(tmp_path / "live-postgresql-sales.duckdb", "CREATE TABLE t AS SELECT 1 AS x")
    db = open_database(str(path), load_settings(source_mode="live"))
    assert not db.live and db.run("SELECT x FROM t").df.iloc[0, 0] == 1


def test_auto_asks_live_above_the_size_and_copies_below(shop, isolated_env):
    small = open_database(shop, load_settings(source_mode="auto", source_live_rows=10_000_000))
    assert not small.live and not small.file.name.startswith("live-")
    big = open_database(shop, load_settings(source_mode="auto", source_live_rows=1000))
    assert big.live


def test_a_question_answered_live_shows_the_sql_that_ran(live, shop):
    sql = "SELECT status, count(*) AS n FROM orders GROUP BY status ORDER BY n DESC, status"
    r = ask("How many orders have each status?", db=shop, llm=ScriptedLLM({"SQLGenerator": [sql]}), grader="off",
            analyzer="rules", source_mode="live", source_sample_rows=50)
    assert r.status == "answered" and r.df.values.tolist() == [["returned", 6667], ["shipped", 6667],
                                                                ["placed", 6666]]
    assert r.engine_sql and '"public"."orders"' in r.engine_sql
    shown = json.dumps(r.to_dict(), default=str)
    assert json.loads(shown)["engine_sql"] == r.engine_sql and PASSWORD not in shown
    assert "Ran in the source as:" in present.text(r)


def test_the_same_path_through_sqlites_adbc_driver(tmp_path, isolated_env):
    pytest.importorskip("adbc_driver_sqlite")
    path = tmp_path / "s.db"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n REAL)")
        con.executemany("INSERT INTO t VALUES (?, ?, ?)", [(i, f"n{i % 3}", i / 2) for i in range(100)])
    db = open_database(f"sqlite://{path}", load_settings(source_mode="live", source_sample_rows=5))
    out = db.run("SELECT name, count(*) AS c FROM t GROUP BY name ORDER BY name")
    assert db.live and out.ok, out.error
    assert out.df.values.tolist() == [["n0", 34], ["n1", 33], ["n2", 33]]


def test_the_command_line_takes_source_mode(shop, isolated_env):
    env = clean_env(isolated_env)
    out = subprocess.run([str(DUCKASK), "ask", "--sql", "SELECT count(*) AS n FROM orders", "--db", shop,
                          "--source-mode", "live", "--json"], capture_output=True, text=True, env=env, timeout=300)
    got = json.loads(out.stdout)
    assert got["rows"] == [[20000]] and '"public"."orders"' in got["engine_sql"], out.stderr
    assert PASSWORD not in out.stdout + out.stderr
