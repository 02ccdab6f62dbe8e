"""When should the forgotten-join repair run: at once, or inside the resample vote? (No LLM.)

Replays records made before the repair existed (session 2's, e.g.
``git show 3bd2e71:docs/results/spider_sample100.jsonl > /tmp/s100.jsonl``). For every question
whose failing first draft the join repair changes, and for which a resample followed, it compares:

- recorded: what the graph did then (resample and vote, no join repair);
- at once: the repaired first draft, no resample (ErrorFixer repairing immediately);
- in the vote: the resample's recorded drafts and the failed first draft, each failing one given
  the free repairs (``run_repaired``), voted on as SQLExecutor does (what ships).

    .venv/bin/python bench/join_repair_policy.py /tmp/s100.jsonl /tmp/held.jsonl /tmp/test.jsonl
"""
from __future__ import annotations

import argparse
from pathlib import Path

from duckask.utils.eval.records import replay
from duckask.utils.sql.compare import results_match
from duckask.utils.sql.describe import has_top_level_order_by
from duckask.utils.sql.facts import SchemaFacts
from duckask.utils.sql.repair import repair, run_repaired
from duckask.utils.sql.voting import vote

ROOT = Path(__file__).resolve().parents[1]
SPIDER = ROOT.parent / "shared" / "benchmarks" / "spider_dev"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("records", nargs="+")
    ap.add_argument("--questions", default=str(SPIDER))
    args = ap.parse_args(argv)
    totals = {"recorded": 0, "at once": 0, "in the vote": 0}
    n = 0
    print("| question | recorded | at once | in the vote |\n|---|---|---|---|")
    for r, q, db, cat in replay(args.records, args.questions):
        if not r.get("first_sql") or not r.get("candidates"):
            continue
        first = db.run(r["first_sql"])
        if first.ok:
            continue
        # Only where the join repair is what changes the query (name-only repairs already ran then).
        named_only = repair(r["first_sql"], first.error, SchemaFacts.of(cat, links=False))
        with_joins = repair(r["first_sql"], first.error, SchemaFacts.of(cat))
        if with_joins is None or with_joins == named_only:
            continue
        gold = db.run(q.gold_sql)
        ordered = has_top_level_order_by(q.gold_sql)

        def right(o, gold=gold, ordered=ordered):
            return bool(o.ok and gold.ok and results_match(o.df, gold.df, order_matters=ordered))

        at_once = run_repaired(db.run, r["first_sql"], cat, q.question)
        drafts = [c for c in r["candidates"] if 0 not in c["positions"]]
        outs = [at_once] + [run_repaired(db.run, c["sql"], cat, q.question) for c in drafts]
        v = vote(outs, [1] + [len(c["positions"]) for c in drafts])
        row = {"recorded": bool(r["correct"]), "at once": right(at_once),
               "in the vote": right(outs[v.chosen]) if v.groups else False}
        n += 1
        for k in totals:
            totals[k] += row[k]
        print(f"| {r['id']} | " + " | ".join("right" if row[k] else "wrong" for k in totals) + " |")
    print(f"| **{n} questions: right** | " + " | ".join(str(totals[k]) for k in totals) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
