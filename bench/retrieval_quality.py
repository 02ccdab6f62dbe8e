"""How useful are the example pairs the retriever picks? (No LLM; deterministic, a second.)

For each question of a file with gold SQL, the pairs ``knowledge.retrieve`` would show (k=3, at each
threshold): how many questions get at least one pair ("covered"), for how many the first pair reads a
table the gold SQL reads ("top-1 useful"), and the share of all shown pairs that do ("precision").
"Reads a gold table" is a proxy for "helps": an example over the right table shows the model that
table's columns and conventions. The ceiling is the questions for which any pair reads a gold table.

Tune on the tuning questions only; report the held-out ones::

    .venv/bin/python bench/retrieval_quality.py bench/nba_examples.yaml bench/nba_questions.yaml
"""
from __future__ import annotations

import argparse

from duckask.utils.eval.questions import load_questions
from duckask.utils.knowledge.examples import load_examples, tables_of
from duckask.utils.knowledge.retrieve import retrieve


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("examples")
    ap.add_argument("questions", nargs="+")
    ap.add_argument("-k", type=int, default=3)
    ap.add_argument("--thresholds", default="0,0.2,0.3,0.4,0.5")
    args = ap.parse_args(argv)
    examples = load_examples(args.examples)
    qs = [q for p in args.questions for q in load_questions(p)[0]]
    gold = [{t.lower() for t in tables_of(q.gold_sql)} for q in qs]
    reads = [{t.lower() for t in e.tables} for e in examples]
    ceiling = sum(any(g & r for r in reads) for g in gold)
    print(f"{len(qs)} questions, {len(examples)} pairs; ceiling (some pair reads a gold table): {ceiling}")
    print("| threshold | covered | top-1 useful | shown | precision |\n|---:|---:|---:|---:|---:|")
    for th in (float(t) for t in args.thresholds.split(",")):
        covered = top1 = shown = good = 0
        for q, g in zip(qs, gold):
            picked = retrieve(q.question, examples, args.k, th)
            covered += bool(picked)
            for rank, (ex, _) in enumerate(picked):
                ok = bool(g & {t.lower() for t in ex.tables})
                shown, good = shown + 1, good + ok
                top1 += ok and rank == 0
        print(f"| {th} | {covered} | {top1} | {shown} | {good / max(shown, 1):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
