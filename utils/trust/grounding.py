"""How well an answer is tied to its question's words and to the data (issue 44), for the grader and the confidence.

``facts_for(catalog, db, shared)`` is what the checks compare with (``checks.facts.Facts``): the database's names,
the text a literal may come from (the question, earlier turns, examples, value hints; None on the plan path, whose
literals come from the semantic file), the value index, each table's words and the values the question names. It is
built once per turn: ResponseGrader hands the facts it graded with on (the turn's ``facts``), and AssessConfidence
takes them while what a literal may come from is the same.

``grounding(question, sql, df, facts)`` is the confidence's view of the same checks, run on the final answer
whatever the grader did (it may be off, or out of rounds): the names of the checks of every kind but ``shape``
(``checks.registry.GROUNDING``) that object
(``ungrounded``) and whether every text literal the query compares with ``=`` or ``IN`` is a value of its column
(``literals_verified``: True, False, or None when there is none to check), and the names the question says that
the query never uses (``untied``: "Canadian" with no country in the SQL; an answer with one is never ``high``).
"""
from __future__ import annotations

import re
from typing import Any

from duckask.utils.checks.facts import Facts, table_words
from duckask.utils.checks.grounding import compared, tables_of_column
from duckask.utils.checks.registry import GROUNDING, runnable
from duckask.utils.db.tree import sql_tree
from duckask.utils.schema.catalog import per_catalog
from duckask.utils.schema.terms import STOP, split_ident
from duckask.utils.schema.value_index import ValueIndex
from duckask.utils.turn import Turn


@per_catalog
def _names(catalog) -> set[str]:
    """The words of the database's table and column names."""
    return {w for t in catalog.tables.values() for n in [t.name, *(c.name for c in t.columns)] for w in split_ident(n)}


def facts_for(catalog, db, shared: Turn, held: Facts | None = None) -> tuple[Facts, str | None]:
    """(the checks' facts, ``given``: None on the plan path, where literals are not asked where they came from):
    ``held`` (the turn's ``facts``, ResponseGrader's) while ``given`` is what they were built with, else built here."""
    given = _given(shared)
    if held is not None and held.given == (given or ""):
        return held, given
    return Facts(_names(catalog), given or "", ValueIndex.of(db, catalog), table_words(catalog),
                 list(shared.get("value_matches") or [])), given


def _given(shared: Turn) -> str | None:
    """The text a filter's literal may come from; None on the plan path."""
    pair = (shared.get("template") or {}).get("pair")      # a template's kept pair
    return None if shared.get("path") == "plan" else " ".join(   # where a filter's literal may come from
        [shared.get("original_question") or ""]
        + [f"{t.get('text') or ''} {t.get('resolved_question') or ''} {t.get('sql') or ''}"
           for t in shared.get("history") or []]
        + [f"{e.get('question', '')} {e.get('sql', '')}" for e in shared.get("examples") or []]
        + [f"{pair['question']} {pair['sql']}" if pair else " "]
        + [str(v.get("value", "")) for v in shared.get("value_matches") or []]
        + [str(c.get("comment") or "") for c in shared.get("confirmations") or []])     # "no, use 2018"


def literals_verified(sql: str, index) -> bool | None:
    """Whether every text literal compared with ``=``/``IN`` on an indexed column is one of its values (None: no
    such literal)."""
    tree = sql_tree(sql) if index is not None else None
    if tree is None:
        return None
    seen = False
    for column, literals in compared(tree):
        for table in tables_of_column(tree, column, index)[:3]:
            held = index.values(table, column.name)
            if held is None:
                continue
            seen = True
            if not set(literals) <= set(held):
                return False
            break
    return True if seen else None


def untied_names(question: str, sql: str, names: set[str]) -> list[str]:
    """The names the question says that the query never uses (issue 53, item 5: ``high`` only when every condition
    the question states is tied to the query): a capitalised word past a sentence's first ("Canadian", "Halloween",
    "Lakers") that names no table or column of the database and of which neither the word nor its first five
    letters ("Canad": 'Canada') is anywhere in the SQL; a month is tied by a date of that month or a month function,
    a weekday by a day-of-week function. Words in capitals ("NBA", "MVP") are left out: an abbreviation is as often
    the database's subject as a condition."""
    text, out = (sql or "").lower(), []
    for sentence in re.split(r"(?<=[.?!;:])\s+", question):        # "... ? Round to 1 decimal.": each one's first
        for i, raw in enumerate(re.findall(r"[A-Za-z][A-Za-z'\-.]*", sentence)):
            word = re.sub(r"'s$", "", raw.strip(".'-"))
            if i == 0 or not word[:1].isupper() or word.isupper() or word.lower() in STOP or len(word) < 3:
                continue
            tied = word.lower() in text or word.lower()[:5] in text or _dated(word, text)
            if tied or set(split_ident(word)) <= names:
                continue
            out.append(word)
    return list(dict.fromkeys(out))


_MONTHS = {m: i for i, m in enumerate("january february march april may june july august september october november "
                                      "december".split(), 1)}
_DAYS = set("monday tuesday wednesday thursday friday saturday sunday".split())


def _dated(word: str, sql: str) -> bool:
    """A month the query holds as a date ('2024-06-30' for June) or reads with a month function, a weekday it reads
    with a day-of-week function."""
    w = word.lower()
    if w in _MONTHS:
        return bool(re.search(rf"\d{{4}}-{_MONTHS[w]:02d}\b", sql)) or "month" in sql or "strftime" in sql
    return w in _DAYS and bool(re.search(r"dayofweek|isodow|\bdow\b|dayname|weekday|strftime", sql))


def grounding(question: str, sql: str | None, df, facts: Facts, given_known: bool = True) -> dict[str, Any]:
    """{"ungrounded": [check names], "literals_verified": bool | None, "untied": [names]} of a final answer."""
    if not sql or df is None:
        return {"ungrounded": [], "literals_verified": None, "untied": []}
    failed = [c.name for c in GROUNDING if runnable(c, given_known) and c(question, sql, df, facts)]
    return {"ungrounded": failed, "literals_verified": literals_verified(sql, facts.values),
            "untied": untied_names(question, sql, facts.names)}
