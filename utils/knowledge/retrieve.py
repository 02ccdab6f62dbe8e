"""The few example pairs most like a question: ``retrieve(question, examples, k, threshold)``.

Lexical and deterministic: each question becomes the ranker's stemmed terms (``schema.terms``), each
term weighted by its rarity among the examples (IDF), and pairs are scored by the cosine of those
weights. Pairs below ``threshold`` are left out: an unrelated example costs prompt seconds and can
mislead a small model. This is the one function an embedding-based retriever would replace.

Run on its own::

    python -m duckask.utils.knowledge.retrieve FILE.yaml "question" [-k 3]
"""
from __future__ import annotations

import argparse
import math

from duckask.utils.knowledge.examples import Example, load_examples
from duckask.utils.schema.terms import question_terms


def retrieve(question: str, examples: list[Example], k: int = 3, threshold: float = 0.3) -> list[tuple[Example, float]]:
    """Up to ``k`` (example, similarity in 0..1) pairs, most similar first, ties to the earlier example."""
    if not examples or k <= 0:
        return []
    docs = [set(question_terms(e.question)) for e in examples]
    n = len(docs)
    df: dict[str, int] = {}
    for d in docs:
        for t in d:
            df[t] = df.get(t, 0) + 1

    def weight(t: str) -> float:
        return math.log(1 + (n + 1) / (1 + df.get(t, 0)))

    q = set(question_terms(question))
    q_norm = math.sqrt(sum(weight(t) ** 2 for t in q)) or 1.0
    scored = []
    for i, (ex, d) in enumerate(zip(examples, docs)):
        shared = q & d
        if not shared:
            continue
        d_norm = math.sqrt(sum(weight(t) ** 2 for t in d)) or 1.0
        score = sum(weight(t) ** 2 for t in shared) / (q_norm * d_norm)
        if score >= threshold:
            scored.append((-score, i, ex))
    return [(ex, round(-s, 3)) for s, _, ex in sorted(scored)[:k]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="The example pairs of a file most similar to a question.")
    ap.add_argument("file")
    ap.add_argument("question")
    ap.add_argument("-k", type=int, default=3)
    ap.add_argument("--threshold", type=float, default=0.0)
    args = ap.parse_args(argv)
    for ex, score in retrieve(args.question, load_examples(args.file), args.k, args.threshold):
        print(f"{score:.3f}  {ex.question}\n       {' '.join(ex.sql.split())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
