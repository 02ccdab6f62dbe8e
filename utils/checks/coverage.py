"""Checks that an answer covers what its question asks (kind ``coverage``): a list asked and a count given, a table
the question is not about, a year or a named value of the data the query never uses.
"""
from __future__ import annotations

import re

import pandas as pd
from sqlglot import exp

from duckask.utils.checks.facts import LIST_ASKED, Facts, filter_texts
from duckask.utils.checks.grounding import _RELATIVE, _YEAR
from duckask.utils.db.reads import fold
from duckask.utils.db.tree import base_tables, sql_tree

_COUNT_WORDS = re.compile(r"\b(how many|number of|count|total|how much|sum|average|amount)\b", re.I)


def count_for_a_list(question: str, sql: str, df, facts: Facts) -> str | None:
    """"List all players from Italy" answered by one number that counts them: a list asked, a count given."""
    if not LIST_ASKED.search(question) or _COUNT_WORDS.search(question) or df is None or df.shape != (1, 1):
        return None
    value = df.iloc[0, 0]
    tree = sql_tree(sql)
    if tree is None or not pd.api.types.is_number(value) or pd.api.types.is_bool(value):
        return None
    if tree.find(exp.Count) is not None:     # anywhere: the plan path's count sits in a subquery
        return ("The question asks for a list (the rows themselves, e.g. their names), but the query returns only "
                "how many there are; select the matching rows instead of count(*).")
    return None


def table_not_asked_about(question: str, sql: str, df, facts: Facts) -> str | None:
    """The question names a table's entity ("players": the table or model players), and nothing the query reads is
    tied to a word of the question (by name, synonyms, description, columns, or a value it compares that the
    question says): "a question about players answered from the referees' table". A query that reads one tied
    table may join others (a bridge), so only a query whose every table is untied fails."""
    if not facts.tables:
        return None
    from duckask.utils.schema.terms import question_terms

    tree = sql_tree(sql)
    read = [t for t in map(fold, base_tables(tree)) if t in facts.tables]
    asked = set(question_terms(question))
    if not read or any(facts.tables[t][1] & asked for t in read):
        return None
    if tree is not None and any(lit.lower() in question.lower() for lit in filter_texts(tree) if len(lit) > 2):
        return None               # it compares a value the question says: tied through the data
    named = sorted(t for t, (name, _) in facts.tables.items() if name and name <= asked and t not in read)
    if not named:
        return None
    return (f"The question asks about {named[0]}, but the query reads {', '.join(read)}, which is not about that; "
            f"read {named[0]} (or the table the question is about).")


def _one_season(sql: str, facts: Facts, years: set[str]) -> bool:
    """Whether the tables the query reads hold only the season the question states, so no filter is needed:
    every time column either holds one value (a year among ``years``, or a code that is not a year) or holds
    dates within one season that includes a year among them. Known only with the value index; without it,
    False."""
    index = facts.values
    if index is None:
        return False
    tree = sql_tree(sql)
    if tree is None:
        return False
    stated = {int(y) for y in years}
    for table in map(fold, base_tables(tree)):
        for column in index.time_columns(table):
            span = index.span(table, column)
            if span is None:
                return False
            low, high, dated = span
            if (high - low > (1 if dated else 0)) or (1800 <= low <= 2200 and not stated & {low, high}):
                return False
    return True


def constraint_dropped(question: str, sql: str, df, facts: Facts) -> str | None:
    """A condition the question states that the query never uses: a year it names ("in 2016"), or a value of the
    data it names ("the Lakers", found in teams.nickname) that appears nowhere in the query."""
    if _RELATIVE.search(question) and not _YEAR.search(question):
        return None
    text = (sql or "").lower()
    seasons = {f"{c}{a}": f"{c}{b}" for c, a, b in re.findall(r"\b(1[89]|20)(\d\d)[-/](\d\d)\b", question)}
    moved = {y for y in _YEAR.findall(facts.given) if y not in question and y in text}   # "use 2018", said later
    for year in dict.fromkeys(_YEAR.findall(question)) if not moved else ():
        forms = {year, str(int(year) - 1), seasons.get(year, year)}      # a season may be kept by either year
        if not any(f in text for f in forms) and not _one_season(sql, facts, forms):
            return (f"The question states the year {year}, but the query never uses it; add the condition on "
                    f"{year}.")
    tree = sql_tree(sql)
    if tree is not None and any(isinstance(e.expression, exp.Literal) and not e.expression.is_string
                                and isinstance(e.this, exp.Column) and re.search(r"(^|_)id$", e.this.name, re.I)
                                for e in tree.find_all(exp.EQ)):
        return None                                    # a key looked up (team_id = 1): the name was resolved to it
    by_phrase: dict[str, list[dict]] = {}
    for v in facts.named:
        by_phrase.setdefault(v["phrase"], []).append(v)
    first = (re.findall(r"\w+", question) or [""])[0]
    sql_words = set(re.findall(r"[a-z0-9]+", text))
    for phrase, values in by_phrase.items():
        if not any((w[:1].isupper() and w != first) or any(ch.isdigit() for ch in w) for w in phrase.split()):
            continue                                   # a common phrase that happens to be stored ("home runs")
        if len(phrase) < 3 or phrase.lower() in text or any(str(v["value"]).lower() in text for v in values):
            continue
        if any(w in sql_words for w in re.findall(r"[a-z0-9]+", phrase.lower()) if len(w) > 3):
            continue                                   # a part of it, a LIKE pattern, or a table named after it
        where = ", ".join(dict.fromkeys(f"{v['table']}.{v['column']}" for v in values))
        return (f"The question names '{phrase}' (a value of {where}), but the query never uses it; add the "
                f"condition on it.")
    return None
