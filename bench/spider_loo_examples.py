"""Spider dev with example pairs drawn leave-one-out from the same database (DAIL-SQL style).

For each question, the example file holds the *other* dev questions of its database with their gold
SQL, minus (a) the question itself, (b) every pair whose gold SQL is the question's own gold SQL
(Spider asks most queries twice, in two wordings: keeping the twin would hand the model its answer),
and (c) pairs whose SQL returns no rows (duckask refuses those as examples). The graph is otherwise
as shipped (retrieval k=3, threshold 0.3). This is a separate, clearly labelled figure: a real user's
pairs are not drawn from the evaluation set's own database questions.

    .venv/bin/python bench/spider_loo_examples.py --ids IDS.txt --out docs/results/spider_loo/run.jsonl \
        --report docs/results/spider_loo/run
"""
from __future__ import annotations

import argparse
import dataclasses
import tempfile
from collections import defaultdict
from pathlib import Path

import yaml

from duckask.utils.config import load_settings
from duckask.utils.db.database import open_database
from duckask.utils.eval.questions import load_questions, read_ids, resolve_db, select
from duckask.utils.eval.records import read_records
from duckask.utils.eval.run import evaluate
from duckask.utils.knowledge.examples import ExampleError, verify
from duckask.utils.llm import get_llm

ROOT = Path(__file__).resolve().parents[1]
SPIDER = ROOT.parent / "shared" / "benchmarks" / "spider_dev"


def _norm(sql: str) -> str:
    return " ".join(sql.lower().replace(";", " ").split())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ids", required=True, help="file of question ids to evaluate")
    ap.add_argument("--out", required=True)
    ap.add_argument("--report")
    args = ap.parse_args(argv)

    questions, db_dir = load_questions(SPIDER)
    settings = load_settings()
    by_db: dict[str, list] = defaultdict(list)
    for q in questions:
        by_db[q.db_id].append(q)
    usable: dict[str, list] = {}  # db_id -> the questions whose gold SQL passes as an example
    chosen = select(questions, read_ids(args.ids))
    done = {r["id"] for r in read_records(args.out)}
    llm = get_llm(settings)
    with tempfile.TemporaryDirectory() as tmp:
        for n, q in enumerate(chosen, 1):
            if q.id in done:
                continue
            db = resolve_db(q, db_dir=db_dir)
            if q.db_id not in usable:
                database = open_database(db, settings)
                usable[q.db_id] = []
                for other in by_db[q.db_id]:
                    try:
                        verify(database, other.question, other.gold_sql)
                        usable[q.db_id].append(other)
                    except ExampleError:
                        pass
            pairs = [{"question": o.question, "sql": o.gold_sql} for o in usable[q.db_id]
                     if o.id != q.id and _norm(o.gold_sql) != _norm(q.gold_sql)]
            path = Path(tmp) / f"{q.id}.yaml"
            path.write_text(yaml.safe_dump(pairs, sort_keys=False))
            df = evaluate([q], db=db, out=args.out, llm=llm, progress=False,
                          settings=dataclasses.replace(settings, examples=str(path) if pairs else ""))
            rec = df[df["id"] == q.id].iloc[0]
            print(f"[{n}/{len(chosen)}] {'ok' if rec['correct'] else '--'} {q.id} ({len(pairs)} pairs, "
                  f"{len(rec.get('examples') or [])} shown) {rec['seconds']:.1f}s", flush=True)
    df = evaluate(chosen, db_dir=db_dir, out=args.out, llm=llm, progress=False, report=args.report)
    print(f"EX {100 * df['correct'].mean():.1f} % on {len(df)} questions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
