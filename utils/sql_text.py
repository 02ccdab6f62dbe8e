"""SQL text: pull SQL out of an LLM reply, describe a query, and repair common DuckDB errors.

- ``extract_sql(reply)``: the SQL in a model reply (fenced or bare), one statement.
- ``describe_sql(sql)``: tables, filters, grouping, order and limit of a query, read from DuckDB's own
  parser (``json_serialize_sql``), used to say how an answer was derived.
- ``repair(sql, error, columns, links)``: deterministic fixes for errors whose fix DuckDB itself
  names (a misspelt column with one candidate binding, a misspelt table, a column missing from
  GROUP BY), and, with foreign keys, a column of a table the query forgot to join
  (``join_missing_column``), so that no LLM call is spent on them.

Run on its own::

    python -m duckask.utils.sql_text "SELECT a, b FROM t GROUP BY a" --error "..."
"""
from __future__ import annotations

import argparse
import difflib
import json
import re
from dataclasses import dataclass, field

import duckdb

_FENCE = re.compile(r"```(?:sql|duckdb|SQL)?\s*\n?(.*?)(?:```|$)", re.S)
_START = re.compile(r"\b(WITH|SELECT|FROM)\b", re.I)


def extract_sql(reply: str) -> str:
    """The SQL statement in an LLM reply; '' when there is none."""
    text = reply or ""
    m = _FENCE.search(text)
    if m and m.group(1).strip():
        text = m.group(1)
    else:
        s = _START.search(text)
        text = text[s.start():] if s else ""
    text = text.strip()
    # Keep the first statement only; models sometimes add a second query or prose after ';'.
    try:
        stmts = duckdb.extract_statements(text)
        if stmts:
            text = stmts[0].query
    except duckdb.Error:
        pass
    return text.strip().rstrip(";").strip()


@dataclass
class SQLShape:
    tables: list[str] = field(default_factory=list)
    filters: list[str] = field(default_factory=list)
    group_by: list[str] = field(default_factory=list)
    order_by: list[str] = field(default_factory=list)
    limit: str | None = None


def _span(sql: str, e: dict | None) -> str | None:
    if not e or not e.get("query_location_length"):
        return None
    loc = e["query_location"]
    return sql[loc: loc + e["query_location_length"]]


_PARSER = duckdb.connect()  # in-memory, no data: only parses


def _top_node(sql: str) -> dict | None:
    try:
        cur = _PARSER.cursor()
        raw = cur.execute("SELECT json_serialize_sql(?::VARCHAR)", [sql]).fetchone()[0]
        cur.close()
    except duckdb.Error:
        return None
    doc = json.loads(raw)
    if doc.get("error") or not doc.get("statements"):
        return None
    return doc["statements"][0]["node"]


def _tables_in(node) -> list[str]:
    out: list[str] = []

    def walk(x):
        if isinstance(x, dict):
            if x.get("type") == "BASE_TABLE" and x.get("table_name"):
                if x["table_name"] not in out:
                    out.append(x["table_name"])
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(node)
    return out


def describe_sql(sql: str) -> SQLShape:
    """Tables, filters, grouping, order and limit of the outermost SELECT (empty when unparsable)."""
    node = _top_node(sql)
    if node is None:
        return SQLShape()
    shape = SQLShape(tables=_tables_in(node))
    cte_names = {e.get("key") for e in (node.get("cte_map") or {}).get("map", []) if isinstance(e, dict)}
    shape.tables = [t for t in shape.tables if t not in cte_names]
    for key in ("where_clause", "having"):
        s = _span(sql, node.get(key))
        if s:
            shape.filters.append(s)
    shape.group_by = [s for s in (_span(sql, g) for g in node.get("group_expressions") or []) if s]
    for m in node.get("modifiers") or []:
        if m.get("type") == "ORDER_MODIFIER":
            for o in m.get("orders", []):
                s = _span(sql, o.get("expression"))
                if s:
                    shape.order_by.append(s + (" DESC" if o.get("type") == "DESCENDING" else ""))
        elif m.get("type") == "LIMIT_MODIFIER":
            shape.limit = _span(sql, m.get("limit"))
    return shape


def has_top_level_order_by(sql: str) -> bool:
    node = _top_node(sql)
    return bool(node) and any(m.get("type") == "ORDER_MODIFIER" for m in node.get("modifiers") or [])


# --------------------------------------------------------------------------- repairs
_COL_NOT_FOUND = re.compile(r'Referenced column "([^"]+)" not found in FROM clause!\s*Candidate bindings: ([^\n]+)')
_QUAL_COL = re.compile(r'Table "([^"]+)" does not have a column named "([^"]+)"\s*Candidate bindings: :?([^\n]+)')
_TABLE_NOT_FOUND = re.compile(r'Table with name ([^\s]+) does not exist!\s*Did you mean "([^"]+)"')
_GROUP_BY = re.compile(r'column "?([^"\s]+)"? must appear in the GROUP BY clause')


def _sub_outside_strings(pat: re.Pattern, repl, sql: str) -> str:
    """``pat.sub(repl, ...)`` on the SQL outside its string literals."""
    parts = re.split(r"('(?:[^']|'')*')", sql)
    return "".join(p if i % 2 else pat.sub(repl, p) for i, p in enumerate(parts))


def _spelled(sql: str, name: str) -> str:
    """``name`` (an alias or table, any case) as the query writes it, to keep its case in edits."""
    return next((w for w in re.findall(r"[A-Za-z_]\w*", sql) if w.lower() == name.lower()), name)


def _replace_ident(sql: str, old: str, new: str) -> str:
    """Replace an identifier outside string literals, case-insensitively, as a whole word."""
    pat = re.compile(r'(?<![\w."])"?' + re.escape(old) + r'"?(?![\w"])', re.I)
    return _sub_outside_strings(pat, new, sql)


def table_aliases(sql: str) -> dict[str, str]:
    """{alias or table name (lower-case): table name} for every base table in the query."""
    out: dict[str, str] = {}

    def walk(x):
        if isinstance(x, dict):
            if x.get("type") == "BASE_TABLE" and x.get("table_name"):
                out[(x.get("alias") or x["table_name"]).lower()] = x["table_name"]
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(_top_node(sql) or {})
    return out


_CLAUSE_END = re.compile(r"\b(WHERE|GROUP\s+BY|HAVING|ORDER\s+BY|LIMIT|QUALIFY|WINDOW|UNION|INTERSECT|EXCEPT)\b", re.I)


def _outer_from_end(sql: str) -> int | None:
    """Where the outermost FROM clause ends (the offset of the next clause keyword at the same
    parenthesis depth, or the end of the query), or None without a top-level FROM."""
    # Blank out string literals and quoted identifiers so that their contents are not read as SQL.
    masked = re.sub(r"'(?:[^']|'')*'|\"[^\"]*\"", lambda m: "x" * len(m.group(0)), sql)
    depth, start = 0, None
    for i, ch in enumerate(masked):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and (i == 0 or not (masked[i - 1].isalnum() or masked[i - 1] == "_")):
            if start is None and re.match(r"FROM\b", masked[i:i + 5], re.I):
                start = i
            elif start is not None and _CLAUSE_END.match(masked, i):
                return i
    return None if start is None else len(sql.rstrip().rstrip(";"))


def _outer_tables(node: dict) -> dict[str, str]:
    """{alias or name (lower-case): table} of the base tables in a SELECT's own FROM clause."""
    out, todo = {}, [node.get("from_table") or {}]
    while todo:
        x = todo.pop()
        if x.get("type") == "JOIN":
            todo += [x.get("left") or {}, x.get("right") or {}]
        elif x.get("type") == "BASE_TABLE" and x.get("table_name"):
            out[(x.get("alias") or x["table_name"]).lower()] = x["table_name"]
    return out


def _qualify_bare(sql: str, node: dict, tables: dict[str, str], columns: dict[str, set[str]],
                  clashing: set[str]) -> str:
    """Qualify the outer query's unqualified columns that a table about to be joined also has
    (``name`` in ``SELECT name, capacity FROM teams`` once arenas, which has a name too, is joined)
    with the one FROM table that has them now, so the join does not make them ambiguous. Columns
    inside subqueries bind to their own FROM and are left alone."""
    inner = {id(d) for d in _walk(node) if d.get("class") == "SUBQUERY" or d.get("type") == "SUBQUERY"}
    edits = []
    for d in _walk(node, skip=inner):
        names = d.get("column_names") or []
        if d.get("class") != "COLUMN_REF" or len(names) != 1 or names[0].lower() not in clashing:
            continue
        have = [a for a, t in tables.items() if names[0].lower() in columns.get(t.lower(), set())]
        if len(have) == 1 and d.get("query_location_length"):
            edits.append((d["query_location"], d["query_location_length"], _spelled(sql, have[0])))
    for loc, length, real in sorted(set(edits), reverse=True):
        sql = sql[:loc] + f"{real}.{sql[loc:loc + length]}" + sql[loc + length:]
    return sql


def join_missing_column(sql: str, column: str, alias: str | None, columns: dict[str, set[str]],
                        links: list[tuple[str, str, str, str]]) -> str | None:
    """Join the table a column lives in when the query forgot it.

    ``SELECT Money_Rank FROM poker_player WHERE Height = ...`` fails because Height is in people;
    when exactly one table outside the query has the column and a foreign key links it to a table
    of the outer FROM (to ``alias``'s table, when the error names one), the join is added and the
    column's qualifier pointed at it. Anything less clear-cut returns None.
    """
    node = _top_node(sql)
    if not node or node.get("type") != "SELECT_NODE":
        return None
    tables = _outer_tables(node)
    if not tables or (alias and alias.lower() not in tables):
        return None
    present = {t.lower() for t in tables.values()}
    col = column.lower()
    owners = {t for t, cols in columns.items() if col in cols and t not in present}
    joins = []      # (query alias, its column, new table, its column)
    for a, ac, b, bc in links:
        for (mine, mc), (other, oc) in (((a, ac), (b, bc)), ((b, bc), (a, ac))):
            if other.lower() in owners:
                joins += [(al, mc, other, oc) for al, t in tables.items()
                          if t.lower() == mine.lower() and (alias is None or al == alias.lower())]
    if len({j[2].lower() for j in joins}) != 1 or len({j[0] for j in joins}) != 1:
        return None
    al, mc, table, oc = joins[0]
    sql = _qualify_bare(sql, node, tables, columns, columns.get(table.lower(), set()))
    end = _outer_from_end(sql)
    if end is None:
        return None
    real = _spelled(sql, al)
    new = table if table.lower() not in tables else f"{table}_j"
    head = sql[:end].rstrip()
    fixed = f"{head} JOIN {table}" + (f" AS {new}" if new != table else "") + \
        f" ON {real}.{mc} = {new}.{oc}" + (" " + sql[end:].lstrip() if sql[end:].strip() else "")
    if alias:
        # Every column the alias's table lacks and the joined table has moves over at once
        # (T1.first_name, T1.middle_name, T1.last_name on an enrolment table).
        mine, theirs = columns.get(tables[alias.lower()].lower(), set()), columns.get(table.lower(), set())
        pat = re.compile(r'(?<![\w"])' + re.escape(alias) + r'\.("?)(\w+)("?)(?![\w"])', re.I)

        def move(m: re.Match) -> str:
            name = m.group(2).lower()
            return f"{new}.{m.group(1)}{m.group(2)}{m.group(3)}" if name in theirs and name not in mine else m.group(0)

        fixed = _sub_outside_strings(pat, move, fixed)
    return fixed


def repair(sql: str, error: str, columns: dict[str, set[str]] | None = None,
           links: list[tuple[str, str, str, str]] | None = None) -> str | None:
    """A fixed query when the error names the fix unambiguously, else None.

    ``columns`` ({table lower-case: {column lower-case}}) enables one more fix: ``t2.col`` where
    ``t2``'s table lacks ``col`` but exactly one other table of the query has it; with ``links``
    (foreign keys) too, a column of a table the query did not join is joined (``join_missing_column``).
    """
    fixed = None
    if columns and links:
        # A column no table of the query has, but one table it links to has exactly: a forgotten
        # join, tried before a close spelling (treatment_type_description is not ..._code).
        if (m := _COL_NOT_FOUND.search(error)) and "." not in m.group(1):
            fixed = join_missing_column(sql, m.group(1), None, columns, links)
        elif m := _QUAL_COL.search(error):
            present = {t.lower() for t in table_aliases(sql).values()}
            if not any(m.group(2).lower() in columns.get(t, set()) for t in present):
                fixed = join_missing_column(sql, m.group(2), m.group(1), columns, links)
    fixed = fixed or _repair_named(sql, error, columns)
    return fixed if fixed != sql else None


def run_repaired(run, sql: str, catalog, question: str | None = None, max_repairs: int = 3):
    """``run(sql)`` and, while DuckDB rejects the query and ``repair`` (with foreign keys) has a fix,
    run the fixed and tidied query instead, at most ``max_repairs`` times. Returns the last outcome
    (its ``sql`` is the query that ran). SQLExecutor uses it on the drafts of a resample vote."""
    out = run(sql)
    columns, links = catalog.column_sets(), catalog.foreign_links()
    for _ in range(max_repairs):
        if out.ok or not (fixed := repair(sql, out.error or "", columns, links)):
            break
        sql = tidy_sql(fixed, catalog, question)
        out = run(sql)
    return out


def _repair_named(sql: str, error: str, columns: dict[str, set[str]] | None) -> str | None:
    """The fixes whose target DuckDB's error message names (see ``repair``)."""
    if m := _COL_NOT_FOUND.search(error):
        bad = m.group(1)
        cands = re.findall(r'"([^"]+)"', m.group(2))
        bare = [c.split(".")[-1] for c in cands]
        close = difflib.get_close_matches(bad.split(".")[-1].lower(), [b.lower() for b in bare], n=2, cutoff=0.75)
        if len(close) == 1 and "." not in bad:
            fixed = _replace_ident(sql, bad, next(b for b in bare if b.lower() == close[0]))
            return fixed if fixed != sql else None
        return None
    if m := _QUAL_COL.search(error):
        alias, bad = m.group(1), m.group(2)
        if columns:
            owners = [a for a, t in table_aliases(sql).items()
                      if a != alias.lower() and bad.lower() in columns.get(t.lower(), set())]
            if len(owners) > 1:   # prefer explicit aliases (the same FROM clause) over bare subquery tables
                owners = [a for a in owners if a not in {t.lower() for t in table_aliases(sql).values()}]
            if len(owners) == 1:
                real = _spelled(sql, owners[0])
                pat = re.compile(r'(?<![\w"])' + re.escape(alias) + r'\.("?' + re.escape(bad) + r'"?)(?![\w"])', re.I)
                fixed = pat.sub(lambda mm: f"{real}.{mm.group(1)}", sql)
                if fixed != sql:
                    return fixed
        cands = [c.split(".")[-1] for c in re.findall(r'"([^"]+)"', m.group(3))]
        close = difflib.get_close_matches(bad.lower(), [c.lower() for c in cands], n=2, cutoff=0.75)
        if len(close) != 1:
            return None
        good = next(c for c in cands if c.lower() == close[0])
        pat = re.compile(r'(?<![\w"])' + re.escape(alias) + r'\."?' + re.escape(bad) + r'"?(?![\w"])', re.I)
        fixed = pat.sub(f"{alias}.{good}", sql)
        return fixed if fixed != sql else None
    if m := _TABLE_NOT_FOUND.search(error):
        bad, good = m.group(1).strip('"'), m.group(2)
        if difflib.SequenceMatcher(None, bad.lower(), good.lower()).ratio() >= 0.75:
            fixed = _replace_ident(sql, bad, good)
            return fixed if fixed != sql else None
        return None
    if m := _GROUP_BY.search(error):
        col = m.group(1)
        node = _top_node(sql)
        groups = (node or {}).get("group_expressions") or []
        if len(re.findall(r"\bGROUP\s+BY\b", sql, re.I)) != 1 or not groups:
            return None
        last = groups[-1]
        if not last.get("query_location_length"):
            return None
        end = last["query_location"] + last["query_location_length"]
        ref = col if re.fullmatch(r"[\w.]+", col) else f'"{col}"'
        return sql[:end] + f", {ref}" + sql[end:]
    return None


SELF_EQ = re.compile(r'(?<![\w."])("?)(\w+)\1\.("?)(\w+)\3\s*=\s*\1\2\1\.\3\4\3(?![\w"])')


def fix_self_joins(sql: str, links: list[tuple[str, str, str, str]]) -> str:
    """Rewrite a join condition that compares a column with itself (``T2.MakeId = T2.MakeId``, always
    true) into the foreign-key join it was meant to be, when exactly one other table of the query is
    linked to that column by a foreign key; otherwise leave the query alone."""
    if not SELF_EQ.search(sql):
        return sql
    aliases = table_aliases(sql)

    def fix(m: re.Match) -> str:
        alias, col = m.group(2), m.group(4)
        table = aliases.get(alias.lower())
        if table is None:
            return m.group(0)
        options = set()
        for a, ac, b, bc in links:
            for (t1, c1, t2, c2) in ((a, ac, b, bc), (b, bc, a, ac)):
                if t1.lower() == table.lower() and c1.lower() == col.lower():
                    for other_alias, other_table in aliases.items():
                        if other_alias != alias.lower() and other_table.lower() == t2.lower():
                            options.add((other_alias, c2))
        if len(options) > 1:   # prefer an explicit alias over a bare table name (e.g. in a subquery)
            options = {o for o in options if o[0] != aliases[o[0]].lower()}
        if len(options) != 1:
            return m.group(0)
        other_alias, other_col = options.pop()
        written = _spelled(sql, other_alias)
        return f"{written}.{other_col} = {m.group(0).split('=')[0].strip()}"

    return SELF_EQ.sub(fix, sql)


_COL_EQ = re.compile(r'(?<![\w."])("?)(\w+)\1\.("?)(\w+)\3\s*=\s*("?)(\w+)\5\.("?)(\w+)\7(?![\w".])')


def fix_key_mismatches(sql: str, links: list[tuple[str, str, str, str]]) -> str:
    """Rewrite ``A.fk = B.other`` into ``A.fk = B.key`` when ``A.fk`` is a foreign key to table B's
    column ``key`` and ``other`` is another column of B: comparing a key with an unrelated column
    (``countries.Continent = car_makers.Country``, ``airports.City = flights.SourceAirport``) is a
    slip, never a join anyone means. Conditions between tables without such a key are left alone."""
    if not links or not _COL_EQ.search(sql):
        return sql
    aliases = table_aliases(sql)
    refs = {(a.lower(), ac.lower()): (b.lower(), bc) for a, ac, b, bc in links}

    def fix(m: re.Match) -> str:
        sides = [(m.group(1), m.group(2), m.group(3), m.group(4)), (m.group(5), m.group(6), m.group(7), m.group(8))]
        tables = [aliases.get(s[1].lower(), "").lower() for s in sides]
        if not all(tables) or sides[0][1].lower() == sides[1][1].lower():
            return m.group(0)
        for i in (0, 1):
            j = 1 - i
            ref = refs.get((tables[i], sides[i][3].lower()))
            if ref and ref[0] == tables[j] and ref[1].lower() != sides[j][3].lower():
                q, alias, cq, _ = sides[j]
                fixed = f"{q}{alias}{q}.{cq}{ref[1]}{cq}"
                left, right = (m.group(0).split("=", 1)[0].strip(), fixed) if j == 1 else \
                    (fixed, m.group(0).split("=", 1)[1].strip())
                return f"{left} = {right}"
        return m.group(0)

    return _sub_outside_strings(_COL_EQ, fix, sql)


def _walk(x, skip=None):
    """Every dict in a JSON AST, not descending into ``skip`` (a set of ids of dicts)."""
    if isinstance(x, dict):
        if skip and id(x) in skip:
            return
        yield x
        for v in x.values():
            yield from _walk(v, skip)
    elif isinstance(x, list):
        for v in x:
            yield from _walk(v, skip)


def _is_key_join(cond: dict, aliases: dict[str, str], links: list[tuple[str, str, str, str]] | None) -> bool:
    """Whether a join condition is exactly one foreign key = the column it references."""
    if links is None:
        return True
    if cond.get("class") != "COMPARISON" or cond.get("type") != "COMPARE_EQUAL":
        return False
    sides = []
    for side in (cond.get("left"), cond.get("right")):
        names = (side or {}).get("column_names") or []
        if side is None or side.get("class") != "COLUMN_REF" or len(names) != 2:
            return False
        sides.append(((aliases.get(names[0].lower()) or "").lower(), names[1].lower()))
    pairs = {((a.lower(), ac.lower()), (b.lower(), bc.lower())) for a, ac, b, bc in links}
    return (sides[0], sides[1]) in pairs or (sides[1], sides[0]) in pairs


def prune_unused_joins(sql: str, columns: dict[str, set[str]],
                       links: list[tuple[str, str, str, str]] | None = None,
                       named: set[str] | None = None) -> str:
    """Drop an inner-joined table that the query never uses beyond its own join condition.

    Small models often join tables "for context" (``singer JOIN singer_in_concert JOIN concert`` to
    list song names, ``TV_series JOIN Cartoon ON T1.Channel = T2.Channel`` to list episodes); each
    such join multiplies or filters rows the question did not ask about. A table is dropped only when
    it is the right side of an INNER JOIN ... ON in the outermost FROM, no other clause mentions its
    alias, no unqualified column of the query could be one of its columns, no other join condition
    uses it, and the query has no ``*``.

    With ``links`` (foreign keys), a join on exactly a foreign key is dropped unless the query has a
    GROUP BY or COUNT/SUM/AVG (where the join's row multiplicity is the point). A join on other
    columns (``o.state = p.state``) is a filter: it is dropped only when ``named`` (the tables the
    question names) is given and does not hold the table, aggregates or not ("states with both
    owners and professionals" keeps its join; "high schoolers in grade 10" loses Friend and Likes).
    """
    for _ in range(4):
        node = _top_node(sql)
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
        # With COUNT/SUM/AVG or GROUP BY, a foreign-key join's row multiplicity is the point: kept below.
        counted = bool(node.get("group_expressions") or any(
                d.get("class") == "AGGREGATE" or d.get("function_name") in ("count_star", "count", "sum", "avg")
                for d in _walk([node.get("select_list"), node.get("having"), node.get("modifiers")])))
        if counted and named is None:
            return sql
        conds = {id(j["condition"]) for j, _ in joins}
        outside = [d for d in _walk(node, skip=conds) if d.get("class") in ("COLUMN_REF", "STAR") or d.get("type") == "STAR"]
        if any(d.get("class") == "STAR" or d.get("type") == "STAR" for d in outside):
            return sql
        used = {d["column_names"][0].lower() for d in outside if len(d.get("column_names", [])) >= 2}
        bare = {d["column_names"][0].lower() for d in outside if len(d.get("column_names", [])) == 1}
        removed = False
        for j, t in joins:
            alias = (t.get("alias") or t["table_name"]).lower()
            if alias in used or bare & columns.get(t["table_name"].lower(), set()):
                continue
            in_other = any(alias == d["column_names"][0].lower() for oj, _ in joins if oj is not j
                           for d in _walk(oj["condition"]) if len(d.get("column_names", [])) >= 2)
            cond = j["condition"]
            if in_other or not cond.get("query_location_length"):
                continue
            key = _is_key_join(cond, table_aliases(sql), links)
            if key and counted:
                continue
            if not key and (named is None or t["table_name"].lower() in named):
                continue
            start = j.get("query_location")
            end = cond["query_location"] + cond["query_location_length"]
            # The JOIN node's location is its keyword: "JOIN" or "INNER JOIN".
            if start is None or not re.match(r"\s*(INNER\s+)?JOIN\b", sql[start:], re.I):
                continue
            head = re.search(r"\bINNER\s+$", sql[:start], re.I)
            start = head.start() if head else start
            sql = (sql[:start].rstrip() + " " + sql[end:].lstrip()).strip()
            removed = True
            break
        if not removed:
            return sql
    return sql


def named_tables(catalog, question: str) -> set[str]:
    """The tables (lower-case) whose every name word, stemmed, is in the question ("owners" names
    Owners, "high schoolers" names Highschooler; "car models" does not name car_makers)."""
    from duckask.utils.table_ranker import question_terms, split_ident

    terms = set(question_terms(question))
    return {t.lower() for t in catalog.tables if set(split_ident(t)) <= terms}


def tidy_sql(sql: str, catalog, question: str | None = None) -> str:
    """The deterministic clean-ups applied to every model-written query: self-compare join
    conditions rewritten from foreign keys, a key compared with the wrong column of the table it
    references pointed at the right one, then unused inner joins dropped (with the question, also
    unused joins on non-key columns to tables it does not name)."""
    if not sql:
        return sql
    columns = catalog.column_sets()
    links = catalog.foreign_links()
    named = None if question is None else named_tables(catalog, question)
    return prune_unused_joins(fix_key_mismatches(fix_self_joins(sql, links), links), columns, links, named)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Describe a query, or repair it given a DuckDB error.")
    ap.add_argument("sql")
    ap.add_argument("--error")
    args = ap.parse_args(argv)
    if args.error:
        print(repair(args.sql, args.error) or "(no deterministic repair)")
    else:
        print(describe_sql(args.sql))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
