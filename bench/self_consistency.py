"""How many SQL drafts should the vote use? Replays one eval run made with N drafts for every k <= N.

A run with ``--sql-candidates N`` records, per question, each distinct draft, the positions it was
drawn at (0 = greedy, 1.. = seeded samples) and whether it ran. Drafts are drawn independently
of each other, so the first k positions are exactly what ``--sql-candidates k`` would have drawn.
For each k this script re-runs those drafts on the database, votes with ``duckask.utils.sql.voting``
(the same code SQLExecutor uses), and scores the chosen result against the gold result. When
none of the first k drafts runs, the graph would go on to ErrorFixer from the greedy draft's error,
which the N-draft run only observed if none of its N drafts ran either; for the other questions
the outcome is taken from a one-draft run of the same questions (``--single``), whose fixer path
starts from the same greedy draft.

    .venv/bin/python bench/self_consistency.py RUN.jsonl --single docs/results/spider_sample100.jsonl

Prints EX for k = 1..N and the generation time a k costs (seconds of SQLGenerator per question).
"""
from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from duckask.utils.eval.questions import load_questions, resolve_db
from duckask.utils.eval.records import read_records
from duckask.utils.sql.compare import results_match
from duckask.utils.sql.describe import has_top_level_order_by
from duckask.utils.sql.voting import vote

ROOT = Path(__file__).resolve().parents[1]
SPIDER = ROOT.parent / "shared" / "benchmarks" / "spider_dev"


def main(argv: list[str] | None = None) -> int:
    from duckask.utils.db.database import open_database

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run", help="records of an eval run with --sql-candidates N")
    ap.add_argument("--single", required=True, help="records of a one-draft run of the same questions")
    ap.add_argument("--questions", default=str(SPIDER), help="the question set (for the gold SQL and databases)")
    ap.add_argument("--greedy-weight", type=float, default=1.0, help="votes of the greedy draft (samples: 1)")
    args = ap.parse_args(argv)

    records = read_records(args.run)
    # No ballot: every draft was the same query, so any k gives this run's outcome.
    unanimous = [r for r in records if r.get("candidates") == []]
    recs = [r for r in records if r.get("candidates") and "positions" in r["candidates"][0]]
    single = {r["id"]: r for r in read_records(args.single)}
    questions, db_dir = load_questions(args.questions)
    qs = {q.id: q for q in questions}
    n = max(max(p for c in r["candidates"] for p in c["positions"]) for r in recs) + 1
    correct = {k: 0 for k in range(1, n + 1)}
    unknown = {k: 0 for k in range(1, n + 1)}
    for r in recs:
        q = qs[r["id"]]
        db = open_database(resolve_db(q, db_dir=db_dir))
        gold = db.run(q.gold_sql)
        ordered = has_top_level_order_by(q.gold_sql)
        outs = [db.run(c["sql"]) for c in r["candidates"]]
        for k in range(1, n + 1):
            idx = [i for i, c in enumerate(r["candidates"]) if any(p < k for p in c["positions"])]
            weights = [sum(args.greedy_weight if p == 0 else 1 for p in r["candidates"][i]["positions"] if p < k)
                       for i in idx]
            v = vote([outs[i] for i in idx], weights)
            if v.groups:
                chosen = outs[idx[v.chosen]]
                correct[k] += results_match(chosen.df, gold.df, order_matters=ordered) if gold.ok else 0
            elif k == n:
                correct[k] += bool(r["correct"])       # observed: this run went on to ErrorFixer
            elif r["id"] in single:
                correct[k] += bool(single[r["id"]]["correct"])
            else:
                unknown[k] += 1
    for k in correct:
        correct[k] += sum(bool(r["correct"]) for r in unanimous)
    total = len(recs) + len(unanimous)
    gen = [sum(t["ms"] for t in r["trace"] if t["node"] == "SQLGenerator") / 1000 for r in recs + unanimous]
    print(f"{total} questions ({len(unanimous)} with identical drafts); run: {args.run}")
    print("| drafts k | EX % | questions without an outcome |")
    print("|---:|---:|---:|")
    for k in range(1, n + 1):
        print(f"| {k} | {100 * correct[k] / total:.1f} | {unknown[k]} |")
    print(f"SQLGenerator seconds per question with {n} drafts: median {statistics.median(gen):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
