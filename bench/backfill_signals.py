"""Add the signals a records file lacks because its run came before they were collected, from the
databases alone (no LLM): today ``db_tables`` (how many tables the question's database has, counted by
the same catalog reader the graph uses). Rewrites the file in place; records that have it are kept.

    .venv/bin/python bench/backfill_signals.py docs/results/confidence/fit.jsonl \
        --questions ../shared/benchmarks/spider_dev
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from duckask.utils.eval.records import read_records, replay


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("records")
    ap.add_argument("--questions", required=True, help="the question set the records came from")
    a = ap.parse_args(argv)
    tables = {rec["id"]: len(cat.tables) for rec, _q, _db, cat in replay([a.records], a.questions)}
    out, added = [], 0
    for rec in read_records(a.records):
        sig = rec.get("signals")
        if sig is not None and sig.get("db_tables") is None:
            sig["db_tables"] = tables[rec["id"]]
            added += 1
        out.append(rec)
    Path(a.records).write_text("".join(json.dumps(r, default=str) + "\n" for r in out))
    print(f"{a.records}: db_tables added to {added} of {len(out)} records")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
