"""The figures of docs/security.md: the hostile-SQL table and the runaway-query timeouts. (No LLM.)

1. Every case of tests/fixtures/attacks.yaml on the real executor (a DuckDB file and an EXPORT
   DATABASE folder): tried / refused / stopped / answered harmlessly / harmful (must be 0), by
   category, and whether the database file and folders are byte-for-byte unchanged afterwards.
2. Runaway queries at several timeouts: the time from the start of the query to its stop, as a
   multiple of the timeout, and whether the next query on the same connection still answers.

    .venv/bin/python bench/attacks.py --out docs/results/attacks.json
    .venv/bin/python bench/attacks.py --live --out docs/results/attacks-live.json    # on live PostgreSQL (issue 54)
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from attack_cases import load_cases, make_db, run_case

from duckask.utils.config import Settings
from duckask.utils.db.database import open_database

RUNAWAY = [
    "SELECT count(*) FROM range(10000000000) a",
    "SELECT count(*) FROM range(100000) a, range(100000) b",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    "SELECT sum(x) FROM generate_series(1, 10000000000) g(x)",
    "SELECT string_agg(x::VARCHAR, ',') FROM range(10000000000) r(x)",
]


def snapshot(root: Path) -> dict[str, tuple[int, int, bytes]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns, p.read_bytes()) for p in sorted(root.rglob("*"))
            if p.is_file()}


def print_table(records: list[dict], title: str) -> tuple[dict[str, Counter], Counter]:
    """The table of docs/security.md by category (and the totals)."""
    by_cat: dict[str, Counter] = defaultdict(Counter)
    for r in records:
        c = by_cat[r["category"]]
        c["tried"] += 1
        c[r["status"]] += 1
        c["harmful"] += r["harmful"]
        c["unexpected"] += not r["as_expected"]
    print(title)
    print("| category | tried | refused | stopped (timeout) | answered harmlessly | error | harmful | unexpected |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    total: Counter = Counter()
    for cat, c in by_cat.items():
        total.update(c)
        print(f"| {cat} | {c['tried']} | {c['refused']} | {c['timeout']} | {c['ok']} | {c['error']} | "
              f"{c['harmful']} | {c['unexpected']} |")
    print(f"| all | {total['tried']} | {total['refused']} | {total['timeout']} | {total['ok']} | {total['error']} | "
          f"{total['harmful']} | {total['unexpected']} |")
    return by_cat, total


def live(out: str | None) -> int:
    """Every case of both tables on a source asked live in PostgreSQL 15 (issue 54); Postgres's rows, relations,
    settings and sequence checked unchanged in Postgres afterwards."""
    from attack_cases import LIVE_FILE, LIVE_TABLES, PG_DB, live_as_expected, pg_state
    from pg_support import PostgresServer

    from duckask.utils.config import load_settings

    server = PostgresServer().start()
    try:
        url = server.create_database("attacked", *PG_DB)
        before = pg_state(server, "attacked")
        db = open_database(url, load_settings(cache_dir=tempfile.mkdtemp(prefix="duckask-live-attacks-"),
                                              source_mode="live", source_tables=LIVE_TABLES))
        records = []
        for table, cases in (("attacks.yaml", load_cases()), ("attacks_live.yaml", load_cases(LIVE_FILE))):
            for case in cases:
                r = run_case(db, case)
                r["as_expected"] = live_as_expected(case, r) if table == "attacks.yaml" else r["as_expected"]
                records.append({"table": table, **r})
        unchanged = pg_state(server, "attacked") == before
        version = server.sql("SELECT current_setting('server_version')", db="attacked")[0][0]
    finally:
        server.stop()
    _by_cat, total = print_table(records, f"{len(records)} cases on live PostgreSQL {version}; rows, relations, "
                                          f"settings and sequence unchanged: {unchanged}")
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps({"date": time.strftime("%Y-%m-%d"), "postgres": version,
                                         "postgres_unchanged": unchanged, "totals": dict(total), "cases": records},
                                        indent=1, default=str))
    return 0 if total["harmful"] == 0 and total["unexpected"] == 0 and unchanged else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out")
    ap.add_argument("--timeouts", default="0.5,1,2,5")
    ap.add_argument("--live", action="store_true", help="the tables on a live PostgreSQL source instead (issue 54)")
    args = ap.parse_args(argv)
    if args.live:
        return live(args.out)
    cases = load_cases()
    tmp = Path(tempfile.mkdtemp(prefix="duckask-attacks-"))
    settings = Settings(cache_dir=str(tmp / "cache"))
    (tmp / "db").mkdir()
    db_file = make_db(tmp / "db" / "data.duckdb")
    export = tmp / "export"
    with duckdb.connect(str(db_file)) as con:
        con.execute(f"EXPORT DATABASE '{export}'")
    before = {"file": snapshot(tmp / "db"), "export": snapshot(export)}
    records = []
    for kind, db_arg in (("file", db_file), ("export", export)):
        db = open_database(db_arg, settings)
        for case in cases:
            records.append({"source": kind, **run_case(db, case)})
    unchanged = {"file": snapshot(tmp / "db") == before["file"], "export": snapshot(export) == before["export"]}

    by_cat, total = print_table(records, f"{len(cases)} cases x 2 sources = {len(records)} runs; files unchanged: "
                                         f"{unchanged}")

    db = open_database(db_file, settings)
    runaway = []
    for timeout in (float(t) for t in args.timeouts.split(",")):
        ratios = []
        for sql in RUNAWAY:
            t0 = time.perf_counter()
            out = db.run(sql, timeout_s=timeout)
            elapsed = time.perf_counter() - t0
            usable = db.run("SELECT count(*) FROM t").ok
            if out.status == "timeout":   # some end sooner: DuckDB counts a bare range fast, a huge
                ratios.append(elapsed / timeout)  # string_agg meets the memory limit

            runaway.append({"timeout_s": timeout, "sql": sql, "status": out.status, "seconds": round(elapsed, 3),
                            "ratio": round(elapsed / timeout, 3), "next_query_ok": usable})
        print(f"timeout {timeout:g} s: {len(ratios)} of {len(RUNAWAY)} ran into it and stopped after "
              f"{min(ratios):.2f}-{max(ratios):.2f}x the timeout (median {statistics.median(ratios):.2f}x); the "
              f"others ended sooner; next query answered: "
              f"{all(r['next_query_ok'] for r in runaway if r['timeout_s'] == timeout)}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({
            "date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {platform.processor() or ''} "
            f"{os.cpu_count()} cores", "duckdb": duckdb.__version__, "files_unchanged": unchanged,
            "by_category": {k: dict(v) for k, v in by_cat.items()}, "cases": records, "runaway": runaway},
            indent=1, default=str))
    return 0 if total["harmful"] == 0 and total["unexpected"] == 0 and all(unchanged.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
