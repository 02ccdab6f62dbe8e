"""A/B runs of one graph change on the Spider dev questions it can affect.

A change that fires only on some wordings (a prompt note, a value hint) is judged on *every* dev
question it triggers on, with and without it, in the same code otherwise. Variants:

- ``as-is``: the graph as shipped;
- ``no-flag-hints``: without the yes/no flag value hints (``match_flags``);
- ``not-note``: with a prompt note for negations (tried, rejected: see docs/benchmarks.md);
- ``wide-pruning``: ``column_pruning: wide`` (tables over 12 columns show their relevant columns and
  name the others) instead of the default ``budget``.

``--trigger flags|negation|wide`` (``wide``: the question's database has a table of more than 12
columns, 268 dev questions) writes the ids of the questions the change can affect and runs only
those. Records go to ``--out`` (resumable, like ``duckask eval``).

    .venv/bin/python bench/ablation.py --trigger flags --variant as-is --out /tmp/flags_on.jsonl
    .venv/bin/python bench/ablation.py --trigger flags --variant no-flag-hints --out /tmp/flags_off.jsonl
    .venv/bin/python bench/ablation.py --trigger wide --variant wide-pruning \
        --out docs/results/ablations/wide_pruning.jsonl --against docs/results/spider_dev_full.jsonl.gz
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

from duckask.utils.eval.questions import load_questions

ROOT = Path(__file__).resolve().parents[1]
SPIDER = ROOT.parent / "shared" / "benchmarks" / "spider_dev"

_NOT = re.compile(r"\b(not|never|without|no|don't|doesn't|didn't|haven't|hasn't)\b", re.I)
_NOT_COMPARE = re.compile(r"\b(no|not)\s+(less|more|higher|lower|greater|fewer|larger|smaller|bigger|older|younger)\b"
                          r"|\bstands? for no\b", re.I)
NOT_NOTE = ("Note: to exclude items that have some related row (\"do not have\", \"never\", \"without\"), use "
            "WHERE <key> NOT IN (SELECT <key> FROM ... WHERE <condition>); a != condition on joined rows is "
            "not the same.")


def negated(question: str) -> bool:
    return bool(_NOT.search(_NOT_COMPARE.sub(" ", question)))


def main(argv: list[str] | None = None) -> int:
    from duckask.utils.db.database import open_database
    from duckask.utils.eval.run import evaluate
    from duckask.utils.schema import get_catalog
    from duckask.utils.schema.values import match_flags

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trigger", choices=("flags", "negation", "wide"), required=True)
    ap.add_argument("--variant", choices=("as-is", "no-flag-hints", "not-note", "wide-pruning"), required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--questions", default=str(SPIDER))
    ap.add_argument("--against", help="records of a reference run (e.g. docs/results/spider_dev_full.jsonl.gz): "
                                      "print the paired comparison on the same questions")
    args = ap.parse_args(argv)

    questions, db_dir = load_questions(args.questions)
    if args.trigger == "negation":
        ids = [q.id for q in questions if negated(q.question)]
    else:
        cats: dict[str, object] = {}
        ids = []
        for q in questions:
            if q.db_id not in cats:
                cats[q.db_id] = get_catalog(open_database(Path(db_dir) / q.db_id))
            if args.trigger == "flags" and match_flags(cats[q.db_id], q.question):
                ids.append(q.id)
            elif args.trigger == "wide" and any(len(t.columns) > 12 for t in cats[q.db_id].tables.values()):
                ids.append(q.id)
    print(f"{len(ids)} questions trigger '{args.trigger}'")

    if args.variant == "no-flag-hints":
        import duckask.nodes.table_selector as ts

        ts.match_flags = lambda catalog, question: []
    elif args.variant == "not-note":
        import duckask.nodes.sql_generator as sg

        shipped = sg.question_hints
        sg.question_hints = lambda q: shipped(q) + ([NOT_NOTE] if negated(q) else [])
    options = {"column_pruning": "wide"} if args.variant == "wide-pruning" else {}
    df = evaluate(questions, db_dir=db_dir, ids=ids, out=args.out, **options)
    print(f"EX {100 * df['correct'].mean():.1f} % on {len(df)} questions ({int(df['correct'].sum())} correct)")
    if args.against:
        paired(df.to_dict("records"), args.against)
    return 0


def paired(records: list[dict], against: str) -> None:
    """Both right / only this run / only the reference / both wrong, on the questions both ran."""
    from duckask.utils.eval.records import read_records

    ref = {r["id"]: bool(r.get("correct")) for r in read_records(against)}
    pairs = [(bool(r["correct"]), ref[r["id"]]) for r in records if r["id"] in ref]
    count = {k: sum(1 for p in pairs if p == k) for k in [(True, True), (True, False), (False, True), (False, False)]}
    n = len(pairs) or 1
    print(f"paired on {len(pairs)} questions: this run {100 * sum(a for a, _ in pairs) / n:.1f} %, reference "
          f"{100 * sum(b for _, b in pairs) / n:.1f} %; both right {count[(True, True)]}, gained "
          f"{count[(True, False)]}, lost {count[(False, True)]}, both wrong {count[(False, False)]}")


if __name__ == "__main__":
    raise SystemExit(main())
