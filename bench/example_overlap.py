"""How close is each evaluation question to the example pairs? (No LLM.)

For every question of the evaluation files, its most similar example pair (the retriever duckask uses,
``knowledge.retrieve``, with no threshold) and the similarity, so that a reader can check that no
example is a rewording of an evaluation question. Writes a markdown table.

    .venv/bin/python bench/example_overlap.py bench/nba_examples.yaml bench/nba_questions.yaml \
        bench/nba_questions_heldout.yaml --out docs/results/nba_ablation/example_overlap.md
"""
from __future__ import annotations

import argparse
from pathlib import Path

from duckask.utils.eval.questions import load_questions
from duckask.utils.knowledge.examples import load_examples
from duckask.utils.knowledge.retrieve import retrieve


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("examples")
    ap.add_argument("questions", nargs="+")
    ap.add_argument("--out")
    ap.add_argument("--threshold", type=float, default=0.3, help="the threshold shown pairs must reach")
    args = ap.parse_args(argv)
    examples = load_examples(args.examples)
    lines = [f"# Evaluation questions vs the example pairs of {args.examples}", "",
             f"{len(examples)} example pairs. Similarity is the retriever's: the share (0..1) of the question's "
             "IDF-weighted stemmed terms that the pair's question and the table and column names of its SQL "
             "cover, so a short question over a well-covered table can score 1.00 without being a rewording; "
             f"both questions are listed for the reader to judge. Pairs at or above {args.threshold} are shown "
             "to the model.", "",
             "| question | most similar example | similarity |", "|---|---|---:|"]
    sims = []
    for path in args.questions:
        for q in load_questions(path)[0]:
            best = retrieve(q.question, examples, k=1, threshold=0.0)
            ex, sim = best[0] if best else (None, 0.0)
            sims.append(sim)
            lines.append(f"| {q.id}: {q.question} | {ex.question if ex else '(none)'} | {sim:.2f} |")
    shown = sum(s >= args.threshold for s in sims)
    lines += ["", f"{len(sims)} questions; highest similarity {max(sims):.2f}, median "
              f"{sorted(sims)[len(sims) // 2]:.2f}; {shown} have at least one pair at or above the threshold."]
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
