"""Which kept pairs a question could match, found from a word index instead of reading every pair (issue 52).

A question's matching cost must not grow with the number of pairs, nor with how long one hostile pair is. So the
pairs of a database are indexed once per set (``index_of``: cached by the pairs' ids, questions and SQL), and a
question reads only the posting lists of its own words:

- ``template_candidates(question)``: the pairs that could be the question with other literals. A template needs at
  least ``max(2, half)`` of the pair's words unchanged (``templates._slots``), so a pair is a candidate only when
  that many of its words are words of the question; the best ``MAX_CANDIDATES`` (most words shared, then the
  closest in length, then the newest) go on to the full match, which parses their SQL.
- ``similar(question, k, threshold)``: ``retrieve``'s ranking (each shared term weighted by its rarity among the
  pairs) over the pairs that share a term with the question, found from its rarest terms first and at most
  ``MAX_SCORED`` of them (each scored in about a microsecond from the pair's kept terms), so a word every pair
  holds does not make the cost grow with the number of pairs.

A pair's terms (its question's words, and the tables and columns its SQL reads: one parse) are kept per pair for
the process, so a new pair costs one parse, not the whole set's.
"""
from __future__ import annotations

import math
import threading
from collections import Counter, defaultdict
from collections.abc import Sequence

from duckask.utils.knowledge.examples import columns_of, tables_of
from duckask.utils.knowledge.templates import fold_word as fold
from duckask.utils.knowledge.templates import question_words as words
from duckask.utils.schema.terms import question_terms, split_ident

MAX_CANDIDATES = 20      # pairs a question is fully matched against (their SQL parsed), most words shared first
MAX_SCORED = 5_000       # pairs a question's few-shot retrieval scores at most, rarest shared terms first

_LOCK = threading.Lock()
_INDEXES: dict[int, PairIndex] = {}


class Memo:
    """A process-wide memo of at most ``limit`` entries (cleared whole past it), safe across threads: what is kept
    per pair (its terms, whether an allowlist lets its asker run it)."""

    def __init__(self, limit: int):
        self.limit, self._lock = limit, threading.Lock()
        self._data: dict = {}

    def get(self, key, compute):
        with self._lock:
            if key in self._data:
                return self._data[key]
        value = compute()
        with self._lock:
            if len(self._data) >= self.limit:
                self._data.clear()
            self._data[key] = value
        return value


_TERMS = Memo(100_000)


def terms_of(question: str, sql: str) -> frozenset[str]:
    """The stemmed terms of a pair: its question's (``schema.terms``), and the words of the tables and columns its SQL
    reads (one parse), so "draft combine" finds a pair over ``kaggle_draft_combine_stats`` whatever its wording."""
    names = [*tables_of(sql), *columns_of(sql)]
    return frozenset(question_terms(question)) | {t for name in names for t in split_ident(name)}


def pair_terms(question: str, sql: str) -> frozenset[str]:
    """``terms_of``, kept for the process (every pair of a database, not the last few thousand)."""
    return _TERMS.get((question, sql), lambda: terms_of(question, sql))


class PairIndex:
    """The pairs of one set, their folded question words and terms, and which pairs hold each."""

    def __init__(self, examples: Sequence):
        self.examples = list(examples)
        self.sizes: list[int] = []
        self.by_word: dict[str, list[tuple[int, int]]] = defaultdict(list)     # word -> [(pair, times)]
        self.by_term: dict[str, list[int]] = defaultdict(list)
        for i, ex in enumerate(self.examples):
            folded = [fold(w) for w in words(ex.question)]
            self.sizes.append(len(folded))
            for w, n in Counter(folded).items():
                self.by_word[w].append((i, n))
            for t in pair_terms(ex.question, ex.sql):
                self.by_term[t].append(i)

    def template_candidates(self, question: str) -> list[tuple[int, object]]:
        """(position, pair) for the pairs ``question`` could be a template of, most of its words shared first, then
        the newest."""
        asked = Counter(fold(w) for w in words(question))
        hits: Counter[int] = Counter()
        for w, times in asked.items():         # a word of the pair's is kept at most as often as the question says it
            for i, n in self.by_word.get(w, ()):
                hits[i] += min(n, times)
        size = sum(asked.values())
        able = [i for i, n in hits.items() if n >= max(2, self.sizes[i] / 2)]
        able.sort(key=lambda i: (-hits[i], abs(self.sizes[i] - size), -i))
        return [(i, self.examples[i]) for i in able[:MAX_CANDIDATES]]

    def similar(self, question: str, k: int, threshold: float) -> list[tuple]:
        """Up to ``k`` (pair, score in 0..1) as ``retrieve.ranked`` ranks them, most similar first."""
        n = len(self.examples)
        if not n or k <= 0:
            return []

        def weight(t: str) -> float:
            return math.log(1 + (n + 1) / (1 + len(self.by_term.get(t, ()))))

        q = set(question_terms(question))
        total = sum(weight(t) for t in q) or 1.0
        found: set[int] = set()
        for t in sorted(q, key=lambda t: len(self.by_term.get(t, ()))):       # the rarest terms find pairs first
            for i in self.by_term.get(t, ()):
                if len(found) >= MAX_SCORED:
                    break
                found.add(i)
        scored = []
        for i in found:
            ex = self.examples[i]
            score = sum(weight(t) for t in q & pair_terms(ex.question, ex.sql)) / total
            if score > 0 and score >= threshold:
                scored.append((-score, i, ex))
        return [(ex, round(-s, 3)) for s, _, ex in sorted(scored)[:k]]


def index_of(examples: Sequence) -> PairIndex:
    """The index of this set of pairs, built once per set (the last few kept)."""
    key = hash(tuple((ex.id, ex.question, ex.sql) for ex in examples))
    with _LOCK:
        got = _INDEXES.get(key)
    if got is None:
        got = PairIndex(examples)
        with _LOCK:
            if len(_INDEXES) >= 8:
                _INDEXES.pop(next(iter(_INDEXES)))
            _INDEXES[key] = got
    return got
