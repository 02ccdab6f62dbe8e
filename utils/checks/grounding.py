"""Checks that tie an answer's values to the question and the data (kind ``grounding``): a text literal its column
does not hold (its likely values offered), a year its table has no row of, a year or a text value nobody gave.
``facts.values`` is the value index (``schema.value_index``); ``facts.given`` the text a literal may come from.
"""
from __future__ import annotations

import difflib
import re

import pandas as pd
from sqlglot import exp

from duckask.utils.checks.facts import NO, YES, Critique, Facts, filter_texts, stems
from duckask.utils.db.tree import sql_tree
from duckask.utils.schema.terms import stem

#: Days of the year a question may name without a year ("games played on Halloween": October 31 of any year).
DAYS_OF_YEAR = {"halloween": (10, 31), "christmas eve": (12, 24), "christmas day": (12, 25), "christmas": (12, 25),
                "new year's eve": (12, 31), "new years eve": (12, 31), "new year's day": (1, 1),
                "new years day": (1, 1), "valentine's day": (2, 14), "valentines day": (2, 14),
                "independence day": (7, 4), "fourth of july": (7, 4), "4th of july": (7, 4),
                "st. patrick's day": (3, 17), "st patrick's day": (3, 17), "saint patrick's day": (3, 17)}
_MONTHS = "january february march april may june july august september october november december".split()
_RELATIVE = re.compile(r"\b(this|last|current|latest|recent|previous|next|today|now|ago|so far|upcoming)\b", re.I)
_TIME_COLUMN = re.compile(r"(year|season|date|yr|day|time|dt|era)", re.I)
_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d|2100)\b")


def compared(tree) -> list[tuple[exp.Column, list[str]]]:
    """Each column compared with text literals by ``=`` or ``IN`` anywhere in the query, with those literals."""
    out = []
    for cmp in tree.find_all(exp.EQ, exp.In):
        if isinstance(cmp, exp.In):
            lits = cmp.args.get("expressions") or []
            if isinstance(cmp.this, exp.Column) and lits and all(isinstance(x, exp.Literal) and x.is_string
                                                                  for x in lits):
                out.append((cmp.this, [x.this for x in lits]))
            continue
        for col, lit in ((cmp.this, cmp.expression), (cmp.expression, cmp.this)):
            if isinstance(col, exp.Column) and isinstance(lit, exp.Literal) and lit.is_string:
                out.append((col, [lit.this]))
    return out


def tables_of_column(tree, column: exp.Column, index) -> list[str]:
    """The catalog tables ``column`` may belong to: its qualifier's table, else every table the query reads that
    has it; none when the qualifier names a CTE or a subquery (what those hold is not indexed)."""
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    aliases = {t.alias_or_name.lower(): t.name for t in tree.find_all(exp.Table) if t.name.lower() not in ctes}
    if column.table:
        table = aliases.get(column.table.lower())
        return [table] if table else []
    return [t for t in dict.fromkeys(aliases.values()) if column.name.lower() in index.columns(t)]


def _rare(index, table: str, column: str, literals: list[str], held: list[str]) -> str | None:
    """A literal that is a value, but a rare spelling beside the codes most rows use for it ('Forward' in 12 rows
    where 'F', 'F-C', 'C-F' hold 2,200): those are offered too."""
    from duckask.utils.schema.value_index import nearest

    count = getattr(index, "count", None)
    for lit in literals:
        if count is None:
            return None
        mine = count(table, column, lit)
        others = [(v, count(table, column, v)) for v, why in nearest(lit, [h for h in held if h != lit], n=8)
                  if why == "abbreviation"]
        if others and mine * 20 < sum(n for _, n in others) and not {v for v, _ in others} & set(literals):
            shown = ", ".join(f"'{v}' ({n:,})" for v, n in sorted(others, key=lambda x: -x[1])[:5])
            return (f"'{lit}' is a rare spelling in {table}.{column} ({mine:,} rows); most rows write it {shown}. "
                    f"Compare {column} with all of them (IN), not only '{lit}'.")
    return None


def literal_not_a_value(question: str, sql: str, df, facts: Facts) -> str | None:
    """A text literal compared with ``=`` or ``IN`` that is not a value of its column, when the column holds
    values it was likely meant as (``schema.value_index.nearest``: the same once case and plurals are set aside,
    an abbreviation, a value containing it, a near spelling): those values are offered. A literal with nothing
    near is left alone: the data may simply not hold it, and "none" can be the answer. A literal that is a value
    but a rare spelling beside the codes most rows use ('Forward' in 12 rows; 'F', 'F-C', 'C-F' in 2,200) is sent
    back with them (``_rare``), unless the query already compares with some of them."""
    index = facts.values
    if index is None:
        return None
    tree = sql_tree(sql)
    if tree is None:
        return None
    from duckask.utils.schema.value_index import nearest

    for column, literals in compared(tree):
        for table in tables_of_column(tree, column, index)[:3]:
            held = index.values(table, column.name)
            if held is None:
                break
            missing = [lit for lit in literals if lit not in set(held)]
            rare = _rare(index, table, column.name, [lit for lit in literals if lit in set(held)], held)
            if rare:
                return rare
            for lit in missing:
                near = nearest(lit, held)
                if near:
                    shown = ", ".join(f"'{v}'" for v, _ in near)
                    why = {"same": "spelt as stored", "abbreviation": "abbreviated as stored",
                           "contains": "as part of longer values", "close": "spelt differently"}[near[0][1]]
                    return (f"'{lit}' is not a value of {table}.{column.name}; it holds it {why}: {shown}. Compare "
                            f"{column.name} with the values it holds (= or IN), not with '{lit}'.")
            if not missing:
                break
    return None


def _year_of(node) -> int | None:
    """A literal as a year: a whole number from 1800 to 2100, or the year of a date ('2010-10-31', DATE '...')."""
    if isinstance(node, exp.Cast):
        node = node.this
    if not isinstance(node, exp.Literal):
        return None
    if node.is_string:
        m = re.match(r"^\s*(1[89]\d\d|20\d\d|2100)-\d\d", node.this)
        return int(m.group(1)) if m else None
    return int(node.this) if _YEAR.fullmatch(node.this) else None


def _years_asked(tree) -> list[tuple[exp.Column, list[tuple[float, float]], str]]:
    """Each column (or ``year(col)``, ``extract(year from col)``) a filter holds to years, with the ranges of years
    it keeps (a point for ``=``, each of ``IN``'s, a span for ``BETWEEN``, open-ended for ``<``/``>``)."""
    inf = float("inf")
    out = []
    for cmp in tree.find_all(exp.EQ, exp.In, exp.Between, exp.GT, exp.GTE, exp.LT, exp.LTE):
        side = cmp.this
        column = side if isinstance(side, exp.Column) else side.find(exp.Column) if isinstance(
            side, exp.Year | exp.Extract) else None
        if column is None:
            continue
        ranges: list[tuple[float, float]]
        if isinstance(cmp, exp.In):
            years = [_year_of(x) for x in cmp.args.get("expressions") or []]
            ranges = [(y, y) for y in years if y is not None] if years and None not in years else []
        elif isinstance(cmp, exp.Between):
            low, high = _year_of(cmp.args.get("low")), _year_of(cmp.args.get("high"))
            ranges = [(low, high)] if low is not None and high is not None else []
        else:
            y = _year_of(cmp.expression)
            ranges = [] if y is None else [{exp.EQ: (y, y), exp.GT: (y, inf), exp.GTE: (y, inf),
                                            exp.LT: (-inf, y), exp.LTE: (-inf, y)}[type(cmp)]]
        if ranges:
            out.append((column, ranges, cmp.sql("duckdb")))
    return out


def _elsewhere(facts: Facts, table: str, year: int) -> list[tuple[str, str]]:
    """Other tables about the same thing (a word of their names in common, ``table_words``) whose time columns
    hold ``year``, each with its words ("games.season (1946-2025)"): where the warehouse has what a curated table
    leaves out."""
    index, mine = facts.values, facts.tables.get(table.lower(), (set(), set()))[0]
    assert index is not None                        # year_outside_span, the caller, reads it
    near = sorted((t for t, (named, _) in facts.tables.items() if t != table.lower() and named & mine),
                  key=lambda t: (len(t), t))[:12]
    out = []
    for other in near:
        for column in index.time_columns(other):
            span = index.span(other, column)
            if span and span[0] <= year <= span[1]:
                out.append((other, f"{other}.{column} ({span[0]}-{span[1]})"))
                break
    return out[:3]


def _nothing(df) -> bool:
    """Whether a result holds nothing: no rows, only NULLs and zeros (a count or sum of no rows); None: not run."""
    if df is None or df.empty:
        return True
    return all((pd.api.types.is_scalar(v) and pd.isna(v))      # a list or struct cell is something, not NULL
               or (pd.api.types.is_number(v) and not pd.api.types.is_bool(v) and v == 0)
               for v in df.to_numpy().ravel().tolist())


def year_outside_span(question: str, sql: str, df, facts: Facts) -> str | None:
    """A filter holds a time column to years no row of its table has (``season = 2010`` on a table of the 2025-26
    season only): the answer is "none" or 0 by construction, not because nothing happened. The critique names the
    years the table holds and, where other tables about the same thing hold the year, those ("also in the
    warehouse"). A number column is allowed a year either side (a season filed by its first or its last year). Only
    a result that holds nothing (no rows, NULLs, zeros) is held to it: rows found mean the span read is stale."""
    index = facts.values
    if index is None or not hasattr(index, "span"):
        return None
    tree = sql_tree(sql)
    if tree is None or not _nothing(df):
        return None
    for column, ranges, said in _years_asked(tree):
        for table in tables_of_column(tree, column, index)[:3]:
            if column.name.lower() not in {c.lower() for c in index.time_columns(table)}:
                continue
            span = index.span(table, column.name)
            if span is None:
                continue
            low, high, dated = span
            slack = 0 if dated else 1
            if any(a <= high + slack and b >= low - slack for a, b in ranges):
                continue
            year = int(next(v for r in ranges for v in r if abs(v) != float("inf")))
            also = _elsewhere(facts, table, year)
            where = (f" Also in the warehouse: {'; '.join(w for _, w in also)}: read it from there." if also else
                     " No table about it holds that year: say the data does not cover it.")
            held = f"{low}" if low == high else f"{low}-{high}"
            return Critique(f"{table}.{column.name} holds {held} only, so {said} keeps no row: the query cannot find "
                            f"what the question asks for there.{where}", reach=[t for t, _ in also])
    return None


def day_of_year(question: str) -> tuple[str, tuple[int, int]] | None:
    """The day of the year a question names without a year (a holiday, or "October 31"), as (words, (m, d))."""
    low = question.lower().replace("\u2019", "'")
    for name, md in DAYS_OF_YEAR.items():
        if re.search(rf"\b{re.escape(name)}(?!\w)", low):
            return name, md
    m = re.search(rf"\b({'|'.join(_MONTHS)})\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?!\s*,?\s*\d{{4}})", low)
    if m:
        return m.group(0), (_MONTHS.index(m.group(1)) + 1, int(m.group(2)))
    return None


def _filtered_years(tree) -> list[tuple[str, str]]:
    """(year, where it stands) for every year a filter compares with: a date literal ('2025-10-31') anywhere in
    WHERE, HAVING or a join condition, or a number from 1800 to 2100 compared with a time column (year, season,
    date)."""
    out = []
    clauses = [*tree.find_all(exp.Where), *tree.find_all(exp.Having),
               *(j.args["on"] for j in tree.find_all(exp.Join) if isinstance(j.args.get("on"), exp.Expression))]
    for clause in clauses:
        for lit in clause.find_all(exp.Literal):
            if lit.is_string and re.match(r"^\s*(1[89]\d\d|20\d\d)-\d\d", lit.this):
                out.append((lit.this.strip()[:4], f"'{lit.this}'"))
            elif not lit.is_string and _YEAR.fullmatch(lit.this):
                cmp = lit.parent
                cols = [c.name for c in cmp.find_all(exp.Column)] if isinstance(cmp, exp.Binary | exp.In |
                                                                                  exp.Between) else []
                if any(_TIME_COLUMN.search(c) for c in cols):
                    out.append((lit.this, f"{cols[0]} = {lit.this}"))
    return out


def unasked_date(question: str, sql: str, df, facts: Facts) -> str | None:
    """A filter on a year (or a date of one) the question never states: "games played on Halloween" became
    ``game_date = '2025-10-31'``; "who won the most games" became ``season = 2023``. Questions that say "this
    season", "last year" or "the latest" leave the year to the query; so do years an earlier turn, an example or
    the data hints gave."""
    tree = sql_tree(sql)
    if tree is None or _RELATIVE.search(question):
        return None
    given = question + " " + facts.given
    asked = set(_YEAR.findall(given))            # "the 2015-16 season" asks for 2015 and 2016
    asked |= {century + end for century, end in re.findall(r"\b(1[89]|20)\d\d[-/](\d\d)\b", given)}
    for year, where in _filtered_years(tree):
        if year in asked:
            continue
        day = day_of_year(question)
        if day:
            m, d = day[1]
            return (f"The question names {day[0]} of any year, but the query keeps only {where} (the year {year} is "
                    f"not in the question); compare month and day instead: month(col) = {m} AND day(col) = {d}.")
        return (f"The query filters on the year {year} ({where}), which the question never states; drop that "
                "condition (or keep it only if the question asks about that year).")
    return None


def _close(word: str, given: list[str]) -> bool:
    """A word of a literal the question spelt nearly so ("Carribean" for 'Caribbean')."""
    return len(word) >= 5 and bool(difflib.get_close_matches(word, given, n=1, cutoff=0.85))


def unasked_literal(question: str, sql: str, df, facts: Facts) -> str | None:
    """A filter on a text value nothing gave: not the question, an earlier turn, an example or a data hint."""
    tree = sql_tree(sql)
    if tree is None:
        return None
    given = (question + " " + facts.given).lower()
    given_words = stems(given)
    for value in filter_texts(tree):
        low = value.lower()
        if len(low) < 3 or low in YES | NO or not re.search(r"[a-z]", low) or low in given:
            continue
        words = [w for w in re.findall(r"[a-z0-9]+", low) if len(w) >= 3]
        if not words or any(stem(w) in given_words or w in given or _close(w, given.split()) for w in words):
            continue
        return (f"The query filters on '{value}', a value the question never mentions; drop that condition "
                "(or say why it is needed).")
    return None
