"""SQL a person reads: MetricFlow's nested machine SQL turned into what a person would write, by sqlglot's
optimizer plus three small rules of duckask's own.

``readable(sql, schema)`` runs sqlglot's optimizer (qualify, push projections and predicates down, merge and
eliminate subqueries and CTEs, simplify), then:

- ``merge_thin_outer``: a SELECT that only renames the columns of one inner query (the wrapper ``compile_plan``
  adds so that columns read well) is folded into it: the inner query takes the outer names and order;
- ``drop_main``, ``plain_years``, ``cte_names``: no ``main.`` before a table; MetricFlow's year grain compared
  as ``year_id = 2019``; a CTE MetricFlow named ``subq_5`` named after what it reads (``batting_totals``);
- ``short_aliases``: each table's alias becomes its initials (``batting`` → ``b``, ``team_season`` → ``ts``;
  ``b2`` on a clash) instead of MetricFlow's ``batting_src_10000``;
- ``unquote``: identifiers DuckDB takes bare lose their quotes.

Any failure returns the SQL it was given: the readable form is a courtesy, never a reason for an answer to
fail. Tests check that the readable SQL gives the same rows as the original for every demo metric and plan
fixture (``tests/test_readable_sql.py``).
"""
from __future__ import annotations

import re
from types import FunctionType
from typing import cast

import sqlglot
from sqlglot import exp
from sqlglot.optimizer import RULES, optimize

#: The optimizer's rules, less canonicalize/annotate (types and casts a person would not write).
_RULES = tuple(r for r in RULES
               if cast(FunctionType, r).__name__ not in ("canonicalize", "annotate_types", "quote_identifiers"))
_BARE = re.compile(r"[a-z_][a-z0-9_]*")


def readable(sql: str, schema: dict[str, dict[str, str]] | None = None) -> str:
    """``sql`` laid out as a person would write it, or ``sql`` itself when it cannot be made so."""
    try:
        tree = optimize(sqlglot.parse_one(sql, read="duckdb"), schema=cast("dict[str, object]", schema or {}),
                        dialect="duckdb", rules=_RULES)
        tree = unquote(short_aliases(cte_names(plain_years(drop_main(merge_thin_outer(tree))))))
        return tree.sql(dialect="duckdb", pretty=True, comments=False)
    except (sqlglot.errors.SqlglotError, KeyError, ValueError, TypeError, AttributeError):
        return sql


def merge_thin_outer(tree: exp.Expr) -> exp.Expr:
    """``WITH mf AS (inner) SELECT mf.a AS x, mf.b AS b FROM mf ORDER BY ...`` → the inner query with the outer
    names (its own ORDER BY and LIMIT kept): only when the outer SELECT renames columns and nothing else."""
    with_ = tree.args.get("with_") or tree.args.get("with")     # the key's name differs across sqlglot versions
    if not isinstance(tree, exp.Select) or not with_:
        return tree
    ctes = with_.expressions
    source = tree.args.get("from_") or tree.args.get("from")
    if len(ctes) != 1 or source is None or tree.args.get("joins") or tree.args.get("where") \
            or tree.args.get("group") or tree.args.get("limit") or tree.args.get("having"):
        return tree
    inner, name = ctes[0].this, ctes[0].alias
    if not isinstance(inner, exp.Select) or not isinstance(source.this, exp.Table) or source.this.name != name:
        return tree
    inner_cols = {p.alias_or_name: p for p in inner.expressions}
    renamed = []
    for p in tree.expressions:
        col = p.this if isinstance(p, exp.Alias) else p
        if not isinstance(col, exp.Column) or col.name not in inner_cols:
            return tree
        renamed.append((col.name, p.alias_or_name))
    if len(renamed) != len(inner_cols):
        return tree
    outer_order = tree.args.get("order")
    if outer_order is not None and inner.args.get("order") is not None and \
            [o.sql() for o in outer_order.expressions] != [o.sql() for o in inner.args["order"].expressions]:
        return tree
    new = inner.copy()
    new.set("expressions", [exp.alias_(inner_cols[old].unalias().copy(), alias) for old, alias in renamed])
    names = dict(renamed)
    for col in new.find_all(exp.Column):
        if not col.table and col.name in names and col.parent_select is new and \
                isinstance(col.parent, (exp.Ordered,)):
            col.set("this", exp.to_identifier(names[col.name]))
    return new


def drop_main(tree: exp.Expr) -> exp.Expr:
    """``main.batting`` → ``batting``: the default schema a person never writes."""
    for table in tree.find_all(exp.Table):
        if table.db == "main" and not table.catalog:
            table.set("db", None)
    return tree


def _year_of(node: exp.Expr) -> exp.Expr | None:
    """``x`` of MetricFlow's year grain ``DATE_TRUNC('YEAR', MAKE_DATE(CAST(x AS INT), 1, 1))`` (or of
    ``MAKE_DATE(x, 1, 1)``, x an integer column), else None."""
    if not isinstance(node, (exp.DateTrunc, exp.TimestampTrunc)) or node.unit is None \
            or node.unit.name.upper() != "YEAR":
        return None
    made = node.this
    if not isinstance(made, exp.DateFromParts):
        return None
    year, month, day = (made.args.get(k) for k in ("year", "month", "day"))
    if month is None or day is None or month.sql() != "1" or day.sql() != "1":
        return None
    if isinstance(year, exp.Cast) and year.to.is_type("int"):
        return year.this
    return year if isinstance(year, exp.Column) else None       # MAKE_DATE takes only integers: a year column


def plain_years(tree: exp.Expr) -> exp.Expr:
    """``DATE_TRUNC('YEAR', MAKE_DATE(CAST(y AS INT), 1, 1)) = '2019-01-01'`` → ``y = 2019`` (a year column)."""
    for eq in list(tree.find_all(exp.EQ)):
        year = _year_of(eq.this)
        value = eq.expression
        if year is not None and isinstance(value, exp.Literal) and value.is_string and \
                re.fullmatch(r"\d{4}-01-01( 00:00:00)?", value.name):
            eq.replace(exp.EQ(this=year.copy(), expression=exp.Literal.number(int(value.name[:4]))))
    return tree


_MACHINE = re.compile(r"(subq_\d+|mf)")


def cte_names(tree: exp.Expr) -> exp.Expr:
    """MetricFlow's ``subq_5`` (and the wrapper's ``mf``) as a CTE's name → ``<table>_totals`` (grouped) or
    ``<table>_rows``, after the first table it reads."""
    taken = {c.alias for c in tree.find_all(exp.CTE)}
    for cte in list(tree.find_all(exp.CTE)):
        if not _MACHINE.fullmatch(cte.alias):
            continue
        first = next(cte.this.find_all(exp.Table), None)
        base = f"{first.name if first is not None else 'part'}_{'totals' if cte.this.args.get('group') else 'rows'}"
        new = _unique(base, taken, "_")
        old = cte.alias
        cte.set("alias", exp.TableAlias(this=exp.to_identifier(new)))
        for table in tree.find_all(exp.Table):
            if table.name == old and not table.db:
                table.set("this", exp.to_identifier(new))
                if table.alias == old:
                    table.set("alias", exp.TableAlias(this=exp.to_identifier(new)))
        for col in tree.find_all(exp.Column):
            if col.table == old:
                col.set("table", exp.to_identifier(new))
    return tree


def _unique(base: str, taken: set[str], sep: str = "") -> str:
    """``base``, else ``base2``, ``base3``... (with ``sep`` between), the first not ``taken``; now taken."""
    new, n = base, 2
    while new in taken:
        new, n = f"{base}{sep}{n}", n + 1
    taken.add(new)
    return new


def short_aliases(tree: exp.Expr) -> exp.Expr:
    """Each table's alias becomes the initials of its name (unique within the query)."""
    taken: set[str] = set()
    renames: dict[str, str] = {}
    for table in tree.find_all(exp.Table):
        old = table.alias
        if not old or old in renames:
            continue
        base = "".join(part[0] for part in table.name.lower().split("_") if part) or "t"
        new = _unique(base, taken)
        renames[old] = new
        table.set("alias", exp.TableAlias(this=exp.to_identifier(new)))
    for col in tree.find_all(exp.Column):
        if col.table in renames:
            col.set("table", exp.to_identifier(renames[col.table]))
    return tree


def unquote(tree: exp.Expr) -> exp.Expr:
    """Identifiers DuckDB takes bare (lower case, not a keyword) lose their quotes."""
    from duckask.utils.db.quoting import ident

    for node in tree.find_all(exp.Identifier):
        name = node.name
        if node.quoted and _BARE.fullmatch(name) and ident(name) == name:
            node.set("quoted", False)
    return tree
