"""Whether what an answer counts is what its question counts (kind ``entity``; issue 53, item 4), with cases against
a real database in ``tests/test_entity_checks.py``:

- ``count_not_of_entity``: "how many players ..." answered by ``count(*)`` over a table whose rows are not one
  player each (a player's seasons, a referee's games): the same query counting the different players
  (``count(DISTINCT player_id)``) is run, and when it finds fewer the critique gives both numbers and the fix.

Which column is the thing counted is read from the counted table's keys: the id named after the question's noun
(``player_id``), or after the table itself when the noun is one of the table's names or synonyms ("referees" in
``officials``, ``aka referee``: ``official_id``); a key whose values are phrases names a kind, not a thing
(``award_id = 'Most Valuable Player'``: two MVPs are two awards) and is left alone. Whether rows repeat it is decided by
the data, under the query's own filters (one player's games are one row a game: no fault), never by the names.
"""
from __future__ import annotations

import re

from sqlglot import exp

from duckask.utils.checks.facts import Facts
from duckask.utils.db.tree import sql_tree
from duckask.utils.schema.terms import split_ident, stem

_HOW_MANY = re.compile(r"^\s*(?:how many|what is the (?:total )?number of|count the)\s+(?:different |distinct |"
                       r"unique |individual |separate )?([a-z]+)", re.I)
#: Nouns a count answers with a measure or as rows by nature, not as things with their own ids.
_NOT_THINGS = {stem(w) for w in "time times point points run runs hit hits yard yards goal goals win wins loss losses "
               "row rows record records year years season seasons day days minute minutes hour hours".split()}
_KEYS = {"id", "key", "code"}


def _entity_column(noun: str, table: str, index, facts: Facts) -> str | None:
    """The key of ``table`` that identifies the thing ``noun`` counts: an id (key, code) named after the noun, or after
    the table when the noun is one of its names (synonyms included). A key whose values are phrases is a kind, not
    a thing ('Most Valuable Player' in ``award_id``: an award won twice is two awards), and is not one."""
    words = {noun}
    named = facts.tables.get(table.lower(), (set(), set()))[0]
    if noun in named and noun not in split_ident(table):      # another name of the table: "referees", officials
        words |= set(split_ident(table))
    found = []
    for column in sorted(index.columns(table)):
        parts = split_ident(column)
        core = [p for p in parts if p not in _KEYS]
        if core and set(core) <= words and len(core) <= 2 and set(parts) & _KEYS:
            found.append((len(column), column))
    for _, column in sorted(found):
        values = index.values(table, column)
        if not any(" " in v for v in (values or [])[:500]):
            return column
    return None


def count_not_of_entity(question: str, sql: str, df, facts: Facts) -> str | None:
    """"How many players ..." answered by ``count(*)`` over rows that are not one player each (a player's seasons):
    the count of the different players, under the same filters, is fewer. Decided by running that count."""
    m = _HOW_MANY.search(question)
    index = facts.values
    database = getattr(index, "database", None)
    if not m or database is None or df is None or df.shape != (1, 1):
        return None
    noun = stem(m.group(1).lower())
    tree = sql_tree(sql)
    if noun in _NOT_THINGS or tree is None or not isinstance(tree, exp.Select) or tree.args.get("group"):
        return None
    counts = [c for c in tree.expressions if isinstance(c.unalias(), exp.Count)]
    tables = [t for t in tree.find_all(exp.Table) if t.find_ancestor(exp.Select) is tree]
    if len(counts) != 1 or len(tables) != 1 or isinstance(counts[0].unalias().this, exp.Distinct):
        return None
    table = tables[0].name
    column = _entity_column(noun, table, index, facts)
    if column is None:
        return None
    distinct = tree.copy()
    distinct.expressions[0].replace(exp.Count(this=exp.Distinct(expressions=[exp.column(column, quoted=True)])))
    out = database.run(distinct.sql("duckdb"), row_cap=1)
    if not out.ok or out.df is None or out.df.shape != (1, 1):
        return None
    rows, different = df.iloc[0, 0], out.df.iloc[0, 0]
    try:
        if int(different) >= int(rows):
            return None
    except (TypeError, ValueError):
        return None
    return (f"The question counts {m.group(1)}, but the query counts rows of {table} ({int(rows):,}), where one "
            f"{m.group(1).rstrip('s')} has several rows: {int(different):,} different {column}. Count them with "
            f"count(DISTINCT {column}).")
