"""Clean-ups applied to every query the model writes: slips a small model makes that a foreign key
or the query itself shows to be wrong, rewritten without an LLM call.

``RULES`` is the ordered list; ``tidy_sql`` runs it. Each rule is ``rule(sql, facts) -> sql``
(``facts.SchemaFacts``: column names, foreign keys, the tables the question names) and returns the
query unchanged unless its fix is clear-cut. Rules read the query through DuckDB's parser
(``ast.py``) and edit it at the parser's offsets, so the model's spelling and layout are kept.

See what they make of a query, without running it::

    duckask sql --db PATH --tidy "SELECT ..." [--question "..."]
"""
from __future__ import annotations

import re

from duckask.utils.db.ast import equalities, parse, table_aliases, walk
from duckask.utils.sql import habits
from duckask.utils.sql.edit import replace_spans, spelled
from duckask.utils.sql.facts import SchemaFacts

_QUALIFIED = re.compile(r'^("?)(\w+)\1\.("?)(\w+)\3$')


def _between(left: dict, right: dict) -> tuple[int, int]:
    """Offset and length of the text from the start of ``left`` to the end of ``right``."""
    start = left["query_location"]
    return start, right["query_location"] + right["query_location_length"] - start


def self_comparisons(sql: str) -> list[str]:
    """The conditions that compare a column with itself (``T2.MakeId = T2.MakeId``, always true), as
    written; ResponseGrader names them in its critique."""
    return [sql[loc:loc + n] for loc, n in (_between(lt, rt) for lt, rt, ln, rn in equalities(parse(sql) or {})
                                            if ln == rn and lt.get("query_location_length")
                                            and rt.get("query_location_length"))]


def fix_self_joins(sql: str, facts: SchemaFacts) -> str:
    """Rewrite a join condition that compares a column with itself (``T2.MakeId = T2.MakeId``, a
    frequent slip of the 1.5B model) into the foreign-key join it was meant to be, when exactly one
    other table of the query is linked to that column by a foreign key; otherwise leave it alone."""
    node = parse(sql)
    pairs = [(lt, rt, ln) for lt, rt, ln, rn in equalities(node or {}) if ln == rn
             and lt.get("query_location_length") and rt.get("query_location_length")]
    if not pairs:
        return sql
    aliases = table_aliases(sql)
    edits = []
    for left, right, (alias, col) in pairs:
        table = aliases.get(alias.lower())
        if table is None:
            continue
        options = set()
        for fk in facts.links or []:
            for t1, c1, t2, c2 in ((fk.table, fk.column, fk.ref_table, fk.ref_column),
                                   (fk.ref_table, fk.ref_column, fk.table, fk.column)):
                if t1.lower() == table.lower() and c1.lower() == col.lower():
                    options |= {(a, c2) for a, t in aliases.items() if a != alias.lower() and t.lower() == t2.lower()}
        if len(options) > 1:   # prefer an explicit alias over a bare table name (e.g. in a subquery)
            options = {o for o in options if o[0] != aliases[o[0]].lower()}
        if len(options) != 1:
            continue
        other_alias, other_col = options.pop()
        loc, n = _between(left, right)
        written = sql[left["query_location"]:left["query_location"] + left["query_location_length"]]
        edits.append((loc, n, f"{spelled(sql, other_alias)}.{other_col} = {written}"))
    return replace_spans(sql, edits)


def fix_key_mismatches(sql: str, facts: SchemaFacts) -> str:
    """Rewrite ``A.fk = B.other`` into ``A.fk = B.key`` when ``A.fk`` is a foreign key to table B's
    column ``key`` and ``other`` is another column of B: comparing a key with an unrelated column
    (``countries.Continent = car_makers.Country``, ``airports.City = flights.SourceAirport``) is a
    slip, never a join anyone means. Conditions between tables without such a key are left alone."""
    if not facts.links:
        return sql
    node = parse(sql)
    if node is None:
        return sql
    aliases = table_aliases(sql)
    refs = {(fk.table.lower(), fk.column.lower()): (fk.ref_table.lower(), fk.ref_column) for fk in facts.links}
    edits = []
    for left, right, ln, rn in equalities(node):
        if not (left.get("query_location_length") and right.get("query_location_length")):
            continue
        texts = [sql[d["query_location"]:d["query_location"] + d["query_location_length"]] for d in (left, right)]
        written = [_QUALIFIED.match(t) for t in texts]
        tables = [aliases.get(names[0].lower(), "").lower() for names in (ln, rn)]
        if not all(written) or not all(tables) or ln[0].lower() == rn[0].lower():
            continue
        for i in (0, 1):
            j = 1 - i
            ref = refs.get((tables[i], (ln, rn)[i][1].lower()))
            if ref and ref[0] == tables[j] and ref[1].lower() != (ln, rn)[j][1].lower():
                match = written[j]
                assert match is not None            # all(written) above
                q, alias, cq, _ = match.groups()
                texts[j] = f"{q}{alias}{q}.{cq}{ref[1]}{cq}"
                edits.append((*_between(left, right), f"{texts[0]} = {texts[1]}"))
                break
    return replace_spans(sql, edits)


def _is_key_join(cond: dict, aliases: dict[str, str], facts: SchemaFacts) -> bool:
    """Whether a join condition is exactly one foreign key = the column it references (any join
    counts as one when the foreign keys are unknown)."""
    if facts.links is None:
        return True
    if cond.get("class") != "COMPARISON" or cond.get("type") != "COMPARE_EQUAL":
        return False
    sides = []
    for side in (cond.get("left"), cond.get("right")):
        names = (side or {}).get("column_names") or []
        if side is None or side.get("class") != "COLUMN_REF" or len(names) != 2:
            return False
        sides.append(((aliases.get(names[0].lower()) or "").lower(), names[1].lower()))
    pairs = {((fk.table.lower(), fk.column.lower()), (fk.ref_table.lower(), fk.ref_column.lower()))
             for fk in facts.links}
    return (sides[0], sides[1]) in pairs or (sides[1], sides[0]) in pairs


def _counted(node: dict) -> bool:
    """Whether the query groups or counts (COUNT/SUM/AVG), so a join's row multiplicity matters."""
    return bool(node.get("group_expressions") or any(
        d.get("class") == "AGGREGATE" or d.get("function_name") in ("count_star", "count", "sum", "avg")
        for d in walk([node.get("select_list"), node.get("having"), node.get("modifiers")])))


def _drop_one_join(sql: str, node: dict, joins: list[tuple[dict, dict]], facts: SchemaFacts,
                   counted: bool) -> str | None:
    """The query without the first droppable join of ``joins`` (see ``prune_unused_joins``), or None."""
    conds = {id(j["condition"]) for j, _ in joins}
    outside = [d for d in walk(node, skip=conds) if d.get("class") in ("COLUMN_REF", "STAR") or d.get("type") == "STAR"]
    if any(d.get("class") == "STAR" or d.get("type") == "STAR" for d in outside):
        return None
    used = {d["column_names"][0].lower() for d in outside if len(d.get("column_names", [])) >= 2}
    bare = {d["column_names"][0].lower() for d in outside if len(d.get("column_names", [])) == 1}
    for j, t in joins:
        alias = (t.get("alias") or t["table_name"]).lower()
        if alias in used or bare & facts.columns.get(t["table_name"].lower(), set()):
            continue
        in_other = any(alias == d["column_names"][0].lower() for oj, _ in joins if oj is not j
                       for d in walk(oj["condition"]) if len(d.get("column_names", [])) >= 2)
        cond = j["condition"]
        if in_other or not cond.get("query_location_length"):
            continue
        key = _is_key_join(cond, table_aliases(sql), facts)
        if key and counted:
            continue
        if not key and (facts.named is None or t["table_name"].lower() in facts.named):
            continue
        start = j.get("query_location")
        end = cond["query_location"] + cond["query_location_length"]
        # The JOIN node's location is its keyword: "JOIN" or "INNER JOIN".
        if start is None or not re.match(r"\s*(INNER\s+)?JOIN\b", sql[start:], re.I):
            continue
        head = re.search(r"\bINNER\s+$", sql[:start], re.I)
        start = head.start() if head else start
        return (sql[:start].rstrip() + " " + sql[end:].lstrip()).strip()
    return None


def prune_unused_joins(sql: str, facts: SchemaFacts) -> str:
    """Drop an inner-joined table that the query never uses beyond its own join condition.

    Small models often join tables "for context" (``singer JOIN singer_in_concert JOIN concert`` to
    list song names, ``TV_series JOIN Cartoon ON T1.Channel = T2.Channel`` to list episodes); each
    such join multiplies or filters rows the question did not ask about. A table is dropped only when
    it is the right side of an INNER JOIN ... ON in the outermost FROM, no other clause mentions its
    alias, no unqualified column of the query could be one of its columns, no other join condition
    uses it, and the query has no ``*``.

    With foreign keys known, a join on exactly a foreign key is dropped unless the query has a
    GROUP BY or COUNT/SUM/AVG (where the join's row multiplicity is the point). A join on other
    columns (``o.state = p.state``) is a filter: it is dropped only when the tables the question
    names are known and do not include it, aggregates or not ("states with both owners and
    professionals" keeps its join; "high schoolers in grade 10" loses Friend and Likes).
    """
    for _ in range(4):
        node = parse(sql)
        if not node or node.get("type") != "SELECT_NODE" or (node.get("from_table") or {}).get("type") != "JOIN":
            return sql
        joins = []          # (join node, right BASE_TABLE)
        x = node["from_table"]
        while x.get("type") == "JOIN":
            if x.get("join_type") != "INNER" or not x.get("condition") or x["right"].get("type") != "BASE_TABLE":
                return sql
            joins.append((x, x["right"]))
            x = x["left"]
        if x.get("type") != "BASE_TABLE":
            return sql
        counted = _counted(node)
        if counted and facts.named is None:
            return sql
        pruned = _drop_one_join(sql, node, joins, facts, counted)
        if pruned is None:
            return sql
        sql = pruned
    return sql


#: Run in this order on every query the model writes (and on every repaired query).
RULES = (
    *habits.RULES,           # other dialects' habits into DuckDB first (sql.habits), so the rules below read DuckDB
    fix_self_joins,          # first: a self-compare hides which tables the query really joins
    fix_key_mismatches,
    prune_unused_joins,      # last: judges joins by the keys the rules above put right
)


def tidy_sql(sql: str, catalog, question: str | None = None) -> str:
    """``sql`` after every rule of ``RULES``; with the question, unused joins on non-key columns to
    tables it does not name are dropped too."""
    if not sql:
        return sql
    facts = SchemaFacts.of(catalog, question)
    for rule in RULES:
        sql = rule(sql, facts)
    return sql

