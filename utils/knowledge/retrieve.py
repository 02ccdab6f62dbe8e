"""The few example pairs most like a question: ``retrieve(question, examples, k, threshold)``.

Lexical and deterministic. A pair is described by the ranker's stemmed terms (``schema.terms``) of its
question **and** of the table and column names its SQL reads, so "rebounds" finds a pair whose SQL
reads ``REB`` only if its question says so, but "draft combine" finds a pair over
``kaggle_draft_combine_stats`` whatever its wording. Each term is weighted by its rarity among the
pairs (IDF), and a pair scores the share of the question's weight it covers (0..1): how much of what
the user asks the pair shows how to ask. Pairs below ``threshold`` are left out, since an unrelated
example costs prompt seconds and can mislead a small model.

Chosen on the 30 NBA tuning questions (``bench/retrieval_quality.py``, in git history at 3aea155): at
threshold 0.3 it shows a pair for 19 of 30 (the question-only cosine it replaced: 15) and the first pair
reads a gold table for 10 (was 5); on the 20 held-out questions, 14 and 9 (were 9 and 6). This is the one function an
embedding-based retriever would replace.
"""
from __future__ import annotations

import math

from duckask.utils.knowledge.examples import Example
from duckask.utils.knowledge.index import index_of, pair_terms
from duckask.utils.schema.terms import question_terms


def retrieve(question: str, examples: list[Example], k: int = 3, threshold: float = 0.3) -> list[tuple[Example, float]]:
    """Up to ``k`` (example, similarity in 0..1) pairs, most similar first, ties to the earlier example; read from the
    pairs' word index (``knowledge.index``: only the pairs sharing a term are scored), which ranks as ``ranked``
    does."""
    if not examples or k <= 0:
        return []
    return index_of(examples).similar(question, k, threshold)


def ranked(question: str, examples: list[Example], k: int = 3, threshold: float = 0.3,
           terms=pair_terms) -> list[tuple[Example, float]]:
    """``retrieve`` over every pair, with no index: the definition the index is held to
    (tests/test_security_round3.py); ``terms``: how a pair's terms are had (bench/matcher.py times the old way)."""
    if not examples or k <= 0:
        return []
    docs = [terms(e.question, e.sql) for e in examples]
    n = len(docs)
    df: dict[str, int] = {}
    for d in docs:
        for t in d:
            df[t] = df.get(t, 0) + 1

    def weight(t: str) -> float:
        return math.log(1 + (n + 1) / (1 + df.get(t, 0)))

    q = set(question_terms(question))
    total = sum(weight(t) for t in q) or 1.0
    scored = []
    for i, (ex, d) in enumerate(zip(examples, docs)):
        score = sum(weight(t) for t in q & d) / total
        if score > 0 and score >= threshold:
            scored.append((-score, i, ex))
    return [(ex, round(-s, 3)) for s, _, ex in sorted(scored)[:k]]
