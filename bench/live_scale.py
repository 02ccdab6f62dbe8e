"""Issue 54's scale benchmark: a question on 1 M, 10 M and 100 M orders in PostgreSQL 15, copied first (``copy``)
or asked where the data lives (``live``).

A PostgreSQL 15 server (Debian's, ``tests/pg_support.py``) on 127.0.0.1 holds ``customers`` (100,000 rows) and
``orders`` (grown to each size in turn, then ANALYZEd as autovacuum would). For each size and mode a fresh
process with an empty cache asks two questions through ``duckask.ask`` with a scripted model (its SQL is fixed,
so the figures are duckask's and the engine's, not a model's: the issue's "beyond the model's own time"); the
checks run as they do for every answer. Recorded per size and mode: the time to the first answer (the copy or
the live catalog read first, in the same process), the time of a second answer, the local disk the cache holds
afterwards, each answer's rows, and the SQL that ran in Postgres; then whether copy and live gave the same rows.

    .venv/bin/python bench/live_scale.py [--sizes 1000000,10000000,100000000] [--out docs/results/live-scale.json]
"""
from __future__ import annotations

import argparse
import datetime as dt
import decimal
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from pg_support import PostgresServer  # noqa: E402  (the tests' throwaway server)

CUSTOMERS = 100_000
QUESTIONS = [
    ("How many orders were placed in 2024?",
     "SELECT count(*) AS orders FROM orders WHERE placed >= DATE '2024-01-01' AND placed < DATE '2025-01-01'"),
    ("What is the revenue of each order status?",
     "SELECT status, sum(total) AS revenue, count(*) AS orders FROM orders GROUP BY status ORDER BY revenue DESC"),
]
SERVER_OPTIONS = ("-c shared_buffers=2GB -c work_mem=64MB -c maintenance_work_mem=1GB -c wal_level=minimal "
                  "-c max_wal_senders=0 -c max_wal_size=20GB -c checkpoint_timeout=1h")
CHUNK = 10_000_000


def grow(server: PostgresServer, have: int, want: int) -> int:
    """Orders up to ``want`` rows (inserted in chunks, then ANALYZE); returns ``want``."""
    while have < want:
        upto = min(want, have + CHUNK)
        t0 = time.perf_counter()
        server.sql("INSERT INTO orders SELECT i, 1 + (i * 7919::bigint) % 100000, ((i * 31::bigint) % 100000) / 100.0, "
                   "date '2020-01-01' + (i % 1827)::int, (ARRAY['placed', 'shipped', 'delivered', 'returned'])"
                   f"[1 + i % 4] FROM generate_series({have + 1}::bigint, {upto}) i", db="scale")
        print(f"  orders: {upto:,} rows ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
        have = upto
    server.sql("ANALYZE orders", db="scale")
    return have


def disk(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def child(url: str, mode: str, cache: str) -> dict:
    """In a fresh process: the two questions, timed, on an empty cache."""
    os.environ["DUCKASK_CACHE_DIR"] = cache
    from duckask import ask
    from duckask.utils.llm.scripted import ScriptedLLM

    out = []
    for question, sql in QUESTIONS:
        llm = ScriptedLLM({"SQLGenerator": [f"```sql\n{sql}\n```"]})
        t0 = time.perf_counter()
        r = ask(question, db=url, llm=llm, source_mode=mode, timeout_s=600, analyzer="rules", router="rules",
                follow_ups="off")
        seconds = time.perf_counter() - t0
        out.append({"question": question, "status": r.status, "seconds": round(seconds, 2),
                    "rows": [] if r.df is None else [[_plain(v) for v in row] for row in r.df.values.tolist()],
                    "engine_sql": r.engine_sql, "queries_run": sum(1 for a in r.attempts if a.get("status")),
                    "answer": r.answer[:200]})
    return {"answers": out, "disk_bytes": disk(Path(cache))}


def _plain(v):
    """A value to compare: numbers as floats to 6 places (a copy's DECIMAL and Postgres's NUMERIC alike)."""
    if isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool):
        return round(float(v), 6)
    return v if isinstance(v, str) or v is None else str(v)


def measure(url: str, mode: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="duckask-scale-cache-") as cache:
        done = subprocess.run([sys.executable, __file__, "--child", url, mode, cache], capture_output=True, text=True)
        if done.returncode != 0:
            return {"error": done.stderr[-2000:]}
        return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000000,10000000,100000000")
    ap.add_argument("--out", default="docs/results/live-scale.json")
    ap.add_argument("--where", help="a folder for the cluster (default: the system's temp folder)")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child), default=str))
        return 0
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    server = PostgresServer(SERVER_OPTIONS, Path(args.where) if args.where else None).start()
    rows, report = 0, {"date": dt.date.today().isoformat(), "questions": [q for q, _ in QUESTIONS],
                       "command": "bench/live_scale.py " + " ".join(argv or sys.argv[1:]), "sizes": []}
    try:
        url = server.create_database("scale")
        server.sql("CREATE TABLE customers (id integer PRIMARY KEY, name text, country text)",
                   f"INSERT INTO customers SELECT i, 'customer ' || i, (ARRAY['France', 'Chile', 'Japan', 'Kenya'])"
                   f"[1 + i % 4] FROM generate_series(1, {CUSTOMERS}) i",
                   "CREATE TABLE orders (id bigint PRIMARY KEY, customer_id integer REFERENCES customers (id), "
                   "total numeric(10, 2), placed date, status text)", db="scale")
        for n in sizes:
            rows = grow(server, rows, n)
            size = server.sql("SELECT pg_database_size('scale')", db="scale")[0][0]
            entry = {"orders": n, "postgres_bytes": int(size)}
            for mode in ("live", "copy"):
                print(f"== {n:,} orders, {mode}", file=sys.stderr, flush=True)
                entry[mode] = measure(url, mode)
                print(json.dumps(entry[mode], default=str)[:600], file=sys.stderr, flush=True)
            got = [[a["rows"] for a in entry[m].get("answers", [])] for m in ("live", "copy")]
            entry["same_answers"] = bool(got[0]) and got[0] == got[1]
            report["sizes"].append(entry)
            Path(args.out).write_text(json.dumps(report, indent=1, default=str) + "\n")
    finally:
        server.stop()
    print(table(report))
    return 0


def table(report: dict) -> str:
    lines = ["| orders | mode | first answer | second answer | local disk | same answers |",
             "|---|---|---:|---:|---:|---|"]
    for e in report["sizes"]:
        for mode in ("copy", "live"):
            m = e[mode]
            if "error" in m:
                lines.append(f"| {e['orders']:,} | {mode} | error | | | |")
                continue
            a = m["answers"]
            lines.append(f"| {e['orders']:,} | {mode} | {a[0]['seconds']:.1f} s | {a[1]['seconds']:.1f} s | "
                         f"{m['disk_bytes'] / 1e6:.1f} MB | {'yes' if e['same_answers'] else 'NO'} |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
