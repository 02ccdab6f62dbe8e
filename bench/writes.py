"""Benchmark for #13: gated writes, the audit log, exports and email, measured on real data.

1. Tiers on label sets: DuckDB's documentation examples (bench/tiers_docs.yaml: statements written by
   the docs' authors, labelled from the issue's definitions), a held-out set written from the
   definitions only by someone who did not see the classifier (bench/tiers_heldout.yaml, when present),
   and the test table (written with the rules: no selection-free figure).
2. Writes on a copy of the 52-table NBA warehouse (530k rows): for each statement, propose (classify,
   estimate, explain, audit record) and approve (audit, read-only connection closed, read-write
   transaction, commit, reopen, audit) in ms, estimate vs actual rows, and the catalog re-read after it.
3. Exports of the largest table (233,633 rows) to each format: ms and bytes.
4. Email: a 1,000-row result mailed to an SMTP server on 127.0.0.1 (aiosmtpd), ms.

No LLM is involved anywhere here. Run::

    python bench/writes.py [--db ../shared/data/nba] [--json docs/results/writes.json]
"""
from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

WRITES = [   # (label, SQL): what an analyst would change in the NBA warehouse
    ("UPDATE 1 season of draft picks",
     "UPDATE bbref_draft_pick_history SET college = upper(college) WHERE season = 2024"),
    ("DELETE the shots of 1 player",
     "DELETE FROM nbacom_shot WHERE player_id = (SELECT min(player_id) FROM nbacom_shot)"),
    ("INSERT ... SELECT 1 season",
     "INSERT INTO bbref_draft_pick_history SELECT 2030, lg, overall_pick, round, tm, player, player_id, college "
     "FROM bbref_draft_pick_history WHERE season = 2025"),
    ("INSERT 3 VALUES rows", "INSERT INTO kaggle_officials VALUES ('g1', 1, 'A', 'B', '1'), ('g1', 2, 'C', 'D', '2'), "
                             "('g2', 3, 'E', 'F', '3')"),
    ("CREATE TABLE AS (made shots)", "CREATE TABLE made_shots AS SELECT * FROM nbacom_shot WHERE shot_made_flag = 1"),
    ("CREATE VIEW", "CREATE VIEW rookies AS SELECT * FROM bbref_player_season_info WHERE experience = 1"),
    ("CREATE INDEX", "CREATE INDEX shot_player ON nbacom_shot (player_id)"),
    ("ALTER TABLE ADD COLUMN", "ALTER TABLE bbref_draft_pick_history ADD COLUMN note VARCHAR"),
    ("UPDATE every row of 233k", "UPDATE nbacom_shot SET loc_x = loc_x"),
]


def ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 1)


def tiers(path: Path) -> dict:
    from duckask.utils.writes.tiers import classify

    rows = yaml.safe_load(path.read_text())
    misses = []
    for r in rows:
        c = classify(r["sql"])
        if c.tier != r["tier"]:
            misses.append({"sql": r["sql"], "expected": r["tier"], "got": c.tier, "kind": c.kind, "reason": c.reason})
    by_tier = {t: {"n": sum(1 for r in rows if r["tier"] == t),
                   "right": sum(1 for r in rows if r["tier"] == t and r["sql"] not in {m["sql"] for m in misses})}
               for t in range(4)}
    unsafe = [m for m in misses if m["got"] < m["expected"]]   # placed in a lower (more permissive) tier
    return {"file": path.name, "n": len(rows), "right": len(rows) - len(misses), "by_tier": by_tier,
            "more_permissive_than_labelled": len(unsafe), "misses": misses}


def writes_on(db: str, work: Path) -> list[dict]:
    from duckask.utils.config import load_settings
    from duckask.utils.db.database import open_database, resolve_db_file
    from duckask.utils.semantic import get_catalog
    from duckask.utils.state import writes

    copy = work / "nba-copy.duckdb"
    shutil.copy(resolve_db_file(db), copy)
    settings = load_settings(None, allow_writes=True, audit_file=str(work / "audit.duckdb"), timeout_s=120,
                             cache_dir=str(work / "cache"))
    database = open_database(copy, settings)
    t0 = time.perf_counter()
    get_catalog(database, settings)
    first_catalog = ms(t0)
    out = []
    for label, sql in WRITES:
        t0 = time.perf_counter()
        card = writes.propose(sql, database, settings)
        propose_ms = ms(t0)
        t0 = time.perf_counter()
        done = writes.approve(card, database, settings)
        approve_ms = ms(t0)
        t0 = time.perf_counter()
        cat = get_catalog(database, settings)
        out.append({"write": label, "sql": sql, "tier": card.tier, "estimated_rows": card.estimated_rows,
                    "actual_rows": done.actual_rows, "outcome": done.outcome, "propose_ms": propose_ms,
                    "approve_ms": approve_ms, "catalog_reread_ms": ms(t0), "tables": len(cat.tables)})
        print(f"  {label:<32} T{card.tier} est {card.estimated_rows!s:>7} actual {done.actual_rows!s:>7} "
              f"{done.outcome:<10} propose {propose_ms:>7.1f} ms  approve {approve_ms:>8.1f} ms  "
              f"catalog {out[-1]['catalog_reread_ms']:>7.1f} ms", flush=True)
    out.append({"first_catalog_ms": first_catalog})
    return out


def exports(db: str, work: Path) -> list[dict]:
    from duckask.utils.db.database import open_database
    from duckask.utils.delivery.export import export_frame

    frame = open_database(db).run("SELECT * FROM nbacom_shot", row_cap=1_000_000).df
    out = []
    for fmt in ("csv", "parquet", "json", "xlsx"):
        t0 = time.perf_counter()
        path = export_frame(frame, work / f"shots.{fmt}")
        out.append({"format": fmt, "rows": len(frame), "ms": ms(t0), "bytes": path.stat().st_size})
        print(f"  {fmt:<8} {len(frame):,} rows  {out[-1]['ms']:>8.1f} ms  {out[-1]['bytes']:>11,} bytes", flush=True)
    return out


def mail(db: str) -> dict:
    from smtp_server import smtp_server

    from duckask.utils.config import Settings
    from duckask.utils.db.database import open_database
    from duckask.utils.delivery.mail import send_result

    df = open_database(db).run("SELECT * FROM bbref_draft_pick_history ORDER BY season DESC", row_cap=1000).df
    result = SimpleNamespace(question="The last 1,000 draft picks", answer="1,000 rows.", sql="SELECT ...", df=df,
                             db=db)
    times = []
    with smtp_server() as (inbox, port):
        settings = Settings(smtp_host="127.0.0.1", smtp_port=port, smtp_starttls=False, smtp_from="b@example.com")
        for _ in range(5):
            t0 = time.perf_counter()
            send_result(result, "ann@example.com", settings)
            times.append(ms(t0))
        size = len(inbox.messages[-1])
    print(f"  email of {len(df):,} rows: median {statistics.median(times):.1f} ms, {size:,} bytes", flush=True)
    return {"rows": len(df), "median_ms": statistics.median(times), "runs": times, "message_bytes": size}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=str(ROOT.parent / "shared" / "data" / "nba"))
    ap.add_argument("--sets", nargs="*", default=[str(ROOT / "bench" / n) for n in ("tiers_docs.yaml",
                                                                                     "tiers_heldout.yaml")] +
                    [str(ROOT / "tests" / "fixtures" / "write_tiers.yaml")], help="tier label sets (missing: skipped)")
    ap.add_argument("--json", dest="json_out", default=str(ROOT / "docs" / "results" / "writes.json"))
    args = ap.parse_args(argv)
    report = {"date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {platform.processor() or '?'}, "
                                                             f"Python {platform.python_version()}",
              "command": "python bench/writes.py"}
    report["tiers"] = [tiers(Path(p)) for p in args.sets if Path(p).exists()]
    for t in report["tiers"]:
        print(f"{t['file']}: {t['right']}/{t['n']} ({t['more_permissive_than_labelled']} more permissive than labels)")
        for m in t["misses"]:
            print(f"  miss: T{m['expected']} labelled, T{m['got']} ({m['kind']}): {' '.join(m['sql'].split())[:90]}")
    with tempfile.TemporaryDirectory() as tmp:
        print("writes on a copy of the NBA warehouse:")
        report["writes"] = writes_on(args.db, Path(tmp))
        print("exports:")
        report["exports"] = exports(args.db, Path(tmp))
    print("email:")
    report["email"] = mail(args.db)
    Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json_out).write_text(json.dumps(report, indent=1, default=str))
    print(f"wrote {args.json_out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
