"""The words duckask reads in questions and writes in answers about ranking and comparing, kept in one place.

Every module that asks "does this question want the one best row?", "is this a figure or a list?", or that says
an order or a filter in words builds its pattern from these lists, so a word added here is heard everywhere:

- ``SUPERLATIVES``: the words that ask for the extreme of a measure ("which team won the most games"): ``AMOUNTS``
  (the noun after one is what was counted: "the most home runs"), the rest of ``MEASURED`` (a size, an age, a rank),
  and ``JUDGED`` ("best", "worst", "greatest": by what measure is the question's to say);
- ``ORDINALS``: the words that ask for the first or last in time or order ("the earliest", "the latest");
- ``NOT_SUPERLATIVE``: words that end in -est but rank nothing ("interest", "west", "contest");
- ``COMPARATIVES``: "more", "fewer" (the noun after one is what was counted);
- ``OPERATOR_WORDS``: a comparison operator in words ("at least"); ``first_words(desc)``: an order's direction.

``one_of(*lists)`` is the regex alternation of lists, longest word first.
"""
from __future__ import annotations

import re

AMOUNTS = ("most", "least", "fewest", "highest", "lowest")
MEASURED = AMOUNTS + ("largest", "smallest", "biggest", "maximum", "minimum", "top", "longest", "shortest", "oldest",
                      "youngest")
JUDGED = ("best", "worst", "greatest")
SUPERLATIVES = MEASURED + JUDGED
ORDINALS = ("first", "last", "latest", "earliest", "newest")
#: The two ends a superlative asks for, as one word ("led the league", "the top hitters", "the fewest errors"):
#: a kept pair reached by meaning (``knowledge.reach``) must ask for the same end.
HIGH_END = ("most", "top", "lead", "led", "leader", "leaders", "leading", "highest", "biggest", "largest",
            "greatest", "maximum", "max")
LOW_END = ("least", "fewest", "lowest", "smallest", "minimum", "min", "bottom")
#: Places in an order, in words ("the second overall pick").
PLACES = ORDINALS + ("second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
COMPARATIVES = ("more", "fewer")
NOT_SUPERLATIVE = frozenset({"interest", "rest", "west", "test", "best-of", "contest", "forest", "request", "suggest",
                             "harvest", "honest", "modest", "protest", "guest", "nest", "chest", "earnest"})

#: A comparison in words, the one wording of every derivation (the SQL path's in ``sql.describe``, a plan's in
#: ``semantic.plan``).
OPERATOR_WORDS = {"=": "is", "!=": "is not", "<>": "is not", ">": "above", ">=": "at least", "<": "below",
                  "<=": "at most"}


def first_words(desc: bool) -> str:
    """How an order's direction is said: "highest" (first) for descending, else "lowest"."""
    return "highest" if desc else "lowest"


def one_of(*lists: tuple[str, ...] | frozenset[str]) -> str:
    """A non-capturing regex alternation of the words of ``lists``, longest first (so "top" never wins over
    "topmost")."""
    every = sorted({w for lst in lists for w in lst}, key=lambda w: (-len(w), w))
    return "(?:" + "|".join(re.escape(w) for w in every) + ")"
