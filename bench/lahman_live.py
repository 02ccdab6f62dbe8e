"""Issue 54: the Lahman 25 suite answered live from PostgreSQL, beside the DuckDB demo.

The demo database (``data/lahman.duckdb``) is loaded into a PostgreSQL 15 server on 127.0.0.1
(``tests/pg_support.py``): every table through ADBC's bulk ingest, with its primary and foreign keys and its
table and column comments. Then ``duckask eval`` runs the 25 questions of ``bench/lahman_questions.yaml`` on
``postgresql://...`` with ``--source-mode live`` and the demo's own knowledge (its example pairs and semantic file,
which ``ask`` gives the demo by itself), the embedded model as the user has it, its common prompt prefixes warmed
first (``duckask warm --db URL``, as ``.ci/setup`` warms the demo's). Gold queries run live too (in Postgres,
transpiled like every query): a gold that cannot is counted apart (``gold_error``).

    .venv/bin/python bench/lahman_live.py [--out docs/results/lahman-live/live]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import duckdb

from duckask.utils.db.quoting import quote_ident as _q
from duckask.utils.db.quoting import quote_literal as _lit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from pg_support import PostgresServer  # noqa: E402  (the tests' throwaway server)

DEMO = ROOT / "data" / "lahman.duckdb"


def load(server: PostgresServer, db: str, demo: Path = DEMO) -> str:
    """The demo's tables, keys and comments in a new Postgres database ``db``; returns its URL."""
    import adbc_driver_postgresql.dbapi as pg

    url = server.create_database(db)
    duck = duckdb.connect(str(demo), read_only=True)
    try:
        tables = [t for (t,) in duck.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' "
                                             "ORDER BY table_name").fetchall()]
        with pg.connect(url, autocommit=True) as conn, conn.cursor() as cur:
            for t in tables:
                cur.adbc_ingest(t, duck.sql(f"SELECT * FROM {_q(t)}").to_arrow_table(), mode="create")
            for t, kind, cols, ref, rcols in duck.execute(
                    "SELECT table_name, constraint_type, constraint_column_names, referenced_table, "
                    "referenced_column_names FROM duckdb_constraints() WHERE schema_name = 'main' "
                    "AND constraint_type IN ('PRIMARY KEY', 'FOREIGN KEY') ORDER BY constraint_type DESC").fetchall():
                keys = ", ".join(map(_q, cols))
                cur.execute(f"ALTER TABLE {_q(t)} ADD PRIMARY KEY ({keys})" if kind == "PRIMARY KEY" else
                            f"ALTER TABLE {_q(t)} ADD FOREIGN KEY ({keys}) REFERENCES {_q(ref)} "
                            f"({', '.join(map(_q, rcols))})")
            for t, comment in duck.execute("SELECT table_name, comment FROM duckdb_tables() WHERE comment IS NOT NULL "
                                           "AND schema_name = 'main'").fetchall():
                cur.execute(f"COMMENT ON TABLE {_q(t)} IS {_lit(comment)}")
            for t, c, comment in duck.execute("SELECT table_name, column_name, comment FROM duckdb_columns() WHERE "
                                              "comment IS NOT NULL AND schema_name = 'main'").fetchall():
                if t in tables:
                    cur.execute(f"COMMENT ON COLUMN {_q(t)}.{_q(c)} IS {_lit(comment)}")
            cur.execute("ANALYZE")
    finally:
        duck.close()
    return url


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="docs/results/lahman-live/live")
    args = ap.parse_args(argv)
    server = PostgresServer().start()
    try:
        url = load(server, "lahman")
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(f"{args.out}.jsonl").unlink(missing_ok=True)      # a fresh run (duckask eval would resume it)
        # as .ci/setup warms the demo's common prompt prefixes, a user warms their own database's once
        warm = [sys.executable, "-m", "duckask.utils.app.cli", "warm", "--db", url, "--source-mode", "live",
                "--semantic", "data/lahman_semantic.yaml", "--examples", "data/lahman_examples.yaml"]
        subprocess.run(warm, cwd=ROOT, check=True)
        cmd = [sys.executable, "-m", "duckask.utils.app.cli", "eval", "bench/lahman_questions.yaml", "--db", url,
               "--source-mode", "live", "--examples", "data/lahman_examples.yaml",
               "--semantic", "data/lahman_semantic.yaml", "--out", f"{args.out}.jsonl", "--report", args.out]
        return subprocess.run(cmd, cwd=ROOT).returncode
    finally:
        server.stop()


if __name__ == "__main__":
    raise SystemExit(main())
