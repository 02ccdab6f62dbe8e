"""Words of questions and schema names, normalised the same way for matching: lower-case, Snowball
stems with a few irregular forms (won -> win), identifiers split at case changes and underscores,
and adjacent question words also joined ("home runs" ~ "homeruns").
"""
from __future__ import annotations

import functools
import re

import snowballstemmer

_STEMMER = snowballstemmer.stemmer("english")

STOP = set("""a an the of in on at to for from by with and or not no is are was were be been being do does did
what which who whom whose when where why how many much all any each every list show give tell me find
return name names their its it this that these those than then there have has had as into your our
most least top more less number count total average avg sum max min maximum minimum highest lowest
order ordered sort sorted by descending ascending asc desc distinct different unique also both
""".split())

_WORD = re.compile(r"[a-z0-9]+")


#: Irregular forms the stemmer leaves apart from their base word ("won the most games" ~ wins).
IRREGULAR = {"won": "win", "lost": "loss", "lose": "loss", "best": "good", "better": "good", "worst": "bad",
             "worse": "bad", "men": "man", "women": "woman", "children": "child", "people": "person"}


@functools.lru_cache(maxsize=65536)
def stem(w: str) -> str:
    """Snowball (Porter 2) English stem, so that "drafted" ~ draft, "scoring" ~ score, "wins" ~ win."""
    return _STEMMER.stemWord(IRREGULAR.get(w, w))


def split_ident(name: str) -> list[str]:
    """'teamID' / 'team_id' / 'TeamsFranchises' -> ['team', 'id'] etc. (lower-case, stemmed)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [stem(w) for w in _WORD.findall(spaced.lower())]


def question_terms(question: str) -> list[str]:
    words = [w for w in _WORD.findall(question.lower())]
    terms = [stem(w) for w in words if w not in STOP and len(w) > 1]
    # joined bigrams catch "home runs" vs "homeruns", "first name" vs "firstname"
    terms += [stem(a + b) for a, b in zip(words, words[1:]) if a not in STOP and b not in STOP]
    return terms


def text_terms(text: str) -> set[str]:
    """Stemmed words of a description, and its adjacent pairs joined, as question bigrams are
    ("true shooting percentage" matches the question's "true shooting")."""
    if not text:
        return set()
    words = _WORD.findall(text.lower())
    return {stem(w) for w in words} | {stem(a + b) for a, b in zip(words, words[1:])}


def bigram_parts(question: str) -> dict[str, set[str]]:
    """{joined bigram: its two stemmed words}, so a bigram match can outrank its parts."""
    words = _WORD.findall(question.lower())
    return {stem(a + b): {stem(a), stem(b)} for a, b in zip(words, words[1:])
            if a not in STOP and b not in STOP}
