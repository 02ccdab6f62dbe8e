"""What would today's deterministic clean-ups change in queries recorded earlier? (No LLM.)

Reads eval records (``duckask eval --out``) and every recorded query in them (final ``sql``,
``first_sql``, ``baseline_sql`` and each resample draft in ``candidates``), then, per ``--what``:

- ``tidy``: applies the current ``duckask.utils.sql.tidy.tidy_sql`` (with the question) and compares
  the recorded query with the tidied one;
- ``repair``: for the queries that fail, runs the free repair loop (``run_repaired``: ``repair``
  with foreign keys, then ``tidy_sql``, up to 3 times) and compares the recorded query with the
  query that loop ends with. Note that this compares a repair with no repair, not with what the graph
  did next (a resample); ``docs/benchmarks.md`` has both.

Changed queries are run on the question's database and scored against the gold result. A clean-up
earns its place when it turns wrong queries right and no right one wrong; this takes seconds.

    .venv/bin/python bench/replay_cleanups.py --what tidy RECORDS.jsonl [...] [--questions DIR]

To judge a change, replay records made *before* it, e.g. those of an earlier commit:
``git show 3bd2e71:docs/results/spider_sample100.jsonl > /tmp/s100.jsonl``.
"""
from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from duckask.utils.eval.records import recorded_queries, replay
from duckask.utils.sql.compare import results_match
from duckask.utils.sql.describe import has_top_level_order_by
from duckask.utils.sql.repair import run_repaired
from duckask.utils.sql.tidy import tidy_sql

ROOT = Path(__file__).resolve().parents[1]
SPIDER = ROOT.parent / "shared" / "benchmarks" / "spider_dev"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("records", nargs="+", help="eval records files")
    ap.add_argument("--what", choices=("tidy", "repair"), default="tidy", help="which clean-up to replay")
    ap.add_argument("--questions", default=str(SPIDER), help="the question set (gold SQL and databases)")
    args = ap.parse_args(argv)
    counts: Counter = Counter()
    for r, q, db, cat in replay(args.records, args.questions):
        gold = db.run(q.gold_sql)
        ordered = has_top_level_order_by(q.gold_sql)
        seen = set()
        for kind, sql in recorded_queries(r):
            if sql in seen:
                continue
            seen.add(sql)
            if args.what == "tidy":
                new = tidy_sql(sql, cat, q.question)
            else:
                new = run_repaired(db.run, sql, cat, q.question).sql
            if new == sql:
                continue
            before, after = db.run(sql), db.run(new)
            ok = [o.ok and gold.ok and results_match(o.df, gold.df, order_matters=ordered) for o in (before, after)]
            counts[(kind, *ok)] += 1
            mark = "=" if ok[0] == ok[1] else ("+" if ok[1] else "-")
            print(f"{mark} {kind:12} {r['id']}  {q.question}\n    was: {' '.join(sql.split())}\n"
                  f"    now: {' '.join(new.split())}")
    print("\n| query | changed | wrong -> right | right -> wrong | unchanged outcome |")
    print("|---|---:|---:|---:|---:|")
    for kind in ("sql", "first_sql", "baseline_sql", "draft"):
        n = {k[1:]: v for k, v in counts.items() if k[0] == kind}
        total = sum(n.values())
        if total:
            print(f"| {kind} | {total} | {n.get((False, True), 0)} | {n.get((True, False), 0)} | "
                  f"{n.get((False, False), 0) + n.get((True, True), 0)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
