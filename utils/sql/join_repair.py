"""The forgotten join: ``SELECT Money_Rank FROM poker_player WHERE Height = ...`` fails because Height
is in people. When exactly one table outside the query has the column and a foreign key links it to
a table of the outer FROM, the join is added (a free repair, no LLM call)."""
from __future__ import annotations

import re

from duckask.utils.db.ast import outer_tables, parse, table_aliases, walk
from duckask.utils.schema.catalog import ForeignKey
from duckask.utils.sql.edit import outer_from_end, replace_spans, spelled, sub_outside_strings
from duckask.utils.sql.errors import QueryError
from duckask.utils.sql.facts import SchemaFacts


def join_forgotten_table(sql: str, err: QueryError, facts: SchemaFacts) -> str | None:
    """A column no table of the query has, but one table it links to has exactly: join that table.
    Tried before a close spelling (``treatment_type_description`` is not ``treatment_type_code``)."""
    if not facts.columns or not facts.links:
        return None
    if err.kind == "column_not_found" and "." not in err.name:
        return join_missing_column(sql, err.name, None, facts.columns, facts.links)
    if err.kind == "qualified_column":
        present = {t.lower() for t in table_aliases(sql).values()}
        if not any(err.name.lower() in facts.columns.get(t, set()) for t in present):
            return join_missing_column(sql, err.name, err.qualifier, facts.columns, facts.links)
    return None


def _qualify_bare(sql: str, node: dict, tables: dict[str, str], columns: dict[str, set[str]],
                  clashing: set[str]) -> str:
    """Qualify the outer query's unqualified columns that a table about to be joined also has
    (``name`` in ``SELECT name, capacity FROM teams`` once arenas, which has a name too, is joined)
    with the one FROM table that has them now, so the join does not make them ambiguous. Columns
    inside subqueries bind to their own FROM and are left alone."""
    inner = {id(d) for d in walk(node) if d.get("class") == "SUBQUERY" or d.get("type") == "SUBQUERY"}
    edits = []
    for d in walk(node, skip=inner):
        names = d.get("column_names") or []
        if d.get("class") != "COLUMN_REF" or len(names) != 1 or names[0].lower() not in clashing:
            continue
        have = [a for a, t in tables.items() if names[0].lower() in columns.get(t.lower(), set())]
        if len(have) == 1 and d.get("query_location_length"):
            loc, length = d["query_location"], d["query_location_length"]
            edits.append((loc, length, f"{spelled(sql, have[0])}.{sql[loc:loc + length]}"))
    return replace_spans(sql, edits)


def join_missing_column(sql: str, column: str, alias: str | None, columns: dict[str, set[str]],
                        links: list[ForeignKey]) -> str | None:
    """Join the table ``column`` lives in when exactly one table outside the query has it and a
    foreign key links it to a table of the outer FROM (to ``alias``'s table, when the error names
    one); the column's qualifier is pointed at it. Anything less clear-cut returns None."""
    node = parse(sql)
    if not node or node.get("type") != "SELECT_NODE":
        return None
    tables = outer_tables(node)
    if not tables or (alias and alias.lower() not in tables):
        return None
    present = {t.lower() for t in tables.values()}
    col = column.lower()
    owners = {t for t, cols in columns.items() if col in cols and t not in present}
    joins = []      # (query alias, its column, new table, its column)
    for fk in links:
        for (mine, mc), (other, oc) in (((fk.table, fk.column), (fk.ref_table, fk.ref_column)),
                                        ((fk.ref_table, fk.ref_column), (fk.table, fk.column))):
            if other.lower() in owners:
                joins += [(al, mc, other, oc) for al, t in tables.items()
                          if t.lower() == mine.lower() and (alias is None or al == alias.lower())]
    if len({j[2].lower() for j in joins}) != 1 or len({j[0] for j in joins}) != 1:
        return None
    al, mc, table, oc = joins[0]
    sql = _qualify_bare(sql, node, tables, columns, columns.get(table.lower(), set()))
    end = outer_from_end(sql)
    if end is None:
        return None
    real = spelled(sql, al)
    new = table if table.lower() not in tables else f"{table}_j"
    head = sql[:end].rstrip()
    fixed = f"{head} JOIN {table}" + (f" AS {new}" if new != table else "") + \
        f" ON {real}.{mc} = {new}.{oc}" + (" " + sql[end:].lstrip() if sql[end:].strip() else "")
    if alias:
        # Every column the alias's table lacks and the joined table has moves over at once
        # (T1.first_name, T1.middle_name, T1.last_name on an enrolment table).
        ours, theirs = columns.get(tables[alias.lower()].lower(), set()), columns.get(table.lower(), set())
        pat = re.compile(r'(?<![\w"])' + re.escape(alias) + r'\.("?)(\w+)("?)(?![\w"])', re.I)

        def move(m: re.Match) -> str:
            name = m.group(2).lower()
            return f"{new}.{m.group(1)}{m.group(2)}{m.group(3)}" if name in theirs and name not in ours else m.group(0)

        fixed = sub_outside_strings(pat, move, fixed)
    return fixed
