"""A short, polite answer to general talk, without the LLM and without touching the data.

Greetings and thanks get a greeting or "you're welcome"; "who are you" and "what can you do" get what
duckask does here; anything else off-topic gets a line saying it is out of scope, with the tables this
database has and a question one could ask instead.
"""
from __future__ import annotations

import re

from duckask.utils.schema.catalog import Catalog

_HELLO = re.compile(r"^\s*(hi|hello|hey|yo|hiya|howdy|good (morning|afternoon|evening))\b", re.I)
_THANKS = re.compile(r"^\s*(thanks?|thank you|thx|cheers|ok(ay)?|cool|great)\b", re.I)
_BYE = re.compile(r"^\s*(bye|goodbye|see you|good night)\b", re.I)
ABOUT = re.compile(r"\b(who|what) are you\b|\bwhat can you do\b|"
                    r"\bhow do(es)? (you|this( tool)?) work\b|"
                    r"^\s*(help|\?)\s*$|\bwhat('s| is) your name\b|\bare you (a|an) \w+|"
                    r"\btell me about yourself\b", re.I)


def _tables(cat: Catalog, n: int = 8) -> str:
    names = list(cat.tables)
    more = f" and {len(names) - n} more" if len(names) > n else ""
    return ", ".join(names[:n]) + more


def capabilities(cat: Catalog, example: str | None) -> str:
    try_this = f' For example: "{example}"' if example else ""
    return (f"I answer questions about the data in this database ({len(cat.tables)} tables: {_tables(cat)}): "
            "I write the SQL, run it read-only, check the result and explain the answer. You can also ask "
            "what the tables and columns mean, or paste your own SQL." + try_this)


def answer_general(text: str, cat: Catalog, example: str | None = None) -> str:
    if _THANKS.match(text) and len(text.split()) <= 5:
        return "You're welcome. Ask another question about the data whenever you like."
    if _BYE.match(text):
        return "Goodbye."
    if _HELLO.match(text) and len(text.split()) <= 5:
        return "Hello! " + capabilities(cat, example)
    if ABOUT.search(text):
        return capabilities(cat, example)
    try_this = f' You could ask, for example: "{example}"' if example else ""
    return (f"That is outside what I can answer: I only answer questions about the data in this database "
            f"({len(cat.tables)} tables: {_tables(cat)}).{try_this}")
