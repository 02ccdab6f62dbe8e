"""The hostile-SQL table (tests/fixtures/attacks.yaml) as cases, and one function that runs a case.

Shared by tests/test_attacks.py (pytest) and bench/attacks.py (the figures of docs/security.md).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import yaml

FILE = Path(__file__).parent / "fixtures" / "attacks.yaml"
TIMEOUT_S = 0.5

#: Cases too big to write in the table.
BUILDERS = {
    "long_select": lambda: "SELECT i FROM t WHERE i IN (" + ", ".join(map(str, range(5000))) + ")",  # ~24 KB
    "deep_expression": lambda: "SELECT " + " + ".join(["1"] * 20000) + " AS n",   # past DuckDB's depth limit
    "deep_parens": lambda: "SELECT " + "(" * 5000 + "1" + ")" * 4999,           # unbalanced, very deep
}


@dataclass
class Case:
    n: int
    category: str
    sql: str
    expect: str
    reason: str = ""
    rows: int | None = None          # an answer's row count, where it says which reading ran (a comment's end)

    @property
    def id(self) -> str:
        text = " ".join(self.sql.split())
        return f"{self.n:03d}-{self.category}-{text[:32]}"


def load_cases(path: Path = FILE) -> list[Case]:
    out = []
    for n, row in enumerate(yaml.safe_load(path.read_text(encoding="utf-8")), 1):
        sql = BUILDERS[row["build"]]() if "build" in row else row["sql"]
        out.append(Case(n, row["category"], sql, row["expect"], str(row.get("reason", "")), row.get("rows")))
    return out


def make_db(path: Path) -> Path:
    """The database attacked: a table ``t`` of three rows, a view ``v``, and tables named after system views."""
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE t (i INTEGER, s VARCHAR)")
        con.execute("INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three')")
        con.execute("CREATE VIEW v AS SELECT i FROM t")
        # user tables named after system views (issue 43): approved T2 cards could have made them
        con.execute("CREATE SCHEMA airtable; CREATE TABLE airtable.duckdb_databases (x INTEGER); "
                    "CREATE SCHEMA reports; CREATE TABLE reports.pg_settings (name VARCHAR, setting VARCHAR); "
                    "CREATE VIEW pg_teams AS SELECT i FROM t")
        con.execute("CHECKPOINT")
    return path


#: The attacked database in PostgreSQL (a live source): the same names as ``make_db``'s.
PG_DB = ["CREATE TABLE t (i integer, s text)", "INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three')",
         "CREATE VIEW v AS SELECT i FROM t", "CREATE SCHEMA airtable",
         "CREATE TABLE airtable.duckdb_databases (x integer)",
         "CREATE SCHEMA reports", "CREATE TABLE reports.pg_settings (name text, setting text)",
         "CREATE VIEW pg_teams AS SELECT i FROM t", "CREATE SEQUENCE t_seq",
         "CREATE TABLE hidden (secret text)", "INSERT INTO hidden VALUES ('078-05-1120')"]
#: The tables the live source is asked with (``source_tables``): ``hidden`` is in Postgres, not in duckask's catalog.
LIVE_TABLES = ["t", "v", "pg_teams", "airtable_*", "reports_*"]
LIVE_FILE = FILE.with_name("attacks_live.yaml")


def pg_state(server, db: str) -> tuple:
    """What an attack on a live Postgres source must not change: every relation's rows (a checksum), the list of
    relations, the server's settings, and the sequence's position."""
    return tuple(server.sql(
        "SELECT (SELECT md5(string_agg(t::text, ',' ORDER BY i)) FROM t), "
        "(SELECT string_agg(n.nspname || '.' || c.relname, ',' ORDER BY 1) FROM pg_class c JOIN pg_namespace n "
        "ON n.oid = c.relnamespace WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')), "
        "(SELECT md5(string_agg(name || '=' || setting, ',' ORDER BY name)) FROM pg_settings), "
        "(SELECT last_value FROM t_seq), (SELECT count(*) FROM airtable.duckdb_databases), "
        "(SELECT string_agg(secret, ',') FROM hidden)", db=db)[0])


def live_as_expected(case: Case, record: dict) -> bool:
    """A live source may say no where DuckDB answers (a DuckDB-only form the engine's dialect cannot say is an
    error; a row generator Postgres materializes whole runs into the timeout); it may never answer what should
    have been refused or stopped."""
    if record["as_expected"]:
        return True
    if case.expect in ("refused", "timeout"):
        return record["status"] in ("refused", "error", "timeout")
    return case.expect == "ok" and record["status"] in ("error", "refused", "timeout")


def run_case(db, case: Case) -> dict:
    """Run one case on a ``Database``; the record says what happened and whether it was as expected.
    ``harmful``: a case that should have been refused or stopped returned rows."""
    t0 = time.perf_counter()
    out = db.run(case.sql, timeout_s=TIMEOUT_S, row_cap=1000)
    seconds = time.perf_counter() - t0
    as_expected = out.status == case.expect and (case.expect != "refused" or case.reason in (out.error or "")) \
        and (case.rows is None or (out.df is not None and len(out.df) == case.rows))
    return {"n": case.n, "category": case.category, "sql": case.sql[:120], "expect": case.expect,
            "status": out.status, "error": (out.error or "")[:300], "seconds": round(seconds, 3),
            "as_expected": as_expected, "harmful": case.expect in ("refused", "timeout") and out.status == "ok"}
