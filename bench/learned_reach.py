"""How many questions a set's learned pairs reach (issue 63): the share of each question set for which retrieval
(``knowledge.retrieve``, the shipped ``example_count`` and ``example_threshold``) shows at least one pair that
``duckask learn`` kept on the question's database, and the best similarity's median. No model runs: it reads the
pairs bench/learn.py wrote (docs/results/learn/<set>-pairs.jsonl) and the question files.

    .venv/bin/python bench/learned_reach.py --out docs/results/learn/reach.json
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETS = {"nba-heldout": ("nba", "bench/nba_questions_heldout.yaml"), "nba-tuning": ("nba", "bench/nba_questions.yaml"),
        "idioms-dev": ("idioms", "bench/idioms_dev.yaml"), "idioms-heldout": ("idioms", "bench/idioms_heldout.yaml")}


def main(argv: list[str] | None = None) -> int:
    from duckask.utils.config import Settings
    from duckask.utils.eval.questions import load_questions
    from duckask.utils.knowledge.examples import Example, tables_of
    from duckask.utils.knowledge.retrieve import retrieve

    ap = argparse.ArgumentParser(description="the share of each question set that learned pairs reach")
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "learn" / "reach.json"))
    args = ap.parse_args(argv)
    s, out = Settings(), {}
    for name, (learned, questions) in SETS.items():
        pairs_file = ROOT / "docs" / "results" / "learn" / f"{learned}-pairs.jsonl"
        if not pairs_file.exists():
            print(f"{name}: no {pairs_file.name} (run bench/learn.py {learned})", file=sys.stderr)
            continue
        by_db: dict[str, list] = defaultdict(list)
        for i, line in enumerate(pairs_file.read_text().splitlines()):
            p = json.loads(line)
            by_db[p["db"]].append(Example(question=p["question"], sql=p["sql"], id=f"learned:{i}",
                                          tables=tables_of(p["sql"]), origin="learned"))
        qs, _ = load_questions(ROOT / questions)
        best, reached = [], 0
        for q in qs:
            db = Path(q.db).stem if q.db else learned
            pairs = by_db.get(db, [])
            top = retrieve(q.question, pairs, 1, 0.0)
            best.append(top[0][1] if top else 0.0)
            reached += bool(retrieve(q.question, pairs, s.example_count, s.example_threshold))
        out[name] = {"questions": len(qs), "reached": reached, "share": round(100.0 * reached / len(qs), 1),
                     "median_best_similarity": round(statistics.median(best), 3), "pairs": sum(map(len,
                                                                                                   by_db.values()))}
    Path(args.out).write_text(json.dumps({"threshold": s.example_threshold, "sets": out}, indent=1) + "\n")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
